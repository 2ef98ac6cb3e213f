//! A run's headline, in the author's unit: cases (each judged over its runs) and trigger
//! queries, and with a comparison, how many cases pass with the skill against without it. The
//! comparison arms never count in the skill's figures; case-run counts are detail.

use super::aggregate::{Aggregates, CaseVerdict};

/// `3 cases: 2 passed, 1 failed · 12 trigger queries: 10 passed, 2 failed · with the skill
/// 2/3 cases vs without 0/3 (+67 points, Fisher p = 0.40)`.
pub fn headline(agg: &Aggregates) -> String {
    let mut parts = Vec::new();
    if !agg.cases.is_empty() || agg.triggers.is_empty() {
        let count = |v: CaseVerdict| agg.cases.iter().filter(|c| c.verdict == v).count();
        let said: Vec<String> = CaseVerdict::ALL
            .iter()
            .map(|&v| (count(v), v.said()))
            .filter(|(n, _)| *n > 0)
            .map(|(n, w)| format!("{n} {w}"))
            .collect();
        parts.push(format!(
            "{} case{}: {}",
            agg.cases.len(),
            plural(agg.cases.len()),
            if said.is_empty() {
                "none ran".to_string()
            } else {
                said.join(", ")
            }
        ));
    }
    if !agg.triggers.is_empty() {
        let passed = agg.triggers.iter().filter(|t| t.passed).count();
        let untold = agg.triggers.iter().filter(|t| t.undecided()).count();
        let failed = agg.triggers.len() - passed - untold;
        parts.push(format!(
            "{} trigger quer{}: {passed} passed{}{}",
            agg.triggers.len(),
            if agg.triggers.len() == 1 { "y" } else { "ies" },
            if failed > 0 {
                format!(", {failed} failed")
            } else {
                String::new()
            },
            if untold > 0 {
                format!(", {untold} could not tell")
            } else {
                String::new()
            }
        ));
    }
    parts.extend(comparison(agg));
    parts.join(" · ")
}

/// With the skill against the comparison arm, in cases that pass.
fn comparison(agg: &Aggregates) -> Option<String> {
    let first = agg.baselines.first()?;
    let n = agg.baselines.len() as u64;
    let skill = agg
        .baselines
        .iter()
        .filter(|b| {
            agg.cases
                .iter()
                .any(|c| c.suite == b.suite && c.case == b.case && c.verdict == CaseVerdict::Pass)
        })
        .count() as u64;
    let other = agg
        .baselines
        .iter()
        .filter(|b| b.baseline_verdict == CaseVerdict::Pass)
        .count() as u64;
    let points = (skill as f64 - other as f64) / n as f64 * 100.0;
    let p = crate::stats::fisher_exact(skill, n - skill, other, n - other);
    let against = match first.against {
        "variant" => "the variant",
        _ => "without",
    };
    Some(format!(
        "with the skill {skill}/{n} case{} vs {against} {other}/{n} ({points:+.0} points, Fisher p = {p:.2})",
        plural(n as usize)
    ))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
