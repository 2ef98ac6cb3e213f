//! `assay doctor`: what the default `assay run` here would use, checked, with the fix for each
//! problem. Exit 0 when the run would start, 3 when it would stop, 2 on bad input.

use clap::Args;

use super::{JudgeChoice, Selection, load, print_problems};
use crate::exit::Exit;
use crate::formats::LoadCtx;
use crate::run::doctor::{self, State};
use crate::run::{NotStarted, RunOptions};

#[derive(Debug, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub selection: Selection,
    /// The run's own flags: check what `assay run` with them would use.
    #[command(flatten)]
    pub settings: super::run_flags::RunFlags,
    #[command(flatten)]
    pub judge: JudgeChoice,
    /// Also send one smallest request to each model the run would reach: an agent case-run
    /// ("Reply with the single word OK.") per harness and model, through the run's own
    /// sandbox and login, and one call per judge. Costs a few tokens each.
    #[arg(long)]
    pub probe: bool,
    /// Print the checks as JSON.
    #[arg(long)]
    pub json: bool,
    /// The command (or acp) harness's program and arguments, as `assay run --command` takes
    /// them.
    #[arg(long)]
    pub command: Option<String>,
}

pub fn run(ctx: &LoadCtx, args: &DoctorArgs, plugins: &crate::plugin::Plugins) -> Exit {
    let loaded = load(ctx, &args.selection);
    print_problems(&loaded.problems);
    if loaded.problems.iter().any(|p| p.is_error()) {
        return Exit::BadInput;
    }
    let opts = match options(ctx, args, plugins) {
        Ok(o) => o,
        Err(outcome) => return outcome,
    };
    let mut checks = match doctor::examine(ctx, &loaded.suites, &opts) {
        Ok(c) => c,
        Err(e) => return not_started(e),
    };
    if args.probe && !checks.iter().any(|c| c.state == State::Fail) && !loaded.suites.is_empty() {
        match doctor::probe(ctx, &loaded.suites, &opts) {
            Ok(more) => checks.extend(more),
            Err(e) => return not_started(e),
        }
    }
    let failed = checks.iter().filter(|c| c.state == State::Fail).count();
    if args.json {
        super::print_json(&serde_json::json!({
            "would_start": failed == 0,
            "checks": checks,
        }));
    } else {
        if loaded.suites.is_empty() {
            say!("- suites: none found here (a run would say \"no eval suites found\")");
        }
        let width = checks.iter().map(|c| c.what.len()).max().unwrap_or(0);
        for c in &checks {
            let mark = match c.state {
                State::Ok => "✓",
                State::Warn => "!",
                State::Fail => "✗",
            };
            say!("{mark} {:width$}  {}", c.what, c.detail);
            if let Some(fix) = &c.fix {
                say!("  {:width$}  fix: {fix}", "");
            }
        }
        if failed == 0 {
            say!("assay run would start here.");
        } else {
            say!(
                "assay run would stop before starting: {failed} problem{} (exit 3).",
                if failed == 1 { "" } else { "s" }
            );
        }
    }
    if failed == 0 && !loaded.suites.is_empty() {
        Exit::Success
    } else if loaded.suites.is_empty() {
        Exit::BadInput
    } else {
        Exit::Infrastructure
    }
}

/// What `assay run` with these flags would be given (`--command` split as it splits it).
fn options(
    ctx: &LoadCtx,
    args: &DoctorArgs,
    plugins: &crate::plugin::Plugins,
) -> Result<RunOptions, Exit> {
    Ok(RunOptions {
        settings: args.settings.from(&ctx.cwd),
        command: super::run::split_command(args.command.as_deref())?,
        judge: args.judge.judge.clone(),
        transport: args.judge.transport.clone(),
        plugins: plugins.clone(),
        cache: true,
        ..RunOptions::default()
    })
}

/// Why the checks could not be made: bad input (exit 2), or something else (exit 3).
fn not_started(e: NotStarted) -> Exit {
    match e {
        NotStarted::BadInput(problems) => {
            print_problems(&problems);
            Exit::BadInput
        }
        other => {
            tell!("error: {other:?}");
            Exit::Infrastructure
        }
    }
}
