//! `assay validate` and `assay list` as a user runs them.

use crate::support;

use serde_json::Value;
use support::*;

#[test]
fn examples_load_with_correct_counts() {
    // examples/plugins declares the first-party plugins.
    wasm_plugins();
    let out = assay(&repo(), &["validate", "examples", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["ok"], true);
    let s = &v["summary"];
    assert_eq!(s["by_format"]["bmad"], 1);
    assert_eq!(s["by_format"]["clauditor"], 3);
    assert_eq!(s["by_format"]["skillet"], 2);
    assert_eq!(s["by_format"]["uaaps"], 1);
    assert_eq!(s["by_format"]["uaaps-tests"], 2);
    assert_eq!(s["by_format"]["claude-plugin-eval"], 1);
    assert_eq!(s["cases"], 18);
    assert_eq!(s["trigger_cases"], 8);
    assert_eq!(s["checks"], 51);
    assert_eq!(v["problems"].as_array().unwrap().len(), 0);

    let text = assay(&repo(), &["validate", "examples"]);
    assert_eq!(code(&text), 0);
    assert_eq!(stderr(&text), "", "no warnings on the examples");
    insta::assert_snapshot!("validate_examples", stdout(&text));
}

#[test]
fn each_example_loads_alone() {
    for (dir, format, cases) in [
        ("examples/bmad", "bmad", 2),
        ("examples/quickstart", "skillet", 3),
        ("examples/clauditor", "clauditor", 1),
        ("examples/skillet", "skillet", 3),
        ("examples/uaaps", "uaaps", 6),
        ("examples/plugins", "clauditor", 1),
        ("examples/plugin-eval", "claude-plugin-eval", 2),
    ] {
        if dir.ends_with("plugins") {
            wasm_plugins();
        }
        let out = assay(&repo().join(dir), &["validate", "--format", "json"]);
        assert_eq!(code(&out), 0, "{dir}: {}", stderr(&out));
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(v["summary"]["cases"], cases, "{dir}");
        assert!(
            v["summary"]["by_format"][format].as_u64().unwrap() >= 1,
            "{dir}"
        );
    }
}

#[test]
fn list_shows_suites_cases_and_triggers() {
    wasm_plugins();
    let out = assay(&repo(), &["list", "examples"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    insta::assert_snapshot!("list_examples", stdout(&out));

    let json = assay(&repo(), &["list", "examples", "--json"]);
    let suites: Value = serde_json::from_str(&stdout(&json)).unwrap();
    let bmad = suites
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["format"] == "bmad")
        .unwrap();
    assert_eq!(bmad["skill"]["name"], "product-brief");
    assert_eq!(bmad["cases"][1]["timeout_secs"], 900);
    assert!(
        bmad["cases"][1]["overlay"]
            .as_str()
            .unwrap()
            .ends_with("evals/product-brief/A2/setup")
    );
    assert!(
        bmad["base_overlay"]
            .as_str()
            .unwrap()
            .ends_with("evals/product-brief/setup")
    );
    assert_eq!(
        bmad["cases"][0]["fixtures"][0]["dest"],
        "evals/product-brief/files/q2-brainstorm.md"
    );
    let clauditor = suites
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "clauditor:summarize-csv")
        .unwrap();
    let case = &clauditor["cases"][0];
    assert_eq!(case["turns"][0], "/summarize-csv sales.csv --top 3");
    assert_eq!(case["cwd"], "inputs");
    assert_eq!(case["fixtures"][0]["dest"], "inputs/sales.csv");
    assert_eq!(
        case["output"],
        serde_json::json!({"kind": "file", "path": "report/summary.md"})
    );
    assert_eq!(
        case["checks"][3]["config"],
        serde_json::json!({"format": "currency_usd", "count": 1})
    );
    assert_eq!(case["checks"][2]["config"], serde_json::json!({"count": 3}));
    assert_eq!(clauditor["defaults"]["variance"]["runs"], 3);
    assert_eq!(clauditor["defaults"]["judge"]["model"], "claude-sonnet-4-6");
    let skillet = suites
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "skillet:conventional-comments")
        .unwrap();
    assert_eq!(skillet["cases"][1]["turns"].as_array().unwrap().len(), 2);
    assert_eq!(skillet["cases"][2]["id"], "security/003");
    assert!(
        skillet["cases"][2]["judge"]["criteria"].is_null(),
        "assertions replace the judge"
    );
    assert_eq!(
        skillet["cases"][2]["checks"][1]["config"]["ignore_case"],
        true
    );
}

#[test]
fn missing_paths_and_unknown_files_are_bad_input() {
    let out = assay(&repo(), &["validate", "no/such/dir"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("no/such/dir: no such file or folder"),
        "{}",
        stderr(&out)
    );
    let out = assay(&repo(), &["validate", "Cargo.toml"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("not an eval file"));
    let out = assay(&repo(), &["validate", "--format", "xml"]);
    assert_eq!(code(&out), 2);
}

#[test]
fn list_json_prints_the_problems_as_json_when_loading_fails() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                "evals/greet/evals.json",
                r#"{"evals": [{"id": "1", "prompt": 3, "expectations": ["e"]}]}"#,
            ),
        ],
    );
    let listed = assay(d.path(), &["list", "--json"]);
    let validated = assay(d.path(), &["validate", "--format", "json"]);
    assert_eq!(code(&listed), 2, "{}", stderr(&listed));
    let list: Value = serde_json::from_str(&stdout(&listed))
        .unwrap_or_else(|e| panic!("{e}: {:?}", stdout(&listed)));
    let validate: Value = serde_json::from_str(&stdout(&validated)).unwrap();
    assert_eq!(list["ok"], false);
    assert_eq!(list["problems"], validate["problems"]);
    let problems = list["problems"].as_array().unwrap();
    let error = problems.iter().find(|p| p["severity"] == "error").unwrap();
    assert_eq!(error["code"], "wrong-type", "{list:#}");
    assert_eq!(error["line"], 1);
}

#[test]
fn warnings_alone_do_not_fail() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(
        dir.path(),
        &[
            ("assay.toml", ""),
            (
                "evals/orphan/evals.json",
                r#"{"evals": [{"id": "1", "prompt": "p", "expectations": ["e"]}]}"#,
            ),
        ],
    );
    let out = assay(dir.path(), &["validate"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("no SKILL.md found for skill `orphan`"));
    assert!(stdout(&out).contains("ok: 1 suite (bmad 1): 1 case"));
}

#[test]
fn discovery_skips_vendored_and_ignored_folders() {
    let dir = tempfile::tempdir().unwrap();
    let bad = r#"{"evals": "#;
    write_tree(
        dir.path(),
        &[
            ("assay.toml", ""),
            (".gitignore", "generated/\n"),
            ("node_modules/pkg/evals/x/evals.json", bad),
            ("target/evals/x/evals.json", bad),
            (".git/evals/x/evals.json", bad),
            (".venv/evals/x/evals.json", bad),
            ("generated/evals/x/evals.json", bad),
            (".claude/commands/ok.md", "x"),
            (
                ".claude/commands/ok.eval.json",
                r#"{"assertions": [{"id": "a", "type": "contains", "needle": "x"}]}"#,
            ),
        ],
    );
    let out = assay(dir.path(), &["validate"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("ok: 1 suite (clauditor 1)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_projects_own_suites_load() {
    let out = assay(&repo(), &["validate", "evals", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["summary"]["suites"], 5);
    for f in ["bmad", "clauditor", "skillet", "uaaps", "uaaps-tests"] {
        assert_eq!(v["summary"]["by_format"][f], 1, "{f}");
    }
}

#[test]
fn uaaps_eval_cases_reach_every_check_type_through_the_extension_key() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "package.agent.json",
                r#"{"name": "@t/p", "version": "1.0.0", "description": "t"}"#,
            ),
            (
                "evals/eval-config.json",
                r#"{"version": 1, "engine": "claude-code"}"#,
            ),
            (
                "evals/cases/notes.yaml",
                "name: notes\ninput:\n  prompt: Write notes.md\nexpected:\n  files-created: [notes.md]\njudge:\n  criteria: Notes exist.\nx-assay-checks:\n  - id: no-todo\n    type: file_contains\n    path: notes.md\n    needle: TODO\n    negate: true\n    weight: 2\n  - type: tool_not_called\n    tool: WebFetch\n",
            ),
        ],
    );
    let out = assay(d.path(), &["list", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let checks = &v[0]["cases"][0]["checks"];
    let no_todo = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "no-todo")
        .unwrap_or_else(|| panic!("{checks:#}"));
    assert_eq!(no_todo["negate"], true);
    assert_eq!(no_todo["weight"], 2.0);
    assert_eq!(no_todo["config"]["needle"], "TODO");
    assert!(
        checks
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "tool_not_called-2")
    );
}

#[test]
fn a_skillet_file_that_is_not_utf8_is_an_error_not_skipped() {
    let d = tempfile::tempdir().unwrap();
    let good =
        "timestamp: 2025-01-15T10:30:00Z\nname: reviews\nprompt: Review it\nexpected: A review.\n";
    write_tree(d.path(), &[("evals/reviews/001.yaml", good)]);
    // Saved as Latin-1 (é is the single byte 0xE9) and as UTF-16 with its byte-order mark.
    let latin1 = b"timestamp: 2025-01-15T10:30:00Z\nname: reviews\nprompt: Review the caf\xe9\nexpected: A review.\n";
    std::fs::write(d.path().join("evals/reviews/002.yaml"), latin1).unwrap();
    let mut utf16 = vec![0xff, 0xfe];
    utf16.extend(good.encode_utf16().flat_map(u16::to_le_bytes));
    std::fs::write(d.path().join("evals/reviews/003.yaml"), utf16).unwrap();
    // A YAML file of some other kind, not UTF-8 either, is none of assay's business.
    std::fs::write(d.path().join("evals/config.yaml"), b"colour: \xff\n").unwrap();

    let out = assay(d.path(), &["validate", "."]);
    assert_eq!(code(&out), 2, "{}\n{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "evals/reviews/002.yaml: the file is not UTF-8 text (invalid byte at offset 68)"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "evals/reviews/003.yaml: the file is not UTF-8 text (invalid byte at offset 0)"
        ),
        "{err}"
    );
    assert!(!err.contains("config.yaml"), "{err}");

    let json = assay(d.path(), &["validate", ".", "--format", "json"]);
    assert_eq!(code(&json), 2);
    let v: Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(v["ok"], false);
    let codes: Vec<&str> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["not-utf8", "not-utf8"], "{v:#}");
}

#[test]
fn a_problem_deep_in_a_long_minified_line_names_its_exact_line_and_column() {
    // 20,000 evals on the second line (about 4 MB), with multi-byte characters before the
    // bad value, so the column must be counted in characters, not bytes.
    let mut text = String::from("{\"skill_name\": \"big\",\n\"evals\":[");
    let bad = 19_321;
    for i in 0..20_000 {
        if i > 0 {
            text.push(',');
        }
        let timeout = if i == bad { "\"600\"" } else { "600" };
        text.push_str(&format!(
            r#"{{"id":"E{i}","prompt":"Résumé the naïve café notes — {i} 😀","expectations":["ok"],"timeout":{timeout}}}"#
        ));
    }
    text.push_str("]}\n");
    let at = text.find("\"600\"").unwrap();
    let line_start = text[..at].rfind('\n').unwrap() + 1;
    let column = text[line_start..at].chars().count() + 1;
    assert!(column > 1_000_000, "deep in the line: column {column}");

    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                ".claude/skills/big/SKILL.md",
                "---\nname: big\ndescription: Big.\n---\n",
            ),
            ("evals/big/evals.json", &text),
        ],
    );
    let out = assay(d.path(), &["validate", ".", "--format", "json"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let p = &v["problems"][0];
    assert_eq!(p["code"], "wrong-type", "{v:#}");
    assert_eq!(p["field"], format!("evals[{bad}].timeout"));
    assert_eq!(
        (p["line"].as_u64(), p["column"].as_u64()),
        (Some(2), Some(column as u64))
    );

    // The text form names the same place, and shows a window of the line, not all of it
    // (drawing the whole line made miette panic past column 65,535: exit 101).
    let out = assay(d.path(), &["validate", "."]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "evals/big/evals.json:2:{column}: expected an integer"
        )),
        "{}",
        &err[..err.len().min(2000)]
    );
    assert!(
        err.len() < 5_000,
        "the whole 4 MB line is not printed: {} bytes",
        err.len()
    );
}

#[test]
fn json_into_a_reader_that_closes_early_ends_quietly() {
    // `assay validate … --format json | head -c 10`: the reader goes away while assay is still
    // writing (the document is far larger than a pipe's buffer), and assay must stop quietly
    // with the exit code it would have had, not panic on the broken pipe.
    use std::io::Read;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let mut files = vec![("assay.toml".to_string(), String::new())];
    for i in 0..600 {
        files.push((
            format!(".claude/commands/skill-{i}.md"),
            "Say hello.".into(),
        ));
        files.push((
            format!(".claude/commands/skill-{i}.eval.json"),
            r#"{"assertions": [{"id": "a", "type": "contains", "needle": "hello"}]}"#.into(),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    write_tree(dir.path(), &files);
    let mut child = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["validate", ".", "--format", "json"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("assay runs");
    let mut head = [0u8; 10];
    child
        .stdout
        .take()
        .unwrap()
        .read_exact(&mut head)
        .expect("the first bytes of the JSON");
    // The read end is closed here, as `head -c 10` closes it.
    let out = child.wait_with_output().unwrap();
    assert_eq!(&head[..1], b"{");
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("Broken pipe"), "{err}");
    assert_eq!(code(&out), 0, "{err}");
}
