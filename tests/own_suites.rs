//! assay's own suites in `evals/`, run end to end: every one through the real Claude Code
//! CLI, and the greeting suite through the real Codex CLI, against the scripted model server.

use crate::support;

use std::path::Path;

use serde_json::json;
use support::model_server::{ModelServer, text, tool};
use support::*;

#[test]
fn every_own_suite_runs_through_claude_code() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script(
        "greeting card for Ada",
        vec![
            tool("Skill", json!({"skill": "greeting"})),
            tool(
                "Write",
                json!({"file_path": "{cwd}/greeting.txt", "content": "Hello, Ada!\n"}),
            ),
            text("done"),
        ],
    );
    // The greeting suite's trigger evals: the model invokes the skill for the card request
    // (in each of its three runs) and not for arithmetic.
    server.script_each(
        "greeting card for my friend Ada",
        None,
        vec![
            tool("Skill", json!({"skill": "greeting"})),
            text("Here is a card for Ada."),
        ],
    );
    server.script_each("What is 2 + 2?", None, vec![text("4")]);
    fire_canary(&server, "greeting");
    server.script(
        "fox.txt",
        vec![
            tool("Bash", json!({"command": "wc -w < fox.txt"})),
            text("9 words"),
        ],
    );
    server.script(
        "eval(input())",
        vec![text(
            "Using eval() on user input is a security risk; parse it instead.",
        )],
    );
    server.script(
        "Make it one sentence",
        vec![text("Never eval() user input: it is unsafe.")],
    );
    server.script(
        "Shout 'hello world'",
        vec![
            tool("Bash", json!({"command": "sh .claude/skills/upper/scripts/upper.sh hello world | tee out.txt"})),
            text("HELLO WORLD"),
        ],
    );
    let out_dir = tempfile::tempdir().unwrap();
    let out_path = out_dir.path().display().to_string();
    let ws = out_dir.path().join("ws").display().to_string();
    let args = [
        "run",
        "evals",
        "--harness",
        "claude-code",
        "--pass-env",
        "CLAUDE_CODE_MAX_RETRIES",
        "-j",
        "2",
    ];
    let mut all = args.to_vec();
    all.extend(["--output-dir", &out_path, "--workspace-dir", &ws]);
    let out = assay_env(&repo(), &all, &claude_env(&claude, &server));
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let rs = results(out_dir.path());
    assert_eq!(rs.len(), 7, "{:?}", rs.keys());
    assert_eq!(rs["trigger-1"]["trigger"]["fired"], true);
    assert_eq!(rs["trigger-2"]["trigger"]["fired"], false);
    assert!(
        stdout(&out).contains("1.00, recall 1.00, accuracy 1.00"),
        "{}",
        stdout(&out)
    );
    let run = read_json(&out_dir.path().join("run.json"));
    assert!(
        run["harnesses"]["claude-code"]
            .as_str()
            .unwrap()
            .contains("2.1.197"),
        "{run:#}"
    );
    for (case, r) in &rs {
        assert_eq!(r["status"], "completed", "{case}: {r:#}");
    }
    let greeting = &rs["writes-card"];
    assert_eq!(greeting["skills_invoked"], json!(["greeting"]));
    let dir = |r: &serde_json::Value| Path::new(r["dir"].as_str().unwrap()).to_path_buf();
    assert_eq!(
        std::fs::read_to_string(dir(greeting).join("artifacts/greeting.txt")).unwrap(),
        "Hello, Ada!\n"
    );

    let count = &rs["word-count"];
    assert_eq!(count["turns"][0]["final_message"], "9 words");
    assert_eq!(count["tool_calls"]["Bash"], 1);
    // The command's output (from the staged input file) went back to the model.
    let counted = server.requests().iter().any(|q| {
        let blocks = q["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["content"].as_array().into_iter().flatten());
        blocks.into_iter().any(|b| {
            b["type"] == "tool_result"
                && (b["content"].as_str().is_some_and(|c| c.trim() == "9")
                    || b["content"][0]["text"]
                        .as_str()
                        .is_some_and(|c| c.trim() == "9"))
        })
    });
    assert!(
        counted,
        "the Bash result `9` (words in the staged fox.txt) went back to the model"
    );

    let review = &rs["001"];
    assert_eq!(review["turns"].as_array().unwrap().len(), 2);

    let shout = &rs["shout"];
    assert_eq!(
        std::fs::read_to_string(dir(shout).join("artifacts/out.txt")).unwrap(),
        "HELLO WORLD\n"
    );
    assert_eq!(rs["shouts"]["turns"][0]["final_message"], "HELLO WORLD\n");
}

#[test]
fn the_greeting_suite_runs_through_codex() {
    let codex = agent_cli("codex");
    let server = ModelServer::start();
    server.script(
        "greeting card for Ada",
        vec![
            tool("exec_command", json!({"cmd": "cat .claude/skills/greeting/SKILL.md >/dev/null; printf 'Hello, Ada!\\n' > greeting.txt"})),
            text("done"),
        ],
    );
    let out_dir = tempfile::tempdir().unwrap();
    let out_path = out_dir.path().display().to_string();
    let args = [
        "run",
        "evals/greeting",
        "--harness",
        "codex",
        "--model",
        "gpt-test",
        // The trigger evals run through Claude Code in the test above.
        "--mode",
        "artifacts",
    ];
    let mut all = args.to_vec();
    all.extend(["--output-dir", &out_path]);
    let out = assay_env(&repo(), &all, &codex_env(&codex, &server));
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(out_dir.path())["writes-card"];
    assert_eq!(r["harness"], "codex");
    assert_eq!(r["skills_invoked"], json!(["greeting"]));
    let dir = Path::new(r["dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(dir.join("artifacts/greeting.txt")).unwrap(),
        "Hello, Ada!\n"
    );
}
