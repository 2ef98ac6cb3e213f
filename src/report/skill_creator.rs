//! skill-creator's `benchmark.json` (its `references/schemas.md`), so the files skill authors
//! already keep — and skill-creator's eval viewer — read an assay run: `runs[]` with
//! `configuration` `with_skill` (the skill) or `without_skill` (`--baseline`), each run's
//! `result` and graded `expectations` (every check and judge expectation, with its evidence);
//! `run_summary` with each configuration's mean, standard deviation, minimum and maximum of
//! the pass rate, time and tokens, and the `delta` as numbers (agentskills.io's "Evaluating
//! skills" shape, which skill-creator's viewer reads too: see [`signed_difference`]). Each
//! case-run's `grading.json` and `timing.json` (written by every run) are the per-run files of
//! the same schemas. A
//! `--variant-path` arm is neither configuration and is left out, said in `notes`. A case-run
//! with no verdict (not graded: the judge failed or there was none; an error; skipped; never
//! recorded) is left out of `runs` and of every figure, as skill-creator's
//! `aggregate_benchmark.py` leaves out a run with no `grading.json`, and named in `notes`: it
//! is never a pass rate of 0.
//!
//! Beside it, [`write_workspace`] lays the run out as skill-creator's workspace, which its
//! `eval-viewer/generate_review.py` reads: `skill-creator/eval-<id>/<configuration>/run-<n>/`
//! with `outputs/` (the agent's output and the files it wrote), `grading.json`, `timing.json`
//! and `eval_metadata.json` (the prompt), and `skill-creator/benchmark.json`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::model::{CaseRun, Report};
use crate::record::case_run::{Arm, Kind};
use crate::record::layout;

/// The case-runs skill-creator has a configuration for: the skill's and the baseline's.
fn configured(r: &Report) -> Vec<(&CaseRun, &'static str)> {
    r.case_runs
        .iter()
        .filter(|c| c.kind == Kind::Case)
        .filter_map(|c| match c.variant {
            Arm::Skill => Some((c, "with_skill")),
            Arm::Baseline => Some((c, "without_skill")),
            _ => None,
        })
        .collect()
}

/// Each case's `eval_id`, by suite and case: the case ids when they are all distinct numbers,
/// else each case's place among them (1, 2, …).
fn eval_ids(runs: &[(&CaseRun, &str)]) -> Vec<((String, String), u64)> {
    let mut cases: Vec<(String, String)> = Vec::new();
    for (c, _) in runs {
        let key = (c.suite.clone(), c.case.clone());
        if !cases.contains(&key) {
            cases.push(key);
        }
    }
    let numbers: Vec<Option<u64>> = cases.iter().map(|(_, c)| c.parse().ok()).collect();
    let mut distinct: Vec<u64> = numbers.iter().flatten().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    let numeric = distinct.len() == cases.len();
    cases
        .into_iter()
        .zip(numbers)
        .enumerate()
        .map(|(i, (key, n))| {
            (
                key,
                if numeric {
                    n.unwrap_or(0)
                } else {
                    i as u64 + 1
                },
            )
        })
        .collect()
}

/// An eval's name as skill-creator's viewer shows it: its `name`, else its id.
fn eval_name(c: &CaseRun) -> &str {
    c.name.as_deref().unwrap_or(&c.case)
}

fn id_of(ids: &[((String, String), u64)], c: &CaseRun) -> u64 {
    ids.iter()
        .find(|((suite, case), _)| *suite == c.suite && *case == c.case)
        .map_or(0, |(_, n)| *n)
}

/// Writes skill-creator's workspace into `run_dir/skill-creator` (see the module's note);
/// returns the files written.
pub fn write_workspace(r: &Report, run_dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let root = run_dir.join("skill-creator");
    let runs = configured(r);
    let ids = eval_ids(&runs);
    let mut written = Vec::new();
    for (c, configuration) in &runs {
        let from = run_dir.join(&c.dir);
        let to = root
            .join(format!("eval-{}", id_of(&ids, c)))
            .join(configuration)
            .join(format!("run-{}", c.run));
        let metadata =
            json!({"eval_id": id_of(&ids, c), "eval_name": eval_name(c), "prompt": c.prompt});
        let mut files = vec![
            (
                to.join("eval_metadata.json"),
                metadata.to_string().into_bytes(),
            ),
            // Beside grading.json, where skill-creator's aggregator looks for time and tokens.
            (to.join(layout::TIMING_JSON), timing(c)),
        ];
        let mut copy = |src: PathBuf, dst: PathBuf| {
            // Only regular files of assay's own record, and not without bound.
            if let Ok(m) = std::fs::symlink_metadata(&src)
                && m.is_file()
                && m.len() <= MAX_COPY
                && let Ok(bytes) = std::fs::read(&src)
            {
                files.push((dst, bytes));
            }
        };
        // A run with no verdict has no grading here, so skill-creator's aggregator skips it.
        if has_verdict(c) {
            copy(
                from.join(layout::GRADING_JSON),
                to.join(layout::GRADING_JSON),
            );
        }
        copy(from.join(layout::OUTPUT_TXT), to.join("outputs/output.txt"));
        for e in std::fs::read_dir(from.join("artifacts"))
            .into_iter()
            .flatten()
            .flatten()
        {
            copy(e.path(), to.join("outputs").join(e.file_name()));
        }
        for (path, bytes) in files {
            crate::record::write_atomic(&path, &bytes)?;
            written.push(path);
        }
    }
    let bench = root.join(layout::BENCHMARK_JSON);
    crate::record::write_atomic(&bench, render(r).as_bytes())?;
    written.push(bench);
    Ok(written)
}

/// A case-run's `timing.json`, from its record: what its folder holds, and there too for a
/// folder recorded before assay wrote one.
fn timing(c: &CaseRun) -> Vec<u8> {
    let usage = crate::record::agent::Usage {
        input_tokens: c.input_tokens,
        output_tokens: c.output_tokens,
        ..Default::default()
    };
    let t = crate::record::timing::Timing::of(&usage, c.duration_ms);
    serde_json::to_vec_pretty(&t).unwrap_or_default()
}

/// The largest file copied into the workspace.
const MAX_COPY: u64 = 16 << 20;

/// Whether a case-run was graded pass or fail: only those have a pass rate.
fn has_verdict(c: &CaseRun) -> bool {
    matches!(
        c.outcome,
        crate::record::Outcome::Passed | crate::record::Outcome::Failed
    )
}

/// The notes naming each case-run left out for want of a verdict (the first 20).
fn left_out(runs: &[(&CaseRun, &str)], ids: &[((String, String), u64)]) -> Vec<String> {
    let out: Vec<&(&CaseRun, &str)> = runs.iter().filter(|(c, _)| !has_verdict(c)).collect();
    let mut notes: Vec<String> = out
        .iter()
        .take(20)
        .map(|(c, configuration)| {
            format!(
                "eval {} ({}) {configuration} run {} is left out of runs and run_summary: {}{}",
                id_of(ids, c),
                eval_name(c),
                c.run,
                c.outcome.word(),
                c.reason
                    .as_deref()
                    .map(|r| format!(" ({})", crate::text::gist(r, 200)))
                    .unwrap_or_default()
            )
        })
        .collect();
    if out.len() > 20 {
        notes.push(format!(
            "and {} more case-runs with no verdict are left out",
            out.len() - 20
        ));
    }
    notes
}

pub fn render(r: &Report) -> String {
    let runs = configured(r);
    let ids = eval_ids(&runs);
    let entries: Vec<Value> = runs
        .iter()
        .filter(|(c, _)| has_verdict(c))
        .map(|(c, configuration)| run(c, configuration, Value::from(id_of(&ids, c))))
        .collect();
    let summary = |configuration: &str| {
        let results: Vec<&Value> = entries
            .iter()
            .filter(|e| e["configuration"] == configuration)
            .map(|e| &e["result"])
            .collect();
        let of = |field: &str| stats(results.iter().filter_map(|x| x[field].as_f64()));
        json!({"pass_rate": of("pass_rate"), "time_seconds": of("time_seconds"), "tokens": of("tokens")})
    };
    let (with, without) = (summary("with_skill"), summary("without_skill"));
    let delta = |field: &str, digits: i32| {
        signed_difference(
            with[field]["mean"].as_f64().unwrap_or(0.0),
            without[field]["mean"].as_f64().unwrap_or(0.0),
            digits,
        )
    };
    let mut notes: Vec<String> = left_out(&runs, &ids);
    if r.case_runs.iter().any(|c| c.variant == Arm::Variant) {
        notes.push("the --variant-path arm is neither with_skill nor without_skill and is left out; assay's report.json has it".into());
    }
    let doc = json!({
        "metadata": {
            "skill_name": skill_name(r),
            "executor_model": r.case_runs.iter().find_map(|c| c.model.clone()).unwrap_or_default(),
            "timestamp": r.started.clone().unwrap_or_default(),
            "evals_run": ids.iter().map(|(_, n)| *n).collect::<Vec<_>>(),
            "runs_per_configuration": runs.iter().map(|(c, _)| c.run).max().unwrap_or(0),
        },
        "runs": entries,
        "run_summary": {
            "with_skill": with.clone(),
            "without_skill": without.clone(),
            "delta": {
                "pass_rate": delta("pass_rate", 2),
                "time_seconds": delta("time_seconds", 1),
                "tokens": delta("tokens", 0),
            },
        },
        "notes": notes,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// The skill's name: of the first suite's case-runs, its suite name without the format.
fn skill_name(r: &Report) -> String {
    r.case_runs
        .first()
        .map(|c| {
            c.suite
                .split_once(':')
                .map_or(c.suite.as_str(), |(_, n)| n)
                .to_string()
        })
        .unwrap_or_default()
}

/// One case-run as a `runs[]` entry: every check and judge expectation graded.
fn run(c: &CaseRun, configuration: &str, eval_id: Value) -> Value {
    // As in each case-run's grading.json: the judge's expectations, then every check.
    let mut expectations: Vec<Value> = c
        .judge
        .as_ref()
        .and_then(|j| j.expectations.as_ref())
        .map(|g| g.expectations.iter().map(|e| json!(e)).collect())
        .unwrap_or_default();
    expectations.extend(c.checks.iter().map(|k| json!(k.as_expectation())));
    let total = expectations.len();
    let passed = expectations.iter().filter(|e| e["passed"] == true).count();
    let errors = usize::from(c.outcome == crate::record::Outcome::Error);
    json!({
        "eval_id": eval_id,
        "eval_name": eval_name(c),
        "configuration": configuration,
        "run_number": c.run,
        "result": {
            // A run with nothing graded counts by its outcome.
            "pass_rate": if total == 0 {
                f64::from(u8::from(c.outcome == crate::record::Outcome::Passed))
            } else {
                passed as f64 / total as f64
            },
            "passed": passed,
            "failed": total - passed,
            "total": total,
            "time_seconds": c.duration_ms as f64 / 1000.0,
            "tokens": c.input_tokens.saturating_add(c.output_tokens),
            "tool_calls": c.result.tool_calls.values().sum::<usize>(),
            "errors": errors,
        },
        "expectations": expectations,
        "notes": c.reason.iter().collect::<Vec<_>>(),
    })
}

/// `with - without`, rounded to `digits` decimals, as a JSON number: agentskills.io's
/// `delta` is numbers, and skill-creator's readers (its viewer's `parseFloat`, its Markdown)
/// take a number where its schema shows a signed string (`"+0.50"`). Never `-0`; a whole
/// number when `digits` is 0 (tokens).
fn signed_difference(with: f64, without: f64, digits: i32) -> Value {
    let scale = 10f64.powi(digits);
    // `+ 0.0` turns a rounded `-0.0` into `0.0`.
    let d = ((with - without) * scale).round() / scale + 0.0;
    if !d.is_finite() {
        return json!(0);
    }
    if digits == 0 && d.abs() < 9.0e15 {
        return json!(d as i64);
    }
    json!(d)
}

/// Mean, sample standard deviation, minimum and maximum (zeros without values).
fn stats(values: impl Iterator<Item = f64>) -> Value {
    let v: Vec<f64> = values.collect();
    if v.is_empty() {
        return json!({"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0});
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
    json!({
        "mean": round(mean),
        "stddev": round(var.sqrt()),
        "min": round(v.iter().copied().fold(f64::INFINITY, f64::min)),
        "max": round(v.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_are_rounded_numbers_never_minus_zero() {
        assert_eq!(signed_difference(0.83, 0.33, 2), json!(0.5));
        assert_eq!(signed_difference(32.0, 45.04, 1), json!(-13.0));
        assert_eq!(signed_difference(3800.0, 2100.4, 0), json!(1700));
        let zero = signed_difference(0.5, 0.500_001, 2);
        assert_eq!(zero.to_string(), "0.0");
        assert_eq!(signed_difference(f64::INFINITY, 0.0, 1), json!(0));
        assert_eq!(signed_difference(f64::MAX, -f64::MAX, 0), json!(0));
    }
}
