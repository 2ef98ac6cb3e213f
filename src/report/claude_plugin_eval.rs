//! Claude Code's `claude plugin eval` result (`--json`, and `aggregate-result.json`), for
//! the run's Claude Code plugin-eval cases, so a team's tooling that reads it keeps working:
//! per case its graders as Claude Code reports them, each arm's runs (`with`, and `without`
//! the plugin) with every grader's verdict, weight, explanation and whether it was scored, the
//! case's score, pass rate and Δ; the run's totals. Numbers are written as JavaScript writes
//! them (`1`, not `1.0`).
//!
//! Where assay differs, it says so in the fields Claude Code has: a run that ended in an
//! infrastructure error has `error` set and no graders (as Claude Code's API errors), and its
//! case has no Δ; an `llm` or `baseline` grader is one verdict of assay's judge
//! (`judgeVotes` of one).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::model::{CaseRun, Report};
use crate::record::Status;
use crate::record::case_run::{Arm, Kind};

/// A number as JavaScript's `JSON.stringify` writes it: whole numbers without a fraction.
pub fn num(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// A case as Claude Code describes it, with its runs with the plugin and without.
type CaseArms<'a> = (&'a Value, Vec<&'a CaseRun>, Vec<&'a CaseRun>);

/// The cases of the run that have Claude Code's description, in its order (by folder), each
/// with its runs by arm.
fn cases(r: &Report) -> Vec<CaseArms<'_>> {
    let mut by: BTreeMap<(String, String), CaseArms<'_>> = BTreeMap::new();
    for c in r.case_runs.iter().filter(|c| c.kind == Kind::Case) {
        let Some(native) = c.result.native_case.as_ref() else {
            continue;
        };
        let e =
            by.entry((c.suite.clone(), c.case.clone()))
                .or_insert((native, Vec::new(), Vec::new()));
        match c.variant {
            Arm::Skill => e.1.push(c),
            _ => e.2.push(c),
        }
    }
    let mut out: Vec<_> = by.into_values().collect();
    let key = |n: &Value| {
        n.get("dir")
            .and_then(Value::as_str)
            .unwrap_or("")
            .encode_utf16()
            .collect::<Vec<u16>>()
    };
    out.sort_by_key(|c| key(c.0));
    for (_, with, without) in &mut out {
        with.sort_by_key(|c| c.run);
        without.sort_by_key(|c| c.run);
    }
    out
}

/// Whether a grader only says the plugin fired: `arm: with-only`, or `tool_used: Skill`
/// without an `arm`.
fn with_only_ish(g: &Value) -> bool {
    match g["config"].get("arm").and_then(Value::as_str) {
        Some(a) => a == "with-only",
        None => g["type"] == "tool_used" && g["config"]["tool"] == "Skill",
    }
}

/// One grader's verdict in a case-run, as Claude Code reports it.
fn grader(c: &CaseRun, g: &Value, with_only: bool) -> Value {
    let name = g["name"].as_str().unwrap_or("");
    let weight = g["weight"].as_f64().unwrap_or(1.0);
    let mut o = Map::new();
    o.insert("name".into(), json!(name));
    let (passed, explanation, votes) = match c.checks.iter().find(|k| k.id == name) {
        Some(k) => (k.passed, k.message.clone(), None),
        None => {
            let item = c
                .judge
                .as_ref()
                .and_then(|j| j.rubric.as_ref())
                .and_then(|r| r.criteria.iter().find(|i| i.id == name));
            let passed = item.is_some_and(|i| i.passed);
            let votes: Vec<bool> = match item {
                Some(i) if !i.votes.is_empty() => i.votes.clone(),
                _ => vec![passed],
            };
            let words: Vec<&str> = votes
                .iter()
                .map(|v| if *v { "PASS" } else { "FAIL" })
                .collect();
            let why = match item {
                Some(_) => format!("judge votes: {}", words.join(" ")),
                None => "not graded: the judge gave no verdict".to_string(),
            };
            (passed, why, Some(json!(votes)))
        }
    };
    o.insert("passed".into(), json!(passed));
    o.insert("weight".into(), num(weight));
    o.insert("explanation".into(), json!(explanation));
    o.insert("withOnly".into(), json!(with_only));
    o.insert("scored".into(), json!(!with_only));
    if let Some(v) = votes {
        o.insert("judgeVotes".into(), v);
    }
    Value::Object(o)
}

/// One case-run as a run of Claude Code's result.
fn run(c: &CaseRun, native: &Value, arm: Option<&str>, r: &Report) -> Value {
    let graders: &[Value] = native["graders"].as_array().map_or(&[], |v| v);
    let all_wo = graders.iter().all(with_only_ish);
    let errored = c.result.status != Status::Completed && c.checks.is_empty();
    let shown: Vec<Value> = graders
        .iter()
        .filter(|g| !(arm == Some("without") && !all_wo && with_only_ish(g)))
        .map(|g| grader(c, g, arm == Some("with") && !all_wo && with_only_ish(g)))
        .collect();
    let score = c.score.unwrap_or(0.0);
    let turns: u64 = c.result.turns.iter().filter_map(|t| t.num_turns).sum();
    let aborted = c.result.mocks.as_ref().and_then(|m| m.aborted.as_ref());
    let error = (c.result.status != Status::Completed && aborted.is_none()).then(|| {
        c.result
            .reason
            .clone()
            .unwrap_or_else(|| format!("{:?}", c.result.status).to_lowercase())
    });
    let mut o = json!({
        "score": num(score),
        "passed": score >= 1.0,
        "turns": turns,
        "costUsd": num(c.cost_usd.unwrap_or(0.0)),
        "judgeCostUsd": 0,
        "durationSeconds": (c.duration_ms as f64 / 1000.0).round() as u64,
        "startedAt": r.started.clone().unwrap_or_default(),
        "error": error,
        "tracePath": r.dir.join(&c.dir).join(crate::record::layout::TRANSCRIPT_JSONL).display().to_string(),
        "skippedPaidGraders": false,
        "graders": if errored || aborted.is_some() { Vec::new() } else { shown },
    });
    if let Some(a) = aborted {
        o["aborted"] = json!({"server": a.server, "tool": a.tool, "reason": a.reason});
    }
    if let Some(m) = &c.result.mocks {
        o["mocks"] = mocks(m);
    }
    o
}

/// The stand-ins of a run as Claude Code reports them: each server with its tools' responders
/// (a server with no mock `withheld`), and the calls counted.
fn mocks(m: &crate::record::mocks::MockRecord) -> Value {
    let mut servers: Vec<Value> = m
        .servers
        .iter()
        .map(|s| {
            let tools: Vec<Value> = s
                .tools
                .iter()
                .map(|(t, kind)| json!({"tool": t, "responder": kind}))
                .collect();
            json!({"server": s.server, "kind": "shadow", "tools": tools})
        })
        .collect();
    for w in &m.withheld {
        servers.push(json!({"server": w, "kind": "shadow", "withheld": true, "tools": []}));
    }
    let errors = m.calls.iter().filter(|c| c.is_error).count();
    json!({
        "servers": servers,
        "warnings": [],
        "calls": {"total": m.calls.len(), "errors": errors, "unmocked": [], "costUsd": 0, "replay": {"hits": 0, "misses": 0}},
    })
}

/// A case's aggregates over its arms: score and pass rate, and with a baseline arm its own
/// and the Δ (left out when a run of either arm ended in an error, as Claude Code leaves it
/// out after an API error).
fn aggregates(with: &[&CaseRun], without: &[&CaseRun]) -> Value {
    let scores = |rs: &[&CaseRun]| {
        rs.iter()
            .map(|c| c.score.unwrap_or(0.0))
            .collect::<Vec<_>>()
    };
    let rate = |rs: &[&CaseRun]| {
        let s = scores(rs);
        if s.is_empty() {
            0.0
        } else {
            s.iter().filter(|x| **x >= 1.0).count() as f64 / s.len() as f64
        }
    };
    let mut o = Map::new();
    let score = mean(&scores(with));
    o.insert("score".into(), num(score));
    o.insert("passRate".into(), num(rate(with)));
    if !without.is_empty() {
        let errored = with
            .iter()
            .chain(without)
            .any(|c| c.result.status != Status::Completed);
        let score_without = mean(&scores(without));
        if !errored {
            o.insert("scoreWithout".into(), num(score_without));
        }
        o.insert("passRateWithout".into(), num(rate(without)));
        if !errored {
            o.insert("delta".into(), num(score - score_without));
        }
    }
    Value::Object(o)
}

/// Claude Code's result document for the run.
pub fn result(r: &Report) -> Value {
    let threshold = r
        .case_runs
        .iter()
        .find_map(|c| c.result.pass_threshold)
        .unwrap_or(crate::formats::plugin_eval::DEFAULT_THRESHOLD);
    let all = cases(r);
    let two_arms = all.iter().any(|(_, _, w)| !w.is_empty());
    let mut out_cases = Vec::new();
    let (mut case_scores, mut rates, mut deltas, mut passed) =
        (Vec::new(), Vec::new(), Vec::new(), 0);
    let mut plugins: Vec<Value> = Vec::new();
    for (native, with, without) in &all {
        let mut case = native.as_object().cloned().unwrap_or_default();
        if let Some(p) = case.remove("plugin")
            && !plugins.contains(&p)
        {
            plugins.push(p);
        }
        let arm = |x: &'static str| (!without.is_empty()).then_some(x);
        let mut arms = Map::new();
        arms.insert(
            "with".into(),
            with.iter()
                .map(|c| run(c, native, arm("with"), r))
                .collect(),
        );
        if !without.is_empty() {
            arms.insert(
                "without".into(),
                without
                    .iter()
                    .map(|c| run(c, native, arm("without"), r))
                    .collect(),
            );
        }
        case.insert("arms".into(), Value::Object(arms));
        let agg = aggregates(with, without);
        let score = agg["score"].as_f64().unwrap_or(0.0);
        case_scores.push(score);
        rates.push(agg["passRate"].as_f64().unwrap_or(0.0));
        if let Some(d) = agg.get("delta").and_then(Value::as_f64) {
            deltas.push(d);
        }
        passed += usize::from(score >= threshold);
        case.insert("aggregates".into(), agg);
        out_cases.push(Value::Object(case));
    }
    let mut aggregates = Map::new();
    aggregates.insert("casesTotal".into(), json!(out_cases.len()));
    aggregates.insert("casesPassed".into(), json!(passed));
    aggregates.insert("overallScore".into(), num(mean(&case_scores)));
    aggregates.insert("overallPassRate".into(), num(mean(&rates)));
    if !deltas.is_empty() {
        aggregates.insert("meanDelta".into(), num(mean(&deltas)));
    }
    let suite = suite_json(r, plugins, two_arms, threshold);
    let cost: f64 = r.case_runs.iter().filter_map(|c| c.cost_usd).sum();
    let partial = if r.config.interrupted {
        Some("interrupted")
    } else {
        r.config.budget_stop.as_ref().map(|_| "cost_ceiling")
    };
    let mut doc = Map::new();
    doc.insert("schemaVersion".into(), json!(1));
    let version = r.config.harnesses.get("claude-code").cloned();
    doc.insert("claudeVersion".into(), json!(version.unwrap_or_default()));
    doc.insert(
        "startedAt".into(),
        json!(r.started.clone().unwrap_or_default()),
    );
    let secs = (r.config.duration_ms.unwrap_or(0) as f64 / 1000.0).round() as u64;
    doc.insert("durationSeconds".into(), json!(secs));
    doc.insert("costUsd".into(), num(cost));
    doc.insert("partial".into(), json!(partial.is_some()));
    if let Some(why) = partial {
        doc.insert("partialReason".into(), json!(why));
    }
    doc.insert("suite".into(), Value::Object(suite));
    doc.insert("cases".into(), json!(out_cases));
    doc.insert("aggregates".into(), Value::Object(aggregates));
    Value::Object(doc)
}

/// The result's `suite`: the plugin's folder as `root` (the run folder's when no case has
/// one), the ablation, the filters, the threshold, the plugins.
fn suite_json(
    r: &Report,
    plugins: Vec<Value>,
    two_arms: bool,
    threshold: f64,
) -> Map<String, Value> {
    let o = &r.config.options;
    let mut suite = Map::new();
    let root = plugins
        .first()
        .and_then(|p| p.get("path"))
        .and_then(Value::as_str)
        .map_or_else(|| r.dir.display().to_string(), str::to_string);
    suite.insert("root".into(), json!(root));
    suite.insert(
        "ablation".into(),
        json!(if two_arms { "with-without" } else { "none" }),
    );
    if let Some(m) = &o.model {
        suite.insert("modelOverride".into(), json!(m));
    }
    if let Some(f) = &o.filter {
        suite.insert("caseFilter".into(), json!(f));
    }
    if !o.tags.is_empty() {
        suite.insert("tagFilters".into(), json!(o.tags));
    }
    suite.insert("threshold".into(), num(threshold));
    suite.insert("concurrency".into(), json!(o.jobs));
    suite.insert("plugins".into(), json!(plugins));
    suite
}

/// The document as Claude Code writes it: pretty, two spaces, a final newline.
pub fn render(r: &Report) -> String {
    serde_json::to_string_pretty(&result(r)).unwrap_or_default() + "\n"
}
