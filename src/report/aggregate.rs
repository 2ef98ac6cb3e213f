//! Statistics over a run's case-runs: each case over its runs, each suite and the whole run,
//! trigger rates with precision and recall, and what the skill changes against its baseline.
//! Computed from `result.json` files alone, so `assay run` and `assay report` agree.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::case_run::{Kind, Variant};
use crate::record::{CaseRunRecord, Outcome, ReadError, RunRecord};
use crate::stats;

pub use super::verdict::CaseVerdict;

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
    pub variant: Variant,
    pub outcome: Outcome,
    pub score: Option<f64>,
    pub duration_ms: u64,
    pub tokens: u64,
    pub cost_usd: Option<f64>,
    pub cached: bool,
    pub reason: Option<String>,
    pub min_stability: Option<f64>,
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

/// How cases are judged over their runs, as the run recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Settings {
    pub min_pass_rate: f64,
    pub pass_k: u32,
}

impl Settings {
    /// From `run.json`'s options (defaults for runs recorded before they existed).
    pub fn of(run: &RunRecord) -> Settings {
        Settings {
            min_pass_rate: run.options.min_pass_rate,
            pass_k: run.options.pass_k.max(1),
        }
    }
}

/// A pass rate with its Wilson 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    pub n: u64,
    pub passed: u64,
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

impl Rate {
    fn of(passed: u64, n: u64) -> Rate {
        let (low, high) = stats::wilson(passed, n);
        Rate {
            n,
            passed,
            rate: if n == 0 {
                0.0
            } else {
                passed as f64 / n as f64
            },
            low,
            high,
        }
    }
}

/// One case over its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseStats {
    pub suite: String,
    pub case: String,
    /// Graded runs (skipped and not-graded ones are left out).
    pub runs: u64,
    pub errors: u64,
    pub cached: u64,
    pub pass_rate: Rate,
    /// The k used for pass@k and pass^k: `--pass-k`, capped at the runs.
    pub k: u32,
    pub pass_at_k: Option<f64>,
    pub pass_hat_k: Option<f64>,
    pub score_mean: Option<f64>,
    pub score_sd: Option<f64>,
    /// The share of runs agreeing with the majority verdict.
    pub stability: f64,
    pub min_stability: Option<f64>,
    /// Some runs passed and some did not.
    pub flaky: bool,
    /// `pass`, `fail`, `error` (only errors) or `none` (nothing graded).
    pub verdict: CaseVerdict,
    pub reason: Option<String>,
}

/// Totals over cases: of a suite, or of the whole run (`suite` is `*`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Totals {
    pub suite: String,
    pub cases: usize,
    pub cases_passed: usize,
    pub cases_failed: usize,
    /// Over every graded case-run.
    pub pass_rate: Rate,
    /// Means over the cases.
    pub pass_at_k: Option<f64>,
    pub pass_hat_k: Option<f64>,
    pub score_mean: Option<f64>,
    pub score_sd: Option<f64>,
    pub stability: Option<f64>,
    pub flaky: Vec<String>,
}

/// One trigger query over its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TriggerStats {
    pub suite: String,
    pub id: String,
    pub query: String,
    pub should_trigger: bool,
    /// Runs that could tell (the agent did not fail).
    pub runs: u64,
    /// Runs that could not tell (they ended in error before the agent answered: the model API
    /// down, say): counted neither as firing nor as not firing.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub untold: u64,
    pub fired: u64,
    pub trigger_rate: f64,
    pub threshold: f64,
    /// `agent` (observed) or `judge` (estimated from the name and description).
    pub mode: String,
    pub passed: bool,
    pub note: Option<String>,
    /// The skill under test.
    pub skill: String,
    /// Every skill that fired on the query, most often first (observed through the agent).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<super::routing::SkillRate>,
    /// The query's routing expectations (`must_fire`, `must_not_fire`, `no_other_skill`).
    #[serde(skip_serializing_if = "crate::record::case_run::Routing::is_empty")]
    pub expect: crate::record::case_run::Routing,
    /// How each held over the runs; the query passes only when each does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<super::routing::RuleStats>,
}

/// A suite's trigger queries as a classifier: "fires" is a rate at or over the threshold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TriggerTotals {
    pub suite: String,
    pub mode: String,
    pub queries: usize,
    pub passed: usize,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub accuracy: Option<f64>,
    pub true_positives: u64,
    pub false_positives: u64,
    pub true_negatives: u64,
    pub false_negatives: u64,
    /// Said when the figures look like a broken detector rather than a skill: observed
    /// through the agent, the skill never fired on any query (0% recall, no false positive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The warning for a suite whose skill never fired on any query, observed through the agent.
pub const NEVER_FIRED: &str = "the skill never fired on any query (0% recall, no false positive): if it should have, it may not be installed where the agent looks, or the detector may not see it; run one query with --keep-workspaces and read its transcript";

/// One arm of a baseline comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arm {
    pub pass_rate: Rate,
    pub duration_ms_mean: Option<f64>,
    pub tokens_mean: Option<f64>,
    pub cost_usd_mean: Option<f64>,
}

/// With the skill against the baseline, for a case or (`case` is `*`) the whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaselineStats {
    pub suite: String,
    pub case: String,
    /// What the skill is compared with: `baseline` (none, or `--baseline-skill`) or `variant`
    /// (`--variant-path`).
    pub against: &'static str,
    pub skill: Arm,
    pub baseline: Arm,
    /// Skill minus baseline.
    pub delta_pass_rate: f64,
    pub delta_duration_ms: Option<f64>,
    pub delta_tokens: Option<f64>,
    pub delta_cost_usd: Option<f64>,
    /// Fisher's exact test (two-sided) on the pass/fail counts of the two arms.
    pub p_value: f64,
    /// The comparison arm's verdict over its runs, by the same rule as the skill's
    /// (`pass`, `fail`, `error`, `none`).
    pub baseline_verdict: CaseVerdict,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Aggregates {
    pub settings: Settings,
    pub cases: Vec<CaseStats>,
    pub suites: Vec<Totals>,
    pub total: Totals,
    pub triggers: Vec<TriggerStats>,
    pub trigger_suites: Vec<TriggerTotals>,
    pub baselines: Vec<BaselineStats>,
    pub baseline_total: Option<BaselineStats>,
    /// Each skill's precision and recall across every suite's trigger queries, when more
    /// than one skill is in play (see [`super::routing`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routing: Vec<super::routing::SkillRouting>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl TriggerStats {
    /// No run could tell whether the skill fires: the query is neither passed nor failed, it
    /// is an error.
    pub fn undecided(&self) -> bool {
        self.runs == 0 && self.untold > 0
    }

    /// How a query's firing missed: `fired in 0/2 runs; should trigger (threshold 0.5)`, or
    /// `could not tell in 3 run(s) …` when no run could.
    pub fn shortfall(&self) -> String {
        format!(
            "{}; should {}trigger (threshold {})",
            self.fired_in(),
            if self.should_trigger { "" } else { "not " },
            self.threshold
        )
    }

    /// `fired in 1/2 runs`, with the runs that could not tell; or `could not tell in 3 run(s)
    /// (each ended in error before the agent answered)`.
    pub fn fired_in(&self) -> String {
        if self.undecided() {
            return format!(
                "could not tell in {} run(s) (each ended in error before the agent answered)",
                self.untold
            );
        }
        let untold = match self.untold {
            0 => String::new(),
            n => format!(" ({n} more could not tell)"),
        };
        format!("fired in {}/{} runs{untold}", self.fired, self.runs)
    }
}

impl Aggregates {
    /// Whether anything failed: a case, or a trigger query.
    pub fn failed(&self) -> bool {
        self.cases.iter().any(|c| c.verdict == CaseVerdict::Fail)
            || self.triggers.iter().any(|t| !t.passed && !t.undecided())
    }
}

fn graded(o: Outcome) -> bool {
    matches!(o, Outcome::Passed | Outcome::Failed | Outcome::Error)
}

/// The graded runs of a group (skipped and not-graded ones left out), and how many passed.
struct GradedRuns<'a> {
    rows: Vec<&'a Row>,
    passed: u64,
}

impl<'a> GradedRuns<'a> {
    fn of(rows: &[&'a Row]) -> Self {
        let rows: Vec<&Row> = rows.iter().copied().filter(|r| graded(r.outcome)).collect();
        let passed = rows.iter().filter(|r| r.outcome == Outcome::Passed).count() as u64;
        GradedRuns { rows, passed }
    }

    fn n(&self) -> u64 {
        self.rows.len() as u64
    }

    fn rate(&self) -> Rate {
        Rate::of(self.passed, self.n())
    }

    /// The scores' mean and standard deviation.
    fn scores(&self) -> Option<(f64, f64)> {
        let v: Vec<f64> = self.rows.iter().filter_map(|r| r.score).collect();
        stats::mean_sd(&v)
    }
}

fn case_stats(rows: &[&Row], s: Settings) -> CaseStats {
    let g = GradedRuns::of(rows);
    let (n, passed) = (g.n(), g.passed);
    let errors = rows.iter().filter(|r| r.outcome == Outcome::Error).count() as u64;
    let k = s.pass_k.min(n.max(1) as u32);
    let sd = g.scores();
    let stability = stats::stability(passed, n);
    let min_stability = rows.iter().find_map(|r| r.min_stability);
    let rate = g.rate();
    let verdict = if n == 0 {
        CaseVerdict::None
    } else if errors == n {
        CaseVerdict::Error
    } else {
        let ok = match min_stability {
            // clauditor `variance`: most runs pass, and the runs agree enough.
            Some(ms) => passed * 2 > n && stability >= ms,
            None => rate.rate >= s.min_pass_rate,
        };
        if ok {
            CaseVerdict::Pass
        } else {
            CaseVerdict::Fail
        }
    };
    let reason = (verdict == CaseVerdict::Fail).then(|| {
        let first = rows
            .iter()
            .find_map(|r| r.reason.clone())
            .unwrap_or_default();
        match min_stability {
            Some(ms) => format!(
                "{passed}/{n} runs passed (stability {stability:.2}, needs {ms:.2}): {first}"
            ),
            None if n > 1 => format!(
                "{passed}/{n} runs passed (needs {:.0}%): {first}",
                s.min_pass_rate * 100.0
            ),
            None => first,
        }
    });
    CaseStats {
        suite: rows[0].suite.clone(),
        case: rows[0].case.clone(),
        runs: n,
        errors,
        cached: rows.iter().filter(|r| r.cached).count() as u64,
        pass_rate: rate,
        k,
        pass_at_k: stats::pass_at_k(n, passed, k as u64),
        pass_hat_k: stats::pass_hat_k(n, passed, k as u64),
        score_mean: sd.map(|x| x.0),
        score_sd: sd.map(|x| x.1),
        stability,
        min_stability,
        flaky: passed > 0 && passed < n,
        verdict,
        reason,
    }
}

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = xs.collect();
    stats::mean_sd(&v).map(|x| x.0)
}

fn totals(suite: &str, cases: &[&CaseStats], rows: &[&Row]) -> Totals {
    let g = GradedRuns::of(rows);
    let sd = g.scores();
    Totals {
        suite: suite.to_string(),
        cases: cases.len(),
        cases_passed: cases
            .iter()
            .filter(|c| c.verdict == CaseVerdict::Pass)
            .count(),
        cases_failed: cases
            .iter()
            .filter(|c| c.verdict == CaseVerdict::Fail)
            .count(),
        pass_rate: g.rate(),
        pass_at_k: mean(cases.iter().filter_map(|c| c.pass_at_k)),
        pass_hat_k: mean(cases.iter().filter_map(|c| c.pass_hat_k)),
        score_mean: sd.map(|x| x.0),
        score_sd: sd.map(|x| x.1),
        stability: mean(cases.iter().filter(|c| c.runs > 0).map(|c| c.stability)),
        flaky: cases
            .iter()
            .filter(|c| c.flaky)
            .map(|c| format!("{}/{}", c.suite, c.case))
            .collect(),
    }
}

fn trigger_stats(rows: &[&Row]) -> TriggerStats {
    let told: Vec<&&Row> = rows.iter().filter(|r| r.fired.is_some()).collect();
    let fired = told.iter().filter(|r| r.fired == Some(true)).count() as u64;
    let n = told.len() as u64;
    let r0 = rows[0];
    let rate = if n == 0 { 0.0 } else { fired as f64 / n as f64 };
    let judged = r0.trigger_mode == "judge";
    let routed = super::routing::of_query(rows, &r0.skill, r0.should_trigger, r0.threshold);
    // A judge guesses for the skill under test only: routing is not observed then.
    let rules = if judged { Vec::new() } else { routed.rules };
    TriggerStats {
        suite: r0.suite.clone(),
        id: r0.case.clone(),
        query: r0.query.clone(),
        should_trigger: r0.should_trigger,
        runs: n,
        untold: rows.len() as u64 - n,
        fired,
        trigger_rate: rate,
        threshold: r0.threshold,
        mode: r0.trigger_mode.clone(),
        // No run that could tell is never a pass.
        passed: n > 0
            && ((rate >= r0.threshold) == r0.should_trigger)
            && rules.iter().all(|r| r.passed),
        note: r0.note.clone(),
        skill: r0.skill.clone(),
        skills: if judged { Vec::new() } else { routed.skills },
        expect: routed.expect,
        rules,
    }
}

fn arm(rows: &[&Row]) -> Arm {
    let g = GradedRuns::of(rows);
    Arm {
        pass_rate: g.rate(),
        duration_ms_mean: mean(g.rows.iter().map(|r| r.duration_ms as f64)),
        tokens_mean: mean(g.rows.iter().map(|r| r.tokens as f64)),
        cost_usd_mean: mean(g.rows.iter().filter_map(|r| r.cost_usd)),
    }
}

fn baseline_stats(
    suite: &str,
    case: &str,
    skill: &[&Row],
    base: &[&Row],
    settings: Settings,
) -> BaselineStats {
    let (a, b) = (arm(skill), arm(base));
    let diff = |x: Option<f64>, y: Option<f64>| Some(x? - y?);
    BaselineStats {
        suite: suite.to_string(),
        case: case.to_string(),
        against: base.first().map_or("baseline", |r| r.variant.word()),
        delta_pass_rate: a.pass_rate.rate - b.pass_rate.rate,
        delta_duration_ms: diff(a.duration_ms_mean, b.duration_ms_mean),
        delta_tokens: diff(a.tokens_mean, b.tokens_mean),
        delta_cost_usd: diff(a.cost_usd_mean, b.cost_usd_mean),
        p_value: stats::fisher_exact(
            a.pass_rate.passed,
            a.pass_rate.n - a.pass_rate.passed,
            b.pass_rate.passed,
            b.pass_rate.n - b.pass_rate.passed,
        ),
        skill: a,
        baseline: b,
        baseline_verdict: if base.is_empty() {
            CaseVerdict::None
        } else {
            case_stats(base, settings).verdict
        },
    }
}

/// Every statistic of a run, from its rows.
pub fn aggregate(rows: &[Row], settings: Settings) -> Aggregates {
    // Groups in first-seen order of (suite, case), runs in run order.
    let mut order: Vec<(String, String)> = Vec::new();
    let mut groups: BTreeMap<(String, String), Vec<&Row>> = BTreeMap::new();
    for r in rows {
        let key = (r.suite.clone(), r.case.clone());
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(r);
    }
    let mut cases = Vec::new();
    let mut triggers = Vec::new();
    let mut baselines = Vec::new();
    for key in &order {
        let mut g = groups[key].clone();
        g.sort_by_key(|r| r.run);
        let (base, main): (Vec<&Row>, Vec<&Row>) = g.iter().partition(|r| r.baseline);
        if main.is_empty() {
            continue;
        }
        if main[0].trigger {
            triggers.push(trigger_stats(&main));
            continue;
        }
        cases.push(case_stats(&main, settings));
        if !base.is_empty() {
            baselines.push(baseline_stats(&key.0, &key.1, &main, &base, settings));
        }
    }
    let mut suite_names: Vec<String> = Vec::new();
    for c in &cases {
        if !suite_names.contains(&c.suite) {
            suite_names.push(c.suite.clone());
        }
    }
    let case_rows: Vec<&Row> = rows.iter().filter(|r| !r.trigger && !r.baseline).collect();
    let suites = suite_names
        .iter()
        .map(|s| {
            let cs: Vec<&CaseStats> = cases.iter().filter(|c| c.suite == *s).collect();
            let rs: Vec<&Row> = case_rows
                .iter()
                .copied()
                .filter(|r| r.suite == *s)
                .collect();
            totals(s, &cs, &rs)
        })
        .collect();
    let total = totals("*", &cases.iter().collect::<Vec<_>>(), &case_rows);

    let mut trigger_suites: Vec<TriggerTotals> = Vec::new();
    // Each suite's queries as a classifier, beside `trigger_suites`.
    let mut confusions: Vec<stats::Confusion> = Vec::new();
    for t in &triggers {
        let i = match trigger_suites.iter().position(|x| x.suite == t.suite) {
            Some(i) => i,
            None => {
                trigger_suites.push(TriggerTotals {
                    suite: t.suite.clone(),
                    mode: t.mode.clone(),
                    queries: 0,
                    passed: 0,
                    precision: None,
                    recall: None,
                    accuracy: None,
                    true_positives: 0,
                    false_positives: 0,
                    true_negatives: 0,
                    false_negatives: 0,
                    warning: None,
                });
                confusions.push(stats::Confusion::default());
                trigger_suites.len() - 1
            }
        };
        let s = &mut trigger_suites[i];
        s.queries += 1;
        s.passed += t.passed as usize;
        if t.runs == 0 {
            continue;
        }
        confusions[i].count(t.trigger_rate >= t.threshold, t.should_trigger);
    }
    for (s, c) in trigger_suites.iter_mut().zip(&confusions) {
        s.true_positives = c.tp;
        s.false_positives = c.fp;
        s.true_negatives = c.tn;
        s.false_negatives = c.fn_;
        s.precision = c.precision();
        s.recall = c.recall();
        s.accuracy = c.accuracy();
        if s.mode != "judge" && s.recall == Some(0.0) && s.false_positives == 0 {
            s.warning = Some(NEVER_FIRED.to_string());
        }
    }

    let baseline_total = (!baselines.is_empty()).then(|| {
        // Only cases that have a baseline: the others have nothing to compare with.
        let compared: std::collections::BTreeSet<(&str, &str)> = baselines
            .iter()
            .map(|b| (b.suite.as_str(), b.case.as_str()))
            .collect();
        let skill: Vec<&Row> = rows
            .iter()
            .filter(|r| !r.trigger && !r.baseline)
            .filter(|r| compared.contains(&(r.suite.as_str(), r.case.as_str())))
            .collect();
        let base: Vec<&Row> = rows.iter().filter(|r| !r.trigger && r.baseline).collect();
        baseline_stats("*", "*", &skill, &base, settings)
    });
    let routing = super::routing::per_skill(&triggers);
    Aggregates {
        settings,
        routing,
        cases,
        suites,
        total,
        triggers,
        trigger_suites,
        baselines,
        baseline_total,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn row(case: &str, run: u32, outcome: Outcome) -> Row {
        Row {
            suite: "s".into(),
            case: case.into(),
            run,
            trigger: false,
            baseline: false,
            variant: Variant::Skill,
            outcome,
            score: Some(if outcome == Outcome::Passed { 1.0 } else { 0.0 }),
            duration_ms: 1000,
            tokens: 100,
            cost_usd: None,
            cached: false,
            reason: (outcome != Outcome::Passed).then(|| "wrong".into()),
            min_stability: None,
            query: String::new(),
            should_trigger: false,
            fired: None,
            threshold: 0.5,
            trigger_mode: "agent".into(),
            note: None,
            dir: Default::default(),
            feedback: None,
            harness: "command".into(),
            model: None,
            skill: String::new(),
            skills_fired: Vec::new(),
            routing: Default::default(),
        }
    }

    const STRICT: Settings = Settings {
        min_pass_rate: 1.0,
        pass_k: 3,
    };

    #[test]
    fn a_flaky_case_has_its_statistics_and_fails_a_strict_gate() {
        let rows: Vec<Row> = (1..=5)
            .map(|i| {
                row(
                    "c",
                    i,
                    if i <= 3 {
                        Outcome::Passed
                    } else {
                        Outcome::Failed
                    },
                )
            })
            .collect();
        let a = aggregate(&rows, STRICT);
        let c = &a.cases[0];
        assert_eq!((c.runs, c.pass_rate.passed), (5, 3));
        assert!((c.pass_rate.rate - 0.6).abs() < 1e-12);
        assert!((c.pass_rate.low - 0.2307).abs() < 1e-3, "{c:?}");
        assert!((c.pass_rate.high - 0.8824).abs() < 1e-3, "{c:?}");
        // pass@3 = 1 - C(2,3)/C(5,3) = 1; pass^3 = C(3,3)/C(5,3) = 0.1.
        assert_eq!(c.pass_at_k, Some(1.0));
        assert!((c.pass_hat_k.unwrap() - 0.1).abs() < 1e-12);
        assert!((c.stability - 0.6).abs() < 1e-12);
        assert!(c.flaky);
        assert_eq!(c.verdict, CaseVerdict::Fail);
        assert!(c.reason.as_deref().unwrap().starts_with("3/5 runs passed"));
        assert!(a.failed());
        assert_eq!(a.total.flaky, ["s/c"]);
        // A 60% gate lets it pass.
        let lenient = aggregate(
            &rows,
            Settings {
                min_pass_rate: 0.6,
                pass_k: 3,
            },
        );
        assert_eq!(lenient.cases[0].verdict, CaseVerdict::Pass);
    }

    #[test]
    fn min_stability_gates_the_case() {
        let mut rows: Vec<Row> = (1..=5)
            .map(|i| {
                row(
                    "c",
                    i,
                    if i <= 4 {
                        Outcome::Passed
                    } else {
                        Outcome::Failed
                    },
                )
            })
            .collect();
        for r in &mut rows {
            r.min_stability = Some(0.8);
        }
        assert_eq!(aggregate(&rows, STRICT).cases[0].verdict, CaseVerdict::Pass);
        rows[3].outcome = Outcome::Failed;
        let a = aggregate(&rows, STRICT);
        assert_eq!(a.cases[0].verdict, CaseVerdict::Fail);
        assert!(
            a.cases[0]
                .reason
                .as_deref()
                .unwrap()
                .contains("stability 0.60")
        );
    }

    #[test]
    fn triggers_pass_by_threshold_and_classify() {
        let t = |id: &str, should: bool, fired: &[bool]| -> Vec<Row> {
            fired
                .iter()
                .enumerate()
                .map(|(i, f)| Row {
                    trigger: true,
                    query: format!("q {id}"),
                    should_trigger: should,
                    fired: Some(*f),
                    ..row(id, i as u32 + 1, Outcome::Passed)
                })
                .collect()
        };
        let mut rows = t("yes-1", true, &[true, true, false]); // 0.67 ≥ 0.5: pass, TP
        rows.extend(t("yes-2", true, &[false, false, true])); // 0.33: fail, FN
        rows.extend(t("no-1", false, &[false, false, false])); // 0: pass, TN
        rows.extend(t("no-2", false, &[true, true, true])); // 1: fail, FP
        let a = aggregate(&rows, STRICT);
        let passed: Vec<bool> = a.triggers.iter().map(|t| t.passed).collect();
        assert_eq!(passed, [true, false, true, false]);
        let s = &a.trigger_suites[0];
        assert_eq!(
            (
                s.true_positives,
                s.false_negatives,
                s.true_negatives,
                s.false_positives
            ),
            (1, 1, 1, 1)
        );
        assert_eq!(s.precision, Some(0.5));
        assert_eq!(s.recall, Some(0.5));
        assert_eq!(s.accuracy, Some(0.5));
        assert!(a.failed());
        assert!(a.cases.is_empty());
        assert_eq!(s.warning, None);

        // Never fired on anything: the figures of a broken detector, said as such.
        let mut rows = t("yes-1", true, &[false, false, false]);
        rows.extend(t("no-1", false, &[false, false, false]));
        let a = aggregate(&rows, STRICT);
        assert_eq!(a.trigger_suites[0].recall, Some(0.0));
        assert_eq!(a.trigger_suites[0].warning.as_deref(), Some(NEVER_FIRED));
        // One false positive: it fires, so the detector sees it; no warning.
        rows.extend(t("no-2", false, &[true, true, true]));
        assert_eq!(aggregate(&rows, STRICT).trigger_suites[0].warning, None);
    }

    #[test]
    fn baselines_give_deltas_and_a_p_value() {
        let mut rows = Vec::new();
        for i in 1..=10 {
            rows.push(row("c", i, Outcome::Passed));
            rows.push(Row {
                baseline: true,
                variant: Variant::Baseline,
                duration_ms: 3000,
                tokens: 300,
                ..row("c", i, Outcome::Failed)
            });
        }
        let a = aggregate(&rows, STRICT);
        let b = &a.baselines[0];
        assert_eq!(b.delta_pass_rate, 1.0);
        assert_eq!(b.delta_duration_ms, Some(-2000.0));
        assert_eq!(b.delta_tokens, Some(-200.0));
        // Fisher's exact test on [[10, 0], [0, 10]] (R: 1.0825e-05).
        assert!((b.p_value - 1.0825088e-05).abs() < 1e-9, "{}", b.p_value);
        assert_eq!(a.baseline_total.as_ref().unwrap().p_value, b.p_value);
        // The baseline's failures are not the case's.
        assert_eq!(a.cases[0].verdict, CaseVerdict::Pass);
        assert!(!a.failed());
    }

    #[test]
    fn skipped_and_errored_runs() {
        let rows = vec![row("a", 1, Outcome::Skipped), row("b", 1, Outcome::Error)];
        let a = aggregate(&rows, STRICT);
        assert_eq!(a.cases[0].verdict, CaseVerdict::None);
        assert_eq!(a.cases[1].verdict, CaseVerdict::Error);
        assert!(!a.failed());
    }
}
