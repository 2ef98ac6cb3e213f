//! The BMAD runner's cases file in its `baseline` and `variant` modes, and a skill-creator
//! suite with no expectations, through the real Claude Code CLI against the scripted model
//! server and a judge on loopback.

use crate::support;

use std::path::Path;
use std::process::Output;

use serde_json::json;
use support::judge_server::{JudgeServer, says};
use support::model_server::{ModelServer, text, tool};
use support::*;

const SKILL: &str = "---\nname: brief\ndescription: Writes brief.md for a customer. Use for product briefs.\n---\nWrite brief.md naming the customer.\n";
const OLD_SKILL: &str =
    "---\nname: brief\ndescription: Old version, drafts notes only.\n---\nSay what you would do.\n";
const CASES: &str = r#"{
  "skill_name": "brief",
  "cases": [
    {
      "id": "E1",
      "state_prefix": "[Discovery is done; the customer is Ada.]",
      "input": "Write the product brief for Ada.",
      "rubric": ["brief.md names Ada"],
      "files": ["files/notes.md"],
      "x-assay-checks": [{"type": "file_contains", "path": "brief.md", "needle": "Ada"}]
    }
  ]
}"#;

/// A project (`proj/`) with the skill and its cases file, and an older copy of the skill
/// beside the project (`old/brief/`, the previous release).
fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("proj/assay.toml", ""),
            ("proj/.claude/skills/brief/SKILL.md", SKILL),
            ("proj/evals/brief/cases.json", CASES),
            ("proj/evals/brief/files/notes.md", "Ada runs a bakery.\n"),
            ("old/brief/SKILL.md", OLD_SKILL),
        ],
    );
    let proj = d.path().join("proj");
    (d, proj)
}

/// The model writes the brief only when the current skill is offered to it.
fn model() -> ModelServer {
    let server = ModelServer::start();
    server.script_each(
        "Write the product brief for Ada.",
        Some("Writes brief.md for a customer"),
        vec![
            tool("Skill", json!({"skill": "brief"})),
            tool(
                "Write",
                json!({"file_path": "{cwd}/brief.md", "content": "# Brief for Ada\n"}),
            ),
            text("Wrote brief.md."),
        ],
    );
    server.script_each(
        "Write the product brief for Ada.",
        None,
        vec![text("I would draft some notes.")],
    );
    server
}

fn run(dir: &Path, server: &ModelServer, judge: &JudgeServer, args: &[&str]) -> Output {
    let claude = agent_cli("claude");
    let env = claude_judged_env(&claude, server, &judge.url);
    let mut all = vec!["run", "--harness", "claude-code", "--runs", "2"];
    all.extend(["--workspace-dir", "workspaces"]);
    all.extend_from_slice(args);
    assay_env(dir, &all, &env)
}

/// A judge that finds the one rubric item met, as often as asked.
fn judge() -> JudgeServer {
    let pass = json!({"expectations": [
        {"text": "brief.md names Ada", "passed": true, "evidence": "brief.md: '# Brief for Ada'"}
    ]});
    JudgeServer::start((0..8).map(|_| says(pass.clone())).collect())
}

#[test]
fn a_bmad_cases_file_runs_in_baseline_mode() {
    let (_d, proj) = project();
    let (server, judge) = (model(), judge());
    let out = run(
        proj.as_path(),
        &server,
        &judge,
        &["--baseline", "--output-dir", "out"],
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    // The baseline does worse; it is a comparison, never a failure.
    assert_eq!(code(&out), 0, "{said}");
    let runs = results_by_folder(&proj.as_path().join("out"));
    let names: Vec<&str> = runs.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["baseline-1", "baseline-2", "run-1", "run-2"],
        "{said}"
    );
    for (name, r) in &runs {
        let passed = r["grade"]["verdict"].as_str();
        let dir = Path::new(r["dir"].as_str().unwrap());
        // state_prefix, a blank line, then input: the prompt the runner sends.
        assert_eq!(
            std::fs::read_to_string(dir.join("prompt.txt"))
                .unwrap()
                .trim_end(),
            "[Discovery is done; the customer is Ada.]\n\nWrite the product brief for Ada.",
            "{name}"
        );
        if name.starts_with("run") {
            assert_eq!(r["skills_invoked"], json!(["brief"]), "{name}: {r:#}");
            assert_eq!(passed, Some("pass"), "{name}: {r:#}");
        } else {
            assert_eq!(r["variant"], "baseline");
            assert_eq!(r["skills_invoked"], json!([]), "{name}: {r:#}");
            assert_eq!(passed, Some("fail"), "{name}: {r:#}");
        }
    }
    assert!(
        said.contains("with the skill against the baseline"),
        "{said}"
    );
    assert!(said.contains("2/2 vs 0/2 passed"), "{said}");
}

#[test]
fn a_bmad_cases_file_runs_in_variant_mode_against_the_older_skill() {
    let (_d, proj) = project();
    let (server, judge) = (model(), judge());
    let out = run(
        proj.as_path(),
        &server,
        &judge,
        &["--variant-path", "../old/brief", "--output-dir", "out"],
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{said}");
    let runs = results_by_folder(&proj.as_path().join("out"));
    let names: Vec<&str> = runs.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["run-1", "run-2", "variant-1", "variant-2"],
        "{said}"
    );
    assert_eq!(runs["variant-1"]["variant"], "variant");
    assert_eq!(runs["variant-1"]["grade"]["verdict"], "fail");
    assert_eq!(runs["run-1"]["grade"]["verdict"], "pass");
    // The variant had the older skill, under the skill's own name.
    let offered_old = server
        .requests()
        .iter()
        .any(|r| r.to_string().contains("Old version, drafts notes only."));
    assert!(offered_old, "the variant's skill was never offered");
    assert!(
        said.contains("with the skill against the variant"),
        "{said}"
    );
    assert!(said.contains("2/2 vs 0/2 passed"), "{said}");
    let run_json = read_json(&proj.as_path().join("out/run.json"));
    assert!(
        run_json["options"]["baseline"]
            .as_str()
            .is_some_and(|b| b.starts_with("variant:")),
        "{run_json:#}"
    );
    // A variant path that is not a skill stops the run before anything starts.
    let out = run(
        proj.as_path(),
        &server,
        &judge,
        &["--variant-path", "evals"],
    );
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--variant-path: not a skill"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_agent_that_edits_a_fixture_fails_its_case_with_the_file_named() {
    let (_d, proj) = project();
    let server = ModelServer::start();
    server.script_each(
        "Write the product brief for Ada.",
        None,
        vec![
            tool(
                "Bash",
                json!({"command": "echo 'Ada runs a bank.' > files/notes.md", "description": "edit"}),
            ),
            tool(
                "Write",
                json!({"file_path": "{cwd}/brief.md", "content": "# Brief for Ada\n"}),
            ),
            text("Wrote brief.md."),
        ],
    );
    let out = run(proj.as_path(), &server, &judge(), &["--output-dir", "out"]);
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 1, "{said}");
    let r = &results_by_folder(&proj.as_path().join("out"))["run-1"];
    assert_eq!(r["grade"]["verdict"], "fail", "{r:#}");
    let checks = r["checks"].as_array().unwrap();
    let fixture = checks
        .iter()
        .find(|c| c["id"] == "fixtures-unchanged")
        .unwrap_or_else(|| panic!("{r:#}"));
    assert_eq!(fixture["passed"], false, "{fixture:#}");
    assert!(
        fixture["message"]
            .as_str()
            .unwrap()
            .contains("files/notes.md"),
        "{fixture:#}"
    );
}

#[test]
fn a_skill_creator_suite_without_expectations_runs() {
    // skill-creator writes the prompts first; such a suite runs, and only shows the skill ran.
    let (_d, proj) = project();
    write_tree(
        proj.as_path(),
        &[(
            ".claude/skills/brief/evals/evals.json",
            r#"{"skill_name": "brief", "evals": [{"id": 1, "name": "ada", "prompt": "Write the product brief for Ada.", "expected_output": "brief.md", "files": []}]}"#,
        )],
    );
    let server = model();
    let out = run(
        proj.as_path(),
        &server,
        &judge(),
        &[
            "--output-dir",
            "out",
            ".claude/skills/brief/evals/evals.json",
        ],
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{said}");
    assert!(said.contains("no expectations"), "{said}");
    // skill-creator's `name` is the case's name, shown beside its id and never warned about.
    assert!(!said.contains("unknown key `name`"), "{said}");
    assert!(said.contains("skill-creator:brief/1 (ada)"), "{said}");
    let runs = results_by_folder(&proj.as_path().join("out"));
    assert_eq!(runs.len(), 2, "{said}");
    for r in runs.values() {
        assert_eq!(r["status"], "completed", "{r:#}");
        assert_eq!(r["skills_invoked"], json!(["brief"]), "{r:#}");
    }
}

#[test]
fn a_case_whose_fixture_is_missing_fails_without_starting_the_agent() {
    // The runner fails the case, not the file: the other case still runs.
    let (_d, proj) = project();
    write_tree(
        &proj,
        &[(
            "evals/brief/cases.json",
            r#"{"cases": [
  {"id": "gone", "input": "Write the product brief for Bo.", "rubric": [], "files": ["files/nowhere.md"],
   "x-assay-checks": [{"type": "file_exists", "path": "brief.md"}]},
  {"id": "E1", "input": "Write the product brief for Ada.", "rubric": [],
   "x-assay-checks": [{"type": "file_contains", "path": "brief.md", "needle": "Ada"}]}
]}"#,
        )],
    );
    let server = model();
    let out = run(&proj, &server, &judge(), &["--output-dir", "out"]);
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    // A failed case, not an infrastructure error.
    assert_eq!(code(&out), 1, "{said}");
    assert!(said.contains("files/nowhere.md"), "{said}");
    let runs = results(&proj.join("out"));
    assert_eq!(runs["gone"]["status"], "failed", "{:#}", runs["gone"]);
    assert!(
        runs["gone"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("fixture not found")),
        "{:#}",
        runs["gone"]
    );
    assert_eq!(runs["E1"]["grade"]["verdict"], "pass", "{:#}", runs["E1"]);
    let asked_for_bo = server
        .requests()
        .iter()
        .any(|r| r.to_string().contains("product brief for Bo"));
    assert!(
        !asked_for_bo,
        "the agent started for a case that cannot run"
    );
}
