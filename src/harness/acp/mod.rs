//! The `acp` harness: any agent that speaks the Agent Client Protocol (JSON-RPC over stdio),
//! run as `[harness.acp] command` (or `--command`) says. assay is the client: its bridge
//! ([`bridge`], `assay __acp-client`) runs inside the case-run's sandbox as the agent's
//! parent and prints the session, which [`read`] turns into events.

pub mod bridge;
mod read;

use super::{
    CommandLine, Harness, HarnessSettings, HostEnv, Invocation, StreamParser, Unavailable,
    VersionCommand,
};

pub struct AcpHarness {
    argv: Vec<String>,
}

impl AcpHarness {
    pub fn new(settings: &HarnessSettings) -> Self {
        AcpHarness {
            argv: settings.acp_command.clone(),
        }
    }
}

impl Harness for AcpHarness {
    fn name(&self) -> &str {
        "acp"
    }

    fn preflight(&self, env: &HostEnv) -> Result<(), Unavailable> {
        let Some(program) = self.argv.first() else {
            return Err(Unavailable {
                message: "the acp harness has no agent command to run".into(),
                fix: "set `command = [\"agent\", \"--acp\"]` under [harness.acp] in assay.toml, or pass --command".into(),
            });
        };
        if env.which(program).is_none() {
            return Err(Unavailable {
                message: format!("`{program}` (the acp harness's agent) is not on PATH"),
                fix: format!("install `{program}`, or give its full path"),
            });
        }
        bridge_program().map(|_| ()).map_err(|e| Unavailable {
            message: format!("cannot find assay's own executable to run the ACP client: {e}"),
            fix: String::new(),
        })
    }

    /// The bridge, with the agent's command after `--` and the prompt on stdin.
    fn command(&self, inv: &Invocation<'_>) -> Result<CommandLine, String> {
        let mut args = vec![bridge::SUBCOMMAND.to_string()];
        if let Some(session) = inv.resume {
            args.extend(["--resume".to_string(), session.to_string()]);
        }
        args.push("--".into());
        args.extend(self.argv.iter().cloned());
        Ok(CommandLine {
            program: bridge_program().map_err(|e| e.to_string())?,
            args,
            env: Vec::new(),
            stdin: Some(inv.prompt.as_bytes().to_vec()),
            shows: self.argv.first().cloned().into_iter().collect(),
        })
    }

    /// An agent assay does not know: the skill (and a package's parts) go where Claude Code
    /// and Codex look (`.agents/skills` is the Agent Skills standard's, read by most).
    fn engines(&self) -> &'static [crate::workspace::Engine] {
        &[
            crate::workspace::Engine::ClaudeCode,
            crate::workspace::Engine::Codex,
        ]
    }

    /// An ACP agent may offer slash commands, or not: assay expands them first.
    fn slash_commands(&self) -> bool {
        false
    }

    /// ACP has no version flag: the agent is looked up inside the sandbox, and the cache
    /// keyed by its program's content (its `initialize` answer names it in the transcript).
    fn version_command(&self) -> Option<VersionCommand> {
        self.argv.first().map(|p| VersionCommand {
            program: p.clone(),
            args: None,
        })
    }

    fn parser(&self, _inv: &Invocation<'_>) -> Box<dyn StreamParser> {
        Box::new(read::AcpParser::default())
    }
}

/// assay's own executable, which runs the bridge.
fn bridge_program() -> std::io::Result<String> {
    Ok(std::env::current_exe()?.display().to_string())
}
