//! What a plugin provides, in the host's own terms, whatever WIT version it was built
//! against: its check types, formats and harnesses, and a check's verdict.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckTypeInfo {
    pub name: String,
    pub summary: String,
    pub config_schema: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FormatInfo {
    pub name: String,
    pub summary: String,
    pub example: String,
}

/// A harness a plugin provides. The fields after `program` came with WIT 0.2.0; a 0.1.0
/// plugin gets what assay assumed for an agent it does not know ([`HarnessInfo::assumed`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HarnessInfo {
    pub name: String,
    pub summary: String,
    pub program: String,
    /// `claude-code` and/or `codex`: where the skill and a package's parts are installed.
    pub engines: Vec<String>,
    /// Whether the agent expands `/<command>` prompts itself.
    pub slash_commands: bool,
    /// How the agent logs in, checked before anything runs.
    pub login: Option<Login>,
    /// (variable, default URL) of each model endpoint.
    pub endpoints: Vec<(String, String)>,
}

/// A login: any one of the variables set, or any one of the files (below HOME) present.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Login {
    pub vars: Vec<String>,
    pub files: Vec<String>,
    pub fix: String,
}

impl HarnessInfo {
    /// A harness described only by name, summary and program (WIT 0.1.0): installed for both
    /// engines, slash commands left to the agent, no login checked, endpoints from its
    /// `*_BASE_URL` variables.
    pub fn assumed(name: String, summary: String, program: String) -> Self {
        HarnessInfo {
            name,
            summary,
            program,
            engines: Vec::new(),
            slash_commands: true,
            login: None,
            endpoints: Vec::new(),
        }
    }
}

/// What a plugin's check concluded, before negation.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub passed: bool,
    pub message: String,
    pub evidence: Option<String>,
}
