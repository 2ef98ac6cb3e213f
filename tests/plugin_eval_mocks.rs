//! Claude Code plugin evals' MCP mocks, run through the real Claude Code CLI: the plugin's
//! mocked server answered by assay's stand-in (a canned body with the call's fields, a
//! model playing the server), a server with no mock not started, a call that breaks a guard
//! aborting the run, and the calls graded through `target: mock_calls`.

use crate::support;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use support::model_server::{ModelServer, text, tool};
use support::*;

const MANIFEST: &str = r#"{"name": "desk", "version": "1.0.0"}"#;
/// Two servers: `tracker` (mocked) at an address that does not exist, and `pager`, whose
/// command would leave a mark if it ever started.
const MCP: &str = r#"{"mcpServers": {
  "tracker": {"type": "http", "url": "https://tracker.invalid/mcp"},
  "pager": {"command": "sh", "args": ["-c", "touch \"$HOME/pager-started\"; exit 1"]}
}}"#;
const CREATE: &str = "mcp__plugin_desk_tracker__create_issue";
const LIST: &str = "mcp__plugin_desk_tracker__list_issues";

fn plugin(dir: &Path) {
    write_tree(
        dir,
        &[
            (".claude-plugin/plugin.json", MANIFEST),
            (".mcp.json", MCP),
            (
                "evals/mocks/tracker/create_issue.md",
                "---\nexpect:\n  title: string\n  project: [web, api]\n---\nCreated issue #4821 in {{input.project}}: {{input.title}}\n",
            ),
            (
                "evals/mocks/tracker/_server.md",
                "---\ntype: agent\ntools: [list_issues]\nabort_when: |\n  - the call lists issues of a project other than web\n---\nA tracker holding issues #1 (login broken) and #2 (slow search) in project web.\n",
            ),
            (
                "evals/file/prompt.md",
                "---\nruns: 1\n---\nFILE-IT: file the login bug.\n",
            ),
            (
                "evals/file/graders/called.md",
                &format!("---\ntype: tool_used\ntool: {CREATE}\n---\n"),
            ),
            (
                "evals/file/graders/answered.md",
                "---\ntype: regex\ntarget: mock_calls\npattern: 'Created issue #4821 in web: Login broken'\n---\n",
            ),
            (
                "evals/wrong/prompt.md",
                "---\nruns: 1\ntimeout_seconds: 120\n---\nWRONG-IT: file it in ios.\n",
            ),
            (
                "evals/wrong/graders/said.md",
                "---\ntype: regex\npattern: Filed\n---\n",
            ),
            (
                "evals/ask/prompt.md",
                "---\nruns: 1\n---\nASK-IT: what is open?\n",
            ),
            (
                "evals/ask/graders/listed.md",
                "---\ntype: regex\ntarget: mock_calls\npattern: 'login broken'\n---\n",
            ),
        ],
    );
}

fn model() -> ModelServer {
    let server = ModelServer::start();
    // The agent mock's model (assay's judge), before the agent's rules.
    server.script_each(
        "The call to answer",
        Some("You stand in for the MCP server"),
        vec![text(
            r##"{"verdict": "ok", "text": "#1 login broken\n#2 slow search"}"##,
        )],
    );
    server.script_each(
        "FILE-IT",
        None,
        vec![
            tool(CREATE, json!({"title": "Login broken", "project": "web"})),
            text("Filed it."),
        ],
    );
    server.script_each(
        "WRONG-IT",
        None,
        // After the aborted call the model never answers: only the stop ends the run.
        vec![
            tool(CREATE, json!({"title": "Login broken", "project": "ios"})),
            support::model_server::Reply::Hang,
        ],
    );
    server.script_each(
        "ASK-IT",
        None,
        vec![tool(LIST, json!({"project": "web"})), text("Two are open.")],
    );
    server
}

fn run(server: &ModelServer, dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run", ".", "--harness", "claude-code", "--ablation", "none"];
    all.extend([
        "--output-dir",
        "out",
        "--workspace-dir",
        "/tmp",
        "--keep-workspaces",
    ]);
    all.extend(["--reporter", "claude-plugin-eval"]);
    all.extend_from_slice(args);
    let mut env = claude_env(&agent_cli("claude"), server);
    env.retain(|(k, _)| *k != "ASSAY_JUDGE");
    env.extend([
        ("ASSAY_JUDGE", "anthropic".to_string()),
        ("ASSAY_JUDGE_BASE_URL", server.url.clone()),
        ("ASSAY_JUDGE_API_KEY", "sk-judge".to_string()),
    ]);
    assay_env(dir, &all, &env)
}

fn by_case(run_dir: &Path) -> std::collections::BTreeMap<String, Value> {
    ["file", "wrong", "ask"]
        .into_iter()
        .filter(|c| run_dir.join("desk").join(c).is_dir())
        .filter_map(|c| {
            let r = results_by_folder(&run_dir.join("desk").join(c)).remove("run-1")?;
            Some((c.to_string(), r))
        })
        .collect()
}

#[test]
fn mocked_tools_answer_guard_and_abort_and_unmocked_servers_never_start() {
    let server = model();
    let d = tempfile::tempdir().unwrap();
    plugin(d.path());
    let out = run(&server, d.path(), &[]);
    let all = by_case(&d.path().join("out"));
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(all.len(), 3, "{said}");

    // A fixed mock: the call's fields in its body, graded through mock_calls.
    let file = &all["file"];
    assert_eq!(file["grade"]["verdict"], "pass", "{file:#}\n{said}");
    let call = &file["mocks"]["calls"][0];
    assert_eq!(call["name"], CREATE);
    assert_eq!(call["output"], "Created issue #4821 in web: Login broken");
    assert_eq!(file["mocks"]["withheld"], json!(["pager"]));

    // A call that breaks a guard aborts the run: it fails with a score of 0 although its
    // grader passes.
    let wrong = &all["wrong"];
    assert_eq!(wrong["status"], "failed", "{wrong:#}");
    // The agent was stopped at the abort, not left to its timeout.
    assert_eq!(wrong["timed_out"], false, "{wrong:#}");
    assert_eq!(wrong["grade"]["score"], json!(0.0));
    assert_eq!(
        wrong["mocks"]["aborted"]["reason"],
        "the model's call violates expect: project = \"ios\" is not one of [web, api]"
    );

    // An agent mock: the model's answer reaches the agent and the record.
    let ask = &all["ask"];
    assert_eq!(ask["grade"]["verdict"], "pass", "{ask:#}");
    assert_eq!(ask["mocks"]["calls"][0]["verdict"], "ok");

    // The server with no mock never started, in any case-run.
    for r in all.values() {
        let ws = r["workspace"].as_str().unwrap_or("");
        let home = Path::new(ws).join("home");
        assert!(!home.join("pager-started").exists(), "{r:#}");
    }
    let result = read_json(&d.path().join("out/aggregate-result.json"));
    let wrong_run = &result["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "wrong")
        .unwrap()["arms"]["with"][0];
    assert_eq!(wrong_run["aborted"]["server"], "tracker", "{result:#}");
    assert_eq!(wrong_run["graders"], json!([]));
}

#[test]
fn with_mocks_off_the_plugins_servers_start_as_declared_and_mock_graders_say_why_they_fail() {
    let server = model();
    let d = tempfile::tempdir().unwrap();
    plugin(d.path());
    let out = run(&server, d.path(), &["--mocks", "off", "--case", "file"]);
    let all = by_case(&d.path().join("out"));
    let file = &all["file"];
    assert!(file["mocks"].is_null(), "{file:#}\n{}", stderr(&out));
    let answered = file["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "answered")
        .unwrap();
    assert_eq!(answered["passed"], false);
    assert!(
        answered["message"]
            .as_str()
            .unwrap()
            .contains("no mock stand-ins were active"),
        "{answered:#}"
    );
    let home = Path::new(file["workspace"].as_str().unwrap()).join("home");
    assert!(home.join("pager-started").exists(), "{file:#}");
}
