//! Whether a case-run has stand-ins, and what they leave in its record: a call that aborted
//! the run fails it (score 0); an agent mock whose model failed makes it an infrastructure
//! error.

use super::{Active, Opening};
use crate::grade::JudgeSlot;
use crate::record::case_run::{CaseRunRecord, Status};
use crate::record::grading::Verdict;
use crate::run::case_run::CaseRunPlan;
use crate::suite::Package;

/// The turns a plugin-eval case allows when it does not say (Claude Code's 10).
const DEFAULT_MAX_TURNS: u32 = 10;

/// The plugin this case-run stages for the agent to load whole, if any.
fn staged_plugin<'a>(plan: &'a CaseRunPlan<'_>) -> Option<&'a Package> {
    if !(plan.stage.install_skill && plan.stage.loads_plugins) || plan.trigger.is_some() {
        return None;
    }
    match (
        plan.case.plugins.first(),
        &plan.suite.package,
        &plan.suite.skill,
    ) {
        (Some(p), _, _) => Some(p),
        (None, Some(p), None) if p.claude_plugin => Some(p),
        _ => None,
    }
}

/// The case-run's stand-ins, registered: `None` when it has none (no mocks, `--mocks off`,
/// no plugin loaded whole in this arm).
pub fn open(plan: &CaseRunPlan<'_>) -> Result<Option<Active>, String> {
    let Some(stand_ins) = &plan.stage.stand_ins else {
        return Ok(None);
    };
    let Some(plugin) = staged_plugin(plan).filter(|_| !plan.case.mocks.is_empty()) else {
        return Ok(None);
    };
    let judge = match &plan.judge {
        Some(JudgeSlot::Ready(j, _)) => Ok(j.clone()),
        Some(JudgeSlot::Unavailable(why)) => Err(why.clone()),
        None => Err("no judge is configured (--judge)".to_string()),
    };
    super::open(Opening {
        servers: &plan.case.mocks,
        plugin: plugin.name.as_deref().unwrap_or("plugin"),
        judge,
        max_turns: plan.case.agent.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
        withheld: crate::workspace::stand_ins::withheld(&plugin.root, stand_ins),
    })
    .map(Some)
}

/// The stand-ins' record into the case-run's, before it is graded.
pub async fn record(r: &mut CaseRunRecord, active: &Active) {
    let (record, infrastructure) = active.record().await;
    if let Some(a) = &record.aborted {
        let why = format!("aborted by mock {}/{}: {}", a.server, a.tool, a.reason);
        let status = if infrastructure {
            Status::Error
        } else {
            Status::Failed
        };
        r.status = status;
        r.reason = Some(why);
    }
    r.mocks = Some(record);
}

/// An aborted run scores 0, whatever its checks say (Claude Code grades nothing of it).
pub fn zero_if_aborted(r: &mut CaseRunRecord) {
    let aborted = r.mocks.as_ref().and_then(|m| m.aborted.as_ref());
    if let (Some(a), Some(g)) = (aborted, r.grade.as_mut()) {
        g.score = 0.0;
        g.verdict = Verdict::Fail;
        let why = format!("aborted by mock {}/{}: {}", a.server, a.tool, a.reason);
        if !g.reasons.contains(&why) {
            g.reasons.insert(0, why);
        }
    }
}
