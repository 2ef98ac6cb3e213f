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
fn package(r: &Report) -> Value {
    for c in &r.case_runs {
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

pub fn render(r: &Report) -> String {
    let cfg = &r.config;
    let first = r.case_runs.first();
    let harness = first.map(|c| c.harness.clone()).unwrap_or_default();
    let runtime_version = cfg.harnesses.get(&harness).cloned().unwrap_or_default();
    let agent_model = first
        .and_then(|c| {
            c.model
                .clone()
                .or_else(|| c.result.turns.first().and_then(|t| t.model.clone()))
        })
        .unwrap_or_default();
    let judge = cfg.judges.iter().find(|j| j.model.is_some());
    let judge_model = judge.and_then(|j| j.model.as_deref()).unwrap_or("");
    let timestamp = r.started.clone().unwrap_or_default();
    let wall = cfg.duration_ms.unwrap_or(r.summary.duration_ms);
    let s = &r.summary;
    let skipped = s.skipped + s.not_graded;
    let counted = s.total - skipped;
    let cases: Vec<Value> = r
        .case_runs
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
            "timeout": cfg.options.timeout,
        },
        "agent": {
            "runtime": harness,
            "runtime_version": runtime_version,
            "model": agent_model,
            "model_provider": provider(&agent_model),
            "session_id": first.and_then(|c| c.result.turns.first()?.session_id.as_deref()),
        },
        "judge": if judge_model.is_empty() { Value::Null } else {
            json!({"model": judge_model, "model_provider": judge.and_then(|j| j.provider.as_deref())})
        },
        "environment": {
            "os": std::env::consts::OS,
            "arch": std::env::consts::ARCH,
            "assay_version": r.assay_version,
        },
        "package": package(r),
        "summary": {
            "total": s.total,
            "passed": s.passed,
            "failed": s.failed + s.errors,
            "skipped": skipped,
            "pass_rate": if counted == 0 { 0.0 } else { (s.passed as f64 / counted as f64 * 100.0).round() / 100.0 },
        },
        "cases": cases,
    });
    if let Some(sandbox) = &cfg.sandbox {
        // How the agents were contained (`none`: unsandboxed), beside the reference's fields.
        report["environment"]["sandbox"] = json!({
            "kind": sandbox.kind,
            "network": sandbox.network,
            "unsandboxed_case_runs": s.unsandboxed,
        });
    }
    serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
}
