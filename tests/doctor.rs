//! `assay doctor`: what `assay run` here would use, checked; exit 0 when it would start, 3 when
//! it would stop (with the fix), 2 on bad input.

use crate::support;

use std::path::Path;

use support::*;

fn quickstart() -> tempfile::TempDir {
    copy_example("examples/quickstart")
}

fn clauditor_project(dir: &Path) {
    write_tree(
        dir,
        &[
            ("assay.toml", ""),
            (".claude/commands/ask.md", "Summarize a file."),
            (
                ".claude/commands/ask.eval.json",
                r#"{"assertions": [{"id": "a", "type": "min_length", "length": 1}]}"#,
            ),
        ],
    );
}

#[test]
fn with_everything_present_the_run_would_start() {
    let d = quickstart();
    let out = assay_env(d.path(), &["doctor"], &[]);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}\n{}", stderr(&out));
    for want in [
        "✓ harness command",
        "✓ sandbox",
        "bubblewrap 0.",
        "✓ sandbox bwrap",
        "✓ sandbox landlock",
        "works: Landlock ABI",
        "✓ run folder",
        "assay run would start here.",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    // It runs nothing and leaves nothing behind.
    assert!(!d.path().join(".assay").exists(), "{text}");
    let out = assay_env(d.path(), &["doctor", "--json"], &[]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["would_start"], true);
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["what"] == "sandbox" && c["state"] == "ok")
    );
}

#[test]
fn a_missing_cli_stops_the_run_and_says_how_to_install_it() {
    let d = tempfile::tempdir().unwrap();
    clauditor_project(d.path());
    let out = assay_env(
        d.path(),
        &["doctor", "--harness", "claude-code"],
        &[("ASSAY_CLAUDE_BIN", "/nonexistent/claude".into())],
    );
    let text = stdout(&out);
    assert_eq!(code(&out), 3, "{text}\n{}", stderr(&out));
    assert!(text.contains("✗ harness claude-code"), "{text}");
    assert!(
        text.contains("fix: npm install -g @anthropic-ai/claude-code"),
        "{text}"
    );
    assert!(
        text.contains("would stop before starting: 1 problem"),
        "{text}"
    );
}

#[test]
fn a_missing_login_stops_the_run() {
    let claude = agent_cli("claude");
    let d = tempfile::tempdir().unwrap();
    clauditor_project(d.path());
    let home = tempfile::tempdir().unwrap();
    let env = [
        ("ASSAY_CLAUDE_BIN", claude.display().to_string()),
        ("ANTHROPIC_API_KEY", String::new()),
        ("HOME", home.path().display().to_string()),
    ];
    let out = assay_env(d.path(), &["doctor", "--harness", "claude-code"], &env);
    let text = stdout(&out);
    assert_eq!(code(&out), 3, "{text}\n{}", stderr(&out));
    assert!(text.contains("Claude Code has no login"), "{text}");
    assert!(text.contains("fix: set ANTHROPIC_API_KEY"), "{text}");
    // With a key, the same project is ready, and the CLI's version is shown.
    let mut env = env.to_vec();
    env[1].1 = "sk-test".into();
    let out = assay_env(d.path(), &["doctor", "--harness", "claude-code"], &env);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}\n{}", stderr(&out));
    assert!(
        text.contains("✓ harness claude-code") && text.contains("Claude Code"),
        "{text}"
    );
}

#[test]
fn without_bubblewrap_landlock_contains_the_run_and_without_either_it_would_stop() {
    let d = quickstart();
    // A PATH with a shell and the tools the quickstart's agent script uses, but no bwrap.
    let bin = tempfile::tempdir().unwrap();
    for tool in ["sh", "bash", "cat", "printf", "grep", "sed", "mkdir", "env"] {
        if let Ok(p) = which(tool) {
            std::os::unix::fs::symlink(p, bin.path().join(tool)).unwrap();
        }
    }
    let path = ("PATH", bin.path().display().to_string());
    let out = assay_env(d.path(), &["doctor"], std::slice::from_ref(&path));
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}\n{}", stderr(&out));
    // Which backend runs, what it lacks, and for each backend whether it works and the fix.
    for want in [
        "✓ sandbox",
        "landlock (Landlock ABI",
        "unlike bubblewrap: no private /proc",
        "! sandbox bwrap",
        "bubblewrap (`bwrap`) is not installed",
        "apt-get install bubblewrap",
        "✓ sandbox landlock",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    // A kernel whose Landlock cannot limit the network, and no bubblewrap: no backend works.
    let old = [path.clone(), ("ASSAY_LANDLOCK_ABI", "3".to_string())];
    let out = assay_env(d.path(), &["doctor"], &old);
    let text = stdout(&out);
    assert_eq!(code(&out), 3, "{text}\n{}", stderr(&out));
    assert!(text.contains("✗ sandbox"), "{text}");
    assert!(text.contains("! sandbox landlock"), "{text}");
    assert!(text.contains("Linux 6.7"), "{text}");
    let out = assay_env(d.path(), &["doctor", "--sandbox", "none"], &old);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}\n{}", stderr(&out));
    assert!(
        text.contains("! sandbox") && text.contains("unsandboxed"),
        "{text}"
    );
}

fn which(tool: &str) -> Result<std::path::PathBuf, ()> {
    std::env::split_paths(&std::env::var("PATH").unwrap_or_default())
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .ok_or(())
}

#[test]
fn nothing_to_run_is_bad_input() {
    let d = tempfile::tempdir().unwrap();
    let out = assay_env(d.path(), &["doctor"], &[]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
}

#[test]
fn probe_sends_one_request_through_the_real_cli_and_the_judge() {
    use support::judge_server::{JudgeReply, JudgeServer};
    use support::model_server::{ModelServer, Reply, text};
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script(assay::run::doctor::PROBE_PROMPT, vec![text("OK")]);
    let judge = JudgeServer::start(vec![JudgeReply::Says("OK".into())]);
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/commands/ask.md", "Summarize a file."),
            (
                ".claude/commands/ask.eval.json",
                r#"{"assertions": [{"id": "a", "type": "min_length", "length": 1}],
                    "grading_criteria": [{"id": "c", "criterion": "The summary names the file"}]}"#,
            ),
        ],
    );
    let mut env = claude_env(&claude, &server);
    env.retain(|(k, _)| *k != "ASSAY_JUDGE");
    env.push(("ASSAY_JUDGE_BASE_URL", judge.url.clone()));
    env.push(("ASSAY_JUDGE_API_KEY", "sk-judge".into()));
    let args = [
        "doctor",
        "--harness",
        "claude-code",
        "--judge",
        "anthropic:claude-judge",
        "--probe",
    ];
    let out = assay_env(d.path(), &args, &env);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}\n{}", stderr(&out));
    assert!(text.contains("✓ probe claude-code"), "{text}");
    assert!(text.contains("answered in"), "{text}");
    assert!(
        text.contains(": \"OK\""),
        "the model's answer is shown: {text}"
    );
    assert!(
        text.contains("✓ probe judge") && text.contains("anthropic claude-judge answered in"),
        "{text}"
    );
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.to_string().contains(assay::run::doctor::PROBE_PROMPT)),
        "the CLI sent the probe to the model"
    );
    assert_eq!(judge.requests().len(), 1, "one judge call");
    assert!(
        !d.path().join(".assay").exists(),
        "the probe's run is not left in the project"
    );

    // Without --probe nothing is sent.
    let before = server.requests().len();
    let out = assay_env(d.path(), &args[..5], &env);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(server.requests().len(), before);

    // A model API that refuses the key: the run would start, the probe says it would fail.
    let refusing = ModelServer::start();
    refusing.script(
        assay::run::doctor::PROBE_PROMPT,
        vec![Reply::Error {
            status: 401,
            message: "invalid x-api-key".into(),
        }],
    );
    let mut env = claude_env(&claude, &refusing);
    env.push(("ASSAY_JUDGE_BASE_URL", judge.url.clone()));
    let out = assay_env(
        d.path(),
        &["doctor", "--harness", "claude-code", "--probe"],
        &env,
    );
    let text = stdout(&out);
    assert_eq!(code(&out), 3, "{text}\n{}", stderr(&out));
    assert!(text.contains("✗ probe claude-code"), "{text}");
    assert!(text.contains("fix: log the CLI in"), "{text}");
}

/// Two suites with judge items: doctor names the judge, why it was chosen, and which suites use
/// it; one suite that names its own judge model gets a line of its own.
#[test]
fn each_judge_is_named_with_its_suites_and_why() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"true\"]\n",
            ),
            (
                "evals/a/evals.json",
                r#"{"evals": [{"id": "1", "prompt": "p", "expectations": ["e"]}]}"#,
            ),
            (
                "evals/b/evals.json",
                r#"{"evals": [{"id": "1", "prompt": "p", "expectations": ["e"]}]}"#,
            ),
        ],
    );
    let env = [("ANTHROPIC_API_KEY", "sk-test".to_string())];
    let out = assay_env(d.path(), &["doctor"], &env);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}\n{}", stderr(&out));
    let line = text
        .lines()
        .find(|l| l.starts_with("✓ judge"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("anthropic "), "{line}");
    assert!(
        line.contains("(chosen by auto: ANTHROPIC_API_KEY is set)"),
        "{line}"
    );
    assert!(
        line.contains(", for ") && line.contains(":a") && line.contains(":b"),
        "{line}"
    );
    let out = assay_env(d.path(), &["doctor", "--judge", "openai:gpt-judge"], &env);
    let text = stdout(&out);
    assert!(
        text.contains("openai gpt-judge (chosen by --judge), for "),
        "{text}"
    );
}

/// Copilot CLI says a failing model API as its message and ends its turn as if it had
/// answered: the probe fails, naming the category, instead of "✓ … answered: Request failed".
#[test]
fn a_probe_fails_when_the_agent_says_its_model_api_failed() {
    use support::model_server::{ModelServer, Reply};
    let copilot = agent_cli("copilot");
    let server = ModelServer::start();
    server.script_each(
        assay::run::doctor::PROBE_PROMPT,
        None,
        vec![Reply::Down(500)],
    );
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", "[run]\nharness = \"copilot\"\n"),
            (
                "evals/ask/001.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: ask\nprompt: hi\nexpected: x\n",
            ),
        ],
    );
    let path = format!(
        "{}:{}",
        copilot.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [
        ("PATH", path),
        ("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", server.url)),
        ("COPILOT_PROVIDER_API_KEY", "sk-test".into()),
        ("COPILOT_PROVIDER_TYPE", "openai".into()),
        ("ASSAY_JUDGE", "none".into()),
    ];
    let out = assay_env(
        d.path(),
        &["doctor", "--model", "gpt-test", "--probe"],
        &env,
    );
    let text = stdout(&out);
    assert_eq!(code(&out), 3, "{text}\n{}", stderr(&out));
    assert!(text.contains("✗ probe copilot"), "{text}");
    assert!(text.contains("Last error: 500"), "{text}");
    assert!(
        text.contains("fix: the model API is refusing or failing now"),
        "{text}"
    );
}
