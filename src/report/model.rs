//! A run as reports see it, read from its run folder: `run.json` and every case-run's
//! `result.json`. Every report — written at the end of `assay run` or regenerated later by
//! `assay report` — is made from this, so they always agree.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::record::case_run::{Arm, Kind};
use crate::record::feedback::{FeedbackFile, FeedbackItem};
use crate::record::grading::{CheckOutcome, JudgeRecord};
use crate::record::layout;
use crate::record::{CaseRunRecord, RunRecord};
use crate::record::{case_run::Outcome, folder::ReadError};
/// The JSON report's schema; a new version is a new name, old ones keep their meaning.
pub const SCHEMA: &str = "assay.report/v1";

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub assay_version: String,
    /// The run folder.
    pub dir: PathBuf,
    pub started: Option<String>,
    /// `run.json` as recorded: options, harness versions, judges, plugins, projects.
    pub config: RunRecord,
    /// The run in cases, as every report heads it: `3 cases: 2 passed, 1 failed · 12 trigger
    /// queries: 10 passed, 2 failed · with the skill 2/3 vs without 0/3 (…)`.
    pub headline: String,
    /// The case-runs, every arm's (the cases' verdicts are in `statistics`).
    pub summary: Summary,
    /// Statistics over runs, trigger evals and baselines.
    pub statistics: super::aggregate::Aggregates,
    pub case_runs: Vec<CaseRun>,
    /// The reviewer's `feedback.json` in the run folder, when there is one (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback: Option<FeedbackFile>,
    /// What could not be read but did not stop the report (a malformed `feedback.json`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
    pub not_graded: usize,
    /// Case-runs whose agent ran without a sandbox (`--sandbox none`).
    pub unsandboxed: usize,
    pub errors: usize,
    pub skipped: usize,
    /// Planned case-runs never recorded (the run crashed or stopped first).
    pub missing: usize,
    /// Passed over total, skipped ones left out (0 when nothing ran).
    pub pass_rate: f64,
    pub duration_ms: u64,
    pub cost_usd: Option<f64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseRun {
    pub suite: String,
    pub case: String,
    /// The case's name beside its id (skill-creator's `name`), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub run: u32,
    pub kind: Kind,
    pub variant: Arm,
    /// Reused from the cache instead of run.
    pub cached: bool,
    pub outcome: Outcome,
    /// Why it is not a pass (the first reason), when it is not.
    pub reason: Option<String>,
    pub harness: String,
    pub model: Option<String>,
    pub duration_ms: u64,
    pub cost_usd: Option<f64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub score: Option<f64>,
    pub checks: Vec<CheckOutcome>,
    pub judge: Option<JudgeRecord>,
    /// The case-run's folder, relative to the run folder.
    pub dir: PathBuf,
    pub prompt: String,
    /// The start of the output (at most 2,000 characters).
    pub output_snippet: String,
    /// `result.json` as recorded.
    #[serde(skip)]
    pub result: CaseRunRecord,
    /// The normalized transcript (`transcript.jsonl`), for the HTML report.
    #[serde(skip)]
    pub transcript: Vec<serde_json::Value>,
    /// Created or changed files kept in `artifacts/` (path, text when small and UTF-8).
    #[serde(skip)]
    pub artifacts: Vec<(String, Option<String>)>,
}

impl CaseRun {
    /// What a case-run's `result.json` says, in the folder `dir` (relative to the run folder);
    /// its prompt, output, transcript and artifacts are read beside it by [`read`].
    pub fn of(r: CaseRunRecord, dir: PathBuf) -> CaseRun {
        CaseRun {
            suite: r.suite.clone(),
            case: r.case.clone(),
            name: r.case_name.clone(),
            run: r.run,
            kind: r.kind,
            variant: r.variant,
            cached: r.cached.is_some(),
            outcome: r.outcome(),
            reason: r.why_not_passed().map(str::to_string),
            harness: r.harness.clone(),
            model: r.model.clone(),
            duration_ms: r.duration_ms,
            cost_usd: r.cost_usd,
            input_tokens: r.usage.input_tokens,
            output_tokens: r.usage.output_tokens,
            score: r.grade.as_ref().map(|g| g.score),
            checks: r.checks.clone(),
            judge: r.judge.clone(),
            dir,
            prompt: String::new(),
            output_snippet: String::new(),
            transcript: Vec::new(),
            artifacts: Vec::new(),
            result: r,
        }
    }
}

impl Report {
    /// The reviewer's verdict on a case-run, from `feedback.json`.
    pub fn review(&self, c: &CaseRun) -> Option<&FeedbackItem> {
        self.feedback
            .as_ref()?
            .find(&c.suite, &c.case, c.run, c.variant)
    }
}

/// The statistics' rows of read case-runs.
pub fn rows(case_runs: &[CaseRun]) -> Vec<super::rows::Row> {
    case_runs
        .iter()
        .map(|c| {
            let mut row = super::rows::Row::of(&c.result);
            row.dir = c.dir.clone();
            row
        })
        .collect()
}

/// The most of one case-run's transcript a report reads (and so embeds).
const MAX_TRANSCRIPT: u64 = 2 << 20;
/// The most of one case-run's prompt a report reads.
const MAX_PROMPT: u64 = 256 << 10;

/// The first `max` bytes of a file (a character cut at the end is dropped), and whether there
/// was more; empty when it cannot be read.
fn read_prefix(path: &Path, max: u64) -> (String, bool) {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(path) else {
        return (String::new(), false);
    };
    let mut bytes = Vec::new();
    if f.take(max + 1).read_to_end(&mut bytes).is_err() {
        return (String::new(), false);
    }
    let cut = bytes.len() as u64 > max;
    bytes.truncate(max as usize);
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut b = e.into_bytes();
            b.truncate(valid);
            String::from_utf8(b).unwrap_or_default()
        }
    };
    (text, cut)
}

/// A transcript's events as read (at most [`MAX_TRANSCRIPT`] of it); a cut one ends with an
/// event saying where the whole is.
fn transcript((text, cut): (String, bool), rel: &Path) -> Vec<serde_json::Value> {
    let mut lines: Vec<&str> = text.lines().collect();
    if cut {
        // The last line read is likely partial.
        lines.pop();
    }
    let mut events: Vec<serde_json::Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if cut {
        events.push(serde_json::json!({
            "type": "output",
            "text": format!(
                "[assay: the transcript is longer than a report shows ({} MiB); the whole is {}/transcript.jsonl]",
                MAX_TRANSCRIPT >> 20,
                rel.display()
            ),
        }));
    }
    events
}

/// Reads a run folder. Case-runs still running (no `result.json` yet) are not in it; a folder
/// left by an interrupted run reads like any other, its unrecorded case-runs `missing`.
pub fn read(dir: &Path) -> Result<Report, ReadError> {
    let config = crate::record::read_run(dir)?;
    let mut case_runs = Vec::new();
    for (rel, r) in crate::record::read_case_runs(dir, &config)? {
        let case_dir = dir.join(&rel);
        let read = |name: &str, max: u64| read_prefix(&case_dir.join(name), max);
        case_runs.push(CaseRun {
            prompt: read(layout::PROMPT_TXT, MAX_PROMPT).0,
            output_snippet: crate::text::shorten(&read(layout::OUTPUT_TXT, 8 << 10).0, 2000),
            transcript: transcript(read(layout::TRANSCRIPT_JSONL, MAX_TRANSCRIPT), &rel),
            artifacts: r
                .artifacts
                .iter()
                .filter(|a| a.kind != crate::record::changes::ChangeKind::Deleted)
                .map(|a| {
                    // Only inside the case-run's `artifacts/`, never through a link: the list
                    // is as the folder says, which may come from anywhere.
                    let text = crate::workspace::confined::read_to_string(
                        &case_dir.join("artifacts"),
                        &a.path,
                        20_000,
                    )
                    .ok();
                    (crate::record::path_text::encode(&a.path).into_owned(), text)
                })
                .collect(),
            ..CaseRun::of(r, rel)
        });
    }
    let mut s = Summary {
        total: case_runs.len(),
        ..Summary::default()
    };
    for c in &case_runs {
        match c.outcome {
            Outcome::Passed => s.passed += 1,
            Outcome::Failed => s.failed += 1,
            Outcome::NotGraded => s.not_graded += 1,
            Outcome::Error => s.errors += 1,
            Outcome::Skipped => s.skipped += 1,
            Outcome::Missing => s.missing += 1,
        }
        if c.result.sandbox.as_ref().is_some_and(|s| s.kind == "none") {
            s.unsandboxed += 1;
        }
        s.duration_ms += c.duration_ms;
        if let Some(cost) = c.cost_usd {
            *s.cost_usd.get_or_insert(0.0) += cost;
        }
        // The agents' word, which may be anything: held at the ceiling.
        s.input_tokens = s.input_tokens.saturating_add(c.input_tokens);
        s.output_tokens = s.output_tokens.saturating_add(c.output_tokens);
    }
    let counted = s.total - s.skipped;
    s.pass_rate = if counted == 0 {
        0.0
    } else {
        s.passed as f64 / counted as f64
    };
    let statistics = super::aggregate::aggregate(
        &rows(&case_runs),
        super::aggregate::VerdictSettings::of(&config),
    );
    // A bad feedback file never stops a report: it is said, and left out.
    let (feedback, warnings) = match crate::record::feedback::read(dir) {
        Ok(f) => (f, Vec::new()),
        Err(e) => (None, vec![format!("feedback left out: {e}")]),
    };
    Ok(Report {
        schema: SCHEMA,
        headline: super::headline::headline(&statistics),
        feedback,
        warnings,
        statistics,
        assay_version: if config.assay_version.is_empty() {
            env!("CARGO_PKG_VERSION").to_string()
        } else {
            config.assay_version.clone()
        },
        dir: dir.to_path_buf(),
        started: config.started.clone(),
        config,
        summary: s,
        case_runs,
    })
}
