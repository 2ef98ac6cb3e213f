//! `assay run` through the real Claude Code CLI, against the scripted model server.

use crate::support;

use std::path::Path;
use std::process::Output;

use serde_json::json;
use support::model_server::{ModelServer, Reply, text, tool};
use support::*;

const SKILL: &str = "---\nname: greeting\ndescription: Writes greeting.txt. Use for greeting cards.\n---\nWrite greeting.txt with `Hello, <name>!`.\n";

fn run_assay(claude: &Path, server: &ModelServer, dir: &Path, args: &[&str]) -> Output {
    let mut all = vec![
        "run",
        "--harness",
        "claude-code",
        "--pass-env",
        "CLAUDE_CODE_MAX_RETRIES",
    ];
    all.extend(["--output-dir", "out", "--workspace-dir", "workspaces"]);
    all.extend_from_slice(args);
    assay_env(dir, &all, &claude_env(claude, server))
}

#[test]
fn a_skill_is_invoked_and_a_file_really_written() {
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
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/skills/greeting/SKILL.md", SKILL),
            ("evals/greeting/evals.json", GREETING_EVALS),
        ],
    );
    let out = run_assay(&claude, &server, d.path(), &[]);
    assert_eq!(
        code(&out),
        0,
        "stdout: {}\nstderr: {}",
        stdout(&out),
        stderr(&out)
    );
    let r = &results(&d.path().join("out"))["ada"];
    assert_eq!(r["status"], "completed", "{r:#}");
    assert_eq!(r["skills_invoked"], json!(["greeting"]));
    assert_eq!(r["tool_calls"]["Write"], 1);
    assert_eq!(r["tool_calls"]["Skill"], 1);
    assert_eq!(r["turns"][0]["final_message"], "done");
    assert!(
        r["turns"][0]["session_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    assert!(r["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(
        r["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["path"] == "greeting.txt" && a["kind"] == "created")
    );
    let run = Path::new(r["dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(run.join("artifacts/greeting.txt")).unwrap(),
        "Hello, Ada!\n"
    );
    assert_eq!(
        std::fs::read_to_string(run.join("output.txt")).unwrap(),
        "done"
    );
    let transcript = std::fs::read_to_string(run.join("transcript.jsonl")).unwrap();
    let kinds: Vec<String> = transcript
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for k in [
        "session_started",
        "tool_call",
        "skill_invoked",
        "tool_result",
        "message",
    ] {
        assert!(kinds.iter().any(|x| x == k), "{k} missing from {kinds:?}");
    }
    assert!(
        std::fs::read_to_string(run.join("raw.jsonl"))
            .unwrap()
            .contains("\"type\":\"result\"")
    );
    // The agent ran in a copy: the project itself is untouched.
    assert!(!d.path().join("greeting.txt").exists());
    // The model was offered the skill the workspace installed: its description is in the request.
    let offered = server.requests().iter().any(|r| {
        r.to_string()
            .contains("Writes greeting.txt. Use for greeting cards.")
    });
    assert!(offered, "the installed skill was not offered to the model");
}

#[test]
fn later_turns_resume_the_same_session() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script("first question", vec![text("one")]);
    server.script("second question", vec![text("two")]);
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                "evals/chat/001.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: chat\nprompt:\n  - first question\n  - second question\nexpected: answers both\n",
            ),
        ],
    );
    let out = run_assay(&claude, &server, d.path(), &[]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["001"];
    let turns = r["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "{r:#}");
    assert_eq!(turns[0]["final_message"], "one");
    assert_eq!(turns[1]["final_message"], "two");
    assert_eq!(
        turns[0]["session_id"], turns[1]["session_id"],
        "the second turn resumes the session"
    );
    // The second request carried the first exchange.
    let second = server
        .requests()
        .into_iter()
        .find(|q| q.to_string().contains("second question"))
        .unwrap();
    assert!(second.to_string().contains("first question"));
    assert!(second.to_string().contains("one"));
}

#[test]
fn api_errors_are_reported_by_category() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script(
        "limit please",
        vec![Reply::Error {
            status: 429,
            message: "slow down".into(),
        }],
    );
    server.script(
        "break please",
        vec![Reply::Error {
            status: 500,
            message: "boom".into(),
        }],
    );
    server.script(
        "deny please",
        vec![Reply::Error {
            status: 401,
            message: "invalid x-api-key".into(),
        }],
    );
    let d = tempfile::tempdir().unwrap();
    let case = |p: &str| {
        format!("timestamp: 2026-11-22T00:00:00Z\nname: errs\nprompt: {p}\nexpected: x\n")
    };
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("evals/errs/rate.yaml", &case("limit please")),
            ("evals/errs/server.yaml", &case("break please")),
            ("evals/errs/auth.yaml", &case("deny please")),
        ],
    );
    let out = run_assay(&claude, &server, d.path(), &["-j", "3"]);
    assert_eq!(
        code(&out),
        3,
        "the model API's failures are errors, exit 3: {}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let rs = results(&d.path().join("out"));
    for (case, category) in [
        ("rate", "rate-limit"),
        ("server", "server"),
        ("auth", "auth"),
    ] {
        let r = &rs[case];
        assert_eq!(r["status"], "error", "{case}: {r:#}");
        assert_eq!(r["error"]["category"], category, "{case}: {r:#}");
        assert!(
            r["workspace"].is_null(),
            "an outage keeps no workspace: nothing in it is the skill's"
        );
        assert!(
            stdout(&out).contains(&format!("infrastructure error ({category})")),
            "{}",
            stdout(&out)
        );
    }
    assert!(!stdout(&out).contains("FAIL "));
}

/// Processes whose working folder is under `dir`.
fn processes_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'));
        if let Ok(cwd) = std::fs::read_link(e.path().join("cwd"))
            && cwd.starts_with(dir)
            && !zombie
        {
            found.push(name);
        }
    }
    found
}

#[test]
fn a_hung_model_is_stopped_by_the_timeout_and_nothing_is_left_running() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script("never answers", vec![Reply::Hang]);
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                "evals/slow/001.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: slow\nprompt: never answers\nexpected: x\n",
            ),
        ],
    );
    let started = std::time::Instant::now();
    let out = run_assay(&claude, &server, d.path(), &["--timeout", "4"]);
    assert!(
        started.elapsed().as_secs() < 30,
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["001"];
    assert_eq!(r["status"], "failed");
    assert_eq!(r["timed_out"], true);
    assert_eq!(r["error"]["category"], "timeout");
    let ws = Path::new(r["workspace"].as_str().unwrap());
    assert!(
        processes_in(ws).is_empty(),
        "left running: {:?}",
        processes_in(ws)
    );
}

#[test]
fn a_question_after_one_turn_is_an_interactive_hang_unless_the_spec_allows_it() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    // Both cases send `/ask`; each gets the same question.
    let question = text("Which file should I summarize?");
    server.script("/ask", vec![question.clone(), question]);
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/commands/ask.md", "Summarize a file."),
            (
                ".claude/commands/ask.eval.json",
                r#"{"assertions": [{"id": "a", "type": "min_length", "length": 1}]}"#,
            ),
            ("other/.claude/commands/ask.md", "Summarize a file."),
            ("other/assay.toml", ""),
            (
                "other/.claude/commands/ask.eval.json",
                r#"{"skill_name": "ask-allowed", "allow_hang_heuristic": false, "assertions": [{"id": "a", "type": "min_length", "length": 1}]}"#,
            ),
        ],
    );
    let out = run_assay(&claude, &server, d.path(), &[]);
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let rs = results(&d.path().join("out"));
    assert_eq!(
        rs["ask"]["error"]["category"], "interactive-hang",
        "{:#}",
        rs["ask"]
    );
    assert_eq!(
        rs["ask-allowed"]["status"], "completed",
        "{:#}",
        rs["ask-allowed"]
    );
}

#[test]
fn background_tasks_never_awaited_are_reported_unless_sync_tasks() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    let bg = || {
        vec![
            tool(
                "Bash",
                json!({"command": "sleep 1; echo late > late.txt", "run_in_background": true}),
            ),
            text("Started it in the background."),
        ]
    };
    server.script("/bg-async", bg());
    server.script("/bg-sync", bg());
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/commands/bg-async.md", "Do work."),
            (
                ".claude/commands/bg-async.eval.json",
                r#"{"assertions": [{"id": "a", "type": "min_length", "length": 1}]}"#,
            ),
            (".claude/commands/bg-sync.md", "Do work."),
            (
                ".claude/commands/bg-sync.eval.json",
                r#"{"sync_tasks": true, "assertions": [{"id": "a", "type": "min_length", "length": 1}]}"#,
            ),
        ],
    );
    let out = run_assay(&claude, &server, d.path(), &["-j", "1"]);
    let rs = results(&d.path().join("out"));
    assert_eq!(
        rs["bg-async"]["error"]["category"], "background-tasks",
        "{:#}",
        rs["bg-async"]
    );
    assert_eq!(
        rs["bg-sync"]["status"],
        "completed",
        "{:#}\n{}",
        rs["bg-sync"],
        stdout(&out)
    );
}

#[test]
fn sync_tasks_on_the_command_line_runs_background_tasks_synchronously_for_every_suite() {
    // clauditor's `--sync-tasks`, for a spec that does not set `sync_tasks`: the background
    // task the agent starts is run to its end, so the case-run completes.
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script(
        "/bg-async",
        vec![
            tool(
                "Bash",
                json!({"command": "sleep 1; echo late > late.txt", "run_in_background": true}),
            ),
            text("Started it in the background."),
        ],
    );
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/commands/bg-async.md", "Do work."),
            (
                ".claude/commands/bg-async.eval.json",
                r#"{"assertions": [{"id": "a", "type": "min_length", "length": 1}]}"#,
            ),
        ],
    );
    let out = run_assay(&claude, &server, d.path(), &["-j", "1", "--sync-tasks"]);
    let rs = results(&d.path().join("out"));
    assert_eq!(
        rs["bg-async"]["status"],
        "completed",
        "{:#}\n{}",
        rs["bg-async"],
        stdout(&out)
    );
}

#[test]
fn a_uaaps_package_runs_with_its_skills_and_hooks_installed() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script(
        "How many words and lines",
        vec![
            tool(
                "Bash",
                json!({"command": "mkdir -p output && python3 .claude/skills/text-tools/scripts/count.py fixtures/sample.txt | tee output/count.txt"}),
            ),
            text("fixtures/sample.txt has 8 words, 2 lines."),
        ],
    );
    server.script(
        "to /etc/config.txt",
        vec![
            tool(
                "Write",
                json!({"file_path": "/etc/config.txt", "content": "test"}),
            ),
            text("The hook denied that write."),
        ],
    );
    let out_dir = tempfile::tempdir().unwrap();
    let (out_path, ws) = (
        out_dir.path().display().to_string(),
        out_dir.path().join("ws").display().to_string(),
    );
    let args = [
        "run",
        "examples/uaaps",
        "--filter",
        "uaaps:",
        "--harness",
        "claude-code",
    ];
    let mut all = args.to_vec();
    all.extend([
        "--pass-env",
        "CLAUDE_CODE_MAX_RETRIES",
        "--output-dir",
        &out_path,
        "--workspace-dir",
        &ws,
    ]);
    let out = assay_env(&repo(), &all, &claude_env(&claude, &server));
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let rs = results(out_dir.path());
    let count = &rs["count-words"];
    let hook = &rs["hook-blocks-etc"];
    for r in [count, hook] {
        assert_eq!(r["status"], "completed", "{r:#}");
        assert!(
            r["checks"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["passed"] == true),
            "{r:#}"
        );
        // Each case also has judge criteria: not graded until a judge runs, never passed.
        assert_eq!(r["grade"]["verdict"], "not-graded", "{r:#}");
    }
    let blocked = hook["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "agent_blocked")
        .unwrap();
    assert!(
        blocked["evidence"]
            .as_str()
            .unwrap()
            .contains("writes to /etc are not allowed"),
        "{blocked:#}"
    );
    assert!(
        !Path::new("/etc/config.txt").exists()
            || std::fs::read_to_string("/etc/config.txt").unwrap() != "test"
    );
    let created = count["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "file_created")
        .unwrap();
    assert_eq!(created["passed"], true);
    let dir = Path::new(count["dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(dir.join("artifacts/output/count.txt")).unwrap(),
        "8 words, 2 lines\n"
    );
}

#[test]
fn shards_merge_and_diff_names_what_a_changed_model_broke() {
    let claude = agent_cli("claude");
    let case = |n: &str, who: &str| {
        format!(
            "timestamp: 2026-11-22T00:00:00Z\nname: {n}\nprompt: \"Greet {who}.\"\nexpected: It greets {who}.\nassertions:\n  - type: contains\n    value: \"Hello, {who}!\"\n"
        )
    };
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("evals/greet/001.yaml", &case("ada", "Ada")),
            ("evals/greet/002.yaml", &case("grace", "Grace")),
        ],
    );
    let good = ModelServer::start();
    good.script("Greet Ada", vec![text("Hello, Ada!")]);
    good.script("Greet Grace", vec![text("Hello, Grace!")]);
    // `index`: the shard, started as a Kubernetes Indexed Job of two starts it.
    let run = |server: &ModelServer, out: &str, index: Option<u32>| {
        let mut args = vec![
            "run",
            "--harness",
            "claude-code",
            "--pass-env",
            "CLAUDE_CODE_MAX_RETRIES",
            "--output-dir",
            out,
            "--workspace-dir",
            "workspaces",
        ];
        let mut env = claude_env(&claude, server);
        if let Some(i) = index {
            args.extend(["--shard", "auto"]);
            env.push(("JOB_COMPLETION_INDEX", i.to_string()));
            env.push(("ASSAY_SHARDS", "2".to_string()));
        }
        let o = assay_env(d.path(), &args, &env);
        assert!(code(&o) <= 1, "{}\n{}", stdout(&o), stderr(&o));
        if let Some(i) = index {
            let said = format!("(Kubernetes Indexed Job: JOB_COMPLETION_INDEX={i}, 2 shards");
            assert!(stderr(&o).contains(&said), "{}", stderr(&o));
        }
    };
    // Two shards through the real CLI, one case each, merged into one run.
    run(&good, "shard-1", Some(0));
    run(&good, "shard-2", Some(1));
    for (dir, case) in [("shard-1", "001"), ("shard-2", "002")] {
        let cases: Vec<String> = results(&d.path().join(dir)).into_keys().collect();
        assert_eq!(cases, [case]);
    }
    let out = assay(
        d.path(),
        &[
            "report",
            "merge",
            "shard-1",
            "shard-2",
            "--output-dir",
            "merged",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = assay(d.path(), &["report", "merged", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (
            v["summary"]["total"].as_u64(),
            v["summary"]["passed"].as_u64()
        ),
        (Some(2), Some(2))
    );
    // A model that greets the wrong person breaks one case: diff names it and fails.
    let worse = ModelServer::start();
    worse.script("Greet Ada", vec![text("Hello, Ada!")]);
    worse.script("Greet Grace", vec![text("Hello, Gracie!")]);
    run(&worse, "after", None);
    let out = assay(d.path(), &["report", "diff", "merged", "after"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("pass rate 100% → 50% (-50 points)"), "{text}");
    assert!(
        text.contains("✗ skillet:greet/002: passed → failed"),
        "{text}"
    );
    assert!(text.contains("unchanged: 1"), "{text}");
}

per_backend! {
/// Claude Code under each backend: its tools work inside, and nothing leaves.
fn in_the_sandbox_skill_write_and_bash_work_and_nothing_leaves_it(backend: &str) {
    let claude = agent_cli("claude");
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "sk-outside-secret\n").unwrap();
    let server = ModelServer::start();
    server.script(
        "greeting card for Ada",
        vec![
            tool("Skill", json!({"skill": "greeting"})),
            tool(
                "Write",
                json!({"file_path": "{cwd}/greeting.txt", "content": "Hello, Ada!\n"}),
            ),
            tool(
                "Bash",
                json!({"command": format!(
                    "echo from-bash > bash.txt; cat {} >> bash.txt 2>/dev/null; echo pwned > {}/pwned 2>/dev/null; true",
                    secret.display(),
                    outside.path().display()
                )}),
            ),
            // Refused by the sandbox: the host is read-only.
            tool("Bash", json!({"command": "touch /usr/assay-pwned"})),
            text("done"),
        ],
    );
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/skills/greeting/SKILL.md", SKILL),
            ("evals/greeting/evals.json", GREETING_EVALS),
        ],
    );
    let out = run_assay(&claude, &server, d.path(), &["--sandbox", backend]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["ada"];
    assert_eq!(r["sandbox"]["kind"], backend, "{r:#}");
    assert_eq!(r["sandbox"]["network"], "model");
    assert_eq!(r["tool_calls"]["Skill"], 1, "{r:#}");
    assert_eq!(r["tool_calls"]["Write"], 1, "{r:#}");
    assert_eq!(r["tool_calls"]["Bash"], 2, "{r:#}");
    // The refused call is in the result, with what the tool said.
    let failed = &r["failed_tool_calls"];
    assert_eq!(failed.as_array().map(Vec::len), Some(1), "{r:#}");
    assert_eq!(failed[0]["name"], "Bash");
    assert!(
        failed[0]["output"]
            .as_str()
            .unwrap()
            .contains(if backend == "bwrap" {
                "Read-only file system"
            } else {
                "Permission denied"
            }),
        "{r:#}"
    );
    assert!(!Path::new("/usr/assay-pwned").exists());
    assert_eq!(r["skills_invoked"], json!(["greeting"]));
    let run = Path::new(r["dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(run.join("artifacts/greeting.txt")).unwrap(),
        "Hello, Ada!\n"
    );
    // Bash ran inside: its file is there, the outside secret is not, nothing was written out.
    assert_eq!(
        std::fs::read_to_string(run.join("artifacts/bash.txt")).unwrap(),
        "from-bash\n"
    );
    assert!(!outside.path().join("pwned").exists());

    // No network at all: the agent cannot reach its model, and says so.
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--harness",
            "claude-code",
            "--pass-env",
            "CLAUDE_CODE_MAX_RETRIES",
            "--output-dir",
            "offline",
            "--sandbox",
            backend,
            "--network",
            "none",
            "--timeout",
            "60",
        ],
        &claude_env(&claude, &server),
    );
    assert_offline(&out, &d.path().join("offline"), "ada");
}
}

#[test]
fn max_cost_stops_starting_case_runs_and_resume_finishes_them() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script_each("/brief", None, vec![text("Here is the brief.")]);
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/commands/brief.md", "Write a brief."),
            (
                ".claude/commands/brief.eval.json",
                r#"{"assertions": [{"id": "a", "type": "contains", "needle": "brief"}]}"#,
            ),
        ],
    );
    // One at a time: the first case-run's reported cost is past the limit, so no other starts.
    let out = run_assay(
        &claude,
        &server,
        d.path(),
        &["--runs", "3", "-j", "1", "--max-cost", "0.0001"],
    );
    assert_eq!(code(&out), 3, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("stopped by budget"),
        "{}",
        stderr(&out)
    );
    let run = read_json(&d.path().join("out/run.json"));
    assert_eq!(run["budget_stop"]["not_started"], 2, "{run:#}");
    assert_eq!(run["options"]["max_cost"], 0.0001);
    assert!(run["budget_stop"]["spent_usd"].as_f64().unwrap() >= 0.0001);
    assert_eq!(results(&d.path().join("out")).len(), 1);
    // The report counts the two as missing, never as passed.
    let report = assay(d.path(), &["report", "out", "--format", "json"]);
    assert_eq!(code(&report), 3, "{}", stderr(&report));
    // --resume (the same selection, without the limit) runs the two left.
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--harness",
            "claude-code",
            "--resume",
            "out",
            "--runs",
            "3",
            "--workspace-dir",
            "workspaces",
        ],
        &claude_env(&claude, &server),
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&assay(
        d.path(),
        &["report", "out", "--format", "json"],
    )))
    .unwrap();
    assert_eq!(v["summary"]["passed"], 3, "{:#}", v["summary"]);
}

/// A skill-under-test project whose case and trigger query hit the model API's outage (each
/// case's prompt picks its answer): `evals/greeter/evals.json` and `triggers.json`.
fn outage_project(root: &Path, case_prompt: &str) {
    let checks = json!([{"type": "file_exists", "path": "card.txt"}]);
    write_tree(
        root,
        &[
            ("assay.toml", ""),
            (".claude/skills/greeter/SKILL.md", SKILL),
            (
                "evals/greeter/evals.json",
                &json!({"skill_name": "greeter", "evals": [
                    {"id": "card", "prompt": case_prompt, "x-assay-checks": checks}]})
                .to_string(),
            ),
            (
                "evals/greeter/triggers.json",
                &json!([{"query": format!("What is the capital of France? {case_prompt}"), "should_trigger": false}])
                    .to_string(),
            ),
        ],
    );
}

/// `assay run` on Claude Code as a user runs it: the cache on, Claude Code's retries left to
/// assay's default (no `CLAUDE_CODE_MAX_RETRIES` passed).
fn run_outage(dir: &Path, env: &[(&'static str, String)], args: &[&str]) -> (Output, f64) {
    let mut all = vec!["run", "--harness", "claude-code", "-j", "4"];
    all.extend(["--workspace-dir", "workspaces"]);
    all.extend_from_slice(args);
    let mut env: Vec<(&'static str, String)> = env
        .iter()
        .filter(|(k, _)| *k != "CLAUDE_CODE_MAX_RETRIES")
        .cloned()
        .collect();
    env.push(("ASSAY_NO_CACHE", "0".into()));
    env.push((
        "ASSAY_CACHE_KEY",
        dir.with_extension("cache-key").display().to_string(),
    ));
    let started = std::time::Instant::now();
    let out = assay_env(dir, &all, &env);
    (out, started.elapsed().as_secs_f64())
}

/// An outage of the model API is an error of the case-run, named by its category, never a
/// failure of the skill: exit 3, never cached, run again by `--resume`; a trigger query it hit
/// could not tell (it neither passes as "did not fire" nor lowers the recall), and the canary
/// does not blame the installation. Claude Code's own retries are capped by assay (3, not its
/// 10 that took three minutes), so each is said within seconds.
#[test]
fn an_outage_is_an_error_by_category_never_cached_and_run_again_by_resume() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script("break please", vec![Reply::Down(500)]);
    server.script("limit please", vec![Reply::Down(429)]);
    server.script("Use the greeter skill", vec![Reply::Down(500)]);
    // The server's outage in full (the canary, the cache, --resume); the others' run alone.
    for (prompt, category, url, full) in [
        (
            "Write a card, break please.",
            "server",
            server.url.clone(),
            true,
        ),
        (
            "Write a card, limit please.",
            "rate-limit",
            server.url.clone(),
            false,
        ),
        (
            "Write a card.",
            "network",
            support::model_server::refused_url(),
            false,
        ),
        (
            "Write a card.",
            "network",
            support::model_server::resetting_url(),
            false,
        ),
    ] {
        let d = tempfile::tempdir().unwrap();
        outage_project(d.path(), prompt);
        let mut env = claude_env(&claude, &server);
        env.retain(|(k, _)| *k != "ANTHROPIC_BASE_URL");
        env.push(("ANTHROPIC_BASE_URL", url.clone()));
        if full {
            // The canary cannot tell either: it says so, and blames nothing.
            let (out, _) = run_outage(d.path(), &env, &["--output-dir", "canary"]);
            let said = format!("{}\n{}", stdout(&out), stderr(&out));
            assert_eq!(code(&out), 3, "{category}: {said}");
            assert!(
                said.contains("could not tell whether `greeter` fires"),
                "{said}"
            );
            assert!(
                !said.contains("not installed where the agent looks"),
                "{said}"
            );
        }
        let (out, secs2) = run_outage(d.path(), &env, &["--no-canary", "--output-dir", "out"]);
        let said = format!("{}\n{}", stdout(&out), stderr(&out));
        eprintln!("{category} at {url}: {secs2:.1} s");
        assert_eq!(code(&out), 3, "an outage is exit 3: {said}");
        assert!(
            secs2 < 60.0,
            "Claude Code's retries are capped: {secs2:.1} s\n{said}"
        );
        assert!(
            !said.contains("FAIL "),
            "never a failure of the skill: {said}"
        );
        assert!(
            said.contains(&format!("infrastructure error ({category})")),
            "{said}"
        );
        // While Claude Code retries, the run says so, a line per retry.
        if category != "network" {
            let status = if category == "server" { "500" } else { "429" };
            assert!(
                said.contains(&format!(
                    "retrying   bmad:greeter/card: the model API failed ({status}); the agent asks again (1/3)"
                )),
                "{said}"
            );
        }
        let runs: Vec<serde_json::Value> = ["card", "trigger-1"]
            .iter()
            .flat_map(|id| {
                results_by_folder(&d.path().join("out/bmad_greeter").join(id)).into_values()
            })
            .collect();
        // An outage keeps no workspace: nothing of the skill's is in one.
        let left: Vec<_> = std::fs::read_dir(d.path().join("workspaces"))
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "workspaces left: {left:?}");
        for r in &runs {
            assert_eq!(r["status"], "error", "{r:#}");
            assert!(r["workspace"].is_null(), "{r:#}");
            assert_eq!(r["error"]["category"], category, "{r:#}");
            if r["kind"] == "trigger" {
                assert_eq!(r["trigger"]["fired"], serde_json::Value::Null, "{r:#}");
            }
        }
        assert_eq!(runs.len(), 4, "a case and 3 runs of the query: {said}");
        let report = assay(d.path(), &["report", "out", "--format", "json"]);
        let report: serde_json::Value = serde_json::from_str(&stdout(&report)).unwrap();
        let query = &report["statistics"]["triggers"][0];
        assert_eq!(
            (query["runs"].clone(), query["passed"].clone()),
            (json!(0), json!(false)),
            "{query:#}"
        );
        assert!(said.contains("could not tell"), "{said}");
        // The review page says so too: never "fired 0/0".
        let html = stdout(&assay(d.path(), &["report", "out", "--format", "html"]));
        assert!(
            html.contains("could not tell (3 run(s) ended in error) · should not fire")
                && !html.contains("fired 0/0"),
            "the query's cell: {}",
            html.lines()
                .filter(|l| l.contains("should "))
                .collect::<String>()
        );
        if !full {
            continue;
        }
        // Not cached: the next run runs them again; nor kept by --resume.
        let (again, _) = run_outage(d.path(), &env, &["--no-canary", "--output-dir", "again"]);
        assert_eq!(code(&again), 3);
        assert!(
            !stderr(&again).contains("from the cache")
                && !stdout(&again).contains("from the cache"),
            "{}",
            stdout(&again)
        );
        let (resumed, _) = run_outage(d.path(), &env, &["--resume", "out"]);
        let said = format!("{}\n{}", stdout(&resumed), stderr(&resumed));
        assert_eq!(code(&resumed), 3, "{said}");
        assert!(!said.contains("kept from the resumed run"), "{said}");
        assert!(
            said.contains("plan: ") && said.contains("4 agent run"),
            "{said}"
        );
    }
    let hits = server
        .requests()
        .iter()
        .filter(|q| q.to_string().contains("break please"))
        .count();
    // 4 case-runs in each of 3 runs (out, again, resume), each asking once and retrying 3 times.
    assert_eq!(hits, 4 * 3 * 4, "CLAUDE_CODE_MAX_RETRIES=3 by default");
}

/// An agent that says it retries without end (a thousand `api_retry` lines) floods no
/// terminal: ten live lines for its case-run, every retry kept in its transcript.
#[test]
fn endless_retries_are_told_ten_times_and_kept_in_full() {
    let d = tempfile::tempdir().unwrap();
    outage_project(d.path(), "Write a card.");
    std::fs::remove_file(d.path().join("evals/greeter/triggers.json")).unwrap();
    let fake = d.path().join("fake-claude");
    std::fs::write(
        &fake,
        "#!/bin/sh\ni=1\nwhile [ $i -le 1000 ]; do\n  echo '{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":'$i',\"max_retries\":1000,\"error_status\":529}'\n  i=$((i+1))\ndone\necho '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done\",\"session_id\":\"s\"}'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--harness",
            "claude-code",
            "--sandbox",
            "none",
            "--no-canary",
        ],
        &[
            ("ASSAY_CLAUDE_BIN", fake.display().to_string()),
            ("ANTHROPIC_API_KEY", "sk-assay-test".into()),
            ("ASSAY_JUDGE", "none".into()),
        ],
    );
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(said.matches("retrying   ").count(), 10, "{said}");
    assert!(
        said.contains("the model API failed (529); the agent asks again (10/1000)")
            && !said.contains("(11/1000)"),
        "{said}"
    );
    let case = Path::new(
        results(
            &d.path()
                .join(".assay/runs")
                .read_dir()
                .unwrap()
                .flatten()
                .next()
                .unwrap()
                .path(),
        )["card"]["dir"]
            .as_str()
            .unwrap(),
    )
    .to_path_buf();
    let transcript = std::fs::read_to_string(case.join("transcript.jsonl")).unwrap();
    assert_eq!(transcript.matches("\"retrying\"").count(), 1000);
}

/// A trigger run stops the agent at the decisive event: the skill under test loaded. A query
/// whose model then never answers still ends at once (without the stop it would wait out the
/// timeout), recorded with where it stopped; a query that does not fire runs to the agent's
/// answer; `--trigger-full-runs` lets a firing query go on to its end.
#[test]
fn a_trigger_run_stops_when_the_skill_loads() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    let load = || tool("Skill", json!({"skill": "greeting"}));
    server.script_each("Use the greeting skill", None, vec![load(), Reply::Hang]);
    server.script_each("TRIGGER-FIRE", None, vec![load(), text("A card.")]);
    server.script_each("TRIGGER-NOT", None, vec![text("Paris.")]);
    server.script_each(
        "TRIGGER-FULL",
        None,
        vec![load(), text("Here is your card.")],
    );
    let d = tempfile::tempdir().unwrap();
    let queries = json!([
        {"query": "TRIGGER-FIRE: make me a greeting card", "should_trigger": true},
        {"query": "TRIGGER-NOT: the capital of France?", "should_trigger": false},
        {"query": "TRIGGER-FULL: a card for Ada", "should_trigger": true},
    ]);
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/skills/greeting/SKILL.md", SKILL),
            ("evals/greeting/triggers.json", &queries.to_string()),
        ],
    );
    let env = claude_env(&claude, &server);
    let args = [
        "run",
        "--harness",
        "claude-code",
        "--mode",
        "triggers",
        "--trigger-runs",
        "1",
    ];
    let args = [&args[..], &["--timeout", "90"]].concat();
    let fire = [&args[..], &["--filter", "trigger-1", "--output-dir", "out"]].concat();
    let out = assay_env(d.path(), &fire, &env);
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert!(
        d.path().join("out/bmad_greeting/trigger-1").is_dir(),
        "{said}"
    );
    let r = results_by_folder(&d.path().join("out/bmad_greeting/trigger-1"))
        .remove("run-1")
        .unwrap_or_else(|| panic!("{said}"));
    assert_eq!(r["timed_out"], false, "{r:#}\n{said}");
    assert_eq!(r["trigger"]["fired"], true, "{r:#}");
    // Claude Code listed the skill as its session started: its call cannot fail.
    assert_eq!(r["stopped_at"]["event"], "skill_called", "{r:#}");
    assert_eq!(r["stopped_at"]["skill"], "greeting", "{r:#}");
    assert_eq!(r["status"], "completed", "{r:#}");
    // Stopped at the call: the model is asked nothing after it (no request carries its result).
    let after: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|q| q.to_string().contains("TRIGGER-FIRE") && q.to_string().contains("tool_result"))
        .collect();
    assert!(after.is_empty(), "{after:#?}");
    // The query that does not fire runs to the agent's answer; a full run goes on.
    let rest = [
        &args[..],
        &["--filter", "greeting/trigger-[23]", "--output-dir", "rest"],
    ]
    .concat();
    let rest = [&rest[..], &["--trigger-full-runs"]].concat();
    let out = assay_env(d.path(), &rest, &env);
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    for (q, fired) in [("trigger-2", false), ("trigger-3", true)] {
        assert!(
            d.path().join("rest/bmad_greeting").join(q).is_dir(),
            "{said}"
        );
        let r = results_by_folder(&d.path().join("rest/bmad_greeting").join(q))
            .remove("run-1")
            .unwrap_or_else(|| panic!("{said}"));
        assert_eq!(r["trigger"]["fired"], fired, "{r:#}");
        assert!(r["stopped_at"].is_null(), "{r:#}");
    }
    // A full run does ask the model after the load (so the check above can fail).
    assert!(
        server.requests().iter().any(
            |q| q.to_string().contains("TRIGGER-FULL") && q.to_string().contains("tool_result")
        ),
        "{said}"
    );
}

#[test]
fn a_trigger_run_that_acts_without_the_skill_is_stopped_by_its_turn_budget_and_exploring_never_is()
{
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    let write = |f: &str| {
        tool(
            "Write",
            json!({"file_path": format!("{{cwd}}/{f}"), "content": "x"}),
        )
    };
    server.script_each(
        "Use the greeting skill",
        None,
        vec![tool("Skill", json!({"skill": "greeting"})), Reply::Hang],
    );
    server.script_each(
        "TRIGGER-ACT",
        None,
        vec![write("a.txt"), write("b.txt"), write("c.txt"), text("done")],
    );
    // Four exploring steps, then the load: a budget of one acting step is never spent.
    server.script_each(
        "TRIGGER-LOOK",
        None,
        vec![
            tool("Glob", json!({"pattern": "**/*.md"})),
            tool("Grep", json!({"pattern": "card"})),
            tool("Bash", json!({"command": "ls -la && cat README.md | head"})),
            tool("TodoWrite", json!({"todos": [{"content": "card", "status": "pending", "activeForm": "carding"}]})),
            tool("Skill", json!({"skill": "greeting"})),
            Reply::Hang,
        ],
    );
    let d = tempfile::tempdir().unwrap();
    let queries = json!([
        {"query": "TRIGGER-ACT: write three files", "should_trigger": false},
        {"query": "TRIGGER-LOOK: a card for Ada", "should_trigger": true},
    ]);
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("README.md", "# cards\n"),
            (".claude/skills/greeting/SKILL.md", SKILL),
            ("evals/greeting/triggers.json", &queries.to_string()),
        ],
    );
    let args = [
        "run",
        "--harness",
        "claude-code",
        "--mode",
        "triggers",
        "--trigger-runs",
        "1",
        "--trigger-turns",
        "1",
        "--timeout",
        "90",
        "--output-dir",
        "out",
    ];
    let out = assay_env(d.path(), &args, &claude_env(&claude, &server));
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{said}");
    let runs = results(&d.path().join("out"));
    let act = &runs["trigger-1"];
    assert_eq!(act["trigger"]["fired"], false, "{act:#}");
    assert_eq!(act["stopped_at"]["event"], "turn_budget", "{act:#}");
    // Stopped at the second write's call: the model never saw its result.
    let after_second = server
        .requests()
        .iter()
        .map(|q| q.to_string())
        .filter(|q| {
            q.contains("TRIGGER-ACT")
                && q.contains("b.txt")
                && q.matches("tool_result").count() >= 2
        })
        .count();
    assert_eq!(after_second, 0, "{said}");
    let look = &runs["trigger-2"];
    assert_eq!(look["trigger"]["fired"], true, "{look:#}");
    assert_eq!(look["stopped_at"]["event"], "skill_called", "{look:#}");
}
