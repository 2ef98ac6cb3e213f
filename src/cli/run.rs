//! `assay run`: load, plan, execute through the harnesses, record.

use super::{RunArgs, load, print_problems};
use crate::exit::Outcome;
use crate::record::Outcome as CaseOutcome;
use crate::report::aggregate::{self, CaseVerdict};
use crate::report::tables::{interval, num, pct, signed};
use crate::run::{self, CaseRunRecord, NotStarted, RunEvent, RunOptions};
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
    let command = match args.command.as_deref().map(shell_words::split) {
        None => Vec::new(),
        Some(Ok(words)) => words,
        Some(Err(e)) => {
            tell!("error: --command: {e} (quote it as a shell would)");
            return Outcome::BadInput;
        }
    };
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
                    return Outcome::BadInput;
                }
            }
        }
    };
    let opts = RunOptions {
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
    let mut progress = Progress::new(!args.json && stderr_is_terminal());
    let say_line = |progress: &Progress, text: String| {
        let text = crate::text::for_terminal(&text);
        if progress.bar.is_some() {
            progress.println(&text);
        } else if to_stdout {
            println!("{text}")
        } else {
            eprintln!("{text}")
        }
    };
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
    let mut totals = Totals::new();
    // Which case-runs the judge failed on, and why: named at the end.
    let mut judge_failures: Vec<String> = Vec::new();
    let on_event = |event: RunEvent<'_>| match event {
        RunEvent::Started {
            case_runs,
            jobs,
            plan,
            reused,
            ..
        } => {
            // What the run costs, before any agent starts (stderr: stdout may be the report).
            eprintln!("{}", plan.line(reused));
            for row in &plan.case_runs {
                let key = (row.suite.clone(), row.case.clone(), row.variant.word());
                let n = totals.entry(key).or_default();
                *n = (*n).max(row.run);
            }
            progress.start(case_runs, jobs)
        }
        RunEvent::Finished(r) => {
            progress.finished(r.outcome() == CaseOutcome::Passed);
            if let Some(e) = r.judge.as_ref().and_then(|j| j.error.as_ref()) {
                let which = which_run(&r.suite, &r.case, r.variant, r.run, &totals);
                judge_failures.push(format!("{}/{}{which}: {e}", r.suite, r.case));
            }
            say_line(&progress, line(r, &totals));
        }
        RunEvent::Reused(r) => {
            progress.finished(r.outcome == CaseOutcome::Passed);
            say_line(&progress, reused_line(r, &totals));
        }
    };
    let ran = if adaptive {
        run::adaptive::run(ctx, &loaded.suites, &opts, on_event)
    } else {
        run::run(ctx, &loaded.suites, &opts, on_event)
    };
    let report = match ran {
        Ok(r) => r,
        Err(NotStarted::DryRun(plan)) => return dry_run(&plan, args.json),
        Err(NotStarted::BadInput(problems)) => {
            print_problems(&problems);
            return Outcome::BadInput;
        }
        Err(NotStarted::Unavailable(list)) => {
            for (name, u) in list {
                tell!("error: harness `{name}`: {}", u.message);
                if !u.fix.is_empty() {
                    tell!("  help: {}", u.fix);
                }
            }
            tell!("nothing was run");
            return Outcome::Infrastructure;
        }
    };
    // Reports, from the run folder as written.
    let mut read_back = None;
    // A report that could not be written, or a run folder that could not be read back:
    // the run's result is not fully delivered (exit 3).
    let mut not_delivered = false;
    if !args.reporter.is_empty() || args.json {
        match crate::report::read(&report.dir) {
            Ok(mut r) => {
                r.dir = ctx.shown(&report.dir);
                for f in &args.reporter {
                    match crate::report::write(&r, *f, &report.dir) {
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
                        crate::text::printable_json(&crate::report::render(
                            &r,
                            crate::report::Format::Json
                        ))
                    );
                }
                read_back = Some(r);
            }
            Err(e) => {
                tell!("error: reading the run folder for reports: {e}");
                not_delivered = true;
            }
        }
    }
    progress.done();
    let say = |line: String| {
        let line = crate::text::for_terminal(&line);
        if to_stdout {
            println!("{line}")
        } else {
            eprintln!("{line}")
        }
    };
    // The whole run as recorded (this invocation's case-runs, and those reused from the cache
    // or kept from the run being resumed), each read once and kept small.
    // (Read once: from the reports' read when there was one.)
    let (rows, agg) = match read_back {
        Some(r) => (crate::report::model::rows(&r.case_runs), r.statistics),
        None => {
            let rows = aggregate::rows_of(&report.dir).unwrap_or_else(|e| {
                tell!("error: reading the run folder back: {e}");
                not_delivered = true;
                Vec::new()
            });
            let agg = aggregate::aggregate(
                &rows,
                aggregate::Settings {
                    min_pass_rate: opts.settings.min_pass_rate,
                    pass_k: opts.settings.pass_k,
                },
            );
            (rows, agg)
        }
    };
    for l in summary(&rows, &agg, |d| {
        ctx.shown(&report.dir.join(d)).display().to_string()
    }) {
        say(l);
    }
    let reused_from = |from: &str| report.reused.iter().filter(|r| r.from == from).count();
    // The headline, in cases; then the case-runs as detail, the comparison arms apart (a
    // baseline's failures are what the skill is measured against, not failures).
    say(crate::report::headline::headline(&agg));
    let mut tally: std::collections::BTreeMap<&str, usize> = Default::default();
    for r in &rows {
        *tally.entry(r.outcome.word()).or_default() += 1;
    }
    say(case_runs_line(&rows, adaptive, reused_from));
    if adaptive
        && let Ok(run) = crate::record::read_run(&report.dir)
        && let Some(a) = &run.adaptive
    {
        let settled = a
            .cases
            .iter()
            .filter(|c| c.settled == "pass" || c.settled == "fail")
            .count();
        say(format!(
            "adaptive runs: {} case-runs for {} case(s) in {} round(s), against {} with --runs {} (saved {}); settled {} by {} (threshold {}), {} at the maximum",
            a.runs_used,
            a.cases.len(),
            a.rounds,
            a.runs_fixed,
            a.max_runs,
            a.runs_fixed.saturating_sub(a.runs_used),
            settled,
            a.rule,
            a.threshold,
            a.cases.iter().filter(|c| c.settled == "max-runs").count()
        ));
        for c in &a.cases {
            say(format!(
                "  {}/{}: {} run(s), {} passed: {}",
                c.suite, c.case, c.runs, c.passed, c.settled
            ));
        }
    }
    say(format!("run folder: {}", ctx.shown(&report.dir).display()));
    // The history, for `assay report trend` and `audit` (not for an interrupted run: its
    // `--resume` appends the whole run).
    if !report.interrupted
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
    if judge_failed && judge_failures.is_empty() {
        tell!("error: the judge failed on some case-runs; their judge items are not graded");
    } else if judge_failed {
        let shown: Vec<&str> = judge_failures.iter().take(3).map(String::as_str).collect();
        let more = judge_failures.len().saturating_sub(shown.len());
        tell!(
            "error: the judge failed on {} case-run(s), whose judge items are not graded: {}{}",
            judge_failures.len(),
            printable(&shown.join("; ")),
            if more > 0 {
                format!("; and {more} more (each result.json has its cause)")
            } else {
                String::new()
            }
        );
    }
    if report.output_cut {
        tell!(
            "error: some agents wrote more output than assay keeps (64 MiB, or 16 MiB in one line); their case-runs are not graded"
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
    } else if tally.contains_key("error") || judge_failed || report.output_cut || not_delivered {
        Outcome::Infrastructure
    } else if agg.failed() {
        Outcome::Failed
    } else {
        Outcome::Success
    }
}

/// The end-of-run summary: failures first (each with why and where to look), then the
/// statistics over repeated runs, trigger evals and baselines, when there are any.
fn summary(
    rows: &[aggregate::Row],
    agg: &aggregate::Aggregates,
    shown: impl Fn(&std::path::Path) -> String,
) -> Vec<String> {
    let mut out = Vec::new();
    // Failures: failing cases (by their verdict over runs), failing trigger queries, errors.
    let mut failing: Vec<String> = Vec::new();
    for c in agg.cases.iter().filter(|c| c.verdict != CaseVerdict::Pass) {
        if c.verdict == CaseVerdict::None {
            continue;
        }
        let r = rows.iter().find(|r| {
            r.suite == c.suite
                && r.case == c.case
                && !r.baseline
                && !r.trigger
                && r.outcome.word() != "passed"
        });
        let why = c
            .reason
            .clone()
            .or_else(|| r.and_then(|r| r.reason.clone()))
            .unwrap_or_default();
        failing.push(format!(
            "  {}/{}: {}\n    {}",
            c.suite,
            c.case,
            why.lines().next().unwrap_or(""),
            r.map(|r| shown(&r.dir)).unwrap_or_default()
        ));
    }
    for t in agg.triggers.iter().filter(|t| !t.passed) {
        let r = rows.iter().find(|r| r.suite == t.suite && r.case == t.id);
        failing.push(format!(
            "  {}/{}: \"{}\" fired in {}/{} runs (should {}trigger, threshold {})\n    {}",
            t.suite,
            t.id,
            crate::text::gist(&t.query, 60),
            t.fired,
            t.runs,
            if t.should_trigger { "" } else { "not " },
            t.threshold,
            r.map(|r| shown(&r.dir)).unwrap_or_default()
        ));
        for b in crate::report::routing::broken(t) {
            failing.push(format!("    routing: {b}"));
        }
    }
    if !failing.is_empty() {
        out.push(String::new());
        out.push(format!("failures ({}):", failing.len()));
        out.extend(failing);
    }
    // The expectations grader's review of the evals themselves: expectations a run doing
    // nothing useful would pass. A model wrote it: one line per item, printed escaped.
    let feedback = aggregate::feedback_by_case(rows);
    if !feedback.is_empty() {
        let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(String::new());
        out.push(format!(
            "weak expectations flagged by the judge ({} case{}):",
            feedback.len(),
            if feedback.len() == 1 { "" } else { "s" }
        ));
        for (suite, case, f) in feedback {
            out.push(format!("  {suite}/{case}:"));
            for s in &f.suggestions {
                out.push(format!(
                    "    - \"{}\": {}",
                    one_line(&s.assertion),
                    one_line(&s.reason)
                ));
            }
            if !f.overall.trim().is_empty() {
                out.push(format!("    overall: {}", one_line(&f.overall)));
            }
        }
    }
    if agg.cases.iter().any(|c| c.runs > 1) {
        out.push(String::new());
        out.push(format!(
            "statistics over runs (pass@k and pass^k with k = {}):",
            agg.settings.pass_k
        ));
        for c in agg.cases.iter().filter(|c| c.runs > 0) {
            out.push(format!(
                "  {}/{}: {}/{} passed, {}, pass@{} {}, pass^{} {}, score {} ± {}, stability {}{}",
                c.suite,
                c.case,
                c.pass_rate.passed,
                c.runs,
                interval(&c.pass_rate),
                c.k,
                num(c.pass_at_k),
                c.k,
                num(c.pass_hat_k),
                num(c.score_mean),
                num(c.score_sd),
                num(Some(c.stability)),
                if c.flaky { " · flaky" } else { "" }
            ));
        }
        for t in agg.suites.iter().chain(std::iter::once(&agg.total)) {
            out.push(format!(
                "  {}: {}/{} cases passed; case-runs {}/{} passed, {}{}",
                if t.suite == "*" {
                    "all suites"
                } else {
                    &t.suite
                },
                t.cases_passed,
                t.cases,
                t.pass_rate.passed,
                t.pass_rate.n,
                interval(&t.pass_rate),
                if t.flaky.is_empty() {
                    String::new()
                } else {
                    format!("; flaky: {}", t.flaky.join(", "))
                }
            ));
        }
    }
    if !agg.triggers.is_empty() {
        out.push(String::new());
        for s in &agg.trigger_suites {
            out.push(format!(
                "triggers of {} ({}): {}/{} queries passed, precision {}, recall {}, accuracy {}",
                s.suite,
                if s.mode == "judge" {
                    "estimated by the judge from the name and description, not run"
                } else {
                    "observed through the agent"
                },
                s.passed,
                s.queries,
                num(s.precision),
                num(s.recall),
                num(s.accuracy),
            ));
            if let Some(w) = &s.warning {
                out.push(format!("  warning: {w}"));
            }
            let routed = crate::report::routing::shown(agg);
            for t in agg.triggers.iter().filter(|t| t.suite == s.suite) {
                out.push(format!(
                    "  {} {} \"{}\": fired {}/{} ({}), should {}trigger{}",
                    if t.passed { "PASS" } else { "FAIL" },
                    t.id,
                    crate::text::gist(&t.query, 50),
                    t.fired,
                    t.runs,
                    pct(t.trigger_rate),
                    if t.should_trigger { "" } else { "not " },
                    if routed && t.mode != "judge" {
                        format!("; reached: {}", crate::report::routing::reached(t))
                    } else {
                        String::new()
                    }
                ));
                for b in crate::report::routing::broken(t) {
                    out.push(format!("    routing: {b}"));
                }
            }
            if let Some(note) = agg
                .triggers
                .iter()
                .find(|t| t.suite == s.suite)
                .and_then(|t| t.note.clone())
            {
                out.push(format!("  note: {note}"));
            }
        }
    }
    if !agg.routing.is_empty() {
        out.push(String::new());
        out.push(
            "routing across skills (each over the queries that say whether it should fire):".into(),
        );
        for s in &agg.routing {
            out.push(format!(
                "  {}: precision {}, recall {} over {} queries (tp {}, fp {}, tn {}, fn {}){}",
                crate::text::one_line(&s.skill),
                num(s.precision),
                num(s.recall),
                s.queries,
                s.true_positives,
                s.false_positives,
                s.true_negatives,
                s.false_negatives,
                if s.unlabelled_firings.is_empty() {
                    String::new()
                } else {
                    format!("; also fired on {}", s.unlabelled_firings.join(", "))
                }
            ));
        }
    }
    if let Some(first) = agg.baselines.first() {
        out.push(String::new());
        out.push(format!(
            "with the skill against the {} (Fisher's exact test on pass counts):",
            first.against
        ));
        for b in agg.baselines.iter().chain(agg.baseline_total.iter()) {
            out.push(format!(
                "  {}: {}/{} vs {}/{} passed ({:+.0} points), duration {}, tokens {}, cost {}, p = {:.4}",
                if b.case == "*" { "all cases".to_string() } else { format!("{}/{}", b.suite, b.case) },
                b.skill.pass_rate.passed,
                b.skill.pass_rate.n,
                b.baseline.pass_rate.passed,
                b.baseline.pass_rate.n,
                b.delta_pass_rate * 100.0,
                signed(b.delta_duration_ms, 1000.0, " s"),
                signed(b.delta_tokens, 1.0, ""),
                b.delta_cost_usd.map(|c| format!("{c:+.4} USD")).unwrap_or_else(|| "–".into()),
                b.p_value
            ));
        }
    }
    if !out.is_empty() {
        out.push(String::new());
    }
    out
}

/// One line for a case-run taken from the cache or kept from the resumed run.
/// An outcome as the column that starts each case-run's line.
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
    println!("{}", plan.line(0));
    for u in &plan.unavailable {
        println!("{}", printable(&format!("would stop: {u}")));
    }
    println!("dry run: nothing was started");
    Outcome::Success
}

fn mark(outcome: CaseOutcome) -> &'static str {
    match outcome {
        CaseOutcome::Passed => "PASS      ",
        CaseOutcome::Failed => "FAIL      ",
        CaseOutcome::NotGraded => "NOT GRADED",
        CaseOutcome::Error => "ERROR     ",
        CaseOutcome::Missing => "MISSING   ",
        CaseOutcome::Skipped => "skipped   ",
    }
}

/// The case-runs as detail under the headline: the skill's and trigger queries' outcomes,
/// those reused, then the comparison arms' apart (`12 case-runs: 6 passed · baseline runs: 6
/// failed`).
fn case_runs_line(
    rows: &[aggregate::Row],
    adaptive: bool,
    reused_from: impl Fn(&str) -> usize,
) -> String {
    let tally_of = |compared: bool| {
        let mut t: std::collections::BTreeMap<&str, usize> = Default::default();
        for r in rows.iter().filter(|r| r.baseline == compared) {
            *t.entry(r.outcome.word()).or_default() += 1;
        }
        t.iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
    };
    let mut parts = tally_of(false);
    let kept = if adaptive {
        "kept from earlier rounds"
    } else {
        "kept from the resumed run"
    };
    for (from, what) in [("cache", "from the cache"), ("resume", kept)] {
        let n = reused_from(from);
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    let compared = tally_of(true);
    let mut arms: Vec<&str> = Vec::new();
    for w in rows.iter().filter(|r| r.baseline).map(|r| r.variant.word()) {
        if !arms.contains(&w) {
            arms.push(w);
        }
    }
    let arms_said = if compared.is_empty() {
        String::new()
    } else {
        format!(" · {} runs: {}", arms.join(" and "), compared.join(", "))
    };
    format!(
        "{} case-run{}: {}{arms_said}",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        parts.join(", ")
    )
}

/// How many runs of each case and variant the plan holds (for "run 2/3"), by suite, case and
/// variant.
type Totals = std::collections::HashMap<(String, String, &'static str), u32>;

/// Which run a line is about, where the case has more than one: ` [baseline, run 2/3]`,
/// ` [run 1/3]`, ` [baseline]`; nothing for the one run of the skill.
fn which_run(
    suite: &str,
    case: &str,
    variant: crate::run::Variant,
    run: u32,
    totals: &Totals,
) -> String {
    let total = totals
        .get(&(suite.to_string(), case.to_string(), variant.word()))
        .copied()
        .unwrap_or(run)
        .max(run);
    let mut parts = Vec::new();
    if variant.is_comparison() {
        parts.push(variant.word().to_string());
    }
    if total > 1 {
        parts.push(format!("run {run}/{total}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" [{}]", parts.join(", "))
    }
}

/// A trigger query's text, on one line and shortened, for the line that names its id.
fn query_text(trigger: Option<&crate::record::case_run::TriggerRecord>) -> String {
    let Some(t) = trigger else {
        return String::new();
    };
    format!(" \"{}\"", crate::text::gist(&t.query, 60))
}

fn reused_line(r: &run::Reused, totals: &Totals) -> String {
    let mark = mark(r.outcome);
    format!(
        "{mark} {}/{}{} ({})",
        r.suite,
        r.case,
        which_run(&r.suite, &r.case, r.variant, r.run, totals),
        if r.from == "cache" {
            "from the cache"
        } else {
            "kept from the resumed run"
        }
    )
}

/// One line per finished case-run: which case (a trigger query with its text), which variant
/// and run, how long, how many checks passed and why not.
fn line(r: &CaseRunRecord, totals: &Totals) -> String {
    let mark = mark(r.outcome());
    let mut s = format!(
        "{mark} {}/{}{}{} ({:.1}s)",
        r.suite,
        r.case,
        query_text(r.trigger.as_ref()),
        which_run(&r.suite, &r.case, r.variant, r.run, totals),
        r.duration_ms as f64 / 1000.0
    );
    if let Some(g) = r.grade.as_ref().filter(|g| g.checks_total > 0) {
        s.push_str(&format!(" [{}/{} checks]", g.checks_passed, g.checks_total));
    }
    let reason = r
        .grade
        .as_ref()
        .filter(|g| g.verdict != crate::assert::verdict::Verdict::Pass)
        .and_then(|g| g.reasons.first().cloned())
        .or_else(|| r.reason.clone());
    if let Some(reason) = reason {
        s.push_str(&format!(": {}", reason.lines().next().unwrap_or("")));
    }
    if r.outcome() != CaseOutcome::Passed
        && let Some(f) = r.failed_tool_calls.first()
    {
        // (The line is made printable where it is printed.)
        let said: String = f
            .output
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(120)
            .collect();
        let name = &f.name;
        s.push_str(&format!(
            " ({} failed tool call{}; first {name}: {said})",
            r.failed_tool_calls.len(),
            if r.failed_tool_calls.len() == 1 {
                ""
            } else {
                "s"
            }
        ));
    }
    if let (Some(t), Some(false)) = (&r.target, r.target_exercised) {
        // A verdict about a target that never ran says little about it.
        s.push_str(&format!(" [target {t} not exercised]"));
    }
    if let Some(ws) = &r.workspace {
        s.push_str(&format!(" [workspace kept: {}]", ws.display()));
    }
    s
}

fn stderr_is_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal()
}

/// The live progress display on a terminal: done, running and queued case-runs, pass and
/// fail counts, elapsed time and ETA. Off the terminal (CI logs, pipes) nothing is drawn and
/// each finished case-run is one plain line.
struct Progress {
    enabled: bool,
    bar: Option<indicatif::ProgressBar>,
    jobs: usize,
    passed: usize,
    failed: usize,
}

impl Progress {
    fn new(enabled: bool) -> Self {
        Progress {
            enabled,
            bar: None,
            jobs: 1,
            passed: 0,
            failed: 0,
        }
    }

    fn start(&mut self, total: usize, jobs: usize) {
        if !self.enabled || total == 0 {
            return;
        }
        let color = super::stderr_color();
        let template = if color {
            "{elapsed_precise} [{bar:30.green/red}] {pos}/{len} {msg} · ETA {eta}"
        } else {
            "{elapsed_precise} [{bar:30}] {pos}/{len} {msg} · ETA {eta}"
        };
        let bar = indicatif::ProgressBar::new(total as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        self.jobs = jobs;
        self.bar = Some(bar);
        self.message();
    }

    fn message(&self) {
        if let Some(bar) = &self.bar {
            let left = bar.length().unwrap_or(0).saturating_sub(bar.position()) as usize;
            let running = left.min(self.jobs);
            bar.set_message(format!(
                "done · {running} running · {} queued · {} passed · {} not passed",
                left - running,
                self.passed,
                self.failed
            ));
        }
    }

    fn finished(&mut self, passed: bool) {
        if passed {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        self.message();
    }

    fn println(&self, line: &str) {
        if let Some(bar) = &self.bar {
            bar.println(line);
        }
    }

    fn done(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
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
    rows: &[aggregate::Row],
    file: &std::path::Path,
) -> Result<(), String> {
    let run = crate::record::read_run(dir).map_err(|e| e.to_string())?;
    let hashes: std::collections::BTreeMap<String, String> = suites
        .iter()
        .filter_map(|s| {
            let k = s.skill.as_ref()?;
            Some((s.id.clone(), crate::run::cache::content_hash(&k.path)))
        })
        .collect();
    // Each suite's own files: its spec (and for a folder format, the folder).
    let suite_hashes: std::collections::BTreeMap<String, String> = suites
        .iter()
        .map(|s| {
            let parts: String = s
                .spec_paths(&ctx.cwd)
                .iter()
                .map(|p| crate::run::cache::content_hash(p))
                .collect();
            let hash = blake3::hash(parts.as_bytes()).to_hex()[..16].to_string();
            (s.id.clone(), hash)
        })
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
    let failed: Vec<&canary::Canary> = list.iter().filter(|c| c.failed()).collect();
    if failed.is_empty() {
        for c in &list {
            tell!(
                "canary: `{}` fired through {} in {} of {} run(s)",
                c.skill,
                c.harness,
                c.fired,
                c.told
            );
        }
        return None;
    }
    let kept = dir.keep();
    for c in failed {
        tell!(
            "error: the trigger canary failed: `{}` did not fire on {:?} in {} run(s) through {}: the skill is not installed where the agent looks, or assay cannot see it fire, so every trigger rate this run reported would be wrong",
            c.skill,
            canary::query(&c.skill),
            c.told,
            c.harness
        );
    }
    tell!("  the canary's run folder: {}", kept.join("run").display());
    tell!(
        "  fix: check the skill's name and where it is installed, read the canary's transcript; or pass --no-canary"
    );
    tell!("nothing else was run");
    Some(Outcome::Infrastructure)
}
