//! History, trends and audit as a user gets them: `assay run` appends to
//! `.assay/history.jsonl`; `assay report trend` and `assay report audit` read it; runs made
//! with another harness, model or agent CLI version are not compared without `--cross`, and
//! neither are two run folders in `assay report diff`.

use crate::support;

use serde_json::Value;
use support::*;

/// The quickstart, with a check that passes whatever the agent does (it cannot measure the
/// skill).
fn project() -> tempfile::TempDir {
    let d = copy_example("examples/quickstart");
    let spec = d.path().join(".claude/commands/greeting.eval.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&spec).unwrap()).unwrap();
    v["assertions"].as_array_mut().unwrap().push(
        serde_json::json!({"id": "no_traceback", "type": "not_contains", "needle": "Traceback"}),
    );
    std::fs::write(&spec, v.to_string()).unwrap();
    d
}

fn run(dir: &std::path::Path, extra: &[&str], out: &str) -> std::process::Output {
    let mut args = vec![
        "run",
        "--output-dir",
        out,
        "--history",
        ".assay/history.jsonl",
    ];
    args.extend_from_slice(extra);
    assay(dir, &args)
}

#[test]
fn runs_append_history_and_trend_flags_what_regressed() {
    let d = project();
    assert_eq!(code(&run(d.path(), &[], "r1")), 0);
    assert_eq!(code(&run(d.path(), &[], "r2")), 0);
    let out = run(d.path(), &["--command", "echo nope"], "r3");
    assert_eq!(code(&out), 1, "{}", stdout(&out));

    let (lines, bad) =
        assay::record::history::read(&d.path().join(".assay/history.jsonl")).unwrap();
    assert_eq!(bad, 0);
    assert_eq!(lines.len(), 9, "3 cases × 3 runs: {lines:#?}");
    let l = lines
        .iter()
        .find(|l| l.run == "r1" && l.case == "greeting")
        .unwrap();
    assert_eq!((l.runs, l.passed, l.pass_rate), (1, 1, Some(1.0)));
    assert_eq!(l.harness, "command");
    assert_eq!(l.skill_hash.as_ref().map(String::len), Some(16));

    let out = assay(d.path(), &["report", "trend"]);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}{}", stderr(&out));
    assert!(text.starts_with("trend over 3 run(s): r1 … r3\n"), "{text}");
    assert!(
        text.contains("clauditor:greeting/greeting  pass ██▁   0% worsening"),
        "{text}"
    );
    assert!(text.contains("[regressed]"), "{text}");
    let out = assay(d.path(), &["report", "trend", "--last", "2", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["runs"], serde_json::json!(["r2", "r3"]));

    // A run with another model: not compared without --cross, and the difference is named.
    assert_eq!(code(&run(d.path(), &["--model", "other-model"], "r4")), 0);
    let out = assay(d.path(), &["report", "trend"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        stderr(&out)
            .contains("not comparable: the runs differ in model ((default) vs other-model)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(code(&assay(d.path(), &["report", "trend", "--cross"])), 0);
    let out = assay(d.path(), &["report", "diff", "r1", "r4"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(stderr(&out).contains("not comparable"), "{}", stderr(&out));
    assert_eq!(
        code(&assay(d.path(), &["report", "diff", "r1", "r4", "--cross"])),
        0
    );
    assert_eq!(code(&assay(d.path(), &["report", "diff", "r1", "r2"])), 0);
}

#[test]
fn audit_names_flaky_checks_and_those_that_pass_without_the_skill() {
    let d = project();
    assert_eq!(code(&run(d.path(), &["--baseline"], "r1")), 0);
    assert_eq!(
        code(&run(
            d.path(),
            &["--baseline", "--command", "echo nope"],
            "r2"
        )),
        1
    );
    let out = assay(d.path(), &["report", "audit"]);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}{}", stderr(&out));
    assert!(text.starts_with("audit of 2 run(s):"), "{text}");
    assert!(
        text.contains("clauditor:greeting/greeting check \"names_ada\": 50% (1 of 2)"),
        "{text}"
    );
    assert!(
        text.contains(
            "clauditor:greeting/greeting check \"no_traceback\": 100% with the skill, 100% without"
        ),
        "{text}"
    );
    let out = assay(d.path(), &["report", "audit", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        v["not_measuring"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["name"] != "names_ada")
    );
}

#[test]
fn no_history_is_bad_input_saying_where_it_comes_from() {
    let d = tempfile::tempdir().unwrap();
    let out = assay(d.path(), &["report", "trend"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("`assay run` appends to it when a run ends"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_default_run_folder_gets_history_and_one_elsewhere_none() {
    let d = project();
    assert_eq!(code(&assay(d.path(), &["run"])), 0);
    let (lines, _) = assay::record::history::read(&d.path().join(".assay/history.jsonl")).unwrap();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].run.starts_with(".assay/runs/"), "{}", lines[0].run);
    let e = tempfile::tempdir().unwrap();
    let out = e.path().join("run");
    assert_eq!(
        code(&assay(
            d.path(),
            &["run", "--output-dir", out.to_str().unwrap()]
        )),
        0
    );
    let (lines, _) = assay::record::history::read(&d.path().join(".assay/history.jsonl")).unwrap();
    assert_eq!(
        lines.len(),
        3,
        "a run folder elsewhere adds no history unless --history"
    );
    assert!(!e.path().join("history.jsonl").exists());
}

#[test]
fn hostile_names_in_the_history_reach_the_terminal_escaped() {
    let d = tempfile::tempdir().unwrap();
    let line = |run: &str, rate: f64| {
        serde_json::json!({
            "schema": "assay.history/v1", "run": run, "at": run,
            "suite": "s\u{1b}]0;owned\u{7}", "case": "c\n::error::forged",
            "kind": "case", "variant": "skill", "runs": 1, "passed": 1,
            "pass_rate": rate, "harness": "command"
        })
        .to_string()
    };
    std::fs::create_dir(d.path().join(".assay")).unwrap();
    std::fs::write(
        d.path().join(".assay/history.jsonl"),
        format!("{}\n{}\n", line("r1", 1.0), line("r2", 0.0)),
    )
    .unwrap();
    let out = assay(d.path(), &["report", "trend"]);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}{}", stderr(&out));
    assert!(text.contains("[regressed]"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(
        text.lines().all(|l| !l.starts_with("::")),
        "a line could start a workflow command: {text}"
    );
    // The case's row stays one row: its name's newline is shown, not sent.
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains("c\\n::error::forged  pass █▁"), "{text}");
}

/// An edit of the eval (a check's needle) between two runs is no regression of the skill and
/// no flaky check: trend compares only the runs since the edit and says so; audit leaves the
/// earlier runs of that suite out and says so.
#[test]
fn an_eval_edit_breaks_comparability_and_is_said() {
    let d = project();
    assert_eq!(code(&run(d.path(), &[], "r1")), 0);
    let spec = d.path().join(".claude/commands/greeting.eval.json");
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("Hello, Ada!", "Bye, Ada!");
    std::fs::write(&spec, text).unwrap();
    assert_eq!(code(&run(d.path(), &[], "r2")), 1);
    let out = assay(d.path(), &["report", "trend"]);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}{}", stderr(&out));
    let line = text
        .lines()
        .find(|l| l.starts_with("clauditor:greeting/greeting"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("[eval changed]"), "{line}");
    assert!(
        !line.contains("regressed") && !line.contains("worsening"),
        "{line}"
    );
    let out = assay(d.path(), &["report", "audit"]);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}{}", stderr(&out));
    assert!(
        text.contains(
            "left out: clauditor:greeting: 1 earlier run(s), before its eval was last edited"
        ),
        "{text}"
    );
    assert!(!text.contains("\"names_ada\": 50%"), "{text}");
    let v: Value =
        serde_json::from_str(&stdout(&assay(d.path(), &["report", "audit", "--json"]))).unwrap();
    assert!(
        v["flaky"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["name"] != "names_ada"),
        "{v:#}"
    );
}
