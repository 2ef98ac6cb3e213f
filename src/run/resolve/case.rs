//! What a suite's case-runs take: the agent's model ([`model`]), each case-run's timeout
//! ([`timeout`], [`case_timeout`]) and how many runs of each case ([`runs`], [`case_runs`]).

use crate::config::Config;
use crate::suite::{Case, Suite, TriggerCase};
use crate::{
    record::case_run::TriggerMode,
    run::options::{RunOptions, Runs},
};

/// Seconds per case-run when nothing else says.
pub const DEFAULT_TIMEOUT_SECS: u64 = 600;

/// The agent's model: `--model` (or `ASSAY_MODEL`) > the suite's > `[run] model` of
/// assay.toml; `None`: the harness's own default.
pub fn model(opts: &RunOptions, suite: &Suite, config: &Config) -> Option<String> {
    opts.settings
        .model
        .clone()
        .or_else(|| suite.defaults.model.clone())
        .or_else(|| config.run.model.clone())
}

/// The model of trigger runs: `--trigger-model` (or `ASSAY_TRIGGER_MODEL`) > `[run]
/// trigger_model` of assay.toml; `None`, the cases' model.
pub fn trigger_model(opts: &RunOptions, config: &Config) -> Option<String> {
    opts.settings
        .trigger_model
        .clone()
        .or_else(|| config.run.trigger_model.clone())
}

/// Seconds per case-run for a suite's cases without a `timeout` of their own: `--timeout` (or
/// `ASSAY_TIMEOUT`) > the suite's > `[run] timeout` of assay.toml > the format's default >
/// 600 ([`DEFAULT_TIMEOUT_SECS`]). `--timeout` sets the default for cases that have none
/// (BMAD's rule): the case's own is the most specific ([`case_timeout`]).
pub fn timeout(opts: &RunOptions, suite: &Suite, config: &Config) -> u64 {
    opts.settings
        .timeout
        .or(suite.defaults.timeout_secs)
        .or(config.run.timeout)
        .or(suite.policies.default_timeout_secs)
        .unwrap_or(DEFAULT_TIMEOUT_SECS)
}

/// A case-run's timeout: the case's own `timeout` > its suite's ([`timeout`]).
pub fn case_timeout(case: &Case, suite_timeout: u64) -> u64 {
    case.timeout_secs.unwrap_or(suite_timeout)
}

/// Runs of a suite's artifact cases: `--runs N` (or `ASSAY_RUNS`) > the suite's
/// `variance.n_runs` > 1 (`--runs auto` names no count: adaptive repeats set each case's in
/// [`RunOptions::runs_for`], [`case_runs`]).
pub fn runs(opts: &RunOptions, suite: &Suite) -> u32 {
    opts.settings
        .runs
        .and_then(Runs::fixed)
        .or(suite.defaults.variance.map(|v| v.runs))
        .unwrap_or(1)
}

/// Runs of one case: a judged trigger query once; a trigger query `--trigger-runs`; an
/// artifact case the runs adaptive repeats give it ([`RunOptions::runs_for`]), else `--runs
/// N`, else the case's own (a Claude Code plugin-eval case's `runs`), else its suite's
/// ([`runs`]); at least 1.
pub fn case_runs(
    opts: &RunOptions,
    suite: &Suite,
    case: &Case,
    trigger: Option<&TriggerCase>,
    suite_runs: u32,
) -> u32 {
    match trigger {
        Some(_) if opts.settings.trigger_mode == TriggerMode::Judge => 1,
        Some(_) => opts.settings.trigger_runs.max(1),
        None => opts
            .runs_for
            .get(&(suite.id.clone(), case.id.clone()))
            .copied()
            .or_else(|| opts.settings.runs.and_then(Runs::fixed))
            .or(case.runs)
            .unwrap_or(suite_runs)
            .max(1),
    }
}
