//! The UAAPS eval report (`evals/reports/<timestamp>.json` in the UAAPS reference): one run's
//! provenance — agent, judge, environment, package — and each case's verdict, deterministic
//! checks, judge verdict and output snippet.
//!
//! Verdicts: passed → PASS; failed and errors → FAIL (with `error`); skipped and not graded →
//! SKIP (with `error` saying why: a case whose judge item nobody graded has not passed).

use serde_json::{Map, Value, json};

use super::model::{Outcome, Report};

/// The provider a model name belongs to.
fn provider(model: &str) -> &'static str {
    let m = model.to_ascii_lowercase();
    if m.starts_with("claude") {
        "anthropic"
    } else if m.starts_with("gpt")
        || (m.starts_with('o') && m[1..].starts_with(|c: char| c.is_ascii_digit()))
    {
        "openai"
    } else if m.starts_with("gemini") {
        "google"
    } else {
        "unknown"
    }
}

fn seconds(ms: u64) -> f64 {
    (ms as f64 / 100.0).round() / 10.0
}

fn snippet(s: &str) -> String {
    s.chars().take(500).collect()
}

/// The package a suite came from: `package.agent.json` above its `evals/` or `tests/`.
fn package(runs: &[&super::model::CaseRun]) -> Value {
    for c in runs {
        let mut p = c.result.suite_source.as_path();
        while let Some(parent) = p.parent() {
            let manifest = parent.join("package.agent.json");
            if let Ok(text) = std::fs::read_to_string(&manifest)
                && let Ok(v) = serde_json::from_str::<Value>(&text)
            {
                return json!({"name": v["name"], "version": v["version"]});
            }
            p = parent;
        }
    }
    Value::Null
}

/// The report of a whole run (all its case-runs; `package` when they are one package's).
pub fn render(r: &Report) -> String {
    let suites: std::collections::BTreeSet<&str> =
        r.case_runs.iter().map(|c| c.suite.as_str()).collect();
    let one = (suites.len() == 1)
        .then(|| suites.first().copied())
        .flatten();
    render_for(r, one)
}

/// The report of one suite's case-runs (a package's), or of them all.
pub fn render_for(r: &Report, suite: Option<&str>) -> String {
    let cfg = &r.config;
    let runs: Vec<&super::model::CaseRun> = r
        .case_runs
        .iter()
        .filter(|c| suite.is_none_or(|s| c.suite == s))
        .collect();
    let first = runs.first().copied();
    let harness = first.map(|c| c.harness.clone()).unwrap_or_default();
    let runtime_version = cfg.harnesses.get(&harness).cloned().unwrap_or_default();
    let agent_model = first
        .and_then(|c| {
            c.model
                .clone()
                .or_else(|| c.result.turns.first().and_then(|t| t.model.clone()))
        })
        .unwrap_or_default();
    // The judge that graded these case-runs, else the run's.
    let judge_model = runs
        .iter()
        .find_map(|c| {
            c.judge
                .as_ref()
                .map(|j| j.model.clone())
                .filter(|m| !m.is_empty())
        })
        .or_else(|| cfg.judges.iter().find_map(|j| j.model.clone()))
        .unwrap_or_default();
    let timestamp = r.started.clone().unwrap_or_default();
    let wall = cfg.duration_ms.unwrap_or(r.summary.duration_ms);
    let count = |f: &dyn Fn(Outcome) -> bool| runs.iter().filter(|c| f(c.outcome)).count();
    let total = runs.len();
    let passed = count(&|o| o == Outcome::Passed);
    let failed = count(&|o| matches!(o, Outcome::Failed | Outcome::Error | Outcome::Missing));
    let skipped = count(&|o| matches!(o, Outcome::Skipped | Outcome::NotGraded));
    let counted = total - skipped;
    // The effective timeout: what the case-runs ran with (the most common, if they differ).
    let timeout = {
        let mut seen: std::collections::BTreeMap<u64, usize> = Default::default();
        for t in runs.iter().filter_map(|c| c.result.timeout_secs) {
            *seen.entry(t).or_default() += 1;
        }
        seen.into_iter()
            .max_by_key(|(t, n)| (*n, *t))
            .map(|(t, _)| t)
    }
    .or(cfg.options.timeout);
    let cases: Vec<Value> = runs
        .iter()
        .map(|c| {
            let verdict = match c.outcome {
                Outcome::Passed => "PASS",
                Outcome::Failed | Outcome::Error | Outcome::Missing => "FAIL",
                Outcome::Skipped | Outcome::NotGraded => "SKIP",
            };
            // Keyed as the reference does, by expectation (`contains`, `files_created`, …):
            // an expectation with several values fails when any of them does.
            let mut checks = Map::new();
            for k in &c.checks {
                let id = k.id.as_str();
                let key = id.split('[').next().unwrap_or(id).replace('-', "_");
                let passed = k.passed && checks.get(&key).is_none_or(|v| v == "PASS");
                checks.insert(key, json!(if passed { "PASS" } else { "FAIL" }));
            }
            let judge_verdict = match &c.judge {
                Some(j) => match (&j.criteria, &j.expectations) {
                    (Some(cr), _) => json!({
                        "result": if cr.pass { "PASS" } else { "FAIL" },
                        "reason": cr.reasoning, "model": j.model,
                    }),
                    (_, Some(e)) => json!({
                        "result": if e.summary.failed == 0 { "PASS" } else { "FAIL" },
                        "reason": e.eval_feedback.overall, "model": j.model,
                    }),
                    _ => Value::Null,
                },
                None => Value::Null,
            };
            let mut case = json!({
                "name": c.case,
                "target": c.result.target,
                "verdict": verdict,
                "duration_seconds": seconds(c.duration_ms),
                "deterministic_checks": checks,
                "judge_verdict": judge_verdict,
                "agent_output_snippet": snippet(&c.output_snippet),
            });
            if let Some(exercised) = c.result.target_exercised {
                // Whether the transcript shows the target at work (assay's addition).
                case["target_exercised"] = json!(exercised);
            }
            if verdict != "PASS"
                && let Some(why) = &c.reason
            {
                case["error"] = json!(why);
            }
            case
        })
        .collect();
    let mut report = json!({
        "version": 1,
        "id": format!("eval-run-{}", timestamp.replace(':', "-")),
        "timestamp": timestamp,
        "duration_seconds": seconds(wall),
        "config": {
            "engine": harness,
            "engine_version": runtime_version,
            "judge": judge_model,
            "timeout": timeout,
        },
        "agent": {
            "runtime": harness,
            "runtime_version": runtime_version,
            "model": agent_model,
            "model_provider": provider(&agent_model),
            "session_id": first.and_then(|c| c.result.turns.first()?.session_id.as_deref()),
        },
        // The model's vendor (`anthropic`), not the way it was reached (`claude-cli`).
        "judge": if judge_model.is_empty() { Value::Null } else {
            json!({"model": judge_model, "model_provider": provider(&judge_model)})
        },
        "environment": {
            "os": std::env::consts::OS,
            "arch": std::env::consts::ARCH,
            "assay_version": r.assay_version,
        },
        "package": package(&runs),
        "summary": {
            "total": total,
            "passed": passed,
            "failed": failed,
            "skipped": skipped,
            "pass_rate": if counted == 0 { 0.0 } else { (passed as f64 / counted as f64 * 100.0).round() / 100.0 },
        },
        "cases": cases,
    });
    if let Some(sandbox) = &cfg.sandbox {
        // How the agents were contained (`none`: unsandboxed), beside the reference's fields.
        report["environment"]["sandbox"] = json!({
            "kind": sandbox.kind,
            "network": sandbox.network,
            "unsandboxed_case_runs": runs.iter().filter(|c| c.result.sandbox.as_ref().is_some_and(|s| s.kind == "none")).count(),
        });
    }
    serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
}

/// A UAAPS report file (`evals/reports/<id>.json`, as assay or another UAAPS runner writes it)
/// as one side of `assay report diff`: its cases by name, under its package.
pub fn read(path: &std::path::Path, shown: &str) -> Result<super::diff::Side, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{shown} is not JSON: {e}"))?;
    let not_report = || {
        format!("{shown} is neither a run folder nor a UAAPS eval report (version 1 with `cases`)")
    };
    if v.get("version").and_then(Value::as_u64) != Some(1) {
        return Err(not_report());
    }
    let cases = v
        .get("cases")
        .and_then(Value::as_array)
        .ok_or_else(not_report)?;
    let package = v
        .pointer("/package/name")
        .and_then(Value::as_str)
        .unwrap_or("package");
    let mut entries = Vec::with_capacity(cases.len());
    for (i, c) in cases.iter().enumerate() {
        let name = c
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{shown}: cases[{i}] has no `name`"))?;
        let outcome = match c.get("verdict").and_then(Value::as_str) {
            Some("PASS") => Outcome::Passed,
            Some("FAIL") => Outcome::Failed,
            Some("SKIP") => Outcome::Skipped,
            other => {
                return Err(format!(
                    "{shown}: cases[{i}].verdict is {other:?}, not PASS, FAIL or SKIP"
                ));
            }
        };
        entries.push(super::diff::Entry {
            suite: format!("uaaps:{package}"),
            case: name.to_string(),
            run: 1,
            variant: Default::default(),
            outcome,
            score: None,
            reason: c.get("error").and_then(Value::as_str).map(str::to_string),
        });
    }
    Ok(super::diff::Side {
        name: shown.to_string(),
        pass_rate: v
            .pointer("/summary/pass_rate")
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
        case_runs: entries,
    })
}
