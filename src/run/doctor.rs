//! `assay doctor`: what the default `assay run` here would use, checked the way the run checks
//! it before starting (the same plan, harness preflights, judge choice and sandbox probe), plus
//! what a run needs to record anything: the run and cache folders writable, the cache key, and
//! each plugin with its grants. Nothing runs: no agent, judge call or run folder.

use std::path::Path;

use serde::Serialize;

use super::sandboxing::Sandboxing;
use super::setup::Setup;
use super::{NotStarted, RunOptions, cache, cache_key, plan, setup};
use crate::formats::LoadCtx;
use crate::grade::JudgeSlot;
use crate::host::HostEnv;
use crate::record::layout;
use crate::suite::Suite;

/// One thing checked.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorCheck {
    /// What was checked: `harness claude-code`, `sandbox`, `judge`, …
    pub what: String,
    pub state: State,
    pub detail: String,
    /// How to put it right, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Ok,
    /// The run starts, but something is off (no judge: judge items are not graded).
    Warn,
    /// The run would stop before starting (exit 3).
    Fail,
}

impl DoctorCheck {
    fn new(what: impl Into<String>, state: State, detail: impl Into<String>) -> Self {
        DoctorCheck {
            what: what.into(),
            state,
            detail: detail.into(),
            fix: None,
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Self {
        let fix = fix.into();
        self.fix = (!fix.is_empty()).then_some(fix);
        self
    }
}

/// Each judge the run would use: which, for which suites, and why it was chosen.
fn judges(plan: &plan::Plan<'_>) -> Vec<DoctorCheck> {
    let mut found: Vec<(State, String, Vec<String>)> = Vec::new();
    for p in &plan.case_runs {
        let Some(slot) = &p.judge else { continue };
        let (state, detail) = match slot {
            JudgeSlot::Ready(_, info) => (
                State::Ok,
                format!(
                    "{} {} ({})",
                    info.provider,
                    info.model,
                    why_judge(&info.chosen_by, &info.provider)
                ),
            ),
            JudgeSlot::Unavailable(why) => (
                State::Warn,
                format!("none: {why}; judge items would be not graded"),
            ),
        };
        match found.iter_mut().find(|(_, d, _)| *d == detail) {
            Some((_, _, suites)) if !suites.contains(&p.suite.id) => {
                suites.push(p.suite.id.clone())
            }
            Some(_) => {}
            None => found.push((state, detail, vec![p.suite.id.clone()])),
        }
    }
    found
        .into_iter()
        .map(|(state, detail, suites)| {
            let detail = format!("{detail}, for {}", suites.join(", "));
            DoctorCheck::new("judge", state, detail).fix(match state {
                State::Ok => "",
                _ => "set ANTHROPIC_API_KEY or OPENAI_API_KEY, or pass --judge",
            })
        })
        .collect()
}

/// Why a judge was chosen, in words.
fn why_judge(chosen_by: &str, provider: &str) -> String {
    match chosen_by {
        "flag" => "chosen by --judge".into(),
        "env" => "chosen by ASSAY_JUDGE, or the format's own judge variable".into(),
        "spec" => "chosen by the suite's own judge settings".into(),
        _ => format!(
            "chosen by auto: {}",
            match provider {
                "anthropic" => "ANTHROPIC_API_KEY is set",
                "claude-cli" => "`claude` is on PATH",
                "openai" => "OPENAI_API_KEY is set",
                _ => "the first with credentials",
            }
        ),
    }
}

/// Each limit of a case-run, its figure and how it holds here: a warning where only a bound
/// per process does (no control group), or where there is none.
fn limits(sandboxing: &Sandboxing, setup: &Setup, opts: &RunOptions) -> Vec<DoctorCheck> {
    sandboxing
        .limits(opts, &setup.limits_config())
        .into_iter()
        .map(|(name, held)| {
            let (state, figure) = match held.limit {
                Some(n) if name == "pids" => (State::Ok, n.to_string()),
                Some(n) => (State::Ok, crate::sandbox::limits::shown(n)),
                None => (State::Warn, "none".to_string()),
            };
            let state = if held.how.starts_with("per ") {
                State::Warn
            } else {
                state
            };
            DoctorCheck::new(
                format!("limit {name}"),
                state,
                format!("{figure}: {}", held.how),
            )
        })
        .collect()
}

/// Each sandbox backend of this system, strongest first: whether it works, why not, and what
/// would make it work.
fn backends(host: &HostEnv) -> Vec<DoctorCheck> {
    crate::sandbox::backend::probe_all(host)
        .into_iter()
        .filter(|(m, _)| crate::sandbox::backend::native().contains(m))
        .flat_map(|(m, r)| {
            let what = format!("sandbox {}", m.as_str());
            match r {
                Ok(b) => uncontained(&what, &b),
                Err(u) => vec![
                    DoctorCheck::new(what, State::Warn, format!("does not work: {}", u.message))
                        .fix(u.fix),
                ],
            }
        })
        .collect()
}

/// A backend that works, and a line for each thing it does not contain that bubblewrap does
/// (docs/running.md's attack table has each row).
fn uncontained(what: &str, backend: &crate::sandbox::Backend) -> Vec<DoctorCheck> {
    let works = DoctorCheck::new(what, State::Ok, format!("works: {}", backend.version()));
    let gaps = backend
        .gaps()
        .into_iter()
        .map(|gap| DoctorCheck::new(what, State::Warn, format!("does not contain: {gap}")));
    std::iter::once(works).chain(gaps).collect()
}

/// Examines what `assay run` with `opts` would use for `suites`. `Err` only for bad input
/// (a broken `assay.toml`).
pub fn examine(
    ctx: &LoadCtx,
    suites: &[Suite],
    opts: &RunOptions,
) -> Result<Vec<DoctorCheck>, NotStarted> {
    let setup = Setup::load(ctx, suites, opts)?;
    let host = HostEnv::from_process();
    let mut plan = plan::plan(suites, &setup, opts, &host);
    let sandboxing = Sandboxing::decide(ctx, &setup, &mut plan, opts, &host);
    let mut out = vec![DoctorCheck::new(
        "suites",
        State::Ok,
        format!(
            "{} suite(s); {}",
            suites.len(),
            plan::preview(&plan.case_runs, &plan.harnesses, &[], opts)
                .line(0, 0)
                .trim_start_matches("plan: ")
        ),
    )];

    // Each harness: its CLI and login (the preflight), and its version.
    let runtime = super::schedule::runtime()?;
    let probe = sandboxing.version_probe(ctx, &setup, opts);
    let versions = runtime.block_on(super::run_record::harness_versions(
        plan.harnesses.iter().map(|(_, h)| h.as_ref()),
        &probe,
    ));
    plan.unavailable.extend(versions.missing);
    out.extend(harnesses(&plan, &versions.text));

    // The sandbox, and whether workspaces can be copy-on-write.
    out.push(sandbox(ctx, opts, &plan, &sandboxing, &runtime));
    out.extend(limits(&sandboxing, &setup, opts));
    out.extend(backends(&host));

    // Judges, each with the suites that use it and why it was chosen: a missing one does not
    // stop a run (judge items are not graded).
    out.extend(judges(&plan));
    out.extend(plugins(opts));
    out.extend(records(ctx, &setup, opts));
    Ok(out)
}

/// Each harness the plan uses, ready (with its version) or not, and harness names nothing
/// provides.
fn harnesses(
    plan: &plan::Plan<'_>,
    versions: &std::collections::BTreeMap<String, String>,
) -> Vec<DoctorCheck> {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for (_, h) in &plan.harnesses {
        let name = h.name().to_string();
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        let what = format!("harness {name}");
        match plan.unavailable.iter().find(|(n, _)| *n == name) {
            Some((_, u)) => out.push(DoctorCheck::new(what, State::Fail, &u.message).fix(&u.fix)),
            None => out.push(DoctorCheck::new(
                what,
                State::Ok,
                match versions.get(&name) {
                    Some(v) if !v.is_empty() => format!("ready (its CLI and login found): {v}"),
                    _ => "ready (its program found)".to_string(),
                },
            )),
        }
    }
    for (name, u) in &plan.unavailable {
        if name != "sandbox" && !seen.contains(name) {
            out.push(
                DoctorCheck::new(format!("harness {name}"), State::Fail, &u.message).fix(&u.fix),
            );
        }
    }
    out
}

/// The sandbox the run would use (or why none), and how its workspaces are made.
fn sandbox(
    ctx: &LoadCtx,
    opts: &RunOptions,
    plan: &plan::Plan<'_>,
    sandboxing: &Sandboxing,
    runtime: &tokio::runtime::Runtime,
) -> DoctorCheck {
    match plan.unavailable.iter().find(|(n, _)| n == "sandbox") {
        Some((_, u)) => DoctorCheck::new("sandbox", State::Fail, &u.message).fix(&u.fix),
        None if sandboxing.unsandboxed() => DoctorCheck::new(
            "sandbox",
            State::Warn,
            "off: agents would run unsandboxed, as you (--sandbox none or `[run] sandbox`)",
        )
        .fix("pass --sandbox auto"),
        None => {
            let ws = sandboxing.workspaces(ctx, opts, runtime);
            let ran = sandboxing.backend();
            DoctorCheck::new(
                "sandbox",
                State::Ok,
                format!(
                    "{}; workspaces: {}{}",
                    ran.map(|b| format!("{} ({})", b.kind(), b.version()))
                        .unwrap_or("not needed".into()),
                    match &ws.cow {
                        Ok(_) => "copy-on-write overlays".to_string(),
                        Err(why) => format!("copies ({why})"),
                    },
                    match ran.map(|b| b.gaps()).unwrap_or_default() {
                        gaps if gaps.is_empty() => String::new(),
                        gaps => format!("; unlike bubblewrap: {}", gaps.join("; ")),
                    },
                ),
            )
        }
    }
}

/// Each plugin, with what it is granted.
fn plugins(opts: &RunOptions) -> Vec<DoctorCheck> {
    opts.plugins
        .providers
        .iter()
        .map(|p| {
            let detail = match p {
                crate::plugin::Provider::Wasm(w) => format!(
                    "WebAssembly, WIT {}; grants: {} ms and {} MiB per call{}{}{}",
                    w.wit_version().as_str(),
                    w.grants.timeout.as_millis(),
                    w.grants.memory_bytes >> 20,
                    list(
                        ", reads ",
                        &w.grants
                            .read_dirs
                            .iter()
                            .map(|d| d.display().to_string())
                            .collect::<Vec<_>>()
                    ),
                    list(", env ", &w.grants.env),
                    list(", network ", &w.grants.network),
                ),
                crate::plugin::Provider::Native(_) => "native library, unsandboxed".to_string(),
            };
            DoctorCheck::new(format!("plugin {}", p.name()), State::Ok, detail)
        })
        .collect()
}

/// Where a run records: its folder, each project's cache, the cache key.
fn records(ctx: &LoadCtx, setup: &Setup, opts: &RunOptions) -> Vec<DoctorCheck> {
    let runs = setup::run_dir(ctx, opts);
    let runs = runs.parent().unwrap_or(&runs).to_path_buf();
    let mut out = vec![writable("run folder", &ctx.shown(&runs), &runs)];
    for root in setup.configs.keys() {
        let c = cache::root(root);
        out.push(writable("cache", &ctx.shown(&c), &c));
    }
    if opts.cache {
        out.push(match cache_key::path() {
            Some(p) => writable_file("cache key", &p),
            None => DoctorCheck::new(
                "cache key",
                State::Warn,
                "no HOME or XDG_DATA_HOME: the cache is off",
            )
            .fix("set HOME, or ASSAY_CACHE_KEY to a file"),
        });
    }
    out
}

/// What a harness probe asks: one word back, the least a model can be asked.
pub const PROBE_PROMPT: &str = "Reply with the single word OK.";

/// The longest a probe waits for an agent, in seconds.
const PROBE_TIMEOUT_SECS: u64 = 120;

/// `assay doctor --probe`: one smallest request to each model a run would reach. An agent
/// case-run per distinct harness and model, through the run's own path (the same sandbox,
/// network, login and harness settings), recorded in a scratch folder that is removed; then
/// one call per judge. Costs a few tokens each.
pub fn probe(
    ctx: &LoadCtx,
    suites: &[Suite],
    opts: &RunOptions,
) -> Result<Vec<DoctorCheck>, NotStarted> {
    let setup = Setup::load(ctx, suites, opts)?;
    let host = HostEnv::from_process();
    let plan = plan::plan(suites, &setup, opts, &host);
    let probes = probe_suites(&plan);
    let mut out = Vec::new();
    if !probes.is_empty() {
        out.extend(probe_agents(ctx, &probes, opts)?);
    }
    out.extend(probe_judges(&plan)?);
    Ok(out)
}

/// One probe suite per distinct harness and model: the suite's settings, one tiny case.
fn probe_suites(plan: &plan::Plan<'_>) -> Vec<Suite> {
    let mut seen: Vec<(usize, Option<String>)> = Vec::new();
    let mut probes: Vec<Suite> = Vec::new();
    for p in &plan.case_runs {
        let key = (p.harness, p.model.clone());
        if p.case.command.is_some() || seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let mut suite = p.suite.clone();
        let mut case = crate::suite::Case::new(
            format!("probe-{}", probes.len() + 1),
            p.case.location.clone(),
            vec![PROBE_PROMPT.to_string()],
        );
        case.timeout_secs = Some(PROBE_TIMEOUT_SECS);
        suite.id = format!("doctor-probe-{}", probes.len() + 1);
        suite.cases = vec![case];
        suite.triggers = Vec::new();
        suite.skill = None;
        suite.base_overlay = None;
        probes.push(suite);
    }
    probes
}

/// The probe suites run, in a scratch folder removed after: a check per case-run, or per
/// harness that could not start.
fn probe_agents(
    ctx: &LoadCtx,
    probes: &[Suite],
    opts: &RunOptions,
) -> Result<Vec<DoctorCheck>, NotStarted> {
    let scratch = tempfile::Builder::new()
        .prefix("assay-doctor-probe-")
        .tempdir()
        .map_err(|e| {
            NotStarted::BadInput(vec![crate::diag::Problem::error(
                "unwritable",
                &std::env::temp_dir(),
                format!("cannot make a scratch folder for the probe: {e}"),
            )])
        })?;
    let probe_opts = probe_options(opts, scratch.path());
    let mut finished = Vec::new();
    let ran = super::run(ctx, probes, &probe_opts, |e| {
        if let super::RunEvent::Finished(r) = e {
            finished.push(r.clone());
        }
    });
    let mut out = Vec::new();
    match ran {
        Ok(_) | Err(NotStarted::DryRun(_)) => {}
        Err(NotStarted::Unavailable(u)) => {
            for (name, u) in u {
                out.push(
                    DoctorCheck::new(format!("probe {name}"), State::Fail, &u.message).fix(&u.fix),
                );
            }
        }
        Err(e) => return Err(e),
    }
    out.extend(finished.iter().map(probe_check));
    Ok(out)
}

/// What the probe run runs with: once each, every case, recorded in `scratch`, uncached,
/// without a budget or a judge.
fn probe_options(opts: &RunOptions, scratch: &Path) -> RunOptions {
    let mut probe_opts = opts.clone();
    let s = &mut probe_opts.settings;
    s.output_dir = Some(scratch.join("run"));
    s.runs = Some(super::options::Runs::Fixed(1));
    s.mode = crate::record::run::Mode::Artifacts;
    s.filter = None;
    s.target = None;
    s.shard = None;
    s.resume = None;
    s.dry_run = false;
    s.max_cost = None;
    s.keep_workspaces = false;
    s.workspace_dir = Some(scratch.join("workspaces"));
    probe_opts.cache = false;
    probe_opts.baseline = None;
    probe_opts.judge = Some("none".into());
    probe_opts
}

/// Each judge: one call, the smallest answer.
fn probe_judges(plan: &plan::Plan<'_>) -> Result<Vec<DoctorCheck>, NotStarted> {
    let runtime = super::schedule::runtime()?;
    let mut out = Vec::new();
    let mut asked: Vec<String> = Vec::new();
    for (_, slot) in &plan.judges {
        let JudgeSlot::Ready(judge, info) = slot else {
            continue;
        };
        let name = format!("{} {}", info.provider, info.model);
        if asked.contains(&name) {
            continue;
        }
        asked.push(name.clone());
        let prompt = crate::judge::provider::Prompt {
            system: "Answer with one word.".into(),
            user: PROBE_PROMPT.into(),
            max_tokens: 8,
        };
        let started = std::time::Instant::now();
        out.push(match runtime.block_on(judge.ask(&prompt)) {
            Ok(answer) => DoctorCheck::new(
                "probe judge",
                State::Ok,
                format!(
                    "{name} answered in {:.1} s: {:?}",
                    started.elapsed().as_secs_f64(),
                    crate::text::shorten(answer.text.trim(), 40)
                ),
            ),
            Err(e) => DoctorCheck::new("probe judge", State::Fail, format!("{name}: {e}"))
                .fix("check the judge's key and endpoint (ANTHROPIC_API_KEY / OPENAI_API_KEY, their *_BASE_URL), or pass --judge"),
        });
    }
    Ok(out)
}

/// What to do about a probe's failure, by its kind.
fn category_fix(category: crate::record::agent::ErrorCategory) -> &'static str {
    use crate::record::agent::ErrorCategory as E;
    match category {
        E::Auth => {
            "log the CLI in (`claude` then /login, `codex login`), or set its API key variable"
        }
        E::RateLimit | E::Server => "the model API is refusing or failing now: try again later",
        E::Network => {
            "the model API cannot be reached from the sandbox: check its base URL, or --network"
        }
        E::Timeout => "the model did not answer in time: check the endpoint, or raise --timeout",
        _ => "run one case with --keep-workspaces and read its stderr.txt in the run folder",
    }
}

/// A probe case-run's outcome as a check.
fn probe_check(r: &crate::record::case_run::CaseRunRecord) -> DoctorCheck {
    let what = format!("probe {}", r.harness);
    let model = r.model.as_deref().unwrap_or("its default model");
    let answer = std::fs::read_to_string(r.dir.join(layout::OUTPUT_TXT))
        .ok()
        .filter(|t| !t.trim().is_empty())
        .map(|t| format!(": {:?}", crate::text::shorten(t.trim(), 40)))
        .unwrap_or_default();
    match (&r.status, &r.error) {
        (crate::record::case_run::Status::Completed, None) => DoctorCheck::new(
            what,
            State::Ok,
            format!(
                "{model} answered in {:.1} s{}{answer}",
                r.duration_ms as f64 / 1000.0,
                r.cost_usd
                    .map(|c| format!(" (${c:.4})"))
                    .unwrap_or_default()
            ),
        ),
        (_, Some(e)) => DoctorCheck::new(what, State::Fail, format!("{model}: {}", e.message))
            .fix(category_fix(e.category)),
        (status, None) => DoctorCheck::new(
            what,
            State::Fail,
            format!(
                "{model}: the probe ended {status:?}{}",
                r.reason
                    .as_deref()
                    .map(|w| format!(": {w}"))
                    .unwrap_or_default()
            ),
        )
        .fix("run `assay run` on one case with --keep-workspaces and read its stderr.txt"),
    }
}

fn list(label: &str, items: &[String]) -> String {
    if items.is_empty() {
        String::new()
    } else {
        format!("{label}{}", items.join(" "))
    }
}

/// Whether files can be made in `dir` (made if missing, as a run would): a file is written and
/// removed. Folders made only for the probe are removed again.
fn writable(what: &str, shown: &Path, dir: &Path) -> DoctorCheck {
    let made: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
    let probe = dir.join(format!(".assay-doctor-{}", std::process::id()));
    // A new file only (never through a link or over a file that is there), removed after.
    let result = std::fs::create_dir_all(dir)
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&probe)
        })
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"ok"))
        .and_then(|()| std::fs::remove_file(&probe));
    for d in made {
        // Only the empty folders this probe made, deepest first.
        if std::fs::remove_dir(d).is_err() {
            break;
        }
    }
    match result {
        Ok(()) => DoctorCheck::new(what, State::Ok, format!("{} is writable", shown.display())),
        Err(e) => DoctorCheck::new(
            what,
            State::Fail,
            format!("cannot write in {}: {e}", shown.display()),
        )
        .fix("free disk space or fix the folder's permissions (or pass --output-dir)"),
    }
}

/// Whether the cache key can be read, or made where it goes.
fn writable_file(what: &str, path: &Path) -> DoctorCheck {
    if path.is_file() {
        return match std::fs::read(path) {
            Ok(_) => DoctorCheck::new(what, State::Ok, format!("{} is readable", path.display())),
            Err(e) => DoctorCheck::new(
                what,
                State::Warn,
                format!(
                    "cannot read {}: {e}; the cache would be off",
                    path.display()
                ),
            ),
        };
    }
    match path.parent() {
        Some(dir) => {
            let c = writable(what, dir, dir);
            match c.state {
                State::Ok => DoctorCheck::new(
                    what,
                    State::Ok,
                    format!("{} will be made on the first run", path.display()),
                ),
                _ => DoctorCheck {
                    state: State::Warn,
                    detail: format!("{}; the cache would be off", c.detail),
                    ..c
                },
            }
        }
        None => DoctorCheck::new(what, State::Warn, "no folder for the cache key"),
    }
}
