//! UAAPS packages installed whole on each engine, through the real Claude Code and Codex
//! CLIs against the scripted model server: the skill, the sub-agent, the rule, AGENTS.md and
//! the MCP server reach the agent where it reads them; `target: agent:` runs the sub-agent;
//! `files-created` means created by the agent; the package's hooks block under both.

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::model_server::{ModelServer, text, tool};
use support::*;

fn package(dir: &Path, engine: &str) {
    let servers =
        json!({"mcpServers": {"pkgecho": {"command": "python3", "args": ["-c", MCP_ECHO_SERVER]}}});
    write_tree(
        dir,
        &[
            ("assay.toml", ""),
            (
                "package.agent.json",
                r#"{"name": "@t/review-kit", "version": "1.2.0"}"#,
            ),
            (
                "skills/lint/SKILL.md",
                "---\nname: lint\ndescription: Lints files for the review kit.\n---\nLint.\n",
            ),
            (
                "agents/rev/agent.yaml",
                "name: rev\ndescription: Reviews code for the review kit.\ntools: [Read, Write]\nmodel: inherit\n",
            ),
            (
                "agents/rev/system-prompt.md",
                "REV-SYSTEM-PROMPT: you review code.\n",
            ),
            (
                "rules/style/RULE.md",
                "RULE-STYLE-MARKER: always use tabs.\n",
            ),
            ("mcp/servers.json", &servers.to_string()),
            ("AGENTS.md", "AGENTS-MD-MARKER: be brief.\n"),
            ("README.md", "The review kit.\n"),
            (
                "hooks/hooks.json",
                r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo denied >&2; exit 2"}]}]}}"#,
            ),
            (
                "evals/eval-config.json",
                &format!(r#"{{"version": 1, "engine": "{engine}"}}"#),
            ),
            (
                "evals/cases/review.yaml",
                "name: review\ntarget: agent:rev\ninput:\n  prompt: review please\nexpected:\n  contains: [reviewed]\njudge:\n  criteria: It reviews.\n",
            ),
            (
                "evals/cases/create.yaml",
                "name: create\ninput:\n  prompt: create the files\nexpected:\n  files-created: [out/new.txt, README.md]\njudge:\n  criteria: It creates.\n",
            ),
            (
                "evals/cases/blocked.yaml",
                "name: blocked\ntarget: hook:pre-tool-use\ninput:\n  prompt: run a command\nexpected:\n  agent-blocked: true\njudge:\n  criteria: It is blocked.\n",
            ),
        ],
    );
}

/// `assay run` of the package in `dir`, one case-run at a time, into `out`, unjudged.
fn run(dir: &Path, extra: &[&str], env: &[(&str, String)]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--output-dir",
        "out",
        "--workspace-dir",
        "ws",
        "-j",
        "1",
        "--judge",
        "none",
    ];
    args.extend_from_slice(extra);
    assay_env(dir, &args, env)
}

fn result_of(dir: &Path, case: &str) -> Value {
    let all = results(&dir.join("out"));
    all.into_iter()
        .find(|(k, _)| k.ends_with(case))
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no result for {case}"))
}

fn check<'a>(result: &'a Value, id: &str) -> &'a Value {
    result["checks"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no check {id} in {result:#}"))
}

#[test]
fn claude_code_gets_the_whole_package_and_runs_the_target_agent() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    let d = tempfile::tempdir().unwrap();
    package(d.path(), "claude-code");
    server.script_each(
        "review please",
        None,
        vec![
            tool("WaitForMcpServers", json!({})),
            // The package's own eval cases are not in the agent's workspace.
            tool(
                "Read",
                json!({"file_path": "{cwd}/evals/cases/review.yaml"}),
            ),
            text("reviewed"),
        ],
    );
    server.script_each(
        "create the files",
        None,
        vec![
            tool(
                "Write",
                json!({"file_path": "{cwd}/out/new.txt", "content": "new\n"}),
            ),
            tool(
                "Write",
                json!({"file_path": "{cwd}/README.md", "content": "rewritten\n"}),
            ),
            text("created"),
        ],
    );
    server.script_each(
        "run a command",
        None,
        vec![
            tool("Bash", json!({"command": "echo hi"})),
            text("it was refused"),
        ],
    );
    let mut env = claude_env(&claude, &server);
    env.push(("MCP_TIMEOUT", "20000".into()));
    let out = run(d.path(), &[], &env);
    let requests: Vec<String> = server.requests().iter().map(Value::to_string).collect();
    let any = |s: &str| requests.iter().any(|r| r.contains(s));
    assert!(
        any("Lints files for the review kit."),
        "the skill is offered"
    );
    assert!(any("RULE-STYLE-MARKER"), "the rule is read: {requests:#?}");
    assert!(
        any("AGENTS-MD-MARKER"),
        "AGENTS.md is read through CLAUDE.md"
    );
    assert!(
        any("REV-SYSTEM-PROMPT"),
        "the review case runs as the sub-agent"
    );
    assert!(
        any("Reviews code for the review kit."),
        "the other cases are offered the sub-agent"
    );
    assert!(any("pkg_echo_tool"), "the MCP server's tool is offered");

    let review = result_of(d.path(), "review");
    assert_eq!(review["target"], "agent:rev");
    assert_eq!(review["target_exercised"], true, "{review:#}");
    assert_eq!(check(&review, "contains[0]")["passed"], true);

    // files-created: created by the agent, not there before.
    let create = result_of(d.path(), "create");
    assert_eq!(
        check(&create, "files-created[0]")["passed"],
        true,
        "{create:#}"
    );
    let old = check(&create, "files-created[1]");
    assert_eq!(old["passed"], false, "{create:#}");
    assert!(
        old["message"]
            .as_str()
            .unwrap()
            .contains("existed before the run"),
        "{old}"
    );

    let blocked = result_of(d.path(), "blocked");
    assert_eq!(blocked["target_exercised"], true, "{blocked:#}");
    assert_eq!(
        check(&blocked, "agent-blocked")["passed"],
        true,
        "{blocked:#}"
    );

    // Only the package's parts reach the workspace: never its eval cases or reports.
    let failed = review["failed_tool_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        failed.iter().any(
            |f| f["name"] == "Read" && f["output"].as_str().unwrap_or("").contains("not exist")
        ),
        "reading evals/cases/ fails: {review:#}"
    );
    assert_ne!(code(&out), 2, "{}", stderr(&out));
}

#[test]
fn codex_gets_the_package_where_it_reads_it_and_its_hooks_block() {
    let codex = agent_cli("codex");
    let server = ModelServer::start();
    let d = tempfile::tempdir().unwrap();
    package(d.path(), "codex");
    server.script("review please", vec![text("reviewed")]);
    server.script("create the files", vec![text("created")]);
    server.script(
        "run a command",
        vec![
            tool("exec_command", json!({"cmd": "echo hi > ran.txt"})),
            text("it was refused"),
        ],
    );
    let out = run(
        d.path(),
        &["--model", "gpt-test"],
        &codex_env(&codex, &server),
    );
    assert_ne!(code(&out), 2, "{}", stderr(&out));
    let requests: Vec<String> = server.requests().iter().map(Value::to_string).collect();
    let any = |s: &str| requests.iter().any(|r| r.contains(s));
    assert!(
        any("Lints files for the review kit."),
        "the skill is offered: {requests:#?}"
    );
    assert!(any("RULE-STYLE-MARKER"), "the rule is read: {requests:#?}");
    assert!(any("AGENTS-MD-MARKER"), "AGENTS.md is read");
    assert!(
        any("Reviews code for the review kit."),
        "the sub-agent is offered to spawn: {requests:#?}"
    );
    assert!(
        any("pkg_echo_tool"),
        "the MCP server's tool is offered: {requests:#?}"
    );

    // The package's hook runs under Codex too: it blocks the shell, and says so.
    let blocked = result_of(d.path(), "blocked");
    assert_eq!(blocked["target_exercised"], true, "{blocked:#}");
    let check = check(&blocked, "agent-blocked");
    assert_eq!(check["passed"], true, "{blocked:#}");
    assert!(
        check["evidence"]
            .as_str()
            .unwrap()
            .contains("PreToolUse hook blocked: denied"),
        "{check}"
    );
    let made: Vec<&Value> = blocked["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    assert!(made.iter().all(|a| a["path"] != "ran.txt"), "{made:?}");
    let review = result_of(d.path(), "review");
    assert_eq!(review["target_exercised"], false, "{review:#}");
    assert!(
        stdout(&out).contains("[target agent:rev not exercised]"),
        "{}",
        stdout(&out)
    );
}
