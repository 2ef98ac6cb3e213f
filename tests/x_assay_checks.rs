//! `x-assay-checks`, assay's extension key, in BMAD, clauditor and Skillet suites: validated as
//! the formats' own keys are, and graded by `assay run` like any check.

use crate::support;

use serde_json::Value;
use support::*;

const BUDGET: &str = r#"[
    {"type": "max_turns", "turns": 3},
    {"type": "max_cost", "usd": 0.5},
    {"type": "max_duration", "seconds": 60}
  ]"#;

/// A project with one suite of each format, each with the three budget checks.
fn project(dir: &std::path::Path) {
    let bmad = format!(
        r#"{{"evals": [{{"id": "one", "prompt": "Write a brief.", "expectations": ["It is brief."],
  "x-assay-checks": {BUDGET}}}]}}"#
    );
    let clauditor = format!(
        r#"{{"assertions": [{{"id": "says-hi", "type": "contains", "needle": "hi"}}],
  "x-assay-checks": {BUDGET}}}"#
    );
    let skillet = "timestamp: 2025-01-15T10:30:00Z\nname: greet\nprompt: Say hi\nexpected: A greeting.\nx-assay-checks:\n  - {type: max_turns, turns: 3}\n  - {type: max_cost, usd: 0.5}\n  - {type: max_duration, seconds: 60}\n";
    write_tree(
        dir,
        &[
            (
                ".claude/skills/brief/SKILL.md",
                "---\nname: brief\ndescription: Writes briefs.\n---\nWrite a brief.\n",
            ),
            (".claude/skills/brief/evals/evals.json", &bmad),
            (".claude/commands/hello.md", "Say hi.\n"),
            (".claude/commands/hello.eval.json", &clauditor),
            ("evals/greet/001.yaml", skillet),
        ],
    );
}

#[test]
fn validate_accepts_x_assay_checks_in_bmad_clauditor_and_skillet() {
    let d = tempfile::tempdir().unwrap();
    project(d.path());
    let out = assay(d.path(), &["validate", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["ok"], true, "{v:#}");
    for f in ["bmad", "clauditor", "skillet"] {
        assert_eq!(v["summary"]["by_format"][f], 1, "{f}: {v:#}");
    }
    // 3 budget checks per suite, and clauditor's one assertion.
    assert_eq!(v["summary"]["checks"], 10, "{v:#}");

    let out = assay(d.path(), &["list", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let suites: Value = serde_json::from_str(&stdout(&out)).unwrap();
    for suite in suites.as_array().unwrap() {
        let kinds: Vec<&str> = suite["cases"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["kind"].as_str())
            .filter(|k| k.starts_with("max_"))
            .collect();
        assert_eq!(
            kinds,
            ["max_turns", "max_cost", "max_duration"],
            "{}",
            suite["id"]
        );
    }

    // A typo in the key is still an error with its fix, in each format.
    let bad = tempfile::tempdir().unwrap();
    write_tree(
        bad.path(),
        &[(
            "evals/greet/001.yaml",
            "timestamp: 2025-01-15T10:30:00Z\nname: greet\nprompt: Say hi\nexpected: A greeting.\nx-assay-check: []\n",
        )],
    );
    let out = assay(bad.path(), &["validate"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(text.contains("evals/greet/001.yaml:5:1"), "{text}");
    assert!(text.contains("did you mean `x-assay-checks`?"), "{text}");
}

#[test]
fn run_grades_max_duration_from_skillet_and_clauditor_files() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (".claude/commands/hello.md", "Say hi.\n"),
            ("agent.sh", "sleep 1\necho hi\n"),
            // clauditor: a duration the agent (a second's sleep) cannot keep.
            (
                ".claude/commands/hello.eval.json",
                r#"{"assertions": [{"id": "says-hi", "type": "contains", "needle": "hi"}],
                    "x-assay-checks": [{"id": "quick", "type": "max_duration", "seconds": 0.5}]}"#,
            ),
            // Skillet with its own assertion (no judge) and a budget it keeps.
            (
                "evals/greet/001.yaml",
                "timestamp: 2025-01-15T10:30:00Z\nname: greet\nprompt: Say hi\nexpected: A greeting.\nassertions:\n  - {type: contains, value: HI}\nx-assay-checks:\n  - {id: in-time, type: max_duration, seconds: 60}\n",
            ),
            // Skillet judged: the budget check does not replace the judge.
            (
                "evals/greet/002.yaml",
                "timestamp: 2025-01-15T10:30:00Z\nname: greet\nprompt: Say hi\nexpected: A greeting.\nx-assay-checks:\n  - {type: max_duration, seconds: 60}\n",
            ),
        ],
    );
    let out = assay(
        d.path(),
        &[
            "run",
            "--harness",
            "command",
            "--command",
            "sh agent.sh",
            "--judge",
            "none",
            "--output-dir",
            "out",
            "--workspace-dir",
            "ws",
        ],
    );
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let rs = results(&d.path().join("out"));
    let check = |r: &Value, id: &str| -> Value {
        r["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no check {id}: {r:#}"))
            .clone()
    };

    let hello = &rs["hello"];
    assert_eq!(hello["grade"]["verdict"], "fail", "{hello:#}");
    assert_eq!(check(hello, "says-hi")["passed"], true, "{hello:#}");
    let quick = check(hello, "quick");
    assert_eq!(quick["kind"], "max_duration");
    assert_eq!(quick["passed"], false, "{quick:#}");
    assert!(
        quick["message"]
            .as_str()
            .unwrap()
            .ends_with("at most 0.5 s allowed"),
        "{quick:#}"
    );

    let kept = &rs["001"];
    assert_eq!(kept["grade"]["verdict"], "pass", "{kept:#}");
    assert_eq!(check(kept, "in-time")["passed"], true, "{kept:#}");

    let judged = &rs["002"];
    assert_eq!(
        check(judged, "max_duration-1")["passed"],
        true,
        "{judged:#}"
    );
    // `expected` is still the judge's criterion: with no judge, not graded, never passed.
    assert_eq!(judged["grade"]["verdict"], "not-graded", "{judged:#}");
}
