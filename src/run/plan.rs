//! What a run is made of: every selected case expanded into its case-runs (variants and
//! runs), each with the harness, model, timeout and judge the run's settings give it
//! (`resolve`), cut to this shard; and the plan as printed (`preview`).

use std::path::PathBuf;
use std::time::Duration;

use super::options::RunOptions;
use super::preview::{PlannedRow, Preview, ShardPreview};
use super::resolve::{SuiteSettings, case, harness, judge};
use super::setup::Setup;
use super::shard;
use crate::grade::JudgeSlot;
use crate::harness::Harness;
use crate::host::{HostEnv, Unavailable};
use crate::record;
use crate::suite::{Case, Suite, TriggerCase};

use crate::record::case_run::{Arm, TriggerMode};

impl Arm {
    /// The case-run folder's name: `run-<k>`, `baseline-<k>`.
    pub fn folder(self, run: u32) -> String {
        match self {
            Arm::Skill => format!("run-{run}"),
            Arm::Baseline => format!("baseline-{run}"),
            Arm::Variant => format!("variant-{run}"),
        }
    }
}

/// Whether the case-run starts an agent (or a test command): a judged trigger eval only asks
/// the judge, and scripts without `--trust` start nothing (as `execute::begin` decides).
pub(super) fn starts_agent(p: &Planned<'_>, opts: &RunOptions) -> bool {
    let judge_mode = p.trigger.is_some() && opts.settings.trigger_mode == TriggerMode::Judge;
    !judge_mode && !untrusted(p, opts)
}

/// A case with setup or teardown scripts, without `--trust`.
fn untrusted(p: &Planned<'_>, opts: &RunOptions) -> bool {
    p.case.has_scripts() && !opts.settings.trust && !p.suite.policies.setup_optional
}

/// Why a case with setup or teardown scripts is skipped without `--trust`.
pub const UNTRUSTED_SCRIPTS: &str = "the case has setup/teardown scripts; pass --trust to run them";

/// What a run will do, decided before anything starts: every case-run, the harnesses and
/// judges they need, and what is missing on this machine.
pub(super) struct Plan<'a> {
    pub case_runs: Vec<Planned<'a>>,
    /// Each distinct harness (by everything that shapes its command line), once.
    pub harnesses: Vec<(String, Box<dyn Harness>)>,
    pub judges: Vec<(String, JudgeSlot)>,
    pub unavailable: Vec<(String, Unavailable)>,
    /// `--shard`: the slice this run takes.
    pub shard: Option<ShardPlan<'a>>,
}

/// Expands every selected case of `suites` into its case-runs, by the settings resolved in
/// `setup`: each case's harness (made and checked once each), model, timeout, judge, runs and
/// variants. What cannot run is listed, not fatal here.
pub(super) fn plan<'a>(
    suites: &'a [Suite],
    setup: &'a Setup,
    opts: &RunOptions,
    host: &HostEnv,
) -> Plan<'a> {
    let mut plan = Plan {
        case_runs: Vec::new(),
        harnesses: Vec::new(),
        judges: Vec::new(),
        unavailable: Vec::new(),
        shard: None,
    };
    for (si, s) in suites.iter().enumerate() {
        let settings = &setup.settings.suites[si];
        for (case, trigger) in selected(s, &setup.trigger_cases[si], opts) {
            plan.add(s, case, trigger, settings, opts, host);
        }
    }
    assign_folders(&mut plan.case_runs);
    plan.shard = setup.shard.as_ref().map(|c| slice(&mut plan.case_runs, c));
    plan
}

/// The cases of a suite the run takes: its artifact cases and its trigger queries (as
/// `trigger_cases`) as `--mode` says, those `--filter` and `--target` keep.
fn selected<'a>(
    s: &'a Suite,
    trigger_cases: &'a [Case],
    opts: &RunOptions,
) -> Vec<(&'a Case, Option<&'a TriggerCase>)> {
    let mut work: Vec<(&Case, Option<&TriggerCase>)> = Vec::new();
    if opts.settings.mode.artifacts() {
        work.extend(s.cases.iter().map(|c| (c, None)));
    }
    if opts.settings.mode.triggers() {
        work.extend(
            trigger_cases
                .iter()
                .zip(&s.triggers)
                .map(|(c, t)| (c, Some(t))),
        );
    }
    work.retain(|(case, _)| {
        matches_filter(&opts.settings.filter, &s.id, &case.id)
            && (opts.settings.target.is_none() || case.target == opts.settings.target)
            && (opts.settings.tags.is_empty()
                || case.tags.iter().any(|t| opts.settings.tags.contains(t)))
    });
    work
}

/// Whether a case also runs without its plugin: its format does so by default (Claude Code
/// plugin evals), it has a plugin (its suite's, or its own), and `--ablation none` does not say otherwise.
pub(super) fn compares_without(s: &Suite, case: &Case, opts: &RunOptions) -> bool {
    s.policies.compare_without
        && (s.package.is_some() || !case.plugins.is_empty())
        && opts.settings.ablation != Some(crate::run::options::Ablation::None)
}

impl<'a> Plan<'a> {
    /// A case's case-runs, one per variant and run; none when its harness is unknown.
    fn add(
        &mut self,
        s: &'a Suite,
        case: &'a Case,
        trigger: Option<&'a TriggerCase>,
        settings: &SuiteSettings,
        opts: &RunOptions,
        host: &HostEnv,
    ) {
        let judge_mode = trigger.is_some() && opts.settings.trigger_mode == TriggerMode::Judge;
        let Some(harness) = self.harness(case, s, settings, opts, host, judge_mode) else {
            return;
        };
        let timeout = case::case_timeout(case, settings.timeout);
        let agent_mocks = case.mocks.iter().any(|m| {
            m.tools
                .values()
                .any(|r| matches!(r, crate::suite::mocks::Responder::Agent { .. }))
        });
        let needs_judge = !case.judge.is_empty() || judge_mode || agent_mocks;
        let judge = needs_judge.then(|| {
            let flags = crate::judge::Flags {
                judge: opts.judge.as_deref(),
                transport: opts.transport.as_deref(),
            };
            judge::judge_for(&mut self.judges, flags, s, host, opts.judge_jobs)
        });
        let runs = case::case_runs(opts, s, case, trigger, settings.runs);
        let variants: Vec<Arm> = match &opts.baseline {
            Some(b) if trigger.is_none() && case.command.is_none() => {
                vec![Arm::Skill, b.variant()]
            }
            _ if trigger.is_none() && compares_without(s, case, opts) => {
                vec![Arm::Skill, Arm::Baseline]
            }
            _ => vec![Arm::Skill],
        };
        let model = match trigger {
            Some(_) => settings.trigger_model.clone().or(settings.model.clone()),
            None => settings.model.clone(),
        };
        if !judge_mode {
            need_model(
                &mut self.unavailable,
                self.harnesses[harness].1.as_ref(),
                &model,
                host,
            );
        }
        for variant in variants {
            for run in 1..=runs {
                self.case_runs.push(Planned {
                    judge: judge.clone(),
                    suite: s,
                    case,
                    trigger,
                    variant,
                    run,
                    harness,
                    model: model.clone(),
                    timeout: Duration::from_secs(timeout),
                    folder: PathBuf::new(),
                });
            }
        }
    }

    /// The index in `harnesses` of the harness a case runs through ([`harness::harness_for`]),
    /// made and checked on this machine the first time (a judged trigger eval starts no agent:
    /// its harness need not be here). `None` when no harness has that name (listed).
    fn harness(
        &mut self,
        case: &Case,
        s: &Suite,
        settings: &SuiteSettings,
        opts: &RunOptions,
        host: &HostEnv,
        judge_mode: bool,
    ) -> Option<usize> {
        let name = &settings.harness;
        let (key, h) = match harness::harness_for(case, name, &settings.harness_settings, opts, s) {
            Ok(found) => found,
            Err(u) => {
                if !self.unavailable.iter().any(|(n, _)| n == name) {
                    self.unavailable.push((name.clone(), u));
                }
                return None;
            }
        };
        if let Some(i) = self.harnesses.iter().position(|(k, _)| *k == key) {
            return Some(i);
        }
        if !judge_mode
            && let Err(u) = h.preflight(host)
            && !self
                .unavailable
                .iter()
                .any(|(n, e)| *n == h.name() && e.message == u.message)
        {
            self.unavailable.push((h.name().to_string(), u));
        }
        self.harnesses.push((key, h));
        Some(self.harnesses.len() - 1)
    }
}

/// The slice of a run cut into shards: what this shard runs, and what the others do.
pub(super) struct ShardPlan<'a> {
    pub chosen: &'a shard::Chosen,
    pub cut: shard::Cut,
    /// The case-runs the other shards run.
    pub elsewhere: Vec<record::run::PlannedCaseRun>,
}

/// A harness that needs a model named and is given none cannot run (said once).
fn need_model(
    unavailable: &mut Vec<(String, Unavailable)>,
    h: &dyn Harness,
    model: &Option<String>,
    host: &crate::host::HostEnv,
) {
    if let Some(u) = h.model_missing(model.as_deref(), host)
        && !unavailable.iter().any(|(_, e)| e.message == u.message)
    {
        unavailable.push((h.name().to_string(), u));
    }
}

/// Cuts the whole plan into shards (as `--resume` of a shard first cut it, else by the
/// expected times) and keeps this shard's case-runs.
fn slice<'a>(planned: &mut Vec<Planned<'_>>, chosen: &'a shard::Chosen) -> ShardPlan<'a> {
    let items: Vec<(String, Option<f64>)> = planned
        .iter()
        .map(|p| {
            let ms = chosen
                .timings
                .expected_ms(&p.suite.id, &p.case.id, p.kind(), p.variant);
            (p.case_key(), ms)
        })
        .collect();
    let mut cut = shard::cut(&items, chosen.shard.count);
    if let Some(recorded) = &chosen.recorded {
        for (case, k) in cut.shard_of.iter_mut() {
            if let Some(r) = recorded.cases.get(case) {
                *k = *r;
            }
        }
        cut.expected_ms = recorded.expected_ms.clone();
    }
    let mine = |p: &Planned<'_>| cut.shard_of.get(&p.case_key()) == Some(&chosen.shard.index);
    let elsewhere = planned
        .iter()
        .filter(|p| !mine(p))
        .map(Planned::record)
        .collect();
    planned.retain(|p| mine(p));
    ShardPlan {
        chosen,
        cut,
        elsewhere,
    }
}

impl ShardPlan<'_> {
    /// What run.json records of the shard (a resumed shard: how it was first cut).
    pub(super) fn record(&self) -> record::run::ShardRecord {
        let c = self.chosen;
        let timings = match &c.recorded {
            Some(r) => r.timings.clone(),
            None => c.timings.source.clone(),
        };
        record::run::ShardRecord {
            index: c.shard.index,
            count: c.shard.count,
            source: c.source.clone(),
            by: if self.cut.by_time() { "time" } else { "count" }.into(),
            timings,
            expected_ms: self.cut.expected_ms.clone(),
            cases: self.cut.shard_of.clone(),
            elsewhere: self.elsewhere.clone(),
            suites: c.suites.clone(),
        }
    }

    /// The line the plan prints of the shard.
    pub(super) fn preview(&self) -> ShardPreview {
        let c = self.chosen;
        ShardPreview {
            index: c.shard.index,
            count: c.shard.count,
            source: c.source.clone(),
            timings: c.timings.source.clone(),
            expected_ms: self.cut.expected_ms.clone(),
            timed: self.cut.timed,
            total: self.cut.total,
            resumed: c.recorded.is_some(),
        }
    }
}

/// The plan as printed before anything starts, and all `--dry-run` shows.
pub(super) fn preview(
    planned: &[Planned<'_>],
    harnesses: &[(String, Box<dyn Harness>)],
    unavailable: &[(String, Unavailable)],
    opts: &RunOptions,
) -> Preview {
    Preview {
        case_runs: planned
            .iter()
            .map(|p| {
                let skipped = untrusted(p, opts).then(|| UNTRUSTED_SCRIPTS.to_string());
                PlannedRow {
                    suite: p.suite.id.clone(),
                    case: p.case.id.clone(),
                    kind: if p.trigger.is_some() {
                        record::case_run::Kind::Trigger
                    } else {
                        record::case_run::Kind::Case
                    },
                    variant: p.variant,
                    run: p.run,
                    harness: harnesses[p.harness].1.name().to_string(),
                    model: p.model.clone(),
                    timeout_secs: p.timeout.as_secs(),
                    target: p.case.target.as_ref().map(ToString::to_string),
                    starts_agent: starts_agent(p, opts),
                    judged: p.judge.is_some() && skipped.is_none(),
                    skipped,
                }
            })
            .collect(),
        unavailable: unavailable
            .iter()
            .map(|(name, u)| format!("{name}: {}", u.message))
            .collect(),
        advisories: advisories(planned, harnesses, opts),
        shard: None,
    }
}

/// Claude Code's advisories for the cases run through it, once per case.
fn advisories(
    planned: &[Planned<'_>],
    harnesses: &[(String, Box<dyn Harness>)],
    opts: &RunOptions,
) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for p in planned {
        let id = format!("{}/{}", p.suite.id, p.case.id);
        if harnesses[p.harness].1.name() != "claude-code" || !seen.insert(id.clone()) {
            continue;
        }
        let scaffolded = p.case.setup.is_some() && opts.settings.trust;
        for a in super::advisories::of_case(p.case, &opts.settings.tools, scaffolded) {
            out.push(format!("⚠ {id}: {a}"));
        }
    }
    out
}

/// One planned case-run.
pub(super) struct Planned<'a> {
    pub(super) suite: &'a Suite,
    pub(super) case: &'a Case,
    pub(super) trigger: Option<&'a TriggerCase>,
    pub(super) variant: Arm,
    pub(super) run: u32,
    pub(super) judge: Option<JudgeSlot>,
    pub(super) harness: usize,
    pub(super) model: Option<String>,
    pub(super) timeout: Duration,
    /// The case's folder in the run folder, `<suite>/<case>` (see [`record::folder_names`]).
    pub(super) folder: PathBuf,
}

impl Planned<'_> {
    /// The case-run as run.json's `planned` lists it.
    pub(super) fn record(&self) -> record::run::PlannedCaseRun {
        record::run::PlannedCaseRun {
            suite: self.suite.id.clone(),
            case: self.case.id.clone(),
            run: self.run,
            variant: self.variant,
            kind: self.kind(),
            dir: self.folder.join(self.variant.folder(self.run)),
        }
    }

    /// A trigger query's case-run, or an artifact case's.
    pub(super) fn kind(&self) -> record::case_run::Kind {
        if self.trigger.is_some() {
            record::case_run::Kind::Trigger
        } else {
            record::case_run::Kind::Case
        }
    }

    /// The case's id within the run, `suite/case` (shards keep a case's runs together).
    pub(super) fn case_key(&self) -> String {
        format!("{}/{}", self.suite.id, self.case.id)
    }

    pub(super) fn dir(&self, run_dir: &std::path::Path) -> PathBuf {
        run_dir
            .join(&self.folder)
            .join(self.variant.folder(self.run))
    }
}

/// Gives every planned case-run its folder: suites apart within the run, cases apart within
/// their suite, whatever their ids slug to.
pub(super) fn assign_folders(planned: &mut [Planned<'_>]) {
    use std::collections::{BTreeMap, BTreeSet};
    let suites: BTreeSet<&str> = planned.iter().map(|p| p.suite.id.as_str()).collect();
    let suites: Vec<&str> = suites.into_iter().collect();
    let suite_names: BTreeMap<&str, String> = suites
        .iter()
        .copied()
        .zip(record::folder_names(&suites))
        .collect();
    let mut cases: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in planned.iter() {
        cases
            .entry(p.suite.id.as_str())
            .or_default()
            .insert(p.case.id.as_str());
    }
    let mut names: BTreeMap<(&str, &str), PathBuf> = BTreeMap::new();
    for (suite, ids) in &cases {
        let ids: Vec<&str> = ids.iter().copied().collect();
        for (id, name) in ids.iter().zip(record::folder_names(&ids)) {
            names.insert(
                (suite, id),
                std::path::Path::new(&suite_names[suite]).join(name),
            );
        }
    }
    for p in planned.iter_mut() {
        p.folder = names[&(p.suite.id.as_str(), p.case.id.as_str())].clone();
    }
}

/// Whether `--filter` takes the case `case` of the suite `suite` (`<format>:<name>`): text
/// contained in `suite/case`, or a glob matching `suite/case` with or without the format
/// (`'tiny/00*'` and `'skillet:tiny/00*'` alike).
pub(super) fn matches_filter(filter: &Option<String>, suite: &str, case: &str) -> bool {
    let Some(f) = filter else { return true };
    let id = format!("{suite}/{case}");
    if f.contains(['*', '?', '[']) {
        let Ok(glob) = globset::Glob::new(f) else {
            return false;
        };
        let glob = glob.compile_matcher();
        let bare = suite
            .split_once(':')
            .map(|(_, name)| format!("{name}/{case}"));
        glob.is_match(&id) || bare.is_some_and(|b| glob.is_match(b))
    } else {
        id.contains(f.as_str())
    }
}

#[cfg(test)]
mod filter_tests {
    use super::matches_filter;

    #[test]
    fn a_glob_matches_suite_slash_case_with_or_without_the_format() {
        let f = |s: &str| Some(s.to_string());
        assert!(matches_filter(&f("tiny/00*"), "skillet:tiny", "001"));
        assert!(matches_filter(
            &f("skillet:tiny/00*"),
            "skillet:tiny",
            "001"
        ));
        assert!(matches_filter(&f("*tiny/00*"), "skillet:tiny", "001"));
        assert!(!matches_filter(&f("tiny/01*"), "skillet:tiny", "001"));
        assert!(!matches_filter(&f("other/00*"), "skillet:tiny", "001"));
        assert!(matches_filter(&f("tiny/0"), "skillet:tiny", "001"));
        assert!(matches_filter(&None, "skillet:tiny", "001"));
    }
}
