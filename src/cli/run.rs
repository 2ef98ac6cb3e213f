//! `assay run`: load, plan, execute through the harnesses, record; the terminal reporter
//! (`report::terminal`) shows it, the other reporters are written from the run folder.

use super::{RunArgs, load, print_problems};
use crate::exit::Exit;
use crate::formats::LoadCtx;
use crate::report::aggregate;
use crate::report::terminal;
use crate::run::{self, NotStarted, RunEvent, RunOptions};
use crate::text::printable;

pub fn run(ctx: &LoadCtx, args: &RunArgs, plugins: &crate::plugin::Plugins) -> Exit {
    let suites = match suites(ctx, args) {
        Ok(s) => s,
        Err(o) => return o,
    };
    let mut opts = match options(ctx, args, plugins) {
        Ok(o) => o,
        Err(o) => return o,
    };
    warn_workspaces(ctx, &suites, &opts);
    let mut live = crate::report::terminal::Live::new(
        !args.json,
        !args.json && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        super::stderr_color(),
    );
    match canary(ctx, &suites, &opts, args.no_canary) {
        Ok(verified) => opts.loads_verified = verified,
        Err(o) => return o,
    }
    if let Some(w) = run::adaptive::warning(&opts) {
        tell!("{w}");
    }
    let ran = run::adaptive::run_as_asked(ctx, &suites, &opts, |e: RunEvent<'_>| live.event(e));
    let report = match ran {
        Ok(r) => r,
        Err(e) => return not_started(e, args.json),
    };
    // Reports, from the run folder as written. A report that could not be written, or a run
    // folder that could not be read back: the run's result is not fully delivered (exit 3).
    let (read_back, not_delivered) = write_reports(ctx, args, &report.dir);
    live.done();
    let done = Done {
        suites: &suites,
        opts: &opts,
        report: &report,
        judge_failures: &live.judge_failures,
    };
    finish(ctx, args, &done, read_back, not_delivered)
}

/// The selected suites, loaded (with `--sync-tasks` over each suite's `sync_tasks`); `Err` is
/// the exit when there are problems or none (said).
fn suites(ctx: &LoadCtx, args: &RunArgs) -> Result<Vec<crate::suite::Suite>, Exit> {
    let mut loaded = load(ctx, &args.selection);
    if args.sync_tasks {
        for s in &mut loaded.suites {
            s.defaults.sync_tasks = true;
        }
    }
    print_problems(&loaded.problems);
    if loaded.problems.iter().any(|p| p.is_error()) {
        return Err(Exit::BadInput);
    }
    if loaded.suites.is_empty() {
        tell!("error: no eval suites found");
        return Err(Exit::BadInput);
    }
    Ok(loaded.suites)
}

/// Warns when the workspaces are made inside a project of the run.
fn warn_workspaces(ctx: &LoadCtx, suites: &[crate::suite::Suite], opts: &RunOptions) {
    if let Some(ws) = &opts.settings.workspace_dir
        && let Some(s) = suites.iter().find(|s| ws.starts_with(&s.project_root))
    {
        tell!(
            "warning: the workspaces are inside the project {}: agents that read `.claude/` in parent folders (Claude Code does) see the project's own skills there, so baselines and trigger evals are not isolated; put --workspace-dir outside the project",
            ctx.shown(&s.project_root).display()
        );
    }
}

/// A finished run, as the end of `assay run` reads it.
struct Done<'a> {
    suites: &'a [crate::suite::Suite],
    opts: &'a RunOptions,
    report: &'a run::RunReport,
    /// What the judge's failures said, as the live display gathered them.
    judge_failures: &'a [String],
}

/// The end of a run: the summary from the run folder (`read_back`, the reports' read, when
/// there was one), the history, what was not graded or delivered, and the exit.
fn finish(
    ctx: &LoadCtx,
    args: &RunArgs,
    done: &Done<'_>,
    read_back: Option<crate::report::Report>,
    mut not_delivered: bool,
) -> Exit {
    let report = done.report;
    let (rows, agg) = match read_back {
        Some(r) => (crate::report::model::rows(&r.case_runs), r.statistics),
        None => {
            let rows = crate::report::rows::rows_of(&report.dir).unwrap_or_else(|e| {
                tell!("error: reading the run folder back: {e}");
                not_delivered = true;
                Vec::new()
            });
            let settings = aggregate::VerdictSettings {
                min_pass_rate: done.opts.settings.min_pass_rate,
                pass_k: done.opts.settings.pass_k,
            };
            let agg = aggregate::aggregate(&rows, settings);
            (rows, agg)
        }
    };
    summary(ctx, args, done, &rows, &agg);
    if let Err(e) = history(ctx, args, done, &rows) {
        tell!("error: the history was not written: {e}");
        not_delivered = true;
    }
    let mut tally: std::collections::BTreeMap<&str, usize> = Default::default();
    for r in &rows {
        *tally.entry(r.outcome.word()).or_default() += 1;
    }
    notes(args, done, &tally);
    let ending = run::ending::Ending::of(report, &tally, not_delivered, agg.failed());
    let shown = ctx.shown(&report.dir).display().to_string();
    let (said, outcome) = run::ending::exit(report, ending, &shown);
    for line in said {
        tell!("{line}");
    }
    outcome
}

/// A line for people: on stdout, or on stderr with `--json` (stdout is the JSON report then).
fn say(args: &RunArgs, line: &str) {
    let line = crate::text::for_terminal(line);
    if args.json {
        eprintln!("{line}")
    } else {
        println!("{line}")
    }
}

/// The end of the run as recorded (this invocation's case-runs, and those reused from the
/// cache or kept from the run being resumed).
fn summary(
    ctx: &LoadCtx,
    args: &RunArgs,
    done: &Done<'_>,
    rows: &[crate::report::rows::Row],
    agg: &aggregate::Aggregates,
) {
    let report = done.report;
    let adaptive = run::adaptive::is_asked(done.opts);
    let recorded = crate::record::read_run(&report.dir).ok();
    let end = terminal::summary::End {
        rows,
        agg,
        adaptive: recorded
            .as_ref()
            .and_then(|r| r.adaptive.as_ref())
            .filter(|_| adaptive),
        kept_in_rounds: adaptive,
        reused: &|from| report.reused.iter().filter(|r| r.from == from).count(),
        shown: &|d| ctx.shown(&report.dir.join(d)).display().to_string(),
        folder: ctx.shown(&report.dir).display().to_string(),
    };
    for l in end.lines() {
        say(args, &l);
    }
}

/// Appends the run to the history, when it is wanted and has a file
/// ([`crate::report::history_file`]).
fn history(
    ctx: &LoadCtx,
    args: &RunArgs,
    done: &Done<'_>,
    rows: &[crate::report::rows::Row],
) -> Result<(), crate::report::history_file::HistoryError> {
    use crate::report::history_file;
    let (report, flag) = (done.report, args.history.as_deref());
    let sharded = done.opts.settings.shard.is_some();
    if !history_file::wanted(report, sharded, flag, args.no_history) {
        return Ok(());
    }
    match history_file::file(&ctx.cwd, flag, &report.dir) {
        Some(file) => history_file::append(ctx, done.suites, &report.dir, rows, &file),
        None => Ok(()),
    }
}

/// What the run did not contain, grade or deliver: unsandboxed agents, judge items not graded,
/// a judge that failed, output cut.
fn notes(args: &RunArgs, done: &Done<'_>, tally: &std::collections::BTreeMap<&str, usize>) {
    let report = done.report;
    if report.unsandboxed {
        tell!(
            "warning: unsandboxed: the agents ran without a sandbox (--sandbox none), with your files, processes and network"
        );
    }
    if tally.contains_key("not graded") {
        say(
            args,
            "not graded: judge items (expectations, criteria, rubrics) that no judge graded, and checks on an output that was cut, are never counted as passed",
        );
    }
    if report.judge_failed {
        tell!(
            "{}",
            terminal::summary::judge_failed_line(done.judge_failures)
        );
    }
    if report.output_cut {
        tell!(
            "error: some agents wrote more output than assay keeps (64 MiB, or 16 MiB in one line); their case-runs are not graded"
        );
    }
}

/// The run's options from its flags: `--command` split as a shell would, a BMAD adapter read
/// and checked, the baseline or variant; `Err` is the exit when a flag is bad (said).
fn options(
    ctx: &LoadCtx,
    args: &RunArgs,
    plugins: &crate::plugin::Plugins,
) -> Result<RunOptions, Exit> {
    let command = split_command(args.command.as_deref())?;
    let adapter = match &args.adapter {
        None => None,
        Some(file) => match crate::formats::bmad::adapter::read(ctx, &ctx.cwd.join(file), true) {
            Ok((spec, warnings)) => {
                print_problems(&warnings);
                Some(spec)
            }
            Err(problems) => {
                print_problems(&problems);
                return Err(Exit::BadInput);
            }
        },
    };
    Ok(RunOptions {
        adapter,
        settings: args.settings.from(&ctx.cwd),
        // 0: `[run] jobs` of assay.toml, else the default from CPUs and memory.
        jobs: args.jobs.unwrap_or(0),
        // A second signal: everything is killed; stop at once, as shells report it.
        on_kill: Some(|signal| std::process::exit(128 + signal)),
        judge: args.judge.judge.clone(),
        transport: args.judge.transport.clone(),
        allow_private_urls: args.checks.allow_private_urls,
        plugins: plugins.clone(),
        command,
        judge_jobs: args.judge_jobs.map(|n| n as usize),
        baseline: match (&args.variant_path, &args.baseline_skill) {
            (Some(p), _) => Some(crate::run::OtherArm::Variant(ctx.cwd.join(p))),
            (None, Some(p)) => Some(crate::run::OtherArm::Skill(ctx.cwd.join(p))),
            (None, None) => args.baseline.then_some(crate::run::OtherArm::WithoutSkill),
        },
        cache: !args.no_cache,
        runs_for: Default::default(),
        loads_verified: Vec::new(),
    })
}

/// `--command` split as a shell would; `Err` (said) when it cannot be.
pub(super) fn split_command(command: Option<&str>) -> Result<Vec<String>, Exit> {
    match command.map(shell_words::split) {
        None => Ok(Vec::new()),
        Some(Ok(words)) => Ok(words),
        Some(Err(e)) => {
            tell!("error: --command: {e} (quote it as a shell would)");
            Err(Exit::BadInput)
        }
    }
}

/// A run that never started: the plan of a dry run, bad input, or a harness missing.
fn not_started(e: NotStarted, json: bool) -> Exit {
    match e {
        NotStarted::DryRun(plan) => dry_run(&plan, json),
        NotStarted::BadInput(problems) => {
            print_problems(&problems);
            Exit::BadInput
        }
        NotStarted::Unavailable(list) => {
            for (name, u) in list {
                tell!("error: harness `{name}`: {}", u.message);
                if !u.fix.is_empty() {
                    tell!("  help: {}", u.fix);
                }
            }
            tell!("nothing was run");
            Exit::Infrastructure
        }
    }
}

/// The reporters asked for (and `--json`'s report on stdout), from the run folder as read
/// back: the report read (for the summary), and whether anything was not delivered.
fn write_reports(
    ctx: &LoadCtx,
    args: &RunArgs,
    dir: &std::path::Path,
) -> (Option<crate::report::Report>, bool) {
    let mut not_delivered = false;
    if args.reporter.is_empty() && !args.json {
        return (None, false);
    }
    let mut r = match crate::report::read(dir) {
        Ok(r) => r,
        Err(e) => {
            tell!("error: reading the run folder for reports: {e}");
            return (None, true);
        }
    };
    r.dir = ctx.shown(dir);
    for f in &args.reporter {
        match crate::report::write(&r, *f, dir) {
            Ok(paths) => {
                for p in paths {
                    tell!("report: {}", ctx.shown(&p).display());
                }
            }
            Err(e) => {
                tell!("error: writing the {f:?} report: {e}");
                not_delivered = true;
            }
        }
        if *f == crate::report::Reporter::Github
            && let Err(e) = github_step(&r, args.json)
        {
            tell!("error: the GitHub step summary: {e}");
            not_delivered = true;
        }
    }
    if args.json {
        print!(
            "{}",
            crate::text::printable_json(&crate::report::render(&r, crate::report::Reporter::Json))
        );
    }
    (Some(r), not_delivered)
}

/// `--dry-run`: the plan, one line per case-run (or as JSON), and nothing else.
fn dry_run(plan: &crate::run::preview::Preview, json: bool) -> Exit {
    if json {
        match serde_json::to_string_pretty(plan) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                tell!("error: {e}");
                return Exit::Infrastructure;
            }
        }
        return Exit::Success;
    }
    for line in plan.dry_run_lines() {
        println!("{line}");
    }
    Exit::Success
}

/// `--reporter github`: the annotations on standard output, where the Actions runner reads
/// workflow commands (on stderr with `--json`: standard output is the JSON report alone; the
/// runner reads both streams), and the Markdown summary appended to `$GITHUB_STEP_SUMMARY`.
fn github_step(r: &crate::report::model::Report, json: bool) -> std::io::Result<()> {
    let annotations = printable(&crate::report::render(r, crate::report::Reporter::Github));
    if json {
        eprint!("{annotations}");
    } else {
        print!("{annotations}");
    }
    crate::report::step_summary::append(r, &crate::host::HostEnv::from_process())
}

/// Runs the trigger canary (unless `--no-canary`): the loads it saw work, or the exit when it
/// failed (the run stops before anything else). When it cannot run at all (a harness missing,
/// say), the run goes on and says why itself.
fn canary(
    ctx: &LoadCtx,
    suites: &[crate::suite::Suite],
    opts: &RunOptions,
    skip: bool,
) -> Result<Vec<(String, String)>, Exit> {
    use crate::run::canary::{self, CanaryVerdict};
    let Some(verdict) = canary::check(ctx, suites, opts, skip) else {
        return Ok(Vec::new());
    };
    match verdict {
        CanaryVerdict::Passed(list) => {
            for c in &list {
                tell!("{}", c.passed_line());
            }
            Ok(canary::verified(&list))
        }
        CanaryVerdict::NoFolder(e) => {
            tell!("error: cannot make a folder for the trigger canary: {e}");
            Err(Exit::Infrastructure)
        }
        CanaryVerdict::Failed { failed, dir } => {
            for c in &failed {
                tell!("{}", c.failed_line());
            }
            tell!("  the canary's run folder: {}", dir.display());
            tell!(
                "  fix: check the skill's name and where it is installed, read the canary's transcript; or pass --no-canary"
            );
            tell!("nothing else was run");
            Err(Exit::Infrastructure)
        }
    }
}
