//! The run stage: plan case-runs, execute them through harnesses under process control, and
//! record everything in the run folder as each one finishes.

pub mod execute;
pub mod grade;
pub mod process;
pub mod record;
pub mod regrade;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
use serde::Serialize;

pub use execute::{CaseRunResult, Status};
pub use grade::JudgeSlot;

use crate::assert::check::Checks;
use crate::assert::urls::UrlPolicy;
use crate::config::{self, Config};
use crate::diag::Problem;
use crate::harness::command::CommandHarness;
use crate::harness::{self, Harness, HarnessSettings, HostEnv, Unavailable};
use crate::spec::Suite;
use crate::spec::formats::LoadCtx;
use crate::workspace::StageOptions;

pub const DEFAULT_TIMEOUT_SECS: u64 = 600;
pub const DEFAULT_HARNESS: &str = "claude-code";

/// What the user asked for on the command line (and through `ASSAY_*` variables).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub harness: Option<String>,
    pub model: Option<String>,
    pub timeout: Option<u64>,
    pub jobs: usize,
    pub filter: Option<String>,
    pub keep_workspaces: bool,
    pub output_dir: Option<PathBuf>,
    pub workspace_dir: Option<PathBuf>,
    pub trust: bool,
    pub pass_env: Vec<String>,
    /// The `command` harness's command, overriding `assay.toml`.
    pub command: Vec<String>,
    /// `--judge`: provider, provider:model, or a model name.
    pub judge: Option<String>,
    /// `urls_reachable` may reach loopback, private and link-local addresses.
    pub allow_private_urls: bool,
    /// Loaded plugins: check types, formats, harnesses.
    pub plugins: crate::plugin::Plugins,
}

/// Why a run could not start.
#[derive(Debug)]
pub enum NotStarted {
    /// Bad input (exit 2): the problems found.
    BadInput(Vec<Problem>),
    /// A harness cannot run here (exit 3).
    Unavailable(Vec<(String, Unavailable)>),
}

/// What the runner tells its reporters as the run goes.
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// Everything is planned and checked; case-runs start now.
    Started {
        case_runs: usize,
        jobs: usize,
        dir: &'a std::path::Path,
    },
    /// A case-run finished and is recorded.
    Finished(&'a CaseRunResult),
}

/// The finished run.
#[derive(Debug, Serialize)]
pub struct RunReport {
    pub dir: PathBuf,
    pub results: Vec<CaseRunResult>,
}

/// One harness per (suite, case kind), resolved once.
struct Planned<'a> {
    suite: &'a Suite,
    judge: Option<JudgeSlot>,
    case: usize,
    harness: usize,
    model: Option<String>,
    timeout: Duration,
}

/// The harness named for a suite, by precedence: flag > `ASSAY_HARNESS` > suite > assay.toml.
fn harness_name(opts: &RunOptions, suite: &Suite, config: &Config) -> String {
    opts.harness
        .clone()
        .or_else(|| {
            std::env::var("ASSAY_HARNESS")
                .ok()
                .filter(|v| !v.is_empty())
        })
        .or_else(|| suite.defaults.harness.clone())
        .or_else(|| config.run.harness.clone())
        .unwrap_or_else(|| DEFAULT_HARNESS.into())
}

fn matches_filter(filter: &Option<String>, suite: &str, case: &str) -> bool {
    let Some(f) = filter else { return true };
    let id = format!("{suite}/{case}");
    if f.contains(['*', '?', '[']) {
        globset::Glob::new(f)
            .map(|g| g.compile_matcher().is_match(&id))
            .unwrap_or(false)
    } else {
        id.contains(f.as_str())
    }
}

/// A folder for this run: `.assay/runs/<UTC timestamp>` unless given.
fn run_dir(ctx: &LoadCtx, opts: &RunOptions) -> PathBuf {
    if let Some(d) = &opts.output_dir {
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

    // Harnesses, each checked before any case starts.
    let host = HostEnv::from_process();
    let mut harnesses: Vec<(String, Box<dyn Harness>)> = Vec::new();
    let mut planned: Vec<Planned<'_>> = Vec::new();
    let mut unavailable: Vec<(String, Unavailable)> = Vec::new();
    let mut judges: Vec<(String, JudgeSlot)> = Vec::new();
    for s in suites {
        let config = &configs[&s.project_root];
        let name = harness_name(opts, s, config);
        let settings = HarnessSettings {
            permission_mode: config.harness.claude_code.permission_mode.clone(),
            claude_bin: std::env::var("ASSAY_CLAUDE_BIN")
                .ok()
                .filter(|v| !v.is_empty())
                .or_else(|| config.harness.claude_code.bin.clone()),
            codex_bin: std::env::var("ASSAY_CODEX_BIN")
                .ok()
                .filter(|v| !v.is_empty())
                .or_else(|| config.harness.codex.bin.clone()),
            codex_sandbox: config.harness.codex.sandbox.clone(),
            command: if opts.command.is_empty() {
                config.harness.command.command.clone()
            } else {
                opts.command.clone()
            },
        };
        for (ci, case) in s.cases.iter().enumerate() {
            if !matches_filter(&opts.filter, &s.id, &case.id) {
                continue;
            }
            let (key, h): (String, Box<dyn Harness>) = match &case.command {
                Some(cmd) => (
                    format!("command:{}", cmd.argv.join("\u{0}")),
                    Box::new(CommandHarness::with_argv(cmd.argv.clone())),
                ),
                None => match harness::builtin(&name, &settings)
                    .or_else(|| opts.plugins.harness(&name))
                {
                    Some(h) => (format!("{name}:{}", settings.command.join("\u{0}")), h),
                    None => {
                        let mut names: Vec<String> = harness::BUILTIN_NAMES
                            .iter()
                            .map(|s| s.to_string())
                            .collect();
                        names.extend(opts.plugins.providers.iter().flat_map(|p| {
                            p.harnesses()
                                .iter()
                                .map(|h| h.name.clone())
                                .collect::<Vec<_>>()
                        }));
                        let fix = format!("use one of: {}", names.join(", "));
                        if !unavailable.iter().any(|(n, _)| *n == name) {
                            unavailable.push((
                                name.clone(),
                                Unavailable {
                                    message: format!("unknown harness `{name}`"),
                                    fix,
                                },
                            ));
                        }
                        continue;
                    }
                },
            };
            let idx = match harnesses.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    if let Err(u) = h.preflight(&host)
                        && !unavailable
                            .iter()
                            .any(|(n, e)| *n == h.name() && e.message == u.message)
                    {
                        unavailable.push((h.name().to_string(), u));
                    }
                    harnesses.push((key, h));
                    harnesses.len() - 1
                }
            };
            let timeout = opts
                .timeout
                .or(case.timeout_secs)
                .or(s.defaults.timeout_secs)
                .or(config.run.timeout)
                .unwrap_or(DEFAULT_TIMEOUT_SECS);
            let needs_judge = !case.judge.is_empty();
            let judge =
                needs_judge.then(|| judge_for(&mut judges, opts.judge.as_deref(), s, &host));
            planned.push(Planned {
                judge,
                suite: s,
                case: ci,
                harness: idx,
                model: opts
                    .model
                    .clone()
                    .or_else(|| s.defaults.model.clone())
                    .or_else(|| config.run.model.clone()),
                timeout: Duration::from_secs(timeout),
            });
        }
    }
    if !unavailable.is_empty() {
        return Err(NotStarted::Unavailable(unavailable));
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
    let _ = std::fs::create_dir_all(&dir);
    let started = jiff::Timestamp::now();
    let mut run_record = serde_json::json!({
        "assay_version": env!("CARGO_PKG_VERSION"),
        "started": started.to_string(),
        "case_runs": planned.len(),
        "harnesses": versions,
        "judges": judges.iter().map(|(_, slot)| match slot {
            JudgeSlot::Ready(_, info) => serde_json::to_value(info).unwrap_or_default(),
            JudgeSlot::Unavailable(why) => serde_json::json!({"unavailable": why}),
        }).collect::<Vec<_>>(),
        "options": {
            "harness": opts.harness, "model": opts.model, "timeout": opts.timeout, "jobs": opts.jobs,
            "filter": opts.filter, "keep_workspaces": opts.keep_workspaces, "trust": opts.trust,
            "pass_env": opts.pass_env, "allow_private_urls": opts.allow_private_urls,
        },
        "plugins": opts.plugins.record(),
        "projects": configs.iter().map(|(root, c)| (root.display().to_string(), serde_json::to_value(c).unwrap_or_default())).collect::<serde_json::Map<_, _>>(),
    });
    let _ = record::write_json(&dir.join("run.json"), &run_record);

    let stage = StageOptions {
        host_env: std::env::vars().collect(),
        pass_env: opts.pass_env.clone(),
        real_home: std::env::var_os("HOME").map(PathBuf::from),
        parent: opts.workspace_dir.clone(),
        install_skill: true,
        exclude: vec![dir.clone()],
    };
    let mut checks = Checks::builtin(UrlPolicy {
        allow_private: opts.allow_private_urls,
        ..UrlPolicy::default()
    });
    opts.plugins.install(&mut checks);
    let jobs = opts.jobs.max(1);
    on_event(RunEvent::Started {
        case_runs: planned.len(),
        jobs,
        dir: &dir,
    });
    let results = runtime.block_on(async {
        let mut stream = futures::stream::iter(planned.iter().map(|p| {
            let case = &p.suite.cases[p.case];
            execute::execute(execute::CaseRunPlan {
                suite: p.suite,
                case,
                run: 1,
                harness: harnesses[p.harness].1.as_ref(),
                model: p.model.clone(),
                timeout: p.timeout,
                trust: opts.trust,
                keep_workspace: opts.keep_workspaces,
                stage: stage.clone(),
                dir: record::case_run_dir(&dir, &p.suite.id, &case.id, 1),
                judge: p.judge.clone(),
                checks: &checks,
            })
        }))
        .buffer_unordered(jobs);
        let mut results = Vec::new();
        while let Some(r) = stream.next().await {
            on_event(RunEvent::Finished(&r));
            results.push(r);
        }
        results
    });
    // The run's end, for its wall time in reports.
    let finished = jiff::Timestamp::now();
    run_record["finished"] = finished.to_string().into();
    run_record["duration_ms"] = (finished.duration_since(started).as_millis() as u64).into();
    let _ = record::write_json(&dir.join("run.json"), &run_record);
    Ok(RunReport { dir, results })
}

/// The judge for a suite's judge items, shared between suites that choose the same one (so its
/// concurrency limit holds across the run).
pub fn judge_for(
    judges: &mut Vec<(String, JudgeSlot)>,
    flag: Option<&str>,
    suite: &Suite,
    host: &HostEnv,
) -> JudgeSlot {
    let slot = match crate::judge::select(
        flag,
        &suite.defaults.judge,
        host,
        crate::judge::Limits::from_env(host),
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

/// A case-run's outcome in one word: passed, failed, not graded, error or skipped.
pub fn outcome(r: &CaseRunResult) -> &'static str {
    use crate::assert::verdict::Verdict;
    match (r.status, r.grade.as_ref().map(|g| g.verdict)) {
        (Status::Error, _) => "error",
        (Status::Skipped, _) => "skipped",
        (_, Some(Verdict::Pass)) => "passed",
        (_, Some(Verdict::NotGraded)) => "not graded",
        _ => "failed",
    }
}

/// Counts of each outcome.
pub fn tally(results: &[CaseRunResult]) -> BTreeMap<&'static str, usize> {
    let mut t = BTreeMap::new();
    for r in results {
        *t.entry(outcome(r)).or_default() += 1;
    }
    t
}
