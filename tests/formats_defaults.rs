//! Each format's own defaults, as its runner has them, through the CLI: clauditor's
//! `grade_thresholds`, `harness`/`transport` auto, `system_prompt` fallback, `output_files`,
//! its flag spellings and `CLAUDITOR_*` variables; Skillet's `~/.skillet/evals/`.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::judge_server::{JudgeServer, says};
use support::*;

/// The command agent: writes two output files and says so.
const TOML: &str = "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"mkdir -p out; echo 'Venues: one' > out/a.md; echo 'nothing here' > out/b.md; echo Wrote out/a.md and out/b.md\"]\n";

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let mut all = vec![
        ("assay.toml", TOML),
        (".claude/commands/brief.md", "Write a brief.\n"),
    ];
    all.extend_from_slice(files);
    write_tree(d.path(), &all);
    d
}

/// A folder holding executable scripts named `names`, each printing `body`'s output.
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

fn judged_env(judge: &JudgeServer) -> Vec<(&'static str, String)> {
    vec![
        ("ASSAY_JUDGE_BASE_URL", judge.url.clone()),
        ("ANTHROPIC_API_KEY", "sk-judge".into()),
        ("ASSAY_JUDGE_TIMEOUT", "5".into()),
    ]
}

const RUBRIC: &str = r#""grading_criteria": [{"id": "titled", "criterion": "Has a title?"}, {"id": "short", "criterion": "Is it short?"}]"#;

fn rubric_reply() -> Value {
    json!([
        {"id": "titled", "criterion": "Has a title?", "passed": false, "score": 0.1, "evidence": "none", "reasoning": "no title"},
        {"id": "short", "criterion": "Is it short?", "passed": false, "score": 0.2, "evidence": "long", "reasoning": "long"}
    ])
}

#[test]
fn without_grade_thresholds_the_rubric_is_recorded_and_gates_nothing() {
    let d = project(&[(".claude/commands/brief.eval.json", &format!("{{{RUBRIC}}}"))]);
    let judge = JudgeServer::start(vec![says(rubric_reply())]);
    let out = assay_env(
        d.path(),
        &["run", "--output-dir", "o", "--judge", "anthropic"],
        &judged_env(&judge),
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("o"))["brief"];
    assert_eq!(r["grade"]["verdict"], "pass", "{r:#}");
    let rubric = &r["judge"]["rubric"];
    assert_eq!(rubric["pass_rate"], 0.0);
    assert_eq!(rubric["thresholds"], Value::Null, "{rubric:#}");
    assert_eq!(rubric["passed"], true);

    // An empty `grade_thresholds` sets clauditor's gates (0.7, 0.5): the same reply fails.
    let d = project(&[(
        ".claude/commands/brief.eval.json",
        &format!("{{{RUBRIC}, \"grade_thresholds\": {{}}}}"),
    )]);
    let judge = JudgeServer::start(vec![says(rubric_reply())]);
    let out = assay_env(
        d.path(),
        &["run", "--output-dir", "o", "--judge", "anthropic"],
        &judged_env(&judge),
    );
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("o"))["brief"];
    assert_eq!(
        r["judge"]["rubric"]["thresholds"],
        json!({"min_pass_rate": 0.7, "min_mean_score": 0.5})
    );
    assert!(
        r["grade"]["reasons"]
            .to_string()
            .contains("rubric: pass rate 0.00"),
        "{r:#}"
    );
}

/// A project whose clauditor spec names no harness, and no assay.toml harness.
fn harnessless() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/commands/brief.md", "Write a brief.\n"),
            (
                ".claude/commands/brief.eval.json",
                r#"{"assertions": [{"id": "a", "type": "min_length", "length": 1}]}"#,
            ),
        ],
    );
    d
}

/// Runs `assay run` with `PATH` and extra variables; the harness's preflight then says which
/// harness the suite got, and nothing runs.
fn harness_chosen(dir: &Path, path: &str, extra: &[(&'static str, String)]) -> String {
    let mut env = vec![
        ("PATH", path.to_string()),
        ("ASSAY_JUDGE", "none".to_string()),
        ("OPENAI_API_KEY", String::new()),
        ("CODEX_API_KEY", String::new()),
        ("HOME", dir.join("home").display().to_string()),
    ];
    env.extend_from_slice(extra);
    let out = assay_env(
        dir,
        &["run", "--output-dir", "o", "--sandbox", "none"],
        &env,
    );
    let err = stderr(&out);
    err.lines()
        .find_map(|l| l.strip_prefix("error: harness `"))
        .and_then(|l| l.split('`').next())
        .map(str::to_string)
        .unwrap_or_else(|| format!("(none) {err}"))
}

#[test]
fn clauditors_auto_harness_is_claude_code_when_installed_else_codex() {
    let d = harnessless();
    // Only `codex` on PATH: clauditor's auto picks it (today's default would be claude-code).
    let (_b, codex_only) = bin(&[("codex", "exit 0")]);
    assert_eq!(harness_chosen(d.path(), &codex_only, &[]), "codex");
    // Neither: claude-code, whose preflight says how to install it.
    let (_n, neither) = bin(&[]);
    assert_eq!(harness_chosen(d.path(), &neither, &[]), "claude-code");
    // clauditor's variable, read for clauditor suites, and `auto` there falls through.
    assert_eq!(
        harness_chosen(d.path(), &neither, &[("CLAUDITOR_HARNESS", "codex".into())]),
        "codex"
    );
    assert_eq!(
        harness_chosen(
            d.path(),
            &codex_only,
            &[("CLAUDITOR_HARNESS", "auto".into())]
        ),
        "codex"
    );
    // ASSAY_HARNESS first.
    assert_eq!(
        harness_chosen(
            d.path(),
            &codex_only,
            &[
                ("CLAUDITOR_HARNESS", "codex".into()),
                ("ASSAY_HARNESS", "claude-code".into())
            ]
        ),
        "claude-code"
    );
}

/// A fake `claude` that answers the judge's prompt with `reply` as `claude -p
/// --output-format json` does, and leaves a mark that it was asked.
fn fake_claude(reply: &Value, mark: &Path) -> (tempfile::TempDir, String) {
    let answer = json!({"type": "result", "is_error": false, "result": reply.to_string()});
    let quoted = answer.to_string().replace('\'', "'\\''");
    bin(&[(
        "claude",
        &format!("touch '{}'\nprintf '%s' '{quoted}'", mark.display()),
    )])
}

#[test]
fn clauditors_auto_transport_grades_through_the_claude_cli_when_it_is_installed() {
    let spec = format!(
        "{{{RUBRIC}, \"grade_thresholds\": {{\"min_pass_rate\": 0.5, \"min_mean_score\": 0.5}}}}"
    );
    let d = project(&[(".claude/commands/brief.eval.json", &spec)]);
    let passing = json!([
        {"id": "titled", "criterion": "Has a title?", "passed": true, "score": 0.9, "evidence": "x", "reasoning": "y"},
        {"id": "short", "criterion": "Is it short?", "passed": true, "score": 0.9, "evidence": "x", "reasoning": "y"}
    ]);
    let mark = d.path().join("claude-was-asked");
    let (_b, path) = fake_claude(&passing, &mark);
    let judge = JudgeServer::start(vec![says(passing.clone()); 3]);
    let run = |args: &[&str], extra: &[(&'static str, String)]| {
        let mut env = judged_env(&judge);
        env.push(("PATH", path.clone()));
        env.extend_from_slice(extra);
        let mut all = vec!["run", "--output-dir", "o", "--no-cache"];
        all.extend_from_slice(args);
        let _ = std::fs::remove_dir_all(d.path().join("o"));
        let out = assay_env(d.path(), &all, &env);
        assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
        results(&d.path().join("o"))["brief"]["judge"]["provider"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // An API key is set, but `claude` is on PATH: clauditor's auto takes the CLI.
    assert_eq!(run(&[], &[]), "claude-cli");
    assert!(mark.is_file(), "the claude CLI graded");
    // clauditor's spellings: --transport, CLAUDITOR_TRANSPORT.
    assert_eq!(run(&["--transport", "api"], &[]), "anthropic");
    assert_eq!(
        run(&[], &[("CLAUDITOR_TRANSPORT", "api".into())]),
        "anthropic"
    );
    assert_eq!(
        run(
            &["--transport", "cli"],
            &[("CLAUDITOR_TRANSPORT", "api".into())]
        ),
        "claude-cli"
    );
    // --grading-provider is --judge: `anthropic` names the API.
    assert_eq!(run(&["--grading-provider", "anthropic"], &[]), "anthropic");
    assert_eq!(judge.requests().len(), 3, "the API was asked three times");
    // A transport clauditor does not have is refused by the parser.
    let out = assay(d.path(), &["run", "--transport", "http"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

#[test]
fn sync_tasks_is_a_flag_too() {
    let out = assay(&repo(), &["run", "--help"]);
    let help = stdout(&out);
    assert!(help.contains("--sync-tasks"), "{help}");
    assert!(help.contains("--transport"), "{help}");
}

fn list(dir: &Path, home: Option<&Path>, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["list", "--json"];
    all.extend_from_slice(args);
    let env: Vec<(&str, String)> = home
        .map(|h| vec![("HOME", h.display().to_string())])
        .unwrap_or_default();
    let out = assay_env(dir, &all, &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    serde_json::from_str::<Value>(&stdout(&out))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn without_a_system_prompt_clauditor_derives_it_from_agents_md_then_the_skill() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                "skills/brief/SKILL.md",
                "---\nname: brief\ndescription: Writes briefs.\n---\nWrite a one-page brief.\n",
            ),
            (
                "skills/brief/SKILL.eval.json",
                r#"{"assertions": [{"id": "a", "type": "min_length", "length": 1}]}"#,
            ),
            (".claude/commands/c.md", "Command body.\n"),
            (
                ".claude/commands/c.eval.json",
                r#"{"system_prompt": "Explicit.", "assertions": [{"id": "a", "type": "min_length", "length": 1}]}"#,
            ),
        ],
    );
    let prompts = |d: &Path| -> Vec<(String, Value)> {
        list(d, None, &[])
            .iter()
            .map(|s| {
                (
                    s["id"].as_str().unwrap().to_string(),
                    s["defaults"]["system_prompt"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(
        prompts(d.path()),
        [
            ("clauditor:c".to_string(), json!("Explicit.")),
            (
                "clauditor:brief".to_string(),
                json!("Write a one-page brief.\n")
            ),
        ]
    );
    std::fs::write(d.path().join("AGENTS.md"), "Project conventions.\n").unwrap();
    assert_eq!(prompts(d.path())[1].1, json!("Project conventions.\n"));
    std::fs::write(
        d.path().join("skills/brief/AGENTS.md"),
        "Skill conventions.\n",
    )
    .unwrap();
    assert_eq!(prompts(d.path())[1].1, json!("Skill conventions.\n"));
}

#[test]
fn every_output_file_is_recorded_and_checked() {
    let spec = r#"{"output_files": ["out/*.md"],
      "assertions": [{"id": "venues", "type": "contains", "needle": "Venues"},
                     {"id": "long", "type": "min_length", "length": 5}]}"#;
    let d = project(&[(".claude/commands/brief.eval.json", spec)]);
    let out = assay_env(
        d.path(),
        &["run", "--output-dir", "o"],
        &[("ASSAY_JUDGE", "none".into())],
    );
    // out/a.md has "Venues", out/b.md does not: the case fails on b.md.
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("o"))["brief"];
    assert_eq!(
        r["output_files"],
        json!({"out/a.md": "Venues: one\n", "out/b.md": "nothing here\n"})
    );
    let venues = &r["checks"][0];
    assert_eq!(venues["passed"], false, "{r:#}");
    assert!(
        venues["message"]
            .as_str()
            .unwrap()
            .starts_with("out/b.md: "),
        "{venues:#}"
    );
    let long = &r["checks"][1];
    assert_eq!(long["passed"], true);
    assert!(
        long["message"]
            .as_str()
            .unwrap()
            .ends_with("(in each of 2 output files)"),
        "{long:#}"
    );
    // The output is still the first file, as in clauditor.
    let dir = PathBuf::from(r["dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(dir.join("output.txt")).unwrap(),
        "Venues: one\n"
    );
}

const SKILLET: &str = "timestamp: 2026-11-22T00:00:00Z\nname: greet\nprompt: say hi\nexpected: says hi\nassertions:\n  - type: contains\n    value: hi\n";

#[test]
fn skillets_home_evals_are_searched_when_no_path_is_given() {
    let home = tempfile::tempdir().unwrap();
    let proj = tempfile::tempdir().unwrap();
    write_tree(
        home.path(),
        &[
            (".skillet/evals/greet/001.yaml", SKILLET),
            (".skillet/evals/greet/002.yaml", SKILLET),
        ],
    );
    write_tree(
        proj.path(),
        &[
            ("assay.toml", ""),
            ("evals/local/001.yaml", &SKILLET.replace("greet", "local")),
        ],
    );
    let ids = |s: &[Value]| -> Vec<String> {
        s.iter()
            .map(|s| {
                format!(
                    "{} {}",
                    s["id"].as_str().unwrap(),
                    s["cases"].as_array().unwrap().len()
                )
            })
            .collect()
    };
    // No path: the project and Skillet's default folder.
    let s = list(proj.path(), Some(home.path()), &[]);
    let mut got = ids(&s);
    got.sort();
    assert_eq!(got, ["skillet:greet 2", "skillet:local 1"]);
    let greet = s.iter().find(|s| s["id"] == "skillet:greet").unwrap();
    // Run in the project, as Skillet runs its evals where it is started.
    assert_eq!(
        Path::new(greet["project_root"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        proj.path().canonicalize().unwrap()
    );
    // validate sees them too.
    let out = assay_env(
        proj.path(),
        &["validate"],
        &[("HOME", home.path().display().to_string())],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains(".skillet/evals/greet"),
        "{}",
        stdout(&out)
    );
    // A path given: only that path.
    assert_eq!(
        ids(&list(proj.path(), Some(home.path()), &["evals"])),
        ["skillet:local 1"]
    );
    // No ~/.skillet/evals: only the project.
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(
        ids(&list(proj.path(), Some(empty.path()), &[])),
        ["skillet:local 1"]
    );
    // assay run finds and runs them.
    let out = assay_env(
        proj.path(),
        &[
            "run",
            "--harness",
            "command",
            "--command",
            "echo hi",
            "--output-dir",
            "o",
        ],
        &[
            ("HOME", home.path().display().to_string()),
            ("ASSAY_JUDGE", "none".into()),
        ],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    for case in [
        "skillet_greet/001",
        "skillet_greet/002",
        "skillet_local/001",
    ] {
        let f = proj.path().join("o").join(case).join("run-1/result.json");
        assert_eq!(read_json(&f)["grade"]["verdict"], "pass", "{case}");
    }
}

#[test]
fn an_agent_that_floods_output_files_cannot_pass_on_the_ones_never_read() {
    // 250 matching files, every one passing: only 200 are read and recorded, and the rest
    // fail the output checks instead of passing unseen.
    let spec = r#"{"output_files": ["out/*.md"],
      "assertions": [{"id": "venues", "type": "contains", "needle": "Venues"}]}"#;
    let d = project(&[(".claude/commands/brief.eval.json", spec)]);
    std::fs::write(
        d.path().join("assay.toml"),
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"mkdir -p out; for i in $(seq 1000 1249); do echo 'Venues: ok' > out/$i.md; done; echo done\"]\n",
    )
    .unwrap();
    let out = assay_env(
        d.path(),
        &["run", "--output-dir", "o"],
        &[("ASSAY_JUDGE", "none".into())],
    );
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("o"))["brief"];
    assert_eq!(r["output_files"].as_object().unwrap().len(), 200, "bounded");
    let venues = &r["checks"][0];
    assert_eq!(venues["passed"], false, "{venues:#}");
    assert!(
        venues["message"]
            .as_str()
            .unwrap()
            .contains("50 more files past the first 200"),
        "{venues:#}"
    );
}
