//! The run's settings, resolved once before anything is planned, from the options (the flags
//! and the `ASSAY_*` variables the command line read), each project's `assay.toml`, the host's
//! environment ([`HostEnv`]) and each suite's own fields and format's policies. Every
//! precedence rule is one function here; nothing after this step weighs one source against
//! another.
//!
//! | setting | decided by |
//! |---|---|
//! | harness | [`harness::harness_name`] (clauditor's `auto`: [`harness::auto_harness`]) |
//! | harness settings | [`harness::harness_settings`] ([`harness::claude_bin`], [`harness::codex_bin`]) |
//! | a case's harness | [`harness::harness_for`] (the adapter: [`harness::bmad_adapter`]) |
//! | model | [`case::model`]; trigger runs' [`case::trigger_model`] |
//! | timeout | [`case::timeout`], [`case::case_timeout`] |
//! | runs | [`case::runs`], [`case::case_runs`] |
//! | jobs | [`jobs::jobs`] ([`jobs::default_jobs`]) |
//! | spending limit | [`jobs::max_cost`] |
//! | sandbox backend | [`sandbox::sandbox_mode`] |
//! | network | [`sandbox::network`] |
//! | limits | [`sandbox::limits`], [`sandbox::probe_limits`], [`sandbox::recorded_limits`] |
//! | workspaces' folder | [`sandbox::workspace_parent`] |
//! | judge | [`judge::judge_for`], [`judge::select`] (its rules in `judge.rs`) |
//!
//! The order everywhere: a flag (or the `ASSAY_*` variable clap reads for it) > another
//! variable of the host > the suite's own fields > `assay.toml` > the format's default > the
//! built-in default, unless a function's comment says otherwise.

pub mod case;
pub mod harness;
pub mod jobs;
pub mod judge;
pub mod sandbox;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::config::Config;
use crate::harness::HarnessSettings;
use crate::host::HostEnv;
use crate::run::options::RunOptions;
use crate::sandbox::limits::{Limits, LimitsConfig};
use crate::sandbox::{Network, SandboxMode};
use crate::suite::Suite;

/// The run's settings, as resolved.
pub struct Settings {
    /// Agent processes at once.
    pub jobs: usize,
    /// The spending limit (USD), if any.
    pub max_cost: Option<f64>,
    /// The sandbox's mode (the backend is probed for it later).
    pub sandbox: SandboxMode,
    /// `[run.limits]` as the run records it.
    pub recorded_limits: LimitsConfig,
    /// Each suite's, in the suites' order.
    pub suites: Vec<SuiteSettings>,
}

/// One suite's settings.
pub struct SuiteSettings {
    /// The harness named for its cases (a case with its own command runs that).
    pub harness: String,
    pub harness_settings: HarnessSettings,
    /// `None`: the harness's own default.
    pub model: Option<String>,
    /// Trigger runs' model: `None`, the cases' ([`Self::model`]).
    pub trigger_model: Option<String>,
    /// Seconds per case-run, for cases without their own.
    pub timeout: u64,
    /// Runs of each artifact case, for cases adaptive repeats do not set.
    pub runs: u32,
    pub network: Network,
    pub limits: Limits,
}

impl Settings {
    /// Resolves every setting of a run of `suites` (each reading the `assay.toml` of its
    /// project root in `configs`).
    pub fn resolve(
        suites: &[Suite],
        configs: &BTreeMap<PathBuf, Config>,
        opts: &RunOptions,
        host: &HostEnv,
    ) -> Settings {
        Settings {
            jobs: jobs::jobs(opts, configs.values()),
            max_cost: jobs::max_cost(opts, configs.values()),
            sandbox: sandbox::sandbox_mode(opts, configs.values()),
            recorded_limits: sandbox::recorded_limits(configs.values()),
            suites: suites
                .iter()
                .map(|s| SuiteSettings::resolve(s, &configs[&s.project_root], opts, host))
                .collect(),
        }
    }
}

impl SuiteSettings {
    /// A suite's settings, given its project's `config`.
    pub fn resolve(suite: &Suite, config: &Config, opts: &RunOptions, host: &HostEnv) -> Self {
        SuiteSettings {
            harness: harness::harness_name(opts, suite, config, host),
            harness_settings: harness::harness_settings(opts, config, host),
            model: case::model(opts, suite, config),
            trigger_model: case::trigger_model(opts, config),
            timeout: case::timeout(opts, suite, config),
            runs: case::runs(opts, suite),
            network: sandbox::network(opts, suite, config),
            limits: sandbox::limits(opts, &config.run.limits),
        }
    }
}
