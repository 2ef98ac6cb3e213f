//! UAAPS deterministic tests of the spec's shape (`input.command`, `input.stdin`,
//! `input.files`; `event`, `hook-index`, `input.fixture`, `input.overrides`), validated and run
//! as a user runs them; and `evals/eval-config.json` files that belong to no UAAPS package.

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::*;

/// Blocks a write under /etc, the way a pre-tool-use hook says so: exit 2, the reason on
/// stderr and a deny decision on stdout.
const GUARD: &str = r#"#!/bin/sh
event=$(cat)
case "$event" in
  *'"file_path":"/etc/'*)
    echo "blocked: /etc is a protected path" >&2
    echo '{"hookSpecificOutput": {"hookEventName": "pre-tool-use", "permissionDecision": "deny"}}'
    exit 2 ;;
esac
echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'
"#;

/// A guard that lets everything through: the blocking case must fail on it.
const OPEN_GUARD: &str = "#!/bin/sh\ncat >/dev/null\necho '{}'\n";

/// Counts the words of a file (its argument) and of standard input.
const COUNT: &str = r#"#!/bin/sh
echo "file: $(wc -w < "$1") words"
echo "stdin: $(wc -w) words"
[ -n "$BROKEN" ] && echo "ERROR: broken" >&2
exit 0
"#;

const PACKAGE: &[(&str, &str)] = &[
    (
        "package.agent.json",
        r#"{"name": "guarded", "version": "1.0.0"}"#,
    ),
    (
        "hooks/hooks.json",
        r#"{"version": 1, "hooks": {
            "session-start": [{"hooks": [{"type": "command", "command": "echo hi"}]}],
            "pre-tool-use": [{"matcher": "Write|Edit", "hooks": [
                {"type": "command", "command": "sh ${PACKAGE_ROOT}/hooks/scripts/guard.sh", "timeout": 10}]}]}}"#,
    ),
    ("hooks/scripts/guard.sh", GUARD),
    (
        "hooks/tests/test-config.json",
        r#"{"version": 1, "timeout": 30, "env": {"HOOK_TEST": "true"}}"#,
    ),
    (
        "hooks/tests/fixtures/write.json",
        r#"{"hookEventName": "pre-tool-use", "toolName": "Write", "toolInput": {"file_path": "/src/app.ts", "content": "x"}}"#,
    ),
    (
        "hooks/tests/cases/01-block.yaml",
        "name: blocks-etc\nevent: pre-tool-use\nhook-index: 0\ninput:\n  fixture: fixtures/write.json\n  overrides:\n    toolInput.file_path: \"/etc/passwd\"\nexpected:\n  exit-code: 2\n  stderr-contains: [blocked, protected path]\n  stdout-json:\n    hookSpecificOutput:\n      permissionDecision: deny\n",
    ),
    (
        "hooks/tests/cases/02-allow.yaml",
        "name: allows-src\nevent: pre-tool-use\ninput:\n  fixture: fixtures/write.json\nexpected:\n  exit-code: 0\n  not-contains: [blocked]\n",
    ),
    (
        "skills/count/SKILL.md",
        "---\nname: count\ndescription: Counts words. Use when asked to count words.\n---\nRun scripts/count.sh.\n",
    ),
    ("skills/count/scripts/count.sh", COUNT),
    ("skills/count/data/in.txt", "one two three four\n"),
    (
        "skills/count/tests/test-config.json",
        r#"{"version": 1, "timeout": 30}"#,
    ),
    (
        "skills/count/tests/cases/basic.yaml",
        "name: counts-file-and-stdin\ninput:\n  command: \"sh scripts/count.sh data/in.txt\"\n  stdin: \"a b\"\n  files:\n    - data/in.txt\nexpected:\n  exit-code: 0\n  stdout-contains: [\"file: 4 words\", \"stdin: 2 words\"]\n  not-contains: [ERROR, Traceback]\n",
    ),
];

fn package() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write_tree(d.path(), PACKAGE);
    d
}

fn run(dir: &Path, out_dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", ".", "--output-dir", out_dir.to_str().unwrap()];
    args.extend(extra);
    assay(dir, &args)
}

fn check<'a>(result: &'a Value, id: &str) -> &'a Value {
    result["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {result:#}"))
}

#[test]
fn spec_shaped_cases_validate() {
    let d = package();
    let out = assay(d.path(), &["validate", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["summary"]["by_format"]["uaaps-tests"], 2);
    assert_eq!(v["summary"]["cases"], 3);
    assert_eq!(v["problems"].as_array().unwrap().len(), 0, "{v:#}");
}

#[test]
fn spec_shaped_cases_pass_in_the_sandbox() {
    let d = package();
    let out_dir = tempfile::tempdir().unwrap();
    let out = run(d.path(), out_dir.path(), &[]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let rs = results(out_dir.path());
    assert_eq!(rs.len(), 3);
    for (name, r) in &rs {
        assert_eq!(r["grade"]["verdict"], "pass", "{name}: {r:#}");
    }
    assert_eq!(rs["blocks-etc"]["exit_code"], 2);
    assert_eq!(check(&rs["blocks-etc"], "stdout-json")["passed"], true);
    assert_eq!(rs["allows-src"]["exit_code"], 0);
}

#[test]
fn a_hook_that_does_not_block_and_a_script_that_errs_fail() {
    let d = package();
    write_tree(
        d.path(),
        &[
            ("hooks/scripts/guard.sh", OPEN_GUARD),
            (
                "skills/count/tests/test-config.json",
                r#"{"version": 1, "env": {"BROKEN": "1"}}"#,
            ),
        ],
    );
    let out_dir = tempfile::tempdir().unwrap();
    let out = run(d.path(), out_dir.path(), &["--sandbox", "none"]);
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let rs = results(out_dir.path());
    let blocks = &rs["blocks-etc"];
    assert_eq!(blocks["grade"]["verdict"], "fail");
    assert_eq!(check(blocks, "exit-code")["passed"], false);
    assert_eq!(check(blocks, "stderr-contains[0]")["passed"], false);
    let json = check(blocks, "stdout-json");
    assert_eq!(json["passed"], false);
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("hookSpecificOutput"),
        "{json:#}"
    );
    assert_eq!(rs["allows-src"]["grade"]["verdict"], "pass");
    let count = &rs["counts-file-and-stdin"];
    assert_eq!(count["grade"]["verdict"], "fail");
    assert_eq!(check(count, "not-contains[0]")["passed"], false);
    assert_eq!(check(count, "stdout-contains[1]")["passed"], true);
}

#[test]
fn a_case_pointing_at_no_hook_stops_everything() {
    let d = package();
    write_tree(
        d.path(),
        &[(
            "hooks/tests/cases/03-bad.yaml",
            "name: bad\nevent: pre-tool-uze\ninput:\n  fixture: fixtures/write.json\n  overides: {}\n",
        )],
    );
    let out_dir = tempfile::tempdir().unwrap();
    let out = run(d.path(), out_dir.path(), &["--sandbox", "none"]);
    assert_eq!(code(&out), 2, "{}\n{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("hooks/tests/cases/03-bad.yaml:2:8"), "{err}");
    assert!(
        err.contains("hooks/hooks.json has no `pre-tool-uze` event"),
        "{err}"
    );
    assert!(err.contains("did you mean `pre-tool-use`?"), "{err}");
    assert!(err.contains("did you mean `overrides`?"), "{err}");
    assert!(results(out_dir.path()).is_empty(), "nothing ran");
}

#[test]
fn an_eval_config_outside_a_package_is_left_alone() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[(
            "tool/evals/eval-config.json",
            r#"{"ignoredModels": ["x"], "evals": [{"id": 1}]}"#,
        )],
    );
    let out = assay(d.path(), &["validate", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["summary"]["suites"], 0);
    assert_eq!(v["problems"].as_array().unwrap().len(), 0, "{v:#}");

    // Named on the command line, it is an error that says what is missing.
    let out = assay(
        d.path(),
        &[
            "validate",
            "tool/evals/eval-config.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(code(&out), 2);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let p = &v["problems"][0];
    assert_eq!(p["code"], "not-a-package", "{v:#}");
    assert!(
        p["message"]
            .as_str()
            .unwrap()
            .contains("no package.agent.json"),
        "{v:#}"
    );

    // With a manifest above it, it is a package's again.
    write_tree(
        d.path(),
        &[("tool/package.agent.json", r#"{"name": "tool"}"#)],
    );
    let out = assay(d.path(), &["validate"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unknown key `ignoredModels`"),
        "{}",
        stderr(&out)
    );
}
