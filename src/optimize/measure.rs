//! Measuring descriptions: trigger evals through the real agent, as `assay run --mode
//! triggers` runs them (the same sandbox, harness and detector), one suite per description.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Query;
use super::score::{QueryScore, Score};
use crate::formats::LoadCtx;
use crate::record::layout;
use crate::suite::{Location, Skill, Suite, TriggerCase};
use crate::{
    record::run::Mode,
    run::{self, NotStarted, RunEvent, RunOptions},
};

/// One description to measure: a label (its suite's id) and the skill installed with it.
pub struct Described {
    pub label: String,
    pub skill: Skill,
}

/// Runs every query of `queries` `opts.settings.trigger_runs` times for each variant, in one
/// run recorded in `dir`, and scores each variant. The base suite gives the project, harness,
/// model and everything else a trigger eval of the skill uses.
pub fn measure(
    ctx: &LoadCtx,
    base: &Suite,
    variants: &[Described],
    queries: &[Query],
    opts: &RunOptions,
    dir: &Path,
) -> Result<Vec<Score>, String> {
    let suites = suites_for(base, variants, queries);
    let o = options_for(opts, dir);
    let mut fired = Fired::default();
    // (this run's suite and query, the reused case-run's folder)
    let mut reused: Vec<(String, String, PathBuf)> = Vec::new();
    let result = run::run(ctx, &suites, &o, |e| match e {
        RunEvent::Finished(r) => fired.add(r),
        RunEvent::Reused(r) => reused.push((r.suite.clone(), r.case.clone(), r.dir.clone())),
        RunEvent::Started { .. } | RunEvent::Retrying(_) => {}
    });
    for (suite, case, dir) in reused {
        let mut r: crate::record::case_run::CaseRunRecord =
            std::fs::read(dir.join(layout::RESULT_JSON))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .ok_or_else(|| format!("cannot read the reused result in {}", dir.display()))?;
        // A description proposed again is measured by the cache, whose record still names the
        // candidate it was first measured as: it counts for this one.
        r.suite = suite;
        r.case = case;
        fired.add(&r);
    }
    ran(result)?;
    variants
        .iter()
        .map(|v| fired.score(v, queries, dir))
        .collect()
}

/// One suite per variant: the base suite with the variant's skill, its queries as trigger
/// evals and no cases.
fn suites_for(base: &Suite, variants: &[Described], queries: &[Query]) -> Vec<Suite> {
    let location = base
        .triggers
        .first()
        .map(|t| t.location.clone())
        .unwrap_or(Location {
            file: base.source.clone(),
            line: 1,
            column: 1,
        });
    variants
        .iter()
        .map(|v| {
            let mut s = base.clone();
            s.id = v.label.clone();
            s.cases = Vec::new();
            s.skill = Some(v.skill.clone());
            s.triggers = queries
                .iter()
                .map(|q| TriggerCase {
                    id: q.id.clone(),
                    query: q.query.clone(),
                    should_trigger: q.should_trigger,
                    routing: Default::default(),
                    location: location.clone(),
                    holdout: false,
                })
                .collect();
            s
        })
        .collect()
}

/// The run's options: trigger evals only, once each, recorded in `dir`, no judge.
fn options_for(opts: &RunOptions, dir: &Path) -> RunOptions {
    let mut o = opts.clone();
    o.settings.output_dir = Some(dir.to_path_buf());
    o.settings.mode = Mode::Triggers;
    o.settings.runs = Some(crate::run::options::Runs::Fixed(1));
    o.settings.filter = None;
    o.settings.target = None;
    o.settings.shard = None;
    o.settings.resume = None;
    o.settings.dry_run = false;
    o.baseline = None;
    o.judge = Some("none".into());
    o
}

/// What the trigger runs said, by suite (a variant's label).
#[derive(Default)]
struct Fired {
    /// (suite, query id) → times fired, runs.
    fired: BTreeMap<(String, String), (u64, u64)>,
    /// Runs that did not say whether the skill fired.
    failed: BTreeMap<String, u64>,
    cost: BTreeMap<String, f64>,
}

impl Fired {
    fn add(&mut self, r: &crate::record::case_run::CaseRunRecord) {
        *self.cost.entry(r.suite.clone()).or_default() += r.cost_usd.unwrap_or(0.0);
        match r.trigger.as_ref().and_then(|t| t.fired) {
            Some(f) => {
                let e = self
                    .fired
                    .entry((r.suite.clone(), r.case.clone()))
                    .or_default();
                e.0 += u64::from(f);
                e.1 += 1;
            }
            None => *self.failed.entry(r.suite.clone()).or_default() += 1,
        }
    }

    /// The variant's score; an error when none of its runs said whether the skill fired.
    fn score(&self, v: &Described, queries: &[Query], dir: &Path) -> Result<Score, String> {
        let per_query = queries
            .iter()
            .map(|q| {
                let (f, n) = self
                    .fired
                    .get(&(v.label.clone(), q.id.clone()))
                    .copied()
                    .unwrap_or((0, 0));
                QueryScore {
                    id: q.id.clone(),
                    query: q.query.clone(),
                    should_trigger: q.should_trigger,
                    fired: f,
                    runs: n,
                }
            })
            .collect();
        let score = Score::from_queries(
            per_query,
            self.failed.get(&v.label).copied().unwrap_or(0),
            self.cost.get(&v.label).copied().unwrap_or(0.0),
        );
        if score.runs == 0 {
            return Err(format!(
                "no trigger run of `{}` said whether the skill fired ({} failed): see the run folder {}",
                v.label,
                score.failed,
                dir.display()
            ));
        }
        Ok(score)
    }
}

/// Why the run measured nothing, if it did not run to its end.
fn ran(result: Result<run::RunReport, NotStarted>) -> Result<(), String> {
    match result {
        Ok(report) if report.interrupted => Err("interrupted".into()),
        Ok(_) => Ok(()),
        Err(NotStarted::Unavailable(u)) => Err(u
            .iter()
            .map(|(n, u)| format!("{n}: {} ({})", u.message, u.fix))
            .collect::<Vec<_>>()
            .join("; ")),
        Err(NotStarted::BadInput(p)) => Err(p
            .iter()
            .map(|p| format!("{}: {}", p.location(), p.message))
            .collect::<Vec<_>>()
            .join("; ")),
        Err(NotStarted::DryRun(_)) => Err("a dry run measures nothing".into()),
    }
}
