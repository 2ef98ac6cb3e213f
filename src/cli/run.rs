//! `assay run`: load, plan, execute through the harnesses, record; the terminal reporter
//! (`report::terminal`) shows it, the other reporters are written from the run folder.

use super::{RunArgs, load, print_problems};
use crate::exit::Outcome;
use crate::report::aggregate;
use crate::report::terminal;
use crate::run::{self, NotStarted, RunEvent, RunOptions};
use crate::spec::formats::LoadCtx;
use crate::text::printable;

pub fn run(ctx: &LoadCtx, args: &RunArgs, plugins: &crate::plugin::Plugins) -> Outcome {
    let mut loaded = load(ctx, &args.selection);
    if args.sync_tasks {
        // `--sync-tasks` (clauditor's flag) over every suite's `sync_tasks`.
        for s in &mut loaded.suites {
            s.defaults.sync_tasks = true;
        }
    }
    print_problems(&loaded.problems);
    if loaded.problems.iter().any(|p| p.is_error()) {
        return Outcome::BadInput;
    }
    if loaded.suites.is_empty() {
        tell!("error: no eval suites found");
        return Outcome::BadInput;
    }
    let opts = match options(ctx, args, plugins) {
        Ok(o) => o,
        Err(o) => return o,
    };
    if let Some(ws) = &opts.settings.workspace_dir
        && let Some(s) = loaded
            .suites
            .iter()
            .find(|s| ws.starts_with(&s.project_root))
    {
        tell!(
            "warning: the workspaces are inside the project {}: agents that read `.claude/` in parent folders (Claude Code does) see the project's own skills there, so baselines and trigger evals are not isolated; put --workspace-dir outside the project",
            ctx.shown(&s.project_root).display()
        );
    }
    let to_stdout = !args.json;
    let mut live = crate::report::terminal::Live::new(
        to_stdout,
        !args.json && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        super::stderr_color(),
    );
    if !args.no_canary
        && crate::run::canary::applies(&loaded.suites, &opts)
        && let Some(o) = canary(ctx, &loaded.suites, &opts)
    {
        return o;
    }
    let adaptive = matches!(opts.settings.runs, Some(crate::run::options::Runs::Auto));
    if adaptive && opts.settings.min_pass_rate >= 1.0 {
        tell!(
            "warning: --runs auto with --min-pass-rate 1: a passing case is never settled (more runs can only fail it), so each takes --max-runs runs ({}); set --min-pass-rate below 1, e.g. 0.8",
            opts.settings.max_runs
        );
    }
    let on_event = |event: RunEvent<'_>| live.event(event);
    let ran = if adaptive {
        run::adaptive::run(ctx, &loaded.suites, &opts, on_event)
    } else {
        run::run(ctx, &loaded.suites, &opts, on_event)
    };
    let report = match ran {
        Ok(r) => r,
        Err(e) => return not_started(e, args.json),
    };
    // Reports, from the run folder as written. A report that could not be written, or a run
    // folder that could not be read back: the run's result is not fully delivered (exit 3).
    let (read_back, mut not_delivered) = write_reports(ctx, args, &report.dir);
    live.done();
    let say = |line: String| {
        let line = crate::text::for_terminal(&line);
        if to_stdout {
            println!("{line}")
        } else {
            eprintln!("{line}")
        }
    };
    // The whole run as recorded (this invocation's case-runs, and those reused from the cache
    // or kept from the run being resumed), each read once and kept small (from the reports'
    // read when there was one).
    let (rows, agg) = match read_back {
        Some(r) => (crate::report::model::rows(&r.case_runs), r.statistics),
        None => {
            let rows = crate::report::rows::rows_of(&report.dir).unwrap_or_else(|e| {
                tell!("error: reading the run folder back: {e}");
                not_delivered = true;
                Vec::new()
            });
            let settings = aggregate::Settings {
                min_pass_rate: opts.settings.min_pass_rate,
                pass_k: opts.settings.pass_k,
            };
            let agg = aggregate::aggregate(&rows, settings);
            (rows, agg)
        }
    };
    let recorded = crate::record::read_run(&report.dir).ok();
    let end = terminal::summary::End {
        rows: &rows,
        agg: &agg,
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
        say(l);
    }
    let mut tally: std::collections::BTreeMap<&str, usize> = Default::default();
    for r in &rows {
        *tally.entry(r.outcome.word()).or_default() += 1;
    }
    // The history, for `assay report trend` and `audit` (not for an interrupted run: its
    // `--resume` appends the whole run; not for a shard: the shards of one plan, run one
    // after another here, must all cut by the timings they started with).
    if !report.interrupted
        && (opts.settings.shard.is_none() || args.history.is_some())
        && !args.no_history
        && let Some(file) = history_file(ctx, args.history.as_deref(), &report.dir)
        && let Err(e) = append_history(ctx, &loaded.suites, &report.dir, &rows, &file)
    {
        tell!("error: the history was not written: {e}");
        not_delivered = true;
    }
    if report.unsandboxed {
        tell!(
            "warning: unsandboxed: the agents ran without a sandbox (--sandbox none), with your files, processes and network"
        );
    }
    let judge_failed = report.judge_failed;
    if tally.contains_key("not graded") {
        say(
            "not graded: judge items (expectations, criteria, rubrics) that no judge graded, and checks on an output that was cut, are never counted as passed".into(),
        );
    }
    if judge_failed {
        tell!(
            "{}",
            terminal::summary::judge_failed_line(&live.judge_failures)
        );
    }
    if report.output_cut {
        tell!(
            "error: some agents wrote more output than assay keeps (64 MiB, or 16 MiB in one line); their case-runs are not graded"
        );
    }
    let incomplete = tally.contains_key("error") || judge_failed || report.output_cut;
    let ending = Ending::of(&tally, incomplete || not_delivered, agg.failed());
    exit_for(ctx, &report, ending)
}

/// How a finished run went, as read back from its folder: what its exit depends on.
#[derive(Debug, Clone, Copy, Default)]
struct Ending {
    /// Some case-run ended in an error, the judge failed, an output was cut, or a report or
    /// the history was not delivered.
    incomplete: bool,
    /// Case-runs planned that have no record in the run folder (`missing`): a result that
    /// could not be recorded is never a pass, nor a failure of the skill.
    unrecorded: usize,
    /// Some case failed.
    failed: bool,
}

impl Ending {
    /// From the run's tally of outcomes (`missing` counted as not recorded).
    fn of(tally: &std::collections::BTreeMap<&str, usize>, incomplete: bool, failed: bool) -> Self {
        let unrecorded = tally.get("missing").copied().unwrap_or(0);
        Ending {
            incomplete,
            unrecorded,
            failed,
        }
    }
}

/// The run's options from its flags: `--command` split as a shell would, a BMAD adapter read
/// and checked, the baseline or variant; `Err` is the exit when a flag is bad (said).
fn options(
    ctx: &LoadCtx,
    args: &RunArgs,
    plugins: &crate::plugin::Plugins,
) -> Result<RunOptions, Outcome> {
    let command = split_command(args.command.as_deref())?;
    let adapter = match &args.adapter {
        None => None,
        Some(file) => {
            match crate::spec::formats::bmad::adapter::read(ctx, &ctx.cwd.join(file), true) {
                Ok((spec, warnings)) => {
                    print_problems(&warnings);
                    Some(spec)
                }
                Err(problems) => {
                    print_problems(&problems);
                    return Err(Outcome::BadInput);
                }
            }
        }
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
            (Some(p), _) => Some(crate::run::Baseline::Variant(ctx.cwd.join(p))),
            (None, Some(p)) => Some(crate::run::Baseline::Skill(ctx.cwd.join(p))),
            (None, None) => args.baseline.then_some(crate::run::Baseline::WithoutSkill),
        },
        cache: !args.no_cache,
        runs_for: Default::default(),
    })
}

/// `--command` split as a shell would; `Err` (said) when it cannot be.
pub(super) fn split_command(command: Option<&str>) -> Result<Vec<String>, Outcome> {
    match command.map(shell_words::split) {
        None => Ok(Vec::new()),
        Some(Ok(words)) => Ok(words),
        Some(Err(e)) => {
            tell!("error: --command: {e} (quote it as a shell would)");
            Err(Outcome::BadInput)
        }
    }
}

/// A run that never started: the plan of a dry run, bad input, or a harness missing.
fn not_started(e: NotStarted, json: bool) -> Outcome {
    match e {
        NotStarted::DryRun(plan) => dry_run(&plan, json),
        NotStarted::BadInput(problems) => {
            print_problems(&problems);
            Outcome::BadInput
        }
        NotStarted::Unavailable(list) => {
            for (name, u) in list {
                tell!("error: harness `{name}`: {}", u.message);
                if !u.fix.is_empty() {
                    tell!("  help: {}", u.fix);
                }
            }
            tell!("nothing was run");
            Outcome::Infrastructure
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
        if *f == crate::report::Format::Github
            && let Err(e) = github_step(&r, args.json)
        {
            tell!("error: the GitHub step summary: {e}");
            not_delivered = true;
        }
    }
    if args.json {
        print!(
            "{}",
            crate::text::printable_json(&crate::report::render(&r, crate::report::Format::Json))
        );
    }
    (Some(r), not_delivered)
}

/// The exit: interrupted or stopped by the budget (and how to finish), not fully recorded or
/// delivered (3), failed (1), or passed (0).
fn exit_for(ctx: &LoadCtx, report: &crate::run::RunReport, ending: Ending) -> Outcome {
    let stopped = report.interrupted || report.budget_stop.is_some();
    if !stopped && ending.unrecorded > 0 {
        tell!(
            "error: {} case-run(s) could not be recorded: {} has no result.json for them (see the errors above)",
            ending.unrecorded,
            ctx.shown(&report.dir).display()
        );
    }
    if report.interrupted {
        tell!(
            "interrupted: finish this run with `assay run --resume {}` (and the same selection)",
            ctx.shown(&report.dir).display()
        );
        match report.signal {
            libc::SIGTERM => Outcome::Terminated,
            libc::SIGHUP => Outcome::HungUp,
            _ => Outcome::Interrupted,
        }
    } else if let Some(b) = &report.budget_stop {
        tell!(
            "stopped by budget: ${:.4} spent of the ${:.4} limit (--max-cost or `[run] max_cost`); {} case-run(s) not started. Finish with `assay run --resume {}` (and the same selection, with a higher limit)",
            b.spent_usd,
            b.max_cost_usd,
            b.not_started,
            ctx.shown(&report.dir).display()
        );
        if let Some(e) = &report.record_error {
            tell!("error: the run was not fully recorded: {e}");
        }
        Outcome::Infrastructure
    } else if let Some(e) = &report.record_error {
        tell!("error: the run was not fully recorded: {e}");
        Outcome::Infrastructure
    } else {
        exit_of(ending)
    }
}

/// The exit of a run that was neither stopped nor left `run.json` unwritten: anything not
/// recorded or not delivered is 3 (an infrastructure failure, never a pass or a failure of the
/// skill), else a failed case 1, else 0.
fn exit_of(ending: Ending) -> Outcome {
    if ending.incomplete || ending.unrecorded > 0 {
        Outcome::Infrastructure
    } else if ending.failed {
        Outcome::Failed
    } else {
        Outcome::Success
    }
}

/// `--dry-run`: the plan, one line per case-run, and nothing else.
fn dry_run(plan: &crate::run::plan::Preview, json: bool) -> Outcome {
    if json {
        match serde_json::to_string_pretty(plan) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                tell!("error: {e}");
                return Outcome::Infrastructure;
            }
        }
        return Outcome::Success;
    }
    for r in &plan.case_runs {
        let mut line = format!(
            "{}/{}  {}{} {}  {}  model {}  timeout {} s",
            r.suite,
            r.case,
            match r.kind {
                crate::record::case_run::Kind::Trigger => "trigger ",
                crate::record::case_run::Kind::Case => "",
            },
            match r.variant {
                crate::run::Variant::Skill => "run",
                other => other.word(),
            },
            r.run,
            match (&r.skipped, r.starts_agent) {
                (Some(_), _) => "skipped",
                (None, true) => r.harness.as_str(),
                (None, false) => "judge only",
            },
            r.model.as_deref().unwrap_or("(harness default)"),
            r.timeout_secs,
        );
        if let Some(t) = &r.target {
            line.push_str(&format!("  target {t}"));
        }
        if let Some(why) = &r.skipped {
            line.push_str(&format!("  ({why})"));
        }
        println!("{}", printable(&line));
    }
    println!("{}", plan.line(0, 0));
    if let Some(shard) = &plan.shard {
        println!("{}", shard.line());
    }
    for u in &plan.unavailable {
        println!("{}", printable(&format!("would stop: {u}")));
    }
    println!("dry run: nothing was started");
    Outcome::Success
}

/// `--reporter github`: the annotations on standard output, where the Actions runner reads
/// workflow commands, and the Markdown summary appended to `$GITHUB_STEP_SUMMARY` when set.
fn github_step(r: &crate::report::model::Report, json: bool) -> std::io::Result<()> {
    use std::io::Write;
    // With --json, standard output is the JSON report alone; the runner reads both streams.
    let annotations = printable(&crate::report::render(r, crate::report::Format::Github));
    if json {
        eprint!("{annotations}");
    } else {
        print!("{annotations}");
    }
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(crate::report::render(r, crate::report::Format::Markdown).as_bytes())?;
    f.flush()
}

/// Where the run's history goes: `--history`, else `.assay/history.jsonl` beside the
/// `.assay/runs/` folder the run folder is in; none for a run folder elsewhere (a project
/// gets no file it did not ask for).
fn history_file(
    ctx: &LoadCtx,
    flag: Option<&std::path::Path>,
    dir: &std::path::Path,
) -> Option<std::path::PathBuf> {
    if let Some(f) = flag {
        return Some(ctx.cwd.join(f));
    }
    let runs = dir.parent()?;
    let assay = runs.parent()?;
    (runs.file_name()? == "runs" && assay.file_name()? == ".assay")
        .then(|| assay.join("history.jsonl"))
}

/// Appends one line per case of the run to the history file.
fn append_history(
    ctx: &LoadCtx,
    suites: &[crate::spec::Suite],
    dir: &std::path::Path,
    rows: &[crate::report::rows::Row],
    file: &std::path::Path,
) -> Result<(), String> {
    let run = crate::record::read_run(dir).map_err(|e| e.to_string())?;
    let hashes: std::collections::BTreeMap<String, String> = suites
        .iter()
        .filter_map(|s| {
            let k = s.skill.as_ref()?;
            let specs = s.spec_paths(&ctx.cwd);
            Some((s.id.clone(), crate::run::cache::skill_hash(k, &specs)))
        })
        .collect();
    // Each suite's own files: its spec (and for a folder format, the folder).
    let suite_hashes: std::collections::BTreeMap<String, String> = suites
        .iter()
        .map(|s| (s.id.clone(), crate::run::cache::suite_hash(s, &ctx.cwd)))
        .collect();
    let shown = ctx.shown(dir).display().to_string();
    let lines = crate::report::history::lines(rows, &run, &shown, &hashes, &suite_hashes);
    crate::record::history::append(file, &lines).map_err(|e| e.to_string())
}

/// Runs the trigger canary; `Some` exit when it failed (the run stops before anything else).
/// When it cannot run at all (a harness missing, say), the run goes on and says why itself.
fn canary(ctx: &LoadCtx, suites: &[crate::spec::Suite], opts: &RunOptions) -> Option<Outcome> {
    use crate::run::canary;
    let dir = match tempfile::Builder::new().prefix("assay-canary-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            tell!("error: cannot make a folder for the trigger canary: {e}");
            return Some(Outcome::Infrastructure);
        }
    };
    let list = canary::run(ctx, suites, opts, dir.path().join("run")).ok()?;
    let failed: Vec<&canary::Canary> = list
        .iter()
        .filter(|c| c.failed() || c.undecided())
        .collect();
    if failed.is_empty() {
        for c in &list {
            tell!(
                "canary: `{}` fired through {} in {} of {} run(s){}",
                c.skill,
                c.harness,
                c.fired,
                c.told,
                match c.cached {
                    0 => String::new(),
                    n if n == c.told => ", from the cache".to_string(),
                    n => format!(", {n} from the cache"),
                }
            );
        }
        return None;
    }
    let kept = dir.keep();
    for c in failed {
        match &c.unrun {
            Some(why) if c.undecided() => tell!(
                "error: the trigger canary could not tell whether `{}` fires through {}: its runs ended before the agent answered: {}",
                c.skill,
                c.harness,
                crate::text::printable(why)
            ),
            _ => tell!(
                "error: the trigger canary failed: `{}` did not fire on {:?} in {} run(s) through {}: the skill is not installed where the agent looks, or assay cannot see it fire, so every trigger rate this run reported would be wrong",
                c.skill,
                canary::query(&c.skill),
                c.told,
                c.harness
            ),
        }
    }
    tell!("  the canary's run folder: {}", kept.join("run").display());
    tell!(
        "  fix: check the skill's name and where it is installed, read the canary's transcript; or pass --no-canary"
    );
    tell!("nothing else was run");
    Some(Outcome::Infrastructure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_run_that_could_not_be_recorded_makes_the_run_exit_3() {
        let unrecorded = Ending {
            unrecorded: 1,
            ..Ending::default()
        };
        // Whatever the others did: not a pass (0), not a failure of the skill (1).
        assert_eq!(exit_of(unrecorded), Outcome::Infrastructure);
        let failed = Ending {
            failed: true,
            ..unrecorded
        };
        assert_eq!(exit_of(failed), Outcome::Infrastructure);
        assert_eq!(
            exit_of(Ending {
                unrecorded: 0,
                ..failed
            }),
            Outcome::Failed
        );
        assert_eq!(exit_of(Ending::default()), Outcome::Success);
        let incomplete = Ending {
            incomplete: true,
            ..Ending::default()
        };
        assert_eq!(exit_of(incomplete), Outcome::Infrastructure);
    }
}
