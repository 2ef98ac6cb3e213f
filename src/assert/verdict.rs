//! A case-run's verdict from its harness outcome and its checks.

use serde::Serialize;

use super::builtin::CheckOutcome;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Pass,
    Fail,
    /// Some graded items could not be graded (a judge item with no judge): never a pass.
    NotGraded,
}

/// The grading of one case-run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grade {
    pub verdict: Verdict,
    pub checks_passed: usize,
    pub checks_total: usize,
    /// Weighted share of checks passed, 0–1 (1 with no checks).
    pub score: f64,
    /// Why it is not a pass.
    pub reasons: Vec<String>,
}

/// Combines the harness outcome, the check outcomes and the judge items left ungraded.
pub fn grade(
    harness_ok: bool,
    harness_reason: Option<&str>,
    checks: &[CheckOutcome],
    ungraded: usize,
) -> Grade {
    let total_weight: f64 = checks.iter().map(|c| c.weight).sum();
    let passed_weight: f64 = checks.iter().filter(|c| c.passed).map(|c| c.weight).sum();
    let mut reasons = Vec::new();
    if !harness_ok {
        reasons.push(
            harness_reason
                .unwrap_or("the agent did not complete")
                .to_string(),
        );
    }
    for c in checks.iter().filter(|c| !c.passed) {
        reasons.push(format!("{} ({}): {}", c.id, c.kind, c.message));
    }
    let verdict = if !reasons.is_empty() {
        Verdict::Fail
    } else if ungraded > 0 {
        reasons.push(format!(
            "{ungraded} judge item(s) not graded: no judge has run"
        ));
        Verdict::NotGraded
    } else {
        Verdict::Pass
    };
    Grade {
        verdict,
        checks_passed: checks.iter().filter(|c| c.passed).count(),
        checks_total: checks.len(),
        score: if total_weight > 0.0 {
            passed_weight / total_weight
        } else {
            1.0
        },
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(passed: bool, weight: f64) -> CheckOutcome {
        CheckOutcome {
            id: "c".into(),
            kind: "contains".into(),
            passed,
            message: "m".into(),
            evidence: None,
            weight,
            negated: false,
            error: None,
        }
    }

    #[test]
    fn verdicts() {
        assert_eq!(
            grade(true, None, &[outcome(true, 1.0)], 0).verdict,
            Verdict::Pass
        );
        let g = grade(true, None, &[outcome(true, 3.0), outcome(false, 1.0)], 0);
        assert_eq!(g.verdict, Verdict::Fail);
        assert_eq!(g.score, 0.75);
        assert_eq!(grade(true, None, &[], 2).verdict, Verdict::NotGraded);
        assert_eq!(
            grade(false, Some("timed out"), &[outcome(true, 1.0)], 0).reasons,
            ["timed out"]
        );
    }
}
