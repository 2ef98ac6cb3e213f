//! The live display of a run on the terminal: a line per finished case-run (which case, which
//! arm and run, how long, how many checks passed, why not), and on a terminal a progress bar
//! (done, running, queued, passed, not passed, ETA). Fed by the runner's events.

use crate::record::case_run::{Arm, CaseRunRecord, Outcome};
use crate::run::{Reused, RunEvent};

/// What `assay run` shows while it runs, and the judge failures it names at the end.
pub struct Live {
    progress: Progress,
    totals: LiveTotals,
    /// Lines go to standard output (else standard error: stdout is the JSON report).
    to_stdout: bool,
    /// Each case-run the judge failed on, with why: `suite/case [run 1/3]: cause`.
    pub judge_failures: Vec<String>,
}

impl Live {
    /// `bar`: draw the progress bar (standard error is a terminal and stdout is not JSON).
    pub fn new(to_stdout: bool, bar: bool, color: bool) -> Live {
        Live {
            progress: Progress::new(bar, color),
            totals: LiveTotals::new(),
            to_stdout,
            judge_failures: Vec::new(),
        }
    }

    /// One event of the runner: the plan's line when it starts, a line per case-run.
    pub fn event(&mut self, event: RunEvent<'_>) {
        match event {
            RunEvent::Started {
                case_runs,
                jobs,
                plan,
                reused,
                reused_agents,
                ..
            } => {
                // What the run costs, before any agent starts (stderr: stdout may be the
                // report).
                eprintln!("{}", plan.line(reused, reused_agents));
                if let Some(shard) = &plan.shard {
                    eprintln!("{}", shard.line());
                }
                for a in &plan.advisories {
                    eprintln!("{}", crate::text::printable(a));
                }
                for row in &plan.case_runs {
                    let key = (row.suite.clone(), row.case.clone(), row.variant.word());
                    let n = self.totals.entry(key).or_default();
                    *n = (*n).max(row.run);
                }
                let color = self.progress.color;
                self.progress.start(case_runs, jobs, color)
            }
            RunEvent::Finished(r) => {
                self.progress.finished(r.outcome() == Outcome::Passed);
                if let Some(e) = r.judge.as_ref().and_then(|j| j.error.as_ref()) {
                    let which = which_run(&r.suite, &r.case, r.variant, r.run, &self.totals);
                    self.judge_failures
                        .push(format!("{}/{}{which}: {e}", r.suite, r.case));
                }
                self.say(line(r, &self.totals));
            }
            RunEvent::Reused(r) => {
                self.progress.finished(r.outcome == Outcome::Passed);
                self.say(reused_line(r, &self.totals));
            }
            RunEvent::Retrying(retry) => {
                let which = which_run(
                    &retry.suite,
                    &retry.case,
                    retry.variant,
                    retry.run,
                    &self.totals,
                );
                self.say(retry.line(&which));
            }
        }
    }

    fn say(&self, text: String) {
        let text = crate::text::for_terminal(&text);
        if self.progress.bar.is_some() {
            self.progress.println(&text);
        } else if self.to_stdout {
            println!("{text}")
        } else {
            eprintln!("{text}")
        }
    }

    /// The run ended: the bar goes.
    pub fn done(&mut self) {
        self.progress.done();
    }
}

/// An outcome as the column that starts each case-run's line.
fn mark(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "PASS      ",
        Outcome::Failed => "FAIL      ",
        Outcome::NotGraded => "NOT GRADED",
        Outcome::Error => "ERROR     ",
        Outcome::Missing => "MISSING   ",
        Outcome::Skipped => "skipped   ",
    }
}

/// How many runs of each case and variant the plan holds (for "run 2/3"), by suite, case and
/// variant.
pub type LiveTotals = std::collections::HashMap<(String, String, &'static str), u32>;

/// Which run a line is about, where the case has more than one: ` [baseline, run 2/3]`,
/// ` [run 1/3]`, ` [baseline]`; nothing for the one run of the skill.
fn which_run(suite: &str, case: &str, variant: Arm, run: u32, totals: &LiveTotals) -> String {
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

/// A named case's name, after its id (` (brief-from-notes)`).
fn name_text(name: Option<&str>) -> String {
    name.map(|n| format!(" ({})", crate::text::gist(n, 60)))
        .unwrap_or_default()
}

/// One line for a case-run taken from the cache or kept from the resumed run.
fn reused_line(r: &Reused, totals: &LiveTotals) -> String {
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
fn line(r: &CaseRunRecord, totals: &LiveTotals) -> String {
    let mark = mark(r.outcome());
    let mut s = format!(
        "{mark} {}/{}{}{}{} ({:.1}s)",
        r.suite,
        r.case,
        name_text(r.case_name.as_deref()),
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
        .filter(|g| g.verdict != crate::record::grading::Verdict::Pass)
        .and_then(|g| g.reasons.first().cloned())
        .or_else(|| r.reason.clone());
    if let Some(reason) = reason {
        s.push_str(&format!(": {}", reason.lines().next().unwrap_or("")));
    }
    if r.outcome() != Outcome::Passed
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

/// The live progress display on a terminal: done, running and queued case-runs, pass and
/// fail counts, elapsed time and ETA. Off the terminal (CI logs, pipes) nothing is drawn and
/// each finished case-run is one plain line.
struct Progress {
    enabled: bool,
    color: bool,
    bar: Option<indicatif::ProgressBar>,
    jobs: usize,
    passed: usize,
    failed: usize,
}

impl Progress {
    fn new(enabled: bool, color: bool) -> Self {
        Progress {
            enabled,
            color,
            bar: None,
            jobs: 1,
            passed: 0,
            failed: 0,
        }
    }

    fn start(&mut self, total: usize, jobs: usize, color: bool) {
        if !self.enabled || total == 0 {
            return;
        }
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
