//! `assay.toml`: what is about a project rather than one suite.
//!
//! Each suite reads the `assay.toml` at its project root. Where a setting here meets a flag, a
//! variable or the suite's own field, `run::resolve` decides (a function per setting; mostly:
//! flag > `ASSAY_*` variable > the suite's own fields > `assay.toml` > the format's default >
//! the built-in default).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::diag::Problem;
use crate::diag::source::{Source, Span};

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub run: RunConfig,
    /// Per-harness settings, keyed by harness name.
    #[serde(default)]
    pub harness: HarnessConfigs,
    /// Plugins (`[[plugin]]`): WebAssembly components, or trusted native libraries.
    #[serde(default, rename = "plugin", skip_serializing_if = "Vec::is_empty")]
    pub plugins: Vec<PluginConfig>,
    /// `assay lint`'s budget and the findings this project accepts, each with its reason.
    #[serde(default)]
    pub lint: LintConfig,
}

/// `[lint]`: what `assay lint` takes from the project.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LintConfig {
    /// The token budget for a SKILL.md body (default 5000); `--max-tokens` wins.
    pub max_tokens: Option<u64>,
    /// Findings accepted on purpose (`[[lint.allow]]`): shown as allowed, never failing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<LintAllow>,
}

/// One accepted finding: a code, where (a glob relative to the project root; everywhere when
/// left out) and why.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LintAllow {
    pub code: String,
    #[serde(default, deserialize_with = "glob")]
    pub path: Option<String>,
    #[serde(deserialize_with = "reason")]
    pub reason: String,
}

/// A `[[lint.allow]]` path: a glob that compiles.
fn glob<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = String::deserialize(d)?;
    globset::Glob::new(&v)
        .map_err(|e| serde::de::Error::custom(format!("path is not a glob: {e}")))?;
    Ok(Some(v))
}

/// A `[[lint.allow]]` reason: required, and not blank (an exception nobody explained is
/// not a justification).
fn reason<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let v = String::deserialize(d)?;
    if v.trim().is_empty() {
        return Err(serde::de::Error::custom(
            "reason must say why the finding is accepted",
        ));
    }
    Ok(v)
}

/// A plugin as `assay.toml` declares it (`[[plugin]]`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    /// A `.wasm` component, a folder of them, or (with `trusted = true`) a native library.
    pub path: String,
    /// Per call (default 1000).
    pub timeout_ms: Option<u64>,
    /// Linear memory per call (default 64).
    pub memory_mib: Option<u64>,
    /// Folders the plugin may read, relative to the project root (read-only). Each must
    /// resolve (symbolic links followed) to a folder inside the project.
    #[serde(default)]
    pub read_dirs: Vec<String>,
    /// Host environment variables the plugin may see, by name.
    #[serde(default)]
    pub env: Vec<String>,
    /// `host:port` addresses the plugin may connect to over TCP.
    #[serde(default)]
    pub network: Vec<String>,
    /// Load a native library (unsandboxed) instead of a component.
    #[serde(default)]
    pub trusted: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The default harness: `claude-code`, `codex` or `command`.
    pub harness: Option<String>,
    pub model: Option<String>,
    /// The model of trigger runs; `--trigger-model` wins.
    pub trigger_model: Option<String>,
    /// Seconds per case-run.
    pub timeout: Option<u64>,
    pub jobs: Option<usize>,
    /// Host environment variables passed to agents beyond the built-in allow-list.
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Variables set for every agent of this project.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// How agents are contained: `auto` (default), `bwrap` or `none`.
    pub sandbox: Option<crate::sandbox::SandboxMode>,
    /// What a sandboxed agent may reach: `model` (default), `none` or `host`.
    pub network: Option<crate::sandbox::Network>,
    /// Host folders a sandboxed agent may also read (toolchains, say); relative paths are
    /// from the project root.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandbox_read: Vec<std::path::PathBuf>,
    /// Stop starting case-runs once those this run started have cost this much (USD, as the
    /// agents report it); `--max-cost` wins.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "positive_cost"
    )]
    pub max_cost: Option<f64>,
    /// Per case-run limits (`[run.limits]`: `memory`, `pids`, `disk`); the `--limit-*` flags win.
    #[serde(default, skip_serializing)]
    pub limits: crate::sandbox::limits::LimitsConfig,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessConfigs {
    #[serde(default)]
    pub command: CommandConfig,
    #[serde(default, rename = "claude-code")]
    pub claude_code: ClaudeCodeConfig,
    #[serde(default)]
    pub codex: CodexConfig,
    #[serde(default)]
    pub acp: AcpConfig,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AcpConfig {
    /// The agent's program and arguments that make it speak ACP on stdio
    /// (`["copilot", "--acp"]`).
    #[serde(default)]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CodexConfig {
    /// The `codex` executable.
    pub bin: Option<String>,
    /// `--sandbox`: read-only, workspace-write (default) or danger-full-access.
    pub sandbox: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CommandConfig {
    /// Program and arguments; `{prompt}` in an argument is replaced by the prompt, otherwise
    /// the prompt goes to stdin.
    #[serde(default)]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClaudeCodeConfig {
    /// The `claude` executable.
    pub bin: Option<String>,
    /// `--permission-mode` (default `bypassPermissions`, inside the isolated workspace).
    pub permission_mode: Option<String>,
}

/// Reads `<root>/assay.toml`; a missing file is the default configuration.
pub fn load(root: &Path, shown: &Path) -> Result<Config, Box<Problem>> {
    let path = root.join("assay.toml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(Config::default());
    };
    toml::from_str(&text).map_err(|e| {
        let source = Source::new(shown.join("assay.toml"), text.clone());
        let span = e
            .span()
            .map(|r| Span::new(r.start, r.end))
            .unwrap_or_default();
        Box::new(
            Problem::error("bad-config", &source.path.clone(), e.message().to_string())
                .at(&source, span),
        )
    })
}

/// `max_cost`: a number above 0 (USD).
fn positive_cost<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let v = f64::deserialize(d)?;
    if v > 0.0 && v.is_finite() {
        Ok(Some(v))
    } else {
        Err(serde::de::Error::custom(format!(
            "max_cost must be a number of dollars above 0, not {v}"
        )))
    }
}

/// The project root governing the current folder: the nearest folder, from `cwd` up, with an
/// `assay.toml`.
pub fn find_root(cwd: &Path) -> Option<std::path::PathBuf> {
    cwd.ancestors()
        .find(|d| d.join("assay.toml").is_file())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_settings_and_rejects_unknown_keys_with_a_place() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("assay.toml"),
            "[run]\nharness = \"command\"\ntimeout = 30\n\n[harness.command]\ncommand = [\"python3\", \"agent.py\"]\n",
        )
        .unwrap();
        let c = load(d.path(), Path::new(".")).unwrap();
        assert_eq!(c.run.harness.as_deref(), Some("command"));
        assert_eq!(c.harness.command.command, ["python3", "agent.py"]);

        std::fs::write(d.path().join("assay.toml"), "[run]\nharnes = \"x\"\n").unwrap();
        let p = load(d.path(), Path::new(".")).unwrap_err();
        assert_eq!(p.code, "bad-config");
        assert_eq!(p.line_col(), Some((2, 1)));
        assert!(p.message.contains("harnes"), "{}", p.message);
        assert!(load(tempfile::tempdir().unwrap().path(), Path::new(".")).is_ok());
    }
}
