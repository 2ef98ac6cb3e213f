//! The run stage: plan case-runs, execute them through harnesses under process control, and
//! record everything in the run folder as each one finishes.

pub mod adaptive;
pub mod advisories;
pub mod cache;
pub mod cache_key;
pub mod canary;
pub mod case_run;
pub mod collect;
pub mod cow;
pub mod doctor;
pub mod ending;
pub mod execute;
pub mod mocks;
pub mod options;
pub mod plan;
pub mod preview;
pub mod resolve;
pub mod shard;

pub mod redact;
pub mod retry;
pub mod slash;
pub mod target;
pub mod turns;

mod reuse;
mod run_record;
mod sandboxing;
mod schedule;
mod setup;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::record::case_run::CaseRunRecord;
use crate::record::case_run::TriggerMode;
pub use options::{OtherArm, RunOptions, RunSettings};
/// (`resolve::judge::judge_for`, by the name `assay grade` calls it.)
pub use resolve::judge::judge_for;
pub use reuse::Reused;
pub use shard::Shard;

use crate::diag::Problem;
use crate::formats::LoadCtx;
use crate::host::Unavailable;
use crate::suite::Suite;
use sandboxing::Sandboxing;
use setup::Setup;

/// Why a run could not start.
#[derive(Debug)]
pub enum NotStarted {
    /// Bad input (exit 2): the problems found.
    BadInput(Vec<Problem>),
    /// A harness cannot run here (exit 3).
    Unavailable(Vec<(String, Unavailable)>),
    /// `--dry-run`: the plan, and nothing started (exit 0).
    DryRun(preview::Preview),
}

/// What the runner tells its reporters as the run goes.
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// Everything is planned and checked; case-runs start now.
    Started {
        case_runs: usize,
        jobs: usize,
        dir: &'a std::path::Path,
        /// What will run, printed before any agent starts.
        plan: &'a preview::Preview,
        /// Case-runs taken from the cache or the run being resumed.
        reused: usize,
        /// Those of them that would have started an agent.
        reused_agents: usize,
    },
    /// A case-run finished and is recorded.
    Finished(&'a CaseRunRecord),
    /// A case-run taken from the cache or kept from the run being resumed.
    Reused(&'a Reused),
    /// A running case-run's agent asks its model API again after a failed request.
    Retrying(&'a retry::Retry),
}

/// The finished run.
#[derive(Debug, Serialize)]
pub struct RunReport {
    pub dir: PathBuf,
    /// How many case-runs this invocation ran (results are in the run folder, not kept here:
    /// a run may have tens of thousands).
    pub ran: usize,
    /// The judge failed on some case-run.
    pub judge_failed: bool,
    /// Some case-run was not graded because its output was cut (past the output caps).
    pub output_cut: bool,
    #[serde(skip)]
    pub reused: Vec<Reused>,
    /// Ctrl-C, SIGTERM or SIGHUP stopped the run.
    pub interrupted: bool,
    /// Which: its number (exit code 128 + it), 0 when none did.
    pub signal: i32,
    /// `--max-cost` stopped it from starting every case-run.
    pub budget_stop: Option<crate::record::run::BudgetStop>,
    /// Agents ran without a sandbox (`--sandbox none`).
    pub unsandboxed: bool,
    /// `run.json` could not be written at the end (exit 3).
    pub record_error: Option<String>,
}

/// What every stage after planning reads of the run.
struct Context<'a> {
    suites: &'a [Suite],
    opts: &'a RunOptions,
    setup: &'a Setup,
    plan: &'a plan::Plan<'a>,
    /// Each harness CLI's version ([`run_record::harness_versions`]).
    versions: &'a BTreeMap<String, String>,
    /// The run folder.
    dir: &'a Path,
    /// Agent processes at once, as resolved ([`resolve::jobs::jobs`]).
    jobs: usize,
    /// The spending limit, as resolved ([`resolve::jobs::max_cost`]).
    max_cost: Option<f64>,
}

/// Plans and runs every selected case of `suites`.
pub fn run(
    ctx: &LoadCtx,
    suites: &[Suite],
    opts: &RunOptions,
    mut on_event: impl FnMut(RunEvent<'_>),
) -> Result<RunReport, NotStarted> {
    let setup = Setup::load(ctx, suites, opts)?;

    // Harnesses and judges, each checked before any case starts; then the sandbox.
    let host = &setup.host;
    let mut plan = plan::plan(suites, &setup, opts, host);
    // Host variables a harness asks for (a BMAD adapter's) pass as `--pass-env` passes them:
    // into the agent's environment, the cache key, and redacted from every record.
    let with_harness_env;
    let opts = match harness_env(&plan, opts) {
        Some(o) => {
            with_harness_env = o;
            &with_harness_env
        }
        None => opts,
    };
    let sandboxing = Sandboxing::decide(ctx, &setup, &mut plan, opts, host);
    if !plan.unavailable.is_empty() && !opts.settings.dry_run {
        return Err(NotStarted::Unavailable(plan.unavailable));
    }
    let mut summary = plan::preview(&plan.case_runs, &plan.harnesses, &plan.unavailable, opts);
    summary.shard = plan.shard.as_ref().map(|s| Box::new(s.preview()));
    if opts.settings.dry_run {
        return Err(NotStarted::DryRun(summary));
    }

    // Everything checked: the run folder, each suite's sandbox, and run.json before any
    // case-run starts.
    let runtime = schedule::runtime()?;
    let versions = agent_versions(ctx, &setup, &plan, opts, &sandboxing, &runtime)?;
    let dir = setup::run_dir(ctx, opts);
    let run = Context {
        suites,
        opts,
        setup: &setup,
        plan: &plan,
        versions: &versions,
        dir: &dir,
        jobs: setup.settings.jobs,
        max_cost: setup.settings.max_cost,
    };
    let sandboxes = sandboxing.settings(ctx, &run);
    let workspaces = sandboxing.workspaces(ctx, opts, &runtime);
    let sandbox_record = sandboxing.record(opts, &workspaces, &setup.limits_config());
    let mut run_json = run_record::start(&run, sandbox_record)?;

    // What every case-run shares; what is already done (kept results of a resumed run, then
    // cache hits) is not run again.
    let stage = workspaces.stage(ctx, &run);
    let logins: Vec<_> = plan.harnesses.iter().map(|(_, h)| h.login()).collect();
    let redactor = redact::for_run(&stage, opts, suites, &setup.configs, &logins);
    let checks = schedule::checks(opts);
    let cache_secret = reuse::cache_secret(opts);
    run_json.cache_on(cache_secret.is_some());
    let reuse::Partition {
        reused,
        reused_agents,
        to_run,
    } = reuse::partition(&run, &stage, &sandboxes, cache_secret.as_ref());

    on_event(RunEvent::Started {
        case_runs: plan.case_runs.len(),
        jobs: run.jobs,
        dir: &dir,
        plan: &summary,
        reused: reused.len(),
        reused_agents,
    });
    for r in &reused {
        on_event(RunEvent::Reused(r));
    }
    let launch = schedule::Launch {
        run: &run,
        stage: &stage,
        checks: &checks,
        redactor: &redactor,
        sandboxes: &sandboxes,
        cache_secret: cache_secret.as_ref(),
    };
    let ran = schedule::schedule(&runtime, &launch, &to_run, &mut on_event);
    wait_for_cleanup();
    Ok(run_json.finish(dir, ran, reused, sandboxing.unsandboxed()))
}

/// Each harness CLI's version, asked in the run's sandbox, of the harnesses some case-run
/// starts an agent with (a judged trigger eval starts none). A harness whose program the
/// sandbox cannot start stops the run: every case-run would fail on it.
fn agent_versions(
    ctx: &LoadCtx,
    setup: &Setup,
    plan: &plan::Plan<'_>,
    opts: &RunOptions,
    sandboxing: &Sandboxing,
    runtime: &tokio::runtime::Runtime,
) -> Result<BTreeMap<String, String>, NotStarted> {
    let agents = plan.harnesses.iter().enumerate().filter(|(i, _)| {
        plan.case_runs.iter().any(|p| {
            p.harness == *i
                && !(p.trigger.is_some() && opts.settings.trigger_mode == TriggerMode::Judge)
        })
    });
    let probe = sandboxing.version_probe(ctx, setup, opts);
    let versions = runtime.block_on(run_record::harness_versions(
        agents.map(|(_, (_, h))| h.as_ref()),
        &probe,
    ));
    if !versions.missing.is_empty() {
        return Err(NotStarted::Unavailable(versions.missing));
    }
    Ok(versions.text)
}

/// Waits (up to [`CLEANUP_WAIT`]) for finished workspaces still being removed, and says what
/// is left to the system's temp cleanup.
fn wait_for_cleanup() {
    let left = crate::workspace::cleanup::finish(CLEANUP_WAIT);
    if !left.is_empty() {
        eprintln!(
            "note: {} workspace(s) still being removed after {} s, left for the system's temp cleanup: {}",
            left.len(),
            CLEANUP_WAIT.as_secs(),
            crate::text::printable(&left[0].display().to_string())
        );
    }
}

/// The options with the harnesses' own host variables added to `--pass-env`, when they ask
/// for any it does not name.
fn harness_env(plan: &plan::Plan<'_>, opts: &RunOptions) -> Option<RunOptions> {
    let mut names: Vec<String> = plan
        .harnesses
        .iter()
        .flat_map(|(_, h)| h.passed_env())
        .filter(|n| !opts.settings.pass_env.contains(n))
        .collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        return None;
    }
    let mut o = opts.clone();
    o.settings.pass_env.extend(names);
    Some(o)
}

fn suite_index(suites: &[Suite], s: &Suite) -> usize {
    suites.iter().position(|x| std::ptr::eq(x, s)).unwrap_or(0)
}

/// How long a run waits at its end for finished workspaces still being removed.
const CLEANUP_WAIT: std::time::Duration = std::time::Duration::from_secs(60);
