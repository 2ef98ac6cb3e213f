//! Harnesses: how a case becomes an agent command, and how its output becomes events.
//!
//! A harness is a pure translator — build the command, parse lines, summarize. The host owns
//! processes, limits and isolation. Built-in harnesses and WebAssembly harness plugins
//! implement the same [`Harness`] trait. (BMAD's platform adapter, `adapter.json`, is one
//! harness among them: [`bmad_adapter`].)

pub mod acp;
pub mod bmad_adapter;
pub mod claude_code;
pub mod claude_code_history;
pub mod codex;
pub mod command;
pub mod event;
pub mod skill_loads;
pub mod tool_kinds;

use std::path::Path;

use crate::record::agent::TurnSummary;
pub use event::Event;

use crate::process::Exited;

use crate::host::{HostEnv, Login, Unavailable};

/// One turn of a case, as a harness needs to see it.
#[derive(Debug, Clone)]
pub struct Invocation<'a> {
    pub prompt: &'a str,
    /// 0 for the first turn.
    pub turn: usize,
    /// The session to continue, from the previous turn's summary.
    pub resume: Option<&'a str>,
    pub model: Option<&'a str>,
    pub system_prompt: Option<&'a str>,
    /// The agent's working folder (absolute).
    pub cwd: &'a Path,
    /// The private HOME (absolute).
    pub home: &'a Path,
    pub sync_tasks: bool,
    pub allow_hang_heuristic: bool,
    /// Run the turn as this sub-agent of the package (UAAPS `target: agent:<name>`), where the
    /// agent can select one (Claude Code's `--agent`).
    pub agent: Option<&'a str>,
    /// The agent runs in assay's sandbox: its own sandbox is redundant there (and can fail).
    pub sandboxed: bool,
    /// The package's MCP servers (UAAPS `mcp/servers.json`: `command`, `args`, `env`, or
    /// `url`), for an agent told them per session (ACP's `session/new`); empty without a
    /// package, and for a baseline.
    pub mcp_servers: &'a std::collections::BTreeMap<String, serde_json::Value>,
    /// What the case allows the agent (turns, tools, an addition to the system prompt).
    pub limits: &'a crate::suite::AgentLimits,
    /// Claude Code plugins to load for the session (`--plugin-dir`), staged in the private
    /// HOME; empty for a baseline.
    pub plugin_dirs: Vec<std::path::PathBuf>,
    /// Tools the run grants to cases that gate them, and keeps from them (`--allow-tools`,
    /// `--disallow-tools`).
    pub grants: &'a crate::suite::ToolGrants,
}

/// The command a harness wants run; the host adds the scrubbed environment and limits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLine {
    pub program: String,
    pub args: Vec<String>,
    /// Variables the harness needs on top of the scrubbed environment.
    pub env: Vec<(String, String)>,
    pub stdin: Option<Vec<u8>>,
    /// Programs the command starts besides its own (the ACP client's agent): the sandbox
    /// shows their folders as it shows the program's.
    pub shows: Vec<String>,
}

/// How to ask a harness's program for its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionCommand {
    pub program: String,
    /// The arguments that make it print its version on its first line; none: it has no such
    /// flag (it is only looked up, inside the sandbox, and no version is recorded).
    pub args: Option<Vec<String>>,
}

impl VersionCommand {
    /// `<program> --version`, as the agent CLIs assay knows ask it.
    pub fn dashed(program: &str) -> Self {
        VersionCommand {
            program: program.to_string(),
            args: Some(vec!["--version".into()]),
        }
    }
}

/// A harness adapter.
pub trait Harness: Send + Sync {
    fn name(&self) -> &str;
    /// Checks, before any case starts, that the harness can run here.
    fn preflight(&self, env: &HostEnv) -> Result<(), Unavailable>;
    /// The agent's command line for one turn, or why the harness cannot make one (a plugin's
    /// own failure: the case-run is an error with that reason).
    fn command(&self, inv: &Invocation<'_>) -> Result<CommandLine, String>;
    /// Prepares the private HOME once per case-run (say, a CLI's config file), and may add
    /// variables to the environment. Most harnesses need nothing.
    fn prepare(&self, _home: &Path, _env: &mut Vec<(String, String)>) -> std::io::Result<()> {
        Ok(())
    }
    /// The host's login the agent is given: its vendor's key and endpoint variables and login
    /// files, and no other vendor's. Default: none (any program: the `command` harness, an
    /// ACP agent assay does not know), so a login reaches it only through `--pass-env`.
    fn login(&self) -> Login {
        Login::default()
    }
    /// Host environment variables the agent needs beyond the scrubbed environment's own (a BMAD
    /// adapter's `auth_env` and `env_passthrough`): passed as `--pass-env` passes them.
    fn passed_env(&self) -> Vec<String> {
        Vec::new()
    }
    /// The model endpoints (URLs) the agent talks to, given its environment: all that a
    /// sandbox with `--network model` lets it reach. Default: its `*_BASE_URL` variables.
    fn endpoints(&self, env: &[(String, String)]) -> Vec<String> {
        crate::sandbox::endpoint::from_env(env)
    }
    /// The conventions the agent follows for skills, sub-agents, rules and MCP servers: the
    /// skill under test and a package's parts are installed where each reads them.
    /// Default: Claude Code's.
    fn engines(&self) -> &'static [crate::workspace::Engine] {
        &[crate::workspace::Engine::ClaudeCode]
    }
    /// Folders (relative to the workspace) the agent reads skills from beyond its engines'
    /// (a harness plugin's own, say `.acme/skills`): skills are installed there too, and
    /// removed from there for a baseline.
    fn skill_folders(&self) -> Vec<String> {
        Vec::new()
    }
    /// Puts a recorded session where the agent continues it (Claude Code plugin evals'
    /// `context.history_file`), giving the id its first turn resumes. Default: it cannot.
    fn resume_recorded(
        &self,
        _history: &Path,
        _home: &Path,
        _cwd: &Path,
    ) -> Result<String, String> {
        Err(format!(
            "the {} harness cannot continue a recorded Claude Code session (context.history_file); run this case through claude-code",
            self.name()
        ))
    }
    /// Whether the agent loads a Claude Code plugin whole, from a folder (`--plugin-dir`):
    /// Claude Code does; elsewhere a plugin's skills are installed where the agent reads them.
    fn loads_plugins(&self) -> bool {
        false
    }
    /// Whether the agent expands a `/<command>` prompt itself (Claude Code). When it does not,
    /// assay expands a prompt naming the skill under test first ([`crate::run::slash`]).
    fn slash_commands(&self) -> bool {
        true
    }
    /// The program that runs the agent and how to ask its version, for the run's record and
    /// to check, inside the sandbox, that it is there. None: nothing is asked (a plain
    /// program, which may be anything the suite names).
    fn version_command(&self) -> Option<VersionCommand> {
        None
    }
    /// Why the run's model (`None`: none given) will not do here: an engine that needs a
    /// model named and is given none. Checked before anything runs (and by `assay doctor`).
    fn model_missing(&self, _model: Option<&str>, _env: &HostEnv) -> Option<Unavailable> {
        None
    }
    /// A fresh parser for one invocation's output.
    fn parser(&self, inv: &Invocation<'_>) -> Box<dyn StreamParser>;
    /// Whether the agent's stdout is a transcript (tool calls, skills) that its own tools must
    /// not be able to write into: then it is a socket, which `/proc/<pid>/fd/1` cannot reopen
    /// (see [`crate::process::Spawn::sealed_stdout`]). A plain program's output is only what it
    /// prints, and a socket would break its `> /dev/stdout`.
    fn sealed_stdout(&self) -> bool {
        true
    }
    /// How long the agent has, once a trigger run's decisive event is seen, between SIGTERM
    /// and SIGKILL. None for a CLI, killed at once so that it asks the model nothing more;
    /// an ACP client sends `session/cancel` on SIGTERM, then stops its agent.
    fn decided_grace(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
    /// Has the agent's own command stop it at a call of `skill` (a trigger run's skill, whose
    /// load the run's canary saw work): an ACP client freezes its agent the moment it
    /// announces the call, before the line reaches assay. Default: nothing (assay stops a CLI
    /// when it reads the call).
    fn stop_at_call(&self, _line: &mut CommandLine, _skill: &str) {}
}

/// Turns one invocation's stdout, line by line, into events, then a summary.
pub trait StreamParser: Send {
    fn line(&mut self, line: &str) -> Vec<Event>;
    /// Events only the process's end shows (Codex logs a hook's block to stderr only).
    fn after_exit(&mut self, _exit: &Exited) -> Vec<Event> {
        Vec::new()
    }
    fn finish(&mut self, exit: &Exited) -> TurnSummary;
}

/// The most a turn may believably cost, in USD: an agent's claim past it (or negative, or not
/// a finite number) is recorded as an unknown cost with a note, so no total, mean, budget or
/// report is bent by it.
pub const MAX_TURN_COST_USD: f64 = 1e6;

/// An agent's claimed cost in USD, when it is believable (a finite amount from 0 to
/// [`MAX_TURN_COST_USD`]); otherwise why it is not.
pub fn believed_cost(claimed: f64) -> Result<f64, String> {
    if claimed.is_finite() && (0.0..=MAX_TURN_COST_USD).contains(&claimed) {
        return Ok(claimed);
    }
    Err(format!(
        "the agent claimed a cost of {claimed:e} USD, not believed (a turn's cost is from 0 to {MAX_TURN_COST_USD:e} USD): recorded as unknown"
    ))
}

impl TurnSummary {
    /// The turn with its cost believed or set aside ([`believed_cost`]).
    pub fn with_believed_cost(mut self) -> TurnSummary {
        if let Some(claimed) = self.cost_usd
            && let Err(why) = believed_cost(claimed)
        {
            self.cost_usd = None;
            self.cost_note = Some(why);
        }
        self
    }
}

/// Whether an agent's error text names this HTTP status (`401`, `429`, `500`): as a number of its
/// own, never a part of a longer one (a port: `127.0.0.1:40127` says no 401).
pub fn says_status(text: &str, code: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(code).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + code.len()).copied();
        !before.is_some_and(|b| b.is_ascii_digit() || b == b'.')
            && !after.is_some_and(|b| b.is_ascii_digit())
    })
}

/// Whether an agent's (lowercased) error text says its model API could not be reached at all,
/// as Node (Claude Code, Gemini) and Rust (Codex) clients word it.
pub fn unreachable(text: &str) -> bool {
    [
        "unable to connect",
        "connectionrefused",
        "connection refused",
        "econnrefused",
        "enotfound",
        "eai_again",
        "failed to lookup address",
        "dns error",
        "network is unreachable",
        "enetunreach",
        "error sending request",
        "fetch failed",
        // The OpenAI SDK's connection failure (Qwen Code's, under `--network none` too), and a
        // connection closed before an answer.
        "connection error",
        "econnreset",
        "socket hang up",
        // OpenCode's (Bun's fetch).
        "cannot connect to api",
        "socket connection was closed",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// Makes a built-in harness from the run's settings.
type Make = fn(&HarnessSettings) -> Box<dyn Harness>;

/// The built-in harnesses, by name: the one list assay knows them from (plugins add theirs
/// beside these, never under these names).
const BUILTINS: &[(&str, Make)] = &[
    ("acp", |s| Box::new(acp::AcpHarness::new(s))),
    ("claude-code", |s| Box::new(claude_code::ClaudeCode::new(s))),
    ("claude-code-acp", |_| {
        Box::new(acp::AcpHarness::preset(&acp::presets::CLAUDE_CODE_ACP))
    }),
    ("codex", |s| Box::new(codex::Codex::new(s))),
    ("command", |s| Box::new(command::CommandHarness::new(s))),
    ("copilot", |_| {
        Box::new(acp::AcpHarness::preset(&acp::presets::COPILOT))
    }),
    ("opencode", |_| {
        Box::new(acp::AcpHarness::preset(&acp::presets::OPENCODE))
    }),
    ("qwen-code", |_| {
        Box::new(acp::AcpHarness::preset(&acp::presets::QWEN_CODE))
    }),
];

/// The built-in harness of this name, configured from the run's settings.
pub fn builtin(name: &str, settings: &HarnessSettings) -> Option<Box<dyn Harness>> {
    BUILTINS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, make)| make(settings))
}

/// The built-in harnesses' names.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|(n, _)| *n)
}

pub fn is_builtin(name: &str) -> bool {
    builtin_names().any(|n| n == name)
}

/// Settings from the CLI and `assay.toml` that shape how harnesses are invoked.
#[derive(Debug, Clone, Default)]
pub struct HarnessSettings {
    /// claude-code `--permission-mode` (default `bypassPermissions`).
    pub permission_mode: Option<String>,
    /// The `claude` executable (default: `claude` on PATH).
    pub claude_bin: Option<String>,
    /// The `codex` executable (default: `codex` on PATH).
    pub codex_bin: Option<String>,
    /// codex `--sandbox` (default `workspace-write`).
    pub codex_sandbox: Option<String>,
    /// The `command` harness's program and arguments; `{prompt}` is replaced by the prompt,
    /// and without it the prompt goes to stdin.
    pub command: Vec<String>,
    /// The `acp` harness's agent command (`[harness.acp] command`, or `--command`).
    pub acp_command: Vec<String>,
}

impl HarnessSettings {
    /// The settings a harness plugin is handed with each turn, by name: those that are set,
    /// of those that are not about finding a built-in's program.
    pub fn named(&self) -> Vec<(String, String)> {
        [
            ("permission-mode", &self.permission_mode),
            ("codex-sandbox", &self.codex_sandbox),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.clone().map(|v| (k.to_string(), v)))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_status_is_a_number_of_its_own_never_a_port() {
        assert!(super::says_status("API Error: 401 invalid key", "401"));
        assert!(super::says_status(
            "last status: 429 Too Many Requests",
            "429"
        ));
        assert!(!super::says_status(
            "check your gateway (127.0.0.1:40127)",
            "401"
        ));
        assert!(super::says_status("code:429", "429"));
        assert!(!super::says_status("request 15001 failed", "500"));
    }

    use super::*;

    #[test]
    fn only_a_believable_cost_is_recorded() {
        for fair in [0.0, 0.25, MAX_TURN_COST_USD] {
            assert_eq!(believed_cost(fair), Ok(fair));
        }
        for absurd in [1e308, -1e308, -0.01, 1e6 + 1.0, f64::NAN, f64::INFINITY] {
            let why = believed_cost(absurd).unwrap_err();
            assert!(why.contains("not believed"), "{why}");
        }
        let turn = TurnSummary {
            cost_usd: Some(1e308),
            ..TurnSummary::default()
        }
        .with_believed_cost();
        assert_eq!(turn.cost_usd, None);
        assert!(turn.cost_note.is_some_and(|n| n.contains("1e308")));
        let fair = TurnSummary {
            cost_usd: Some(0.5),
            ..TurnSummary::default()
        }
        .with_believed_cost();
        assert_eq!((fair.cost_usd, fair.cost_note), (Some(0.5), None));
    }
}
