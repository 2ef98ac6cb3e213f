//! The trigger canary: before trigger evals run through an agent, one query that names the
//! skill outright ("Use the <name> skill.") must make it fire. If it does not, the skill is not
//! installed where the agent looks or the detector cannot see it fire, and every trigger rate
//! the run would report is wrong (the most common cause of a silent 0% recall); the run stops
//! there (exit 3) instead.

use std::path::PathBuf;

use super::{NotStarted, RunEvent, RunOptions};
use crate::formats::LoadCtx;
use crate::record::{case_run::TriggerMode, run::Mode};
use crate::suite::{Suite, TriggerCase};

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
    /// What a canary that passed says: `` canary: `skill` fired through claude-code in 2 of 2
    /// run(s) ``, and how many came from the cache.
    pub fn passed_line(&self) -> String {
        format!(
            "canary: `{}` fired through {} in {} of {} run(s){}",
            self.skill,
            self.harness,
            self.fired,
            self.told,
            match self.cached {
                0 => String::new(),
                n if n == self.told => ", from the cache".to_string(),
                n => format!(", {n} from the cache"),
            }
        )
    }

    /// What a canary that failed, or could not tell, says.
    pub fn failed_line(&self) -> String {
        match &self.unrun {
            Some(why) if self.undecided() => format!(
                "error: the trigger canary could not tell whether `{}` fires through {}: its runs ended before the agent answered: {}",
                self.skill,
                self.harness,
                crate::text::printable(why)
            ),
            _ => format!(
                "error: the trigger canary failed: `{}` did not fire on {:?} in {} run(s) through {}: the skill is not installed where the agent looks, or assay cannot see it fire, so every trigger rate this run reported would be wrong",
                self.skill,
                query(&self.skill),
                self.told,
                self.harness
            ),
        }
    }

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

/// How the canary went.
#[derive(Debug)]
pub enum CanaryVerdict {
    /// Every skill fired (or there was nothing to check): the run goes on.
    Passed(Vec<Canary>),
    /// These did not, or could not tell; their run folder is kept in `dir`: nothing else runs.
    Failed { failed: Vec<Canary>, dir: PathBuf },
    /// No folder could be made for it: nothing else runs.
    NoFolder(std::io::Error),
}

/// The (skill, harness) pairs whose loads the canary saw work (settled by their results):
/// later calls of the skill through that harness in the run cannot fail.
pub fn verified(list: &[Canary]) -> Vec<(String, String)> {
    list.iter()
        .filter(|c| c.fired > 0)
        .map(|c| (c.skill.clone(), c.harness.clone()))
        .collect()
}

/// Runs the canary when it applies (`--no-canary` is `skip`), in a temporary folder kept only
/// when it failed. `None` when it does not apply, or cannot run at all (a harness missing,
/// say): the run goes on and says why itself.
pub fn check(
    ctx: &LoadCtx,
    suites: &[Suite],
    opts: &RunOptions,
    skip: bool,
) -> Option<CanaryVerdict> {
    if skip || !applies(suites, opts) {
        return None;
    }
    let dir = match tempfile::Builder::new().prefix("assay-canary-").tempdir() {
        Ok(d) => d,
        Err(e) => return Some(CanaryVerdict::NoFolder(e)),
    };
    let list = run(ctx, suites, opts, dir.path().join("run")).ok()?;
    let failed: Vec<Canary> = list
        .iter()
        .filter(|c| c.failed() || c.undecided())
        .cloned()
        .collect();
    if failed.is_empty() {
        return Some(CanaryVerdict::Passed(list));
    }
    Some(CanaryVerdict::Failed {
        failed,
        dir: dir.keep().join("run"),
    })
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
            holdout: false,
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
    // Whether the skill fires is all the canary asks: it stops at the load, always.
    o.settings.trigger_full_runs = false;
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
