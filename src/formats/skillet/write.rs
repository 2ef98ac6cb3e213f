//! `assay init --format skillet`: `evals/<name>/NNN.yaml`, and `--from-run` adds the next
//! `NNN.yaml` of the set with the recorded answer as what is expected (as SkilletDialect's `/gap`
//! saves a bad answer as a test).

use std::path::{Path, PathBuf};

use crate::formats::write::{Dialect, RunSeed, Words, now_stamp, yaml_str};
use crate::record::feedback::Review;
use crate::suite::{Format, Skill, Suite};

pub struct SkilletDialect;

fn eval_text(name: &str, prompt: &str, expected: &str, assertion: bool) -> String {
    let mut text = format!(
        "timestamp: {}\nname: {}\nprompt: {}\nexpected: {}\n",
        now_stamp(),
        yaml_str(name),
        yaml_str(prompt),
        yaml_str(expected)
    );
    if assertion {
        text.push_str(
            "assertions:\n  - type: not_contains\n    value: \"Traceback (most recent call last)\"\n",
        );
    }
    text
}

impl Dialect for SkilletDialect {
    fn name(&self) -> &'static str {
        "skillet"
    }
    fn title(&self) -> &'static str {
        "Skillet"
    }
    fn starter(&self, root: &Path, skill: &Skill) -> Result<Vec<(PathBuf, String)>, String> {
        let w = Words::of(skill);
        let [p1, p2] = w.prompts();
        let dir = root.join("evals").join(&w.name);
        let used = format!(
            "The agent uses the {} skill and reports what it did.",
            w.name
        );
        let chose = "The agent makes a reasonable choice and finishes without asking the user.";
        Ok(vec![
            (dir.join("001.yaml"), eval_text(&w.name, &p1, &used, true)),
            (dir.join("002.yaml"), eval_text(&w.name, &p2, chose, true)),
        ])
    }
    /// A SkilletDialect set is its folder.
    fn suite_path(&self, written: &Path) -> PathBuf {
        written
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| written.to_path_buf())
    }
    fn writes(&self, suite: &Suite) -> bool {
        suite.format == Format::Skillet
    }
    fn case_from_run(&self, source: &Path, seed: &RunSeed) -> Result<(PathBuf, String), String> {
        let path = (1..1000)
            .map(|n| source.join(format!("{n:03}.yaml")))
            .find(|p| !p.exists())
            .ok_or_else(|| format!("{} has no free NNN.yaml name", source.display()))?;
        let name = source
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let at = format!(
            "{} (case {}, run {})",
            seed.recorded_in, seed.case, seed.run
        );
        let expected = match &seed.review {
            Some((Review::Bad, _)) => format!(
                "An answer without the problem a reviewer found in the answer recorded in {at}: {}\nThe answer the reviewer marked bad (not to be given again):\n{}",
                seed.problem(),
                seed.answer()
            ),
            Some((Review::Good, _)) => format!(
                "Like this answer, which a reviewer marked good{}, recorded in {at}:\n{}",
                seed.good_note(),
                seed.answer()
            ),
            None => format!("Like this answer, recorded in {at}:\n{}", seed.answer()),
        };
        Ok((path, eval_text(&name, &seed.prompt, &expected, false)))
    }
}
