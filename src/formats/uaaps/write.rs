//! `assay init --format uaaps`: a package's `evals/eval-config.json` (kept when there is one),
//! a case for the skill in `evals/cases/`, and the manifest when the package has none;
//! `--from-run` adds `evals/cases/<case>-from-run-<n>.yaml`.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::formats::write::{Dialect, RunSeed, Words, pretty, yaml_str};
use crate::record::feedback::Review;
use crate::suite::{Format, Skill, SkillKind, Suite};

pub struct UaapsDialect;

impl Dialect for UaapsDialect {
    fn name(&self) -> &'static str {
        "uaaps"
    }
    fn title(&self) -> &'static str {
        "UAAPS"
    }
    /// A package's root is the folder holding its `skills/`.
    fn own_root(&self, skill_dir: &Path) -> Option<PathBuf> {
        skill_dir
            .parent()
            .filter(|p| p.file_name().is_some_and(|n| n == "skills"))
            .and_then(Path::parent)
            .map(Path::to_path_buf)
    }
    fn starter(&self, root: &Path, skill: &Skill) -> Result<Vec<(PathBuf, String)>, String> {
        let in_package = skill.kind == SkillKind::Dir
            && skill
                .path
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == "skills")
            && skill.path.parent().and_then(Path::parent) == Some(root);
        if !in_package {
            return Err(format!(
                "a UAAPS package keeps its skills in skills/<name>/ at its root; {} is not one (use --format clauditor, bmad, skill-creator or skillet, or move it)",
                skill.path.display()
            ));
        }
        let w = Words::of(skill);
        let [p1, _] = w.prompts();
        let mut files = Vec::new();
        // A package's eval config is its own: made when missing, never replaced.
        if !root.join("evals/eval-config.json").exists() {
            files.push((
                root.join("evals/eval-config.json"),
                pretty(&json!({"version": 1, "engine": "claude-code", "timeout": 120})),
            ));
        }
        files.push((
            root.join("evals/cases").join(format!("{}.yaml", w.name)),
            format!(
                "name: {}\ndescription: {}\ntarget: skill:{}\ninput:\n  prompt: {}\nexpected:\n  not-contains:\n    - \"Traceback (most recent call last)\"\njudge:\n  criteria: {}\n",
                yaml_str(&w.name),
                yaml_str(&format!("The {} skill does its job on a small example", w.name)),
                w.name,
                yaml_str(&p1),
                yaml_str(&format!(
                    "The agent used the {} skill for the task and reported what it did, without asking a question back.",
                    w.name
                ))
            ),
        ));
        // The manifest is what makes a folder a UAAPS package: without one, the evals written
        // here would not be found.
        if !root.join("package.agent.json").exists() {
            files.push((
                root.join("package.agent.json"),
                pretty(&json!({"name": w.name, "version": "0.1.0", "description": w.what})),
            ));
        }
        Ok(files)
    }
    fn writes(&self, suite: &Suite) -> bool {
        matches!(suite.format, Format::Uaaps | Format::UaapsTests)
    }
    fn case_from_run(&self, source: &Path, seed: &RunSeed) -> Result<(PathBuf, String), String> {
        if source.file_name().is_some_and(|n| n == "test-config.json") {
            return Err(format!(
                "a UAAPS test config's cases are commands, not prompts; add one by hand ({}/output.txt)",
                seed.recorded_in
            ));
        }
        let cases = source
            .parent()
            .map(|p| p.join("cases"))
            .unwrap_or_else(|| source.to_path_buf());
        let (n, path) = (1..1000)
            .map(|n| (n, cases.join(format!("{}-from-run-{n}.yaml", seed.case))))
            .find(|(_, p)| !p.exists())
            .ok_or_else(|| format!("{} has no free name for the case", cases.display()))?;
        let text = format!(
            "name: {}\ndescription: {}\ninput:\n  prompt: {}\njudge:\n  criteria: {}\n",
            yaml_str(&format!("{}-from-run-{n}", seed.case)),
            yaml_str(&recorded(seed)),
            yaml_str(&seed.prompt),
            yaml_str(&criteria(seed))
        );
        Ok((path, text))
    }
}

fn criteria(seed: &RunSeed) -> String {
    match &seed.review {
        Some((Review::Bad, _)) => format!(
            "The answer does not have the problem a reviewer found in a recorded answer: {}\nThe recorded answer, marked bad (not to be given again):\n{}",
            seed.problem(),
            seed.answer()
        ),
        Some((Review::Good, _)) => format!(
            "The answer gives, in substance, what this recorded answer gives (a reviewer marked it good{}):\n{}",
            seed.good_note(),
            seed.answer()
        ),
        None => format!(
            "The answer gives, in substance, what this recorded answer gives:\n{}",
            seed.answer()
        ),
    }
}

fn recorded(seed: &RunSeed) -> String {
    match &seed.review {
        Some((v, _)) => format!(
            "Recorded from {}; a reviewer marked it {}",
            seed.recorded_in,
            v.word()
        ),
        None => format!("Recorded from {}", seed.recorded_in),
    }
}
