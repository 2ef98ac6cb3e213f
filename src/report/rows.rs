//! A run's case-runs as rows: the few fields of each `result.json` that the statistics
//! ([`super::aggregate`], [`super::routing`]) and the history need, read once per case-run.

use crate::record::case_run::{Arm, Kind};
use crate::record::{CaseRunRecord, Outcome, ReadError};

/// The few fields of a `result.json` the statistics need (kept small: a run may have 10,000).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub suite: String,
    pub case: String,
    pub run: u32,
    pub trigger: bool,
    /// The comparison arm (`--baseline`, `--baseline-skill`, `--variant-path`).
    pub baseline: bool,
    /// Which arm: `skill`, `baseline` or `variant`.
    pub variant: Arm,
    pub outcome: Outcome,
    pub score: Option<f64>,
    pub duration_ms: u64,
    pub tokens: u64,
    pub cost_usd: Option<f64>,
    pub cached: bool,
    pub reason: Option<String>,
    pub min_stability: Option<f64>,
    pub pass_threshold: Option<f64>,
    pub query: String,
    pub should_trigger: bool,
    pub fired: Option<bool>,
    pub threshold: f64,
    pub trigger_mode: String,
    pub note: Option<String>,
    /// The case-run's folder, relative to the run folder.
    pub dir: std::path::PathBuf,
    /// The expectations grader's review of the eval itself (weak expectations), when it said
    /// anything.
    pub feedback: Option<crate::record::grading::Feedback>,
    pub harness: String,
    pub model: Option<String>,
    /// Trigger rows: the skill under test, every skill that fired, and the routing
    /// expectations.
    pub skill: String,
    pub skills_fired: Vec<String>,
    pub routing: crate::record::case_run::Routing,
}

impl Row {
    pub fn of(r: &CaseRunRecord) -> Row {
        let t = r.trigger.as_ref();
        Row {
            suite: r.suite.clone(),
            case: r.case.clone(),
            run: r.run,
            trigger: r.kind == Kind::Trigger,
            baseline: r.variant.is_comparison(),
            variant: r.variant,
            outcome: r.outcome(),
            // The checks' weighted score: none when the case-run had no check to score.
            score: r
                .grade
                .as_ref()
                .filter(|g| g.checks_total > 0)
                .map(|g| g.score),
            duration_ms: r.duration_ms,
            tokens: r.usage.input_tokens.saturating_add(r.usage.output_tokens),
            cost_usd: r.cost_usd,
            cached: r.cached.is_some(),
            reason: r.why_not_passed().map(str::to_string),
            min_stability: r.min_stability,
            pass_threshold: r.pass_threshold,
            query: t.map(|t| t.query.clone()).unwrap_or_default(),
            should_trigger: t.is_some_and(|t| t.should_trigger),
            fired: t.and_then(|t| t.fired),
            threshold: t.map_or(0.5, |t| t.threshold),
            trigger_mode: crate::record::run::word(&t.map(|t| t.mode).unwrap_or_default()),
            note: t.and_then(|t| t.note.clone()),
            dir: std::path::PathBuf::new(),
            feedback: feedback_of(r).cloned(),
            harness: r.harness.clone(),
            model: r.model.clone(),
            skill: t.map(|t| t.skill.clone()).unwrap_or_default(),
            skills_fired: if t.is_some() {
                r.skills_invoked.clone()
            } else {
                Vec::new()
            },
            routing: t.map(|t| t.routing.clone()).unwrap_or_default(),
        }
    }
}

/// The expectations grader's feedback on a case-run's eval, when it flagged anything.
pub fn feedback_of(r: &CaseRunRecord) -> Option<&crate::record::grading::Feedback> {
    r.judge
        .as_ref()
        .and_then(|j| j.expectations.as_ref())
        .map(|e| &e.eval_feedback)
        .filter(|f| !f.suggestions.is_empty() || !f.overall.trim().is_empty())
}

/// The judge's feedback per case (the first of its runs with any; baselines left out, as the
/// feedback is about the eval, not the run), in the rows' order.
pub fn feedback_by_case(rows: &[Row]) -> Vec<(&str, &str, &crate::record::grading::Feedback)> {
    first_feedback_per_case(rows.iter().map(|r| {
        (
            r.suite.as_str(),
            r.case.as_str(),
            r.baseline,
            r.feedback.as_ref(),
        )
    }))
}

/// Of `(suite, case, baseline, feedback)` items, the first feedback of each case that flags an
/// expectation, baselines left out, in order: a review that flags none (only an `overall`
/// sentence) is no weak expectation, and is never counted as one.
pub fn first_feedback_per_case<'a>(
    items: impl IntoIterator<
        Item = (
            &'a str,
            &'a str,
            bool,
            Option<&'a crate::record::grading::Feedback>,
        ),
    >,
) -> Vec<(&'a str, &'a str, &'a crate::record::grading::Feedback)> {
    let mut out: Vec<(&str, &str, &crate::record::grading::Feedback)> = Vec::new();
    for (suite, case, baseline, feedback) in items {
        if let Some(f) = feedback.filter(|f| !baseline && !f.suggestions.is_empty())
            && !out.iter().any(|(s, c, _)| *s == suite && *c == case)
        {
            out.push((suite, case, f));
        }
    }
    out
}

/// The rows of a run folder, reading each `result.json` once and keeping only the row.
pub fn rows_of(dir: &std::path::Path) -> Result<Vec<Row>, ReadError> {
    let run = crate::record::read_run(dir)?;
    let mut rows = Vec::new();
    crate::record::each_case_run(dir, &run, |rel, r| {
        rows.push(Row {
            dir: rel,
            ..Row::of(&r)
        })
    })?;
    Ok(rows)
}
