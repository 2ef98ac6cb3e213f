//! Adaptive repeats (`--runs auto`): each case runs until its verdict is settled by Wald's
//! sequential probability ratio test, or until `--max-runs`. The test weighs "the case's pass
//! rate is at least `--min-pass-rate` + δ" against "at most `--min-pass-rate` − δ" (δ = 0.15,
//! narrowed to stay within 0.01–0.99), with both error rates 1 − `--confidence`: each pass and
//! each failure moves the log-likelihood ratio, and the case settles when it crosses either
//! bound. Unlike an interval, which at a threshold of 0.8 cannot clear it within 10 runs even
//! when all pass, the test settles a case that passes every run in 6 (at 90%), one that fails
//! its first two in 2; only cases near the threshold spend the budget. At `--max-runs` the
//! verdict is the pass rate against the threshold, as with a fixed `--runs`.
//!
//! It runs in rounds in one run folder: the first round runs every case [`FIRST`] times, each
//! later round goes on (as `--resume` does) with one more run of each case not yet settled.
//! Trigger evals keep their `--trigger-runs`.

use std::collections::BTreeMap;

use super::options::{RunOptions, Runs};
use super::{NotStarted, RunEvent, RunReport};
use crate::formats::LoadCtx;
use crate::record::case_run::{Arm, Kind};
use crate::record::layout;
use crate::record::run::{AdaptiveCase, AdaptiveRecord};
use crate::record::{CaseRunRecord, Outcome};
use crate::suite::Suite;

/// Runs of each case in the first round.
pub const FIRST: u32 = 2;

/// How a case stands after its runs so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Pass,
    Fail,
    Open,
}

/// The half-width of the indifference zone around the threshold.
pub const DELTA: f64 = 0.15;

/// The sequential test's two hypotheses for `threshold`: (bad, good) pass rates.
pub fn hypotheses(threshold: f64) -> (f64, f64) {
    let good = (threshold + DELTA).clamp(0.02, 0.99);
    let bad = (threshold - DELTA).clamp(0.01, good - 0.01);
    (bad, good)
}

/// Whether `passed` of `n` graded runs settle the verdict against `threshold` (Wald's
/// sequential probability ratio test, both error rates `1 - confidence`).
pub fn standing(passed: u64, n: u64, threshold: f64, confidence: f64) -> Standing {
    if n == 0 {
        return Standing::Open;
    }
    let (bad, good) = hypotheses(threshold);
    let failed = (n - passed) as f64;
    let llr = passed as f64 * (good / bad).ln() + failed * ((1.0 - good) / (1.0 - bad)).ln();
    let error = (1.0 - confidence).clamp(1e-6, 0.5);
    let bound = ((1.0 - error) / error).ln();
    if llr >= bound {
        Standing::Pass
    } else if llr <= -bound {
        Standing::Fail
    } else {
        Standing::Open
    }
}

type Key = (String, String);

/// Each graded run with the skill, by case and run number (a run redone by a later round, as
/// an errored one is, counts once: its latest outcome).
type Graded = BTreeMap<(String, String, u32), bool>;

/// Runs `suites` as `--runs` asks: in adaptive rounds for `auto`, else once.
pub fn run_as_asked(
    ctx: &LoadCtx,
    suites: &[Suite],
    opts: &RunOptions,
    on_event: impl FnMut(RunEvent<'_>),
) -> Result<RunReport, NotStarted> {
    if is_asked(opts) {
        run(ctx, suites, opts, on_event)
    } else {
        super::run(ctx, suites, opts, on_event)
    }
}

/// Whether the run is adaptive (`--runs auto`).
pub fn is_asked(opts: &RunOptions) -> bool {
    matches!(opts.settings.runs, Some(Runs::Auto))
}

/// The warning for `--runs auto` with `--min-pass-rate 1`, under which no passing case is ever
/// settled.
pub fn warning(opts: &RunOptions) -> Option<String> {
    (is_asked(opts) && opts.settings.min_pass_rate >= 1.0).then(|| format!(
        "warning: --runs auto with --min-pass-rate 1: a passing case is never settled (more runs can only fail it), so each takes --max-runs runs ({}); set --min-pass-rate below 1, e.g. 0.8",
        opts.settings.max_runs
    ))
}

/// The sequential test's settings: `--max-runs`, `--min-pass-rate`, `--confidence`.
#[derive(Debug, Clone, Copy)]
struct Rule {
    max: u32,
    threshold: f64,
    confidence: f64,
}

/// Runs `suites` with adaptive repeats; `opts.settings.runs` is `auto`.
pub fn run(
    ctx: &LoadCtx,
    suites: &[Suite],
    opts: &RunOptions,
    mut on_event: impl FnMut(RunEvent<'_>),
) -> Result<RunReport, NotStarted> {
    let rule = Rule {
        max: opts.settings.max_runs.max(1),
        threshold: opts.settings.min_pass_rate,
        confidence: opts.settings.confidence,
    };
    let mut targets: BTreeMap<Key, u32> = BTreeMap::new();
    for s in suites {
        for c in s.cases.iter().filter(|c| c.command.is_none()) {
            targets.insert((s.id.clone(), c.id.clone()), FIRST.min(rule.max));
        }
    }
    let mut graded = Graded::new();
    let mut o = opts.clone();
    let mut rounds = 0;
    let report = loop {
        rounds += 1;
        o.runs_for = targets.clone();
        let report = round(ctx, suites, &o, rounds == 1, &mut graded, &mut on_event)?;
        if report.interrupted || report.budget_stop.is_some() || report.record_error.is_some() {
            break report;
        }
        if !widen(&mut targets, &graded, rule) {
            break report;
        }
        o.settings.output_dir = None;
        o.settings.resume = Some(report.dir.clone());
    };
    Ok(record(report, &targets, &graded, rule, rounds))
}

/// One round: a run of `o` (the first, or a resume of the run folder), each graded run with
/// the skill counted as it finishes, or as it is read back when reused (from the cache; in
/// the first round, from the run being resumed).
fn round(
    ctx: &LoadCtx,
    suites: &[Suite],
    o: &RunOptions,
    first_round: bool,
    graded: &mut Graded,
    on_event: &mut impl FnMut(RunEvent<'_>),
) -> Result<RunReport, NotStarted> {
    let mut reused_dirs = Vec::new();
    let report = super::run(ctx, suites, o, |e| {
        match &e {
            RunEvent::Finished(r) => count(graded, r),
            // Kept from an earlier round: already counted. From the cache: new here.
            RunEvent::Reused(r) if first_round || r.from == "cache" => {
                reused_dirs.push(r.dir.clone())
            }
            _ => {}
        }
        on_event(e);
    })?;
    for d in reused_dirs {
        if let Ok(r) = crate::record::read_case_run(&d) {
            count(graded, &r);
        }
    }
    Ok(report)
}

/// Counts a case-run with the skill: passed, or failed (an error counts as a failure); any
/// other outcome takes back what an earlier run of that number counted.
fn count(graded: &mut Graded, r: &CaseRunRecord) {
    if r.kind != Kind::Case || r.variant != Arm::Skill {
        return;
    }
    let key = (r.suite.clone(), r.case.clone(), r.run);
    match r.outcome() {
        Outcome::Passed => {
            graded.insert(key, true);
        }
        Outcome::Failed | Outcome::Error => {
            graded.insert(key, false);
        }
        _ => {
            graded.remove(&key);
        }
    }
}

/// A case's graded runs: (passed, all).
fn tally(graded: &Graded, key: &Key) -> (u64, u64) {
    graded
        .range((key.0.clone(), key.1.clone(), 0)..=(key.0.clone(), key.1.clone(), u32::MAX))
        .fold((0, 0), |(p, n), (_, &ok)| (p + u64::from(ok), n + 1))
}

/// One more run of each case not yet settled and under `--max-runs`; whether there is any.
fn widen(targets: &mut BTreeMap<Key, u32>, graded: &Graded, rule: Rule) -> bool {
    let mut more = false;
    for (key, target) in targets.iter_mut() {
        let (p, n) = tally(graded, key);
        if *target < rule.max && standing(p, n, rule.threshold, rule.confidence) == Standing::Open {
            *target += 1;
            more = true;
        }
    }
    more
}

/// The report, with what adaptive repeats did written into its `run.json` (a failure to
/// write it is the report's `record_error`).
fn record(
    mut report: RunReport,
    targets: &BTreeMap<Key, u32>,
    graded: &Graded,
    rule: Rule,
    rounds: u32,
) -> RunReport {
    let Rule {
        max,
        threshold,
        confidence,
    } = rule;
    let cases: Vec<AdaptiveCase> = targets
        .iter()
        .map(|(key, &runs)| {
            let (p, n) = tally(graded, key);
            let settled = match standing(p, n, threshold, confidence) {
                Standing::Pass => "pass",
                Standing::Fail => "fail",
                Standing::Open if runs >= max => "max-runs",
                Standing::Open => "stopped",
            };
            AdaptiveCase {
                suite: key.0.clone(),
                case: key.1.clone(),
                runs,
                passed: p as u32,
                settled: settled.into(),
            }
        })
        .collect();
    let (bad, good) = hypotheses(threshold);
    let record = AdaptiveRecord {
        max_runs: max,
        confidence,
        rule: format!(
            "Wald's sequential test: a pass rate of {good:.2} against {bad:.2}, each error at most {:.0}%",
            (1.0 - confidence) * 100.0
        ),
        threshold,
        rounds,
        runs_used: cases.iter().map(|c| u64::from(c.runs)).sum(),
        runs_fixed: cases.len() as u64 * u64::from(max),
        cases,
    };
    let path = report.dir.join(layout::RUN_JSON);
    let written = crate::record::read_run(&report.dir)
        .map_err(|e| e.to_string())
        .and_then(|mut run| {
            run.adaptive = Some(record);
            crate::record::write_json(&path, &run).map_err(|e| e.to_string())
        });
    if let Err(e) = written {
        report.record_error = Some(format!("the adaptive record in run.json: {e}"));
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_cases_settle_in_a_few_runs_and_borderline_ones_do_not() {
        // At 0.5 and 90%: 4 of 4 settle, 3 of 3 do not.
        assert_eq!(standing(3, 3, 0.5, 0.9), Standing::Open);
        assert_eq!(standing(4, 4, 0.5, 0.9), Standing::Pass);
        assert_eq!(standing(0, 4, 0.5, 0.9), Standing::Fail);
        assert_eq!(standing(5, 10, 0.5, 0.9), Standing::Open);
        assert_eq!(standing(0, 0, 0.5, 0.9), Standing::Open);
        // At 0.8 (where a 90% interval cannot clear the threshold in 10 runs of 10 passes):
        // 6 passes settle, two failures settle, a failure among passes keeps it open.
        assert_eq!(standing(5, 5, 0.8, 0.9), Standing::Open);
        assert_eq!(standing(6, 6, 0.8, 0.9), Standing::Pass);
        assert_eq!(standing(0, 2, 0.8, 0.9), Standing::Fail);
        assert_eq!(standing(8, 9, 0.8, 0.9), Standing::Open);
        // A threshold of 1: one failure settles it; passes need many runs.
        assert_eq!(standing(0, 1, 1.0, 0.9), Standing::Fail);
        assert_eq!(standing(10, 10, 1.0, 0.9), Standing::Open);
    }

    /// Simulated: the test's error rates hold near the stated ones at the hypotheses.
    #[test]
    fn the_error_rates_are_near_the_stated_ones() {
        let (bad, good) = hypotheses(0.8);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut draw = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut wrong = [0u32; 2];
        for (i, p) in [good, bad].iter().enumerate() {
            for _ in 0..2000 {
                let (mut passed, mut n) = (0, 0);
                let verdict = loop {
                    n += 1;
                    passed += u64::from(draw() < *p);
                    match standing(passed, n, 0.8, 0.9) {
                        Standing::Open if n < 200 => continue,
                        s => break s,
                    }
                };
                let want = if i == 0 {
                    Standing::Pass
                } else {
                    Standing::Fail
                };
                wrong[i] += u32::from(verdict != want);
            }
        }
        // Wald's bounds keep each error at or below about 1 - confidence (10%).
        assert!(wrong[0] < 2000 / 8, "{wrong:?}");
        assert!(wrong[1] < 2000 / 8, "{wrong:?}");
    }
}
