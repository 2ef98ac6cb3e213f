//! `assay run` offline, through the `command` harness: no agent CLI, no network.

use crate::support;

use std::path::Path;

use serde_json::json;
use support::*;

/// `assay run` in `dir`, into the run folder `out` unless `args` names another.
fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["run", "--workspace-dir", "ws"];
    if !args.contains(&"--output-dir") {
        all.extend(["--output-dir", "out"]);
    }
    all.extend_from_slice(args);
    assay(dir, &all)
}

#[test]
fn the_quickstart_runs_offline_and_its_checks_can_fail() {
    let d = tempfile::tempdir().unwrap();
    let out_dir = d.path().join("out").display().to_string();
    let ws = d.path().join("ws").display().to_string();
    let out = assay(
        &repo(),
        &[
            "run",
            "examples/quickstart",
            "--output-dir",
            &out_dir,
            "--workspace-dir",
            &ws,
        ],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("3 case-runs: 3 passed"),
        "{}",
        stdout(&out)
    );
    let rs = results(&d.path().join("out"));
    let card = &rs["greeting"];
    assert_eq!(card["harness"], "command");
    assert_eq!(card["grade"]["verdict"], "pass");
    assert_eq!(card["grade"]["checks_passed"], 3);
    assert_eq!(card["output_files"]["greeting.txt"], "Hello, Ada!\n");
    assert_eq!(card["checks"][0]["evidence"], "Hello, Ada!⏎");
    let dir = Path::new(card["dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(dir.join("artifacts/greeting.txt")).unwrap(),
        "Hello, Ada!\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("prompt.txt")).unwrap(),
        "/greeting Ada\n"
    );
    assert_eq!(
        rs["002"]["turns"][0]["final_message"],
        "Wrote greeting.txt for world.\n"
    );
    // Workspaces of completed runs are removed.
    assert_eq!(std::fs::read_dir(d.path().join("ws")).unwrap().count(), 0);
    assert_eq!(read_json(&d.path().join("out/run.json"))["case_runs"], 3);

    // An agent that does not do the job fails the same checks.
    let out_dir = d.path().join("bad").display().to_string();
    let out = assay(
        &repo(),
        &[
            "run",
            "examples/quickstart",
            "--command",
            "echo nope",
            "--output-dir",
            &out_dir,
        ],
    );
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("3 case-runs: 3 failed"),
        "{}",
        stdout(&out)
    );
    // The summary lists the failures first, each with why and where to look.
    let text = stdout(&out);
    let failures = text.find("failures (3):").expect("a failures section");
    assert!(
        failures < text.find("3 case-runs: 3 failed").unwrap(),
        "{text}"
    );
    assert!(
        text.contains("  clauditor:greeting/greeting: names_ada (contains):"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{out_dir}/clauditor_greeting/greeting/run-1")),
        "{text}"
    );
    let bad = &results(&d.path().join("bad"))["greeting"];
    assert_eq!(bad["grade"]["verdict"], "fail");
    assert_eq!(bad["checks"][0]["passed"], false);
}

#[test]
fn uaaps_deterministic_tests_run_their_commands() {
    let d = tempfile::tempdir().unwrap();
    let out = assay(
        &repo(),
        &[
            "run",
            "examples/uaaps",
            "--filter",
            "uaaps-tests",
            "--output-dir",
            d.path().to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let rs = results(d.path());
    assert_eq!(rs.len(), 4);
    assert_eq!(rs["blocks-etc"]["exit_code"], 2);
    assert_eq!(rs["allows-src"]["exit_code"], 0);
    assert_eq!(
        rs["counts-a-file"]["turns"][0]["final_message"],
        "5 words, 2 lines\n"
    );
    assert_eq!(
        rs["counts-stdin"]["turns"][0]["final_message"],
        "3 words, 1 lines\n"
    );
}

#[test]
fn a_missing_harness_is_an_infrastructure_error_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                "evals/x/evals.json",
                r#"{"evals": [{"id": "1", "prompt": "p", "expectations": ["e"]}]}"#,
            ),
        ],
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["run", "--harness", "claude-code", "--output-dir", "out"])
        .current_dir(d.path())
        .env("ASSAY_CLAUDE_BIN", "assay-no-such-claude")
        .output()
        .unwrap();
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is not installed"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("npm install -g @anthropic-ai/claude-code"));
    assert!(!d.path().join("out").exists(), "nothing ran");

    // Installed but not logged in.
    let fake = d.path().join("claude");
    std::fs::write(&fake, "#!/bin/sh\nexit 0\n").unwrap();
    std::process::Command::new("chmod")
        .args(["+x", fake.to_str().unwrap()])
        .status()
        .unwrap();
    let empty_home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["run", "--harness", "claude-code", "--output-dir", "out"])
        .current_dir(d.path())
        .env("ASSAY_CLAUDE_BIN", &fake)
        .env("HOME", empty_home.path())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("CLAUDE_CODE_OAUTH_TOKEN")
        .output()
        .unwrap();
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(stderr(&out).contains("no login"), "{}", stderr(&out));

    let out = run(d.path(), &["--harness", "gemini"]);
    assert_eq!(code(&out), 3);
    assert!(stderr(&out).contains("unknown harness `gemini`"));
}

const SETUP_CASE: &str = "timestamp: 2026-11-22T00:00:00Z
name: scripts
setup: |
  mkdir -p \"$HOME/notes\" && echo from-setup > \"$HOME/notes/a.txt\" && echo staged > staged.txt
prompt: read the note
expected: x
teardown: |
  exit 7
";

#[test]
fn setup_and_teardown_need_trust_and_run_with_the_private_home() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"cat \\\"$HOME/notes/a.txt\\\" staged.txt; echo \\\"home=$HOME\\\"\"]\n",
            ),
            ("evals/scripts/001.yaml", SETUP_CASE),
            (
                "evals/scripts/002.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: scripts\nsetup: exit 4\nprompt: p\nexpected: x\n",
            ),
        ],
    );
    let out = run(d.path(), &[]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let rs = results(&d.path().join("out"));
    assert_eq!(rs["001"]["status"], "skipped");
    assert!(rs["001"]["reason"].as_str().unwrap().contains("--trust"));

    let out = run(d.path(), &["--trust", "--output-dir", "out2"]);
    assert_eq!(
        code(&out),
        0,
        "a failed Skillet setup skips its case, as Skillet does: {}",
        stdout(&out)
    );
    let rs = results(&d.path().join("out2"));
    let ok = &rs["001"];
    assert_eq!(ok["status"], "completed", "{ok:#}");
    let said = ok["turns"][0]["final_message"].as_str().unwrap();
    assert!(said.starts_with("from-setup\nstaged\nhome="), "{said}");
    let home = said.lines().nth(2).unwrap().trim_start_matches("home=");
    assert!(
        home.ends_with("/home") && home.contains("assay-ws-"),
        "private HOME: {home}"
    );
    assert!(
        ok["teardown_error"]
            .as_str()
            .unwrap()
            .contains("exited with code 7")
    );
    let failed = &rs["002"];
    assert_eq!(failed["status"], "skipped");
    assert!(
        failed["reason"]
            .as_str()
            .unwrap()
            .starts_with("setup failed")
    );
    assert!(
        Path::new(failed["workspace"].as_str().unwrap()).exists(),
        "kept for inspection"
    );
}

#[test]
fn a_dry_run_plans_what_trust_lets_the_real_run_do() {
    let d = tempfile::tempdir().unwrap();
    let case = |setup: &str| {
        format!("timestamp: 2026-11-22T00:00:00Z\nname: scripts\n{setup}prompt: p\nexpected: x\n")
    };
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"echo\", \"hi\"]\n",
            ),
            ("evals/scripts/001.yaml", &case("setup: echo ready\n")),
            ("evals/scripts/002.yaml", &case("teardown: echo done\n")),
            ("evals/scripts/003.yaml", &case("")),
        ],
    );
    let untrusted = run(d.path(), &["--dry-run", "--judge", "none"]);
    assert_eq!(code(&untrusted), 0, "{}", stderr(&untrusted));
    let text = stdout(&untrusted);
    assert!(
        text.contains("plan: 3 case-runs (3 case runs): 1 agent run, 2 skipped (setup/teardown scripts need --trust)"),
        "{text}"
    );
    assert!(
        text.contains("skillet:scripts/001  run 1  skipped") && text.contains("pass --trust"),
        "{text}"
    );
    let json = run(d.path(), &["--dry-run", "--judge", "none", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let rows = v["case_runs"].as_array().unwrap();
    let skipped: Vec<_> = rows.iter().map(|r| r["skipped"].is_string()).collect();
    assert_eq!(skipped, [true, true, false], "{v:#}");
    assert_eq!(rows[0]["starts_agent"], false);

    let trusted = run(d.path(), &["--dry-run", "--judge", "none", "--trust"]);
    assert!(
        stdout(&trusted).contains("plan: 3 case-runs (3 case runs): 3 agent runs\n"),
        "{}",
        stdout(&trusted)
    );
    // The real run's plan line says the same as the dry run's.
    let real = run(d.path(), &["--judge", "none", "--sandbox", "none"]);
    assert!(
        stderr(&real).contains("1 agent run, 2 skipped"),
        "{}",
        stderr(&real)
    );
}

#[test]
fn clauditor_inputs_are_the_working_folder_and_output_file_is_collected_and_tampering_is_reported()
{
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"pwd; mkdir -p report; wc -l < sales.csv > report/summary.md; echo changed >> sales.csv\"]\n",
            ),
            (".claude/commands/sum.md", "Summarize."),
            (".claude/commands/fixtures/sales.csv", "a\nb\n"),
            (
                ".claude/commands/sum.eval.json",
                r#"{"input_files": ["fixtures/sales.csv"], "output_file": "report/summary.md", "assertions": [{"id": "a", "type": "contains", "needle": "2"}]}"#,
            ),
        ],
    );
    let out = run(d.path(), &[]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["sum"];
    assert!(
        r["turns"][0]["final_message"]
            .as_str()
            .unwrap()
            .trim_end()
            .ends_with("/work/inputs"),
        "{r:#}"
    );
    assert_eq!(r["output_files"]["report/summary.md"], "2\n");
    assert_eq!(
        r["fixture_changes"],
        json!([{"path": "inputs/sales.csv", "change": "modified"}])
    );
    let dir = Path::new(r["dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(dir.join("output.txt")).unwrap(),
        "2\n"
    );
    // The source fixture is untouched.
    assert_eq!(
        std::fs::read_to_string(d.path().join(".claude/commands/fixtures/sales.csv")).unwrap(),
        "a\nb\n"
    );
}

#[test]
fn timeouts_filters_and_kept_workspaces() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"read p; case $p in slow*) sleep 30;; esac; echo ok\"]\n",
            ),
            (
                "evals/t/evals.json",
                r#"{"evals": [{"id": "fast", "prompt": "fast", "expectations": ["e"]}, {"id": "slow", "prompt": "slow", "expectations": ["e"], "timeout": 1}]}"#,
            ),
        ],
    );
    let started = std::time::Instant::now();
    let out = run(d.path(), &["--keep-workspaces"]);
    assert!(started.elapsed().as_secs() < 20);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let rs = results(&d.path().join("out"));
    assert_eq!(rs["slow"]["status"], "failed");
    assert_eq!(rs["slow"]["timed_out"], true);
    assert_eq!(rs["fast"]["status"], "completed");
    assert!(
        Path::new(rs["fast"]["workspace"].as_str().unwrap())
            .join("work")
            .exists()
    );

    let out = run(d.path(), &["--filter", "fast", "--output-dir", "only"]);
    assert_eq!(code(&out), 0);
    assert_eq!(results(&d.path().join("only")).len(), 1);
    // The case's own timeout wins over --timeout, which is the default for the others (as
    // in BMAD's runner): `slow` still stops after 1 s, `fast` would get 2.
    let out = run(d.path(), &["--timeout", "2", "--output-dir", "t2"]);
    assert_eq!(code(&out), 1);
    let rs = results(&d.path().join("t2"));
    let slow = rs["slow"]["duration_ms"].as_u64().unwrap();
    assert!((900..1900).contains(&slow), "{:#}", rs["slow"]);
    assert_eq!(
        rs["slow"]["reason"], "timed out after 1 s",
        "{:#}",
        rs["slow"]
    );
    assert_eq!(rs["fast"]["status"], "completed");
}

#[test]
fn a_bad_assay_toml_is_bad_input() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", "[run]\njob = 3\n"),
            (
                "evals/x/evals.json",
                r#"{"evals": [{"id": "1", "prompt": "p", "expectations": ["e"]}]}"#,
            ),
        ],
    );
    let out = run(d.path(), &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("assay.toml:2:1"), "{}", stderr(&out));
}

#[test]
fn overlays_merge_in_order_the_skill_wins_and_nothing_of_home_reaches_the_command_agent() {
    let d = tempfile::tempdir().unwrap();
    let agent = "cat .claude/skills/greeting/SKILL.md config.txt base-only.txt; \
                 cat \"$HOME/.claude/.credentials.json\" 2>&1 | head -1; ls \"$HOME/.ssh\" 2>&1 | head -1; \
                 echo \"secret=${AWS_SECRET_ACCESS_KEY:-none}\"";
    write_tree(
        d.path(),
        &[
            (
                "proj/assay.toml",
                &format!(
                    "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", {agent:?}]\n"
                ),
            ),
            ("proj/.claude/skills/greeting/SKILL.md", "REAL SKILL\n"),
            ("proj/config.txt", "project\n"),
            (
                "proj/evals/greeting/setup/.claude/skills/greeting/SKILL.md",
                "OVERLAY SKILL\n",
            ),
            ("proj/evals/greeting/setup/config.txt", "base\n"),
            ("proj/evals/greeting/setup/base-only.txt", "base-only\n"),
            ("proj/evals/greeting/A1/setup/config.txt", "per-eval\n"),
            (
                "proj/evals/greeting/evals.json",
                r#"{"evals": [{"id": "A1", "prompt": "p", "expectations": ["e"]}]}"#,
            ),
            ("home/.claude/.credentials.json", "{\"token\": \"login\"}\n"),
            ("home/.ssh/id_rsa", "PRIVATE KEY\n"),
        ],
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["run", "--output-dir", "out"])
        .current_dir(d.path().join("proj"))
        .env("HOME", d.path().join("home"))
        .env("AWS_SECRET_ACCESS_KEY", "hunter2")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("proj/out"))["A1"];
    let said = r["turns"][0]["final_message"].as_str().unwrap();
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(
        lines[0], "REAL SKILL",
        "the skill under test wins over overlays: {said}"
    );
    assert_eq!(
        lines[1], "per-eval",
        "the per-eval overlay wins over the base overlay: {said}"
    );
    assert_eq!(lines[2], "base-only", "overlays merge: {said}");
    assert!(
        lines[3].contains("No such file"),
        "the command harness is given no login file (Claude Code's harness is): {said}"
    );
    assert!(
        lines[4].contains("No such file"),
        "nothing else of HOME leaks: {said}"
    );
    assert_eq!(
        lines[5], "secret=none",
        "the environment is scrubbed: {said}"
    );
    // The agent could not change the source skill or the overlays.
    assert_eq!(
        std::fs::read_to_string(d.path().join("proj/.claude/skills/greeting/SKILL.md")).unwrap(),
        "REAL SKILL\n"
    );
}

/// A UAAPS package with one case per target kind, and a clauditor spec whose variance and
/// trigger tests multiply agent runs.
fn costly_project(dir: &Path) {
    write_tree(
        dir,
        &[
            ("assay.toml", ""),
            ("pkg/package.agent.json", r#"{"name": "kit"}"#),
            (
                "pkg/skills/lint/SKILL.md",
                "---\nname: lint\ndescription: Lints.\n---\nLint.\n",
            ),
            ("pkg/agents/rev/agent.yaml", "description: Reviews.\n"),
            ("pkg/agents/rev/system-prompt.md", "Review.\n"),
            (
                "pkg/evals/eval-config.json",
                r#"{"version": 1, "engine": "claude-code", "timeout": 90}"#,
            ),
            (
                "pkg/evals/cases/review.yaml",
                "name: review\ntarget: agent:rev\ninput:\n  prompt: review\njudge:\n  criteria: ok\n",
            ),
            (
                "pkg/evals/cases/lint.yaml",
                "name: lint\ntarget: skill:lint\ninput:\n  prompt: lint\njudge:\n  criteria: ok\n",
            ),
            (
                ".claude/commands/brief.md",
                "---\ndescription: Writes briefs.\n---\nWrite a brief.\n",
            ),
            (
                ".claude/commands/brief.eval.json",
                r#"{"skill_name": "brief", "test_args": "x", "assertions": [{"id": "a", "type": "min_length", "length": 1}],
                    "variance": {"n_runs": 3, "min_stability": 0.6},
                    "trigger_tests": {"should_trigger": ["write a brief"], "should_not_trigger": ["sum 2+2"]}}"#,
            ),
            ("agent.sh", "touch started.marker\necho ok\n"),
        ],
    );
}

#[test]
fn live_lines_name_the_run_and_a_trigger_querys_text() {
    let d = tempfile::tempdir().unwrap();
    costly_project(d.path());
    let out = run(
        d.path(),
        &[
            "--harness",
            "command",
            "--command",
            "sh agent.sh",
            "--judge",
            "none",
            "--mode",
            "all",
            "--output-dir",
            "out",
        ],
    );
    let lines = format!("{}{}", stdout(&out), stderr(&out));
    for run in 1..=3 {
        let case = format!("clauditor:brief/brief [run {run}/3] (");
        assert!(lines.contains(&case), "{case}: {lines}");
    }
    assert!(lines.contains("\"write a brief\" [run 1/3] ("), "{lines}");
    assert!(lines.contains("\"sum 2+2\" [run 3/3] ("), "{lines}");
    // The headline counts cases and trigger queries, not case-runs.
    assert!(
        lines.contains("3 cases: ") && lines.contains(" · 2 trigger queries: "),
        "{lines}"
    );
}

#[test]
fn dry_run_prints_every_case_run_and_starts_nothing() {
    let d = tempfile::tempdir().unwrap();
    costly_project(d.path());
    let out = run(
        d.path(),
        &[
            "--dry-run",
            "--harness",
            "command",
            "--command",
            "sh agent.sh",
            "--judge",
            "none",
            "--mode",
            "all",
        ],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    // 2 UAAPS cases; clauditor: 3 runs of its case, 2 trigger queries × 3 runs each.
    assert!(
        text.contains("plan: 11 case-runs (5 case runs, 6 trigger runs): 11 agent runs"),
        "{text}"
    );
    assert!(
        text.contains("uaaps:kit/review  run 1  command  model (harness default)  timeout 90 s  target agent:rev"),
        "{text}"
    );
    assert!(
        text.contains("clauditor:brief/brief  run 3  command"),
        "{text}"
    );
    assert!(
        text.contains("timeout 300 s"),
        "clauditor's own default: {text}"
    );
    assert!(text.contains("dry run: nothing was started"), "{text}");
    assert!(!d.path().join("out").exists(), "no run folder");
    assert!(!d.path().join("ws").exists(), "no workspace");
    assert!(!d.path().join("started.marker").exists());

    // The same plan heads a real run, on stderr, before any agent starts.
    let out = run(
        d.path(),
        &[
            "--harness",
            "command",
            "--command",
            "sh agent.sh",
            "--judge",
            "none",
            "--filter",
            "kit",
        ],
    );
    assert!(
        stderr(&out).contains("plan: 2 case-runs (2 case runs): 2 agent runs"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn target_selects_the_cases_that_evaluate_it() {
    let d = tempfile::tempdir().unwrap();
    costly_project(d.path());
    let out = run(
        d.path(),
        &["--dry-run", "--harness", "command", "--target", "agent:rev"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("uaaps:kit/review"), "{text}");
    assert!(!text.contains("uaaps:kit/lint"), "{text}");
    assert!(!text.contains("clauditor:"), "{text}");
    let bad = run(d.path(), &["--dry-run", "--target", "agents:rev"]);
    assert_eq!(code(&bad), 2);
    assert!(
        stderr(&bad).contains("`agents:rev` is not a target"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn a_uaaps_packages_default_timeout_is_below_assay_toml() {
    // UAAPS's 120 s is the format's default: a project's assay.toml wins over it, and the
    // package's own `timeout` wins over assay.toml.
    let d = tempfile::tempdir().unwrap();
    costly_project(d.path());
    // (A package's project is its own folder: its assay.toml is there.)
    std::fs::write(d.path().join("pkg/assay.toml"), "[run]\ntimeout = 33\n").unwrap();
    let plan = |d: &Path| {
        let out = run(
            d,
            &[
                "--dry-run",
                "--harness",
                "command",
                "--filter",
                "kit/review",
            ],
        );
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        stdout(&out)
    };
    assert!(plan(d.path()).contains("timeout 90 s"), "the package's own");
    std::fs::write(
        d.path().join("pkg/evals/eval-config.json"),
        r#"{"version": 1, "engine": "claude-code"}"#,
    )
    .unwrap();
    assert!(plan(d.path()).contains("timeout 33 s"), "assay.toml's");
    std::fs::write(d.path().join("pkg/assay.toml"), "").unwrap();
    assert!(plan(d.path()).contains("timeout 120 s"), "the format's");
}

#[test]
fn the_command_is_split_as_a_shell_splits_words() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/commands/hi.md", "Say hi.\n"),
            (
                ".claude/commands/hi.eval.json",
                r#"{"assertions": [{"id": "a", "type": "contains", "needle": "hello  world"}]}"#,
            ),
        ],
    );
    // One argument with two spaces in it: split on spaces, `sh -c` would get `'echo`.
    let out = run(
        d.path(),
        &[
            "--harness",
            "command",
            "--command",
            "sh -c 'echo \"hello  world\"'",
        ],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let bad = run(
        d.path(),
        &["--harness", "command", "--command", "sh -c 'echo"],
    );
    assert_eq!(code(&bad), 2, "{}", stderr(&bad));
    assert!(stderr(&bad).contains("--command:"), "{}", stderr(&bad));
}

#[test]
fn a_target_names_one_thing_of_the_package_never_a_path_out_of_it() {
    // `agents/../../<anything>` is a folder that exists: the name must not be a path at all.
    let d = tempfile::tempdir().unwrap();
    costly_project(d.path());
    for target in [
        "agent:../skills/lint",
        "agent:../../pkg",
        "skill:../skills/lint",
        "agent:.",
    ] {
        write_tree(
            d.path(),
            &[(
                "pkg/evals/cases/review.yaml",
                &format!(
                    "name: review\ntarget: \"{target}\"\ninput:\n  prompt: review\njudge:\n  criteria: ok\n"
                ),
            )],
        );
        let out = assay(d.path(), &["validate", "pkg"]);
        assert_eq!(code(&out), 2, "{target}: {}{}", stdout(&out), stderr(&out));
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert!(said.contains("target"), "{target}: {said}");
    }
}

/// A failing `file_contains` shows what the file held where the needle comes closest, not
/// nothing.
#[test]
fn a_failing_file_contains_quotes_the_file() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"printf '# Notes\\\\nVersion 2.3.1 fixes the login bug.\\\\n' > notes.md; echo done\"]\n",
            ),
            (
                "evals/notes/evals.json",
                r#"{"evals": [{"id": "1", "prompt": "p", "expectations": [],
                   "x-assay-checks": [{"type": "file_contains", "path": "notes.md", "needle": "Version 2.4.0"}]}]}"#,
            ),
        ],
    );
    let out = run(d.path(), &["--output-dir", "out", "--judge", "none"]);
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["1"];
    let check = &r["checks"][0];
    assert_eq!(check["passed"], false, "{r:#}");
    assert!(
        check["message"]
            .as_str()
            .unwrap()
            .contains("quoted where it comes closest"),
        "{check:#}"
    );
    assert!(
        check["evidence"]
            .as_str()
            .unwrap()
            .contains("Version 2.3.1 fixes"),
        "{check:#}"
    );
}

/// Trigger runs take a model of their own (`--trigger-model`, else `[run] trigger_model`),
/// the cases keep theirs.
#[test]
fn trigger_runs_take_the_trigger_model() {
    let d = tempfile::tempdir().unwrap();
    costly_project(d.path());
    std::fs::write(
        d.path().join("assay.toml"),
        "[run]\nmodel = \"big\"\ntrigger_model = \"small\"\n",
    )
    .unwrap();
    let args = [
        "--dry-run",
        "--harness",
        "claude-code",
        "--judge",
        "none",
        "--mode",
        "all",
    ];
    let text = stdout(&run(d.path(), &args));
    assert!(
        text.contains("clauditor:brief/should_trigger[0]  trigger run 1  claude-code  model small"),
        "{text}"
    );
    assert!(
        text.contains("clauditor:brief/brief  run 1  claude-code  model big"),
        "{text}"
    );
    let flagged = [&args[..], &["--trigger-model", "tiny"]].concat();
    let text = stdout(&run(d.path(), &flagged));
    assert!(
        text.contains("trigger run 1  claude-code  model tiny"),
        "{text}"
    );
    assert!(
        !text.contains("trigger run 1  claude-code  model small"),
        "{text}"
    );
}
