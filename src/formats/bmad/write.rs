//! `assay init` for BMAD's `evals.json`, skill-creator's `evals/evals.json` and the current
//! runner's `cases.json`, and the cases `--from-run` adds to each.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::formats::write::{Dialect, RunSeed, Words, pretty, read_json};
use crate::suite::{Format, Skill, SkillKind, Suite};

/// BMAD's `evals/<skill>/evals.json` and `triggers.json`.
pub struct BmadDialect;
/// skill-creator's `<skill>/evals/evals.json` (integer ids, `files` from the skill's folder)
/// and its trigger eval set.
pub struct SkillCreator;
/// The current BMAD runner's `evals/<skill>/cases.json`.
pub struct BmadCases;

fn is_cases(suite: &Suite) -> bool {
    suite.source.file_name().is_some_and(|n| n == "cases.json")
}

fn is_triggers_only(suite: &Suite) -> bool {
    suite.cases.is_empty() && !suite.triggers.is_empty()
}

impl Dialect for BmadDialect {
    fn name(&self) -> &'static str {
        "bmad"
    }
    fn title(&self) -> &'static str {
        "BMAD"
    }
    fn starter(&self, root: &Path, skill: &Skill) -> Result<Vec<(PathBuf, String)>, String> {
        let w = Words::of(skill);
        let [p1, p2] = w.prompts();
        let dir = root.join("evals").join(&w.name);
        let evals = json!({
            "skill_name": w.name,
            "evals": [
                {"id": "1", "prompt": p1, "expected_output": format!("The agent uses the {} skill and reports what it did.", w.name),
                 "expectations": [format!("The response shows the {} skill was used for the task", w.name), "The response says what was done, without asking a question back"]},
                {"id": "2", "prompt": p2, "expectations": ["The agent makes a reasonable choice and finishes without asking the user"]}
            ]
        });
        Ok(vec![
            (dir.join("evals.json"), pretty(&evals)),
            (dir.join("triggers.json"), pretty(&w.trigger_list())),
        ])
    }
    /// Evals files of both dialects (skill-creator's is the same shape).
    fn writes(&self, suite: &Suite) -> bool {
        suite.format == Format::Bmad && !is_cases(suite) && !is_triggers_only(suite)
    }
    fn case_from_run(&self, source: &Path, seed: &RunSeed) -> Result<(PathBuf, String), String> {
        let mut doc = read_json(source)?;
        let list = match &mut doc {
            Value::Array(items) => items,
            other => other
                .get_mut("evals")
                .and_then(Value::as_array_mut)
                .ok_or_else(|| format!("{} has no `evals` list", source.display()))?,
        };
        let id = next_id(list, seed);
        list.push(eval_of(seed, id));
        Ok((source.to_path_buf(), pretty(&doc)))
    }
}

/// skill-creator numbers its evals: the next integer when every id is one, else
/// `<case>-from-run-<n>`.
fn next_id(list: &[Value], seed: &RunSeed) -> Value {
    let ints: Option<Vec<i64>> = list.iter().map(|e| e["id"].as_i64()).collect();
    match ints {
        Some(ints) if !ints.is_empty() => json!(ints.iter().max().copied().unwrap_or(0) + 1),
        _ => {
            let taken: Vec<String> = list
                .iter()
                .filter_map(|e| e["id"].as_str().map(str::to_string))
                .collect();
            json!(seed.new_id(&taken))
        }
    }
}

fn eval_of(seed: &RunSeed, id: Value) -> Value {
    if seed.is_bad() {
        return json!({
            "id": id,
            "prompt": seed.prompt,
            "expected_output": format!("Not this answer, which a reviewer marked bad ({}):\n{}", seed.problem(), seed.answer()),
            "expectations": [format!("The response does not have the problem a reviewer found in a recorded answer: {}", seed.problem())],
        });
    }
    let expected = if seed.review.is_some() {
        format!(
            "{}\n\n(A reviewer marked this recorded answer good{}.)",
            seed.answer(),
            seed.good_note()
        )
    } else {
        seed.answer().to_string()
    };
    json!({
        "id": id,
        "prompt": seed.prompt,
        "expected_output": expected,
        "expectations": ["The response gives what expected_output shows, in substance"],
    })
}

impl Dialect for SkillCreator {
    fn name(&self) -> &'static str {
        "skill-creator"
    }
    fn title(&self) -> &'static str {
        "skill-creator"
    }
    /// In the skill's own folder, as skill-creator keeps them: integer ids, no files yet, and
    /// the trigger eval set its description optimiser reads.
    fn starter(&self, _root: &Path, skill: &Skill) -> Result<Vec<(PathBuf, String)>, String> {
        if skill.kind != SkillKind::Dir {
            return Err(format!(
                "skill-creator keeps evals in a skill's folder (<skill>/evals/evals.json); {} is a command file (use --format clauditor or bmad)",
                skill.path.display()
            ));
        }
        let w = Words::of(skill);
        let [p1, p2] = w.prompts();
        let dir = skill.path.join("evals");
        let evals = json!({
            "skill_name": w.name,
            "evals": [
                {"id": 1, "prompt": p1, "expected_output": format!("The agent uses the {} skill and reports what it did.", w.name), "files": [],
                 "expectations": [format!("The response shows the {} skill was used for the task", w.name), "The response says what was done, without asking a question back"]},
                {"id": 2, "prompt": p2, "expected_output": "A sensible default, chosen and carried out without a question back.", "files": [],
                 "expectations": ["The agent makes a reasonable choice and finishes without asking the user"]}
            ]
        });
        Ok(vec![
            (dir.join("evals.json"), pretty(&evals)),
            (dir.join("trigger-evals.json"), pretty(&w.trigger_list())),
        ])
    }
}

impl Dialect for BmadCases {
    fn name(&self) -> &'static str {
        "bmad-cases"
    }
    fn title(&self) -> &'static str {
        "BMAD cases"
    }
    fn starter(&self, root: &Path, skill: &Skill) -> Result<Vec<(PathBuf, String)>, String> {
        let w = Words::of(skill);
        let [p1, p2] = w.prompts();
        let dir = root.join("evals").join(&w.name);
        let cases = json!({
            "skill_name": w.name,
            "cases": [
                {"id": "E1", "input": p1, "rubric": [format!("The response shows the {} skill was used for the task", w.name), "The response says what was done, without asking a question back"]},
                {"id": "E2", "state_prefix": "[The user has already said what they need; carry on without asking again.]", "input": p2,
                 "rubric": ["The agent makes a reasonable choice and finishes without asking the user"]}
            ]
        });
        Ok(vec![
            (dir.join("cases.json"), pretty(&cases)),
            (dir.join("triggers.json"), pretty(&w.trigger_list())),
        ])
    }
    fn writes(&self, suite: &Suite) -> bool {
        suite.format == Format::Bmad && is_cases(suite)
    }
    fn case_from_run(&self, source: &Path, seed: &RunSeed) -> Result<(PathBuf, String), String> {
        let mut doc = read_json(source)?;
        let list = match &mut doc {
            Value::Array(items) => items,
            other => other
                .get_mut("cases")
                .and_then(Value::as_array_mut)
                .ok_or_else(|| format!("{} has no `cases` list", source.display()))?,
        };
        let taken: Vec<String> = list
            .iter()
            .filter_map(|e| e["id"].as_str().map(str::to_string))
            .collect();
        let rubric = if seed.is_bad() {
            format!(
                "The response does not have the problem a reviewer found in a recorded answer: {}",
                seed.problem()
            )
        } else {
            format!(
                "The response gives, in substance, what this recorded answer gives{}:\n{}",
                seed.good_note(),
                seed.answer()
            )
        };
        list.push(json!({"id": seed.new_id(&taken), "input": seed.prompt, "rubric": [rubric]}));
        Ok((source.to_path_buf(), pretty(&doc)))
    }
}
