//! The UAAPS eval report (`evals/reports/<timestamp>.json` in the UAAPS reference): one run's
//! provenance — agent, judge, environment, package — and each case's verdict, deterministic
//! checks, judge verdict and output snippet.
//!
//! `cases[]` has one entry per case, as the reference's runner (one run per case) writes it,
//! and `summary` counts cases. With repeats a case's verdict is its verdict over its runs (the
//! pass rate against the threshold), its checks PASS only when they passed in every run, and
//! its judge and snippet are the first failing run's (else the first run's); assay adds `runs`
//! (`total`, `passed`, `pass_rate`) and, with `--baseline` or `--variant-path`, `baseline`
//! (what the skill was compared with: never a case of its own, never part of the verdict).
//! Trigger queries are cases too, with their `query` and a `triggered` check.
//!
//! Verdicts: pass → PASS; fail and errors → FAIL (with `error`); nothing graded (skipped, not
//! graded) → SKIP (with `error` saying why: a case whose judge item nobody graded has not
//! passed).

use serde_json::{Map, Value, json};

use super::aggregate::CaseVerdict;
use super::model::{CaseRun, Report};
use crate::record::case_run::Kind;
use crate::record::case_run::Outcome;

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
fn package(runs: &[&CaseRun]) -> Value {
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

/// Each case of `runs` once (the skill's runs; the baseline's and the variant's are its
/// `baseline`), then each trigger query, in the order they ran.
fn cases(r: &Report, runs: &[&CaseRun]) -> Vec<Value> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for c in runs.iter().filter(|c| !c.variant.is_comparison()) {
        if !seen.insert((c.suite.as_str(), c.case.as_str())) {
            continue;
        }
        let mine: Vec<&CaseRun> = runs
            .iter()
            .copied()
            .filter(|o| o.suite == c.suite && o.case == c.case)
            .collect();
        out.push(match c.kind {
            Kind::Trigger => trigger_case(r, &mine),
            _ => case(r, &mine),
        });
    }
    out
}

fn word(verdict: CaseVerdict) -> &'static str {
    match verdict {
        CaseVerdict::Pass => "PASS",
        CaseVerdict::Fail | CaseVerdict::Error => "FAIL",
        CaseVerdict::None => "SKIP",
    }
}

/// The check results of a case over its skill runs, keyed as the reference does, by
/// expectation (`contains`, `files_created`, …): PASS only when every value of the expectation
/// passed in every graded run.
fn checks(runs: &[&CaseRun]) -> Map<String, Value> {
    let mut checks = Map::new();
    for k in runs.iter().flat_map(|c| &c.checks) {
        let id = k.id.as_str();
        let key = id.split('[').next().unwrap_or(id).replace('-', "_");
        let passed = k.passed && checks.get(&key).is_none_or(|v| v == "PASS");
        checks.insert(key, json!(if passed { "PASS" } else { "FAIL" }));
    }
    checks
}

fn judge_verdict(c: &CaseRun) -> Value {
    let Some(j) = &c.judge else {
        return Value::Null;
    };
    match (&j.criteria, &j.expectations) {
        (Some(cr), _) => json!({
            "result": if cr.pass { "PASS" } else { "FAIL" },
            "reason": cr.reasoning, "model": j.model,
        }),
        (_, Some(e)) => json!({
            "result": if e.summary.failed == 0 { "PASS" } else { "FAIL" },
            "reason": e.eval_feedback.overall, "model": j.model,
        }),
        _ => Value::Null,
    }
}

/// How a case's runs went: `{"total", "passed", "pass_rate"}` (assay's addition: the
/// reference runs each case once).
fn tally(total: u64, passed: u64) -> Value {
    let rate = if total == 0 {
        0.0
    } else {
        passed as f64 / total as f64
    };
    json!({"total": total, "passed": passed, "pass_rate": (rate * 100.0).round() / 100.0})
}

/// One case: its verdict over the skill's runs (pass rate against the threshold), the checks
/// and judge of the run that shows it (the first failing one when it failed), and what it was
/// compared with.
fn case(r: &Report, mine: &[&CaseRun]) -> Value {
    let skill: Vec<&CaseRun> = mine
        .iter()
        .copied()
        .filter(|c| !c.variant.is_comparison())
        .collect();
    let first = skill[0];
    let stats = r
        .statistics
        .cases
        .iter()
        .find(|s| s.suite == first.suite && s.case == first.case);
    let verdict = word(stats.map_or(CaseVerdict::None, |s| s.verdict));
    let shown = skill
        .iter()
        .copied()
        .find(|c| verdict != "PASS" && c.outcome != Outcome::Passed)
        .unwrap_or(first);
    let mean_ms = skill.iter().map(|c| c.duration_ms).sum::<u64>() / skill.len() as u64;
    let mut case = json!({
        "name": first.case,
        "target": first.result.target,
        "verdict": verdict,
        "duration_seconds": seconds(mean_ms),
        "deterministic_checks": checks(&skill),
        "judge_verdict": judge_verdict(shown),
        "agent_output_snippet": snippet(&shown.output_snippet),
    });
    if let Some(s) = stats {
        case["runs"] = tally(s.runs, s.pass_rate.passed);
    }
    if let Some(exercised) = first.result.target_exercised {
        // Whether the transcript shows the target at work (assay's addition).
        case["target_exercised"] = json!(exercised);
    }
    if verdict != "PASS"
        && let Some(why) = stats
            .and_then(|s| s.reason.clone())
            .or(shown.reason.clone())
    {
        case["error"] = json!(why);
    }
    let compared = r
        .statistics
        .baselines
        .iter()
        .find(|b| b.suite == first.suite && b.case == first.case);
    if let Some(b) = compared {
        // What the skill was measured against (assay's addition): never part of the verdict.
        case["baseline"] = json!({
            "against": b.against,
            "verdict": word(b.baseline_verdict),
            "runs": tally(b.baseline.pass_rate.n, b.baseline.pass_rate.passed),
            "delta_pass_rate": (b.delta_pass_rate * 100.0).round() / 100.0,
            "p_value": (b.p_value * 1000.0).round() / 1000.0,
        });
    }
    case
}

/// A trigger query as a case: whether the skill fired as often as it should have.
fn trigger_case(r: &Report, mine: &[&CaseRun]) -> Value {
    let first = mine[0];
    let t = r
        .statistics
        .triggers
        .iter()
        .find(|t| t.suite == first.suite && t.id == first.case);
    let errors = mine.iter().all(|c| c.outcome == Outcome::Error);
    let verdict = match t {
        _ if errors => "FAIL",
        Some(t) if t.passed => "PASS",
        Some(_) => "FAIL",
        None => "SKIP",
    };
    let mean_ms = mine.iter().map(|c| c.duration_ms).sum::<u64>() / mine.len() as u64;
    let mut case = json!({
        "name": first.case,
        "target": first.result.target,
        "verdict": verdict,
        "duration_seconds": seconds(mean_ms),
        "deterministic_checks": {"triggered": if verdict == "PASS" { "PASS" } else { "FAIL" }},
        "judge_verdict": Value::Null,
        "agent_output_snippet": snippet(&first.output_snippet),
    });
    if let Some(t) = t {
        case["query"] = json!(t.query);
        case["runs"] = tally(
            t.runs,
            if t.should_trigger {
                t.fired
            } else {
                t.runs - t.fired
            },
        );
        if verdict != "PASS" {
            case["error"] = json!(t.shortfall());
        }
    } else if errors {
        case["error"] = json!(mine[0].reason.clone().unwrap_or_default());
    }
    case
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
    let runs: Vec<&CaseRun> = r
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
    let cases = cases(r, &runs);
    let count = |v: &str| cases.iter().filter(|c| c["verdict"] == v).count();
    let (total, passed, failed, skipped) =
        (cases.len(), count("PASS"), count("FAIL"), count("SKIP"));
    let counted = total - skipped;
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
