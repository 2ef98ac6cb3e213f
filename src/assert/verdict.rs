//! A case-run's verdict from its harness outcome, its checks and its judge items.

use crate::record::grading::CheckOutcome;

use crate::record::grading::{Grade, Verdict};

/// What the judge concluded about a case-run's judge items.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeVerdict {
    /// How many judge items the case has.
    pub items: usize,
    /// `Some(true)`: every judged item passes; `Some(false)`: some fail; `None`: not graded.
    pub passed: Option<bool>,
    /// Why it failed, or why nothing was graded.
    pub reasons: Vec<String>,
}

/// Combines the harness outcome, the check outcomes and the judge's verdict.
pub fn grade(
    harness_ok: bool,
    harness_reason: Option<&str>,
    checks: &[CheckOutcome],
    judge: &JudgeVerdict,
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
    if judge.passed == Some(false) {
        reasons.extend(judge.reasons.iter().cloned());
    }
    let verdict = if !reasons.is_empty() {
        Verdict::Fail
    } else if judge.items > 0 && judge.passed.is_none() {
        // One reason that says why: it is the one every report shows.
        let why = judge.reasons.join("; ");
        reasons.push(if why.is_empty() {
            format!("{} judge item(s) not graded", judge.items)
        } else {
            format!("{} judge item(s) not graded: {why}", judge.items)
        });
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
            log: None,
            provider: None,
        }
    }

    #[test]
    fn verdicts() {
        let none = JudgeVerdict::default();
        assert_eq!(
            grade(true, None, &[outcome(true, 1.0)], &none).verdict,
            Verdict::Pass
        );
        let g = grade(
            true,
            None,
            &[outcome(true, 3.0), outcome(false, 1.0)],
            &none,
        );
        assert_eq!(g.verdict, Verdict::Fail);
        assert_eq!(g.score, 0.75);
        let ungraded = JudgeVerdict {
            items: 2,
            passed: None,
            reasons: vec!["no judge available".into()],
        };
        let g = grade(true, None, &[], &ungraded);
        assert_eq!(g.verdict, Verdict::NotGraded);
        assert_eq!(
            g.reasons,
            ["2 judge item(s) not graded: no judge available"]
        );
        let failed = JudgeVerdict {
            items: 1,
            passed: Some(false),
            reasons: vec!["expectation 1 failed".into()],
        };
        assert_eq!(
            grade(true, None, &[outcome(true, 1.0)], &failed).verdict,
            Verdict::Fail
        );
        let passed = JudgeVerdict {
            items: 1,
            passed: Some(true),
            reasons: vec![],
        };
        assert_eq!(
            grade(true, None, &[outcome(true, 1.0)], &passed).verdict,
            Verdict::Pass
        );
        assert_eq!(
            grade(false, Some("timed out"), &[outcome(true, 1.0)], &none).reasons,
            ["timed out"]
        );
    }
}
