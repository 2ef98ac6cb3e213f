//! `assay run` through the real Codex CLI, against the scripted Responses API server.

use crate::support;

use std::path::Path;
use std::process::Output;

use serde_json::json;
use support::model_server::{ModelServer, Reply, text, tool};
use support::*;

fn run_assay(codex: &Path, server: &ModelServer, dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run", "--harness", "codex", "--model", "gpt-test"];
    all.extend(["--output-dir", "out", "--workspace-dir", "workspaces"]);
    all.extend_from_slice(args);
    assay_env(dir, &all, &codex_env(codex, server))
}

#[test]
fn codex_runs_a_command_that_writes_a_file() {
    let codex = agent_cli("codex");
    let server = ModelServer::start();
    server.script(
        "greeting card for Ada",
        vec![
            tool("exec_command", json!({"cmd": "cat .codex/skills/greeting/SKILL.md; printf 'Hello, Ada!\\n' > greeting.txt"})),
            text("done"),
        ],
    );
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[harness.codex]\nsandbox = \"danger-full-access\"\n",
            ),
            (
                ".codex/skills/greeting/SKILL.md",
                "---\nname: greeting\ndescription: Writes greeting.txt.\n---\nWrite greeting.txt.\n",
            ),
            ("evals/greeting/evals.json", GREETING_EVALS),
        ],
    );
    let out = run_assay(&codex, &server, d.path(), &[]);
    assert_eq!(
        code(&out),
        0,
        "stdout: {}\nstderr: {}",
        stdout(&out),
        stderr(&out)
    );
    let r = &results(&d.path().join("out"))["ada"];
    assert_eq!(r["status"], "completed", "{r:#}");
    assert_eq!(r["tool_calls"]["command_execution"], 1, "{r:#}");
    assert_eq!(r["skills_invoked"], json!(["greeting"]));
    assert_eq!(r["turns"][0]["final_message"], "done");
    assert!(
        r["turns"][0]["session_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    assert_eq!(r["usage"]["input_tokens"], 200);
    let run = Path::new(r["dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(run.join("artifacts/greeting.txt")).unwrap(),
        "Hello, Ada!\n"
    );
    // The command's output came back to the model.
    let second = &server.requests()[1];
    assert!(
        second.to_string().contains("function_call_output"),
        "{second}"
    );
}

#[test]
fn codex_resumes_later_turns_and_reports_server_errors() {
    let codex = agent_cli("codex");
    let server = ModelServer::start();
    server.script("first question", vec![text("one")]);
    server.script("second question", vec![text("two")]);
    server.script(
        "break please",
        vec![Reply::Error {
            status: 500,
            message: "boom".into(),
        }],
    );
    server.script(
        "limit please",
        vec![Reply::Error {
            status: 429,
            message: "slow".into(),
        }],
    );
    server.script(
        "deny please",
        vec![Reply::Error {
            status: 401,
            message: "bad key".into(),
        }],
    );
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                "evals/chat/001.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: chat\nprompt:\n  - first question\n  - second question\nexpected: x\n",
            ),
            (
                "evals/chat/002.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: chat\nprompt: break please\nexpected: x\n",
            ),
            (
                "evals/chat/003.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: chat\nprompt: limit please\nexpected: x\n",
            ),
            (
                "evals/chat/004.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: chat\nprompt: deny please\nexpected: x\n",
            ),
        ],
    );
    let out = run_assay(&codex, &server, d.path(), &["--timeout", "60"]);
    // The model API's failures are errors, never the skill failing: exit 3.
    assert_eq!(code(&out), 3, "{}\n{}", stdout(&out), stderr(&out));
    assert!(!stdout(&out).contains("FAIL "), "{}", stdout(&out));
    let rs = results(&d.path().join("out"));
    let chat = &rs["001"];
    assert_eq!(chat["status"], "completed", "{chat:#}");
    assert_eq!(chat["turns"][1]["final_message"], "two");
    assert_eq!(
        chat["turns"][0]["session_id"],
        chat["turns"][1]["session_id"]
    );
    let second = server
        .requests()
        .into_iter()
        .find(|q| q.to_string().contains("second question"))
        .unwrap();
    assert!(
        second.to_string().contains("first question"),
        "the resumed turn carries the first exchange"
    );
    for (case, category) in [("002", "server"), ("003", "rate-limit"), ("004", "auth")] {
        let r = &rs[case];
        assert_eq!(r["status"], "error", "{r:#}");
        assert_eq!(r["error"]["category"], category, "{r:#}");
        assert!(
            stdout(&out).contains(&format!("infrastructure error ({category})")),
            "{}",
            stdout(&out)
        );
    }
}

/// A Codex project whose one case writes greeting.txt through Codex's shell tool.
fn shell_project(server: &ModelServer, extra: &str) -> tempfile::TempDir {
    server.script(
        "greeting card for Ada",
        vec![
            tool(
                "exec_command",
                json!({"cmd": format!("printf 'Hello, Ada!\\n' > greeting.txt{extra}")}),
            ),
            text("done"),
        ],
    );
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("evals/greeting/evals.json", GREETING_EVALS),
        ],
    );
    d
}

per_backend! {
/// Codex under each backend (its own sandbox off inside assay's).
fn in_the_sandbox_codex_runs_its_shell_and_nothing_leaves_it(backend: &str) {
    let codex = agent_cli("codex");
    let outside = tempfile::tempdir().unwrap();
    let server = ModelServer::start();
    let d = shell_project(
        &server,
        &format!("; echo pwned > {}/pwned", outside.path().display()),
    );
    let out = run_assay(&codex, &server, d.path(), &["--sandbox", backend]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["ada"];
    assert_eq!(r["sandbox"]["kind"], backend, "{r:#}");
    assert_eq!(r["tool_calls"]["command_execution"], 1, "{r:#}");
    let run = Path::new(r["dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(run.join("artifacts/greeting.txt")).unwrap(),
        "Hello, Ada!\n",
        "{r:#}"
    );
    assert!(!outside.path().join("pwned").exists());

    let out = assay_env(
        d.path(),
        &[
            "run",
            "--harness",
            "codex",
            "--model",
            "gpt-test",
            "--output-dir",
            "offline",
            "--sandbox",
            backend,
            "--network",
            "none",
            "--timeout",
            "60",
        ],
        &codex_env(&codex, &server),
    );
    assert_offline(&out, &d.path().join("offline"), "ada");
}
}

#[test]
fn unsandboxed_codex_keeps_its_own_sandbox_working_with_bubblewrap_installed() {
    let codex = agent_cli("codex");
    let server = ModelServer::start();
    let d = shell_project(&server, "");
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--harness",
            "codex",
            "--model",
            "gpt-test",
            "--output-dir",
            "out",
            "--sandbox",
            "none",
        ],
        &codex_env(&codex, &server),
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["ada"];
    assert_eq!(r["sandbox"]["kind"], "none", "{r:#}");
    let run = Path::new(r["dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(run.join("artifacts/greeting.txt")).unwrap_or_default(),
        "Hello, Ada!\n",
        "Codex's shell tool ran under its own sandbox: {}\n{}",
        std::fs::read_to_string(run.join("raw.jsonl")).unwrap_or_default(),
        std::fs::read_to_string(run.join("stderr.txt")).unwrap_or_default(),
    );
}

#[test]
fn codex_is_offered_the_skill_under_test_and_its_baseline_is_not() {
    // The skill sits in a plain folder of the project, where no engine looks: only assay's
    // install makes Codex offer it (Codex reads `.agents/skills`, never `.claude/skills`).
    let codex = agent_cli("codex");
    let server = ModelServer::start();
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                "greeting/SKILL.md",
                "---\nname: greeting\ndescription: Writes greeting cards to greeting.txt.\n---\nWrite greeting.txt.\n",
            ),
            ("greeting/evals/evals.json", GREETING_EVALS),
        ],
    );
    let out = run_assay(&codex, &server, d.path(), &["--baseline", "-j", "1"]);
    assert_ne!(code(&out), 2, "{}", stderr(&out));
    let requests: Vec<String> = server.requests().iter().map(|r| r.to_string()).collect();
    let offered = |r: &&String| r.contains("greeting: Writes greeting cards to greeting.txt.");
    let with = requests.iter().filter(offered).count();
    assert!(
        with >= 1,
        "the skill run's requests list the skill: {requests:#?}"
    );
    assert_eq!(
        requests.len(),
        2 * with,
        "the baseline's requests never list it: {requests:#?}"
    );
    assert!(
        requests
            .iter()
            .filter(offered)
            .all(|r| r.contains(".agents/skills")),
        "{requests:#?}"
    );
}

#[test]
fn a_clauditor_slash_command_reaches_codex_as_its_body_with_the_arguments() {
    // Codex has no slash commands: `/shout hello` would reach the model as a bare string
    // naming nothing. assay sends the command's body, front matter removed and `$1` filled,
    // as Claude Code would have expanded it.
    let codex = agent_cli("codex");
    let server = ModelServer::start();
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                ".claude/commands/shout.md",
                "---\ndescription: Shouts a word.\n---\nWrite the word $1 in capitals to shout.txt, nothing else.\n",
            ),
            (
                ".claude/commands/shout.eval.json",
                r#"{"skill_name": "shout", "test_args": "hello", "assertions": [{"id": "a", "type": "min_length", "length": 1}]}"#,
            ),
        ],
    );
    server.script(
        "Write the word hello in capitals",
        vec![text("HELLO written.")],
    );
    let out = run_assay(&codex, &server, d.path(), &["-j", "1"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let requests: Vec<String> = server.requests().iter().map(|r| r.to_string()).collect();
    assert!(
        requests
            .iter()
            .any(|r| r.contains("Write the word hello in capitals to shout.txt, nothing else.")),
        "the command's body, filled, is the prompt: {requests:#?}"
    );
    assert!(
        !requests.iter().any(|r| r.contains("/shout hello")),
        "{requests:#?}"
    );
    let prompt = walk_find(&d.path().join("out"), "prompt.txt");
    assert!(prompt.contains("Write the word hello"), "{prompt}");
}

/// The text of the first file named `name` under `dir`.
fn walk_find(dir: &Path, name: &str) -> String {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_symlink() {
            continue;
        }
        if p.is_dir() {
            let t = walk_find(&p, name);
            if !t.is_empty() {
                return t;
            }
        } else if p.file_name().is_some_and(|n| n == name) {
            return std::fs::read_to_string(&p).unwrap();
        }
    }
    String::new()
}

#[test]
fn a_clauditor_skill_reaches_codex_by_its_mention_with_its_body_once() {
    // clauditor's rule: no `system_prompt` and no AGENTS.md, so the SKILL.md body is the
    // system prompt. `/brief` becomes `$brief`, Codex's mention of the skill, with which Codex
    // itself puts SKILL.md in the conversation: the derived system prompt (the same body) is
    // not sent a second time.
    let codex = agent_cli("codex");
    let server = ModelServer::start();
    server.script("$brief", vec![text("Brief written.")]);
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[harness.codex]\nsandbox = \"danger-full-access\"\n",
            ),
            (
                "skills/brief/SKILL.md",
                "---\nname: brief\ndescription: Writes briefs.\n---\nSign every brief as BODY-MARKER-7.\n",
            ),
            (
                "skills/brief/SKILL.eval.json",
                r#"{"assertions": [{"id": "says", "type": "contains", "needle": "Brief"}]}"#,
            ),
        ],
    );
    let out = run_assay(&codex, &server, d.path(), &[]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let first = server.requests()[0].to_string();
    assert!(first.contains("$brief"), "the skill is mentioned: {first}");
    assert_eq!(
        first.matches("Sign every brief as BODY-MARKER-7.").count(),
        1,
        "the skill's body reaches Codex once: {first}"
    );
}

/// An outage of the model API on Codex — a 500 or a 429 on every request, a refused connection — is an
/// error named by its category (exit 3), said within seconds (assay bounds Codex's retries),
/// and `--resume` runs it again.
#[test]
fn an_outage_on_codex_is_an_error_by_category_and_resume_runs_it_again() {
    let codex = agent_cli("codex");
    let server = ModelServer::start();
    server.script("break please", vec![Reply::Down(500)]);
    server.script("limit please", vec![Reply::Down(429)]);
    for (category, url) in [
        ("server", format!("{}/v1", server.url)),
        ("rate-limit", format!("{}/v1", server.url)),
        (
            "network",
            format!("{}/v1", support::model_server::refused_url()),
        ),
    ] {
        let d = tempfile::tempdir().unwrap();
        write_tree(
            d.path(),
            &[
                ("assay.toml", ""),
                (
                    "evals/chat/001.yaml",
                    &format!(
                        "timestamp: 2026-11-22T00:00:00Z\nname: chat\nprompt: {}\nexpected: x\n",
                        if category == "rate-limit" {
                            "limit please"
                        } else {
                            "break please"
                        }
                    ),
                ),
            ],
        );
        let mut env = codex_env(&codex, &server);
        env.retain(|(k, _)| *k != "OPENAI_BASE_URL");
        env.push(("OPENAI_BASE_URL", url));
        let args = [
            "run",
            "--harness",
            "codex",
            "--model",
            "gpt-test",
            "--timeout",
            "120",
        ];
        let started = std::time::Instant::now();
        let mut all = args.to_vec();
        all.extend(["--output-dir", "out", "--workspace-dir", "workspaces"]);
        let out = assay_env(d.path(), &all, &env);
        let secs = started.elapsed().as_secs_f64();
        let said = format!("{}\n{}", stdout(&out), stderr(&out));
        eprintln!("codex {category}: {secs:.1} s");
        assert_eq!(code(&out), 3, "{said}");
        assert!(secs < 60.0, "{secs:.1} s: {said}");
        let r = &results(&d.path().join("out"))["001"];
        assert_eq!(r["status"], "error", "{r:#}");
        assert_eq!(r["error"]["category"], category, "{r:#}");
        assert!(
            said.contains(&format!("infrastructure error ({category})")),
            "{said}"
        );
        let mut all = args.to_vec();
        all.extend(["--resume", "out", "--workspace-dir", "workspaces"]);
        let resumed = assay_env(d.path(), &all, &env);
        let said = format!("{}\n{}", stdout(&resumed), stderr(&resumed));
        assert_eq!(code(&resumed), 3, "{said}");
        assert!(!said.contains("kept from the resumed run"), "{said}");
        assert!(said.contains("1 agent run"), "{said}");
    }
}

#[test]
fn a_codex_trigger_run_stops_at_the_skill_s_read_and_asks_the_model_nothing_more() {
    let codex = agent_cli("codex");
    let server = ModelServer::start();
    let read = || {
        tool(
            "exec_command",
            json!({"cmd": "cat .agents/skills/greeting/SKILL.md"}),
        )
    };
    // The canary's requests read the skill; so do the trigger query's first two (its stopped
    // run's, and the full run's), any later one is answered "done".
    server.script(
        "Use the greeting skill",
        vec![read(), read(), read(), read()],
    );
    server.script("TRIGGER-FIRE", vec![read(), read()]);
    let d = tempfile::tempdir().unwrap();
    let queries =
        json!([{"query": "TRIGGER-FIRE: make me a greeting card", "should_trigger": true}]);
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[harness.codex]\nsandbox = \"danger-full-access\"\n",
            ),
            (
                "greeting/SKILL.md",
                "---\nname: greeting\ndescription: Writes greeting cards.\n---\nWrite greeting.txt.\n",
            ),
            ("greeting/evals/evals.json", GREETING_EVALS),
            ("greeting/evals/triggers.json", &queries.to_string()),
        ],
    );
    let args = ["--mode", "triggers", "--trigger-runs", "1", "-j", "1"];
    let out = run_assay(&codex, &server, d.path(), &args);
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{said}");
    let runs = results(&d.path().join("out"));
    let r = runs.get("trigger-1").unwrap_or_else(|| panic!("{said}"));
    assert_eq!(r["trigger"]["fired"], true, "{r:#}");
    // The canary saw the read work: the run stops as the command starts.
    assert_eq!(r["stopped_at"]["event"], "skill_called", "{r:#}");
    let after: Vec<String> = server
        .requests()
        .iter()
        .map(|q| q.to_string())
        .filter(|q| q.contains("TRIGGER-FIRE") && q.contains("function_call_output"))
        .collect();
    assert!(after.is_empty(), "{after:#?}");
    // A full run does ask again after the read (so the check above can fail).
    let full = [
        &args[..],
        &["--trigger-full-runs", "--no-cache", "--no-canary"],
    ]
    .concat();
    let out = run_assay(&codex, &server, d.path(), &full);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        server.requests().iter().any(|q| {
            let q = q.to_string();
            q.contains("TRIGGER-FIRE") && q.contains("function_call_output")
        }),
        "{}",
        stdout(&out)
    );
}
