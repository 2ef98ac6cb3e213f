//! Property tests: every loader, fed arbitrary bytes, mutated real files and generated
//! documents made of its own keys, returns suites or problems — never a panic, and never both
//! a suite and an error for the same file.
//!
//! `PROPTEST_CASES` raises the count for a longer soak (the default keeps CI fast).

use crate::support;

use std::path::{Path, PathBuf};

use assay::discover::{self, Options};
use assay::spec::formats::LoadCtx;
use proptest::prelude::*;

/// A format's example project, and the file inside it that the generated text replaces.
struct Target {
    example: &'static str,
    file: &'static str,
    keys: &'static [&'static str],
}

const TARGETS: &[Target] = &[
    Target {
        example: "examples/bmad",
        file: "evals/product-brief/evals.json",
        keys: &[
            "skill_name",
            "_design_notes",
            "evals",
            "id",
            "prompt",
            "expected_output",
            "files",
            "expectations",
            "timeout",
        ],
    },
    Target {
        example: "examples/bmad",
        file: "evals/product-brief/triggers.json",
        keys: &["query", "should_trigger"],
    },
    Target {
        example: "examples/clauditor",
        file: ".claude/commands/summarize-csv.eval.json",
        keys: &[
            "skill_name",
            "assertions",
            "id",
            "type",
            "needle",
            "pattern",
            "count",
            "length",
            "format",
            "contains",
            "regex",
            "has_format",
            "sections",
            "tiers",
            "fields",
            "label",
            "name",
            "required",
            "min_entries",
            "max_entries",
            "grading_criteria",
            "criterion",
            "input_files",
            "output_files",
            "output_file",
            "timeout",
            "variance",
            "n_runs",
            "min_stability",
            "grade_thresholds",
            "trigger_tests",
            "should_trigger",
            "harness",
        ],
    },
    Target {
        example: "examples/skillet",
        file: "evals/conventional-comments/001.yaml",
        keys: &[
            "timestamp",
            "name",
            "prompt",
            "expected",
            "actual",
            "setup",
            "teardown",
            "schema_version",
            "assertions",
            "type",
            "value",
        ],
    },
    Target {
        example: "examples/uaaps",
        file: "evals/cases/count-words.yaml",
        keys: &[
            "name",
            "description",
            "target",
            "input",
            "prompt",
            "files",
            "workspace-files",
            "expected",
            "contains",
            "not-contains",
            "files-created",
            "agent-blocked",
            "judge",
            "criteria",
        ],
    },
    Target {
        example: "examples/uaaps",
        file: "evals/eval-config.json",
        keys: &[
            "version",
            "engine",
            "timeout",
            "judge",
            "sandbox",
            "network",
            "writable-paths",
            "env",
        ],
    },
    Target {
        example: "examples/uaaps",
        file: "skills/text-tools/tests/cases/counts-stdin.yaml",
        keys: &[
            "name",
            "command",
            "args",
            "stdin",
            "stdin-file",
            "env",
            "expected",
            "exit-code",
            "stdout-contains",
            "stdout-matches",
            "input",
            "files",
            "not-contains",
            "stdout-json",
        ],
    },
    Target {
        example: "examples/uaaps",
        file: "hooks/tests/cases/blocks-etc.yaml",
        keys: &[
            "name",
            "event",
            "PreToolUse",
            "hook-index",
            "input",
            "fixture",
            "fixtures/write-etc.json",
            "overrides",
            "tool_input.file_path",
            "tool_input.file_path.x",
            "expected",
            "exit-code",
            "stderr-contains",
            "not-contains",
            "stdout-json",
            "stdin",
        ],
    },
    Target {
        example: "examples/uaaps",
        file: "hooks/hooks.json",
        keys: &[
            "hooks",
            "PreToolUse",
            "matcher",
            "type",
            "command",
            "timeout",
        ],
    },
];

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

/// A private copy of an example project, so a test can overwrite one of its files.
fn project(example: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&support::repo().join(example), dir.path());
    let root = dir.path().to_path_buf();
    (dir, root)
}

/// Loads the project with `bytes` as `file`, checking the loader's contract.
fn check(root: &Path, file: &str, bytes: &[u8]) {
    std::fs::write(root.join(file), bytes).unwrap();
    let ctx = LoadCtx::new(root);
    let loaded = discover::discover(&ctx, &Options::default());
    let broken = loaded
        .problems
        .iter()
        .any(|p| p.is_error() && p.file == Path::new(file));
    if broken {
        assert!(
            !loaded.suites.iter().any(|s| s.source == Path::new(file)),
            "a suite loaded from a file with errors"
        );
    }
    for p in &loaded.problems {
        assert!(!p.message.is_empty());
        if let Some((line, col)) = p.line_col() {
            assert!(line >= 1 && col >= 1);
        }
    }
    // Rendering must cope with any span the loaders produce.
    let _ = assay::diag::render_text(&loaded.problems, Default::default());
}

/// Small edits made of the characters and words these formats are built from.
fn mutated(original: String, keys: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    let len = original.len().max(1);
    let piece = prop_oneof![
        Just("{".to_string()),
        Just("}".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("\"".to_string()),
        Just(":".to_string()),
        Just(",".to_string()),
        Just("\n".to_string()),
        Just("- ".to_string()),
        Just("  ".to_string()),
        Just("&a ".to_string()),
        Just("*a".to_string()),
        Just("!!int ".to_string()),
        Just("null".to_string()),
        Just("-1".to_string()),
        Just("1.5".to_string()),
        Just("../".to_string()),
        Just("/etc/passwd".to_string()),
        Just("\u{0}".to_string()),
        Just("é".to_string()),
        proptest::sample::select(keys).prop_map(|k| format!("\"{k}\": ")),
        proptest::sample::select(keys).prop_map(|k| format!("{k}: ")),
        "[ -~]{0,8}",
    ];
    proptest::collection::vec((0..len, 0..4usize, piece), 1..8).prop_map(move |edits| {
        let mut text = original.clone().into_bytes();
        for (at, cut, insert) in edits {
            let at = at.min(text.len());
            let end = (at + cut).min(text.len());
            text.splice(at..end, insert.into_bytes());
        }
        text
    })
}

/// Whole documents made of the format's keys and arbitrary values.
fn generated(keys: &'static [&'static str], yaml: bool) -> impl Strategy<Value = Vec<u8>> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        (-3i64..1000).prop_map(serde_json::Value::from),
        (-2.0f64..2.0).prop_map(serde_json::Value::from),
        "[a-z0-9 ./:_*()\\-]{0,12}".prop_map(serde_json::Value::from),
        proptest::sample::select(
            &[
                "contains",
                "regex",
                "has_format",
                "phone_us",
                "claude-code",
                "copilot",
                "skill:text-tools",
                "2025-01-15T10:30:00Z",
                "fixtures/sample.txt"
            ][..]
        )
        .prop_map(serde_json::Value::from),
    ];
    let tree = leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            proptest::collection::vec((proptest::sample::select(keys), inner), 0..6).prop_map(
                |kv| {
                    serde_json::Value::Object(
                        kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                    )
                }
            ),
        ]
    });
    tree.prop_map(move |v| {
        if yaml {
            // JSON is YAML; block style is exercised by the mutation strategy.
            serde_json::to_string_pretty(&v).unwrap().into_bytes()
        } else {
            serde_json::to_vec_pretty(&v).unwrap()
        }
    })
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(96),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    for t in TARGETS {
        let (_keep, root) = project(t.example);
        proptest!(config(), |(bytes in proptest::collection::vec(any::<u8>(), 0..512))| {
            check(&root, t.file, &bytes);
        });
    }
}

#[test]
fn mutated_real_files_never_panic() {
    for t in TARGETS {
        let (_keep, root) = project(t.example);
        let original = std::fs::read_to_string(root.join(t.file)).unwrap();
        proptest!(config(), |(bytes in mutated(original.clone(), t.keys))| {
            check(&root, t.file, &bytes);
        });
    }
}

#[test]
fn generated_documents_never_panic() {
    for t in TARGETS {
        let (_keep, root) = project(t.example);
        let yaml = t.file.ends_with(".yaml");
        proptest!(config(), |(bytes in generated(t.keys, yaml))| {
            check(&root, t.file, &bytes);
        });
    }
}
