//! The trigger canary: before trigger evals run through an agent, one query that names the
//! skill outright ("Use the <name> skill.") must make it fire. If it does not, the skill is not
//! installed where the agent looks or the detector cannot see it fire, and every trigger rate
//! the run would report is wrong (the most common cause of a silent 0% recall); the run stops
//! there (exit 3) instead.

use std::path::PathBuf;

use super::{Mode, NotStarted, RunEvent, RunOptions, TriggerMode};
use crate::spec::formats::LoadCtx;
use crate::spec::{Suite, TriggerCase};

/// Runs of the canary query per skill: it passes when the skill fires in any.
pub const RUNS: u32 = 2;

/// The canary query for a skill.
pub fn query(skill: &str) -> String {
    format!("Use the {skill} skill.")
}

/// One skill's canary.
#[derive(Debug, Clone)]
pub struct Canary {
    pub suite: String,
    pub skill: String,
    pub harness: String,
    /// Runs in which the skill fired, and runs that could tell.
    pub fired: u32,
    pub told: u32,
    /// Runs taken from the cache (no agent ran for them).
    pub cached: u32,
    /// Why a run could not tell (it ended in error before the agent answered), the first.
    pub unrun: Option<String>,
}

impl Canary {
    /// The skill never fired though some run could tell: the detector or the installation is
    /// broken.
    pub fn failed(&self) -> bool {
        self.told > 0 && self.fired == 0
    }

    /// No run could tell, for a reason the runs gave (the agent could not start, say): the
    /// trigger evals would end the same way, so the run stops rather than report nothing.
    pub fn undecided(&self) -> bool {
        self.told == 0 && self.unrun.is_some()
    }
}

/// Whether the run has trigger evals through an agent, so the canary applies.
pub fn applies(suites: &[Suite], opts: &RunOptions) -> bool {
    opts.settings.mode != Mode::Artifacts
        && opts.settings.trigger_mode == TriggerMode::Agent
        && !opts.settings.dry_run
        && opts.settings.resume.is_none()
        && suites
            .iter()
            .any(|s| !s.triggers.is_empty() && s.skill.is_some())
}

/// Runs each skill's canary (suites with trigger queries and a skill, one per skill and
/// harness; the `command` harness, which cannot tell whether a skill fired, is left out),
/// recorded in `dir`.
pub fn run(
    ctx: &LoadCtx,
    suites: &[Suite],
    opts: &RunOptions,
    dir: PathBuf,
) -> Result<Vec<Canary>, NotStarted> {
    // The harness each suite's trigger evals would use, from the plan.
    let mut dry = opts.clone();
    dry.settings.dry_run = true;
    dry.settings.mode = Mode::Triggers;
    let plan = match super::run(ctx, suites, &dry, |_| {}) {
        Err(NotStarted::DryRun(p)) => p,
        Err(e) => return Err(e),
        Ok(_) => return Ok(Vec::new()),
    };
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut canaries: Vec<Suite> = Vec::new();
    for s in suites.iter().filter(|s| !s.triggers.is_empty()) {
        let Some(skill) = &s.skill else { continue };
        let Some(row) = plan.case_runs.iter().find(|r| r.suite == s.id) else {
            continue;
        };
        if row.harness == "command" || seen.contains(&(skill.name.clone(), row.harness.clone())) {
            continue;
        }
        seen.push((skill.name.clone(), row.harness.clone()));
        let mut c = s.clone();
        c.id = format!("canary:{}", s.id);
        c.cases = Vec::new();
        c.triggers = vec![TriggerCase {
            id: "canary".into(),
            query: query(&skill.name),
            should_trigger: true,
            routing: Default::default(),
            location: s.triggers[0].location.clone(),
        }];
        canaries.push(c);
    }
    if canaries.is_empty() {
        return Ok(Vec::new());
    }
    let mut o = opts.clone();
    o.settings.output_dir = Some(dir);
    o.settings.mode = Mode::Triggers;
    o.settings.trigger_runs = RUNS;
    o.settings.filter = None;
    o.settings.shard = None;
    o.settings.max_cost = None;
    o.baseline = None;
    o.judge = Some("none".into());
    let mut out: Vec<Canary> = canaries
        .iter()
        .map(|c| Canary {
            suite: c.id.trim_start_matches("canary:").to_string(),
            skill: c.skill.as_ref().map(|k| k.name.clone()).unwrap_or_default(),
            harness: String::new(),
            fired: 0,
            told: 0,
            cached: 0,
            unrun: None,
        })
        .collect();
    let mut note = |r: &crate::record::CaseRunRecord, cached: bool| {
        let suite = r.suite.trim_start_matches("canary:");
        if let Some(c) = out.iter_mut().find(|c| c.suite == suite) {
            c.harness = r.harness.clone();
            c.cached += u32::from(cached);
            match r.trigger.as_ref().and_then(|t| t.fired) {
                Some(f) => {
                    c.told += 1;
                    c.fired += u32::from(f);
                }
                None if c.unrun.is_none() => {
                    let status = crate::record::run::word(&r.status);
                    c.unrun = Some(r.reason.clone().unwrap_or(status));
                }
                None => {}
            }
        }
    };
    let mut reused = Vec::new();
    super::run(ctx, &canaries, &o, |e| match e {
        RunEvent::Finished(r) => note(r, false),
        RunEvent::Reused(r) => reused.push(r.dir.clone()),
        RunEvent::Started { .. } | RunEvent::Retrying(_) => {}
    })?;
    for d in reused {
        if let Ok(r) = crate::record::read_case_run(&d) {
            note(&r, true);
        }
    }
    Ok(out)
}
