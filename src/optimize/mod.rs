//! The optimise stage: `assay optimize description`, a skill's description improved against
//! its trigger queries, and changed only when the gain is shown to be real.
//!
//! The queries are split, stratified, into train and holdout, unless the suites give the
//! holdout (agentskills.io's `validation_queries.json` beside its `train_queries.json`, kept
//! as it is: the training queries are train, the validation queries holdout). The current description is
//! measured on both through the real agent (trigger evals, as `assay run` runs them). Each
//! iteration, a proposer model sees the description, the skill's body and the train queries it
//! got wrong (never the holdout) and writes candidates; each is measured on train, the best on
//! holdout. A candidate replaces the current description only when its holdout accuracy is
//! higher and Fisher's exact test on the holdout's correct and wrong runs gives a p-value under
//! `alpha` divided among every holdout comparison the optimisation may make (Bonferroni).
//! Everything is recorded in `optimize.json` as it goes, and `--resume` picks it up.

pub mod description;
pub mod feedback;
pub mod html;
pub mod measure;
pub mod propose;
pub mod queries;
pub mod score;
pub mod split;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::formats::LoadCtx;
use crate::judge::provider::Judge;
use crate::record::layout;
use crate::run::RunOptions;
use crate::suite::{Skill, SkillKind, Suite};
use measure::Described;
use score::{CandidateVerdict, Score};

/// The version of `optimize.json`.
pub const SCHEMA: &str = "assay.optimize/v1";

/// One trigger query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Query {
    pub id: String,
    pub query: String,
    pub should_trigger: bool,
}

/// How the optimisation goes.
#[derive(Debug, Clone)]
pub struct OptimizeSettings {
    pub train_fraction: f64,
    pub seed: u64,
    pub iterations: u32,
    pub candidates: u32,
    /// How many of each iteration's candidates (the best on train) are measured on holdout.
    pub holdout_top: u32,
    pub alpha: f64,
    pub max_cost: Option<f64>,
    /// The fire rate a query needs to count as firing (`--trigger-threshold`).
    pub threshold: f64,
}

/// A description with its scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub description: String,
    pub train: Score,
    pub holdout: Option<Score>,
}

/// One candidate of an iteration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub description: String,
    pub train: Option<Score>,
    pub holdout: Option<Score>,
    /// Against the description current at this iteration, on holdout.
    pub comparison: Option<CandidateVerdict>,
}

/// One round: the candidates proposed from the current description, and which (if any)
/// replaced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iteration {
    pub number: u32,
    pub from: String,
    pub candidates: Vec<Candidate>,
    pub accepted: Option<usize>,
    /// Why no candidate was proposed or measured, when none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `optimize.json`: everything the optimisation did and decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub schema: String,
    pub skill: String,
    /// The file whose description is optimised.
    pub file: PathBuf,
    pub seed: u64,
    pub train_fraction: f64,
    pub trigger_runs: u32,
    pub threshold: f64,
    pub alpha: f64,
    /// `alpha` over the number of holdout comparisons the settings allow.
    pub level: f64,
    pub proposer: String,
    pub train: Vec<Query>,
    pub holdout: Vec<Query>,
    /// The files the holdout was read from, when the suites gave it (agentskills.io's
    /// `validation_queries.json`); empty when it was split off (by `seed` and `train_fraction`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holdout_from: Vec<String>,
    pub start: Option<Measured>,
    pub iterations: Vec<Iteration>,
    /// The description at the end: the start's, or the last accepted candidate's.
    pub best: Option<Measured>,
    pub improved: bool,
    pub verdict: String,
    /// What the agents reported spending (the proposer's calls are not counted: the judge
    /// APIs report tokens, not dollars).
    pub cost_usd: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The reviewer notes `--feedback` gave on trigger case-runs: those on train queries were
    /// shown to the proposer (`used`), the others left out, saying why (a holdout query never).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feedback: Vec<feedback::Note>,
    /// The rounds, candidates and holdout places the settings allowed (absent in records
    /// written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<PlannedBudget>,
}

/// What the settings allowed, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedBudget {
    pub iterations: u32,
    pub candidates: u32,
    pub holdout_top: u32,
}

/// What can stop an optimisation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: the skill, the queries or the resumed folder (exit 2).
    #[error("{0}")]
    Input(String),
    /// A measurement or the proposer failed (exit 3); what was done is recorded.
    #[error("{0}")]
    Infrastructure(String),
}

/// The optimisation's inputs.
pub struct Optimization<'a> {
    pub ctx: &'a LoadCtx,
    /// The suite the queries come from: the project, harness and settings trigger evals use.
    pub base: &'a Suite,
    pub skill: &'a Skill,
    /// Every query, split into train and holdout; the training queries when `holdout` is given.
    pub queries: Vec<Query>,
    /// The holdout the suites give (their validation queries), used instead of a split.
    pub holdout: Option<queries::GivenHoldout>,
    pub opts: &'a RunOptions,
    pub settings: OptimizeSettings,
    pub proposer: &'a Judge,
    pub proposer_name: String,
    /// The folder everything is recorded in (`optimize.json`, each measurement's run folder,
    /// each candidate's skill copy).
    pub dir: PathBuf,
    /// A record to go on from (`--resume`).
    pub resume: Option<Record>,
    /// Reviewer notes on trigger case-runs (`--feedback`); on `--resume` without any, the
    /// recorded ones stand.
    pub feedback: Vec<feedback::Note>,
}

/// Runs the optimisation, telling `say` what it does as it goes. When a measurement or the
/// proposer fails, the last record says it stopped and why (its page too), and the error is
/// returned.
pub fn optimize(job: &Optimization<'_>, say: &mut dyn FnMut(String)) -> Result<Record, Error> {
    let result = steps(job, say);
    let Err(Error::Infrastructure(why)) = &result else {
        return result;
    };
    match load(&job.dir) {
        Ok(mut rec) if rec.verdict.is_empty() => {
            rec.stopped = Some(format!("an error: {why}"));
            match save(&job.dir, &rec) {
                Ok(()) => result,
                Err(e) => Err(Error::Infrastructure(format!("{why}; {e}"))),
            }
        }
        // Nothing recorded yet (or already decided): the error alone.
        _ => result,
    }
}

/// The optimisation's steps, each recorded as it ends.
fn steps(job: &Optimization<'_>, say: &mut dyn FnMut(String)) -> Result<Record, Error> {
    let (text, mut rec, start) = begin(job, say)?;
    // From the start, replaying what is recorded (a resumed optimisation re-decides from the
    // recorded scores, without asking or measuring again).
    let mut best = start;
    let mut rounds = Rounds {
        job,
        text: &text,
        rec: &mut rec,
        best: &mut best,
    };
    for number in 1..=job.settings.iterations {
        if let Some(max) = job.settings.max_cost
            && rounds.rec.cost_usd >= max
        {
            rounds.rec.stopped = Some(format!(
                "the budget: ${:.4} spent of ${max}",
                rounds.rec.cost_usd
            ));
            break;
        }
        if rounds.run(number, say)? == Next::Stop {
            break;
        }
    }
    let start = rec.start.clone().unwrap_or_else(|| best.clone());
    rec.improved = best.description != start.description;
    rec.verdict = verdict(&start, &best, rec.improved, rec.level);
    rec.best = Some(best);
    save(&job.dir, &rec)?;
    Ok(rec)
}

/// The skill file's text, the record with the split and the start measured (saved), and the
/// start.
fn begin(
    job: &Optimization<'_>,
    say: &mut dyn FnMut(String),
) -> Result<(String, Record, Measured), Error> {
    let s = &job.settings;
    let file = description::skill_file(&job.skill.path, job.skill.kind);
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Error::Input(format!("cannot read {}: {e}", file.display())))?;
    let current = crate::suite::skill::front_matter_field(&text, "description").unwrap_or_default();
    let comparisons = (s.iterations * s.holdout_top).max(1);
    let mut rec = record(job, &file, comparisons, say);
    both_kinds(&rec)?;
    say(split_line(&rec, comparisons));
    save(&job.dir, &rec)?;

    let start = measure_start(job, &mut rec, &current, say)?;
    say(format!("current: {}", line(&start)));
    let never = |sc: &Score| {
        sc.recall_precision().0 == Some(0.0)
            && sc.queries.iter().all(|q| q.should_trigger || q.fired == 0)
    };
    if never(&start.train) && start.holdout.as_ref().is_some_and(never) {
        say(format!(
            "warning: {}",
            crate::report::aggregate::NEVER_FIRED
        ));
    }
    rec.start = Some(start.clone());
    save(&job.dir, &rec)?;
    Ok((text, rec, start))
}

/// After a round: go on, or stop the rounds.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    Go,
    Stop,
}

/// The rounds of proposing and measuring, over the record and the best description so far.
struct Rounds<'a, 'j> {
    job: &'a Optimization<'j>,
    /// The skill file's text.
    text: &'a str,
    rec: &'a mut Record,
    best: &'a mut Measured,
}

impl Rounds<'_, '_> {
    /// Rounds `number`: its candidates (as recorded, or proposed), measured on train, the best
    /// few on holdout, and the most significant gain accepted.
    fn run(&mut self, number: u32, say: &mut dyn FnMut(String)) -> Result<Next, Error> {
        let mut it = self.iteration(number, say)?;
        if it.candidates.is_empty() {
            let stop = it.note.is_some();
            push_iteration(self.rec, it);
            save(&self.job.dir, self.rec)?;
            return Ok(if stop { Next::Stop } else { Next::Go });
        }
        self.on_train(&mut it, number, say)?;
        let ranked = self.on_holdout(&mut it, number, say)?;
        for (k, c) in it.candidates.iter().enumerate() {
            say(format!(
                "  candidate {number}.{}: {}",
                k + 1,
                candidate_line(c)
            ));
        }
        it.accepted = most_significant(&it, &ranked);
        if let Some(k) = it.accepted {
            let c = &it.candidates[k];
            *self.best = Measured {
                description: c.description.clone(),
                train: c.train.clone().unwrap_or_default(),
                holdout: c.holdout.clone(),
            };
            say(format!(
                "iteration {number}: accepted candidate {number}.{}",
                k + 1
            ));
        } else {
            say(format!(
                "iteration {number}: no candidate beat the current description significantly"
            ));
        }
        push_iteration(self.rec, it);
        self.rec.best = Some(self.best.clone());
        save(&self.job.dir, self.rec)?;
        Ok(Next::Go)
    }

    /// The round as recorded when it started from the same description, else a new one
    /// (recorded rounds from another description dropped).
    fn iteration(&mut self, number: u32, say: &mut dyn FnMut(String)) -> Result<Iteration, Error> {
        let (job, rec, best) = (self.job, &mut *self.rec, &*self.best);
        let done = rec.iterations.iter().position(|i| i.number == number);
        Ok(match done {
            Some(i) if rec.iterations[i].from == best.description => rec.iterations[i].clone(),
            Some(_) => {
                // Recorded from another description: the later ones are dropped.
                rec.iterations.truncate(done.unwrap_or(0));
                new_iteration(job, &rec.feedback, self.text, best, number, say)?
            }
            None => new_iteration(job, &rec.feedback, self.text, best, number, say)?,
        })
    }

    /// Every candidate not yet measured on train, measured and recorded.
    fn on_train(
        &mut self,
        it: &mut Iteration,
        number: u32,
        say: &mut dyn FnMut(String),
    ) -> Result<(), Error> {
        let missing: Vec<usize> = (0..it.candidates.len())
            .filter(|&k| it.candidates[k].train.is_none())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        say(format!(
            "iteration {number}: measuring {} candidate(s) on train",
            missing.len()
        ));
        let on = Candidates {
            text: self.text,
            number,
            which: &missing,
        };
        on.measure(self.job, self.rec, it, Half::Train)?;
        push_iteration(self.rec, it.clone());
        save(&self.job.dir, self.rec)
    }

    /// The best few on train that beat the current description there, measured on holdout
    /// and compared with it; their places, best first.
    fn on_holdout(
        &mut self,
        it: &mut Iteration,
        number: u32,
        say: &mut dyn FnMut(String),
    ) -> Result<Vec<usize>, Error> {
        let ranked = ranked(it, self.best, self.job.settings.holdout_top);
        let to_measure: Vec<usize> = ranked
            .iter()
            .copied()
            .filter(|&k| it.candidates[k].holdout.is_none())
            .collect();
        if !to_measure.is_empty() {
            say(format!(
                "iteration {number}: measuring the best {} on holdout",
                to_measure.len()
            ));
            let on = Candidates {
                text: self.text,
                number,
                which: &to_measure,
            };
            on.measure(self.job, self.rec, it, Half::Holdout)?;
        }
        let current_holdout = self.best.holdout.clone().unwrap_or_default();
        for &k in &ranked {
            if let Some(h) = &it.candidates[k].holdout {
                it.candidates[k].comparison =
                    Some(score::compare(h, &current_holdout, self.rec.level));
            }
        }
        Ok(ranked)
    }
}

/// The record to go on from (`--resume`, what stopped it last time cleared) or a new one
/// with the split, what the settings plan, and the reviewer notes sorted into used and left
/// out (said).
fn record(
    job: &Optimization<'_>,
    file: &Path,
    comparisons: u32,
    say: &mut dyn FnMut(String),
) -> Record {
    let s = &job.settings;
    let mut rec = match &job.resume {
        // Going on: what stopped it last time is over.
        Some(r) => Record {
            stopped: None,
            ..r.clone()
        },
        None => {
            let (train, holdout) = match &job.holdout {
                Some(given) => (job.queries.clone(), given.queries.clone()),
                None => split::stratified(&job.queries, s.train_fraction, s.seed),
            };
            Record {
                schema: SCHEMA.into(),
                skill: job.skill.name.clone(),
                file: file.to_path_buf(),
                seed: s.seed,
                train_fraction: s.train_fraction,
                trigger_runs: job.opts.settings.trigger_runs,
                threshold: s.threshold,
                alpha: s.alpha,
                level: s.alpha / f64::from(comparisons),
                proposer: job.proposer_name.clone(),
                train,
                holdout,
                holdout_from: job
                    .holdout
                    .as_ref()
                    .map(|h| h.files.clone())
                    .unwrap_or_default(),
                start: None,
                iterations: Vec::new(),
                best: None,
                improved: false,
                verdict: String::new(),
                cost_usd: 0.0,
                stopped: None,
                feedback: Vec::new(),
                planned: None,
            }
        }
    };
    if rec.planned.is_none() {
        rec.planned = Some(PlannedBudget {
            iterations: s.iterations,
            candidates: s.candidates,
            holdout_top: s.holdout_top,
        });
    }
    if !job.feedback.is_empty() {
        rec.feedback = job.feedback.clone();
    }
    feedback::sort_out(&mut rec.feedback, &rec.train, &rec.holdout);
    if !rec.feedback.is_empty() {
        let used = rec.feedback.iter().filter(|n| n.used).count();
        let holdout = rec
            .feedback
            .iter()
            .filter(|n| !n.used && rec.holdout.iter().any(|q| q.query.trim() == n.query.trim()))
            .count();
        say(format!(
            "feedback: {used} reviewer note(s) on train queries go to the proposer; {holdout} on holdout queries and {} on other queries are left out",
            rec.feedback.len() - used - holdout
        ));
    }
    rec
}

/// How the queries were split, and what accepts a candidate.
fn split_line(rec: &Record, comparisons: u32) -> String {
    let split = if rec.holdout_from.is_empty() {
        format!(
            "split (seed {}): {} train and {} holdout queries",
            rec.seed,
            rec.train.len(),
            rec.holdout.len()
        )
    } else {
        format!(
            "holdout as given: {} validation queries from {}, {} train queries (not split)",
            rec.holdout.len(),
            rec.holdout_from.join(", "),
            rec.train.len()
        )
    };
    format!(
        "{split}; {} trigger run(s) each; accept at p < {:.4} (alpha {} over {comparisons} holdout comparison(s))",
        rec.trigger_runs, rec.level, rec.alpha
    )
}

/// Each half has queries of both kinds, or the optimisation cannot measure anything.
fn both_kinds(rec: &Record) -> Result<(), Error> {
    for (half, qs) in [("train", &rec.train), ("holdout", &rec.holdout)] {
        for kind in [true, false] {
            if !qs.iter().any(|q| q.should_trigger == kind) {
                let given = match (half, rec.holdout_from.is_empty()) {
                    (_, true) => String::new(),
                    ("holdout", false) => {
                        format!(" (the validation set, {})", rec.holdout_from.join(", "))
                    }
                    _ => " (the training set)".to_string(),
                };
                return Err(Error::Input(format!(
                    "the {half} half{given} has no query that should {}fire: give at least two of each kind",
                    if kind { "" } else { "not " }
                )));
            }
        }
    }
    Ok(())
}

/// The description as it is, on both halves (taken from the record when it is there).
fn measure_start(
    job: &Optimization<'_>,
    rec: &mut Record,
    current: &str,
    say: &mut dyn FnMut(String),
) -> Result<Measured, Error> {
    Ok(match rec.start.clone() {
        Some(m) if m.holdout.is_some() => m,
        _ => {
            say(format!(
                "measuring the current description on train and holdout ({} queries)",
                rec.train.len() + rec.holdout.len()
            ));
            let v = [Described {
                label: "optimize:current".into(),
                skill: job.skill.clone(),
            }];
            let train = step(job, rec, &v, Half::Train, "start-train")?.remove(0);
            let holdout = step(job, rec, &v, Half::Holdout, "start-holdout")?.remove(0);
            Measured {
                description: current.to_string(),
                train,
                holdout: Some(holdout),
            }
        }
    })
}

/// The candidates that beat the description on train, best first (the shorter of two
/// equals), at most `top` of them.
fn ranked(it: &Iteration, best: &Measured, top: u32) -> Vec<usize> {
    let acc = |k: usize| it.candidates[k].train.as_ref().map_or(0.0, Score::accuracy);
    let mut ranked: Vec<usize> = (0..it.candidates.len())
        .filter(|&k| {
            it.candidates[k]
                .train
                .as_ref()
                .is_some_and(|t| t.accuracy() > best.train.accuracy())
        })
        .collect();
    ranked.sort_by(|&a, &b| {
        acc(b).total_cmp(&acc(a)).then(
            it.candidates[a]
                .description
                .len()
                .cmp(&it.candidates[b].description.len()),
        )
    });
    ranked.truncate(top as usize);
    ranked
}

/// Of the ranked candidates whose holdout gain is significant, the one most accurate there.
fn most_significant(it: &Iteration, ranked: &[usize]) -> Option<usize> {
    let acc = |k: usize| {
        it.candidates[k]
            .holdout
            .as_ref()
            .map_or(0.0, Score::accuracy)
    };
    ranked
        .iter()
        .copied()
        .filter(|&k| {
            it.candidates[k]
                .comparison
                .as_ref()
                .is_some_and(|c| c.significant)
        })
        .max_by(|&a, &b| acc(a).total_cmp(&acc(b)))
}

/// Some candidates of an iteration, to measure on one half.
struct Candidates<'a> {
    text: &'a str,
    number: u32,
    which: &'a [usize],
}

impl Candidates<'_> {
    /// Measures them on `half` (each a copy of the skill with its description) and records
    /// each one's score in the iteration.
    fn measure(
        &self,
        job: &Optimization<'_>,
        rec: &mut Record,
        it: &mut Iteration,
        half: Half,
    ) -> Result<(), Error> {
        let variants = candidate_variants(job, self.text, self.number, it, self.which)?;
        let name = match half {
            Half::Train => format!("iter-{}-train", self.number),
            Half::Holdout => format!("iter-{}-holdout", self.number),
        };
        let scores = step(job, rec, &variants, half, &name)?;
        for (k, sc) in self.which.iter().zip(scores) {
            match half {
                Half::Train => it.candidates[*k].train = Some(sc),
                Half::Holdout => it.candidates[*k].holdout = Some(sc),
            }
        }
        Ok(())
    }
}

/// The closing sentence, with the figures.
fn verdict(start: &Measured, best: &Measured, improved: bool, level: f64) -> String {
    let h = |m: &Measured| m.holdout.clone().unwrap_or_default();
    if improved {
        let c = score::compare(&h(best), &h(start), level);
        format!(
            "improved: holdout accuracy {} → {} (Fisher's exact test p = {:.4} against the original, level {:.4})",
            pct(&h(start)),
            pct(&h(best)),
            c.p_value,
            level
        )
    } else {
        format!(
            "no significant improvement: the description stays (holdout accuracy {}, {} of {} runs)",
            pct(&h(start)),
            h(start).correct,
            h(start).runs
        )
    }
}

fn pct(s: &Score) -> String {
    let (lo, hi) = s.interval();
    format!(
        "{:.0}% [{:.0}–{:.0}%]",
        s.accuracy() * 100.0,
        lo * 100.0,
        hi * 100.0
    )
}

/// One description's scores on a line.
pub fn line(m: &Measured) -> String {
    let holdout = m.holdout.as_ref().map(pct).unwrap_or_else(|| "-".into());
    format!("train {}, holdout {holdout}", pct(&m.train))
}

fn candidate_line(c: &Candidate) -> String {
    let train = c.train.as_ref().map(pct).unwrap_or_else(|| "-".into());
    let holdout = c
        .holdout
        .as_ref()
        .map(pct)
        .unwrap_or_else(|| "not measured".into());
    let test = c
        .comparison
        .as_ref()
        .map(|t| {
            format!(
                ", p = {:.4}{}",
                t.p_value,
                if t.significant { " (significant)" } else { "" }
            )
        })
        .unwrap_or_default();
    format!(
        "train {train}, holdout {holdout}{test}: {:?}",
        crate::text::shorten(&c.description, 100)
    )
}

fn push_iteration(rec: &mut Record, it: Iteration) {
    match rec.iterations.iter_mut().find(|i| i.number == it.number) {
        Some(slot) => *slot = it,
        None => rec.iterations.push(it),
    }
}

/// Asks the proposer for this iteration's candidates.
fn new_iteration(
    job: &Optimization<'_>,
    rec_notes: &[feedback::Note],
    text: &str,
    best: &Measured,
    number: u32,
    say: &mut dyn FnMut(String),
) -> Result<Iteration, Error> {
    let misses = best.train.misses(job.settings.threshold);
    let mut it = Iteration {
        number,
        from: best.description.clone(),
        candidates: Vec::new(),
        accepted: None,
        note: None,
    };
    if misses.is_empty() {
        it.note = Some("the current description passes every training query".into());
        say(format!(
            "iteration {number}: the current description passes every training query; stopping"
        ));
        return Ok(it);
    }
    let body = crate::suite::skill::body(text).unwrap_or_default();
    let notes: Vec<&feedback::Note> = rec_notes.iter().filter(|n| n.used).collect();
    let prompt = propose::prompt(
        &job.skill.name,
        &best.description,
        &body,
        &misses,
        &notes,
        job.settings.candidates as usize,
    );
    say(format!(
        "iteration {number}: asking {} for {} candidate(s) from {} missed training quer{}",
        job.proposer_name,
        job.settings.candidates,
        misses.len(),
        if misses.len() == 1 { "y" } else { "ies" }
    ));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Infrastructure(format!("cannot start the proposer's runtime: {e}")))?;
    let answer = runtime
        .block_on(job.proposer.ask(&prompt))
        .map_err(|e| Error::Infrastructure(format!("the proposer failed: {e}")))?;
    let mut found =
        propose::parse(&answer.text, &best.description).map_err(Error::Infrastructure)?;
    found.truncate(job.settings.candidates as usize);
    if found.is_empty() {
        it.note = Some("the proposer offered no usable candidate".into());
    }
    it.candidates = found
        .into_iter()
        .map(|description| Candidate {
            description,
            train: None,
            holdout: None,
            comparison: None,
        })
        .collect();
    Ok(it)
}

/// The skill copies for some candidates of an iteration, each with its description in place.
fn candidate_variants(
    job: &Optimization<'_>,
    text: &str,
    number: u32,
    it: &Iteration,
    which: &[usize],
) -> Result<Vec<Described>, Error> {
    let mut out = Vec::new();
    for &k in which {
        let c = &it.candidates[k];
        let folder = job
            .dir
            .join("candidates")
            .join(format!("{number}.{}", k + 1));
        let skill = write_candidate(job.skill, text, &c.description, &folder).map_err(|e| {
            Error::Infrastructure(format!("cannot write candidate {number}.{}: {e}", k + 1))
        })?;
        out.push(Described {
            label: format!("optimize:candidate-{number}.{}", k + 1),
            skill,
        });
    }
    Ok(out)
}

/// A copy of the skill under `folder` with `description` in its front matter (`text` is the
/// skill file as read at the start).
pub fn write_candidate(
    skill: &Skill,
    text: &str,
    description: &str,
    folder: &Path,
) -> std::io::Result<Skill> {
    let (path, file) = match skill.kind {
        SkillKind::Dir => {
            let to = folder.join(&skill.name);
            if to.exists() {
                crate::workspace::remove::tree(&to)?;
            }
            std::fs::create_dir_all(&to)?;
            crate::workspace::copy::copy_tree_except(&skill.path, &to, false, &[])?;
            (to.clone(), to.join("SKILL.md"))
        }
        SkillKind::Command => {
            std::fs::create_dir_all(folder)?;
            let to = folder.join(format!("{}.md", skill.name));
            (to.clone(), to)
        }
    };
    std::fs::write(&file, description::replace(text, description))?;
    Ok(Skill {
        path,
        description: Some(description.to_string()),
        ..skill.clone()
    })
}

#[derive(Clone, Copy)]
enum Half {
    Train,
    Holdout,
}

/// One measurement, recorded in its own run folder, its cost added to the record's.
fn step(
    job: &Optimization<'_>,
    rec: &mut Record,
    variants: &[Described],
    half: Half,
    name: &str,
) -> Result<Vec<Score>, Error> {
    let queries = match half {
        Half::Train => rec.train.clone(),
        Half::Holdout => rec.holdout.clone(),
    };
    let scores = measure::measure(
        job.ctx,
        job.base,
        variants,
        &queries,
        job.opts,
        &job.dir.join("runs").join(name),
    )
    .map_err(|e| {
        // What was done so far stays recorded (and a failure to record it is said too).
        match save(&job.dir, rec) {
            Ok(()) => Error::Infrastructure(e),
            Err(s) => Error::Infrastructure(format!("{e}; {s}")),
        }
    })?;
    rec.cost_usd += scores.iter().map(|s| s.cost_usd).sum::<f64>();
    Ok(scores)
}

/// Writes `optimize.json` (to a temporary name, then renamed: a crash leaves the last whole
/// record).
pub fn save(dir: &Path, rec: &Record) -> Result<(), Error> {
    let fail = |e: std::io::Error| {
        Error::Infrastructure(format!(
            "cannot record {}: {e}",
            dir.join(layout::OPTIMIZE_JSON).display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    let text = serde_json::to_string_pretty(rec).map_err(|e| fail(std::io::Error::other(e)))?;
    let tmp = dir.join(".optimize.json.tmp");
    std::fs::write(&tmp, text).map_err(fail)?;
    std::fs::rename(&tmp, dir.join(layout::OPTIMIZE_JSON)).map_err(fail)?;
    // The HTML view beside it, redrawn each step.
    let skill = std::fs::read_to_string(&rec.file).ok();
    let page = html::render(rec, skill.as_deref());
    crate::record::write_atomic(&dir.join(html::FILE), page.as_bytes()).map_err(|e| {
        Error::Infrastructure(format!(
            "cannot record {}: {e}",
            dir.join(html::FILE).display()
        ))
    })
}

/// Reads a recorded optimisation to go on from.
pub fn load(dir: &Path) -> Result<Record, Error> {
    let path = dir.join(layout::OPTIMIZE_JSON);
    let bytes = std::fs::read(&path).map_err(|e| {
        Error::Input(format!(
            "{} is not an optimisation folder: {e}",
            dir.display()
        ))
    })?;
    let rec: Record = serde_json::from_slice(&bytes)
        .map_err(|e| Error::Input(format!("{}: {e}", path.display())))?;
    if rec.schema != SCHEMA {
        return Err(Error::Input(format!(
            "{}: schema `{}`, this assay reads `{SCHEMA}`",
            path.display(),
            rec.schema
        )));
    }
    Ok(rec)
}

/// Writes the winning description into the skill's file (through a temporary file renamed
/// over it), and returns the front matter lines that changed, as a diff.
pub fn apply(file: &Path, description: &str) -> std::io::Result<String> {
    let text = std::fs::read_to_string(file)?;
    let new = description::replace(&text, description);
    let tmp = file.with_extension("md.assay-tmp");
    std::fs::write(&tmp, &new)?;
    std::fs::rename(&tmp, file)?;
    Ok(diff(&text, &new))
}

/// The lines of `new` that differ from `old`, as `-`/`+` lines (front matter only changes).
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = String::new();
    for l in &a[head..a.len() - tail] {
        out.push_str(&format!("-{l}\n"));
    }
    for l in &b[head..b.len() - tail] {
        out.push_str(&format!("+{l}\n"));
    }
    out
}
