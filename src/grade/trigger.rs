//! A trigger eval's grade: the skill fired exactly when it should have, and the query's
//! routing rules held. Observed through the agent's own events, or (`--trigger-mode judge`)
//! guessed by a judge from the skill's name and description, no agent run.

use super::JudgeSlot;
use crate::record::case_run::{CaseRunRecord, Status, TriggerRecord};
use crate::record::grading::{Grade, Verdict};

/// A trigger case-run observed through the agent: whether the skill fired, as the agent's own
/// events show, and the grade that follows.
pub fn grade_observed(r: &mut CaseRunRecord) {
    let Some(t) = r.trigger.as_mut() else {
        return;
    };
    let fired = r.skills_invoked.contains(&t.skill);
    // A failed agent cannot tell: such runs are left out of the trigger rate.
    t.fired = (r.status == Status::Completed).then_some(fired);
    let broken: Vec<String> = t
        .routing
        .rules(&t.skill, t.should_trigger)
        .into_iter()
        .filter(|rule| !rule.holds(&r.skills_invoked))
        .map(|rule| rule.describe())
        .collect();
    r.grade = Some(verdict(t, r.reason.as_deref(), &broken));
}

/// A trigger case-run the judge decides: whether it would fire on `query` knowing the skill
/// by its name and `description`, and the grade that follows. `Err`: why there is no verdict
/// (no judge, or the judge failed).
pub async fn grade_judged(
    r: &mut CaseRunRecord,
    judge: Option<&JudgeSlot>,
    description: &str,
    query: &str,
) -> Result<(), String> {
    let judge = match judge {
        None => return Err("--trigger-mode judge needs a judge (see --judge)".into()),
        Some(JudgeSlot::Unavailable(why)) => {
            return Err(format!("no judge for --trigger-mode judge: {why}"));
        }
        Some(JudgeSlot::Ready(j, _)) => j.clone(),
    };
    let name = r
        .trigger
        .as_ref()
        .map(|t| t.skill.clone())
        .unwrap_or_default();
    let j = crate::judge::trigger::would_fire(&judge, &name, description, query)
        .await
        .map_err(|e| format!("the trigger judge failed: {e}"))?;
    if let Some(t) = r.trigger.as_mut() {
        t.fired = Some(j.fires);
        t.reason = Some(j.reason);
        r.grade = Some(verdict(t, None, &[]));
    }
    Ok(())
}

/// One trigger case-run's verdict: the skill fired exactly when it should have. (The query's
/// verdict is its trigger rate over all its runs against the threshold; see the report.)
fn verdict(t: &TriggerRecord, failure: Option<&str>, broken: &[String]) -> Grade {
    let (verdict, mut reasons) = match t.fired {
        Some(f) if f == t.should_trigger => (Verdict::Pass, Vec::new()),
        Some(true) => (
            Verdict::Fail,
            vec![format!("the skill `{}` fired but should not have", t.skill)],
        ),
        Some(false) => (
            Verdict::Fail,
            vec![format!(
                "the skill `{}` did not fire but should have",
                t.skill
            )],
        ),
        None => (
            Verdict::Fail,
            vec![failure.unwrap_or("the agent failed").to_string()],
        ),
    };
    // Routing holds or not only in a run that could tell what fired.
    let verdict = if t.fired.is_some() && !broken.is_empty() {
        reasons.extend(broken.iter().map(|b| format!("routing: {b} did not hold")));
        Verdict::Fail
    } else {
        verdict
    };
    Grade {
        score: if verdict == Verdict::Pass { 1.0 } else { 0.0 },
        verdict,
        checks_passed: 0,
        checks_total: 0,
        reasons,
    }
}
