//! A failed skill load is no use of the skill, on every engine: the model asks for the skill
//! in a baseline run (where it is not installed), the real CLI answers with its own failure
//! (Claude Code's `Unknown skill`, Copilot's `Tool 'skill' does not exist.`, OpenCode's
//! `Skill "greeter" not found`, …), and the case-run records the attempt as failed, never as
//! invoked: `skill_invoked` fails on the baseline, and `assay report audit` does not call the
//! check one that passes "as well without the skill".

use crate::support;

use std::path::Path;

use serde_json::json;
use support::model_server::{ModelServer, Reply, text, tool};
use support::*;

fn with_path(bin: &Path) -> Vec<(&'static str, String)> {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    vec![("PATH", path), ("ASSAY_JUDGE", "none".into())]
}

/// The engine's OpenAI-compatible endpoint at the model server.
fn openai(cli: &str) -> Vec<(&'static str, String)> {
    let bin = agent_cli(cli);
    let mut env = with_path(bin.parent().unwrap());
    env.push(("OPENAI_API_KEY", "sk-test".into()));
    env
}

/// The engine's skill tool `(name, key)` called for `greeter`.
fn skill_call((name, key): (&str, &str)) -> Reply {
    tool(name, json!({key: "greeter"}))
}

/// Runs one case with `--baseline` on `harness`, the model loading `greeter` with `load` in
/// both variants; returns the with-skill and the baseline `result.json`, the baseline's
/// transcript and what `assay report audit` said.
fn baseline_loads(
    server: &ModelServer,
    harness: &str,
    load: Reply,
    env: &[(&'static str, String)],
) -> (serde_json::Value, serde_json::Value, String, String) {
    server.script_each(
        "card for Ada",
        None,
        vec![load, text("The card is written.")],
    );
    let d = tempfile::tempdir().unwrap();
    one_skill_project(
        d.path(),
        &format!("[run]\nharness = \"{harness}\"\ntimeout = 120\n"),
        "greeter",
        "---\nname: greeter\ndescription: Writes greeting cards\n---\nWrite the card.\n",
        json!({"id": "card", "prompt": "Write a greeting card for Ada.", "x-assay-checks": [
            {"type": "skill_invoked", "skill": "greeter"}]}),
    );
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--baseline",
            "--model",
            "gpt-test",
            "--output-dir",
            "out",
            "--history",
            ".assay/history.jsonl",
        ],
        env,
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert!(d.path().join("out").is_dir(), "{harness}: {said}");
    let runs = results_by_folder(&d.path().join("out"));
    let with = runs
        .get("run-1")
        .cloned()
        .unwrap_or_else(|| panic!("{said}"));
    let without = runs
        .get("baseline-1")
        .cloned()
        .unwrap_or_else(|| panic!("{said}"));
    let dir = Path::new(without["dir"].as_str().unwrap());
    let transcript = std::fs::read_to_string(dir.join("transcript.jsonl")).unwrap_or_default();
    let audit = assay_env(d.path(), &["report", "audit"], env);
    let audit = format!("{}\n{}", stdout(&audit), stderr(&audit));
    (with, without, transcript, audit)
}

/// The with-skill run used the skill; the baseline's attempt failed, is recorded as failed,
/// and fails the check; the audit does not call the check one the skill does not change.
fn assert_failed_load_is_no_use(
    harness: &str,
    (with, without, transcript, audit): (serde_json::Value, serde_json::Value, String, String),
) {
    assert_eq!(with["skills_invoked"], json!(["greeter"]), "{with:#}");
    assert_eq!(with["grade"]["verdict"], "pass", "{with:#}");
    assert_eq!(
        without["skills_invoked"],
        json!([]),
        "{harness}: a failed load is no use\n{without:#}\n{transcript}"
    );
    assert_eq!(
        without["skills_failed"],
        json!(["greeter"]),
        "{harness}: the attempt is recorded\n{without:#}\n{transcript}"
    );
    assert_eq!(without["grade"]["verdict"], "fail", "{without:#}");
    assert!(
        transcript.contains(r#""type":"skill_failed""#)
            && !transcript.contains(r#""type":"skill_invoked""#),
        "{harness}: {transcript}"
    );
    assert!(
        audit.contains("as well without the skill (at least 90% with and without): 0"),
        "{harness}: {audit}"
    );
}

#[test]
fn claude_code_s_unknown_skill_is_no_use() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    let env = claude_env(&claude, &server);
    let seen = baseline_loads(&server, "claude-code", skill_call(("Skill", "skill")), &env);
    assert_failed_load_is_no_use("claude-code", seen);
}

#[test]
fn claude_code_over_acp_s_unknown_skill_is_no_use() {
    let adapter = agent_cli("claude-agent-acp");
    let server = ModelServer::start();
    let mut env = with_path(adapter.parent().unwrap());
    env.push(("ANTHROPIC_BASE_URL", server.url.clone()));
    env.push(("ANTHROPIC_API_KEY", "sk-assay-test".into()));
    env.push(("CLAUDE_CODE_MAX_RETRIES", "0".into()));
    let seen = baseline_loads(
        &server,
        "claude-code-acp",
        skill_call(("Skill", "skill")),
        &env,
    );
    assert_failed_load_is_no_use("claude-code-acp", seen);
}

#[test]
fn copilot_s_missing_skill_tool_is_no_use() {
    let copilot = agent_cli("copilot");
    let server = ModelServer::start();
    let mut env = with_path(copilot.parent().unwrap());
    env.push(("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", server.url)));
    env.push(("COPILOT_PROVIDER_API_KEY", "sk-test".into()));
    env.push(("COPILOT_PROVIDER_TYPE", "openai".into()));
    let seen = baseline_loads(&server, "copilot", skill_call(("skill", "skill")), &env);
    assert_failed_load_is_no_use("copilot", seen);
}

#[test]
fn opencode_s_skill_not_found_is_no_use() {
    let server = ModelServer::start();
    let mut env = openai("opencode");
    env.push(("OPENAI_BASE_URL", format!("{}/v1", server.url)));
    let seen = baseline_loads(&server, "opencode", skill_call(("skill", "name")), &env);
    assert_failed_load_is_no_use("opencode", seen);
}

#[test]
fn qwen_code_s_failed_skill_load_is_no_use() {
    let server = ModelServer::start();
    let mut env = openai("qwen");
    env.push(("OPENAI_BASE_URL", format!("{}/v1", server.url)));
    let seen = baseline_loads(&server, "qwen-code", skill_call(("skill", "skill")), &env);
    assert_failed_load_is_no_use("qwen-code", seen);
}

/// Codex reads a skill's SKILL.md with its shell: in the baseline the file is not there, the
/// command fails, and the read is no use.
#[test]
fn codex_s_failed_skill_read_is_no_use() {
    let codex = agent_cli("codex");
    let server = ModelServer::start();
    let env = codex_env(&codex, &server);
    let read = tool(
        "exec_command",
        json!({"cmd": "cat .agents/skills/greeter/SKILL.md"}),
    );
    // The Responses API has no per-conversation script: the skill run (offered the skill)
    // has its own.
    server.script_each(
        "card for Ada",
        Some("greeter: Writes greeting cards"),
        vec![read.clone(), text("The card is written.")],
    );
    let seen = baseline_loads(&server, "codex", read, &env);
    assert_failed_load_is_no_use("codex", seen);
}
