//! Attacks on what assay passes to other programs and writes for people, that worked when
//! they were written (issue 42, round four): each test asserts the attack fails.
//!
//! - A CLI judge (`claude -p …`) was given the grading prompt in its argv, which every other
//!   process on the machine can read in `/proc/<pid>/cmdline`: a later case's agent read an
//!   earlier case's hidden criterion there.
//! - A pass recorded with `--sandbox none` was served from the cache to a sandboxed run.
//! - An agent's escape sequences (a window title, OSC 52 on the clipboard) and bidirectional
//!   overrides reached `github-annotations.txt`, `report.html` and `assay report` raw.
//! - An ACP agent's claimed cost of ±1e308 USD was recorded as it said.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use support::*;

/// A folder of executable shell scripts, and a PATH with it first.
fn bin(names: &[(&str, &str)]) -> (tempfile::TempDir, String) {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    for (name, body) in names {
        let p = d.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:/usr/bin:/bin", d.path().display());
    (d, path)
}

/// A BMAD suite whose expectations only a judge can grade; the texts are the secrets.
const SECRET_1: &str = "hidden-criterion-9b2e: brief.md exists";
const SECRET_2: &str = "hidden-criterion-4c7d: the reply names the file";

fn judged_project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let evals = json!({"evals": [{"id": "A1", "prompt": "Write brief.md",
        "expected_output": "brief.md with a title", "expectations": [SECRET_1, SECRET_2]}]});
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"echo 'Wrote brief.md.'; echo '# Brief' > brief.md\"]\n",
            ),
            ("evals/brief/evals.json", &evals.to_string()),
        ],
    );
    d
}

/// The judge's answer: both expectations met.
fn expectations_met() -> Value {
    json!({"expectations": [
        {"text": SECRET_1, "passed": true, "evidence": "artifact brief.md: '# Brief'"},
        {"text": SECRET_2, "passed": true, "evidence": "'Wrote brief.md.'"}
    ]})
}

/// A fake judge CLI: it records its argv (one argument a line) and its stdin beside itself,
/// then prints `answer`.
fn recording_cli(name: &str, answer: &str) -> (tempfile::TempDir, String, PathBuf) {
    let quoted = answer.replace('\'', "'\\''");
    let (d, path) = bin(&[(
        name,
        &format!(
            "here=$(dirname \"$0\")\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \"$here/argv\"\ncat >> \"$here/stdin\"\nprintf '%s\\n' '{quoted}'"
        ),
    )]);
    let dir = d.path().to_path_buf();
    (d, path, dir)
}

/// `assay run` of [`judged_project`] judged by `judge`, the fake CLI first on PATH.
fn run_judged_by(d: &Path, judge: &str, path: &str) -> Output {
    assay_env(
        d,
        &["run", "--output-dir", "out", "--judge", judge],
        &[
            ("PATH", path.to_string()),
            ("ASSAY_JUDGE_TIMEOUT", "20".to_string()),
        ],
    )
}

fn assert_graded_pass(d: &Path, out: &Output) {
    assert_eq!(code(out), 0, "{}\n{}", stdout(out), stderr(out));
    let r = &results(&d.join("out"))["A1"];
    assert_eq!(r["grade"]["verdict"], "pass", "{r:#}");
}

/// `claude -p <prompt>` put the case's hidden expectations (and the agent's output) on the
/// judge's command line, readable by every process in `/proc/<pid>/cmdline`. The prompt goes
/// through stdin, and the answer is still read.
#[test]
fn the_claude_judge_never_gets_the_prompt_in_its_argv() {
    let d = judged_project();
    let answer = json!({"type": "result", "is_error": false,
        "result": expectations_met().to_string()});
    let (_b, path, dir) = recording_cli("claude", &answer.to_string());
    let out = run_judged_by(d.path(), "claude-cli", &path);
    assert_graded_pass(d.path(), &out);
    let argv = std::fs::read_to_string(dir.join("argv")).unwrap();
    let stdin = std::fs::read_to_string(dir.join("stdin")).unwrap_or_default();
    for secret in [SECRET_1, SECRET_2, "Wrote brief.md."] {
        assert!(!argv.contains(secret), "{secret:?} in argv:\n{argv}");
        assert!(stdin.contains(secret), "{secret:?} not in stdin:\n{stdin}");
    }
    assert!(argv.lines().any(|a| a == "-p"), "{argv}");
}

/// `codex exec` is given the prompt on stdin (`-`), never in argv.
#[test]
fn the_codex_judge_never_gets_the_prompt_in_its_argv() {
    let d = judged_project();
    let answer = json!({"type": "item.completed", "item": {"type": "agent_message",
        "text": expectations_met().to_string()}});
    let (_b, path, dir) = recording_cli("codex", &answer.to_string());
    let out = run_judged_by(d.path(), "codex-cli", &path);
    assert_graded_pass(d.path(), &out);
    let argv = std::fs::read_to_string(dir.join("argv")).unwrap();
    let stdin = std::fs::read_to_string(dir.join("stdin")).unwrap_or_default();
    for secret in [SECRET_1, SECRET_2, "Wrote brief.md."] {
        assert!(!argv.contains(secret), "{secret:?} in argv:\n{argv}");
        assert!(stdin.contains(secret), "{secret:?} not in stdin:\n{stdin}");
    }
}

/// The real Claude Code CLI as the judge, against a scripted model server: it takes the
/// prompt from stdin with `-p` (and the system prompt from its file), and its answer grades.
#[test]
fn the_real_claude_cli_judges_from_stdin() {
    let claude = agent_cli("claude");
    let server = model_server::ModelServer::start();
    server.script_each(
        SECRET_1,
        None,
        vec![model_server::text(&expectations_met().to_string())],
    );
    let d = judged_project();
    let out = assay_env(
        d.path(),
        &["run", "--output-dir", "out", "--judge", "claude-cli"],
        &[
            ("ASSAY_CLAUDE_BIN", claude.display().to_string()),
            ("ANTHROPIC_BASE_URL", server.url.clone()),
            ("ANTHROPIC_API_KEY", "sk-assay-test".into()),
            ("CLAUDE_CODE_MAX_RETRIES", "0".into()),
            ("ASSAY_JUDGE_TIMEOUT", "60".into()),
        ],
    );
    assert_graded_pass(d.path(), &out);
    // The grading request: the prompt (from stdin) under the judge's own system prompt
    // (from its file). (Claude Code also asks for a session title.)
    let asked = server.requests();
    assert!(
        asked
            .iter()
            .any(|r| r["messages"].to_string().contains(SECRET_1)
                && r["system"].to_string().contains("strict, careful grader")),
        "the model never got the grading prompt: {asked:#?}"
    );
}

per_backend! {
/// A pass recorded with `--sandbox none` was served from the cache to a sandboxed run: the
/// agent passes only where it can write a host folder outside its workspace (which no
/// sandbox allows), so the sandboxed run must run it again, and fail.
fn a_pass_recorded_unsandboxed_is_not_served_to_a_sandboxed_run(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("project");
    let outside = d.path().join("outside");
    std::fs::create_dir_all(d.path().join("home")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    hostile_project(
        &p,
        &format!(
            "(echo x > '{}/probe') 2>/dev/null && echo finished || echo 'contained'\n",
            outside.display()
        ),
    );
    let run = |sandbox: &str, out: &str| {
        assay_run(&p)
            .args(["--sandbox", sandbox, "--output-dir", out])
            .env_remove("ASSAY_NO_CACHE")
            .env("HOME", d.path().join("home"))
            .env_remove("XDG_DATA_HOME")
            .env_remove("ASSAY_CACHE_KEY")
            .output()
            .unwrap()
    };
    let first = run("none", "run-none");
    assert_eq!(code(&first), 0, "{}\n{}", stdout(&first), stderr(&first));
    // The same run again is served from the cache (the cache is on).
    let again = run("none", "run-none-again");
    assert!(stdout(&again).contains("from the cache"), "{}", stdout(&again));
    let second = run(backend, "run-sandboxed");
    let said = format!("{}\n{}", stdout(&second), stderr(&second));
    assert!(!said.contains("from the cache"), "{said}");
    let r = &results(&p.join("run-sandboxed"))["001"];
    assert!(r["cached"].is_null(), "{r:#}");
    assert_eq!(r["sandbox"]["kind"], backend, "{r:#}");
    assert_eq!(code(&second), 1, "{said}");
}
}

/// What the hostile agent writes on stdout and stderr: a window title, an OSC 52 clipboard
/// write (`rm -rf ~`), a C1 CSI, and a right-to-left override.
const ESCAPES: &str = r"title \033]0;PWNED-TITLE\007 clip \033]52;c;cm0gLXJmIH4=\007 csi \302\2332J rlo \342\200\256evil.sh txt.exe";

/// The characters that must never be written raw for a person to read.
fn raw_escapes(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| {
            (c.is_control() && !matches!(c, '\n' | '\t'))
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
        })
        .collect()
}

fn assert_no_raw_escapes(what: &str, text: &str) {
    let bad = raw_escapes(text);
    assert!(
        bad.is_empty(),
        "{what} holds {bad:?}:\n{}",
        text.escape_debug()
    );
}

/// A fake Claude Code CLI: its answer holds a window title, an OSC 52 clipboard write, a C1
/// CSI and a right-to-left override; it says the same on stderr and exits 3 (so the reason
/// of the failed case-run quotes its stderr).
fn hostile_claude() -> (tempfile::TempDir, PathBuf) {
    let result = json!({"type": "result", "subtype": "success", "is_error": false,
        "result": "title \u{1b}]0;PWNED-TITLE\u{7} clip \u{1b}]52;c;cm0gLXJmIH4=\u{7} csi \u{9b}2J rlo \u{202e}evil.sh txt.exe",
        "session_id": "s1"});
    let quoted = result.to_string().replace('\'', "'\\''");
    let (d, _) = bin(&[(
        "claude",
        &format!("printf '%s\\n' '{quoted}'\nprintf '{ESCAPES}\\n' >&2\nexit 3"),
    )]);
    let claude = d.path().join("claude");
    (d, claude)
}

/// An agent's escape sequences and bidirectional overrides reached `github-annotations.txt`
/// (a `cat` of it retitled the terminal and set the clipboard) and `report.html` raw. None
/// reaches any report, `assay run`'s lines or `assay report`'s output.
#[test]
fn an_agents_escapes_and_bidi_overrides_reach_no_report_raw() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let (_b, claude) = hostile_claude();
    write_tree(
        p,
        &[
            ("assay.toml", "[run]\nharness = \"claude-code\"\n"),
            ("evals/hostile/001.yaml", HOSTILE_CASE),
        ],
    );
    let env = [
        ("ASSAY_JUDGE", "none".to_string()),
        ("ASSAY_CLAUDE_BIN", claude.display().to_string()),
        ("ANTHROPIC_API_KEY", "sk-assay-test".to_string()),
    ];
    let out = assay_env(
        p,
        &[
            "run",
            "--sandbox",
            "none",
            "--output-dir",
            "out",
            "--reporter",
            "github,junit,markdown,html,json",
        ],
        &env,
    );
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    assert_no_raw_escapes("assay run's stdout", &stdout(&out));
    assert_no_raw_escapes("assay run's stderr", &stderr(&out));
    // The agent's text reached the reports (so the test sees what it should).
    let annotations = std::fs::read_to_string(p.join("out/github-annotations.txt")).unwrap();
    assert!(annotations.contains("PWNED-TITLE"), "{annotations}");
    let html = std::fs::read_to_string(p.join("out/report.html")).unwrap();
    assert!(html.contains("evil.sh"), "the output is in the page");
    for file in [
        "github-annotations.txt",
        "report.html",
        "summary.md",
        "junit.xml",
    ] {
        let text = std::fs::read_to_string(p.join("out").join(file)).unwrap();
        assert_no_raw_escapes(file, &text);
    }
    // The override is shown, spelled out, where it stood.
    assert!(html.contains("\\u{202e}evil.sh"), "the override is visible");
    assert!(annotations.contains("\\u{202e}evil.sh"), "{annotations}");
    for format in ["github", "junit", "markdown", "html", "json", "uaaps"] {
        let o = assay_env(p, &["report", "out", "--format", format], &env);
        assert!(matches!(code(&o), 0 | 1), "{format}: {}", stderr(&o));
        assert_no_raw_escapes(&format!("assay report --format {format}"), &stdout(&o));
        // Written to a file, as it is.
        let file = format!("again.{format}");
        let o = assay_env(
            p,
            &["report", "out", "--format", format, "--output", &file],
            &env,
        );
        assert!(matches!(code(&o), 0 | 1), "{format}: {}", stderr(&o));
        if format != "json" && format != "uaaps" {
            let text = std::fs::read_to_string(p.join(&file)).unwrap();
            assert_no_raw_escapes(&format!("assay report --format {format} --output"), &text);
        }
    }
    let o = assay_env(p, &["report", "out"], &env);
    assert_no_raw_escapes("assay report", &stdout(&o));
}

/// The fake ACP agent of `tests/acp.rs`, on PATH.
fn acp_agent(tools: &Path) -> String {
    let bin = tools.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(
        repo().join("tests/fixtures/acp/fake-acp-agent"),
        bin.join("fake-acp-agent"),
    )
    .unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// An ACP agent claiming ±1e308 USD for its turn: the claim is not believed (the cost is
/// unknown, with a note saying why), and no sum or report is broken by it.
#[test]
fn an_acp_agents_absurd_cost_is_not_recorded() {
    let tools = tempfile::tempdir().unwrap();
    let path = acp_agent(tools.path());
    let d = tempfile::tempdir().unwrap();
    let case = |amount: &str| {
        format!(
            "timestamp: 2026-11-26T00:00:00Z\nname: chat\nprompt: spend {amount} now\nexpected: x\n"
        )
    };
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"acp\"\n\n[harness.acp]\ncommand = [\"fake-acp-agent\"]\n",
            ),
            (
                ".claude/skills/chat/SKILL.md",
                "---\nname: chat\ndescription: Chats\n---\nChat.\n",
            ),
            ("evals/chat/huge.yaml", &case("1e308")),
            ("evals/chat/negative.yaml", &case("-1e308")),
            ("evals/chat/fair.yaml", &case("0.5")),
        ],
    );
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--output-dir",
            "out",
            "--reporter",
            "json,html,junit,markdown",
        ],
        &[("PATH", path), ("ASSAY_JUDGE", "none".into())],
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert!(code(&out) <= 1, "{said}");
    let r = results(&d.path().join("out"));
    assert_eq!(r["fair"]["cost_usd"], json!(0.5), "{:#}", r["fair"]);
    for id in ["huge", "negative"] {
        let c = &r[id];
        assert!(c["cost_usd"].is_null(), "{id}: {c:#}");
        let note = c["turns"][0]["cost_note"].as_str().unwrap_or_default();
        assert!(note.contains("not believed"), "{id}: {c:#}");
    }
    let report = read_json(&d.path().join("out/report.json"));
    let total = &report["summary"]["cost_usd"];
    assert_eq!(total, &json!(0.5), "{report:#}");
}
