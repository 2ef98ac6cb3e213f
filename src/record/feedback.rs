//! `feedback.json`: a reviewer's verdicts on a run's case-runs, as the HTML report's review
//! viewer downloads it. Placed in the run folder, every later report of the run shows it.
//!
//! ```json
//! {"schema": "assay.feedback/v1", "run": "runs/2026-11-24T00-00-00",
//!  "items": [{"suite": "s", "case": "c", "run": 1, "variant": "skill",
//!             "verdict": "bad", "note": "wrong file", "at": "2026-11-24T10:00:00Z"}]}
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::case_run::Arm;
use crate::record::layout;

/// The version of `feedback.json` this assay writes and reads.
pub const SCHEMA: &str = "assay.feedback/v1";

/// The file's name in a run folder.
pub const FILE: &str = layout::FEEDBACK_JSON;

/// A reviewer's verdict on one case-run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Review {
    Good,
    Bad,
}

impl Review {
    pub fn word(self) -> &'static str {
        match self {
            Review::Good => "good",
            Review::Bad => "bad",
        }
    }
}

/// `feedback.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedbackFile {
    pub schema: String,
    /// The run folder it was made from, as the report showed it.
    #[serde(default)]
    pub run: String,
    pub items: Vec<FeedbackItem>,
}

/// One case-run's review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedbackItem {
    pub suite: String,
    pub case: String,
    pub run: u32,
    #[serde(default)]
    pub variant: Arm,
    pub verdict: Review,
    #[serde(default)]
    pub note: String,
    /// When the reviewer marked it (RFC 3339, from the reviewer's browser); may be empty.
    #[serde(default)]
    pub at: String,
}

impl FeedbackFile {
    /// The review of one case-run, if any.
    pub fn find(&self, suite: &str, case: &str, run: u32, variant: Arm) -> Option<&FeedbackItem> {
        self.items
            .iter()
            .find(|i| i.suite == suite && i.case == case && i.run == run && i.variant == variant)
    }

    /// Reads `feedback.json`'s text: a JSON object of this schema (required), every item
    /// naming a case-run (`suite`, `case`, `run` ≥ 1) with a `good` or `bad` verdict, no
    /// case-run twice. Anything else is refused, saying what is wrong.
    pub fn parse(text: &str) -> Result<FeedbackFile, String> {
        if !text.trim_start().starts_with('{') {
            return Err("not a feedback file: not a JSON object".into());
        }
        let f: FeedbackFile = serde_json::from_str(text).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => format!("not a feedback file: {e}"),
            _ => format!("not valid JSON: {e}"),
        })?;
        if f.schema != SCHEMA {
            return Err(format!(
                "not a feedback file this assay reads (`schema: {}`; this one reads {SCHEMA})",
                f.schema
            ));
        }
        for (n, i) in f.items.iter().enumerate() {
            if i.suite.is_empty() || i.case.is_empty() {
                return Err(format!("item {}: no `suite` or `case`", n + 1));
            }
            if i.run == 0 {
                return Err(format!("item {}: `run` counts from 1", n + 1));
            }
            if f.items[..n].iter().any(|j| {
                (j.suite.as_str(), j.case.as_str(), j.run, j.variant)
                    == (i.suite.as_str(), i.case.as_str(), i.run, i.variant)
            }) {
                return Err(format!(
                    "item {}: case-run {}/{} run {} ({}) is reviewed twice",
                    n + 1,
                    i.suite,
                    i.case,
                    i.run,
                    i.variant.word()
                ));
            }
        }
        Ok(f)
    }
}

/// Reads a run folder's `feedback.json`: `Ok(None)` when there is none, an error (naming the
/// file) when it cannot be read or is not a feedback file.
pub fn read(run_dir: &Path) -> Result<Option<FeedbackFile>, String> {
    let path = run_dir.join(FILE);
    match std::fs::read_to_string(&path) {
        Ok(t) => FeedbackFile::parse(&t)
            .map(Some)
            .map_err(|m| format!("{}: {m}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"schema": "assay.feedback/v1", "run": "out", "items": [
        {"suite": "s", "case": "c", "run": 1, "variant": "skill", "verdict": "bad",
         "note": "wrote <b>", "at": "2026-11-24T10:00:00Z"},
        {"suite": "s", "case": "c", "run": 1, "variant": "baseline", "verdict": "good"}]}"#;

    #[test]
    fn a_feedback_file_reads_back_as_written() {
        let f = FeedbackFile::parse(GOOD).unwrap();
        assert_eq!(f.items.len(), 2);
        assert_eq!(f.items[1].note, "");
        let i = f.find("s", "c", 1, Arm::Skill).unwrap();
        assert_eq!((i.verdict, i.note.as_str()), (Review::Bad, "wrote <b>"));
        assert!(f.find("s", "c", 2, Arm::Skill).is_none());
        let again = FeedbackFile::parse(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(again, f);
    }

    #[test]
    fn bad_feedback_is_refused_saying_why() {
        for (text, says) in [
            ("[]", "not a JSON object"),
            ("{", "not valid JSON"),
            (r#"{"items": []}"#, "schema"),
            (
                r#"{"schema": "assay.feedback/v9", "items": []}"#,
                "assay.feedback/v9",
            ),
            (
                r#"{"schema": "assay.feedback/v1", "items": [{"suite": "s", "case": "c", "run": 1, "verdict": "meh"}]}"#,
                "meh",
            ),
            (
                r#"{"schema": "assay.feedback/v1", "items": [{"suite": "", "case": "c", "run": 1, "verdict": "good"}]}"#,
                "item 1: no `suite`",
            ),
            (
                r#"{"schema": "assay.feedback/v1", "items": [{"suite": "s", "case": "c", "run": 0, "verdict": "good"}]}"#,
                "counts from 1",
            ),
            (
                r#"{"schema": "assay.feedback/v1", "items": [{"suite": "s", "case": "c", "run": 1, "verdict": "good"}, {"suite": "s", "case": "c", "run": 1, "verdict": "bad"}]}"#,
                "reviewed twice",
            ),
            (
                r#"{"schema": "assay.feedback/v1", "items": [], "extra": 1}"#,
                "extra",
            ),
        ] {
            let e = FeedbackFile::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn a_run_folder_without_feedback_has_none_and_a_bad_one_names_its_file() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(read(d.path()).unwrap(), None);
        std::fs::write(d.path().join(FILE), "nope").unwrap();
        let e = read(d.path()).unwrap_err();
        assert!(
            e.contains("feedback.json") && e.contains("not a JSON object"),
            "{e}"
        );
        std::fs::write(d.path().join(FILE), GOOD).unwrap();
        assert_eq!(read(d.path()).unwrap().unwrap().items.len(), 2);
    }
}
