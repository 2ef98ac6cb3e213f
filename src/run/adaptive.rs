//! Adaptive repeats (`--runs auto`): each case runs until its verdict is settled — the Wilson
//! interval of its pass rate, at `--confidence`, lies wholly above `--min-pass-rate` (settled
//! pass) or wholly below it (settled fail) — or until `--max-runs`. Stable cases stop after a
//! few runs; only borderline ones spend the budget.
//!
//! It runs in rounds in one run folder: the first round runs every case [`FIRST`] times, each
//! later round goes on (as `--resume` does) with one more run of each case not yet settled.
//! Trigger evals keep their `--trigger-runs`.

use std::collections::BTreeMap;

use super::{NotStarted, RunEvent, RunOptions, RunReport};
use crate::record::case_run::{Kind, Variant};
use crate::record::run::{AdaptiveCase, AdaptiveRecord};
use crate::record::{CaseRunRecord, Outcome};
use crate::spec::Suite;
use crate::spec::formats::LoadCtx;

/// Runs of each case in the first round.
pub const FIRST: u32 = 2;

/// How a case stands after its runs so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Pass,
    Fail,
    Open,
}

/// Whether `passed` of `n` graded runs settle the verdict against `threshold`.
pub fn standing(passed: u64, n: u64, threshold: f64, confidence: f64) -> Standing {
    if n == 0 {
        return Standing::Open;
    }
    let (lo, hi) = crate::stats::wilson_at(passed, n, confidence);
    if lo >= threshold {
        Standing::Pass
    } else if hi < threshold {
        Standing::Fail
    } else {
        Standing::Open
    }
}

type Key = (String, String);

/// Runs `suites` with adaptive repeats; `opts.settings.runs` is `auto`.
pub fn run(
    ctx: &LoadCtx,
    suites: &[Suite],
    opts: &RunOptions,
    mut on_event: impl FnMut(RunEvent<'_>),
) -> Result<RunReport, NotStarted> {
    let max = opts.settings.max_runs.max(1);
    let threshold = opts.settings.min_pass_rate;
    let confidence = opts.settings.confidence;
    let mut targets: BTreeMap<Key, u32> = BTreeMap::new();
    for s in suites {
        for c in s.cases.iter().filter(|c| c.command.is_none()) {
            targets.insert((s.id.clone(), c.id.clone()), FIRST.min(max));
        }
    }
    // Each graded run with the skill, by case and run number (a run redone by a later round,
    // as an errored one is, counts once: its latest outcome).
    let mut graded: BTreeMap<(String, String, u32), bool> = BTreeMap::new();
    let tally = |graded: &BTreeMap<(String, String, u32), bool>, key: &Key| -> (u64, u64) {
        graded
            .range((key.0.clone(), key.1.clone(), 0)..=(key.0.clone(), key.1.clone(), u32::MAX))
            .fold((0, 0), |(p, n), (_, &ok)| (p + u64::from(ok), n + 1))
    };
    let mut o = opts.clone();
    let mut rounds = 0;
    let report = loop {
        rounds += 1;
        o.runs_for = targets.clone();
        let first_round = rounds == 1;
        let mut count = |r: &CaseRunRecord| {
            if r.kind == Kind::Case && r.variant == Variant::Skill {
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
        };
        let mut reused_dirs = Vec::new();
        let report = super::run(ctx, suites, &o, |e| {
            match &e {
                RunEvent::Finished(r) => count(r),
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
                count(&r);
            }
        }
        if report.interrupted || report.budget_stop.is_some() || report.record_error.is_some() {
            break report;
        }
        let mut more = false;
        for (key, target) in targets.iter_mut() {
            let (p, n) = tally(&graded, key);
            if *target < max && standing(p, n, threshold, confidence) == Standing::Open {
                *target += 1;
                more = true;
            }
        }
        if !more {
            break report;
        }
        o.settings.output_dir = None;
        o.settings.resume = Some(report.dir.clone());
    };
    let cases: Vec<AdaptiveCase> = targets
        .iter()
        .map(|(key, &runs)| {
            let (p, n) = tally(&graded, key);
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
    let record = AdaptiveRecord {
        max_runs: max,
        confidence,
        threshold,
        rounds,
        runs_used: cases.iter().map(|c| u64::from(c.runs)).sum(),
        runs_fixed: cases.len() as u64 * u64::from(max),
        cases,
    };
    let mut report = report;
    let path = report.dir.join("run.json");
    let written = crate::record::read_run(&report.dir)
        .map_err(|e| e.to_string())
        .and_then(|mut run| {
            run.adaptive = Some(record);
            crate::record::write_json(&path, &run).map_err(|e| e.to_string())
        });
    if let Err(e) = written {
        report.record_error = Some(format!("the adaptive record in run.json: {e}"));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_cases_settle_in_a_few_runs_and_borderline_ones_do_not() {
        // At 90%, 3 of 3 clear 0.5; 2 of 2 do not.
        assert_eq!(standing(2, 2, 0.5, 0.9), Standing::Open);
        assert_eq!(standing(3, 3, 0.5, 0.9), Standing::Pass);
        assert_eq!(standing(0, 3, 0.5, 0.9), Standing::Fail);
        assert_eq!(standing(5, 10, 0.5, 0.9), Standing::Open);
        // A threshold of 1: a pass is never settled (more runs can only fail it); a failure is.
        assert_eq!(standing(50, 50, 1.0, 0.9), Standing::Open);
        assert_eq!(standing(9, 10, 1.0, 0.5), Standing::Fail);
        assert_eq!(standing(0, 0, 0.5, 0.9), Standing::Open);
    }
}
