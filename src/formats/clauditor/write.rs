//! `assay init --format clauditor`: `<name>.eval.json` beside the command file or in the
//! skill's folder. A clauditor spec holds one case per skill, so `--from-run` adds none.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::formats::write::{Dialect, Words, pretty};
use crate::suite::{Skill, SkillKind};

pub struct ClauditorDialect;

impl Dialect for ClauditorDialect {
    fn name(&self) -> &'static str {
        "clauditor"
    }
    fn title(&self) -> &'static str {
        "clauditor"
    }
    fn starter(&self, root: &Path, skill: &Skill) -> Result<Vec<(PathBuf, String)>, String> {
        let w = Words::of(skill);
        // Beside the command file, or beside the skill's SKILL.md.
        let dir = match skill.kind {
            SkillKind::Command => skill.path.parent().unwrap_or(root).to_path_buf(),
            SkillKind::Dir => skill.path.clone(),
        };
        let spec = json!({
            "skill_name": w.name,
            "description": w.what,
            "test_args": if w.command { "example input" } else { "" },
            "assertions": [
                {"id": "answers", "type": "min_length", "length": 1},
                {"id": "no_traceback", "type": "not_contains", "needle": "Traceback (most recent call last)"}
            ],
            "trigger_tests": {
                "should_trigger": w.should_trigger(),
                "should_not_trigger": w.should_not_trigger()
            }
        });
        Ok(vec![(
            dir.join(format!("{}.eval.json", w.name)),
            pretty(&spec),
        )])
    }
    fn writes(&self, suite: &crate::suite::Suite) -> bool {
        suite.format == crate::suite::Format::Clauditor
    }
    fn case_from_run(
        &self,
        _source: &Path,
        seed: &crate::formats::write::RunSeed,
    ) -> Result<(PathBuf, String), String> {
        Err(format!(
            "a clauditor spec holds one case per skill; add the recorded output to its checks by hand ({}/output.txt)",
            seed.recorded_in
        ))
    }
}
