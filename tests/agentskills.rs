//! agentskills.io's eval conventions (issue 45, item 7), as its guides "Evaluating skills" and
//! "Optimizing descriptions" define them: `evals.json`'s `assertions`, each case-run's
//! `grading.json` with `assertion_results` and `summary` and its `timing.json`,
//! `benchmark.json`'s `run_summary` with numeric deltas, and the trigger query files
//! `train_queries.json` and `validation_queries.json` (the holdout of `assay optimize`).

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::judge_server::{JudgeServer, says};
use support::model_server::{ModelServer, text, tool};
use support::*;

const SKILL: &str = "---\nname: brief\ndescription: Writes briefs.\n---\nWrite a brief.\n";

/// An agent that writes brief.md only when the skill is installed in its workspace.
const TOML: &str = "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"if [ -f .claude/skills/brief/SKILL.md ]; then echo '# Brief' > brief.md; fi; echo done\"]\n";

/// agentskills.io's `evals/evals.json`: `assertions`, sentences a grader grades.
const EVALS: &str = r#"{"skill_name": "brief", "evals": [
  {"id": 1, "prompt": "Write brief.md from the notes.",
   "expected_output": "A one-page brief.md.", "files": [],
   "assertions": ["brief.md exists", "The brief has a title"]}
]}"#;

fn project(evals: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", TOML),
            ("skills/brief/SKILL.md", SKILL),
            ("skills/brief/evals/evals.json", evals),
        ],
    );
    d
}

fn judged(dir: &Path, judge: &JudgeServer, args: &[&str]) -> std::process::Output {
    assay_env(
        dir,
        args,
        &[
            ("ASSAY_JUDGE", "anthropic".into()),
            ("ASSAY_JUDGE_BASE_URL", judge.url.clone()),
            ("ASSAY_JUDGE_API_KEY", "sk-judge".into()),
            ("ASSAY_JUDGE_ATTEMPTS", "1".into()),
        ],
    )
}

/// The judge's grading of the two assertions: the first passes, the second fails.
fn one_of_two() -> support::judge_server::JudgeReply {
    says(json!({
        "expectations": [
            {"text": "brief.md exists", "passed": true, "evidence": "brief.md: '# Brief'"},
            {"text": "The brief has a title", "passed": false, "evidence": "no title line"}
        ],
        "eval_feedback": {"suggestions": [], "overall": ""}
    }))
}

fn case_dir(run: &Path, case: &str) -> std::path::PathBuf {
    Path::new(results(run)[case]["dir"].as_str().unwrap()).to_path_buf()
}

#[test]
fn assertions_are_graded_into_grading_json_assertion_results_and_summary() {
    let d = project(EVALS);
    let judge = JudgeServer::start(vec![one_of_two()]);
    let out = judged(d.path(), &judge, &["run", "--output-dir", "out"]);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 1, "{said}");
    // The assertions are what the judge was asked to grade.
    let asked = judge.requests()[0].1.to_string();
    assert!(
        asked.contains("brief.md exists") && asked.contains("The brief has a title"),
        "{asked}"
    );
    let g = read_json(&case_dir(&d.path().join("out"), "1").join("grading.json"));
    let results = g["assertion_results"]
        .as_array()
        .expect("assertion_results");
    assert_eq!(results.len(), 2, "{g:#}");
    for r in results {
        let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["text", "passed", "evidence"], "{r:#}");
    }
    assert_eq!(results[0]["text"], "brief.md exists");
    assert_eq!(results[0]["passed"], true);
    assert_eq!(results[1]["passed"], false);
    assert_eq!(results[1]["evidence"], "no title line");
    // skill-creator's `expectations` say the same, and one summary serves both readers.
    assert_eq!(g["expectations"], g["assertion_results"], "{g:#}");
    assert_eq!(
        g["summary"],
        json!({"passed": 1, "failed": 1, "total": 2, "pass_rate": 0.5}),
        "{g:#}"
    );
}

#[test]
fn each_case_run_has_timing_json_beside_grading_json() {
    let d = project(
        r#"{"evals": [{"id": 1, "prompt": "Write brief.md.",
            "x-assay-checks": [{"type": "file_exists", "path": "brief.md"}]}]}"#,
    );
    let out = assay(
        d.path(),
        &["run", "--output-dir", "out", "--reporter", "skill-creator"],
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let run = d.path().join("out");
    let r = &results(&run)["1"];
    let timing = read_json(&case_dir(&run, "1").join("timing.json"));
    let keys: Vec<&String> = timing.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["total_tokens", "duration_ms", "total_duration_seconds"],
        "{timing:#}"
    );
    assert_eq!(timing["duration_ms"], r["duration_ms"], "{timing:#}");
    let tokens = r["usage"]["input_tokens"].as_u64().unwrap()
        + r["usage"]["output_tokens"].as_u64().unwrap();
    assert_eq!(timing["total_tokens"], tokens, "{timing:#}");
    let seconds = timing["total_duration_seconds"].as_f64().unwrap();
    let ms = timing["duration_ms"].as_f64().unwrap();
    assert!((seconds - ms / 1000.0).abs() < 0.05, "{timing:#}");
    // skill-creator's workspace keeps it beside grading.json, where its aggregator reads it.
    let ws = run.join("skill-creator/eval-1/with_skill/run-1");
    assert!(ws.join("grading.json").is_file());
    assert_eq!(read_json(&ws.join("timing.json")), timing);
    // A folder recorded before timing.json was written gets one there all the same, when
    // `assay grade` writes its reports again.
    std::fs::remove_file(case_dir(&run, "1").join("timing.json")).unwrap();
    std::fs::remove_file(ws.join("timing.json")).unwrap();
    let out = assay(d.path(), &["grade", "out"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read_json(&ws.join("timing.json")), timing);
}

#[test]
fn benchmark_run_summary_deltas_are_numbers_both_tools_read() {
    let d = project(
        r#"{"evals": [{"id": 1, "prompt": "Write brief.md.",
            "x-assay-checks": [{"type": "file_exists", "path": "brief.md"}]}]}"#,
    );
    let out = assay(
        d.path(),
        &[
            "run",
            "--baseline",
            "--output-dir",
            "out",
            "--reporter",
            "skill-creator",
        ],
    );
    // The baseline fails (no skill, no brief.md): that is the skill's worth, not a failure.
    assert!(code(&out) <= 1, "{}{}", stdout(&out), stderr(&out));
    let b = read_json(&d.path().join("out/benchmark.json"));
    let summary = &b["run_summary"];
    for arm in ["with_skill", "without_skill"] {
        for field in ["pass_rate", "time_seconds", "tokens"] {
            assert!(summary[arm][field]["mean"].is_number(), "{b:#}");
            assert!(summary[arm][field]["stddev"].is_number(), "{b:#}");
        }
    }
    let delta = &summary["delta"];
    assert_eq!(delta["pass_rate"], 1.0, "{b:#}");
    assert!(
        delta["time_seconds"].is_number() && delta["tokens"].is_number(),
        "{b:#}"
    );
    let time = summary["with_skill"]["time_seconds"]["mean"]
        .as_f64()
        .unwrap()
        - summary["without_skill"]["time_seconds"]["mean"]
            .as_f64()
            .unwrap();
    assert!(
        (delta["time_seconds"].as_f64().unwrap() - time).abs() <= 0.05 + 1e-9,
        "{b:#}"
    );
}

/// Five queries the skill is for and five it is not, split 3 + 3 into train, 2 + 2 into
/// validation, as the guide splits them (~60/40, both kinds in each).
const POSITIVE: [&str; 5] = [
    "draft a product brief for the billing revamp",
    "turn my launch notes into a one-page brief",
    "I need a PRD summary for the mobile app",
    "summarize this feature plan as a product brief",
    "write the brief for our Q3 pricing change",
];
const NEGATIVE: [&str; 5] = [
    "what is the capital of Australia",
    "fix the typo in README.md",
    "how many days are in a leap year",
    "translate hello into French",
    "list the files in this folder",
];

fn queries(positive: &[&str], negative: &[&str]) -> String {
    let list: Vec<Value> = positive
        .iter()
        .map(|q| json!({"query": q, "should_trigger": true}))
        .chain(
            negative
                .iter()
                .map(|q| json!({"query": q, "should_trigger": false})),
        )
        .collect();
    serde_json::to_string_pretty(&list).unwrap()
}

fn trigger_project(validation: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/skills/brief/SKILL.md", SKILL),
            (
                ".claude/skills/brief/evals/train_queries.json",
                &queries(&POSITIVE[..3], &NEGATIVE[..3]),
            ),
            (
                ".claude/skills/brief/evals/validation_queries.json",
                validation,
            ),
        ],
    );
    d
}

#[test]
fn train_queries_are_a_trigger_suite_and_validation_queries_its_holdout() {
    let d = trigger_project(&queries(&POSITIVE[3..], &NEGATIVE[3..]));
    let out = assay(d.path(), &["validate", "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap_or(Value::Null);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    // Read, not warned about as an unread trigger file.
    assert!(
        !v["problems"].to_string().contains("unread-triggers"),
        "{v:#}"
    );
    assert_eq!(v["summary"]["trigger_cases"], 10, "{v:#}");

    let out = assay(d.path(), &["list", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let suites: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let triggers = suites[0]["triggers"].as_array().unwrap();
    let held: Vec<(&str, bool)> = triggers
        .iter()
        .map(|t| (t["id"].as_str().unwrap(), t["holdout"] == true))
        .collect();
    assert_eq!(held.len(), 10, "{suites:#}");
    assert!(
        held[..6]
            .iter()
            .all(|(id, h)| id.starts_with("trigger-") && !h),
        "{held:?}"
    );
    assert!(
        held[6..]
            .iter()
            .all(|(id, h)| id.starts_with("validation-") && *h),
        "{held:?}"
    );
    assert_eq!(triggers[6]["query"], POSITIVE[3]);
}

#[test]
fn a_validation_query_that_is_also_a_training_query_stops_everything_naming_it() {
    let d = trigger_project(&queries(&[POSITIVE[3], POSITIVE[0]], &NEGATIVE[3..]));
    let out = assay(d.path(), &["validate"]);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 2, "{said}");
    assert!(
        said.contains("validation_queries.json:7:") && said.contains("train_queries.json line 2"),
        "{said}"
    );

    // A query that is not `{query, should_trigger}` is an error at its place, too.
    let d = trigger_project(r#"[{"query": "q", "should_trigger": "yes"}]"#);
    let out = assay(d.path(), &["run", "--dry-run"]);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 2, "{said}");
    assert!(
        said.contains("validation_queries.json:1:") && said.contains("should_trigger"),
        "{said}"
    );
}

/// A scripted model that uses the skill on every query it is for, whatever its description.
fn fires_on_positives() -> ModelServer {
    let server = ModelServer::start();
    for q in POSITIVE {
        server.script_each(
            q,
            None,
            vec![tool("Skill", json!({"skill": "brief"})), text("done")],
        );
    }
    server
}

#[test]
fn assay_run_runs_the_training_and_the_validation_queries() {
    let d = trigger_project(&queries(&POSITIVE[3..], &NEGATIVE[3..]));
    let server = fires_on_positives();
    fire_canary(&server, "brief");
    let claude = agent_cli("claude");
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--harness",
            "claude-code",
            "--pass-env",
            "CLAUDE_CODE_MAX_RETRIES",
            "--trigger-runs",
            "1",
            "--output-dir",
            "out",
        ],
        &claude_env(&claude, &server),
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let r = results(&d.path().join("out"));
    let ids: Vec<&str> = r.keys().map(String::as_str).collect();
    assert_eq!(
        ids,
        [
            "trigger-1",
            "trigger-2",
            "trigger-3",
            "trigger-4",
            "trigger-5",
            "trigger-6",
            "validation-1",
            "validation-2",
            "validation-3",
            "validation-4"
        ],
        "{r:#?}"
    );
    for (id, query) in [("trigger-1", POSITIVE[0]), ("validation-2", POSITIVE[4])] {
        assert_eq!(r[id]["trigger"]["query"], query);
        assert_eq!(r[id]["trigger"]["fired"], true, "{:#}", r[id]);
    }
    assert_eq!(r["validation-4"]["trigger"]["fired"], false);
}

#[test]
fn optimize_measures_on_train_queries_and_holds_out_validation_queries() {
    let d = trigger_project(&queries(&POSITIVE[3..], &NEGATIVE[3..]));
    let server = fires_on_positives();
    let proposer = JudgeServer::start(Vec::new());
    let claude = agent_cli("claude");
    let mut env = claude_env(&claude, &server);
    env.retain(|(k, _)| *k != "ASSAY_JUDGE");
    env.push(("ASSAY_JUDGE_BASE_URL", proposer.url.clone()));
    env.push(("ASSAY_JUDGE_API_KEY", "sk-proposer".into()));
    let out = assay_env(
        d.path(),
        &[
            "optimize",
            "description",
            ".claude/skills/brief",
            "--harness",
            "claude-code",
            "--pass-env",
            "CLAUDE_CODE_MAX_RETRIES",
            "--proposer",
            "anthropic:claude-proposer",
            "--trigger-runs",
            "1",
            "--iterations",
            "1",
            "--output-dir",
            "opt",
        ],
        &env,
    );
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{said}");
    assert!(said.contains("validation_queries.json"), "{said}");
    let rec = read_json(&d.path().join("opt/optimize.json"));
    let texts = |half: &str| -> Vec<String> {
        rec[half]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q["query"].as_str().unwrap().to_string())
            .collect()
    };
    let (train, holdout) = (texts("train"), texts("holdout"));
    let expected_train: Vec<&str> = POSITIVE[..3]
        .iter()
        .chain(&NEGATIVE[..3])
        .copied()
        .collect();
    let expected_holdout: Vec<&str> = POSITIVE[3..]
        .iter()
        .chain(&NEGATIVE[3..])
        .copied()
        .collect();
    assert_eq!(train, expected_train, "{rec:#}");
    assert_eq!(holdout, expected_holdout, "{rec:#}");
    assert_eq!(
        rec["holdout_from"],
        json!([".claude/skills/brief/evals/validation_queries.json"]),
        "{rec:#}"
    );
    // The start was measured on both, every query right: nothing to propose.
    assert_eq!(
        rec["start"]["holdout"]["queries"].as_array().unwrap().len(),
        4,
        "{rec:#}"
    );
    assert!(proposer.requests().is_empty());
}
