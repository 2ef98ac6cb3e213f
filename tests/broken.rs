//! The corpus of broken suites: each is rejected, with every problem named, and nothing runs.

use crate::support;

use std::collections::BTreeSet;

use serde_json::Value;
use support::*;

/// Each corpus project and problem codes it must produce (among others).
const EXPECTED: &[(&str, &[&str])] = &[
    ("bmad-dup-keys", &["duplicate-key"]),
    (
        "bmad-evals",
        &[
            // BMAD's runner ignores keys it does not know: named, and the file still loads.
            "ignored-key",
            "duplicate-id",
            "empty",
            "wrong-type",
            "missing-field",
            "bad-id",
            "bad-fixture",
        ],
    ),
    ("bmad-syntax", &["syntax"]),
    (
        "clauditor-assertions",
        &[
            "missing-field",
            "unknown-key",
            "invalid-regex",
            "wrong-type",
            "unknown-format",
            "unknown-type",
            "duplicate-id",
            "empty",
            "out-of-range",
        ],
    ),
    (
        "clauditor-fields",
        &[
            "input-collision",
            "bad-input-file",
            "output-collision",
            "wrong-type",
            "bad-value",
            "unknown-model",
            "empty",
            "out-of-range",
            "unknown-key",
        ],
    ),
    ("clauditor-not-object", &["wrong-type"]),
    ("encoding", &["not-utf8", "syntax"]),
    (
        "skillet-fields",
        &[
            "unsupported-version",
            "bad-timestamp",
            "empty",
            "wrong-type",
            "missing-field",
            "unknown-key",
            "unknown-type",
            "invalid-regex",
        ],
    ),
    ("skillet-syntax", &["syntax", "duplicate-key"]),
    (
        "uaaps-cases",
        &[
            "bad-name",
            "unknown-target",
            "bad-fixture",
            "bad-path",
            "wrong-type",
            "unknown-key",
            "empty",
            "missing-field",
            "bad-target",
            "duplicate-id",
            "unsupported-engine",
        ],
    ),
    (
        "uaaps-config",
        &[
            "unsupported-version",
            "unsupported-engine",
            "out-of-range",
            "empty",
            "wrong-type",
            "bad-path",
            "unknown-key",
        ],
    ),
    ("uaaps-missing-config", &["missing-file"]),
    (
        "uaaps-spec-tests",
        &[
            "unknown-event",
            "unknown-key",
            "out-of-range",
            "bad-override",
            "conflict",
            "no-command-hook",
            "wrong-type",
            "bad-path",
        ],
    ),
    (
        "uaaps-tests",
        &[
            "missing-field",
            "empty",
            "wrong-type",
            "bad-path",
            "conflict",
            "bad-fixture",
            "out-of-range",
            "invalid-regex",
            "unknown-key",
            "unknown-check-type",
            "duplicate-id",
        ],
    ),
];

fn corpus() -> std::path::PathBuf {
    repo().join("tests/corpus/broken")
}

#[test]
fn every_corpus_project_is_listed() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let listed: BTreeSet<String> = EXPECTED.iter().map(|(d, _)| d.to_string()).collect();
    assert_eq!(on_disk, listed);
}

#[test]
fn broken_suites_are_rejected_with_precise_problems() {
    for (dir, codes) in EXPECTED {
        let path = corpus().join(dir);
        let out = assay(&path, &["validate", "--format", "json"]);
        assert_eq!(code(&out), 2, "{dir} must be bad input");
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{dir}: {e}"));
        assert_eq!(v["ok"], false);
        assert_eq!(
            v["summary"]["suites"], 0,
            "{dir}: a broken suite must not load half-way"
        );
        let problems = v["problems"].as_array().unwrap();
        let found: BTreeSet<&str> = problems
            .iter()
            .map(|p| p["code"].as_str().unwrap())
            .collect();
        for c in *codes {
            assert!(
                found.contains(c),
                "{dir}: expected a `{c}` problem, got {found:?}"
            );
        }
        for p in problems {
            assert!(!p["file"].as_str().unwrap().is_empty());
            assert!(!p["message"].as_str().unwrap().is_empty());
            if p["severity"] == "error" && p["code"] != "not-utf8" && p["code"] != "missing-file" {
                assert!(p["line"].as_u64().is_some(), "{dir}: {p} has no line");
            }
        }

        let text = assay(&path, &["validate"]);
        assert_eq!(code(&text), 2);
        assert_eq!(stdout(&text), "", "{dir}: no summary when nothing loads");
        insta::assert_snapshot!(format!("broken_{dir}"), stderr(&text));
    }
}

#[test]
fn list_refuses_broken_suites_too() {
    let out = assay(&corpus().join("bmad-evals"), &["list"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("duplicate eval id `A1`"));
}
