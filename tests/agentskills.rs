//! agentskills.io's eval conventions (issue 45, item 7), as its guides "Evaluating skills" and
//! "Optimizing descriptions" define them: `evals.json`'s `assertions`, each case-run's
//! `grading.json` with `assertion_results` and `summary` and its `timing.json`,
//! `benchmark.json`'s `run_summary` with numeric deltas, and the trigger query files
//! `train_queries.json` and `validation_queries.json` (the holdout of `assay optimize`).

use crate::support;

use std::path::Path;

use serde_json::json;
use support::judge_server::{JudgeServer, says};
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
