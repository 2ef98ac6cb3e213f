//! Scores by weight, for formats that pass a case on its mean score (Claude Code's plugin
//! evals): a case-run's score is the weight of its passing checks and judge items over the
//! weight of all it scores; it passes at 1. Beside a baseline arm, checks that only say
//! whether the plugin fired (`with-only`) are shown but not scored, and the baseline arm
//! leaves them out, unless every check of the case is one.

use crate::record::case_run::Arm;
use crate::record::grading::{CheckOutcome, Grade, JudgeRecord, Verdict};
use crate::suite::Case;

/// What an arm grades of a case: without the plugin, the case without its with-only checks
/// and judge items; with it, the case whole and which of them are shown but not scored.
pub fn for_arm(case: &Case, arm: Arm, two_arms: bool) -> (Case, Vec<String>) {
    let ids = |c: &Case| {
        c.checks
            .iter()
            .map(|k| k.id.clone())
            .chain(c.judge.rubric.iter().map(|r| r.id.clone()))
            .collect::<Vec<_>>()
    };
    let all_with_only = ids(case).iter().all(|id| case.with_only.contains(id));
    if !two_arms || case.with_only.is_empty() || all_with_only {
        return (case.clone(), Vec::new());
    }
    if arm == Arm::Skill {
        return (case.clone(), case.with_only.clone());
    }
    let mut kept = case.clone();
    kept.checks.retain(|c| !case.with_only.contains(&c.id));
    kept.judge
        .rubric
        .retain(|r| !case.with_only.contains(&r.id));
    (kept, Vec::new())
}

/// A judge item's weight, as its format gives it (Claude Code's `weight`), else 1.
fn judge_weight(case: &Case, id: &str) -> f64 {
    case.native
        .as_ref()
        .and_then(|n| n.get("graders"))
        .and_then(|g| g.as_array())
        .and_then(|gs| {
            gs.iter()
                .find(|g| g.get("name").and_then(|n| n.as_str()) == Some(id))
        })
        .and_then(|g| g.get("weight"))
        .and_then(|w| w.as_f64())
        .unwrap_or(1.0)
}

/// The grade by weight. The checks' weights and the judge items' count; `unscored` ones are
/// left out of the score; a judge that graded nothing leaves its items failed, so the score
/// says what was shown. An agent that did not complete keeps `grade`'s verdict.
pub fn grade(
    case: &Case,
    checks: &[CheckOutcome],
    judge: Option<&JudgeRecord>,
    unscored: &[String],
    completed: bool,
    mut grade: Grade,
) -> Grade {
    let mut total = 0.0;
    let mut passed = 0.0;
    for c in checks.iter().filter(|c| !unscored.contains(&c.id)) {
        total += c.weight;
        if c.passed {
            passed += c.weight;
        }
    }
    let judged = judge.and_then(|j| j.rubric.as_ref());
    for item in case
        .judge
        .rubric
        .iter()
        .filter(|r| !unscored.contains(&r.id))
    {
        let w = judge_weight(case, &item.id);
        total += w;
        let ok = judged.is_some_and(|r| r.criteria.iter().any(|c| c.id == item.id && c.passed));
        if ok {
            passed += w;
        }
    }
    grade.score = if total > 0.0 { passed / total } else { 0.0 };
    if completed && grade.verdict != Verdict::NotGraded {
        grade.verdict = if grade.score >= 1.0 {
            grade.reasons.clear();
            Verdict::Pass
        } else {
            Verdict::Fail
        };
    }
    grade
}
