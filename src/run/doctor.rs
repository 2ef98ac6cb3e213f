//! `assay doctor`: what the default `assay run` here would use, checked the way the run checks
//! it before starting (the same plan, harness preflights, judge choice and sandbox probe), plus
//! what a run needs to record anything: the run and cache folders writable, the cache key, and
//! each plugin with its grants. Nothing runs: no agent, judge call or run folder.

use std::path::Path;

use serde::Serialize;

use super::sandboxing::Sandboxing;
use super::setup::Setup;
use super::{NotStarted, RunOptions, cache, cache_key, grade::JudgeSlot, plan, setup};
use crate::host::HostEnv;
use crate::spec::Suite;
use crate::spec::formats::LoadCtx;

/// One thing checked.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
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

impl Check {
    fn new(what: impl Into<String>, state: State, detail: impl Into<String>) -> Self {
        Check {
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

/// Examines what `assay run` with `opts` would use for `suites`. `Err` only for bad input
/// (a broken `assay.toml`).
pub fn examine(
    ctx: &LoadCtx,
    suites: &[Suite],
    opts: &RunOptions,
) -> Result<Vec<Check>, NotStarted> {
    let setup = Setup::load(ctx, suites, opts)?;
    let host = HostEnv::from_process();
    let mut plan = plan::plan(suites, &setup.trigger_cases, &setup.configs, opts, &host);
    let sandboxing = Sandboxing::decide(ctx, &setup, &mut plan, opts, &host);
    let mut out = vec![Check::new(
        "suites",
        State::Ok,
        format!(
            "{} suite(s); {}",
            suites.len(),
            plan::preview(&plan.case_runs, &plan.harnesses, &[], opts)
                .line(0)
                .trim_start_matches("plan: ")
        ),
    )];

    // Each harness: its CLI and login (the preflight), and its version.
    let runtime = super::schedule::runtime()?;
    let versions = runtime.block_on(super::run_record::harness_versions(&plan.harnesses));
    let mut seen = Vec::new();
    for (_, h) in &plan.harnesses {
        let name = h.name().to_string();
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        let what = format!("harness {name}");
        match plan.unavailable.iter().find(|(n, _)| *n == name) {
            Some((_, u)) => out.push(Check::new(what, State::Fail, &u.message).fix(&u.fix)),
            None => out.push(Check::new(
                what,
                State::Ok,
                match versions.get(&name) {
                    Some(v) if !v.is_empty() => format!("ready (its CLI and login found): {v}"),
                    _ => "ready (its program found)".to_string(),
                },
            )),
        }
    }
    // Harness names nothing provides.
    for (name, u) in &plan.unavailable {
        if name != "sandbox" && !seen.contains(name) {
            out.push(Check::new(format!("harness {name}"), State::Fail, &u.message).fix(&u.fix));
        }
    }

    // The sandbox, and whether workspaces can be copy-on-write.
    match plan.unavailable.iter().find(|(n, _)| n == "sandbox") {
        Some((_, u)) => out.push(Check::new("sandbox", State::Fail, &u.message).fix(&u.fix)),
        None if sandboxing.unsandboxed() => out.push(
            Check::new(
                "sandbox",
                State::Warn,
                "off: agents would run unsandboxed, as you (--sandbox none or `[run] sandbox`)",
            )
            .fix("pass --sandbox auto"),
        ),
        None => {
            let ws = sandboxing.workspaces(ctx, opts, &runtime);
            out.push(Check::new(
                "sandbox",
                State::Ok,
                format!(
                    "{}; workspaces: {}",
                    sandboxing.bwrap_version().unwrap_or("not needed"),
                    match &ws.cow {
                        Ok(_) => "copy-on-write overlays".to_string(),
                        Err(why) => format!("copies ({why})"),
                    }
                ),
            ));
        }
    }

    // Judges: a missing one does not stop a run (judge items are not graded).
    let mut judges: Vec<String> = Vec::new();
    for (_, slot) in &plan.judges {
        let (state, detail) = match slot {
            JudgeSlot::Ready(_, info) => (
                State::Ok,
                format!(
                    "{} {} (chosen by {})",
                    info.provider, info.model, info.chosen_by
                ),
            ),
            JudgeSlot::Unavailable(why) => (
                State::Warn,
                format!("none: {why}; judge items would be not graded"),
            ),
        };
        if !judges.contains(&detail) {
            judges.push(detail.clone());
            out.push(Check::new("judge", state, detail).fix(match state {
                State::Ok => "",
                _ => "set ANTHROPIC_API_KEY or OPENAI_API_KEY, or pass --judge",
            }));
        }
    }

    // Plugins, with what they are granted.
    for p in &opts.plugins.providers {
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
        out.push(Check::new(
            format!("plugin {}", p.name()),
            State::Ok,
            detail,
        ));
    }

    // Where a run records: its folder, each project's cache, the cache key.
    let runs = setup::run_dir(ctx, opts);
    let runs = runs.parent().unwrap_or(&runs).to_path_buf();
    out.push(writable("run folder", &ctx.shown(&runs), &runs));
    for root in setup.configs.keys() {
        let c = cache::root(root);
        out.push(writable("cache", &ctx.shown(&c), &c));
    }
    if opts.cache {
        out.push(match cache_key::path() {
            Some(p) => writable_file("cache key", &p),
            None => Check::new(
                "cache key",
                State::Warn,
                "no HOME or XDG_DATA_HOME: the cache is off",
            )
            .fix("set HOME, or ASSAY_CACHE_KEY to a file"),
        });
    }
    Ok(out)
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
fn writable(what: &str, shown: &Path, dir: &Path) -> Check {
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
        Ok(()) => Check::new(what, State::Ok, format!("{} is writable", shown.display())),
        Err(e) => Check::new(
            what,
            State::Fail,
            format!("cannot write in {}: {e}", shown.display()),
        )
        .fix("free disk space or fix the folder's permissions (or pass --output-dir)"),
    }
}

/// Whether the cache key can be read, or made where it goes.
fn writable_file(what: &str, path: &Path) -> Check {
    if path.is_file() {
        return match std::fs::read(path) {
            Ok(_) => Check::new(what, State::Ok, format!("{} is readable", path.display())),
            Err(e) => Check::new(
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
                State::Ok => Check::new(
                    what,
                    State::Ok,
                    format!("{} will be made on the first run", path.display()),
                ),
                _ => Check {
                    state: State::Warn,
                    detail: format!("{}; the cache would be off", c.detail),
                    ..c
                },
            }
        }
        None => Check::new(what, State::Warn, "no folder for the cache key"),
    }
}
