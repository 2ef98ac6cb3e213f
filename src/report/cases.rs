//! A run's cases and trigger queries, each with its case-runs: the unit every report speaks
//! in (a case's repeats and its comparison arms' runs belong to it).

use std::collections::BTreeMap;

use super::model::{CaseRun, Report};
use crate::record::case_run::Kind;

/// A case or a trigger query, with the indexes of its case-runs in the report.
pub struct Group<'a> {
    pub suite: &'a str,
    pub case: &'a str,
    pub trigger: bool,
    /// Indexes into `Report::case_runs`: the skill's runs in order, then each comparison
    /// arm's.
    pub runs: Vec<usize>,
}

impl Group<'_> {
    /// The skill's case-runs (no baseline, no variant).
    pub fn skill<'r>(&self, r: &'r Report) -> Vec<&'r CaseRun> {
        self.runs
            .iter()
            .map(|&i| &r.case_runs[i])
            .filter(|c| !c.variant.is_comparison())
            .collect()
    }

    /// The comparison arms' case-runs (the baseline's or the variant's).
    pub fn compared<'r>(&self, r: &'r Report) -> Vec<&'r CaseRun> {
        self.runs
            .iter()
            .map(|&i| &r.case_runs[i])
            .filter(|c| c.variant.is_comparison())
            .collect()
    }
}

/// The report's cases and trigger queries, in the order their first case-run is listed.
pub fn groups(r: &Report) -> Vec<Group<'_>> {
    let mut at: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut out: Vec<Group> = Vec::new();
    for (i, c) in r.case_runs.iter().enumerate() {
        let n = *at.entry((&c.suite, &c.case)).or_insert_with(|| {
            out.push(Group {
                suite: &c.suite,
                case: &c.case,
                trigger: c.kind == Kind::Trigger,
                runs: Vec::new(),
            });
            out.len() - 1
        });
        out[n].runs.push(i);
    }
    for g in &mut out {
        g.runs.sort_by_key(|&i| {
            let c = &r.case_runs[i];
            (c.variant, c.run)
        });
    }
    out
}

/// A trigger query's text on one line, quoted, for where its id stands (empty for a case).
pub fn query(r: &Report, g: &Group, n: usize) -> String {
    if !g.trigger {
        return String::new();
    }
    r.statistics
        .triggers
        .iter()
        .find(|t| t.suite == g.suite && t.id == g.case)
        .map(|t| format!(" “{}”", crate::text::gist(&t.query, n)))
        .unwrap_or_default()
}
