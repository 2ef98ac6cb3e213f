//! Reading a past run folder back for `assay grade <run-dir>`: each case-run's output,
//! transcript, file listing and artifacts become the [`CaseRunView`] its checks saw, so checks
//! and the judge can grade again without re-running any agent.
//!
//! What a run folder keeps is what re-grading can see: file checks read the artifacts (files
//! the agent created or changed); the contents of files it left untouched are not kept, so a
//! check reading one is "not evaluated" on re-grade.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::grade::{self, Graded};
use super::record;
use crate::assert::view::CaseRunView;
use crate::harness::Event;
use crate::spec::Case;

/// One recorded case-run.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub dir: PathBuf,
    pub suite: String,
    pub case: String,
    pub run: u32,
    pub status: String,
    pub reason: Option<String>,
    pub suite_source: Option<PathBuf>,
    /// `result.json` as recorded.
    pub result: Value,
}

#[derive(Debug, thiserror::Error)]
pub enum RegradeError {
    #[error("{0} is not a run folder (it has no run.json)")]
    NotARun(PathBuf),
    #[error("{path}: {message}")]
    Unreadable { path: PathBuf, message: String },
}

/// Every case-run recorded in a run folder, in folder order.
pub fn read_run(dir: &Path) -> Result<Vec<Recorded>, RegradeError> {
    if !dir.join("run.json").is_file() {
        return Err(RegradeError::NotARun(dir.to_path_buf()));
    }
    record::case_run_results(dir)
        .iter()
        .map(|p| read_case_run(p.parent().unwrap_or(dir)))
        .collect()
}

fn read_text(path: &Path) -> Result<String, RegradeError> {
    std::fs::read_to_string(path).map_err(|e| RegradeError::Unreadable {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// One case-run folder's `result.json`.
pub fn read_case_run(dir: &Path) -> Result<Recorded, RegradeError> {
    let path = dir.join("result.json");
    let result: Value =
        serde_json::from_str(&read_text(&path)?).map_err(|e| RegradeError::Unreadable {
            path: path.clone(),
            message: format!("not valid JSON: {e}"),
        })?;
    let text = |k: &str| result.get(k).and_then(Value::as_str).map(str::to_string);
    let (Some(suite), Some(case)) = (text("suite"), text("case")) else {
        return Err(RegradeError::Unreadable {
            path,
            message: "no `suite` and `case`".into(),
        });
    };
    Ok(Recorded {
        dir: dir.to_path_buf(),
        suite,
        case,
        run: result.get("run").and_then(Value::as_u64).unwrap_or(1) as u32,
        status: text("status").unwrap_or_default(),
        reason: text("reason"),
        suite_source: text("suite_source").map(PathBuf::from),
        result,
    })
}

impl Recorded {
    /// The view checks saw, rebuilt from the folder.
    pub fn view(&self, case: &Case) -> CaseRunView {
        let r = &self.result;
        let read = |name: &str| std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        let events: Vec<Event> = read("transcript.jsonl")
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let stdout: String = events
            .iter()
            .filter_map(|e| match e {
                Event::Output { text } => Some(format!("{text}\n")),
                _ => None,
            })
            .collect();
        let turns = r
            .get("turns")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let files: BTreeSet<PathBuf> =
            serde_json::from_str::<Vec<PathBuf>>(&read("workspace.json"))
                .unwrap_or_default()
                .into_iter()
                .collect();
        CaseRunView {
            output: read("output.txt"),
            final_message: turns
                .last()
                .and_then(|t| t.get("final_message"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            stdout,
            stderr: read("stderr.txt"),
            exit_code: r.get("exit_code").and_then(Value::as_i64).map(|c| c as i32),
            events,
            files,
            file_root: Some(crate::workspace::layers::Tree::dir(
                self.dir.join("artifacts"),
            )),
            cwd: crate::workspace::agent_dir(case),
            changed_fixtures: r
                .get("fixture_changes")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f.get("path").and_then(Value::as_str).map(PathBuf::from))
                        .collect()
                })
                .unwrap_or_default(),
            num_turns: turns
                .iter()
                .filter_map(|t| t.get("num_turns").and_then(Value::as_u64))
                .reduce(|a, b| a + b),
            cost_usd: r.get("cost_usd").and_then(Value::as_f64),
            duration_ms: r.get("duration_ms").and_then(Value::as_u64).unwrap_or(0),
            permission_denials: turns
                .iter()
                .filter_map(|t| t.get("permission_denials").and_then(Value::as_array))
                .map(Vec::len)
                .sum(),
        }
    }

    /// Created or changed files and their text, from the artifacts, for the judge.
    pub fn artifacts(&self) -> Vec<(String, String)> {
        self.result
            .get("artifacts")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter(|c| c.get("kind").and_then(Value::as_str) != Some("deleted"))
                    .filter_map(|c| c.get("path").and_then(Value::as_str))
                    .take(10)
                    .filter_map(|p| {
                        let text =
                            std::fs::read_to_string(self.dir.join("artifacts").join(p)).ok()?;
                        Some((p.to_string(), text))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Records the new grading: `grading.json` is replaced, and `result.json` gets the new
    /// checks, judge record and grade (the rest of it is left as recorded).
    pub fn write(&mut self, graded: &Graded) -> std::io::Result<()> {
        grade::write_grading(
            &self.dir,
            &graded.checks,
            graded.judge.as_ref(),
            Some(&graded.grade),
        )?;
        if let Some(obj) = self.result.as_object_mut() {
            obj.insert(
                "checks".into(),
                serde_json::to_value(&graded.checks).unwrap_or_default(),
            );
            obj.insert(
                "judge".into(),
                serde_json::to_value(&graded.judge).unwrap_or_default(),
            );
            obj.insert(
                "grade".into(),
                serde_json::to_value(&graded.grade).unwrap_or_default(),
            );
            obj.insert(
                "regraded".into(),
                Value::String(jiff::Timestamp::now().to_string()),
            );
        }
        record::write_json(&self.dir.join("result.json"), &self.result)
    }
}
