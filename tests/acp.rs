//! The `acp` harness: assay as an Agent Client Protocol client, driving a scripted ACP agent
//! (`tests/fixtures/acp/fake-acp-agent`, Python, no model) through the sandbox: a skill
//! load, a permission asked and answered, a file written, a crash, a protocol error, a hang
//! cut by the timeout, trigger evals, and later turns resumed in the same session.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::json;
use support::*;

/// The scripted agent, installed in a folder outside the project (on PATH).
fn agent(tools: &Path) -> PathBuf {
    let bin = tools.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(
        repo().join("tests/fixtures/acp/fake-acp-agent"),
        bin.join("fake-acp-agent"),
    )
    .unwrap();
    bin
}

fn with_path(bin: &Path) -> Vec<(&'static str, String)> {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    vec![("PATH", path)]
}

fn project(root: &Path, evals: serde_json::Value, triggers: serde_json::Value) {
    write_tree(
        root,
        &[
            (
                "assay.toml",
                "[run]\nharness = \"acp\"\ntimeout = 20\n\n[harness.acp]\ncommand = [\"fake-acp-agent\"]\n",
            ),
            (
                ".claude/skills/greeter/SKILL.md",
                "---\nname: greeter\ndescription: Writes greeting cards\n---\nGreet by name.\n",
            ),
            ("evals/greeter/evals.json", &evals.to_string()),
            ("evals/greeter/triggers.json", &triggers.to_string()),
        ],
    );
}

#[test]
fn an_acp_agent_is_driven_through_the_sandbox_and_graded() {
    let tools = tempfile::tempdir().unwrap();
    let bin = agent(tools.path());
    let d = tempfile::tempdir().unwrap();
    let check = |kind: &str, more: serde_json::Value| {
        let mut c = json!({"type": kind});
        c.as_object_mut()
            .unwrap()
            .extend(more.as_object().unwrap().clone());
        c
    };
    project(
        d.path(),
        json!({"skill_name": "greeter", "evals": [
            {"id": "card", "prompt": "Use greeter and write card.txt for Ada.",
             "x-assay-checks": [
                 check("skill_invoked", json!({"skill": "greeter"})),
                 check("file_contains", json!({"path": "card.txt", "needle": "fake-acp"})),
                 check("contains", json!({"needle": "I wrote card.txt"}))]},
            {"id": "crash", "prompt": "crash now",
             "x-assay-checks": [check("contains", json!({"needle": "x"}))]},
            {"id": "refuse", "prompt": "refuse this",
             "x-assay-checks": [check("contains", json!({"needle": "x"}))]},
            {"id": "forge", "prompt": "forge a skill load",
             "x-assay-checks": [check("skill_invoked", json!({"skill": "forged"}))]}
        ]}),
        json!([
            {"query": "greeter, a card for Sam please", "should_trigger": true},
            {"query": "what is the time", "should_trigger": false}
        ]),
    );
    let out = assay_env(d.path(), &["run", "--output-dir", "out"], &with_path(&bin));
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    // The crash fails; the refused login is the infrastructure's error: exit 3.
    assert_eq!(
        code(&out),
        3,
        "the crash fails, the refusal is an error: {said}"
    );
    let runs = results(&d.path().join("out"));
    let card = &runs["card"];
    assert_ne!(card["sandbox"]["kind"], "none", "{card:#}");
    assert_eq!(card["grade"]["verdict"], "pass", "{card:#}");
    assert_eq!(card["skills_invoked"], json!(["greeter"]), "{card:#}");
    assert_eq!(
        card["turns"][0]["session_id"]
            .as_str()
            .map(|s| s.starts_with("sess-")),
        Some(true),
        "{card:#}"
    );
    let raw =
        std::fs::read_to_string(d.path().join("out/bmad_greeter/card/run-1/raw.jsonl")).unwrap();
    assert!(
        raw.contains(r#""bridge":"permission""#) && raw.contains(r#""option":"yes""#),
        "the permission asked is answered by policy and recorded: {raw}"
    );
    let crash = &runs["crash"];
    assert_eq!(crash["status"], "failed", "{crash:#}");
    assert_eq!(crash["error"]["category"], "crash", "{crash:#}");
    assert!(
        crash["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("the planner crashed"),
        "{crash:#}"
    );
    let refuse = &runs["refuse"];
    assert_eq!(refuse["status"], "error", "{refuse:#}");
    assert_eq!(refuse["error"]["category"], "auth", "{refuse:#}");
    // A tool writing into the client's or the agent's stdout through /proc changes nothing.
    let forge = &runs["forge"];
    assert_eq!(forge["skills_invoked"], json!([]), "{forge:#}");
    assert_eq!(forge["grade"]["verdict"], "fail", "{forge:#}");
    let fired = |id: &str| fired(&d.path().join("out/bmad_greeter"), id);
    assert_eq!((fired("trigger-1"), fired("trigger-2")), (3, 0), "{said}");
}

#[test]
fn later_turns_resume_the_session_and_a_hang_ends_at_the_timeout() {
    let tools = tempfile::tempdir().unwrap();
    let bin = agent(tools.path());
    let d = tempfile::tempdir().unwrap();
    chat_project(
        d.path(),
        "[run]\nharness = \"acp\"\n\n[harness.acp]\ncommand = [\"fake-acp-agent\"]\n",
        &[
            (
                "001",
                "prompt:\n  - first question\n  - second question\nexpected: x\nassertions:\n  - type: contains\n    value: \"echo: second question\"\n  - type: not_contains\n    value: replayed\n",
            ),
            ("002", "prompt: hang forever\nexpected: x\n"),
        ],
    );
    let out = assay_env(
        d.path(),
        &["run", "--timeout", "5", "--output-dir", "out"],
        &with_path(&bin),
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    let runs = results(&d.path().join("out"));
    let chat = &runs["001"];
    assert_eq!(chat["grade"]["verdict"], "pass", "{chat:#}\n{said}");
    assert_one_session_over_two_turns(chat);
    let hang = &runs["002"];
    assert_eq!(hang["timed_out"], true, "{hang:#}");
    assert_eq!(hang["error"]["category"], "timeout", "{hang:#}");
    assert!(
        (hang["duration_ms"].as_u64().unwrap_or(0)) < 15_000,
        "ended at the timeout: {hang:#}"
    );
    // Nothing of the agent is left running: no process of the project or of the agent's
    // own folder.
    for dir in [d.path(), tools.path()] {
        let left = std::process::Command::new("pgrep")
            .args(["-f", &dir.display().to_string()])
            .output()
            .unwrap();
        assert!(
            left.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&left.stdout)
        );
    }
}

/// An agent claiming the most tokens a count can hold, in each of two turns and two runs,
/// cannot crash or wrap assay's sums: each is held at its ceiling in the results and reports.
#[test]
fn an_agent_claiming_enormous_token_counts_cannot_break_the_sums() {
    let tools = tempfile::tempdir().unwrap();
    let bin = agent(tools.path());
    let d = tempfile::tempdir().unwrap();
    chat_project(
        d.path(),
        "[run]\nharness = \"acp\"\n\n[harness.acp]\ncommand = [\"fake-acp-agent\"]\n",
        &[(
            "001",
            "prompt:\n  - count the tokens\n  - the tokens again\nexpected: x\n",
        )],
    );
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--runs",
            "2",
            "--output-dir",
            "out",
            "--reporter",
            "json,html,junit,markdown",
        ],
        &with_path(&bin),
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert!(code(&out) <= 1, "no crash: {said}");
    let runs = results_by_folder(&d.path().join("out"));
    assert_eq!(runs.len(), 2, "{said}");
    for (dir, r) in runs {
        assert_eq!(
            r["usage"]["input_tokens"],
            json!(u64::MAX),
            "{dir:?}: {r:#}"
        );
    }
    let report = read_json(&d.path().join("out/report.json"));
    assert!(
        report.to_string().contains(&u64::MAX.to_string()),
        "{report:#}"
    );
    assert!(d.path().join("out/report.html").is_file());
}

/// One engine end to end against the model server: the model loads the skill, writes the card
/// with `write` and runs `mark` (that engine's tool calls), and answers the trigger pair (and
/// the canary); the run must pass, record the engine's version, and fire 3/3 and 0/3; then
/// other formats' suites, and a hang (its raw session returned).
struct EngineRun<'a> {
    harness: &'a str,
    /// The engine's skill tool (`skill`, Claude's `Skill`) and the key naming the skill in
    /// its input (`skill`, OpenCode's `name`).
    skill_tool: (&'a str, &'a str),
    env: Vec<(&'static str, String)>,
    write: support::model_server::Reply,
    mark: support::model_server::Reply,
    version: &'a str,
}

fn engine_end_to_end(server: &support::model_server::ModelServer, e: EngineRun<'_>) -> String {
    use support::model_server::{text, tool};
    let skill = || tool(e.skill_tool.0, json!({e.skill_tool.1: "greeter"}));
    server.script_each(
        "card for Ada",
        None,
        vec![skill(), e.write, e.mark, text("The card is written.")],
    );
    // Trigger evals (and the canary): the skill where the query asks for it, none elsewhere.
    for when in ["card for Sam", "Use the greeter skill"] {
        server.script_each(when, None, vec![skill(), text("ok")]);
    }
    let d = tempfile::tempdir().unwrap();
    let checks = json!([
        {"type": "skill_invoked", "skill": "greeter"},
        {"type": "file_contains", "path": "card.txt", "needle": "Ada"},
        {"type": "file_exists", "path": "ran.txt"}]);
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                &format!("[run]\nharness = \"{}\"\ntimeout = 120\n", e.harness),
            ),
            (
                ".claude/skills/greeter/SKILL.md",
                "---\nname: greeter\ndescription: Writes greeting cards\n---\nWrite the card to card.txt.\n",
            ),
            (
                "evals/greeter/evals.json",
                &json!({"skill_name": "greeter", "evals": [
                    {"id": "card", "prompt": "Write a greeting card for Ada.", "x-assay-checks": checks}]})
                .to_string(),
            ),
            (
                "evals/greeter/triggers.json",
                &json!([
                    {"query": "Write a greeting card for Sam", "should_trigger": true},
                    {"query": "What is the capital of France?", "should_trigger": false}
                ])
                .to_string(),
            ),
        ],
    );
    let out = assay_env(
        d.path(),
        &["run", "--model", "gpt-test", "--output-dir", "out"],
        &e.env,
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    let tools: Vec<String> = server
        .requests()
        .iter()
        .flat_map(|r| r["tools"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    let runs = results(&d.path().join("out"));
    let card = &runs["card"];
    assert_eq!(
        card["grade"]["verdict"], "pass",
        "{card:#}\n{said}\ntools offered: {tools:?}"
    );
    assert_eq!(card["skills_invoked"], json!(["greeter"]), "{card:#}");
    assert_eq!(code(&out), 0, "{said}");
    let run = read_json(&d.path().join("out/run.json"));
    let version = run["harnesses"][e.harness].as_str().unwrap_or_default();
    assert!(version.contains(e.version), "{run:#}");
    let fired = |id: &str| fired(&d.path().join("out/bmad_greeter"), id);
    assert_eq!((fired("trigger-1"), fired("trigger-2")), (3, 0), "{said}");
    // Each trigger run stopped at the load: the model is asked nothing after it (no request
    // carries the load's result), while the case above, a full run, went on after its load.
    let after_load = |query: &str| {
        server
            .requests()
            .iter()
            .map(|r| r.to_string())
            .filter(|r| {
                r.contains(query) && (r.contains("tool_call_id") || r.contains("tool_result"))
            })
            .count()
    };
    assert_eq!(after_load("card for Sam"), 0, "{said}");
    let stop = results_by_folder(&d.path().join("out/bmad_greeter/trigger-1"));
    for (run, r) in &stop {
        // The canary saw the load work: each run stops at the call.
        assert_eq!(r["stopped_at"]["event"], "skill_called", "{run}: {r:#}");
    }
    assert!(after_load("card for Ada") > 0, "{said}");
    other_formats_run(server, e.harness, &e.env);
    hang_ends_at_the_timeout(server, e.harness, &e.env)
}

/// A suite in skill-creator's layout (`skills/<name>/evals/evals.json`, read as the BMAD format)
/// and a clauditor suite (a slash command, expanded by assay: an ACP agent has none) run on the
/// engine as they run on Claude Code; BMAD's own layout runs above, Skillet's in the hang,
/// UAAPS's in its own test.
fn other_formats_run(
    server: &support::model_server::ModelServer,
    harness: &str,
    env: &[(&'static str, String)],
) {
    server.script_each(
        "Formats:",
        None,
        vec![support::model_server::text("The note for Bo is done.")],
    );
    let f = tempfile::tempdir().unwrap();
    let said = r#"{"type": "contains", "needle": "note for Bo is done"}"#;
    write_tree(
        f.path(),
        &[
            ("assay.toml", &format!("[run]\nharness = \"{harness}\"\n")),
            (
                "skills/greeter/SKILL.md",
                "---\nname: greeter\ndescription: Writes greeting cards\n---\nWrite the card.\n",
            ),
            (
                "skills/greeter/evals/evals.json",
                &format!(
                    r#"{{"skill_name": "greeter", "evals": [{{"id": "sc", "prompt": "Formats: a note for Bo", "x-assay-checks": [{said}]}}]}}"#
                ),
            ),
            (
                ".claude/commands/greet.md",
                "Formats: greet Bo with a note.",
            ),
            (
                ".claude/commands/greet.eval.json",
                r#"{"assertions": [{"id": "said", "type": "contains", "needle": "note for Bo is done"}]}"#,
            ),
        ],
    );
    let out = assay_env(
        f.path(),
        &["run", "--model", "gpt-test", "--output-dir", "out"],
        env,
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    let runs = results(&f.path().join("out"));
    assert_eq!(runs.len(), 2, "{harness}: {said}");
    for (id, r) in &runs {
        assert_eq!(
            r["grade"]["verdict"], "pass",
            "{harness} {id}: {r:#}\n{said}"
        );
    }
}

/// A turn hung on the model (mid-turn: the agent is waiting for its answer) ends at the
/// timeout: the client sends `session/cancel` before any signal reaches the agent, and
/// nothing pointed at this test's model server is left running.
fn hang_ends_at_the_timeout(
    server: &support::model_server::ModelServer,
    harness: &str,
    env: &[(&'static str, String)],
) -> String {
    server.script_each(
        "Hang on the model",
        None,
        vec![support::model_server::Reply::Hang],
    );
    let h = tempfile::tempdir().unwrap();
    chat_project(
        h.path(),
        &format!("[run]\nharness = \"{harness}\"\n"),
        &[("001", "prompt: Hang on the model\nexpected: x\n")],
    );
    let out = assay_env(
        h.path(),
        &[
            "run",
            "--timeout",
            "30",
            "--model",
            "gpt-test",
            "--output-dir",
            "out",
        ],
        env,
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    let runs = results(&h.path().join("out"));
    let hang = &runs["001"];
    assert_eq!(hang["timed_out"], true, "{hang:#}\n{said}");
    assert_eq!(hang["error"]["category"], "timeout", "{hang:#}");
    assert!(
        hang["duration_ms"].as_u64().unwrap_or(0) < 45_000,
        "ended at the timeout: {hang:#}"
    );
    let raw = std::fs::read_to_string(h.path().join("out/skillet_chat/001/run-1/raw.jsonl"))
        .unwrap_or_default();
    assert!(raw.contains(r#"{"bridge":"cancelled"}"#), "{raw}");
    assert_eq!(
        processes_with_env(&server.url),
        Vec::<String>::new(),
        "{harness}"
    );
    raw
}

#[test]
fn qwen_code_over_acp_loads_the_skill_writes_a_file_and_runs_a_command() {
    use support::model_server::{ModelServer, tool};
    let qwen = agent_cli("qwen");
    let server = ModelServer::start();
    let mut env = with_path(qwen.parent().unwrap());
    env.push(("OPENAI_BASE_URL", format!("{}/v1", server.url)));
    env.push(("OPENAI_API_KEY", "sk-test".into()));
    engine_end_to_end(
        &server,
        EngineRun {
            harness: "qwen-code",
            skill_tool: ("skill", "skill"),
            env,
            write: tool(
                "write_file",
                json!({"file_path": "{cwd}/card.txt", "content": "Hello, Ada!"}),
            ),
            mark: tool(
                "run_shell_command",
                json!({"command": "echo ran > ran.txt"}),
            ),
            version: "0.24.4",
        },
    );
}

#[test]
fn opencode_over_acp_loads_the_skill_writes_a_file_and_runs_a_command() {
    use support::model_server::{ModelServer, tool};
    let opencode = agent_cli("opencode");
    let server = ModelServer::start();
    let mut env = with_path(opencode.parent().unwrap());
    env.push(("OPENAI_BASE_URL", format!("{}/v1", server.url)));
    env.push(("OPENAI_API_KEY", "sk-test".into()));
    let raw = engine_end_to_end(
        &server,
        EngineRun {
            harness: "opencode",
            skill_tool: ("skill", "name"),
            env,
            // With a GPT-named model, OpenCode writes files by patch.
            write: tool(
                "apply_patch",
                json!({"patchText": "*** Begin Patch\n*** Add File: card.txt\n+Hello, Ada!\n*** End Patch"}),
            ),
            mark: tool(
                "bash",
                json!({"command": "echo ran > ran.txt", "description": "a step"}),
            ),
            version: "1.18.33",
        },
    );
    // OpenCode ends a cancelled turn by answering the prompt `cancelled`.
    assert!(raw.contains(r#""stopReason":"cancelled""#), "{raw}");
}

#[test]
fn copilot_over_acp_loads_the_skill_writes_a_file_and_runs_a_command() {
    use support::model_server::{ModelServer, tool};
    let copilot = agent_cli("copilot");
    let server = ModelServer::start();
    let mut env = with_path(copilot.parent().unwrap());
    env.push(("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", server.url)));
    env.push(("COPILOT_PROVIDER_API_KEY", "sk-test".into()));
    env.push(("COPILOT_PROVIDER_TYPE", "openai".into()));
    let bash = |command: &str| tool("bash", json!({"command": command, "description": "a step"}));
    engine_end_to_end(
        &server,
        EngineRun {
            harness: "copilot",
            skill_tool: ("skill", "skill"),
            env,
            // Copilot has no file-writing tool of its own but its shell.
            write: bash("printf 'Hello, Ada!\\n' > card.txt"),
            mark: bash("echo ran > ran.txt"),
            version: "1.0.102",
        },
    );
}

#[test]
fn claude_code_over_acp_loads_the_skill_writes_a_file_and_runs_a_command() {
    use support::model_server::{ModelServer, tool};
    let adapter = agent_cli("claude-agent-acp");
    let server = ModelServer::start();
    let mut env = with_path(adapter.parent().unwrap());
    env.push(("ANTHROPIC_BASE_URL", server.url.clone()));
    env.push(("ANTHROPIC_API_KEY", "sk-assay-test".into()));
    env.push(("CLAUDE_CODE_MAX_RETRIES", "0".into()));
    engine_end_to_end(
        &server,
        EngineRun {
            harness: "claude-code-acp",
            skill_tool: ("Skill", "skill"),
            env,
            write: tool(
                "Write",
                json!({"file_path": "{cwd}/card.txt", "content": "Hello, Ada!"}),
            ),
            mark: tool("Bash", json!({"command": "echo ran > ran.txt"})),
            version: "0.101.0",
        },
    );
}

#[test]
fn claude_code_and_claude_code_over_acp_give_the_same_verdicts_and_tool_calls() {
    use support::model_server::{ModelServer, text, tool};
    let claude = agent_cli("claude");
    let adapter = agent_cli("claude-agent-acp");
    let server = ModelServer::start();
    server.script_each(
        "card for Ada",
        None,
        vec![
            tool("Skill", json!({"skill": "greeter"})),
            tool(
                "Write",
                json!({"file_path": "{cwd}/card.txt", "content": "Hello, Ada!"}),
            ),
            tool("Bash", json!({"command": "echo ran > ran.txt"})),
            text("The card is written."),
        ],
    );
    server.script_each(
        "card for Bob",
        None,
        vec![
            tool("Bash", json!({"command": "echo Bob > bob.txt"})),
            text("done"),
        ],
    );
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                ".claude/skills/greeter/SKILL.md",
                "---\nname: greeter\ndescription: Writes greeting cards\n---\nWrite the card.\n",
            ),
            (
                "evals/greeter/evals.json",
                &json!({"skill_name": "greeter", "evals": [
                    {"id": "ada", "prompt": "Write a greeting card for Ada.", "x-assay-checks": [
                        {"type": "skill_invoked", "skill": "greeter"},
                        {"type": "file_contains", "path": "card.txt", "needle": "Ada"}]},
                    {"id": "bob", "prompt": "Write a greeting card for Bob.", "x-assay-checks": [
                        {"type": "skill_invoked", "skill": "greeter"},
                        {"type": "file_exists", "path": "bob.txt"}]}]})
                .to_string(),
            ),
        ],
    );
    let mut env = claude_env(&claude, &server);
    env.extend(with_path(adapter.parent().unwrap()));
    let mut seen = Vec::new();
    for harness in ["claude-code", "claude-code-acp"] {
        let out_dir = format!("out-{harness}");
        let out = assay_env(
            d.path(),
            &[
                "run",
                "--harness",
                harness,
                "--mode",
                "artifacts",
                "--output-dir",
                &out_dir,
            ],
            &env,
        );
        let said = format!("{}\n{}", stdout(&out), stderr(&out));
        let runs = results(&d.path().join(&out_dir));
        let view: Vec<_> = ["ada", "bob"]
            .iter()
            .map(|id| {
                let r = &runs[*id];
                (
                    r["grade"]["verdict"].clone(),
                    r["tool_calls"].clone(),
                    r["skills_invoked"].clone(),
                )
            })
            .collect();
        assert_eq!(code(&out), 1, "bob fails its skill check: {said}");
        seen.push((harness, view));
    }
    assert_eq!(seen[0].1, seen[1].1, "{seen:#?}");
    assert_eq!(seen[0].1[0].0, "pass");
    assert_eq!(seen[0].1[1].0, "fail");
}

/// A real engine (OpenCode) keeps one session over a case's turns: the second turn's request
/// carries the first's conversation, and nothing of the agent is left running after.
#[test]
fn opencode_keeps_one_session_over_turns() {
    use support::model_server::{ModelServer, text};
    let opencode = agent_cli("opencode");
    let server = ModelServer::start();
    server.script_each("first question", None, vec![text("one")]);
    let second = text("echo: second question");
    server.script_each("second question", None, vec![second.clone(), second]);
    let mut env = with_path(opencode.parent().unwrap());
    env.push(("OPENAI_BASE_URL", format!("{}/v1", server.url)));
    env.push(("OPENAI_API_KEY", "sk-test".into()));
    let d = tempfile::tempdir().unwrap();
    chat_project(
        d.path(),
        "[run]\nharness = \"opencode\"\n",
        &[(
            "001",
            "prompt:\n  - first question\n  - second question\nexpected: x\nassertions:\n  - type: contains\n    value: \"echo: second question\"\n",
        )],
    );
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--timeout",
            "60",
            "--model",
            "m1",
            "--output-dir",
            "out",
        ],
        &env,
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    let runs = results(&d.path().join("out"));
    let chat = &runs["001"];
    assert_eq!(chat["grade"]["verdict"], "pass", "{chat:#}\n{said}");
    assert_one_session_over_two_turns(chat);
    let continued = server.requests().iter().any(|r| {
        let m = r["messages"].to_string();
        m.contains("second question") && m.contains("first question") && m.contains("one")
    });
    assert!(continued, "the second turn carries the first");
    assert_eq!(processes_with_env(&server.url), Vec::<String>::new());
}

/// The case-run's two turns ran in one session (the second loaded the first's).
fn assert_one_session_over_two_turns(case: &serde_json::Value) {
    let sessions: Vec<&str> = case["turns"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["session_id"].as_str())
        .collect();
    assert_eq!(sessions.len(), 2, "{case:#}");
    assert_eq!(sessions[0], sessions[1], "one session for both turns");
}

/// A Skillet project whose skill `chat` has these cases (`evals/chat/<id>.yaml`, each given
/// as what follows its timestamp and name), run as its `assay.toml` says.
fn chat_project(root: &Path, toml: &str, cases: &[(&str, &str)]) {
    let mut files = vec![
        ("assay.toml".to_string(), toml.to_string()),
        (
            ".claude/skills/chat/SKILL.md".to_string(),
            "---\nname: chat\ndescription: Chats\n---\nChat.\n".to_string(),
        ),
    ];
    for (id, rest) in cases {
        files.push((
            format!("evals/chat/{id}.yaml"),
            format!("timestamp: 2026-11-26T00:00:00Z\nname: chat\n{rest}"),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    write_tree(root, &files);
}

/// The processes (pid and command line) with a variable whose value holds `needle` (a model
/// server's URL: each test's own).
fn processes_with_env(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().to_string();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let holds = |v: &[u8]| v.windows(needle.len()).any(|w| w == needle.as_bytes());
        if environ.split(|b| *b == 0).any(holds) {
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push(format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmd).replace('\0', " ")
            ));
        }
    }
    found
}

/// A UAAPS package whose `engine` is `copilot` (reserved by the spec until it ran headless)
/// runs on Copilot CLI over ACP with no `--harness`, and with `--harness` on OpenCode, Qwen
/// Code and Claude's adapter; the package's MCP server reaches each (Copilot in its settings,
/// the others in ACP's `session/new`) and its tool is called.
#[test]
fn a_uaaps_package_for_copilot_runs_on_it_and_on_each_acp_engine_with_its_mcp_server() {
    use support::model_server::{ModelServer, text, tool};
    let (copilot, opencode) = (agent_cli("copilot"), agent_cli("opencode"));
    let server = ModelServer::start();
    let d = tempfile::tempdir().unwrap();
    let servers =
        json!({"mcpServers": {"pkgecho": {"command": "python3", "args": ["-c", MCP_ECHO_SERVER]}}});
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                "package.agent.json",
                r#"{"name": "@t/kit", "version": "1.0.0"}"#,
            ),
            (
                "skills/lint/SKILL.md",
                "---\nname: lint\ndescription: Lints files.\n---\nLint.\n",
            ),
            ("mcp/servers.json", &servers.to_string()),
            (
                "evals/eval-config.json",
                r#"{"version": 1, "engine": "copilot"}"#,
            ),
            (
                "evals/cases/create.yaml",
                "name: create\ninput:\n  prompt: create the files\nexpected:\n  files-created: [out/new.txt, mcp-called.txt]\njudge:\n  criteria: It creates.\n",
            ),
        ],
    );
    let steps = |mcp_tool: &str, shell: &str| {
        vec![
            tool(mcp_tool, json!({})),
            tool(
                shell,
                json!({"command": "mkdir -p out && echo x > out/new.txt", "description": "a step"}),
            ),
            text("Created."),
        ]
    };
    // Each names an MCP tool (and its shell) its own way; each is told apart by a tool only
    // it offers.
    for (only, mcp_tool, shell) in [
        ("read_bash", "pkgecho-pkg_echo_tool", "bash"),
        ("todowrite", "pkgecho_pkg_echo_tool", "bash"),
        (
            "run_shell_command",
            "mcp__pkgecho__pkg_echo_tool",
            "run_shell_command",
        ),
        ("mcp__pkgecho", "mcp__pkgecho__pkg_echo_tool", "Bash"),
    ] {
        server.script_each("create the files", Some(only), steps(mcp_tool, shell));
    }
    let mut env = with_path(copilot.parent().unwrap());
    env[0].1 = format!("{}:{}", opencode.parent().unwrap().display(), env[0].1);
    env.push(("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", server.url)));
    env.push(("COPILOT_PROVIDER_API_KEY", "sk-test".into()));
    env.push(("COPILOT_PROVIDER_TYPE", "openai".into()));
    env.push(("OPENAI_BASE_URL", format!("{}/v1", server.url)));
    env.push(("OPENAI_API_KEY", "sk-test".into()));
    env.push(("ANTHROPIC_BASE_URL", server.url.clone()));
    env.push(("ANTHROPIC_API_KEY", "sk-assay-test".into()));
    env.push(("CLAUDE_CODE_MAX_RETRIES", "0".into()));
    let engines = [
        (None, "out-copilot"),
        (Some("opencode"), "out-opencode"),
        (Some("qwen-code"), "out-qwen"),
        (Some("claude-code-acp"), "out-claude"),
    ];
    for (harness, out) in engines {
        let mut args = vec![
            "run",
            "--judge",
            "none",
            "--model",
            "gpt-test",
            "--output-dir",
            out,
        ];
        if let Some(h) = harness {
            args.extend(["--harness", h]);
        }
        let ran = assay_env(d.path(), &args, &env);
        let said = format!("{}\n{}", stdout(&ran), stderr(&ran));
        let runs = results(&d.path().join(out));
        let create = runs
            .iter()
            .find(|(k, _)| k.ends_with("create"))
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no create: {said}"));
        // Both files made: the agent's, and the MCP tool's (the judge is off).
        assert_eq!(
            (
                &create["grade"]["checks_passed"],
                &create["grade"]["checks_total"]
            ),
            (&json!(2), &json!(2)),
            "{harness:?}: {create:#}\n{said}"
        );
        let run = read_json(&d.path().join(out).join("run.json"));
        let name = harness.unwrap_or("copilot");
        assert!(run["harnesses"][name].is_string(), "{run:#}");
    }
}

/// An engine over ACP against a model API that is down: its case and its should-not-fire
/// trigger query (run once, no canary) each hit `prompt`'s outage. Returns what assay said, its
/// exit, how long it took and the case-runs by case.
fn outage_run(
    harness: &str,
    env: &[(&'static str, String)],
    prompt: &str,
) -> (
    String,
    i32,
    f64,
    std::collections::BTreeMap<String, serde_json::Value>,
) {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                &format!("[run]\nharness = \"{harness}\"\ntimeout = 300\n"),
            ),
            (
                ".claude/skills/greeter/SKILL.md",
                "---\nname: greeter\ndescription: Writes greeting cards\n---\nWrite the card to card.txt.\n",
            ),
            (
                "evals/greeter/evals.json",
                &json!({"skill_name": "greeter", "evals": [{"id": "card", "prompt": prompt,
                    "x-assay-checks": [{"type": "file_exists", "path": "card.txt"}]}]})
                .to_string(),
            ),
            (
                "evals/greeter/triggers.json",
                &json!([{"query": format!("What is the capital of France? {prompt}"),
                    "should_trigger": false}])
                .to_string(),
            ),
        ],
    );
    let started = std::time::Instant::now();
    let args = [
        "run",
        "--model",
        "gpt-test",
        "--no-canary",
        "--trigger-runs",
        "1",
        "--output-dir",
        "out",
    ];
    let out = assay_env(d.path(), &args, env);
    let secs = started.elapsed().as_secs_f64();
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    (said, code(&out), secs, results(&d.path().join("out")))
}

/// An outage on one engine: a 500 on every request, a 429 on every request, and a refused
/// connection (its base URL variable pointed at a closed port) each end the case-run as an
/// error of that category (exit 3), and the should-not-fire query could not tell (never a
/// pass), within `bound` seconds each.
fn an_outage_is_an_error_on(
    harness: &str,
    base_url: (&'static str, &str),
    env: Vec<(&'static str, String)>,
    bound: f64,
) {
    use support::model_server::{ModelServer, Reply};
    let server = ModelServer::start();
    server.script_each("break please", None, vec![Reply::Down(500)]);
    server.script_each("limit please", None, vec![Reply::Down(429)]);
    let outages = [
        ("Write a card, break please.", "server", server.url.clone()),
        (
            "Write a card, limit please.",
            "rate-limit",
            server.url.clone(),
        ),
        (
            "Write a card.",
            "network",
            support::model_server::refused_url(),
        ),
    ];
    // The three at once: each takes the engine's own retries.
    std::thread::scope(|scope| {
        let runs: Vec<_> = outages
            .iter()
            .map(|(prompt, category, url)| {
                let mut env = env.clone();
                env.retain(|(k, _)| *k != base_url.0);
                env.push((base_url.0, format!("{url}{}", base_url.1)));
                (
                    *category,
                    scope.spawn(move || outage_run(harness, &env, prompt)),
                )
            })
            .collect();
        for (category, run) in runs {
            let (said, exit, secs, runs) = run.join().unwrap();
            eprintln!("{harness} {category}: exit {exit}, {secs:.1} s");
            assert_eq!(exit, 3, "{harness} {category}: {said}");
            for (id, r) in &runs {
                assert_eq!(
                    r["status"], "error",
                    "{harness} {category} {id}: {r:#}\n{said}"
                );
                assert_eq!(r["error"]["category"], category, "{harness} {id}: {r:#}");
            }
            assert_eq!(
                runs["trigger-1"]["trigger"]["fired"],
                serde_json::Value::Null
            );
            assert!(said.contains("could not tell"), "{said}");
            assert!(!said.contains("PASS "), "{said}");
            assert!(secs < bound, "{harness} {category}: {secs:.1} s\n{said}");
        }
    });
    let asked = |what: &str| {
        server
            .requests()
            .iter()
            .filter(|q| q.to_string().contains(what))
            .count()
    };
    eprintln!(
        "{harness}: {} requests in the 500 outage, {} in the 429 (a case and a query each)",
        asked("break please"),
        asked("limit please")
    );
}

#[test]
fn copilot_over_acp_an_outage_is_an_error() {
    let copilot = agent_cli("copilot");
    let mut env = with_path(copilot.parent().unwrap());
    env.push(("COPILOT_PROVIDER_API_KEY", "sk-test".into()));
    env.push(("COPILOT_PROVIDER_TYPE", "openai".into()));
    an_outage_is_an_error_on("copilot", ("COPILOT_PROVIDER_BASE_URL", "/v1"), env, 150.0);
}

#[test]
fn qwen_code_over_acp_an_outage_is_an_error() {
    let qwen = agent_cli("qwen");
    let mut env = with_path(qwen.parent().unwrap());
    env.push(("OPENAI_API_KEY", "sk-test".into()));
    an_outage_is_an_error_on("qwen-code", ("OPENAI_BASE_URL", "/v1"), env, 420.0);
}

#[test]
fn opencode_over_acp_an_outage_is_an_error() {
    let opencode = agent_cli("opencode");
    let mut env = with_path(opencode.parent().unwrap());
    env.push(("OPENAI_API_KEY", "sk-test".into()));
    an_outage_is_an_error_on("opencode", ("OPENAI_BASE_URL", "/v1"), env, 180.0);
}

#[test]
fn claude_code_over_acp_an_outage_is_an_error() {
    let adapter = agent_cli("claude-agent-acp");
    let mut env = with_path(adapter.parent().unwrap());
    env.push(("ANTHROPIC_API_KEY", "sk-assay-test".into()));
    an_outage_is_an_error_on("claude-code-acp", ("ANTHROPIC_BASE_URL", ""), env, 60.0);
}
