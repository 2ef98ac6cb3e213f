//! A BMAD runner `adapter.json` as a harness: found beside the cases file or named with
//! `--adapter`, run in the sandbox, its host variables forwarded only when the user chose it
//! or passed `--trust`.

use crate::support;

use std::path::Path;

use serde_json::json;
use support::model_server::{ModelServer, text, tool};
use support::*;

const SKILL: &str = "---\nname: brief\ndescription: Writes brief.md for a customer. Use for product briefs.\n---\nWrite brief.md.\n";
const CASES: &str = r#"{"skill_name": "brief", "cases": [
  {"id": "E1", "input": "Write the product brief for Ada.", "rubric": [],
   "x-assay-checks": [{"type": "file_contains", "path": "brief.md", "needle": "Ada"}]}
]}"#;

fn project(adapter: &serde_json::Value) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/skills/brief/SKILL.md", SKILL),
            ("evals/brief/cases.json", CASES),
            ("evals/brief/adapter.json", &adapter.to_string()),
        ],
    );
    d
}

/// The one case-run's `result.json`.
fn the_result(run_dir: &Path) -> serde_json::Value {
    let all = results(run_dir);
    assert_eq!(all.len(), 1, "{all:#?}");
    all.into_values().next().unwrap()
}

#[test]
fn the_runners_claude_code_adapter_runs_real_claude_in_the_sandbox() {
    let claude = agent_cli("claude");
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
    // The runner's own Claude Code adapter, with the pinned CLI's path.
    let adapter = json!({
        "name": "claude-code",
        "invocation": [claude.display().to_string(), "-p", "{prompt}", "--output-format", "stream-json",
                       "--verbose", "--dangerously-skip-permissions"],
        "auth_env": "ANTHROPIC_API_KEY",
        "transcript": {"format": "stdout-jsonl"},
        "skill_dir": ".claude/skills",
        "load_signal": {"skill_tool": "Skill", "read_tool": "Read"},
        "env_passthrough": ["IS_SANDBOX", "CLAUDE_CODE_MAX_RETRIES"]
    });
    let d = project(&adapter);
    let ws = tempfile::tempdir().unwrap();
    let mut env = claude_env(&claude, &server);
    env.push(("IS_SANDBOX", "1".into()));
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--trust",
            "--output-dir",
            "out",
            "--workspace-dir",
            ws.path().to_str().unwrap(),
        ],
        &env,
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{said}");
    let r = the_result(&d.path().join("out"));
    assert_eq!(r["harness"], "adapter", "{r:#}");
    assert_eq!(r["sandbox"]["kind"], "bwrap", "{r:#}");
    assert_eq!(r["skills_invoked"], json!(["brief"]), "{r:#}");
    assert_eq!(r["tool_calls"]["Write"], 1, "{r:#}");
    assert_eq!(r["turns"][0]["final_message"], "Wrote brief.md.", "{r:#}");
    assert!(r["usage"]["input_tokens"].as_u64().unwrap() > 0, "{r:#}");
    assert_eq!(r["grade"]["verdict"], "pass", "{r:#}");
}

/// A runtime that reports which host variable reached it and writes its transcript to a file.
fn script_adapter() -> serde_json::Value {
    json!({
        "invocation": ["sh", "-c",
            "printf '{\"type\":\"result\",\"result\":\"region=%s\"}\\n' \"${ACME_REGION:-unset}\" > out/t.jsonl; echo noise; echo ok > brief.md",
            "{cwd}"],
        "transcript": {"format": "file", "path": "out/t.jsonl"},
        "env_passthrough": ["ACME_REGION"]
    })
}

#[test]
fn an_adapter_beside_the_evals_gets_host_variables_only_with_trust() {
    let d = project(&script_adapter());
    let ws = tempfile::tempdir().unwrap();
    write_tree(d.path(), &[("out/.keep", "")]);
    let env = [
        ("ACME_REGION", "eu-west".to_string()),
        ("ASSAY_JUDGE", "none".into()),
    ];
    let run = |extra: &[&str], dir: &str| {
        let mut args = vec![
            "run",
            "--output-dir",
            dir,
            "--workspace-dir",
            ws.path().to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        assay_env(d.path(), &args, &env)
    };
    let out = run(&[], "r1");
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert!(said.contains("only with --trust"), "{said}");
    let r = the_result(&d.path().join("r1"));
    assert_eq!(r["harness"], "adapter", "{r:#}");
    // The transcript came from the file; what the runtime printed is not the output.
    assert_eq!(r["turns"][0]["final_message"], "region=unset", "{r:#}");
    let out = run(&["--trust"], "r2");
    let r = the_result(&d.path().join("r2"));
    assert_eq!(
        r["turns"][0]["final_message"],
        "region=[redacted:ACME_REGION]",
        "{}",
        stderr(&out)
    );
    let run_json = std::fs::read_to_string(d.path().join("r2/run.json")).unwrap();
    assert!(!run_json.contains("eu-west"), "{run_json}");
}

#[test]
fn an_adapter_named_with_the_flag_is_the_users_choice() {
    let d = project(&json!({"invocation": ["false"]}));
    let ws = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("mine.json", &script_adapter().to_string()),
            ("out/.keep", ""),
        ],
    );
    let env = [
        ("ACME_REGION", "us-east".to_string()),
        ("ASSAY_JUDGE", "none".into()),
    ];
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--adapter",
            "mine.json",
            "--output-dir",
            "r",
            "--workspace-dir",
            ws.path().to_str().unwrap(),
        ],
        &env,
    );
    let r = the_result(&d.path().join("r"));
    assert_eq!(
        r["turns"][0]["final_message"],
        "region=[redacted:ACME_REGION]",
        "{}",
        stderr(&out)
    );
    // A bad adapter file stops everything before it starts, at its place.
    write_tree(d.path(), &[("bad.json", r#"{"invocation": "claude -p"}"#)]);
    let out = assay_env(d.path(), &["run", "--adapter", "bad.json"], &env);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("bad.json:1:16"), "{}", stderr(&out));
}
