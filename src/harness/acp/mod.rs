//! The `acp` harness: any agent that speaks the Agent Client Protocol (JSON-RPC over stdio),
//! run as `[harness.acp] command` (or `--command`) says. assay is the client: its bridge
//! ([`bridge`], `assay __acp-client`) runs inside the case-run's sandbox as the agent's
//! parent and prints the session, which [`read`] turns into events.

pub mod bridge;
mod mcp;
pub mod presets;
mod read;

use super::{CommandLine, Harness, HarnessSettings, Invocation, StreamParser, VersionCommand};
use crate::host::{HostEnv, Unavailable};

pub struct AcpHarness {
    argv: Vec<String>,
    /// The engine, when it is one assay knows ([`presets`]); none: any agent.
    preset: Option<&'static presets::Preset>,
}

impl AcpHarness {
    pub fn new(settings: &HarnessSettings) -> Self {
        AcpHarness {
            argv: settings.acp_command.clone(),
            preset: None,
        }
    }

    /// A known engine through ACP.
    pub fn preset(preset: &'static presets::Preset) -> Self {
        let argv = std::iter::once(preset.program)
            .chain(preset.args.iter().copied())
            .map(str::to_string)
            .collect();
        AcpHarness {
            argv,
            preset: Some(preset),
        }
    }
}

impl Harness for AcpHarness {
    fn name(&self) -> &str {
        self.preset.map_or("acp", |p| p.name)
    }

    /// The client cancels the session on SIGTERM and kills the agent's group after its cancel
    /// grace; a half second more for it to end.
    fn decided_grace(&self) -> std::time::Duration {
        bridge::CANCEL_GRACE + std::time::Duration::from_millis(500)
    }

    fn stop_at_call(&self, line: &mut CommandLine, skill: &str) {
        stop_at_call(line, skill)
    }

    fn preflight(&self, env: &HostEnv) -> Result<(), Unavailable> {
        let Some(program) = self.argv.first() else {
            return Err(Unavailable {
                message: "the acp harness has no agent command to run".into(),
                fix: "set `command = [\"agent\", \"--acp\"]` under [harness.acp] in assay.toml, or pass --command".into(),
            });
        };
        // A relative path would name one file on the host and another in the workspace.
        if program.contains('/') && !program.starts_with('/') {
            return Err(Unavailable {
                message: format!("`{program}` (the acp harness's agent) is a relative path"),
                fix: "name the agent by its absolute path, or by a name found on PATH".into(),
            });
        }
        if env.which(program).is_none() {
            return Err(Unavailable {
                message: format!("`{program}` (the acp harness's agent) is not on PATH"),
                fix: format!("install `{program}`, or give its full path"),
            });
        }
        if let Some((program, why)) = self
            .preset
            .and_then(|p| p.needs.iter().find(|(n, _)| env.which(n).is_none()))
        {
            return Err(Unavailable {
                message: format!("`{program}` is not on PATH: {why}"),
                fix: format!(
                    "install `{program}` (ripgrep: `apt install ripgrep`, `brew install ripgrep`)"
                ),
            });
        }
        if let Some(p) = self.preset
            && !p.login.iter().any(|v| env.var(v).is_some())
        {
            return Err(Unavailable {
                message: format!(
                    "the {} harness has no login: none of {} is set",
                    p.name,
                    p.login.join(", ")
                ),
                fix: p.login_fix.into(),
            });
        }
        bridge_program().map(|_| ()).map_err(|e| Unavailable {
            message: format!("cannot find assay's own executable to run the ACP client: {e}"),
            fix: String::new(),
        })
    }

    /// The bridge, with the agent's command after `--` and the prompt on stdin.
    fn command(&self, inv: &Invocation<'_>) -> Result<CommandLine, String> {
        let mut argv = self.argv.clone();
        let mut env = Vec::new();
        match (self.preset.map(|p| &p.model), inv.model) {
            (Some(presets::ModelChoice::Flag(flag)), Some(model)) => {
                argv.extend([flag.to_string(), model.to_string()]);
            }
            (Some(presets::ModelChoice::Env(vars)), Some(model)) => env = vars(model),
            _ => {}
        }
        match self.preset.map(|p| &p.mcp) {
            Some(presets::McpHandoff::Settings(write)) if !inv.mcp_servers.is_empty() => {
                write(inv.home, inv.mcp_servers).map_err(|e| {
                    format!(
                        "cannot write the package's MCP servers for {}: {e}",
                        self.name()
                    )
                })?;
                client_command(argv, env, inv, false)
            }
            _ => client_command(argv, env, inv, true),
        }
    }

    /// A preset's engine: its keys, its endpoint variable and its login files; any other agent:
    /// none (`--pass-env` names what it needs).
    fn login(&self) -> crate::host::Login {
        match self.preset {
            Some(p) => crate::host::Login::of(p.keys, &[p.base_url], p.files),
            None => crate::host::Login::default(),
        }
    }

    /// An agent assay does not know: the skill (and a package's parts) go where Claude Code
    /// and Codex look (`.agents/skills` is the Agent Skills standard's, read by most); a
    /// preset's go where its engine reads them.
    fn engines(&self) -> &'static [crate::workspace::Engine] {
        match self.preset {
            Some(_) => &[],
            None => &[
                crate::workspace::Engine::ClaudeCode,
                crate::workspace::Engine::Codex,
            ],
        }
    }

    fn skill_folders(&self) -> Vec<String> {
        self.preset
            .map(|p| p.skill_folders.iter().map(|f| f.to_string()).collect())
            .unwrap_or_default()
    }

    fn prepare(
        &self,
        home: &std::path::Path,
        env: &mut Vec<(String, String)>,
    ) -> std::io::Result<()> {
        match self.preset {
            Some(p) => (p.prepare)(home, env),
            None => Ok(()),
        }
    }

    /// An ACP agent may offer slash commands, or not: assay expands them first.
    fn slash_commands(&self) -> bool {
        false
    }

    /// A preset's engine is asked its version; ACP has no version flag of its own, so any
    /// other agent is looked up inside the sandbox and the cache keyed by its program's
    /// content (its `initialize` answer names it in the transcript).
    fn version_command(&self) -> Option<VersionCommand> {
        self.argv.first().map(|p| VersionCommand {
            program: p.clone(),
            args: self
                .preset
                .map(|p| p.version_args.iter().map(|a| a.to_string()).collect()),
        })
    }

    /// A preset's engine reaches its endpoint variable's URL, else its vendor's API; any
    /// other agent, its `*_BASE_URL` variables.
    fn endpoints(&self, env: &[(String, String)]) -> Vec<String> {
        let mut e = crate::sandbox::endpoint::from_env(env);
        if let Some(p) = self.preset
            && !env.iter().any(|(k, v)| k == p.base_url && !v.is_empty())
        {
            e.extend(p.default_endpoints.iter().map(|u| u.to_string()));
        }
        e
    }

    /// A preset's engine pointed at an endpoint of one's own that needs a model named
    /// (Copilot, OpenCode), and none given: neither the run's `--model` nor its variable.
    fn model_missing(&self, model: Option<&str>, env: &HostEnv) -> Option<Unavailable> {
        let need = self.preset?.model_needed.as_ref()?;
        let given = model.is_some_and(|m| !m.is_empty())
            || env.var(need.var).is_some_and(|v| !v.is_empty());
        let own_endpoint = env.var(need.when).is_some_and(|v| !v.is_empty());
        (own_endpoint && !given).then(|| Unavailable {
            message: format!(
                "the {} harness has no model: {} is set, and neither --model nor {} ({})",
                self.name(),
                need.when,
                need.var,
                need.why
            ),
            fix: format!(
                "pass --model <name> (or `model` under [run] in assay.toml), or set {}",
                need.var
            ),
        })
    }

    fn parser(&self, _inv: &Invocation<'_>) -> Box<dyn StreamParser> {
        parser()
    }
}

/// The command line that runs `argv` (with `env`) as an ACP agent for this turn: assay's
/// client, the agent's command after `--`, the prompt on stdin, and with `mcp` the package's
/// MCP servers for `session/new`. Also how a harness plugin that speaks ACP is run.
pub fn client_command(
    argv: Vec<String>,
    mut env: Vec<(String, String)>,
    inv: &Invocation<'_>,
    mcp: bool,
) -> Result<CommandLine, String> {
    let mut args = vec![bridge::SUBCOMMAND.to_string()];
    if let Some(session) = inv.resume {
        args.extend(["--resume".to_string(), session.to_string()]);
    }
    args.push("--".into());
    let shows = argv.first().cloned().into_iter().collect();
    args.extend(argv);
    if mcp && !inv.mcp_servers.is_empty() {
        env.push((mcp::VAR.into(), mcp::to_acp(inv.mcp_servers).to_string()));
    }
    Ok(CommandLine {
        program: bridge_program().map_err(|e| e.to_string())?,
        args,
        env,
        stdin: Some(inv.prompt.as_bytes().to_vec()),
        shows,
    })
}

/// The ACP client's command, told to stop its agent at a call of `skill`.
pub fn stop_at_call(line: &mut CommandLine, skill: &str) {
    if line.args.first().map(String::as_str) == Some(bridge::SUBCOMMAND) {
        line.args
            .splice(1..1, [bridge::STOP_AT_SKILL.to_string(), skill.to_string()]);
    }
}

/// What reads an ACP client's session into events.
pub fn parser() -> Box<dyn StreamParser> {
    Box::new(read::AcpParser::default())
}

/// assay's own executable, which runs the bridge.
fn bridge_program() -> std::io::Result<String> {
    Ok(std::env::current_exe()?.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opencode_without_ripgrep_on_path_is_not_ready() {
        let bin = tempfile::tempdir().unwrap();
        let exe = |name: &str| {
            use std::os::unix::fs::PermissionsExt;
            let p = bin.path().join(name);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        exe("opencode");
        let env = HostEnv {
            path: bin.path().display().to_string(),
            vars: vec![("OPENAI_API_KEY".into(), "k".into())],
        };
        let opencode = AcpHarness::preset(&presets::OPENCODE);
        let why = opencode.preflight(&env).unwrap_err();
        assert!(
            why.message.contains("`rg` is not on PATH"),
            "{}",
            why.message
        );
        exe("rg");
        assert!(opencode.preflight(&env).is_ok());
        // Copilot needs no ripgrep of the host's.
        exe("copilot");
        let env = HostEnv {
            vars: vec![("COPILOT_GITHUB_TOKEN".into(), "t".into())],
            ..env
        };
        assert!(
            AcpHarness::preset(&presets::COPILOT)
                .preflight(&env)
                .is_ok()
        );
    }
}
