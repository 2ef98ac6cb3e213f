//! How a run's processes are contained: the sandbox's mode ([`sandbox_mode`]), what a suite's
//! agents may reach ([`network`]), a case-run's limits ([`limits`], [`probe_limits`]) and where
//! workspaces are made ([`workspace_parent`]).

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::run::options::RunOptions;
use crate::sandbox::limits::{Cap, Limits, LimitsConfig};
use crate::sandbox::{Network, SandboxMode};
use crate::suite::Suite;

/// `--sandbox` (or `ASSAY_SANDBOX`) > `[run] sandbox` of the projects (a project that asks for
/// a sandbox wins over one that opts out) > auto.
pub fn sandbox_mode<'a>(
    opts: &RunOptions,
    configs: impl IntoIterator<Item = &'a Config>,
) -> SandboxMode {
    if let Some(m) = opts.settings.sandbox {
        return m;
    }
    let modes: Vec<SandboxMode> = configs.into_iter().filter_map(|c| c.run.sandbox).collect();
    modes
        .iter()
        .copied()
        .find(|m| *m != SandboxMode::None)
        .or(modes.first().copied())
        .unwrap_or_default()
}

/// What a suite's sandboxed agents may reach: `--network` (or `ASSAY_NETWORK`) > the suite's
/// (UAAPS `sandbox.network`: the host's network, else the model's endpoints) > `[run] network`
/// of assay.toml > `model`.
pub fn network(opts: &RunOptions, suite: &Suite, config: &Config) -> Network {
    opts.settings
        .network
        .or_else(|| {
            suite.defaults.sandbox.as_ref().map(|b| {
                if b.network {
                    Network::Host
                } else {
                    Network::Model
                }
            })
        })
        .or(config.run.network)
        .unwrap_or_default()
}

/// A case-run's limits: each `--limit-*` flag (or `ASSAY_LIMIT_*`) > `[run.limits]` of the
/// project's assay.toml (`config`) > the default ([`Limits::resolve`]).
pub fn limits(opts: &RunOptions, config: &LimitsConfig) -> Limits {
    Limits::resolve(limit_flags(opts), config)
}

/// The limits of a harness's version probe: the flags over the defaults (no project's own).
pub fn probe_limits(opts: &RunOptions) -> Limits {
    limits(opts, &LimitsConfig::default())
}

/// The `--limit-*` flags: memory, pids, disk.
fn limit_flags(opts: &RunOptions) -> [Option<Cap>; 3] {
    let l = &opts.settings;
    [l.limit_memory, l.limit_pids, l.limit_disk]
}

/// `[run.limits]` of the first project: what a run records and `doctor` says of its limits
/// (each project's case-runs take their own, [`limits`]).
pub fn recorded_limits<'a>(configs: impl IntoIterator<Item = &'a Config>) -> LimitsConfig {
    configs
        .into_iter()
        .next()
        .map(|c| c.run.limits)
        .unwrap_or_default()
}

/// Where workspaces are made: `--workspace-dir` (or `ASSAY_WORKSPACE_DIR`, from `cwd`) > the
/// system's temp folder.
pub fn workspace_parent(cwd: &Path, opts: &RunOptions) -> PathBuf {
    opts.settings
        .workspace_dir
        .as_ref()
        .map(|d| cwd.join(d))
        .unwrap_or_else(std::env::temp_dir)
}
