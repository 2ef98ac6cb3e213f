//! A reviewer's notes (`feedback.json`, `assay.feedback/v1`) on trigger case-runs, as guidance
//! for the proposer (`--feedback`). A note is matched to its case-run's `result.json` in the
//! run folder for its query; only notes on **train** queries reach the proposer (never a
//! holdout one: the proposer must not see the holdout), and which were used and which left out
//! is recorded in `optimize.json`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Query;
use crate::record::case_run::Kind;
use crate::record::feedback::{FeedbackFile, Review};

/// The most of one note the proposer is shown (characters).
pub const MAX_NOTE: usize = 500;
/// The most notes the proposer is shown.
pub const MAX_NOTES: usize = 20;

/// A reviewer's verdict on one trigger case-run, with the query it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Note {
    /// The feedback file it came from.
    pub source: String,
    pub suite: String,
    pub case: String,
    pub run: u32,
    pub verdict: Review,
    #[serde(default)]
    pub note: String,
    /// The trigger query the case-run ran.
    pub query: String,
    pub should_trigger: bool,
    /// Whether the skill fired on that run (absent when the run could not tell).
    #[serde(default)]
    pub fired: Option<bool>,
    /// Given to the proposer (its query is a train query).
    #[serde(default)]
    pub used: bool,
    /// Why it was not, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
}

/// What one `--feedback` gave: its notes on trigger case-runs, and how many of its items were
/// on something else (an artifact case, a case-run the folder does not hold).
#[derive(Debug, Default)]
pub struct Read {
    pub notes: Vec<Note>,
    pub other: usize,
}

/// Reads `--feedback PATH`: a run folder holding `feedback.json`, or a feedback file (its
/// case-runs in the folder it sits in, else in the run folder it names, relative to `cwd`).
pub fn read(path: &Path, cwd: &Path, shown: &str) -> Result<Read, String> {
    let (file, run_dir) = if path.is_dir() {
        (path.join(crate::record::feedback::FILE), path.to_path_buf())
    } else {
        (
            path.to_path_buf(),
            path.parent().map(Path::to_path_buf).unwrap_or_default(),
        )
    };
    let text = std::fs::read_to_string(&file).map_err(|e| {
        if path.is_dir() && e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "{}: no {} in this run folder (the HTML report's \"Download feedback.json\" makes one)",
                shown,
                crate::record::feedback::FILE
            )
        } else {
            format!("{}: {e}", file.display())
        }
    })?;
    let f = FeedbackFile::parse(&text).map_err(|m| format!("{}: {m}", file.display()))?;
    let mut runs = trigger_runs(&run_dir);
    if runs.is_empty() && !f.run.is_empty() {
        let named: PathBuf = cwd.join(&f.run);
        runs = trigger_runs(&named);
    }
    let mut out = Read::default();
    for i in &f.items {
        match runs.get(&(i.suite.clone(), i.case.clone(), i.run, i.variant.word())) {
            Some(t) => out.notes.push(Note {
                source: shown.to_string(),
                suite: i.suite.clone(),
                case: i.case.clone(),
                run: i.run,
                verdict: i.verdict,
                note: i.note.clone(),
                query: t.query.clone(),
                should_trigger: t.should_trigger,
                fired: t.fired,
                used: false,
                left_out: None,
            }),
            None => out.other += 1,
        }
    }
    Ok(out)
}

/// The trigger case-runs of a run folder by (suite, case, run, variant).
fn trigger_runs(
    run_dir: &Path,
) -> HashMap<(String, String, u32, &'static str), crate::record::case_run::TriggerRecord> {
    crate::record::folder::case_run_dirs(run_dir)
        .into_iter()
        .filter_map(|d| crate::record::read_case_run(&d).ok())
        .filter(|r| r.kind == Kind::Trigger)
        .filter_map(|r| Some(((r.suite, r.case, r.run, r.variant.word()), r.trigger?)))
        .collect()
}

/// Marks each note used when its query is a train query; one on a holdout query, or on a query
/// the optimisation does not have, is left out, saying why.
pub fn sort_out(notes: &mut [Note], train: &[Query], holdout: &[Query]) {
    let has = |qs: &[Query], q: &str| qs.iter().any(|x| x.query.trim() == q.trim());
    for n in notes.iter_mut() {
        (n.used, n.left_out) = if has(holdout, &n.query) {
            (
                false,
                Some("its query is a holdout query (the proposer never sees the holdout)".into()),
            )
        } else if has(train, &n.query) {
            (true, None)
        } else {
            (
                false,
                Some("its query is not one of the optimisation's queries".into()),
            )
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: &str, query: &str) -> Query {
        Query {
            id: id.into(),
            query: query.into(),
            should_trigger: true,
        }
    }

    /// A run folder with trigger case-runs (`suite`, `case`, run 1) for each query, from the
    /// fixture's record.
    fn run_folder(d: &Path, runs: &[(&str, &str, &str)]) {
        let base: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/run-basic/bmad_brief/B1/run-1/result.json"),
            )
            .unwrap(),
        )
        .unwrap();
        for (suite, case, query) in runs {
            let dir = d.join(suite).join(case).join("run-1");
            std::fs::create_dir_all(&dir).unwrap();
            let mut r = base.clone();
            r["suite"] = (*suite).into();
            r["case"] = (*case).into();
            r["kind"] = "trigger".into();
            r["trigger"] =
                serde_json::json!({"query": query, "should_trigger": true, "fired": false});
            std::fs::write(dir.join("result.json"), r.to_string()).unwrap();
        }
    }

    #[test]
    fn notes_on_train_queries_are_used_and_holdout_ones_left_out() {
        let d = tempfile::tempdir().unwrap();
        run_folder(
            d.path(),
            &[
                ("s", "t1", "write a brief"),
                ("s", "t2", "draft a PRD"),
                ("s", "t3", "elsewhere"),
                ("s", "B1", "not a trigger"),
            ],
        );
        // An artifact case-run: its review is not a trigger note.
        let case = d.path().join("s/B1/run-1/result.json");
        let mut r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&case).unwrap()).unwrap();
        r["kind"] = "case".into();
        r.as_object_mut().unwrap().remove("trigger");
        std::fs::write(&case, r.to_string()).unwrap();
        std::fs::write(
            d.path().join("feedback.json"),
            r#"{"schema": "assay.feedback/v1", "items": [
              {"suite": "s", "case": "t1", "run": 1, "verdict": "bad", "note": "it should fire on briefs"},
              {"suite": "s", "case": "t2", "run": 1, "verdict": "bad", "note": "holdout secret"},
              {"suite": "s", "case": "t3", "run": 1, "verdict": "good"},
              {"suite": "s", "case": "B1", "run": 1, "verdict": "bad"},
              {"suite": "s", "case": "gone", "run": 1, "verdict": "bad"}]}"#,
        )
        .unwrap();
        let mut got = read(d.path(), d.path(), "run").unwrap();
        assert_eq!(got.notes.len(), 3);
        assert_eq!(got.other, 2);
        sort_out(
            &mut got.notes,
            &[q("q1", "write a brief")],
            &[q("q2", " draft a PRD")],
        );
        let used: Vec<(&str, bool)> = got
            .notes
            .iter()
            .map(|n| (n.case.as_str(), n.used))
            .collect();
        assert_eq!(used, [("t1", true), ("t2", false), ("t3", false)]);
        assert!(got.notes[1].left_out.as_ref().unwrap().contains("holdout"));
        assert!(
            got.notes[2]
                .left_out
                .as_ref()
                .unwrap()
                .contains("not one of")
        );
        // The file itself names the same run folder.
        let again = read(&d.path().join("feedback.json"), d.path(), "f").unwrap();
        assert_eq!(again.notes.len(), 3);
    }

    #[test]
    fn a_folder_without_feedback_or_a_bad_file_is_an_error_naming_it() {
        let d = tempfile::tempdir().unwrap();
        let e = read(d.path(), d.path(), "the-run").unwrap_err();
        assert!(
            e.contains("the-run") && e.contains("no feedback.json"),
            "{e}"
        );
        std::fs::write(d.path().join("f.json"), "[1]").unwrap();
        let e = read(&d.path().join("f.json"), d.path(), "f.json").unwrap_err();
        assert!(
            e.contains("f.json") && e.contains("not a JSON object"),
            "{e}"
        );
    }
}
