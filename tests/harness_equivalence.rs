//! The claude-code adapter as a WebAssembly component (`plugins/claude-code`, WIT 0.2.0) and
//! the built-in one produce the same normalized transcript and the same turn summary from the
//! same agent output: on every stream recorded from the real Claude Code CLI in the end-to-end
//! tests (tests/fixtures/streams/claude-code), under every invocation and every way a process
//! ends; and they build the same command line. Then a real run through each harness.

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use assay::harness::claude_code::ClaudeCode;
use assay::plugin::grants::Grants;
use assay::plugin::harness::PluginHarness;
use assay::plugin::loaded::LoadedPlugin;
use assay::process::Exited;
use assay::{
    harness::{Event, Harness, HarnessSettings, Invocation},
    record::agent::TurnSummary,
};
use serde_json::json;
use support::model_server::{ModelServer, text, tool};
use support::*;

fn streams() -> Vec<PathBuf> {
    let dir = repo().join("tests/fixtures/streams/claude-code");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

fn component() -> Arc<LoadedPlugin> {
    let engine = assay::plugin::engine::shared().unwrap();
    let path = wasm_plugins().join("claude_code.wasm");
    Arc::new(LoadedPlugin::load(engine, &path, Grants::default()).unwrap())
}

fn both(settings: &HarnessSettings) -> (Box<dyn Harness>, Box<dyn Harness>) {
    let plugin = component();
    let info = plugin.harnesses[0].clone();
    assert_eq!(info.name, "claude-code-wasm");
    (
        Box::new(ClaudeCode::new(settings)),
        Box::new(PluginHarness::new(plugin, info, settings)),
    )
}

fn exit(code: Option<i32>, timed_out: bool, stderr_tail: &str) -> Exited {
    Exited {
        code,
        signal: code.is_none().then_some(9),
        timed_out,
        interrupted: false,
        duration: Duration::from_millis(1234),
        stdout_bytes: 0,
        truncated: false,
        stderr_tail: stderr_tail.into(),
        started: None,
        stopped_by: None,
        decided: false,
    }
}

/// The invocations the adapters tell apart in parsing: a sub-agent or not, background tasks
/// forced synchronous or not, the hang heuristic on or off.
fn invocations<'a>(cwd: &'a Path) -> Vec<Invocation<'a>> {
    static NO_LIMITS: assay::suite::AgentLimits = assay::suite::AgentLimits {
        max_turns: None,
        model: None,
        allowed_tools: Vec::new(),
        disallowed_tools: Vec::new(),
        append_system_prompt: None,
        gated: false,
        env: std::collections::BTreeMap::new(),
    };
    static NO_SERVERS: std::collections::BTreeMap<String, serde_json::Value> =
        std::collections::BTreeMap::new();
    static NO_GRANTS: assay::suite::ToolGrants = assay::suite::ToolGrants {
        allow: Vec::new(),
        deny: Vec::new(),
    };
    let base = Invocation {
        prompt: "greeting card for Ada",
        turn: 0,
        resume: None,
        model: None,
        system_prompt: None,
        cwd,
        home: cwd,
        sync_tasks: false,
        allow_hang_heuristic: true,
        agent: None,
        sandboxed: false,
        mcp_servers: &NO_SERVERS,
        limits: &NO_LIMITS,
        plugin_dirs: Vec::new(),
        grants: &NO_GRANTS,
    };
    vec![
        base.clone(),
        Invocation {
            allow_hang_heuristic: false,
            ..base.clone()
        },
        Invocation {
            sync_tasks: true,
            ..base.clone()
        },
        Invocation {
            agent: Some("reviewer"),
            ..base.clone()
        },
        Invocation {
            turn: 1,
            resume: Some("5c1d-session"),
            model: Some("claude-sonnet-4-6"),
            system_prompt: Some("Be brief."),
            ..base
        },
    ]
}

/// Hand-written streams for the branches no recorded run reaches (each adapter decision:
/// awaiting a background task, asking the user, hooks, sub-agents, every error category).
const SYNTHETIC: &[&[&str]] = &[
    &[
        r#"{"type":"system","subtype":"init","session_id":"s1","model":"m","tools":["Bash"],"skills":["x"],"agents":["reviewer"]}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"hmm"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"sleep 9","run_in_background":true}}]}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"KillShell","input":{"shell_id":"t1"}}]}}"#,
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"is_error":true}]}}"#,
        r#"{"type":"result","is_error":false,"num_turns":3,"result":"ok","total_cost_usd":0.0123,"duration_ms":77,"permission_denials":[{"tool_name":"Bash"}],"usage":{"input_tokens":5,"output_tokens":6,"cache_read_input_tokens":7,"cache_creation_input_tokens":8}}"#,
    ],
    &[
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"q","name":"AskUserQuestion","input":{}}]}}"#,
        r#"{"type":"system","subtype":"task_started","subagent_type":"fmt"}"#,
        r#"{"type":"system","subtype":"task_started","subagent_type":""}"#,
        r#"{"type":"system","subtype":"hook_response","hook_event":"PreToolUse","exit_code":2,"outcome":"error"}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"k","name":"Skill","input":{"command":"/brief"}},{"type":"tool_use","id":"r","name":"Read","input":{"file_path":"/w/.claude/skills/notes/SKILL.md"}}]}}"#,
        r#"{"type":"result","is_error":false,"num_turns":5,"result":"done","session_id":"late"}"#,
    ],
    &[r#"{"type":"result","is_error":true,"api_error_status":403,"result":"forbidden"}"#],
    &[r#"{"type":"result","is_error":true,"api_error_status":503,"result":"x"}"#],
    &[r#"{"type":"result","is_error":true,"result":"Overloaded"}"#],
    &[r#"{"type":"result","is_error":true,"result":"Rate limit reached"}"#],
    &[r#"{"type":"result","is_error":true,"result":"Please run /login"}"#],
    &[r#"{"type":"result","is_error":true,"result":"API Error: Connection error."}"#],
    &[r#"{"type":"result","is_error":true,"result":"getaddrinfo EAI_AGAIN api"}"#],
    &[r#"{"type":"result","is_error":true,"result":{"odd":"shape"}}"#],
    &[
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Which one?  "}]}}"#,
        r#"{"type":"result","is_error":false,"result":"Which one?  "}"#,
    ],
];

#[test]
fn the_component_reads_every_recorded_stream_as_the_built_in_does() {
    let (builtin, wasm) = both(&HarnessSettings::default());
    let files = streams();
    assert!(
        files.len() >= 8,
        "too few recorded streams: {}",
        files.len()
    );
    let cwd = PathBuf::from("/w");
    let exits = [
        exit(Some(0), false, ""),
        exit(Some(1), false, "Error: something broke\n"),
        exit(None, false, ""),
        exit(None, true, ""),
    ];
    let (mut lines_compared, mut summaries) = (0, 0);
    let recorded: Vec<(String, String)> = files
        .iter()
        .map(|f| (f.display().to_string(), std::fs::read_to_string(f).unwrap()))
        .chain(
            SYNTHETIC
                .iter()
                .enumerate()
                .map(|(i, lines)| (format!("synthetic stream {i}"), lines.join("\n"))),
        )
        .collect();
    for (file, text) in &recorded {
        // Whole streams, and each stream cut short (as an agent killed mid-turn leaves it).
        let all: Vec<&str> = text.lines().collect();
        for cut in [all.len(), all.len() / 2] {
            for inv in invocations(&cwd) {
                for ended in &exits {
                    let (mut a, mut b) = (builtin.parser(&inv), wasm.parser(&inv));
                    for line in &all[..cut] {
                        let (ea, eb): (Vec<Event>, Vec<Event>) = (a.line(line), b.line(line));
                        assert_eq!(ea, eb, "{file}: line {line}");
                        lines_compared += 1;
                    }
                    let (sa, sb): (TurnSummary, TurnSummary) = (a.finish(ended), b.finish(ended));
                    assert_eq!(sa, sb, "{file} (first {cut} lines, {inv:?}, {ended:?})");
                    summaries += 1;
                }
            }
        }
    }
    // Garbage, half lines and hostile JSON are read alike too.
    for junk in [
        "",
        "not json",
        "{\"type\":",
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"name\":\"Read\",\"input\":{\"file_path\":\"SKILL.md\"}}]}}",
        "{\"type\":\"assistant\",\"message\":{\"content\":\"text, not blocks\"}}",
        "{\"type\":\"result\",\"is_error\":true,\"result\":[{\"text\":\"fetch failed\"}],\"num_turns\":\"x\"}",
        "{\"type\":\"system\",\"subtype\":\"init\",\"agents\":\"reviewer\"}",
        "[1,2,3]",
    ] {
        for inv in invocations(&cwd) {
            let (mut a, mut b) = (builtin.parser(&inv), wasm.parser(&inv));
            assert_eq!(a.line(junk), b.line(junk), "{junk}");
            assert_eq!(a.finish(&exits[0]), b.finish(&exits[0]), "{junk}");
        }
    }
    eprintln!(
        "{} recorded and {} synthetic streams: {lines_compared} lines and {summaries} summaries compared",
        files.len(),
        SYNTHETIC.len()
    );
}

#[test]
fn the_component_builds_the_built_in_command_line() {
    let cwd = PathBuf::from("/w");
    for settings in [
        HarnessSettings::default(),
        HarnessSettings {
            permission_mode: Some("acceptEdits".into()),
            ..HarnessSettings::default()
        },
    ] {
        let (builtin, wasm) = both(&settings);
        for inv in invocations(&cwd) {
            let quoted = Invocation {
                prompt: "it's \"quoted\" -- and $HOME\nnext line",
                ..inv.clone()
            };
            for inv in [inv, quoted] {
                assert_eq!(builtin.command(&inv), wasm.command(&inv), "{inv:?}");
            }
        }
        assert_eq!(builtin.engines(), wasm.engines());
        assert_eq!(builtin.slash_commands(), wasm.slash_commands());
        for env in [
            vec![],
            vec![(
                "ANTHROPIC_BASE_URL".to_string(),
                "http://127.0.0.1:9".to_string(),
            )],
        ] {
            assert_eq!(builtin.endpoints(&env), wasm.endpoints(&env));
        }
        // The login the component describes is the one the built-in checks.
        let host = |vars: &[(&str, &str)]| assay::host::HostEnv {
            path: std::env::var("PATH").unwrap_or_default(),
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let no_login = host(&[("HOME", "/nonexistent")]);
        let login = host(&[("HOME", "/nonexistent"), ("ANTHROPIC_AUTH_TOKEN", "t")]);
        let claude = agent_cli("claude");
        let path = format!("{}:/usr/bin:/bin", claude.parent().unwrap().display());
        for mut env in [no_login, login] {
            env.path = path.clone();
            assert_eq!(
                builtin.preflight(&env).is_ok(),
                wasm.preflight(&env).is_ok(),
                "{env:?}"
            );
        }
    }
}

/// The same cases through the real Claude Code CLI, once by each adapter: the same results.
#[test]
fn a_real_run_through_the_component_records_what_the_built_in_records() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script_each(
        "/greet",
        None,
        vec![
            tool(
                "Write",
                json!({"file_path": "{cwd}/greeting.txt", "content": "Hello, Ada!\n"}),
            ),
            text("Wrote greeting.txt."),
        ],
    );
    // One turn that ends in a question: both see an interactive hang.
    server.script_each("/ask", None, vec![text("Which file should I summarize?")]);
    let plugin = wasm_plugins().join("claude_code.wasm");
    let d = tempfile::tempdir().unwrap();
    let checks =
        r#"{"assertions": [{"id": "wrote", "type": "contains", "needle": "greeting.txt"}]}"#;
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                &format!("[[plugin]]\npath = {:?}\n", plugin.display().to_string()),
            ),
            (".claude/commands/greet.md", "Write greeting.txt for Ada."),
            (".claude/commands/greet.eval.json", checks),
            (".claude/commands/ask.md", "Summarize a file."),
            (".claude/commands/ask.eval.json", checks),
        ],
    );
    // The component's harness finds `claude` on PATH, as a user's would.
    let mut env = claude_env(&claude, &server);
    env.push((
        "PATH",
        format!(
            "{}:{}",
            claude.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    ));
    let mut recorded = Vec::new();
    for harness in ["claude-code", "claude-code-wasm"] {
        let out_dir = format!("out-{harness}");
        let out = assay_env(
            d.path(),
            &[
                "run",
                "--harness",
                harness,
                "--pass-env",
                "CLAUDE_CODE_MAX_RETRIES",
                "--output-dir",
                &out_dir,
                "--workspace-dir",
                "workspaces",
            ],
            &env,
        );
        assert!(
            d.path().join(&out_dir).is_dir(),
            "{harness}: {}",
            stderr(&out)
        );
        let rs = results(&d.path().join(&out_dir));
        let mut seen = Vec::new();
        for case in ["greet", "ask"] {
            let r = rs[case].clone();
            let run = Path::new(r["dir"].as_str().unwrap());
            let kinds: Vec<String> = std::fs::read_to_string(run.join("transcript.jsonl"))
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string())
                .collect();
            seen.push((r, kinds));
        }
        recorded.push((code(&out), seen, stderr(&out)));
    }
    let (a, b) = (&recorded[0], &recorded[1]);
    assert_eq!(a.0, b.0, "exit codes: {}\n{}", a.2, b.2);
    assert_eq!(a.1[0].0["status"], "completed", "{:#}", a.1[0].0);
    assert_eq!(
        a.1[1].0["error"]["category"], "interactive-hang",
        "{:#}",
        a.1[1].0
    );
    for ((ra, ka), (rb, kb)) in a.1.iter().zip(&b.1) {
        for key in [
            "status",
            "reason",
            "error",
            "skills_invoked",
            "tool_calls",
            "artifacts",
            "checks",
            "usage",
        ] {
            assert_eq!(ra[key], rb[key], "{key}: {ra:#}\n{rb:#}");
        }
        assert_eq!(
            ra["turns"][0]["final_message"],
            rb["turns"][0]["final_message"]
        );
        assert_eq!(ra["turns"][0]["error"], rb["turns"][0]["error"]);
        assert_eq!(ka, kb, "transcript event kinds");
        assert_eq!(rb["harness"], "claude-code-wasm");
    }
}
