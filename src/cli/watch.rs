//! `assay watch [PATHS…] [run flags…]`: runs the suites, then again on every save of a skill,
//! suite file, fixture or overlay, debounced. The cache makes each pass re-run only the
//! case-runs whose inputs changed (their cache key); the rest are reused. Each pass shows the
//! run's summary and what changed since the pass before: fixed, broken.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use clap::Args;
use notify::{EventKind, RecursiveMode, Watcher};

use super::RunArgs;
use crate::exit::Exit;
use crate::formats::LoadCtx;
use crate::record::Outcome as CaseOutcome;

#[derive(Debug, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Wait this long after the last change before running (milliseconds).
    #[arg(long, value_name = "MS", default_value_t = 300)]
    pub debounce: u64,
}

pub fn run(ctx: &LoadCtx, args: &WatchArgs, plugins: &crate::plugin::Plugins) -> Exit {
    if args.run.settings.resume.is_some() || args.run.settings.output_dir.is_some() {
        tell!(
            "error: assay watch makes a run folder per pass: --resume and --output-dir do not apply"
        );
        return Exit::BadInput;
    }
    if args.run.no_cache {
        tell!("error: assay watch re-runs only what changed through the cache: drop --no-cache");
        return Exit::BadInput;
    }
    let (tx, rx) = mpsc::channel::<notify::Result<notify::Event>>();
    // Kept for the watch's life: dropping it stops the events.
    let _watcher = match watcher(ctx, args, tx) {
        Ok(w) => w,
        Err(o) => return o,
    };
    // A signal while a pass runs stops that run (it records what it stopped, and the watch
    // ends with its exit code); while waiting for changes, it ends the watch at once.
    let waiting = Arc::new(AtomicBool::new(false));
    exit_on_signal_while(waiting.clone());
    let clear = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let mut last: Option<BTreeMap<String, CaseOutcome>> = None;
    let mut why = "start".to_string();
    for pass in 1.. {
        if clear {
            print!("\x1b[2J\x1b[H");
        }
        say!("assay watch: pass {pass} ({why})");
        let outcome = run_pass(ctx, args, plugins, pass, &mut last);
        if matches!(outcome, Exit::Interrupted | Exit::Terminated | Exit::HungUp) {
            return outcome;
        }
        say!(
            "assay watch: exit {} — waiting for changes (Ctrl-C to stop)",
            outcome as u8
        );
        waiting.store(true, Ordering::SeqCst);
        let changed = wait(&rx, &ctx.cwd, Duration::from_millis(args.debounce));
        waiting.store(false, Ordering::SeqCst);
        match changed {
            Some(changed) => why = changed,
            None => return outcome,
        }
    }
    Exit::Success
}

/// A watcher over the selection's roots (the current folder when none is given).
fn watcher(
    ctx: &LoadCtx,
    args: &WatchArgs,
    tx: mpsc::Sender<notify::Result<notify::Event>>,
) -> Result<notify::RecommendedWatcher, Exit> {
    let mut watcher = notify::recommended_watcher(tx).map_err(|e| {
        tell!("error: cannot watch files: {e}");
        Exit::Infrastructure
    })?;
    let mut roots = args.run.selection.scope();
    if roots.is_empty() {
        roots.push(PathBuf::from("."));
    }
    for r in &roots {
        let path = ctx.cwd.join(r);
        if let Err(e) = watcher.watch(&path, RecursiveMode::Recursive) {
            tell!("error: cannot watch {}: {e}", ctx.shown(&path).display());
            return Err(Exit::BadInput);
        }
    }
    Ok(watcher)
}

/// One pass: `assay run` into a run folder of its own, out of the history, then what changed
/// since the pass before (`last`, updated).
fn run_pass(
    ctx: &LoadCtx,
    args: &WatchArgs,
    plugins: &crate::plugin::Plugins,
    pass: u32,
    last: &mut Option<BTreeMap<String, CaseOutcome>>,
) -> Exit {
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    let dir = PathBuf::from(".assay/runs").join(format!("watch-{stamp}-{pass}"));
    let mut run_args = args.run.clone();
    run_args.settings.output_dir = Some(dir.clone());
    // A pass re-runs what is being edited: it is no point of the history.
    run_args.no_history = true;
    let outcome = super::run::run(ctx, &run_args, plugins);
    if matches!(outcome, Exit::Interrupted | Exit::Terminated | Exit::HungUp) {
        return outcome;
    }
    let now = outcomes(&ctx.cwd.join(&dir));
    if let (Some(before), Some(now)) = (&*last, &now) {
        say!("{}", changes(before, now));
    }
    if now.is_some() {
        *last = now;
    }
    outcome
}

/// Each case-run's outcome in a run folder, by `suite/case#run (variant)`.
fn outcomes(dir: &Path) -> Option<BTreeMap<String, CaseOutcome>> {
    let report = crate::report::read(dir).ok()?;
    Some(
        report
            .case_runs
            .iter()
            .map(|c| {
                (
                    format!("{}/{}#{} ({})", c.suite, c.case, c.run, c.variant.word()),
                    c.outcome,
                )
            })
            .collect(),
    )
}

/// What changed between two passes: case-runs that now pass and did not, and the reverse.
fn changes(before: &BTreeMap<String, CaseOutcome>, now: &BTreeMap<String, CaseOutcome>) -> String {
    let passed = |o: Option<&CaseOutcome>| o == Some(&CaseOutcome::Passed);
    let fixed: Vec<&str> = now
        .keys()
        .filter(|k| passed(now.get(*k)) && !passed(before.get(*k)))
        .map(String::as_str)
        .collect();
    let broken: Vec<&str> = now
        .keys()
        .filter(|k| !passed(now.get(*k)) && passed(before.get(*k)))
        .map(String::as_str)
        .collect();
    match (fixed.is_empty(), broken.is_empty()) {
        (true, true) => "since the last pass: no case-run changed its outcome".into(),
        _ => format!(
            "since the last pass: fixed {}; broken {}",
            if fixed.is_empty() {
                "none".into()
            } else {
                fixed.join(", ")
            },
            if broken.is_empty() {
                "none".into()
            } else {
                broken.join(", ")
            }
        ),
    }
}

/// Blocks until a file that matters is written, made, moved or removed (reads are not
/// changes, nor are assay's own run folders and caches), then until nothing more changes for
/// `quiet` (a save is often several events); says which files. `None` when the watcher stopped.
fn wait(
    rx: &mpsc::Receiver<notify::Result<notify::Event>>,
    cwd: &Path,
    quiet: Duration,
) -> Option<String> {
    let mut changed: Vec<PathBuf> = Vec::new();
    loop {
        let next = if changed.is_empty() {
            rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected)
        } else {
            rx.recv_timeout(quiet)
        };
        let event = match next {
            Ok(Ok(e)) => e,
            Ok(Err(e)) => {
                tell!("warning: watching files: {e}");
                continue;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => break,
            Err(mpsc::RecvTimeoutError::Disconnected) => return None,
        };
        let content = match event.kind {
            EventKind::Modify(notify::event::ModifyKind::Metadata(_)) => false,
            EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) => true,
            _ => false,
        };
        if !content {
            continue;
        }
        changed.extend(event.paths.into_iter().filter(|p| {
            !p.components()
                .any(|c| c.as_os_str() == ".assay" || c.as_os_str() == ".git")
        }));
    }
    Some(changed_line(&changed, cwd))
}

/// `changed: a, b, c and 2 more`: the files first (folders only when no file changed).
fn changed_line(changed: &[PathBuf], cwd: &Path) -> String {
    let mut shown: Vec<String> = changed
        .iter()
        .filter(|p| !p.is_dir())
        .map(|p| p.strip_prefix(cwd).unwrap_or(p).display().to_string())
        .collect();
    if shown.is_empty() {
        shown = changed
            .iter()
            .map(|p| p.strip_prefix(cwd).unwrap_or(p).display().to_string())
            .collect();
    }
    shown.sort();
    shown.dedup();
    let n = shown.len();
    shown.truncate(3);
    format!(
        "changed: {}{}",
        shown.join(", "),
        if n > 3 {
            format!(" and {} more", n - 3)
        } else {
            String::new()
        }
    )
}

/// SIGINT, SIGTERM and SIGHUP end the watch (128 + the signal) while `waiting` is set. (A run's
/// own handlers take the signal while it runs; once any handler is set, the default action
/// is gone for good, so the watch must exit itself.)
fn exit_on_signal_while(waiting: Arc<AtomicBool>) {
    let spawned = std::thread::Builder::new()
        .name("assay-watch-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                use tokio::signal::unix::{SignalKind, signal};
                let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                    signal(SignalKind::hangup()),
                ) else {
                    return;
                };
                loop {
                    let code = tokio::select! {
                        _ = int.recv() => Exit::Interrupted,
                        _ = term.recv() => Exit::Terminated,
                        _ = hup.recv() => Exit::HungUp,
                    };
                    if waiting.load(Ordering::SeqCst) {
                        std::process::exit(code as i32);
                    }
                }
            });
        });
    if let Err(e) = spawned {
        tell!("warning: Ctrl-C may not stop the watch between passes: {e}");
    }
}
