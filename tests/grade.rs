//! `assay grade`: captured outputs against a spec, re-grading run folders, extraction and
//! blind A/B through a loopback judge, and `urls_reachable` through the CLI.

use crate::support;

use std::path::Path;

use serde_json::json;
use support::judge_server::{JudgeReply, JudgeServer, says};
use support::*;

const SPEC: &str = r###"{
  "skill_name": "summarize-csv",
  "description": "Ranks products by revenue",
  "input_files": ["fixtures/sales.csv"],
  "assertions": [
    {"id": "has_heading", "type": "contains", "needle": "## Top products"},
    {"id": "no_error", "type": "not_contains", "needle": "Error"},
    {"id": "bold_rank", "type": "regex", "pattern": "\\*\\*1\\. "},
    {"id": "shares", "type": "min_count", "pattern": "\\d+(\\.\\d+)?%", "count": 3},
    {"id": "not_empty", "type": "min_length", "length": 80},
    {"id": "concise", "type": "max_length", "length": 4000},
    {"id": "cites", "type": "has_urls", "count": 1},
    {"id": "ranked", "type": "has_entries", "count": 3},
    {"id": "money", "type": "has_format", "format": "currency_usd", "count": 1}
  ]
}"###;

const GOOD: &str = "## Top products\n\n**1. Widget Pro** — $12,400.00 (48.2%)\n**2. Gadget** — $8,100.50 (31.5%)\n**3. Doohickey** — $5,200.00 (20.3%)\n\nSource: https://example.com/sales\n";

fn project(spec: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/commands/summarize-csv.md", "Summarize the CSV.\n"),
            (".claude/commands/summarize-csv.eval.json", spec),
            (
                ".claude/commands/fixtures/sales.csv",
                "product,units,price\n",
            ),
            ("good.md", GOOD),
            ("bad.md", "Error: could not read sales.csv\n"),
        ],
    );
    d
}

const SPEC_PATH: &str = ".claude/commands/summarize-csv.eval.json";

#[test]
fn a_captured_output_is_graded_by_the_clauditor_l1_set() {
    let d = project(SPEC);
    let out = assay(d.path(), &["grade", SPEC_PATH, "--output", "good.md"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).starts_with("PASS"), "{}", stdout(&out));
    assert!(stdout(&out).contains("[9/9 checks]"));
    // clauditor's own warning, word for word.
    assert!(
        stderr(&out)
            .contains("WARNING: --output bypasses the runner; input_files declaration is ignored."),
        "{}",
        stderr(&out)
    );

    let out = assay(
        d.path(),
        &["grade", SPEC_PATH, "--output", "bad.md", "--json"],
    );
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let checks = v["grading"]["checks"].as_array().unwrap();
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| c["passed"] == false)
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        failed,
        [
            "has_heading",
            "no_error",
            "bold_rank",
            "shares",
            "not_empty",
            "cites",
            "ranked",
            "money"
        ]
    );
    let no_error = &checks[1];
    assert_eq!(no_error["evidence"], "Error: could not read sales.csv⏎");
    assert_eq!(v["grading"]["grade"]["verdict"], "fail");
}

#[test]
fn bad_grade_input_is_refused_before_anything_is_graded() {
    let d = project(SPEC);
    let out = assay(d.path(), &["grade", SPEC_PATH]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--output"), "{}", stderr(&out));
    let out = assay(d.path(), &["grade", SPEC_PATH, "--output", "missing.md"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("missing.md: cannot read the output"),
        "{}",
        stderr(&out)
    );
    let out = assay(
        d.path(),
        &["grade", SPEC_PATH, "--output", "good.md", "--case", "nope"],
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out)
            .contains("no case `nope`; the cases are: clauditor:summarize-csv/summarize-csv")
    );
    let broken = project(
        r#"{"skill_name": "x", "assertions": [{"id": "a", "type": "contains", "neddle": "x"}]}"#,
    );
    let out = assay(broken.path(), &["grade", SPEC_PATH, "--output", "good.md"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did you mean `needle`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "", "nothing was graded");
}

#[test]
fn several_cases_need_a_case_choice() {
    let out = assay(
        &repo(),
        &["grade", "examples/quickstart", "--output", "README.md"],
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("choose one with --case"),
        "{}",
        stderr(&out)
    );
    let out = assay(
        &repo(),
        &[
            "grade",
            "examples/quickstart",
            "--output",
            "examples/quickstart/agent.sh",
            "--case",
            "greeting",
        ],
    );
    assert_eq!(
        code(&out),
        1,
        "the script is not a greeting: {}",
        stdout(&out)
    );
}

const EXTRACTING: &str = r###"{
  "skill_name": "summarize-csv",
  "assertions": [{"id": "has_heading", "type": "contains", "needle": "## Top products"}],
  "sections": [{"name": "Top products", "tiers": [{"label": "default", "min_entries": 3, "max_entries": 3,
    "fields": [
      {"id": "p_name", "name": "name", "required": true},
      {"id": "p_revenue", "name": "revenue", "required": true, "format": "currency_usd"},
      {"id": "p_share", "name": "share", "required": true, "format": "percentage"}
    ]}]}],
  "grading_criteria": [{"id": "ranked", "criterion": "Ranked by revenue, highest first?"}],
  "grade_thresholds": {"min_pass_rate": 1.0, "min_mean_score": 0.5}
}"###;

fn judge_env(judge: &JudgeServer) -> Vec<(&'static str, String)> {
    vec![
        ("ASSAY_JUDGE", "anthropic".to_string()),
        ("ASSAY_JUDGE_BASE_URL", judge.url.clone()),
        ("ASSAY_JUDGE_API_KEY", "sk-judge".to_string()),
        ("ASSAY_JUDGE_TIMEOUT", "2".to_string()),
    ]
}

#[test]
fn extraction_feeds_deterministic_field_checks_then_the_rubric_grades() {
    let d = project(EXTRACTING);
    let judge = JudgeServer::start(vec![
        // An unusable first answer gets one repair request.
        JudgeReply::Says("Here you go: the products are Widget Pro, Gadget and Doohickey.".into()),
        // Extraction: one revenue is not a USD amount, one share is missing.
        says(json!({"sections": {"Top products": {"default": [
            {"name": "Widget Pro", "revenue": "$12,400.00", "share": "48.2%"},
            {"name": "Gadget", "revenue": "8100.50 dollars", "share": "31.5%"},
            {"name": "Doohickey", "revenue": "$5,200.00", "share": null}
        ]}}})),
        says(
            json!([{"id": "ranked", "criterion": "Ranked by revenue, highest first?", "passed": true, "score": 0.9,
            "evidence": "12,400 > 8,100 > 5,200", "reasoning": "descending"}]),
        ),
    ]);
    let out = assay_env(
        d.path(),
        &["grade", SPEC_PATH, "--output", "good.md", "--json"],
        &judge_env(&judge),
    );
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let g = &v["grading"];
    let outcome = |id: &str| {
        g["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id}: {g:#}"))
    };
    assert_eq!(outcome("Top products/default:count_min")["passed"], true);
    assert_eq!(outcome("Top products/default:count_max")["passed"], true);
    assert_eq!(outcome("p_name:required")["passed"], true);
    assert_eq!(
        outcome("p_revenue:format")["evidence"],
        "entry 2: \"8100.50 dollars\""
    );
    assert!(
        outcome("p_share:required")["message"]
            .as_str()
            .unwrap()
            .contains("entry 3")
    );
    assert_eq!(
        g["extraction"]["sections"][0]["tiers"][0]["entries"][1]["name"],
        "Gadget"
    );
    assert_eq!(g["rubric"]["passed"], true);
    assert_eq!(g["grade"]["verdict"], "fail", "the field checks decide");

    // The extraction request fences the output and names every field.
    let reqs = judge.requests();
    assert_eq!(reqs.len(), 3, "extraction, its repair, the rubric");
    let repair = reqs[1].1["messages"][0]["content"].to_string();
    assert!(repair.contains("unusable: no JSON found"), "{repair}");
    let prompt = reqs[0].1["messages"][0]["content"].to_string();
    assert!(
        prompt.contains("<untrusted-output-") && prompt.contains(r#"\"revenue\""#),
        "{prompt}"
    );
}

#[test]
fn without_a_judge_extraction_is_not_graded_never_passed() {
    let d = project(EXTRACTING);
    let out = assay(
        d.path(),
        &["grade", SPEC_PATH, "--output", "good.md", "--judge", "none"],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(stdout(&out).starts_with("NOT GRADED"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("2 judge item(s) not graded"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn blind_ab_swaps_positions_and_a_position_bias_is_a_tie() {
    let d =
        project(r#"{"skill_name": "summarize-csv", "user_prompt": "Rank my products by revenue"}"#);
    write_tree(d.path(), &[("other.md", "## Top products\nno idea\n")]);
    let judge = JudgeServer::start(vec![
        JudgeReply::Prefers {
            better: "Widget Pro".into(),
            confidence: 0.9,
        },
        JudgeReply::Prefers {
            better: "Widget Pro".into(),
            confidence: 0.7,
        },
    ]);
    let out = assay_env(
        d.path(),
        &[
            "grade",
            SPEC_PATH,
            "--output",
            "good.md",
            "--against",
            "other.md",
            "--json",
        ],
        &judge_env(&judge),
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let c = &v["comparison"];
    assert_eq!(c["preferred"], "a", "{c:#}");
    assert_eq!(c["consistent"], true);
    assert!((c["confidence"].as_f64().unwrap() - 0.8).abs() < 1e-9);
    // Both orders were asked, and the request is clauditor's user_prompt.
    let reqs = judge.requests();
    assert_eq!(reqs.len(), 2);
    let firsts: Vec<bool> = reqs
        .iter()
        .map(|(_, r)| {
            let p = r["messages"][0]["content"].as_str().unwrap();
            assert!(p.contains("Rank my products by revenue"));
            p.find("Widget Pro").unwrap() < p.find("## Response 2").unwrap()
        })
        .collect();
    assert!(
        firsts.contains(&true) && firsts.contains(&false),
        "positions swapped"
    );

    // A judge that always picks whatever it sees first is caught: a tie at the lower confidence.
    let biased = JudgeServer::start(vec![
        says(json!({"preferred": "1", "confidence": 0.9, "reasoning": "first"})),
        says(json!({"preferred": "1", "confidence": 0.6, "reasoning": "first"})),
    ]);
    let out = assay_env(
        d.path(),
        &[
            "grade",
            SPEC_PATH,
            "--output",
            "good.md",
            "--against",
            "other.md",
        ],
        &judge_env(&biased),
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("tie (confidence 0.60; the two orders disagreed)"),
        "{}",
        stdout(&out)
    );

    // No judge, no comparison: said, and exit 3.
    let out = assay(
        d.path(),
        &[
            "grade",
            SPEC_PATH,
            "--output",
            "good.md",
            "--against",
            "other.md",
            "--judge",
            "none",
        ],
    );
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("not compared: judging is turned off"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn urls_reachable_refuses_loopback_unless_allowed() {
    let site = serve(axum::Router::new().route("/ok", axum::routing::any(|| async { "fine" })));
    let d = project(
        r#"{"skill_name": "summarize-csv", "assertions": [{"id": "live", "type": "urls_reachable", "count": 1}]}"#,
    );
    write_tree(d.path(), &[("links.md", &format!("See {site}/ok.\n"))]);
    let out = assay(d.path(), &["grade", SPEC_PATH, "--output", "links.md"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("refused: 127.0.0.1"),
        "{}",
        stdout(&out)
    );
    let out = assay(
        d.path(),
        &[
            "grade",
            SPEC_PATH,
            "--output",
            "links.md",
            "--allow-private-urls",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("1 of 1 URL(s) answered HEAD with 2xx"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn urls_reachable_is_checked_inside_a_run_on_the_runs_runtime() {
    // (The check is synchronous; inside `assay run` it blocks in place on the run's runtime.)
    let site = serve(axum::Router::new().route("/ok", axum::routing::any(|| async { "fine" })));
    let d = project(
        r#"{"skill_name": "summarize-csv", "assertions": [{"id": "live", "type": "urls_reachable", "count": 1}]}"#,
    );
    let say = format!("echo See {site}/ok.");
    let out = assay(
        d.path(),
        &[
            "run",
            "--harness",
            "command",
            "--command",
            &say,
            "--allow-private-urls",
            "--judge",
            "none",
            "--output-dir",
            "out",
            "--workspace-dir",
            "ws",
            "--sandbox",
            "none",
        ],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("1 passed"),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn a_run_folder_is_regraded_without_running_the_agent() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("agent.log");
    let spec = r#"{"skill_name": "greeting", "test_args": "Ada", "output_file": "greeting.txt",
      "assertions": [{"id": "names_ada", "type": "contains", "needle": "Hello, Ada!"}]}"#;
    let toml = format!(
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"echo ran >> {}; echo 'Hello, Ada!' > greeting.txt\"]\n",
        log.display()
    );
    write_tree(
        d.path(),
        &[
            ("assay.toml", &toml),
            (".claude/commands/greeting.md", "Greet.\n"),
            (".claude/commands/greeting.eval.json", spec),
        ],
    );
    // Unsandboxed: the agent counts its runs in a log outside its workspace, which the
    // sandbox would (rightly) stop.
    let out = assay(
        d.path(),
        &["run", "--output-dir", "out", "--sandbox", "none"],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));

    // The checks change; re-grading applies them to the recorded output.
    write_tree(
        d.path(),
        &[(
            ".claude/commands/greeting.eval.json",
            &spec.replace("Hello, Ada!", "Goodbye"),
        )],
    );
    let out = assay(d.path(), &["grade", "out"]);
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("FAIL       clauditor:greeting/greeting run 1 [0/1 checks]"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("re-graded 1 case-run(s)"));
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "ran\n",
        "the agent ran once"
    );
    let rs = results(&d.path().join("out"));
    let r = &rs["greeting"];
    assert_eq!(r["grade"]["verdict"], "fail");
    assert!(r["regraded"].is_string());
    assert_eq!(
        r["checks"][0]["message"],
        "\"Goodbye\" is not in the output (12 characters)"
    );
    let dir = Path::new(r["dir"].as_str().unwrap());
    assert_eq!(
        read_json(&dir.join("grading.json"))["grade"]["verdict"],
        "fail"
    );

    // A folder that is not a run, and --output on a run, are bad input.
    assert_eq!(
        code(&assay(d.path(), &["grade", "out", "--output", "x.md"])),
        2
    );
}

#[test]
fn a_whitespace_needle_is_a_real_check_and_only_the_empty_one_is_refused() {
    let spec = r#"{"skill_name": "summarize-csv", "assertions": [
        {"id": "one_word", "type": "not_contains", "needle": " "},
        {"id": "has_tab", "type": "contains", "needle": "\t"}
    ]}"#;
    let d = project(spec);
    write_tree(
        d.path(),
        &[("spaced.md", "two\twords here"), ("tight.md", "one\tword")],
    );
    let out = assay(d.path(), &["validate", SPEC_PATH]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));

    let out = assay(
        d.path(),
        &["grade", SPEC_PATH, "--output", "spaced.md", "--json"],
    );
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let checks = &v["grading"]["checks"];
    assert_eq!(checks[0]["id"], "one_word");
    assert_eq!(checks[0]["passed"], false, "{checks:#}");
    assert_eq!(checks[1]["passed"], true, "{checks:#}");

    let out = assay(d.path(), &["grade", SPEC_PATH, "--output", "tight.md"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));

    // The empty needle is found in every text: refused at load time, where it is written.
    let empty = r#"{"skill_name": "summarize-csv", "assertions": [
        {"id": "nothing", "type": "not_contains", "needle": ""}
    ]}"#;
    let d = project(empty);
    let out = assay(d.path(), &["validate", SPEC_PATH]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let text = stdout(&out) + &stderr(&out);
    assert!(text.contains("summarize-csv.eval.json:2:"), "{text}");
    assert!(text.contains("assertions[0].needle"), "{text}");
    assert!(text.contains("must not be empty"), "{text}");
}

/// A case-run whose output was cut at assay's bound (what followed could have failed a
/// `not_contains`) is never a pass: not when it ran, and not when its folder is re-graded.
#[test]
fn a_cut_output_is_never_regraded_into_a_pass() {
    let d = tempfile::tempdir().unwrap();
    let spec = r#"{"skill_name": "greeting", "test_args": "Ada",
      "assertions": [{"id": "no_rm", "type": "not_contains", "needle": "rm -rf /"}]}"#;
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"echo\", \"Hello, Ada!\"]\n",
            ),
            (".claude/commands/greeting.md", "Greet.\n"),
            (".claude/commands/greeting.eval.json", spec),
        ],
    );
    let out = assay(d.path(), &["run", "--output-dir", "out"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    // As assay records an output past its bound (the part kept is what the checks see).
    let dir = d.path().join("out/clauditor_greeting/greeting/run-1");
    let mut r = read_json(&dir.join("result.json"));
    r["output_truncated"] = serde_json::json!(true);
    r["stdout_bytes"] = serde_json::json!(70_000_000u64);
    std::fs::write(dir.join("result.json"), r.to_string()).unwrap();
    let out = assay(d.path(), &["grade", "out"]);
    assert_eq!(code(&out), 3, "{}\n{}", stdout(&out), stderr(&out));
    let r = read_json(&dir.join("result.json"));
    assert_eq!(r["grade"]["verdict"], "not-graded", "{r:#}");
    assert!(
        r["grade"]["reasons"][0]
            .as_str()
            .unwrap()
            .starts_with("the agent's output was cut (70000000 bytes written"),
        "{r:#}"
    );
}

/// A project of `files` files whose agent (the `command` harness) writes `made.txt` and
/// removes `gone.txt`, and two Skillet cases whose checks look at project files and at what
/// the agent changed.
fn files_project(dir: &Path, files: usize) {
    let case = |name: &str| {
        format!(
            "timestamp: 2026-11-26T00:00:00Z\nname: {name}\nprompt: go\nexpected: x\nassertions:\n  - type: contains\n    value: done\nx-assay-checks:\n  - {{type: file_exists, path: src/f7.txt}}\n  - {{type: file_exists, path: made.txt}}\n  - {{type: file_exists, path: gone.txt, negate: true}}\n"
        )
    };
    let mut tree: Vec<(String, String)> = vec![
        (
            "assay.toml".into(),
            "[run]\nharness = \"command\"\nsandbox = \"none\"\n[harness.command]\ncommand = [\"bash\", \"agent.sh\"]\n".into(),
        ),
        ("agent.sh".into(), "echo new > made.txt\nrm gone.txt\necho done\n".into()),
        ("gone.txt".into(), "x".into()),
        ("evals/files/001.yaml".into(), case("one")),
        ("evals/files/002.yaml".into(), case("two")),
    ];
    tree.extend((0..files).map(|i| (format!("src/f{i}.txt"), format!("{i}"))));
    let tree: Vec<(&str, &str)> = tree.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    write_tree(dir, &tree);
}

/// Every case-run's `workspace.json` in `run`: small, and naming no untouched project file.
fn assert_records_only_changes(run: &Path) {
    let mut seen = 0;
    for r in results(run).values() {
        let ws = Path::new(r["dir"].as_str().unwrap()).join("workspace.json");
        let text = std::fs::read_to_string(&ws).unwrap();
        assert!(
            text.len() < 1024,
            "{} is {} bytes",
            ws.display(),
            text.len()
        );
        assert!(!text.contains("src/f7.txt"), "{text}");
        assert!(
            text.contains("made.txt") && text.contains("gone.txt"),
            "{text}"
        );
        seen += 1;
    }
    assert_eq!(seen, 2);
}

/// `assay grade <run>` passes every case-run again: the project files the checks name are
/// read from the run folder's one listing of the project (run folders are kept in `.assay/`,
/// which is never copied into a workspace).
fn assert_regrades(dir: &Path, run: &str) {
    let listings: Vec<_> = std::fs::read_dir(dir.join(run).join("project-files"))
        .unwrap()
        .collect();
    assert_eq!(listings.len(), 1, "one listing of the project in {run}");
    let out = assay(dir, &["grade", run]);
    assert_eq!(code(&out), 0, "{run}: {}\n{}", stdout(&out), stderr(&out));
}

#[test]
fn a_run_records_what_changed_once_over_the_projects_listing_and_regrades_from_it() {
    let d = tempfile::tempdir().unwrap();
    files_project(d.path(), 300);
    let out = assay(d.path(), &["run", "--output-dir", ".assay/whole"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert_records_only_changes(&d.path().join(".assay/whole"));
    assert_regrades(d.path(), ".assay/whole");
    // A listing altered after the run: re-grading cannot see the project's files, so no
    // case-run is a pass (the negated check would otherwise pass on a file list without them).
    let listings = d.path().join(".assay/whole/project-files");
    let listing = std::fs::read_dir(&listings)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let kept = std::fs::read(&listing).unwrap();
    std::fs::write(&listing, "[]").unwrap();
    let out = assay(d.path(), &["grade", ".assay/whole"]);
    assert_eq!(code(&out), 3, "{}\n{}", stdout(&out), stderr(&out));
    assert!(!stdout(&out).contains("PASS"), "{}", stdout(&out));
    std::fs::write(&listing, kept).unwrap();

    // Shards merged: the listing comes along.
    for (name, filter) in [(".assay/s1", "*/001"), (".assay/s2", "*/002")] {
        let out = assay(d.path(), &["run", "--output-dir", name, "--filter", filter]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let out = assay(
        d.path(),
        &[
            "report",
            "merge",
            ".assay/s1",
            ".assay/s2",
            "--output-dir",
            ".assay/all",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_regrades(d.path(), ".assay/all");

    // Through the cache: a restored case-run brings its listing into the new run folder.
    let key = tempfile::tempdir().unwrap();
    for name in [".assay/c1", ".assay/c2"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["run", "--output-dir", name])
            .current_dir(d.path())
            .env_remove("ASSAY_NO_CACHE")
            .env("ASSAY_CACHE_KEY", key.path().join("cache.key"))
            .env("XDG_DATA_HOME", key.path().join("data"))
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let restored = results(&d.path().join(".assay/c2"));
    assert!(
        restored.values().all(|r| r["cached"].is_object()),
        "{restored:#?}"
    );
    assert_regrades(d.path(), ".assay/c2");
}

/// `assay grade <run-dir>` after a case left its spec: that case-run is skipped and said so
/// (in words and in the JSON), the others graded again.
#[test]
fn a_case_gone_from_its_spec_is_skipped_when_a_run_is_regraded() {
    let d = tempfile::tempdir().unwrap();
    let evals = |n: usize| {
        let all = [
            json!({"id": 1, "prompt": "Write a.", "x-assay-checks": [{"type": "contains", "needle": "done"}]}),
            json!({"id": 2, "prompt": "Write b.", "x-assay-checks": [{"type": "contains", "needle": "done"}]}),
        ];
        json!({"skill_name": "brief", "evals": all[..n]}).to_string()
    };
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"echo\", \"done\"]\n",
            ),
            (
                "skills/brief/SKILL.md",
                "---\nname: brief\ndescription: Writes briefs.\n---\nWrite.\n",
            ),
            ("skills/brief/evals/evals.json", &evals(2)),
        ],
    );
    let out = assay(d.path(), &["run", "--output-dir", "out"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    write_tree(d.path(), &[("skills/brief/evals/evals.json", &evals(1))]);
    let out = assay(d.path(), &["grade", "out"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("skipped    skill-creator:brief/2 run 1: the case is no longer in")
            && stdout(&out).contains("re-graded 1 case-run(s)"),
        "{}",
        stdout(&out)
    );
    let out = assay(d.path(), &["grade", "out", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let skipped: Vec<&serde_json::Value> = v["case_runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.get("skipped"))
        .collect();
    assert_eq!(
        skipped,
        [&json!("the case is no longer in the spec")],
        "{v:#}"
    );
}
