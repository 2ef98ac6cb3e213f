//! Property tests: every loader, fed arbitrary bytes, mutated real files and generated
//! documents made of its own keys, returns suites or problems — never a panic, and never both
//! a suite and an error for the same file.
//!
//! `PROPTEST_CASES` raises the count for a longer soak (the default keeps CI fast).

use crate::support;

use std::path::{Path, PathBuf};

use assay::discover::{self, Options};
use assay::formats::LoadCtx;
use proptest::prelude::*;

/// A format's example project, and the file inside it that the generated text replaces.
struct Target {
    example: &'static str,
    file: &'static str,
    /// The keys that file may hold, at any depth: the format's own lists.
    keys: fn() -> Vec<&'static str>,
}

/// The keys of `lists`, each once.
fn flat(lists: &[&[&'static str]]) -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = lists.iter().flat_map(|l| l.iter().copied()).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

fn bmad_evals() -> Vec<&'static str> {
    use assay::formats::bmad::evals;
    flat(&[evals::TOP_KEYS, evals::EVAL_KEYS, &["_design_notes"]])
}

fn bmad_triggers() -> Vec<&'static str> {
    use assay::formats::bmad::triggers;
    flat(&[triggers::TOP_KEYS, triggers::TRIGGER_KEYS])
}

/// A clauditor spec's keys, with every clauditor assertion type's own.
fn clauditor() -> Vec<&'static str> {
    use assay::formats::clauditor::{TOP_KEYS, assertions, criteria, sections, settings, triggers};
    use assay::suite::check_types::{CLAUDITOR_TYPES, clauditor_keys, lookup};
    let types: Vec<&'static str> = CLAUDITOR_TYPES
        .iter()
        .flat_map(|t| clauditor_keys(lookup(t).unwrap()))
        .collect();
    flat(&[
        TOP_KEYS,
        assertions::ASSERTION_KEYS,
        &types,
        sections::SECTION_KEYS,
        sections::TIER_KEYS,
        sections::FIELD_KEYS,
        criteria::CRITERION_KEYS,
        settings::VARIANCE_KEYS,
        settings::THRESHOLD_KEYS,
        triggers::TRIGGER_KEYS,
    ])
}

fn skillet() -> Vec<&'static str> {
    use assay::formats::skillet::{ASSERTION_KEYS, KEYS};
    flat(&[KEYS, ASSERTION_KEYS])
}

fn uaaps_case() -> Vec<&'static str> {
    use assay::formats::uaaps::{CASE_KEYS, EXPECTED_KEYS, INPUT_KEYS, JUDGE_KEYS};
    flat(&[CASE_KEYS, INPUT_KEYS, EXPECTED_KEYS, JUDGE_KEYS])
}

fn uaaps_config() -> Vec<&'static str> {
    use assay::formats::uaaps::{CONFIG_KEYS, SANDBOX_KEYS};
    flat(&[CONFIG_KEYS, SANDBOX_KEYS])
}

fn uaaps_skill_test() -> Vec<&'static str> {
    use assay::formats::uaaps::deterministic::{EXPECTED_KEYS, SKILL_CASE_KEYS, SKILL_INPUT_KEYS};
    flat(&[SKILL_CASE_KEYS, SKILL_INPUT_KEYS, EXPECTED_KEYS])
}

/// A hook test's keys, with an event, a fixture and override paths written as keys.
fn uaaps_hook_test() -> Vec<&'static str> {
    use assay::formats::uaaps::deterministic::{EXPECTED_KEYS, HOOK_CASE_KEYS, HOOK_INPUT_KEYS};
    let values: &[&'static str] = &[
        "PreToolUse",
        "fixtures/write-etc.json",
        "tool_input.file_path",
        "tool_input.file_path.x",
    ];
    flat(&[HOOK_CASE_KEYS, HOOK_INPUT_KEYS, EXPECTED_KEYS, values])
}

/// Claude Code's `hooks.json`, which has no key list of its own in assay (its reader takes
/// the keys it knows and lets the rest pass, as Claude Code does).
fn uaaps_hooks() -> Vec<&'static str> {
    vec![
        "hooks",
        "PreToolUse",
        "matcher",
        "type",
        "command",
        "timeout",
    ]
}

fn plugin_eval_case() -> Vec<&'static str> {
    use assay::formats::plugin_eval::{CASE_KEYS, CONTEXT_KEYS, EXECUTION_KEYS, graders};
    let own: Vec<&'static str> = graders::TYPE_KEYS
        .iter()
        .flat_map(|(_, k)| k.iter().copied())
        .collect();
    let mut keys = flat(&[
        CASE_KEYS,
        CONTEXT_KEYS,
        EXECUTION_KEYS,
        graders::COMMON_KEYS,
        graders::TYPES,
        graders::TARGETS,
    ]);
    keys.extend(own);
    keys
}

fn plugin_eval_front_matter() -> Vec<&'static str> {
    use assay::formats::plugin_eval::{graders, merged};
    flat(&[
        merged::PROMPT_TOP_KEYS,
        merged::PROMPT_EXECUTION_KEYS,
        graders::COMMON_KEYS,
        graders::TYPES,
        &["---", "pattern", "criteria"],
    ])
}

const TARGETS: &[Target] = &[
    Target {
        example: "examples/plugin-eval",
        file: "evals/unrelated-question/case.yaml",
        keys: plugin_eval_case,
    },
    Target {
        example: "examples/plugin-eval",
        file: "evals/commit-message/prompt.md",
        keys: plugin_eval_front_matter,
    },
    Target {
        example: "examples/plugin-eval",
        file: "evals/commit-message/graders/conventional.md",
        keys: plugin_eval_front_matter,
    },
    Target {
        example: "examples/bmad",
        file: "evals/product-brief/evals.json",
        keys: bmad_evals,
    },
    Target {
        example: "examples/bmad",
        file: "evals/product-brief/triggers.json",
        keys: bmad_triggers,
    },
    Target {
        example: "examples/clauditor",
        file: ".claude/commands/summarize-csv.eval.json",
        keys: clauditor,
    },
    Target {
        example: "examples/skillet",
        file: "evals/conventional-comments/001.yaml",
        keys: skillet,
    },
    Target {
        example: "examples/uaaps",
        file: "evals/cases/count-words.yaml",
        keys: uaaps_case,
    },
    Target {
        example: "examples/uaaps",
        file: "evals/eval-config.json",
        keys: uaaps_config,
    },
    Target {
        example: "examples/uaaps",
        file: "skills/text-tools/tests/cases/counts-stdin.yaml",
        keys: uaaps_skill_test,
    },
    Target {
        example: "examples/uaaps",
        file: "hooks/tests/cases/blocks-etc.yaml",
        keys: uaaps_hook_test,
    },
    Target {
        example: "examples/uaaps",
        file: "hooks/hooks.json",
        keys: uaaps_hooks,
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
fn mutated(original: String, keys: Vec<&'static str>) -> impl Strategy<Value = Vec<u8>> {
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
        proptest::sample::select(keys.clone()).prop_map(|k| format!("\"{k}\": ")),
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
fn generated(keys: Vec<&'static str>, yaml: bool) -> impl Strategy<Value = Vec<u8>> {
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
            proptest::collection::vec((proptest::sample::select(keys.clone()), inner), 0..6)
                .prop_map(|kv| {
                    serde_json::Value::Object(
                        kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                    )
                }),
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
        proptest!(config(), |(bytes in mutated(original.clone(), (t.keys)()))| {
            check(&root, t.file, &bytes);
        });
    }
}

#[test]
fn generated_documents_never_panic() {
    for t in TARGETS {
        let (_keep, root) = project(t.example);
        let yaml = t.file.ends_with(".yaml");
        proptest!(config(), |(bytes in generated((t.keys)(), yaml))| {
            check(&root, t.file, &bytes);
        });
    }
}
