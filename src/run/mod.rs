//! The run stage: plan case-runs, execute them through harnesses under process control, and
//! record everything in the run folder as each one finishes.

pub mod cache;
pub mod cache_key;
pub mod collect;
pub mod cow;
pub mod execute;
pub mod grade;
pub mod plan;

pub mod redact;
pub mod regrade;
pub mod slash;
pub mod target;
pub mod turns;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
use serde::Serialize;

pub use execute::{CaseRunResult, Status};
pub use grade::JudgeSlot;
pub use plan::{Baseline, Mode, Shard, TriggerMode, Variant};

use crate::assert::check::Checks;
use crate::assert::urls::UrlPolicy;
use crate::config::{self, Config};
use crate::diag::Problem;
use crate::harness::Harness;
use crate::host::{HostEnv, Unavailable};
use crate::process;
use crate::record;
use crate::spec::formats::LoadCtx;
use crate::spec::{Case, Skill, SkillKind, Suite, TriggerCase};
use crate::workspace::StageOptions;
use plan::Planned;

pub const DEFAULT_TIMEOUT_SECS: u64 = 600;
pub const DEFAULT_HARNESS: &str = "claude-code";

/// What the user asked for on the command line (and through `ASSAY_*` variables).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// What a second Ctrl-C (SIGTERM, SIGHUP) does once every agent's process group is killed:
    /// the program's to decide (the CLI exits with 128 + the signal). `None`: the run goes on
    /// recording what the killed agents left.
    pub on_kill: Option<fn(i32)>,
    pub harness: Option<String>,
    pub model: Option<String>,
    pub timeout: Option<u64>,
    /// Agent processes at once; 0 picks `[run] jobs` of assay.toml, else a default from CPUs and memory.
    pub jobs: usize,
    pub filter: Option<String>,
    /// `--target`: only cases whose UAAPS `target` is this.
    pub target: Option<crate::spec::Target>,
    /// `--dry-run`: plan, print the plan, start nothing.
    pub dry_run: bool,
    pub keep_workspaces: bool,
    pub output_dir: Option<PathBuf>,
    pub workspace_dir: Option<PathBuf>,
    pub trust: bool,
    /// `--sandbox` (over `[run] sandbox`; default auto).
    pub sandbox: Option<crate::sandbox::Mode>,
    /// `--network` (over the suite's and `[run] network`; default model).
    pub network: Option<crate::sandbox::Network>,
    pub pass_env: Vec<String>,
    /// The `command` harness's command, overriding `assay.toml`.
    pub command: Vec<String>,
    /// `--judge`: provider, provider:model, or a model name.
    pub judge: Option<String>,
    /// `--transport`: how an Anthropic judge is reached (`api`, `cli`, `auto`).
    pub transport: Option<String>,
    /// `urls_reachable` may reach loopback, private and link-local addresses.
    pub allow_private_urls: bool,
    /// Loaded plugins: check types, formats, harnesses.
    pub plugins: crate::plugin::Plugins,
    /// `--runs`: runs of each artifact case (over the suite's `variance.n_runs`).
    pub runs: Option<u32>,
    /// `--judge-jobs`: judge calls at once (over `ASSAY_JUDGE_CONCURRENCY`).
    pub judge_jobs: Option<usize>,
    pub mode: Mode,
    pub trigger_mode: TriggerMode,
    /// Runs of each trigger query (default 3).
    pub trigger_runs: u32,
    /// The trigger rate a should-trigger query needs, and a should-not query must stay under.
    pub trigger_threshold: f64,
    pub baseline: Option<Baseline>,
    /// `--resume <run-dir>`: finish that run; only missing or errored case-runs are redone.
    pub resume: Option<PathBuf>,
    /// Reuse unchanged case-runs from the cache (off with `--no-cache`).
    pub cache: bool,
    pub shard: Option<Shard>,
    /// The pass rate a case needs over its runs (1: every run).
    pub min_pass_rate: f64,
    /// The k of pass@k and pass^k.
    pub pass_k: u32,
}

impl RunOptions {
    /// The options as run.json records them (`jobs`: the number the run settled on).
    fn record(&self, jobs: usize) -> record::run::OptionsRecord {
        record::run::OptionsRecord {
            harness: self.harness.clone(),
            model: self.model.clone(),
            timeout: self.timeout,
            jobs,
            judge_jobs: self.judge_jobs,
            filter: self.filter.clone(),
            keep_workspaces: self.keep_workspaces,
            trust: self.trust,
            pass_env: self.pass_env.clone(),
            allow_private_urls: self.allow_private_urls,
            runs: self.runs,
            mode: self.mode,
            trigger_mode: self.trigger_mode,
            trigger_runs: self.trigger_runs,
            trigger_threshold: self.trigger_threshold,
            baseline: self.baseline.as_ref().map(|b| match b {
                Baseline::WithoutSkill => "without-skill".to_string(),
                Baseline::Skill(p) => p.display().to_string(),
            }),
            cache: self.cache,
            shard: self.shard.map(|s| format!("{}/{}", s.index, s.count)),
            min_pass_rate: self.min_pass_rate,
            pass_k: self.pass_k,
        }
    }
}

/// Why a run could not start.
#[derive(Debug)]
pub enum NotStarted {
    /// Bad input (exit 2): the problems found.
    BadInput(Vec<Problem>),
    /// A harness cannot run here (exit 3).
    Unavailable(Vec<(String, Unavailable)>),
    /// `--dry-run`: the plan, and nothing started (exit 0).
    DryRun(plan::Preview),
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
        plan: &'a plan::Preview,
        /// Case-runs taken from the cache or the run being resumed.
        reused: usize,
    },
    /// A case-run finished and is recorded.
    Finished(&'a CaseRunResult),
    /// A case-run taken from the cache or kept from the run being resumed.
    Reused(&'a Reused),
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
    /// Agents ran without a sandbox (`--sandbox none`).
    pub unsandboxed: bool,
    /// `run.json` could not be written at the end (exit 3).
    pub record_error: Option<String>,
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

/// A project's configuration as `run.json` records it: its `env` by names only.
fn config_record(c: &Config) -> serde_json::Value {
    let mut v = serde_json::to_value(c).unwrap_or_default();
    if let Some(env) = v.pointer_mut("/run/env")
        && let Some(names) = env
            .as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>())
    {
        *env = names.into();
    }
    v
}

/// What is redacted from everything the run writes: the values of the harnesses' key
/// variables and of every passed-through variable, and the suites' and projects' `env`.
fn redactor(
    host_env: &[(String, String)],
    opts: &RunOptions,
    suites: &[Suite],
    configs: &BTreeMap<PathBuf, Config>,
) -> redact::Redactor {
    use redact::{MIN_ENV_VALUE, MIN_SECRET};
    let secret_names: std::collections::BTreeSet<&str> = crate::workspace::env::AUTH
        .iter()
        .copied()
        .filter(|n| !n.ends_with("_BASE_URL"))
        .chain(opts.pass_env.iter().map(String::as_str))
        .chain(
            configs
                .values()
                .flat_map(|c| c.run.pass_env.iter().map(String::as_str)),
        )
        .collect();
    let mut secrets: Vec<(String, String, usize)> = host_env
        .iter()
        .filter(|(k, _)| secret_names.contains(k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone(), MIN_SECRET))
        .collect();
    let envs = suites
        .iter()
        .flat_map(|s| {
            s.defaults.env.iter().chain(
                s.cases
                    .iter()
                    .filter_map(|c| c.command.as_ref())
                    .flat_map(|c| c.env.iter()),
            )
        })
        .chain(configs.values().flat_map(|c| c.run.env.iter()));
    secrets.extend(envs.map(|(k, v)| (k.clone(), v.clone(), MIN_ENV_VALUE)));
    redact::Redactor::new(secrets)
}

/// A case-run not run again: its result is already in the run folder (`--resume`) or came
/// from the cache.
#[derive(Debug)]
pub struct Reused {
    pub suite: String,
    pub case: String,
    pub run: u32,
    pub variant: Variant,
    pub outcome: record::Outcome,
    /// `cache` or `resume`.
    pub from: &'static str,
    pub dir: PathBuf,
}

/// A folder for this run: `.assay/runs/<UTC timestamp>` unless given.
fn run_dir(ctx: &LoadCtx, opts: &RunOptions) -> PathBuf {
    if let Some(d) = opts.resume.as_ref().or(opts.output_dir.as_ref()) {
        return ctx.cwd.join(d);
    }
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    let base = ctx.cwd.join(".assay/runs");
    let mut dir = base.join(&stamp);
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = base.join(format!("{stamp}-{n}"));
    }
    dir
}

/// A trigger eval as a case: its query is the one prompt; nothing else is staged.
fn trigger_case(t: &TriggerCase) -> Case {
    Case::new(t.id.clone(), t.location.clone(), vec![t.query.clone()])
}

/// The skill a baseline case-run installs instead of the suite's (`--baseline-skill`).
fn baseline_skill(path: &std::path::Path, suite: &Suite) -> Skill {
    let kind = if path.is_dir() {
        SkillKind::Dir
    } else {
        SkillKind::Command
    };
    let description = suite.skill.as_ref().and_then(|s| s.description.clone());
    Skill {
        // Under the same name, so the baseline differs only in the skill's content.
        name: suite
            .skill
            .as_ref()
            .map(|s| s.name.clone())
            .unwrap_or_else(|| {
                path.file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_default()
            }),
        path: path.to_path_buf(),
        kind,
        description,
    }
}

/// A result already in the run folder that `--resume` keeps: any that did not end in error.
fn kept_result(dir: &std::path::Path) -> Option<record::CaseRunRecord> {
    record::read_case_run(dir)
        .ok()
        .filter(|r| !matches!(r.status, Status::Error | Status::Missing))
}

/// Plans and runs every selected case of `suites`.
pub fn run(
    ctx: &LoadCtx,
    suites: &[Suite],
    opts: &RunOptions,
    mut on_event: impl FnMut(RunEvent<'_>),
) -> Result<RunReport, NotStarted> {
    // Configuration of every project involved, before anything runs.
    let mut configs: BTreeMap<PathBuf, Config> = BTreeMap::new();
    let mut problems = Vec::new();
    for s in suites {
        if !configs.contains_key(&s.project_root) {
            match config::load(&s.project_root, &ctx.shown(&s.project_root)) {
                Ok(c) => {
                    configs.insert(s.project_root.clone(), c);
                }
                Err(p) => problems.push(*p),
            }
        }
    }
    if !problems.is_empty() {
        return Err(NotStarted::BadInput(problems));
    }
    if let Some(dir) = &opts.resume
        && !ctx.cwd.join(dir).join("run.json").is_file()
    {
        return Err(NotStarted::Unavailable(vec![(
            "resume".into(),
            Unavailable {
                message: format!("{} is not a run folder (it has no run.json)", dir.display()),
                fix: "pass the folder `assay run` printed as `run folder:`".into(),
            },
        )]));
    }

    // Trigger evals become cases with one prompt, owned here for the plan to borrow.
    let trigger_cases: Vec<Vec<Case>> = suites
        .iter()
        .map(|s| s.triggers.iter().map(trigger_case).collect())
        .collect();
    let baseline_skills: Vec<Option<Skill>> = suites
        .iter()
        .map(|s| match &opts.baseline {
            Some(Baseline::Skill(p)) => Some(baseline_skill(p, s)),
            _ => None,
        })
        .collect();

    // Harnesses and judges, each checked before any case starts.
    let host = HostEnv::from_process();
    let plan::Plan {
        case_runs: planned,
        harnesses,
        judges,
        mut unavailable,
    } = plan::plan(suites, &trigger_cases, &configs, opts, &host);
    // The sandbox, checked before anything runs: every case-run that starts a process runs
    // in it unless `--sandbox none` said otherwise.
    let sandbox_mode = sandbox_mode(opts, &configs);
    let starts_processes = planned
        .iter()
        .any(|p| !(p.trigger.is_some() && opts.trigger_mode == TriggerMode::Judge));
    if opts.sandbox.is_none() && sandbox_mode == crate::sandbox::Mode::None && starts_processes {
        // A project's own file turned it off (a pull request can carry that): say which.
        for (root, _) in configs
            .iter()
            .filter(|(_, c)| c.run.sandbox == Some(crate::sandbox::Mode::None))
        {
            // A folder name may hold anything: no control characters reach the terminal.
            eprintln!(
                "warning: {} turns the sandbox off (`[run] sandbox = \"none\"`): the agents run unsandboxed; pass --sandbox auto to contain them",
                crate::text::printable(&ctx.shown(&root.join("assay.toml")).display().to_string())
            );
        }
    }
    let bwrap = match sandbox_mode {
        crate::sandbox::Mode::None => None,
        _ if !starts_processes => None,
        _ => match crate::sandbox::probe::probe(&host, None) {
            Ok(b) => Some(b),
            Err(u) => {
                unavailable.push(("sandbox".into(), u));
                None
            }
        },
    };
    if !unavailable.is_empty() && !opts.dry_run {
        return Err(NotStarted::Unavailable(unavailable));
    }
    let summary = plan::preview(&planned, &harnesses, &unavailable, opts);
    if opts.dry_run {
        return Err(NotStarted::DryRun(summary));
    }

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return Err(NotStarted::Unavailable(vec![(
                "runtime".into(),
                Unavailable {
                    message: format!("cannot start the async runtime: {e}"),
                    fix: String::new(),
                },
            )]));
        }
    };
    let versions = runtime.block_on(harness_versions(&harnesses));
    let dir = run_dir(ctx, opts);
    let sandboxes = sandbox_settings(ctx, suites, &configs, opts, bwrap.as_ref(), &dir);
    // Copy-on-write workspaces, where the sandbox can mount them.
    let ws_parent = opts
        .workspace_dir
        .as_ref()
        .map(|d| ctx.cwd.join(d))
        .unwrap_or_else(std::env::temp_dir);
    let cow = match &bwrap {
        Some(b) => runtime.block_on(cow::probe(b, &ws_parent)),
        None => Err("unsandboxed".to_string()),
    };
    if let (Some(_), Err(why)) = (&bwrap, &cow) {
        eprintln!(
            "note: workspaces are copies, not copy-on-write overlays: {}",
            crate::text::printable(why)
        );
    }
    let started = jiff::Timestamp::now();
    let jobs = match opts.jobs {
        0 => configs
            .values()
            .find_map(|c| c.run.jobs)
            .unwrap_or_else(plan::default_jobs)
            .max(1),
        n => n,
    };
    let plugins_record = serde_json::Value::Array(opts.plugins.record());
    let mut run_record = record::RunRecord {
        schema: record::run::SCHEMA.into(),
        assay_version: env!("CARGO_PKG_VERSION").into(),
        started: Some(started.to_string()),
        case_runs: planned.len(),
        harnesses: versions.clone(),
        judges: judges.iter().map(|(_, slot)| slot.entry()).collect(),
        options: opts.record(jobs),
        sandbox: Some(record::run::SandboxSettings {
            mode: record::run::word(&sandbox_mode),
            // `unused` when no case-run starts a process (judged trigger evals only).
            kind: match (&bwrap, starts_processes) {
                (Some(_), _) => "bwrap",
                (None, true) => "none",
                (None, false) => "unused",
            }
            .into(),
            bwrap: bwrap.as_ref().map(|b| b.version.clone()),
            network: opts.network.as_ref().map(record::run::word),
            workspaces: if cow.is_ok() { "overlay" } else { "copy" }.into(),
        }),
        plugins: opts.plugins.record(),
        planned: planned.iter().map(Planned::record).collect(),
        projects: configs
            .iter()
            .map(|(root, c)| (root.display().to_string(), config_record(c)))
            .collect(),
        ..record::RunRecord::default()
    };
    if opts.resume.is_some()
        && let Ok(old) = record::read_run(&dir)
    {
        // The run keeps its first start; each resumption is noted.
        run_record.resumed = old.resumed;
        run_record.resumed.push(started.to_string());
        run_record.started = old.started;
    }
    if let Err(e) = std::fs::create_dir_all(&dir)
        .and_then(|()| record::write_json(&dir.join("run.json"), &run_record))
    {
        // Nothing runs that could not be recorded.
        return Err(NotStarted::Unavailable(vec![(
            "run folder".into(),
            Unavailable {
                message: format!("cannot write {}: {e}", dir.join("run.json").display()),
                fix: "free some disk space, or pass --output-dir to a folder you can write".into(),
            },
        )]));
    }

    let stage = StageOptions {
        host_env: std::env::vars().collect(),
        pass_env: opts.pass_env.clone(),
        real_home: std::env::var_os("HOME").map(PathBuf::from),
        parent: Some(ws_parent.clone()),
        install_skill: true,
        command_as_skill: false,
        engines: Vec::new(),
        // The run folder, and every suite's specs: the agent never sees its own grading.
        exclude: std::iter::once(dir.clone())
            .chain(suites.iter().flat_map(|s| s.spec_paths(&ctx.cwd)))
            .collect(),
        bases: cow
            .is_ok()
            .then(|| std::sync::Arc::new(crate::workspace::base::Bases::new(ws_parent.clone()))),
    };
    let redactor = redactor(&stage.host_env, opts, suites, &configs);
    let mut checks = Checks::builtin(UrlPolicy {
        allow_private: opts.allow_private_urls,
        ..UrlPolicy::default()
    });
    opts.plugins.install(&mut checks);

    // What is already done: kept results of a resumed run, then cache hits.
    // The secret that authenticates cache entries, read once; without it, no cache.
    let cache_secret = opts
        .cache
        .then(|| {
            cache_key::load()
                .inspect_err(|e| eprintln!("warning: the cache is off: {e}"))
                .ok()
        })
        .flatten();
    run_record.options.cache = cache_secret.is_some();
    let env_key = cache::env_key(&stage.host_env, &opts.pass_env);
    let mut digests = cache::Digests::default();
    let key_parts = KeyParts {
        harnesses: &harnesses,
        versions: &versions,
        baseline_skills: &baseline_skills,
        suites,
        opts,
        plugins: &plugins_record,
        env: &env_key,
    };
    let mut reused: Vec<Reused> = Vec::new();
    let mut to_run: Vec<(&Planned<'_>, Option<String>)> = Vec::new();
    for p in &planned {
        let case_dir = p.dir(&dir);
        if opts.resume.is_some()
            && let Some(v) = kept_result(&case_dir)
        {
            reused.push(reused_from(p, &v, "resume", case_dir));
            continue;
        }
        let key = cache_secret
            .is_some()
            .then(|| key_parts.key(p, &mut digests));
        if let (Some(k), Some(secret)) = (&key, &cache_secret) {
            let _ = std::fs::remove_dir_all(&case_dir);
            let root = cache::root(&p.suite.project_root);
            if let Some(v) = cache::restore(&root, k, &case_dir, secret) {
                reused.push(reused_from(p, &v, "cache", case_dir));
                continue;
            }
        }
        to_run.push((p, key));
    }

    on_event(RunEvent::Started {
        case_runs: planned.len(),
        jobs,
        dir: &dir,
        plan: &summary,
        reused: reused.len(),
    });
    for r in &reused {
        on_event(RunEvent::Reused(r));
    }

    // Ctrl-C, SIGTERM (what a CI cancel sends) and SIGHUP (a closed terminal) alike: the
    // first stops launching and stops running agents (recorded as interrupted); a second
    // kills every process group at once and exits.
    let (cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    let interrupted = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
    let results = runtime.block_on(async {
        let signals = tokio::spawn(watch_signals(cancel_tx, interrupted.clone(), opts.on_kill));
        let launch = Launch {
            suites,
            opts,
            stage: &stage,
            harnesses: &harnesses,
            checks: &checks,
            redactor: &redactor,
            dir: &dir,
            baseline_skills: &baseline_skills,
            sandboxes: &sandboxes,
            cache_secret: cache_secret.as_ref(),
        };
        let mut stream = futures::stream::iter(
            to_run
                .iter()
                .map(|(p, key)| launch.case_run(p, key.as_deref(), cancel_rx.clone())),
        )
        .buffer_unordered(jobs);
        let (mut ran, mut judge_failed, mut output_cut) = (0, false, false);
        while let Some(r) = stream.next().await {
            if let Some(r) = r {
                on_event(RunEvent::Finished(&r));
                ran += 1;
                judge_failed |= r.judge.as_ref().is_some_and(|j| j.error.is_some());
                output_cut |= r.output_truncated && r.outcome() == record::Outcome::NotGraded;
            }
        }
        signals.abort();
        (ran, judge_failed, output_cut)
    });
    // The run's end, for its wall time in reports.
    let finished = jiff::Timestamp::now();
    run_record.finished = Some(finished.to_string());
    run_record.duration_ms = Some(finished.duration_since(started).as_millis() as u64);
    let signal = interrupted.load(std::sync::atomic::Ordering::SeqCst);
    let interrupted = signal != 0;
    if interrupted {
        run_record.interrupted = true;
    }
    let record_error = record::write_json(&dir.join("run.json"), &run_record)
        .err()
        .map(|e| format!("cannot write {}: {e}", dir.join("run.json").display()));
    Ok(RunReport {
        record_error,
        dir,
        ran: results.0,
        judge_failed: results.1,
        output_cut: results.2,
        reused,
        interrupted,
        signal,
        unsandboxed: bwrap.is_none() && starts_processes,
    })
}

/// `--sandbox`, else `[run] sandbox` of the projects (a project that asks for a sandbox wins
/// over one that opts out), else auto.
fn sandbox_mode(opts: &RunOptions, configs: &BTreeMap<PathBuf, Config>) -> crate::sandbox::Mode {
    use crate::sandbox::Mode;
    if let Some(m) = opts.sandbox {
        return m;
    }
    let modes: Vec<Mode> = configs.values().filter_map(|c| c.run.sandbox).collect();
    modes
        .iter()
        .copied()
        .find(|m| *m != Mode::None)
        .or(modes.first().copied())
        .unwrap_or_default()
}

/// Each suite's sandbox: the network by precedence (flag > `ASSAY_NETWORK` > the suite's
/// UAAPS `sandbox.network` > `[run] network` > model), its writable paths, what is shown and
/// what is hidden.
fn sandbox_settings(
    ctx: &LoadCtx,
    suites: &[Suite],
    configs: &BTreeMap<PathBuf, Config>,
    opts: &RunOptions,
    bwrap: Option<&crate::sandbox::Bwrap>,
    run_dir: &std::path::Path,
) -> Vec<crate::sandbox::Setting> {
    use crate::sandbox::{Network, Setting};
    let mut hidden: Vec<PathBuf> = configs.keys().cloned().collect();
    hidden.push(ctx.cwd.clone());
    hidden.push(run_dir.to_path_buf());
    hidden.extend(opts.workspace_dir.as_ref().map(|d| ctx.cwd.join(d)));
    hidden.extend(suites.iter().map(|s| ctx.cwd.join(&s.source)));
    let real_home = std::env::var_os("HOME").map(PathBuf::from);
    // The cache's key, wherever a shown toolchain folder (`~/.local`) holds it.
    let masked: Vec<PathBuf> = cache_key::path().into_iter().collect();
    suites
        .iter()
        .map(|s| {
            let config = &configs[&s.project_root];
            let network = opts
                .network
                .or_else(|| {
                    s.defaults.sandbox.as_ref().map(|b| {
                        if b.network {
                            Network::Host
                        } else {
                            Network::Model
                        }
                    })
                })
                .or(config.run.network)
                .unwrap_or_default();
            Setting {
                bwrap: bwrap.cloned(),
                network,
                hidden: hidden.clone(),
                real_home: real_home.clone(),
                masked: masked.clone(),
                read_only: config
                    .run
                    .sandbox_read
                    .iter()
                    .map(|p| s.project_root.join(p))
                    .collect(),
                writable: s
                    .defaults
                    .sandbox
                    .as_ref()
                    .map(|b| b.writable_paths.iter().map(PathBuf::from).collect())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

fn suite_index(suites: &[Suite], s: &Suite) -> usize {
    suites.iter().position(|x| std::ptr::eq(x, s)).unwrap_or(0)
}

fn reused_from(
    p: &Planned<'_>,
    v: &record::CaseRunRecord,
    from: &'static str,
    dir: PathBuf,
) -> Reused {
    Reused {
        suite: p.suite.id.clone(),
        case: p.case.id.clone(),
        run: p.run,
        variant: p.variant,
        outcome: v.outcome(),
        from,
        dir,
    }
}

/// Only case-runs that completed and were fully graded are worth reusing.
fn cacheable(r: &CaseRunResult) -> bool {
    r.status == Status::Completed
        && r.grade
            .as_ref()
            .is_some_and(|g| g.verdict != crate::assert::verdict::Verdict::NotGraded)
        && r.judge.as_ref().is_none_or(|j| j.error.is_none())
}

/// The judge for a suite's judge items, shared between suites that choose the same one (so its
/// concurrency limit holds across the run).
pub fn judge_for(
    judges: &mut Vec<(String, JudgeSlot)>,
    flags: crate::judge::Flags<'_>,
    suite: &Suite,
    host: &HostEnv,
    concurrency: Option<usize>,
) -> JudgeSlot {
    let mut limits = crate::judge::Limits::from_env(host);
    if let Some(c) = concurrency {
        limits.concurrency = c.max(1);
    }
    let slot = match crate::judge::select(
        flags,
        &suite.defaults.judge,
        host,
        limits,
        suite.format == crate::spec::Format::Clauditor,
    ) {
        Ok((judge, info)) => JudgeSlot::Ready(std::sync::Arc::new(judge), info),
        Err(why) => JudgeSlot::Unavailable(why),
    };
    let key = match &slot {
        JudgeSlot::Ready(j, i) => format!("{}:{}:{:?}", i.provider, i.model, j.kind),
        JudgeSlot::Unavailable(why) => why.clone(),
    };
    if let Some((_, existing)) = judges.iter().find(|(k, _)| *k == key) {
        return existing.clone();
    }
    judges.push((key, slot.clone()));
    slot
}

/// Each harness CLI's `--version`, for the record (10 s at most each).
/// Ctrl-C, SIGTERM and SIGHUP: the first cancels the run (recorded in `flag`); a second kills
/// every process group at once and hands over to `on_kill`.
async fn watch_signals(
    cancel_tx: tokio::sync::watch::Sender<bool>,
    flag: std::sync::Arc<std::sync::atomic::AtomicI32>,
    on_kill: Option<fn(i32)>,
) {
    let Some(mut signals) = Signals::listen() else {
        return;
    };
    let first = signals.next().await;
    flag.store(first, std::sync::atomic::Ordering::SeqCst);
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
struct Launch<'a> {
    suites: &'a [Suite],
    opts: &'a RunOptions,
    stage: &'a StageOptions,
    harnesses: &'a [(String, Box<dyn Harness>)],
    checks: &'a Checks,
    redactor: &'a redact::Redactor,
    dir: &'a std::path::Path,
    baseline_skills: &'a [Option<Skill>],
    sandboxes: &'a [crate::sandbox::Setting],
    cache_secret: Option<&'a cache_key::Key>,
}

impl Launch<'_> {
    /// Runs one planned case-run (unless the run was cancelled first) and stores it in the
    /// cache when it may be reused.
    async fn case_run(
        &self,
        p: &Planned<'_>,
        key: Option<&str>,
        cancel: tokio::sync::watch::Receiver<bool>,
    ) -> Option<CaseRunResult> {
        let si = suite_index(self.suites, p.suite);
        if *cancel.borrow() {
            return None;
        }
        let mut stage = self.stage.clone();
        let skill = match p.variant {
            Variant::Skill => None,
            Variant::Baseline => {
                stage.install_skill = self.baseline_skills[si].is_some();
                self.baseline_skills[si].clone()
            }
        };
        stage.command_as_skill = p.trigger.is_some();
        stage.engines = self.harnesses[p.harness].1.engines().to_vec();
        // UAAPS `writable-paths` are bound one by one into a copied workspace.
        if !self.sandboxes[si].writable.is_empty() {
            stage.bases = None;
        }
        let case_dir = p.dir(self.dir);
        let _ = std::fs::remove_dir_all(&case_dir);
        let r = execute::execute(execute::CaseRunPlan {
            suite: p.suite,
            case: p.case,
            run: p.run,
            variant: p.variant,
            trigger: p.trigger.map(|t| execute::TriggerPlan {
                case: t,
                mode: self.opts.trigger_mode,
                threshold: self.opts.trigger_threshold,
            }),
            skill,
            cancel: Some(cancel.clone()),
            harness: self.harnesses[p.harness].1.as_ref(),
            model: p.model.clone(),
            timeout: p.timeout,
            trust: self.opts.trust,
            keep_workspace: self.opts.keep_workspaces,
            stage,
            sandbox: self.sandboxes[si].clone(),
            dir: case_dir.clone(),
            judge: p.judge.clone(),
            checks: self.checks,
            redact: self.redactor,
        })
        .await;
        if let (Some(k), Some(secret)) = (key, self.cache_secret)
            && cacheable(&r)
            && let Err(e) = cache::store(&cache::root(&p.suite.project_root), k, &case_dir, secret)
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

/// What a case-run's cache key is made of besides the case-run itself.
struct KeyParts<'a> {
    harnesses: &'a [(String, Box<dyn Harness>)],
    versions: &'a BTreeMap<String, String>,
    baseline_skills: &'a [Option<Skill>],
    suites: &'a [Suite],
    opts: &'a RunOptions,
    plugins: &'a serde_json::Value,
    env: &'a str,
}

impl KeyParts<'_> {
    /// The case-run's cache key: everything that could change its result.
    fn key(&self, p: &Planned<'_>, digests: &mut cache::Digests) -> String {
        let (harness_key, h) = &self.harnesses[p.harness];
        cache::key(
            &cache::KeyInput {
                suite: p.suite,
                case: p.case,
                trigger: p.trigger.map(|t| {
                    serde_json::json!({
                        "query": t.query, "should_trigger": t.should_trigger,
                        "mode": self.opts.trigger_mode, "threshold": self.opts.trigger_threshold,
                    })
                }),
                variant: match p.variant {
                    Variant::Skill => "skill",
                    Variant::Baseline => "baseline",
                },
                skill: match p.variant {
                    Variant::Skill => p.suite.skill.as_ref(),
                    Variant::Baseline => {
                        self.baseline_skills[suite_index(self.suites, p.suite)].as_ref()
                    }
                },
                run: p.run,
                harness: format!(
                    "{}\u{0}{}\u{0}{}\u{0}{}",
                    harness_key,
                    h.name(),
                    self.versions.get(h.name()).cloned().unwrap_or_default(),
                    digests.program(harness_key, &p.suite.project_root)
                ),
                model: p.model.as_deref(),
                timeout_secs: p.timeout.as_secs(),
                judge: p.judge.as_ref().map(|j| match j {
                    JudgeSlot::Ready(_, info) => format!("{}:{}", info.provider, info.model),
                    JudgeSlot::Unavailable(why) => why.clone(),
                }),
                plugins: self.plugins,
                env: self.env,
            },
            digests,
        )
    }
}

async fn harness_versions(harnesses: &[(String, Box<dyn Harness>)]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (_, h) in harnesses {
        let Some((program, args)) = h.version_command() else {
            continue;
        };
        if out.contains_key(h.name()) {
            continue;
        }
        let mut spawn = process::Spawn::new(program, std::env::temp_dir());
        spawn.args = args;
        spawn.env = std::env::vars()
            .filter(|(k, _)| k == "PATH" || k == "HOME")
            .collect();
        spawn.timeout = Duration::from_secs(10);
        let mut text = String::new();
        let _ = process::run(&spawn, |l| {
            if text.is_empty() {
                text = l.trim().to_string();
            }
        })
        .await;
        out.insert(h.name().to_string(), text);
    }
    out
}
