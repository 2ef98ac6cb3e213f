//! Running what the plan left to run: at most `jobs` case-runs at once, each launched with
//! what the run shares, until all are done or a signal stops the run.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;

use super::plan::Planned;
use super::reuse::cacheable;
use super::{Context, NotStarted, RunEvent, RunOptions, cache, cache_key, execute, redact};
use crate::assert::builtin::urls::UrlPolicy;
use crate::assert::check::Checks;
use crate::host::Unavailable;
use crate::process;
use crate::record;
use crate::record::case_run::{Arm, CaseRunRecord};
use crate::workspace::StageOptions;

/// The async runtime the run's case-runs (and its probes) run on.
pub(super) fn runtime() -> Result<tokio::runtime::Runtime, NotStarted> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            NotStarted::Unavailable(vec![(
                "runtime".into(),
                Unavailable {
                    message: format!("cannot start the async runtime: {e}"),
                    fix: String::new(),
                },
            )])
        })
}

/// The checks every case-run is graded with: the built-in ones, then the plugins'.
pub(super) fn checks(opts: &RunOptions) -> Checks {
    let mut checks = Checks::builtin(UrlPolicy {
        allow_private: opts.allow_private_urls,
        ..UrlPolicy::default()
    });
    opts.plugins.install(&mut checks);
    checks
}

/// What the case-runs that ran came to.
pub(super) struct Ran {
    /// How many ran (to the end, or until cancelled).
    pub ran: usize,
    /// The judge failed on some case-run.
    pub judge_failed: bool,
    /// Some case-run was not graded because its output was cut (past the output caps).
    pub output_cut: bool,
    /// The signal that stopped the run, 0 when none did.
    pub signal: i32,
    /// `--max-cost` left case-runs unstarted.
    pub budget_stop: Option<record::run::BudgetStop>,
    /// Per harness, the agent's name and version as one of its case-runs reported them.
    pub agents: BTreeMap<String, String>,
}

/// `--max-cost`: what the case-runs this run started have cost (as their agents report it),
/// and whether another may start. Case-runs already running finish.
struct Budget {
    limit: Option<f64>,
    spent: Mutex<f64>,
    not_started: AtomicUsize,
}

impl Budget {
    fn spent(&self) -> f64 {
        self.spent.lock().map(|s| *s).unwrap_or(f64::INFINITY)
    }

    /// Whether a case-run may start; counts it when it may not.
    fn allows_another(&self) -> bool {
        match self.limit {
            Some(limit) if self.spent() >= limit => {
                self.not_started.fetch_add(1, Ordering::SeqCst);
                false
            }
            _ => true,
        }
    }

    fn add(&self, cost: Option<f64>) {
        if let (Some(c), Ok(mut s)) = (cost, self.spent.lock()) {
            *s += c;
        }
    }
}

/// Runs `to_run` on `runtime`, the run's `jobs` at once, telling `on_event` as each finishes.
///
/// Ctrl-C, SIGTERM (what a CI cancel sends) and SIGHUP (a closed terminal) alike: the first
/// stops launching and stops running agents (recorded as interrupted); a second kills every
/// process group at once and exits.
pub(super) fn schedule(
    runtime: &tokio::runtime::Runtime,
    launch: &Launch<'_>,
    to_run: &[(&Planned<'_>, Option<String>)],
    on_event: &mut impl FnMut(RunEvent<'_>),
) -> Ran {
    let (cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    let interrupted = Arc::new(AtomicI32::new(0));
    let budget = Budget {
        limit: launch.run.max_cost,
        spent: Mutex::new(0.0),
        not_started: AtomicUsize::new(0),
    };
    let (ran, judge_failed, output_cut, agents) = runtime.block_on(async {
        let signals = tokio::spawn(watch_signals(
            cancel_tx,
            interrupted.clone(),
            launch.run.opts.on_kill,
        ));
        let (retries, mut retried) = tokio::sync::mpsc::unbounded_channel();
        let mut stream = futures::stream::iter(to_run.iter().map(|(p, key)| {
            let started = Started {
                key: key.as_deref(),
                cancel: cancel_rx.clone(),
                budget: &budget,
                retries: retries.clone(),
            };
            launch.case_run(p, started)
        }))
        .buffer_unordered(launch.run.jobs);
        let (mut ran, mut judge_failed, mut output_cut) = (0, false, false);
        let mut agents = BTreeMap::new();
        loop {
            // Retries first: a case-run's retry lines are told before it is told finished,
            // and none is left in the channel when the run ends.
            let r = tokio::select! {
                biased;
                Some(retry) = retried.recv() => {
                    on_event(RunEvent::Retrying(&retry));
                    continue;
                }
                r = stream.next() => r,
            };
            while let Ok(retry) = retried.try_recv() {
                on_event(RunEvent::Retrying(&retry));
            }
            let Some(r) = r else { break };
            if let Some(r) = r {
                budget.add(r.cost_usd);
                on_event(RunEvent::Finished(&r));
                ran += 1;
                judge_failed |= r.judge.as_ref().is_some_and(|j| j.error.is_some());
                output_cut |= r.output_truncated && r.outcome() == record::Outcome::NotGraded;
                if let Some(a) = r.turns.iter().find_map(|t| t.agent.clone()) {
                    agents.entry(r.harness.clone()).or_insert(a);
                }
            }
        }
        signals.abort();
        (ran, judge_failed, output_cut, agents)
    });
    let not_started = budget.not_started.load(Ordering::SeqCst);
    Ran {
        ran,
        judge_failed,
        output_cut,
        agents,
        signal: interrupted.load(Ordering::SeqCst),
        budget_stop: budget.limit.filter(|_| not_started > 0).map(|limit| {
            record::run::BudgetStop {
                max_cost_usd: limit,
                spent_usd: budget.spent(),
                not_started,
            }
        }),
    }
}

/// The signals that stop a run: SIGINT, SIGTERM and SIGHUP.
struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    /// Listens for them (within a tokio runtime); `None` when that cannot be set up.
    fn listen() -> Option<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Some(Signals {
            int: signal(SignalKind::interrupt()).ok()?,
            term: signal(SignalKind::terminate()).ok()?,
            hup: signal(SignalKind::hangup()).ok()?,
        })
    }

    /// The number of the next one to arrive.
    async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.int.recv() => libc::SIGINT,
            _ = self.term.recv() => libc::SIGTERM,
            _ = self.hup.recv() => libc::SIGHUP,
        }
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "Ctrl-C",
    }
}

/// Ctrl-C, SIGTERM and SIGHUP: the first cancels the run (recorded in `flag`); a second kills
/// every process group at once and hands over to `on_kill`.
async fn watch_signals(
    cancel_tx: tokio::sync::watch::Sender<bool>,
    flag: Arc<AtomicI32>,
    on_kill: Option<fn(i32)>,
) {
    let Some(mut signals) = Signals::listen() else {
        return;
    };
    let first = signals.next().await;
    flag.store(first, Ordering::SeqCst);
    let _ = cancel_tx.send(true);
    eprintln!(
        "\ninterrupted{}: stopping the running agents and recording what finished (Ctrl-C again to kill at once)",
        match first {
            libc::SIGINT => String::new(),
            other => format!(" by {}", signal_name(other)),
        }
    );
    let second = signals.next().await;
    process::kill_all_groups();
    eprintln!("killed");
    if let Some(kill) = on_kill {
        kill(second);
    }
}

/// What launching one case-run needs of the run, shared by all of them.
/// What one case-run is started with besides its plan: its cache key, the run's cancel
/// signal and budget, and where it tells its agent's retries.
struct Started<'a> {
    key: Option<&'a str>,
    cancel: tokio::sync::watch::Receiver<bool>,
    budget: &'a Budget,
    retries: super::retry::Retries,
}

pub(super) struct Launch<'a> {
    /// The suites, options, harnesses, baseline skills and run folder.
    pub run: &'a Context<'a>,
    pub stage: &'a StageOptions,
    pub checks: &'a Checks,
    pub redactor: &'a redact::Redactor,
    /// Each suite's sandbox.
    pub sandboxes: &'a [crate::sandbox::Setting],
    /// The cache, when it is on.
    pub cache_secret: Option<&'a cache_key::CacheKey>,
}

impl Launch<'_> {
    /// Runs one planned case-run (unless the run was cancelled first) and stores it in the
    /// cache when it may be reused.
    async fn case_run(&self, p: &Planned<'_>, started: Started<'_>) -> Option<CaseRunRecord> {
        let Started {
            key,
            cancel,
            budget,
            retries,
        } = started;
        let Context {
            suites,
            opts,
            setup,
            plan,
            dir,
            ..
        } = *self.run;
        let si = super::suite_index(suites, p.suite);
        if *cancel.borrow() || !budget.allows_another() {
            return None;
        }
        let mut stage = self.stage.clone();
        let skill = match p.variant {
            Arm::Skill => None,
            Arm::Baseline | Arm::Variant => {
                stage.install_skill = setup.baseline_skills[si].is_some();
                setup.baseline_skills[si].clone()
            }
        };
        stage.command_as_skill = p.trigger.is_some();
        stage.engines = plan.harnesses[p.harness].1.engines().to_vec();
        stage.loads_plugins = plan.harnesses[p.harness].1.loads_plugins();
        stage.skill_folders = plan.harnesses[p.harness].1.skill_folders();
        stage.login = plan.harnesses[p.harness].1.login();
        stage.stand_ins =
            (opts.settings.mocks != Some(crate::run::options::Mocks::Off)).then(|| {
                crate::workspace::stand_ins::StandIns {
                    mocked: p.case.mocks.iter().map(|m| m.name.clone()).collect(),
                    keep_unmocked: opts.settings.allow_real_servers,
                }
            });
        // UAAPS `writable-paths` are bound one by one into a copied workspace.
        if !self.sandboxes[si].writable.is_empty() {
            stage.bases = None;
        }
        let case_dir = p.dir(dir);
        let _ = crate::workspace::remove::tree(&case_dir);
        let r = execute::execute(super::case_run::CaseRunPlan {
            suite: p.suite,
            case: p.case,
            run: p.run,
            variant: p.variant,
            trigger: trigger_plan(p, opts, plan.harnesses[p.harness].1.as_ref()),
            skill,
            cancel: Some(cancel.clone()),
            harness: plan.harnesses[p.harness].1.as_ref(),
            model: p.model.clone(),
            timeout: p.timeout,
            trust: opts.settings.trust,
            keep_workspace: opts.settings.keep_workspaces,
            stage,
            sandbox: self.sandboxes[si].clone(),
            dir: case_dir.clone(),
            run_dir: dir.to_path_buf(),
            judge: p.judge.clone(),
            checks: self.checks,
            redact: self.redactor,
            retries: Some(retries),
            grants: &opts.settings.tools,
            two_arms: opts.baseline.is_some()
                || super::plan::compares_without(p.suite, p.case, opts),
            threshold: opts.settings.threshold,
        })
        .await;
        if let (Some(k), Some(secret)) = (key, self.cache_secret)
            && cacheable(&r)
            && let Err(e) = cache::store(
                &cache::root(&p.suite.project_root),
                k,
                &case_dir,
                dir,
                secret,
            )
        {
            eprintln!(
                "{}",
                crate::text::printable(&format!(
                    "warning: {} was not stored in the cache: {e}",
                    case_dir.display()
                ))
            );
        }
        Some(r)
    }
}

/// What a trigger case-run needs besides its query: how firing is decided, and where the
/// agent is stopped.
fn trigger_plan<'a>(
    p: &Planned<'a>,
    opts: &super::RunOptions,
    harness: &dyn crate::harness::Harness,
) -> Option<super::case_run::TriggerPlan<'a>> {
    let t = p.trigger?;
    Some(super::case_run::TriggerPlan {
        case: t,
        mode: opts.settings.trigger_mode,
        threshold: opts.settings.trigger_threshold,
        stop_early: !opts.settings.trigger_full_runs,
        turns: opts.settings.trigger_turns,
        load_verified: p.suite.skill.as_ref().is_some_and(|k| {
            opts.loads_verified
                .contains(&(k.name.clone(), harness.name().to_string()))
        }),
    })
}
