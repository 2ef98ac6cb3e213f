//! A run as reports see it, read from its run folder: `run.json` and every case-run's
//! `result.json`. Every report — written at the end of `assay run` or regenerated later by
//! `assay report` — is made from this, so they always agree.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

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
    pub config: Value,
    pub summary: Summary,
    /// Statistics over runs, trigger evals and baselines.
    pub statistics: super::aggregate::Aggregates,
    pub case_runs: Vec<CaseRun>,
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

/// One case-run's outcome in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Passed,
    Failed,
    NotGraded,
    Error,
    Skipped,
    /// Planned, never recorded (the run crashed or stopped first).
    Missing,
}

impl Outcome {
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::NotGraded => "not graded",
            Outcome::Error => "error",
            Outcome::Skipped => "skipped",
            Outcome::Missing => "missing",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseRun {
    pub suite: String,
    pub case: String,
    pub run: u32,
    /// `case` or `trigger`.
    pub kind: String,
    /// `skill` or `baseline`.
    pub variant: String,
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
    pub checks: Vec<Value>,
    pub judge: Value,
    /// The case-run's folder, relative to the run folder.
    pub dir: PathBuf,
    pub prompt: String,
    /// The start of the output (at most 2,000 characters).
    pub output_snippet: String,
    /// `result.json` as recorded.
    #[serde(skip)]
    pub result: Value,
    /// The normalized transcript (`transcript.jsonl`), for the HTML report.
    #[serde(skip)]
    pub transcript: Vec<Value>,
    /// Created or changed files kept in `artifacts/` (path, text when small and UTF-8).
    #[serde(skip)]
    pub artifacts: Vec<(String, Option<String>)>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0} is not a run folder (it has no run.json)")]
    NotARun(PathBuf),
    #[error("{path}: {message}")]
    Unreadable { path: PathBuf, message: String },
}

pub fn outcome_of(r: &Value) -> Outcome {
    match (r["status"].as_str(), r["grade"]["verdict"].as_str()) {
        (Some("error"), _) => Outcome::Error,
        (Some("missing"), _) => Outcome::Missing,
        (Some("skipped"), _) => Outcome::Skipped,
        (_, Some("pass")) => Outcome::Passed,
        (_, Some("not-graded")) => Outcome::NotGraded,
        _ => Outcome::Failed,
    }
}

fn snippet(s: &str, n: usize) -> String {
    if s.chars().count() > n {
        format!("{}…", s.chars().take(n).collect::<String>())
    } else {
        s.to_string()
    }
}

/// The statistics' rows of read case-runs.
pub fn rows(case_runs: &[CaseRun]) -> Vec<super::aggregate::Row> {
    case_runs
        .iter()
        .map(|c| {
            let mut row = super::aggregate::Row::of(&c.result);
            row.dir = c.dir.clone();
            row
        })
        .collect()
}

/// Reads a run folder. Case-runs still running (no `result.json` yet) are not in it; a folder
/// left by an interrupted run reads like any other.
pub fn read(dir: &Path) -> Result<Report, ReadError> {
    let run_json = dir.join("run.json");
    let config: Value = match std::fs::read_to_string(&run_json) {
        Ok(t) => serde_json::from_str(&t).map_err(|e| ReadError::Unreadable {
            path: run_json.clone(),
            message: format!("not valid JSON: {e}"),
        })?,
        Err(_) => return Err(ReadError::NotARun(dir.to_path_buf())),
    };
    let mut case_runs = Vec::new();
    let mut recorded: Vec<(Value, std::path::PathBuf)> = Vec::new();
    for f in crate::run::record::case_run_results(dir) {
        let text = std::fs::read_to_string(&f).map_err(|e| ReadError::Unreadable {
            path: f.clone(),
            message: e.to_string(),
        })?;
        let r: Value = serde_json::from_str(&text).map_err(|e| ReadError::Unreadable {
            path: f.clone(),
            message: format!("not valid JSON: {e}"),
        })?;
        recorded.push((r, f.parent().unwrap_or(dir).to_path_buf()));
    }
    // What the run planned and never recorded reads as `missing`, never as passed.
    recorded.extend(
        crate::run::record::missing(dir)
            .into_iter()
            .map(|(rel, v)| (v, dir.join(rel))),
    );
    for (r, case_dir) in recorded {
        let case_dir = case_dir.as_path();
        let outcome = outcome_of(&r);
        let reason = match outcome {
            Outcome::Passed => None,
            _ => r["grade"]["reasons"][0]
                .as_str()
                .or_else(|| r["reason"].as_str())
                .map(str::to_string),
        };
        let read = |name: &str| std::fs::read_to_string(case_dir.join(name)).unwrap_or_default();
        case_runs.push(CaseRun {
            suite: r["suite"].as_str().unwrap_or_default().to_string(),
            case: r["case"].as_str().unwrap_or_default().to_string(),
            run: r["run"].as_u64().unwrap_or(1) as u32,
            kind: r["kind"].as_str().unwrap_or("case").to_string(),
            variant: r["variant"].as_str().unwrap_or("skill").to_string(),
            cached: r["cached"].is_object(),
            outcome,
            reason,
            harness: r["harness"].as_str().unwrap_or_default().to_string(),
            model: r["model"].as_str().map(str::to_string),
            duration_ms: r["duration_ms"].as_u64().unwrap_or(0),
            cost_usd: r["cost_usd"].as_f64(),
            input_tokens: r["usage"]["input_tokens"].as_u64().unwrap_or(0),
            output_tokens: r["usage"]["output_tokens"].as_u64().unwrap_or(0),
            score: r["grade"]["score"].as_f64(),
            checks: r["checks"].as_array().cloned().unwrap_or_default(),
            judge: r["judge"].clone(),
            dir: case_dir.strip_prefix(dir).unwrap_or(case_dir).to_path_buf(),
            prompt: read("prompt.txt"),
            output_snippet: snippet(&read("output.txt"), 2000),
            transcript: read("transcript.jsonl")
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect(),
            artifacts: r["artifacts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|a| a["kind"] != "deleted")
                .filter_map(|a| a["path"].as_str())
                .map(|p| {
                    let text = std::fs::read(case_dir.join("artifacts").join(p))
                        .ok()
                        .filter(|b| b.len() <= 20_000)
                        .and_then(|b| String::from_utf8(b).ok());
                    (p.to_string(), text)
                })
                .collect(),
            result: r,
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
        if c.result["sandbox"]["kind"] == "none" {
            s.unsandboxed += 1;
        }
        s.duration_ms += c.duration_ms;
        if let Some(cost) = c.cost_usd {
            *s.cost_usd.get_or_insert(0.0) += cost;
        }
        s.input_tokens += c.input_tokens;
        s.output_tokens += c.output_tokens;
    }
    let counted = s.total - s.skipped;
    s.pass_rate = if counted == 0 {
        0.0
    } else {
        s.passed as f64 / counted as f64
    };
    let statistics =
        super::aggregate::aggregate(&rows(&case_runs), super::aggregate::Settings::of(&config));
    Ok(Report {
        schema: SCHEMA,
        statistics,
        assay_version: config["assay_version"]
            .as_str()
            .unwrap_or(env!("CARGO_PKG_VERSION"))
            .to_string(),
        dir: dir.to_path_buf(),
        started: config["started"].as_str().map(str::to_string),
        config,
        summary: s,
        case_runs,
    })
}
