//! The LLM judge: its providers, and how its verdicts are asked for and checked. Which judge
//! grades a suite (`--judge` > `ASSAY_JUDGE` > the spec > auto) is decided with the run's
//! other settings, in `run::resolve::judge`.

pub mod compare;
pub mod extract;
pub mod fence;
pub mod matching;
pub mod modes;
pub mod provider;
pub mod trigger;

use serde::Serialize;

pub use provider::{CallLimits, Judge, JudgeError, ProviderKind};

pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-6";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-5.4";
pub const PROVIDERS: &[&str] = &["anthropic", "openai", "claude-cli", "codex-cli"];

/// Short model names (UAAPS writes `judge: claude-sonnet`) and the model id each means now.
pub const ALIASES: &[(&str, &str)] = &[
    ("claude-sonnet", DEFAULT_ANTHROPIC_MODEL),
    ("sonnet", DEFAULT_ANTHROPIC_MODEL),
    ("claude-opus", "claude-opus-4-1"),
    ("opus", "claude-opus-4-1"),
    ("claude-haiku", "claude-haiku-4-5"),
    ("haiku", "claude-haiku-4-5"),
    ("gpt", DEFAULT_OPENAI_MODEL),
];

/// The model id a name means: a short name's current id, else the name as written.
pub fn resolve_model(name: &str) -> String {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or_else(|| name.to_string(), |(_, id)| id.to_string())
}

/// How the judge was chosen, for the record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeInfo {
    pub provider: String,
    pub model: String,
    /// Where the choice came from: flag, env, spec or auto.
    pub chosen_by: String,
}

/// What the command line says about the judge: `--judge` (alias `--grading-provider`) and
/// `--transport`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Flags<'a> {
    pub judge: Option<&'a str>,
    pub transport: Option<&'a str>,
}

/// clauditor's transports: `api` (the Anthropic Messages API), `cli` (the local `claude`
/// binary), `auto` (the CLI when `claude` is on PATH, else the API).
pub const TRANSPORTS: &[&str] = &["api", "cli", "auto"];
