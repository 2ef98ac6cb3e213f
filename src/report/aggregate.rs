//! Statistics over a run's case-runs: each case over its runs, each suite and the whole run,
//! trigger rates with precision and recall, and what the skill changes against its baseline.
//! Computed from `result.json` files alone, so `assay run` and `assay report` agree.

use std::collections::BTreeMap;

use serde::Serialize;

use super::routing::{SkillRouting, TriggerStats, per_skill, trigger_stats};
use super::rows::Row;
use crate::record::{Outcome, RunRecord};
use crate::stats;

pub use super::verdict::CaseVerdict;

/// How cases are judged over their runs, as the run recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VerdictSettings {
    pub min_pass_rate: f64,
    pub pass_k: u32,
}

impl VerdictSettings {
    /// From `run.json`'s options (defaults for runs recorded before they existed).
    pub fn of(run: &RunRecord) -> VerdictSettings {
        VerdictSettings {
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
pub struct ArmStats {
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
    pub skill: ArmStats,
    pub baseline: ArmStats,
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
    pub settings: VerdictSettings,
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
    pub routing: Vec<SkillRouting>,
}

impl Aggregates {
    /// Whether a run's reports show routing: more than one skill in play, or a rule to check.
    pub fn shows_routing(&self) -> bool {
        !self.routing.is_empty() || self.triggers.iter().any(|t| !t.rules.is_empty())
    }

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

fn case_stats(rows: &[&Row], s: VerdictSettings) -> CaseStats {
    let g = GradedRuns::of(rows);
    let (n, passed) = (g.n(), g.passed);
    let errors = rows.iter().filter(|r| r.outcome == Outcome::Error).count() as u64;
    let k = s.pass_k.min(n.max(1) as u32);
    let sd = g.scores();
    let stability = stats::stability(passed, n);
    let min_stability = rows.iter().find_map(|r| r.min_stability);
    let pass_threshold = rows.iter().find_map(|r| r.pass_threshold);
    let mean_score = g.scores().map(|(m, _)| m);
    let rate = g.rate();
    let verdict = if n == 0 {
        CaseVerdict::None
    } else if errors == n {
        CaseVerdict::Error
    } else {
        let ok = match (pass_threshold, min_stability) {
            // Claude Code plugin evals: the mean of the runs' scores reaches the threshold.
            (Some(t), _) => mean_score.unwrap_or(0.0) >= t,
            // clauditor `variance`: most runs pass, and the runs agree enough.
            (None, Some(ms)) => passed * 2 > n && stability >= ms,
            (None, None) => rate.rate >= s.min_pass_rate,
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
        if let Some(t) = pass_threshold {
            return format!(
                "mean score {:.2} over {n} run(s), below the threshold {t}: {first}",
                mean_score.unwrap_or(0.0)
            );
        }
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

fn arm(rows: &[&Row]) -> ArmStats {
    let g = GradedRuns::of(rows);
    ArmStats {
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
    settings: VerdictSettings,
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
pub fn aggregate(rows: &[Row], settings: VerdictSettings) -> Aggregates {
    let mut cases = Vec::new();
    let mut triggers = Vec::new();
    let mut baselines = Vec::new();
    for ((suite, case), mut g) in groups(rows) {
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
            baselines.push(baseline_stats(&suite, &case, &main, &base, settings));
        }
    }
    let case_rows: Vec<&Row> = rows.iter().filter(|r| !r.trigger && !r.baseline).collect();
    let baseline_total = baseline_total(rows, &baselines, settings);
    Aggregates {
        settings,
        routing: per_skill(&triggers),
        suites: suite_totals(&cases, &case_rows),
        total: totals("*", &cases.iter().collect::<Vec<_>>(), &case_rows),
        trigger_suites: trigger_totals(&triggers),
        cases,
        triggers,
        baselines,
        baseline_total,
    }
}

/// The rows by (suite, case), in the order each case is first seen.
fn groups(rows: &[Row]) -> Vec<((String, String), Vec<&Row>)> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut groups: BTreeMap<(String, String), Vec<&Row>> = BTreeMap::new();
    for r in rows {
        let key = (r.suite.clone(), r.case.clone());
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(r);
    }
    order
        .into_iter()
        .map(|key| {
            let g = groups.remove(&key).unwrap_or_default();
            (key, g)
        })
        .collect()
}

/// Each suite's totals over its cases, in the order the suites' cases come.
fn suite_totals(cases: &[CaseStats], case_rows: &[&Row]) -> Vec<Totals> {
    let mut suite_names: Vec<String> = Vec::new();
    for c in cases {
        if !suite_names.contains(&c.suite) {
            suite_names.push(c.suite.clone());
        }
    }
    suite_names
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
        .collect()
}

/// Each suite's trigger queries as a classifier, in the order the queries come.
fn trigger_totals(triggers: &[TriggerStats]) -> Vec<TriggerTotals> {
    let mut trigger_suites: Vec<TriggerTotals> = Vec::new();
    // Each suite's queries as a classifier, beside `trigger_suites`.
    let mut confusions: Vec<stats::Confusion> = Vec::new();
    for t in triggers {
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
    trigger_suites
}

/// With the skill against the baseline over the whole run, when any case has a baseline.
fn baseline_total(
    rows: &[Row],
    baselines: &[BaselineStats],
    settings: VerdictSettings,
) -> Option<BaselineStats> {
    (!baselines.is_empty()).then(|| {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::case_run::Arm;

    fn row(case: &str, run: u32, outcome: Outcome) -> Row {
        Row {
            suite: "s".into(),
            case: case.into(),
            run,
            trigger: false,
            baseline: false,
            variant: Arm::Skill,
            outcome,
            score: Some(if outcome == Outcome::Passed { 1.0 } else { 0.0 }),
            duration_ms: 1000,
            tokens: 100,
            cost_usd: None,
            cached: false,
            reason: (outcome != Outcome::Passed).then(|| "wrong".into()),
            min_stability: None,
            pass_threshold: None,
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

    const STRICT: VerdictSettings = VerdictSettings {
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
            VerdictSettings {
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
                variant: Arm::Baseline,
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
