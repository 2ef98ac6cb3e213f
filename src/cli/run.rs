//! `assay run`: load, plan, execute through the harnesses, record.

use super::{RunArgs, load, print_problems};
use crate::exit::Outcome;
use crate::run::{self, CaseRunResult, NotStarted, RunEvent, RunOptions};
use crate::spec::formats::LoadCtx;

pub fn run(ctx: &LoadCtx, args: &RunArgs, plugins: &crate::plugin::Plugins) -> Outcome {
    let loaded = load(ctx, &args.selection);
    print_problems(&loaded.problems);
    if loaded.problems.iter().any(|p| p.is_error()) {
        return Outcome::BadInput;
    }
    if loaded.suites.is_empty() {
        eprintln!("error: no eval suites found");
        return Outcome::BadInput;
    }
    let opts = RunOptions {
        harness: args.harness.clone(),
        model: args.model.clone(),
        timeout: args.timeout,
        jobs: args.jobs.unwrap_or_else(default_jobs),
        filter: args.filter.clone(),
        keep_workspaces: args.keep_workspaces,
        output_dir: args.output_dir.clone(),
        workspace_dir: args.workspace_dir.as_ref().map(|d| ctx.cwd.join(d)),
        trust: args.trust,
        pass_env: args.pass_env.clone(),
        judge: args.judge.clone(),
        allow_private_urls: args.allow_private_urls,
        plugins: plugins.clone(),
        command: args
            .command
            .as_deref()
            .map(|c| c.split_whitespace().map(String::from).collect())
            .unwrap_or_default(),
    };
    let to_stdout = !args.json;
    let mut progress = Progress::new(!args.json && stderr_is_terminal());
    let report = match run::run(ctx, &loaded.suites, &opts, |event| match event {
        RunEvent::Started {
            case_runs, jobs, ..
        } => progress.start(case_runs, jobs),
        RunEvent::Finished(r) => {
            progress.finished(r);
            if progress.bar.is_some() {
                progress.println(&line(r));
            } else if to_stdout {
                println!("{}", line(r))
            } else {
                eprintln!("{}", line(r))
            }
        }
    }) {
        Ok(r) => r,
        Err(NotStarted::BadInput(problems)) => {
            print_problems(&problems);
            return Outcome::BadInput;
        }
        Err(NotStarted::Unavailable(list)) => {
            for (name, u) in list {
                eprintln!("error: harness `{name}`: {}", u.message);
                if !u.fix.is_empty() {
                    eprintln!("  help: {}", u.fix);
                }
            }
            eprintln!("nothing was run");
            return Outcome::Infrastructure;
        }
    };
    // Reports, from the run folder as written.
    if !args.reporter.is_empty() || args.json {
        match crate::report::read(&report.dir) {
            Ok(mut r) => {
                r.dir = ctx.shown(&report.dir);
                for f in &args.reporter {
                    match crate::report::write(&r, *f, &report.dir) {
                        Ok(paths) => {
                            for p in paths {
                                eprintln!("report: {}", ctx.shown(&p).display());
                            }
                        }
                        Err(e) => eprintln!("error: writing the {f:?} report: {e}"),
                    }
                }
                if args.json {
                    print!("{}", crate::report::render(&r, crate::report::Format::Json));
                }
            }
            Err(e) => eprintln!("error: reading the run folder for reports: {e}"),
        }
    }
    progress.done();
    let tally = run::tally(&report.results);
    let parts: Vec<String> = tally.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let say = |line: String| {
        if to_stdout {
            println!("{line}")
        } else {
            eprintln!("{line}")
        }
    };
    // Failures first, each with why and where to look.
    let failing: Vec<&CaseRunResult> = report
        .results
        .iter()
        .filter(|r| matches!(run::outcome(r), "failed" | "error"))
        .collect();
    if !failing.is_empty() {
        say(String::new());
        say(format!("failures ({}):", failing.len()));
        for r in failing {
            let why = r
                .grade
                .as_ref()
                .and_then(|g| g.reasons.first().cloned())
                .or_else(|| r.reason.clone())
                .unwrap_or_default();
            say(format!(
                "  {}/{}: {}\n    {}",
                r.suite,
                r.case,
                why.lines().next().unwrap_or(""),
                ctx.shown(&r.dir).display()
            ));
        }
        say(String::new());
    }
    say(format!(
        "{} case-run{}: {}",
        report.results.len(),
        if report.results.len() == 1 { "" } else { "s" },
        parts.join(", ")
    ));
    say(format!("run folder: {}", ctx.shown(&report.dir).display()));
    let judge_failed = report
        .results
        .iter()
        .any(|r| r.judge.as_ref().is_some_and(|j| j.error.is_some()));
    if tally.contains_key("not graded") {
        say(
            "not graded: judge items (expectations, criteria, rubrics) that no judge graded are never counted as passed".into(),
        );
    }
    if judge_failed {
        eprintln!("error: the judge failed on some case-runs; their judge items are not graded");
    }
    if tally.contains_key("error") || judge_failed {
        Outcome::Infrastructure
    } else if tally.contains_key("failed") {
        Outcome::Failed
    } else {
        Outcome::Success
    }
}

fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(4)
}

/// One line per finished case-run.
fn line(r: &CaseRunResult) -> String {
    let mark = match run::outcome(r) {
        "passed" => "PASS      ",
        "failed" => "FAIL      ",
        "not graded" => "NOT GRADED",
        "error" => "ERROR     ",
        _ => "skipped   ",
    };
    let mut s = format!(
        "{mark} {}/{} ({:.1}s)",
        r.suite,
        r.case,
        r.duration_ms as f64 / 1000.0
    );
    if let Some(g) = r.grade.as_ref().filter(|g| g.checks_total > 0) {
        s.push_str(&format!(" [{}/{} checks]", g.checks_passed, g.checks_total));
    }
    let reason = r
        .grade
        .as_ref()
        .filter(|g| g.verdict == crate::assert::verdict::Verdict::Fail)
        .and_then(|g| g.reasons.first().cloned())
        .or_else(|| r.reason.clone());
    if let Some(reason) = reason {
        s.push_str(&format!(": {}", reason.lines().next().unwrap_or("")));
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

    fn finished(&mut self, r: &CaseRunResult) {
        if run::outcome(r) == "passed" {
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
