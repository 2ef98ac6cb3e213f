//! `assay init --format claude-plugin-eval`: a starter suite `claude plugin eval` loads, in the
//! plugin that holds the skill (or the skill's own folder, a skills-directory plugin): one
//! case that should load the skill (did it fire, and did the agent finish the task) and one
//! that asks for a reasonable choice, each a `prompt.md` with `graders/*.md`.

use std::path::{Path, PathBuf};

use crate::formats::write::{Dialect, Words, yaml_str};
use crate::suite::Skill;

pub struct ClaudePluginEvalDialect;

/// A case's `prompt.md`: one run each to start with.
fn prompt_md(prompt: &str) -> String {
    format!("---\nruns: 1\nallowed_tools: [Read, Glob, Grep, Skill]\n---\n{prompt}\n")
}

fn judge_md(criteria: &str) -> String {
    format!("---\ntype: llm\n---\n{criteria}\n")
}

impl Dialect for ClaudePluginEvalDialect {
    fn name(&self) -> &'static str {
        "claude-plugin-eval"
    }
    fn title(&self) -> &'static str {
        "Claude Code plugin eval"
    }
    fn starter(&self, root: &Path, skill: &Skill) -> Result<Vec<(PathBuf, String)>, String> {
        let w = Words::of(skill);
        let [p1, p2] = w.prompts();
        let evals = root.join("evals");
        let fires = evals.join(format!("{}-fires", w.name));
        let choice = evals.join(format!("{}-chooses", w.name));
        let fired = format!(
            "---\ntype: tool_used\ntool: Skill\ninput_match: {}\n---\n",
            yaml_str(&format!("\"skill\"\\s*:\\s*\"(?:[\\w-]+:)?{}\"", w.name))
        );
        let used = format!(
            "The agent uses the {} skill and reports what it did.",
            w.name
        );
        let chose = "The agent makes a reasonable choice and finishes without asking the user.";
        Ok(vec![
            (fires.join("prompt.md"), prompt_md(&p1)),
            (fires.join("graders/skill-fired.md"), fired),
            (fires.join("graders/did-the-task.md"), judge_md(&used)),
            (choice.join("prompt.md"), prompt_md(&p2)),
            (choice.join("graders/reasonable.md"), judge_md(chose)),
        ])
    }
    /// The plugin that holds the skill, else the skill's own folder.
    fn own_root(&self, skill_dir: &Path) -> Option<PathBuf> {
        let up = skill_dir.parent().and_then(Path::parent);
        let plugin = up.filter(|p| super::plugin::has_manifest(p));
        Some(plugin.unwrap_or(skill_dir).to_path_buf())
    }
    /// A plugin's suite is the plugin: the folder above `evals/`.
    fn suite_path(&self, written: &Path) -> PathBuf {
        written
            .ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == "evals"))
            .and_then(Path::parent)
            .unwrap_or(written)
            .to_path_buf()
    }
}
