//! What the run folder keeps of a real ACP engine's turn: the tool calls' inputs in
//! `transcript.jsonl` (OpenCode, Qwen Code and Claude's adapter announce a call with
//! `rawInput: {}` and give its arguments in a later `tool_call_update`), and, for the generic
//! `acp` harness, the agent's name and version as its `initialize` answer reported them.

use crate::support;

use std::path::Path;

use serde_json::json;
use support::model_server::{ModelServer, Reply, text, tool};
use support::*;

fn with_path(cli: &str) -> Vec<(&'static str, String)> {
    let bin = agent_cli(cli);
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    vec![("PATH", path), ("ASSAY_JUDGE", "none".into())]
}

/// One case on `toml`'s harness, the model running `shell`; returns the case-run's record,
/// its transcript's tool calls and run.json.
fn one_case(
    server: &ModelServer,
    toml: &str,
    shell: Reply,
    env: &[(&'static str, String)],
) -> (serde_json::Value, Vec<serde_json::Value>, serde_json::Value) {
    server.script_each("Mark the run", None, vec![shell, text("Marked.")]);
    let d = tempfile::tempdir().unwrap();
    one_skill_project(
        d.path(),
        toml,
        "marker",
        "---\nname: marker\ndescription: Marks runs\n---\nMark it.\n",
        json!({"id": "mark", "prompt": "Mark the run.", "x-assay-checks": [
            {"type": "file_exists", "path": "ran.txt"}]}),
    );
    let out = assay_env(
        d.path(),
        &["run", "--model", "gpt-test", "--output-dir", "out"],
        env,
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert!(d.path().join("out").is_dir(), "{said}");
    let runs = results_by_folder(&d.path().join("out"));
    let r = runs
        .get("run-1")
        .cloned()
        .unwrap_or_else(|| panic!("{said}"));
    let dir = Path::new(r["dir"].as_str().unwrap());
    let transcript = std::fs::read_to_string(dir.join("transcript.jsonl")).unwrap_or_default();
    let calls = transcript
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "tool_call")
        .collect();
    (r, calls, read_json(&d.path().join("out/run.json")))
}

/// The shell call's input is in the transcript, command and all.
fn assert_input_kept(harness: &str, shell: Reply, env: &[(&'static str, String)]) {
    let server = ModelServer::start();
    let mut env = env.to_vec();
    env.push(("OPENAI_BASE_URL", format!("{}/v1", server.url)));
    env.push(("ANTHROPIC_BASE_URL", server.url.clone()));
    let toml = format!("[run]\nharness = \"{harness}\"\ntimeout = 120\n");
    let (r, calls, _) = one_case(&server, &toml, shell, &env);
    assert_eq!(r["grade"]["verdict"], "pass", "{r:#}");
    assert!(
        calls
            .iter()
            .any(|c| c["input"].to_string().contains("echo ran > ran.txt")),
        "{harness}: the transcript's tool calls: {calls:#?}"
    );
}

#[test]
fn opencode_s_tool_inputs_reach_the_transcript() {
    let mut env = with_path("opencode");
    env.push(("OPENAI_API_KEY", "sk-test".into()));
    let bash = tool(
        "bash",
        json!({"command": "echo ran > ran.txt", "description": "a step"}),
    );
    assert_input_kept("opencode", bash, &env);
}

#[test]
fn qwen_code_s_tool_inputs_reach_the_transcript() {
    let mut env = with_path("qwen");
    env.push(("OPENAI_API_KEY", "sk-test".into()));
    let shell = tool(
        "run_shell_command",
        json!({"command": "echo ran > ran.txt"}),
    );
    assert_input_kept("qwen-code", shell, &env);
}

#[test]
fn claude_code_over_acp_s_tool_inputs_reach_the_transcript() {
    let mut env = with_path("claude-agent-acp");
    env.push(("ANTHROPIC_API_KEY", "sk-assay-test".into()));
    env.push(("CLAUDE_CODE_MAX_RETRIES", "0".into()));
    let bash = tool("Bash", json!({"command": "echo ran > ran.txt"}));
    assert_input_kept("claude-code-acp", bash, &env);
}

/// Copilot through the generic `acp` harness: run.json names the agent as it reported itself
/// ("Copilot 1.0.102"), not `""`; each turn keeps it too.
#[test]
fn the_generic_acp_harness_records_the_agent_s_reported_name_and_version() {
    let server = ModelServer::start();
    let mut env = with_path("copilot");
    env.push(("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", server.url)));
    env.push(("COPILOT_PROVIDER_API_KEY", "sk-test".into()));
    env.push(("COPILOT_PROVIDER_TYPE", "openai".into()));
    env.push(("COPILOT_MODEL", "gpt-test".into()));
    let toml = "[run]\nharness = \"acp\"\ntimeout = 120\n\n[harness.acp]\ncommand = [\"copilot\", \"--acp\", \"--allow-all-tools\"]\n";
    let bash = tool(
        "bash",
        json!({"command": "echo ran > ran.txt", "description": "a step"}),
    );
    let (r, _, run) = one_case(&server, toml, bash, &env);
    assert_eq!(r["grade"]["verdict"], "pass", "{r:#}");
    let reported = run["harnesses"]["acp"].as_str().unwrap_or_default();
    assert!(
        reported.contains("1.0.102") && reported.to_lowercase().contains("copilot"),
        "{run:#}"
    );
    assert_eq!(r["turns"][0]["agent"].as_str(), Some(reported), "{r:#}");
}
