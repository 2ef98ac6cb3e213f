//! How a dialect is written: the starter suite `assay init` writes for a skill, and the case
//! `assay init --from-run` adds from a recorded case-run. Each format lists its dialects
//! ([`EvalFormat::dialects`](super::find::EvalFormat::dialects)), each implementing
//! [`Dialect`] in the format's `write.rs`; the command line only picks one by name.

use std::path::{Path, PathBuf};

use super::FORMATS;
use crate::record::feedback::Review;
use crate::suite::{Skill, SkillKind, Suite};

/// One dialect of a format as `assay init` writes it.
pub trait Dialect: Sync {
    /// The word `assay init --format` takes.
    fn name(&self) -> &'static str;
    /// How people call it ("BMAD", "skill-creator").
    fn title(&self) -> &'static str;
    /// The starter suite for `skill`, under the project `root`: each file and its text.
    fn starter(&self, root: &Path, skill: &Skill) -> Result<Vec<(PathBuf, String)>, String>;
    /// The root a starter is written under for a skill at `skill_dir`, when the format has
    /// its own (a UAAPS package is the folder holding `skills/`).
    fn own_root(&self, _skill_dir: &Path) -> Option<PathBuf> {
        None
    }
    /// What to load to validate a written file: the file, or its suite's folder.
    fn suite_path(&self, written: &Path) -> PathBuf {
        written.to_path_buf()
    }
    /// Whether this dialect writes cases into `suite`'s file (`--from-run`).
    fn writes(&self, _suite: &Suite) -> bool {
        false
    }
    /// A new case of the suite read from `source`, from a recorded case-run: the file to write
    /// and its whole new text.
    fn case_from_run(&self, _source: &Path, _seed: &RunSeed) -> Result<(PathBuf, String), String> {
        Err(format!("{} suites take no case from a run", self.title()))
    }
}

/// Every dialect assay writes, format by format.
fn dialects() -> impl Iterator<Item = &'static dyn Dialect> {
    FORMATS.iter().flat_map(|f| f.dialects().iter().copied())
}

/// The dialect `assay init --format` names.
pub fn by_name(name: &str) -> Option<&'static dyn Dialect> {
    dialects().find(|d| d.name() == name)
}

/// The names `assay init --format` takes.
pub fn names() -> Vec<&'static str> {
    dialects().map(|d| d.name()).collect()
}

/// The dialect that writes cases into `suite`'s file, if one does.
pub fn for_suite(suite: &Suite) -> Option<&'static dyn Dialect> {
    dialects().find(|d| d.writes(suite))
}

/// A recorded case-run, as a new case is made from it.
#[derive(Debug, Clone)]
pub struct RunSeed {
    /// The case it ran, and which run.
    pub case: String,
    pub run: u32,
    /// The case's own first prompt (not the expanded one that was sent).
    pub prompt: String,
    /// What the agent answered.
    pub output: String,
    /// A reviewer's verdict and note (feedback.json), if any.
    pub review: Option<(Review, String)>,
    /// The case-run's folder, as shown to the user.
    pub recorded_in: String,
}

impl RunSeed {
    pub fn is_bad(&self) -> bool {
        matches!(self.review, Some((Review::Bad, _)))
    }

    /// What the reviewer found wrong, as a sentence.
    pub fn problem(&self) -> String {
        match &self.review {
            Some((Review::Bad, note)) if !note.is_empty() => note.clone(),
            _ => "(the reviewer marked it bad without a note: see the recorded answer)".into(),
        }
    }

    /// ` (note: …)` for a good review with a note.
    pub fn good_note(&self) -> String {
        match &self.review {
            Some((Review::Good, note)) if !note.is_empty() => format!(" (note: {note})"),
            _ => String::new(),
        }
    }

    pub fn answer(&self) -> &str {
        self.output.trim_end()
    }

    /// The new case's id: `<case>-from-run-<n>`, the first not in `taken`.
    pub fn new_id(&self, taken: &[String]) -> String {
        (1..)
            .map(|n| format!("{}-from-run-{n}", self.case))
            .find(|i| !taken.contains(i))
            .unwrap_or_default()
    }
}

/// What the starter cases ask, from the skill's name and description.
pub struct Words {
    pub name: String,
    /// The description, or a sentence made from the name.
    pub what: String,
    /// The name as words (`release-notes` → `release notes`).
    pub spoken: String,
    pub command: bool,
}

impl Words {
    pub fn of(skill: &Skill) -> Self {
        let spoken = skill.name.replace(['-', '_'], " ");
        let what = skill
            .description
            .clone()
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| format!("Does the {spoken} task."));
        Words {
            name: skill.name.clone(),
            what,
            spoken,
            command: skill.kind == SkillKind::Command,
        }
    }

    /// Two prompts that exercise the skill.
    pub fn prompts(&self) -> [String; 2] {
        if self.command {
            [
                format!("/{} example input", self.name),
                format!("/{}", self.name),
            ]
        } else {
            [
                format!(
                    "Run headless. Use the {} skill on a small, realistic example and say what you did.",
                    self.name
                ),
                format!(
                    "Run headless. I need help with {}: pick a sensible default and go ahead.",
                    self.spoken
                ),
            ]
        }
    }

    pub fn should_trigger(&self) -> Vec<String> {
        vec![
            format!("Can you help me with {}?", self.spoken),
            format!(
                "{} Please do that for this project.",
                self.what.trim_end_matches('.')
            ),
        ]
    }

    /// Near misses: close to the skill's words, not its job.
    pub fn should_not_trigger(&self) -> Vec<String> {
        vec![
            format!("What does the word \"{}\" mean, in general?", self.spoken),
            "What's the capital of Australia?".into(),
        ]
    }

    /// The trigger queries as `[{query, should_trigger}]`.
    pub fn trigger_list(&self) -> serde_json::Value {
        let q = |q: String, should: bool| serde_json::json!({"query": q, "should_trigger": should});
        serde_json::Value::Array(
            self.should_trigger()
                .into_iter()
                .map(|s| q(s, true))
                .chain(self.should_not_trigger().into_iter().map(|s| q(s, false)))
                .collect(),
        )
    }
}

/// JSON as the starters write it: pretty, with a final newline.
pub fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

/// A YAML double-quoted scalar (a JSON string is one).
pub fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A JSON file's value, or why it cannot be read.
pub fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        .map_err(|e| format!("cannot read {} as JSON: {e}", path.display()))
}

/// A UTC timestamp as Skillet writes it.
pub fn now_stamp() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}
