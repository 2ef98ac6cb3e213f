//! The built-in checks' semantics, through the table that names them.

use std::path::Path;

use super::*;
use serde_json::json;

/// Evaluates a built-in type through [`EVALUATORS`], as the checks registry does.
fn evaluate(kind: &str, config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    match EVALUATORS.iter().find(|(name, _)| *name == kind) {
        Some((_, Evaluation::Pure(f))) => f(config, view),
        // The evaluators that need the run's settings, as a run's registry makes them.
        Some(_) => crate::assert::check::Checks::builtin(Default::default())
            .evaluate(kind, config, &std::sync::Arc::new(view.clone()))
            .unwrap_or_else(|| Err(format!("no built-in check `{kind}`"))),
        None => Err(format!("no built-in check `{kind}`")),
    }
}

#[test]
fn every_built_in_type_has_exactly_one_evaluator() {
    let spec: Vec<&str> = crate::suite::check_types::BUILTIN
        .iter()
        .map(|t| t.name)
        .collect();
    for name in &spec {
        let n = EVALUATORS.iter().filter(|(k, _)| k == name).count();
        assert_eq!(n, 1, "`{name}` has {n} evaluators");
    }
    for (name, _) in EVALUATORS {
        assert!(spec.contains(name), "`{name}` is not a type spec knows");
    }
}

fn view(output: &str) -> CaseRunView {
    CaseRunView {
        output: output.into(),
        ..CaseRunView::default()
    }
}

fn passes(kind: &str, config: Value, output: &str) -> bool {
    evaluate(kind, &config, &view(output)).unwrap().passed
}

#[test]
fn clauditor_text_checks() {
    assert!(passes(
        "contains",
        json!({"needle": "Venues"}),
        "## Venues\n"
    ));
    assert!(
        !passes("contains", json!({"needle": "venues"}), "## Venues\n"),
        "case-sensitive"
    );
    assert!(passes(
        "contains",
        json!({"needle": "venues", "ignore_case": true}),
        "## Venues"
    ));
    assert!(passes(
        "not_contains",
        json!({"needle": "Error"}),
        "all good"
    ));
    assert!(passes(
        "regex",
        json!({"pattern": r"\*\*\d+\."}),
        "x **1. A**"
    ));
    assert!(
        !passes("regex", json!({"pattern": "^b"}), "a\nb"),
        "^ anchors at the start without (?m)"
    );
    assert!(passes("regex", json!({"pattern": "(?m)^b"}), "a\nb"));
    assert!(
        passes("regex", json!({"pattern": r"(?<=\$)\d+"}), "cost $12"),
        "lookbehind works"
    );
    assert!(passes(
        "min_count",
        json!({"pattern": "^- ", "count": 1}),
        "- a\n- b"
    ));
    assert!(!passes(
        "min_count",
        json!({"pattern": "(?m)^- ", "count": 3}),
        "- a\n- b"
    ));
    assert!(passes(
        "min_count",
        json!({"pattern": "(?m)^- ", "count": 2}),
        "- a\n- b"
    ));
}

#[test]
fn lengths_count_characters_not_bytes() {
    assert!(passes("min_length", json!({"length": 3}), "été"));
    assert!(passes("max_length", json!({"length": 3}), "été"));
    assert!(!passes("max_length", json!({"length": 2}), "été"));
}

#[test]
fn urls_entries_and_formats_are_counted_like_clauditor() {
    let out = "See https://a.com/x, https://a.com/x and (https://b.org).\n**1. One** **2. Two** **3. Three**";
    assert!(
        passes("has_urls", json!({"count": 3}), out),
        "duplicates count"
    );
    assert!(!passes("has_urls", json!({"count": 4}), out));
    assert!(passes("has_entries", json!({"count": 3}), out));
    assert!(passes(
        "has_format",
        json!({"format": "phone_us", "count": 2}),
        "call (408) 555-0123 or 408.555.0199"
    ));
    assert!(!passes(
        "has_format",
        json!({"format": "uuid", "count": 1}),
        "no ids"
    ));
    let v = evaluate("has_urls", &json!({"count": 1}), &view(out)).unwrap();
    assert_eq!(
        v.evidence.as_deref(),
        Some("https://a.com/x, | https://a.com/x | https://b.org")
    );
}

#[test]
fn skillet_semantics() {
    assert!(passes(
        "starts_with",
        json!({"prefix": "**issue**", "ignore_case": true}),
        "**Issue** (blocking): x"
    ));
    assert!(
        !passes(
            "starts_with",
            json!({"prefix": "issue", "ignore_case": true}),
            "  issue"
        ),
        "no left strip"
    );
    assert!(
        passes(
            "ends_with",
            json!({"suffix": ".", "ignore_case": true}),
            "done.\n  "
        ),
        "right-stripped"
    );
    let mut v = view("");
    v.events = vec![crate::harness::Event::ToolCall {
        id: "1".into(),
        name: "Read".into(),
        input: json!({}),
    }];
    assert!(
        evaluate("tool_called", &json!({"tool": "Read"}), &v)
            .unwrap()
            .passed
    );
    assert!(
        !evaluate("tool_called", &json!({"tool": "read"}), &v)
            .unwrap()
            .passed,
        "exact names"
    );
    assert!(
        evaluate("tool_not_called", &json!({"tool": "Write"}), &v)
            .unwrap()
            .passed
    );
}

#[test]
fn a_hook_denial_or_a_permission_denial_blocks_the_agent() {
    let result = |output: &str| crate::harness::Event::ToolResult {
        id: "t".into(),
        output: output.into(),
        is_error: true,
    };
    let mut v = view("");
    v.events = vec![result(
        "PreToolUse:Write hook error: [sh block.sh]: writes to /etc are not allowed\n",
    )];
    assert!(agent_blocked(&v).unwrap().contains("not allowed"));
    v.events = vec![result(
        "File does not exist. Note: the hook error log is empty",
    )];
    assert!(
        agent_blocked(&v).is_none(),
        "an ordinary tool error is not a block"
    );
    v.events.clear();
    v.permission_denials = 1;
    assert!(agent_blocked(&v).is_some());
}

#[test]
fn file_checks_never_read_through_a_symlink() {
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    std::fs::create_dir_all(ws.join("inputs")).unwrap();
    std::fs::write(d.path().join("secret.txt"), "SECRET\n").unwrap();
    std::fs::create_dir_all(d.path().join("outside")).unwrap();
    std::fs::write(d.path().join("outside/f.txt"), "SECRET\n").unwrap();
    std::os::unix::fs::symlink(d.path().join("secret.txt"), ws.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink(d.path().join("secret.txt"), ws.join("inputs/out.txt")).unwrap();
    std::os::unix::fs::symlink(d.path().join("outside"), ws.join("dir")).unwrap();
    let v = CaseRunView {
        // As if a listing named them: the content must still not be read.
        files: ["leak.txt", "inputs/out.txt", "dir/f.txt"]
            .iter()
            .map(std::path::PathBuf::from)
            .collect(),
        file_root: Some(crate::workspace::layers::Tree::dir(ws.clone())),
        cwd: "inputs".into(),
        ..CaseRunView::default()
    };
    for path in [
        "leak.txt",
        "out.txt",
        "dir/f.txt",
        "../secret.txt",
        "inputs/../../secret.txt",
    ] {
        let o = evaluate(
            "file_contains",
            &json!({"path": path, "needle": "SECRET"}),
            &v,
        )
        .unwrap();
        assert!(!o.passed, "{path}: {}", o.message);
        assert!(o.evidence.is_none(), "{path}: {:?}", o.evidence);
        let o = evaluate("file_matches", &json!({"path": path, "pattern": "SEC"}), &v).unwrap();
        assert!(!o.passed, "{path}: {}", o.message);
    }
    let o = evaluate(
        "file_contains",
        &json!({"path": "leak.txt", "needle": "x"}),
        &v,
    )
    .unwrap();
    assert!(o.message.contains("symlink"), "{}", o.message);
    // A link is seen as a link, not as the file it points at.
    let live = CaseRunView {
        files: Default::default(),
        ..v.clone()
    };
    let o = evaluate("file_exists", &json!({"path": "leak.txt"}), &live).unwrap();
    assert!(!o.passed);
    assert!(o.message.contains("symlink"), "{}", o.message);
    assert_eq!(v.read_file(Path::new("leak.txt")), None);
}

#[test]
fn file_created_needs_the_run_to_have_created_the_file() {
    let v = CaseRunView {
        files: ["old.txt", "out/new.txt", "inputs/r.txt"]
            .iter()
            .map(std::path::PathBuf::from)
            .collect(),
        created: ["out/new.txt", "inputs/r.txt"]
            .iter()
            .map(std::path::PathBuf::from)
            .collect(),
        cwd: "inputs".into(),
        ..CaseRunView::default()
    };
    let run = |path: &str| evaluate("file_created", &json!({ "path": path }), &v).unwrap();
    assert!(run("out/new.txt").passed);
    assert!(run("r.txt").passed, "relative to the agent's folder too");
    let old = run("old.txt");
    assert!(!old.passed);
    assert!(
        old.message.contains("existed before the run"),
        "{}",
        old.message
    );
    assert!(run("gone.txt").message.contains("does not exist"));
}

#[test]
fn file_fixture_skill_sequence_and_budget_checks() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("inputs")).unwrap();
    std::fs::write(d.path().join("brief.md"), "# Brief\nPricing: $9/month\n").unwrap();
    std::fs::write(d.path().join("inputs/out.txt"), "done\n").unwrap();
    let call = |name: &str| crate::harness::Event::ToolCall {
        id: "t".into(),
        name: name.into(),
        input: json!({}),
    };
    let v = CaseRunView {
        files: ["brief.md", "inputs/out.txt"]
            .iter()
            .map(std::path::PathBuf::from)
            .collect(),
        file_root: Some(crate::workspace::layers::Tree::dir(d.path())),
        cwd: "inputs".into(),
        events: vec![
            call("Skill"),
            crate::harness::Event::SkillInvoked {
                name: "brief".into(),
                call: None,
            },
            call("Read"),
            call("Bash"),
            call("Write"),
        ],
        num_turns: Some(4),
        cost_usd: Some(0.02),
        duration_ms: 1500,
        ..CaseRunView::default()
    };
    let ok = |kind: &str, c: Value| evaluate(kind, &c, &v).unwrap().passed;
    assert!(ok(
        "file_contains",
        json!({"path": "brief.md", "needle": "$9/month"})
    ));
    assert!(
        ok(
            "file_contains",
            json!({"path": "out.txt", "needle": "done"})
        ),
        "relative to the agent's folder too"
    );
    assert!(!ok(
        "file_contains",
        json!({"path": "missing.md", "needle": "x"})
    ));
    assert!(ok(
        "file_matches",
        json!({"path": "brief.md", "pattern": "(?m)^# \\w+$"})
    ));
    assert!(ok("fixture_unchanged", json!({})));
    assert!(ok("skill_invoked", json!({"skill": "brief"})));
    assert!(!ok("skill_invoked", json!({"skill": "other"})));
    assert!(ok("must_fire", json!({"skill": "brief"})));
    assert!(!ok("must_fire", json!({"skill": "other"})));
    assert!(ok("must_not_fire", json!({"skill": "other"})));
    assert!(!ok("must_not_fire", json!({"skill": "brief"})));
    assert!(ok("no_other_skill", json!({"allow": ["brief"]})));
    assert!(!ok("no_other_skill", json!({"allow": ["other"]})));
    assert!(!ok("no_other_skill", json!({})), "nothing allowed");
    assert!(ok(
        "tool_sequence",
        json!({"tools": ["Skill", "Bash", "Write"]})
    ));
    assert!(
        !ok("tool_sequence", json!({"tools": ["Write", "Read"]})),
        "order matters"
    );
    assert!(ok("max_turns", json!({"turns": 4})) && !ok("max_turns", json!({"turns": 3})));
    assert!(ok("max_cost", json!({"usd": 0.05})) && !ok("max_cost", json!({"usd": 0.01})));
    assert!(
        ok("max_duration", json!({"seconds": 2})) && !ok("max_duration", json!({"seconds": 1}))
    );
    let mut changed = v.clone();
    changed.changed_fixtures = vec!["inputs/sales.csv".into()];
    assert!(
        !evaluate("fixture_unchanged", &json!({}), &changed)
            .unwrap()
            .passed
    );
    let mut no_cost = v.clone();
    no_cost.cost_usd = None;
    assert!(
        evaluate("max_cost", &json!({"usd": 1}), &no_cost).is_err(),
        "unknown cost is not a pass"
    );
}

#[test]
fn negation_and_unevaluable_checks() {
    let check = |kind: &str, config: Value, negate: bool| Check {
        id: "c".into(),
        kind: kind.into(),
        config,
        negate,
        weight: 1.0,
        target: crate::suite::CheckTarget::Output,
        location: None,
    };
    let checks = crate::assert::check::Checks::builtin(Default::default());
    let r = checks.run(
        &[check("contains", json!({"needle": "x"}), true)],
        &std::sync::Arc::new(view("xyz")),
    );
    assert!(!r[0].passed && r[0].negated);
    let r = checks.run(
        &[check("nope", json!({}), false)],
        &std::sync::Arc::new(view("")),
    );
    assert!(
        !r[0].passed && r[0].error.is_some(),
        "a check that cannot run never passes"
    );
}

#[test]
fn excerpts_are_bounded_and_on_one_line() {
    let text = format!("{}needle\n{}", "a".repeat(100), "b".repeat(100));
    let e = excerpt(&text, 100, 106);
    assert!(e.starts_with('…') && e.ends_with('…') && e.contains("needle⏎"));
    assert!(e.chars().count() <= 60 + 6 + 60 + 2);
}

#[test]
fn stderr_contains_honours_ignore_case_as_its_keys_allow() {
    let v = CaseRunView {
        stderr: "Error: disk FULL".into(),
        ..CaseRunView::default()
    };
    let got = |config: Value| evaluate("stderr_contains", &config, &v).unwrap().passed;
    assert!(!got(json!({"needle": "disk full"})));
    assert!(got(json!({"needle": "disk full", "ignore_case": true})));
    assert!(got(json!({"needle": "disk FULL"})));
}

#[test]
fn stdio_not_contains_looks_at_both_streams() {
    let v = |out: &str, err: &str| CaseRunView {
        stdout: out.into(),
        stderr: err.into(),
        ..CaseRunView::default()
    };
    let got = |view: &CaseRunView| {
        evaluate("stdio_not_contains", &json!({"needle": "ERROR"}), view)
            .unwrap()
            .passed
    };
    assert!(got(&v("all good", "fine")));
    assert!(!got(&v("an ERROR here", "")));
    assert!(!got(&v("", "ERROR: disk")));
    let f = evaluate(
        "stdio_not_contains",
        &json!({"needle": "ERROR"}),
        &v("", "x ERROR"),
    );
    assert!(f.unwrap().message.contains("standard error"));
}

#[test]
fn stdout_json_is_a_deep_partial_match() {
    let out = |s: &str| CaseRunView {
        stdout: s.into(),
        ..CaseRunView::default()
    };
    let want = json!({"json": {"hookSpecificOutput": {"permissionDecision": "deny"}, "n": 1}});
    let run = |s: &str| evaluate("stdout_json", &want, &out(s)).unwrap();
    let deny = r#"{"hookSpecificOutput": {"permissionDecision": "deny", "reason": "x"}, "n": 1.0, "more": []}"#;
    assert!(run(deny).passed, "{}", run(deny).message);
    assert!(run(&format!("\n  {deny}\n")).passed);
    let allow = r#"{"hookSpecificOutput": {"permissionDecision": "allow"}, "n": 1}"#;
    let f = run(allow);
    assert!(!f.passed);
    assert!(
        f.message.contains("hookSpecificOutput.permissionDecision"),
        "{}",
        f.message
    );
    assert!(!run(r#"{"n": 1}"#).passed);
    assert!(!run("").passed);
    assert!(run("not json").message.contains("not JSON"));
    assert!(!run("[1, 2]").passed);
    let lists = json!({"json": {"a": [{"b": 1}, 2]}});
    let l = |s: &str| evaluate("stdout_json", &lists, &out(s)).unwrap().passed;
    assert!(l(r#"{"a": [{"b": 1, "c": 0}, 2]}"#));
    assert!(!l(r#"{"a": [{"b": 1}, 2, 3]}"#));
    assert!(!l(r#"{"a": [2, {"b": 1}]}"#));
}
