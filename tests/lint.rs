//! `assay lint` as a user runs it: a crafted bad project (every finding, its place, code and
//! fix), the examples (clean), `--strict`, `--max-tokens` and `[[lint.allow]]`.

use crate::support;

use serde_json::Value;
use support::*;

fn bad_project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(format!(
            "{}/.",
            repo().join("tests/fixtures/lint/bad").display()
        ))
        .arg(d.path())
        .status()
        .unwrap();
    assert!(status.success());
    d
}

fn findings(out: &std::process::Output) -> Vec<Value> {
    let v: Value = serde_json::from_str(&stdout(out)).unwrap();
    v["findings"].as_array().unwrap().clone()
}

#[test]
fn a_crafted_bad_project_gets_every_finding_with_place_code_and_fix() {
    let d = bad_project();
    let out = assay(d.path(), &["lint"]);
    assert_eq!(code(&out), 2, "errors exit 2\n{}", stderr(&out));
    insta::assert_snapshot!("lint_bad_project", stdout(&out));

    let out = assay(d.path(), &["lint", "--format", "json"]);
    assert_eq!(code(&out), 2);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["summary"]["skills"], 2);
    assert_eq!(v["summary"]["suites"], 3);
    let codes: std::collections::BTreeSet<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    for c in [
        "name-invalid",
        "description-no-when",
        "front-matter-unknown-key",
        "missing-reference",
        "vague-expectation",
        "duplicate-prompt",
        "duplicate-query",
        "conflicting-query",
        "triggers-no-negative",
        "check-passes-on-empty",
        "case-cannot-fail",
        "check-not-in-prompt",
        "unused-fixture",
    ] {
        assert!(codes.contains(c), "{c} missing from {codes:?}");
    }
    for f in v["findings"].as_array().unwrap() {
        assert!(f["file"].as_str().is_some_and(|s| !s.is_empty()), "{f}");
        assert!(
            f["help"].as_str().is_some_and(|s| !s.is_empty()),
            "no fix: {f}"
        );
        if f["code"] != "unused-fixture" {
            assert!(
                f["line"].as_u64().is_some() && f["column"].as_u64().is_some(),
                "{f}"
            );
        }
    }
    let name = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "name-invalid")
        .unwrap();
    assert_eq!(name["file"], ".claude/skills/report-writer/SKILL.md");
    assert_eq!(
        (name["line"].as_u64(), name["column"].as_u64()),
        (Some(2), Some(7))
    );
    assert_eq!(name["severity"], "error");
}

#[test]
fn the_examples_lint_clean_even_when_strict() {
    wasm_plugins();
    let out = assay(&repo(), &["lint", "examples", "--strict"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).ends_with(": 0 error(s), 0 warning(s)\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn warnings_pass_unless_strict_and_the_budget_is_a_flag() {
    let d = tempfile::tempdir().unwrap();
    let body = "Write the brief in five sections. ".repeat(40);
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                ".claude/skills/brief/SKILL.md",
                &format!(
                    "---\nname: brief\ndescription: Writes briefs. Use when asked for a brief.\n---\n{body}\n"
                ),
            ),
        ],
    );
    let out = assay(d.path(), &["lint"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("0 error(s), 0 warning(s)"),
        "{}",
        stdout(&out)
    );

    let out = assay(d.path(), &["lint", "--max-tokens", "100"]);
    assert_eq!(code(&out), 0, "a warning alone passes: {}", stdout(&out));
    assert!(
        stdout(&out).contains(".claude/skills/brief/SKILL.md:5:1: warning[skill-over-budget]: the body is about 341 tokens"),
        "{}",
        stdout(&out)
    );
    let out = assay(d.path(), &["lint", "--max-tokens", "100", "--strict"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(stdout(&out).contains("(--strict: warnings fail)"));

    std::fs::write(d.path().join("assay.toml"), "[lint]\nmax_tokens = 100\n").unwrap();
    let out = assay(d.path(), &["lint", "--strict", "--format", "json"]);
    assert_eq!(code(&out), 2);
    assert_eq!(findings(&out)[0]["code"], "skill-over-budget");
    let out = assay(d.path(), &["lint", "--strict", "--max-tokens", "1000"]);
    assert_eq!(
        code(&out),
        0,
        "the flag wins over assay.toml: {}",
        stdout(&out)
    );

    let out = assay(d.path(), &["lint", "--max-tokens", "0"]);
    assert_eq!(code(&out), 2, "a zero budget is bad input");
}

#[test]
fn a_project_accepts_a_finding_with_a_reason_and_typos_there_are_errors() {
    let d = bad_project();
    std::fs::write(
        d.path().join("assay.toml"),
        "[[lint.allow]]\ncode = \"unused-fixture\"\npath = \".claude/commands/fixtures/*\"\nreason = \"kept for the next case\"\n\n[[lint.allow]]\ncode = \"vague-expectation\"\nreason = \"a teaching example\"\n",
    )
    .unwrap();
    let out = assay(d.path(), &["lint", "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let allowed = v["allowed"].as_array().unwrap();
    assert_eq!(allowed.len(), 3, "{allowed:?}");
    assert!(
        allowed
            .iter()
            .any(|a| a["code"] == "unused-fixture" && a["reason"] == "kept for the next case")
    );
    assert!(
        findings(&out)
            .iter()
            .all(|f| f["code"] != "unused-fixture" && f["code"] != "vague-expectation")
    );
    let text = assay(d.path(), &["lint"]);
    assert!(
        stdout(&text).contains(", 3 allowed by assay.toml"),
        "{}",
        stdout(&text)
    );

    std::fs::write(
        d.path().join("assay.toml"),
        "[[lint.allow]]\ncode = \"unused-fixtures\"\nreason = \"typo\"\n",
    )
    .unwrap();
    let out = assay(d.path(), &["lint", "--format", "json"]);
    assert_eq!(code(&out), 2);
    let typo = findings(&out)
        .into_iter()
        .find(|f| f["code"] == "bad-config")
        .unwrap();
    assert_eq!(typo["help"], "did you mean `unused-fixture`?");

    std::fs::write(
        d.path().join("assay.toml"),
        "[[lint.allow]]\ncode = \"unused-fixture\"\nreason = \" \"\n",
    )
    .unwrap();
    let out = assay(d.path(), &["lint"]);
    assert_eq!(code(&out), 2, "a blank reason is bad input");
    assert!(
        stderr(&out).contains("reason must say why"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_starter_suite_from_init_is_flagged_until_its_placeholders_are_replaced() {
    let d = copy_example("examples/quickstart");
    std::fs::remove_dir_all(d.path().join("evals")).unwrap();
    std::fs::remove_file(d.path().join(".claude/commands/greeting.eval.json")).unwrap();
    let out = assay(
        d.path(),
        &[
            "init",
            ".claude/commands/greeting.md",
            "--format",
            "skillet",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = assay(d.path(), &["lint", "--format", "json"]);
    assert_eq!(code(&out), 0, "warnings only: {}", stdout(&out));
    let codes: Vec<String> = findings(&out)
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(codes, ["case-cannot-fail", "case-cannot-fail"], "{codes:?}");
    // Replaced with a check only doing the task passes (not the skill's own text), it goes.
    for n in ["001", "002"] {
        let f = d.path().join(format!("evals/greeting/{n}.yaml"));
        let text = std::fs::read_to_string(&f).unwrap();
        std::fs::write(
            &f,
            text.replace(
                "not_contains\n    value: \"Traceback (most recent call last)\"",
                "contains\n    value: \"Hello, example input!\"",
            ),
        )
        .unwrap();
    }
    let out = assay(d.path(), &["lint", "--strict"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

/// Hostile input through the whole command: a SKILL.md linked to a file outside its folder is
/// not read (its text never reaches the output), control characters and workflow commands in
/// ids never reach the terminal raw, and a megabytes-long skill with many cases lints in time.
#[test]
fn hostile_skills_and_suites_are_contained_neutralised_and_quick() {
    let d = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.md"),
        "---\nname: foo\ndescription: Use when x.\nhunter2-secret: 1\n---\n",
    )
    .unwrap();
    let evil_id = "e\u{1b}[31mRED\u{7}\n::error::pwned";
    let cases: Vec<Value> = (0..300)
        .map(|i| {
            serde_json::json!({
                "id": if i == 0 { evil_id.to_string() } else { format!("c{i}") },
                "prompt": format!("say hi {i}"),
                "expectations": [],
                "x-assay-checks": [{"type": "contains", "needle": "word"}],
            })
        })
        .collect();
    let evals = serde_json::json!({"skill_name": "foo", "evals": cases}).to_string();
    // 20,000 trigger queries on one line, a quarter of them repeats and conflicts.
    let triggers: Vec<Value> = (0..20_000)
        .map(|i| serde_json::json!({"query": format!("query {}", i % 5000), "should_trigger": (i / 5000) % 2 == 0}))
        .collect();
    let triggers = Value::Array(triggers).to_string();
    let big = format!(
        "---\nname: big\ndescription: Use when x.\n---\n{}",
        "word ".repeat(1_600_000)
    );
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("evals/foo/evals.json", &evals),
            ("evals/foo/triggers.json", &triggers),
            ("evals/big/evals.json", &evals.replace("\"foo\"", "\"big\"")),
            ("skills/big/SKILL.md", &big),
        ],
    );
    std::fs::create_dir_all(d.path().join("skills/foo")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.md"),
        d.path().join("skills/foo/SKILL.md"),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = assay(d.path(), &["lint"]);
    let took = started.elapsed();
    let text = stdout(&out);
    assert_eq!(code(&out), 2, "{text}\n{}", stderr(&out));
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        text.contains("skills/foo/SKILL.md: error[unreadable]"),
        "{text}"
    );
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    assert!(text.lines().all(|l| !l.starts_with("::")), "{text}");
    assert!(text.contains("case-cannot-fail"), "{text}");
    assert!(text.contains("conflicting-query"), "{text}");
    // Was minutes: the 8 MB skill copied and lowercased for each of 300 cases, and each
    // trigger finding's column found by walking the one-line file.
    assert!(took < std::time::Duration::from_secs(30), "took {took:?}");
}

/// A fixture folder linked out of the project is not walked: the host's file names never
/// reach the output as unused fixtures. Links and FIFOs inside a fixture folder are never
/// followed or opened.
#[test]
fn a_fixture_folder_linked_out_of_the_project_is_not_walked() {
    let d = tempfile::tempdir().unwrap();
    let host = tempfile::tempdir().unwrap();
    std::fs::write(host.path().join("host-secret-name.txt"), "x").unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                "skills/foo/SKILL.md",
                "---\nname: foo\ndescription: Use when x.\n---\nSay hi.\n",
            ),
            (
                "evals/foo/evals.json",
                r#"{"skill_name": "foo", "evals": [{"id": "e1", "prompt": "say hi", "expectations": ["says hi"]}]}"#,
            ),
            (
                "evals/bar/evals.json",
                r#"{"skill_name": "foo", "evals": [{"id": "e1", "prompt": "say hi there", "expectations": ["says hi"]}]}"#,
            ),
            ("evals/bar/files/unused.txt", "x"),
        ],
    );
    std::os::unix::fs::symlink(host.path(), d.path().join("evals/foo/files")).unwrap();
    std::os::unix::fs::symlink(host.path(), d.path().join("evals/bar/files/link")).unwrap();
    std::os::unix::fs::symlink("loop", d.path().join("evals/bar/files/loop")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(d.path().join("evals/bar/files/pipe"))
        .status();
    assert!(made.unwrap().success());
    let out = assay(d.path(), &["lint"]);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}\n{}", stderr(&out));
    assert!(!text.contains("host-secret-name"), "{text}");
    assert!(text.contains("evals/bar/files/unused.txt"), "{text}");
    assert_eq!(text.matches("unused-fixture").count(), 1, "{text}");
}

#[test]
fn the_same_prompt_graded_on_other_criteria_is_not_a_duplicate() {
    let d = tempfile::tempdir().unwrap();
    let skillet = |expected: &str| {
        format!(
            "timestamp: 2026-11-23T00:00:00Z\nname: notes\nprompt: Write notes.md\nexpected: {expected}\n"
        )
    };
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                "evals/brief/evals.json",
                r#"{"evals": [
  {"id": "dates", "prompt": "Write brief.md.", "expectations": ["brief.md names the launch date"]},
  {"id": "owners", "prompt": "Write brief.md.", "expectations": ["brief.md names an owner per risk"]},
  {"id": "checked", "prompt": "Write brief.md.", "expectations": ["brief.md names the launch date"], "x-assay-checks": [{"type": "file_exists", "path": "brief.md"}]},
  {"id": "repeat", "prompt": "write brief.md.", "expectations": ["brief.md names the launch date"]}
]}"#,
            ),
            ("evals/notes/001.yaml", &skillet("notes.md has a title")),
            (
                "evals/notes/002.yaml",
                &skillet("notes.md lists three points"),
            ),
        ],
    );
    let out = assay(d.path(), &["lint", "--format", "json"]);
    let dups: Vec<Value> = findings(&out)
        .into_iter()
        .filter(|f| f["code"] == "duplicate-prompt")
        .collect();
    assert_eq!(dups.len(), 1, "{dups:#?}");
    assert_eq!(
        dups[0]["message"],
        "case `repeat` has the same prompt and criteria as case `dates`"
    );
}

#[test]
fn a_skill_md_among_a_suites_fixtures_is_not_a_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("reviewer");
    // A skill whose eval asks the agent to review another skill, kept as fixtures: under
    // `evals/fixtures/` (a folder no format names) and under BMAD's `files/`, each with a
    // name that is not its folder's.
    let meta = "---\nname: some-other-name\ndescription: A skill under review. Use when asked.\n---\nBody.\n";
    write_tree(
        &d,
        &[
            (
                "SKILL.md",
                "---\nname: reviewer\ndescription: Reviews skills. Use when asked to review a skill.\n---\nReview the skill in the working folder.\n",
            ),
            (
                "evals/evals.json",
                r#"{"skill_name": "reviewer", "evals": [{"id": 1, "prompt": "Review the skill in evals/fixtures/eval-3-meta-skill/ and files/meta/.", "expectations": ["The review names the skill's name mismatch."], "files": ["evals/files/meta/SKILL.md"]}]}"#,
            ),
            ("evals/fixtures/eval-3-meta-skill/SKILL.md", meta),
            ("evals/files/meta/SKILL.md", meta),
        ],
    );
    let out = assay(&d, &["lint", "--format", "json"]);
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_ne!(code(&out), 2, "{said}");
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["summary"]["skills"], 1, "{said}");
    assert!(!said.contains("name-not-folder"), "{said}");
    // Named on its own, it is linted as a skill.
    let out = assay(
        &d,
        &[
            "lint",
            "evals/fixtures/eval-3-meta-skill",
            "--format",
            "json",
        ],
    );
    assert!(stdout(&out).contains("name-not-folder"), "{}", stdout(&out));
}
