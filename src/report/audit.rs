//! `assay report audit`: each check and judge expectation over the last runs — those that pass
//! sometimes and fail sometimes (flaky: between 10% and 90%), and those that pass as well
//! without the skill as with it (they do not measure the skill).

use std::collections::BTreeMap;

use serde::Serialize;

use super::model::Report;
use crate::record::Outcome;
use crate::record::case_run::Kind;

/// Flaky: a pass rate strictly inside these bounds.
pub const FLAKY: (f64, f64) = (0.1, 0.9);
/// Passing "as well" without the skill: at least this rate in both variants.
pub const NOT_MEASURING: f64 = 0.9;

/// One check or expectation over the runs read.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Item {
    pub suite: String,
    pub case: String,
    /// `check` or `expectation`.
    pub kind: &'static str,
    /// The check's id, or the expectation's text.
    pub name: String,
    /// With the skill: passes of observations.
    pub passed: u64,
    pub seen: u64,
    /// Without it (or with the baseline skill), when baselines ran.
    pub baseline_passed: u64,
    pub baseline_seen: u64,
}

impl Item {
    pub fn rate(&self) -> Option<f64> {
        (self.seen > 0).then(|| self.passed as f64 / self.seen as f64)
    }

    pub fn baseline_rate(&self) -> Option<f64> {
        (self.baseline_seen > 0).then(|| self.baseline_passed as f64 / self.baseline_seen as f64)
    }

    pub fn flaky(&self) -> bool {
        self.rate().is_some_and(|r| r > FLAKY.0 && r < FLAKY.1)
    }

    pub fn not_measuring(&self) -> bool {
        matches!((self.rate(), self.baseline_rate()), (Some(a), Some(b)) if a >= NOT_MEASURING && b >= NOT_MEASURING)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Audit {
    pub runs: Vec<String>,
    /// Suites whose earlier runs were left out: their eval was edited since (`suite: n run(s)`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    pub flaky: Vec<Item>,
    pub not_measuring: Vec<Item>,
    /// Every item seen, for tools.
    pub items: Vec<Item>,
}

/// Audits the checks and expectations of these reports (graded case-runs of cases; trigger
/// evals have none). `suite_hashes[i]` are the suites' content hashes in `reports[i]` (from the
/// history): a suite's runs from before its eval was last edited are left out, since a check
/// of the same name may check something else there.
pub fn audit(reports: &[Report], suite_hashes: &[BTreeMap<String, String>]) -> Audit {
    let mut items: BTreeMap<(String, String, &'static str, String), Item> = BTreeMap::new();
    let hash = |i: usize, suite: &str| suite_hashes.get(i).and_then(|h| h.get(suite));
    let latest = |suite: &str| (0..reports.len()).rev().find_map(|i| hash(i, suite));
    let mut left_out: BTreeMap<String, usize> = BTreeMap::new();
    for (i, r) in reports.iter().enumerate() {
        let mut suites: Vec<&str> = r.case_runs.iter().map(|c| c.suite.as_str()).collect();
        suites.dedup();
        let edited: Vec<&str> = suites
            .into_iter()
            .filter(|s| matches!((hash(i, s), latest(s)), (Some(a), Some(b)) if a != b))
            .collect();
        for s in &edited {
            *left_out.entry(s.to_string()).or_default() += 1;
        }
        for c in r.case_runs.iter().filter(|c| {
            c.kind == Kind::Case
                && matches!(c.outcome, Outcome::Passed | Outcome::Failed)
                && !edited.contains(&c.suite.as_str())
        }) {
            let baseline = c.variant.is_comparison();
            let mut note = |kind: &'static str, name: &str, passed: bool| {
                let item = items
                    .entry((c.suite.clone(), c.case.clone(), kind, name.to_string()))
                    .or_insert_with(|| Item {
                        suite: c.suite.clone(),
                        case: c.case.clone(),
                        kind,
                        name: name.to_string(),
                        ..Item::default()
                    });
                if baseline {
                    item.baseline_seen += 1;
                    item.baseline_passed += u64::from(passed);
                } else {
                    item.seen += 1;
                    item.passed += u64::from(passed);
                }
            };
            for check in &c.checks {
                note("check", &check.id, check.passed);
            }
            if let Some(e) = c.judge.as_ref().and_then(|j| j.expectations.as_ref()) {
                for x in &e.expectations {
                    note("expectation", &x.text, x.passed);
                }
            }
        }
    }
    let items: Vec<Item> = items.into_values().collect();
    Audit {
        runs: reports
            .iter()
            .map(|r| r.dir.display().to_string())
            .collect(),
        left_out: left_out
            .into_iter()
            .map(|(s, n)| format!("{s}: {n} earlier run(s), before its eval was last edited"))
            .collect(),
        flaky: items.iter().filter(|i| i.flaky()).cloned().collect(),
        not_measuring: items
            .iter()
            .filter(|i| i.not_measuring())
            .cloned()
            .collect(),
        items,
    }
}

/// The audit for people.
pub fn render(a: &Audit) -> String {
    let pct = |r: Option<f64>| r.map_or("-".into(), |r| format!("{:.0}%", r * 100.0));
    let mut out = format!(
        "audit of {} run(s): {} check(s) and expectation(s)\n",
        a.runs.len(),
        a.items.len()
    );
    for l in &a.left_out {
        out.push_str(&format!("left out: {}\n", crate::text::one_line(l)));
    }
    out.push_str(&format!(
        "\nflaky (passing in {:.0}–{:.0}% of runs): {}\n",
        FLAKY.0 * 100.0,
        FLAKY.1 * 100.0,
        a.flaky.len()
    ));
    for i in &a.flaky {
        out.push_str(&format!(
            "  {}/{} {} {:?}: {} ({} of {})\n",
            crate::text::one_line(&i.suite),
            crate::text::one_line(&i.case),
            i.kind,
            crate::text::shorten(&i.name, 80),
            pct(i.rate()),
            i.passed,
            i.seen
        ));
    }
    let baselines = a.items.iter().any(|i| i.baseline_seen > 0);
    out.push_str(&format!(
        "\npassing as well without the skill (at least {:.0}% with and without): {}\n",
        NOT_MEASURING * 100.0,
        if baselines {
            a.not_measuring.len().to_string()
        } else {
            "not known: no run had baselines (run with --baseline)".to_string()
        }
    ));
    for i in &a.not_measuring {
        out.push_str(&format!(
            "  {}/{} {} {:?}: {} with the skill, {} without\n",
            crate::text::one_line(&i.suite),
            crate::text::one_line(&i.case),
            i.kind,
            crate::text::shorten(&i.name, 80),
            pct(i.rate()),
            pct(i.baseline_rate())
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flaky_and_not_measuring_items_are_told_apart() {
        let item = |p: u64, s: u64, bp: u64, bs: u64| Item {
            passed: p,
            seen: s,
            baseline_passed: bp,
            baseline_seen: bs,
            ..Item::default()
        };
        assert!(item(5, 10, 0, 0).flaky());
        assert!(!item(1, 10, 0, 0).flaky() && !item(10, 10, 0, 0).flaky());
        assert!(item(10, 10, 9, 10).not_measuring());
        assert!(!item(10, 10, 2, 10).not_measuring());
        assert!(
            !item(10, 10, 0, 0).not_measuring(),
            "no baseline: not known"
        );
    }
}
