//! Which harness runs a suite's cases and how it is configured: the harness's name
//! ([`harness_name`], [`auto_harness`]), its settings ([`harness_settings`]), and the harness a
//! case runs through ([`harness_for`]: the case's own command, the adapter, a built-in, a
//! plugin's).

use crate::config::Config;
use crate::harness::command::CommandHarness;
use crate::harness::{self, Harness, HarnessSettings};
use crate::host::{HostEnv, Unavailable};
use crate::run::options::RunOptions;
use crate::suite::{Case, Suite};

/// The harness when nothing names one (and the format's `auto` finds none).
pub const DEFAULT_HARNESS: &str = "claude-code";

/// The harness named for a suite, by precedence: `--harness` > `ASSAY_HARNESS` > `--adapter`
/// (the `adapter` harness) > the format runner's variable (clauditor's `CLAUDITOR_HARNESS`,
/// clauditor suites) > the suite's own > `[run] harness` of assay.toml > the format's default.
/// `auto` at any of them names no harness (the next one decides), as in clauditor; a clauditor
/// suite's default is `auto` ([`auto_harness`]), every other format's `claude-code`.
pub fn harness_name(opts: &RunOptions, suite: &Suite, config: &Config, host: &HostEnv) -> String {
    let env = |k: &str| {
        host.var(k)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    [
        opts.settings.harness.clone(),
        env("ASSAY_HARNESS"),
        opts.adapter
            .as_ref()
            .map(|_| crate::suite::ADAPTER_HARNESS.to_string()),
        suite.policies.vars.harness.and_then(env),
        suite.defaults.harness.clone(),
        config.run.harness.clone(),
    ]
    .into_iter()
    .flatten()
    .find(|h| h != "auto")
    .unwrap_or_else(|| {
        if suite.policies.auto_harness {
            auto_harness(host, config)
        } else {
            DEFAULT_HARNESS.into()
        }
    })
}

/// clauditor's `harness: auto`: `claude-code` when its CLI is installed, else `codex` when its
/// is, else `claude-code` (which then says how to install it). Each CLI is looked for as
/// [`claude_bin`] and [`codex_bin`] name it, else by its own name.
pub fn auto_harness(host: &HostEnv, config: &Config) -> String {
    let claude = claude_bin(host, config).unwrap_or_else(|| "claude".into());
    let codex = codex_bin(host, config).unwrap_or_else(|| "codex".into());
    if host.which(&claude).is_some() {
        "claude-code".into()
    } else if host.which(&codex).is_some() {
        "codex".into()
    } else {
        DEFAULT_HARNESS.into()
    }
}

/// The `claude` program: `ASSAY_CLAUDE_BIN` > `[harness.claude-code] bin` (else the harness's
/// own default, `claude`).
pub fn claude_bin(host: &HostEnv, config: &Config) -> Option<String> {
    host.var("ASSAY_CLAUDE_BIN")
        .map(str::to_string)
        .or_else(|| config.harness.claude_code.bin.clone())
}

/// The `codex` program: `ASSAY_CODEX_BIN` > `[harness.codex] bin` (else `codex`).
pub fn codex_bin(host: &HostEnv, config: &Config) -> Option<String> {
    host.var("ASSAY_CODEX_BIN")
        .map(str::to_string)
        .or_else(|| config.harness.codex.bin.clone())
}

/// The built-in harnesses' settings for a project: the programs ([`claude_bin`],
/// [`codex_bin`]), assay.toml's `permission_mode` and codex `sandbox`, and the `command` and
/// `acp` harnesses' command: `--command` > assay.toml's.
pub fn harness_settings(opts: &RunOptions, config: &Config, host: &HostEnv) -> HarnessSettings {
    let command = |configured: &Vec<String>| {
        if opts.command.is_empty() {
            configured.clone()
        } else {
            opts.command.clone()
        }
    };
    HarnessSettings {
        permission_mode: config.harness.claude_code.permission_mode.clone(),
        claude_bin: claude_bin(host, config),
        codex_bin: codex_bin(host, config),
        codex_sandbox: config.harness.codex.sandbox.clone(),
        command: command(&config.harness.command.command),
        acp_command: command(&config.harness.acp.command),
    }
}

/// The adapter a suite's `adapter` harness runs: `--adapter` (or `BMAD_EVAL_ADAPTER`) > the
/// suite's own `adapter.json`.
pub fn adapter<'a>(
    opts: &'a RunOptions,
    suite: &'a Suite,
) -> Option<&'a crate::suite::AdapterSpec> {
    opts.adapter.as_ref().or(suite.defaults.adapter.as_ref())
}

/// The harness a case runs through, and the key that tells it apart from the others (all that
/// shapes the agent's command line; it goes into the cache key): the case's own command (a
/// test command) > the harness `name`d for its suite, as the adapter, a built-in or a plugin's.
/// A name none of them has is unavailable.
pub fn harness_for(
    case: &Case,
    name: &str,
    settings: &HarnessSettings,
    opts: &RunOptions,
    suite: &Suite,
) -> Result<(String, Box<dyn Harness>), Unavailable> {
    if let Some(cmd) = &case.command {
        return Ok((
            format!("command:{}", cmd.argv.join("\u{0}")),
            Box::new(CommandHarness::with_argv(cmd.argv.clone())),
        ));
    }
    let is_adapter = name == crate::suite::ADAPTER_HARNESS;
    let adapter = adapter(opts, suite).filter(|_| is_adapter);
    let made = adapter
        .map(|spec| -> Box<dyn Harness> {
            Box::new(harness::bmad_adapter::BmadAdapter::new(
                spec.clone(),
                opts.settings.trust,
            ))
        })
        .or_else(|| harness::builtin(name, settings))
        .or_else(|| opts.plugins.harness(name, settings));
    let Some(h) = made else {
        return Err(unknown_harness(name, opts));
    };
    let key = format!(
        "{name}:{}\u{1}{}\u{1}{:?}\u{1}{}",
        settings.command.join("\u{0}"),
        settings.acp_command.join("\u{0}"),
        (
            &settings.permission_mode,
            &settings.claude_bin,
            &settings.codex_bin,
            &settings.codex_sandbox,
        ),
        adapter.map(|a| format!("{a:?}")).unwrap_or_default(),
    );
    Ok((key, h))
}

/// A harness name that is neither built in nor a plugin's, and the names there are.
fn unknown_harness(name: &str, opts: &RunOptions) -> Unavailable {
    let mut names: Vec<String> = harness::builtin_names().map(str::to_string).collect();
    names.extend(opts.plugins.providers.iter().flat_map(|p| {
        p.harnesses()
            .iter()
            .map(|h| h.name.clone())
            .collect::<Vec<_>>()
    }));
    Unavailable {
        message: format!("unknown harness `{name}`"),
        fix: format!("use one of: {}", names.join(", ")),
    }
}
