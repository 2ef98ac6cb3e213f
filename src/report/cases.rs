//! A run's cases and trigger queries, each with its case-runs: the unit every report speaks
//! in (a case's repeats and its comparison arms' runs belong to it).

use std::collections::BTreeMap;

use super::model::{CaseRun, Report};
use crate::record::case_run::Kind;
use crate::record::case_run::Outcome;

/// A case or a trigger query, with the indexes of its case-runs in the report.
pub struct CaseGroup<'a> {
    pub suite: &'a str,
    pub case: &'a str,
    pub trigger: bool,
    /// Indexes into `Report::case_runs`: the skill's runs in order, then each comparison
    /// arm's.
    pub runs: Vec<usize>,
}

impl CaseGroup<'_> {
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
pub fn groups(r: &Report) -> Vec<CaseGroup<'_>> {
    let mut at: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut out: Vec<CaseGroup> = Vec::new();
    for (i, c) in r.case_runs.iter().enumerate() {
        let n = *at.entry((&c.suite, &c.case)).or_insert_with(|| {
            out.push(CaseGroup {
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
pub fn query(r: &Report, g: &CaseGroup, n: usize) -> String {
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

/// `6 of 12 case-runs passed (50%): 6 passed · 5 failed · 1 not graded · baseline runs: 0 of
/// 6 passed`: the skill's case-runs as detail under the headline, the comparison arm's apart.
pub fn detail(r: &Report) -> String {
    let skill: Vec<&CaseRun> = r
        .case_runs
        .iter()
        .filter(|c| !c.variant.is_comparison())
        .collect();
    let count = |o: Outcome| skill.iter().filter(|c| c.outcome == o).count();
    let passed = count(Outcome::Passed);
    let counted = skill.len() - count(Outcome::Skipped);
    let mut parts = vec![format!("{passed} passed")];
    for (o, w) in [
        (Outcome::Failed, "failed"),
        (Outcome::NotGraded, "not graded"),
        (Outcome::Error, "with errors"),
        (Outcome::Skipped, "skipped"),
        (Outcome::Missing, "missing"),
    ] {
        if count(o) > 0 {
            parts.push(format!("{} {w}", count(o)));
        }
    }
    let mut line = format!(
        "{passed} of {} case-runs passed ({:.0}%): {}",
        skill.len(),
        if counted == 0 {
            0.0
        } else {
            passed as f64 / counted as f64 * 100.0
        },
        parts.join(" · ")
    );
    let compared: Vec<&CaseRun> = r
        .case_runs
        .iter()
        .filter(|c| c.variant.is_comparison())
        .collect();
    if let Some(first) = compared.first() {
        line.push_str(&format!(
            " · {} runs: {} of {} passed",
            first.variant.word(),
            compared
                .iter()
                .filter(|c| c.outcome == Outcome::Passed)
                .count(),
            compared.len()
        ));
    }
    line
}
