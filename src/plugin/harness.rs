//! A harness adapter from a plugin: the plugin builds the command and parses the agent's
//! output line by line (through a parser resource living in one store for the turn); the host
//! still owns the process, its limits and its isolation.

use std::sync::Arc;

use wasmtime::Store;

use super::host::HostState;
use super::loaded::{HarnessInfo, LoadedPlugin};
use super::sync_call::outside_async;
use super::wit::{GuestParser, HarnessCall};
use crate::process::Exited;
use crate::workspace::Engine;
use crate::{
    harness::{
        CommandLine, Event, Harness, HarnessSettings, Invocation, StreamParser, VersionCommand,
    },
    host::{HostEnv, Unavailable},
    record::agent::{AgentError, ErrorCategory, TurnSummary},
};

pub struct PluginHarness {
    plugin: Arc<LoadedPlugin>,
    info: HarnessInfo,
    /// The harness settings that are set, by name, handed to the plugin with each turn.
    settings: Vec<(String, String)>,
}

impl PluginHarness {
    pub fn new(plugin: Arc<LoadedPlugin>, info: HarnessInfo, settings: &HarnessSettings) -> Self {
        PluginHarness {
            plugin,
            info,
            settings: settings.named(),
        }
    }

    fn call<'a>(&'a self, inv: &'a Invocation<'a>) -> HarnessCall<'a> {
        HarnessCall {
            inv,
            settings: &self.settings,
            as_root: crate::host::running_as_root(),
        }
    }
}

impl Harness for PluginHarness {
    fn name(&self) -> &str {
        &self.info.name
    }

    fn preflight(&self, env: &HostEnv) -> Result<(), Unavailable> {
        if env.which(&self.info.program).is_none() {
            return Err(Unavailable {
                message: format!(
                    "`{}` (for the {} harness from the plugin {}) is not on PATH",
                    self.info.program, self.info.name, self.plugin.name
                ),
                fix: format!("install {} or put it on PATH", self.info.program),
            });
        }
        match &self.info.login {
            Some(login) if !env.has_login(&login.vars, &login.files) => Err(Unavailable {
                message: format!(
                    "the {} harness has no login: none of {} is set{}",
                    self.info.name,
                    login.vars.join(", "),
                    if login.files.is_empty() {
                        String::new()
                    } else {
                        format!(", and none of ~/{} exists", login.files.join(", ~/"))
                    }
                ),
                fix: login.fix.clone(),
            }),
            _ => Ok(()),
        }
    }

    fn command(&self, inv: &Invocation<'_>) -> Result<CommandLine, String> {
        let call = self.call(inv);
        let result = self
            .plugin
            .call(|store, inst, p| p.exports().command(store, inst, &self.info.name, &call));
        match result {
            // An ACP agent is run by assay's client, with the plugin's command line.
            Ok(Ok(c)) if self.info.speaks_acp => {
                let argv = std::iter::once(c.program).chain(c.args).collect();
                crate::harness::acp::client_command(argv, c.env, inv, true)
            }
            Ok(Ok(c)) => Ok(c),
            Ok(Err(e)) => Err(format!("the harness plugin failed: {e}")),
            Err(e) => Err(format!("the harness plugin failed: {e}")),
        }
    }

    /// The login the plugin declares, and the variables of its endpoints; a login file only if
    /// it is one assay knows ([`crate::host::LOGIN_FILES`]: a plugin cannot have the user's
    /// other files copied in). A plugin that declares none gets none (`--pass-env` passes it).
    fn login(&self) -> crate::host::Login {
        let (keys, files) = match &self.info.login {
            Some(l) => (l.vars.clone(), l.files.clone()),
            None => (Vec::new(), Vec::new()),
        };
        crate::host::Login {
            keys,
            endpoints: self.info.endpoints.iter().map(|(v, _)| v.clone()).collect(),
            files,
        }
    }

    /// The engines the plugin names; none named (and every 0.1.0 plugin): an agent assay does
    /// not know, so the skill (and a package's parts) go where Claude Code and Codex look
    /// (`.agents/skills` is also read by Gemini CLI), unless it names skill folders of its own
    /// (WIT 0.3.0): then none.
    fn engines(&self) -> &'static [Engine] {
        let has = |n: &str| self.info.engines.iter().any(|e| e == n);
        match (has("claude-code"), has("codex")) {
            (true, false) => &[Engine::ClaudeCode],
            (false, true) => &[Engine::Codex],
            (false, false) if !self.info.skill_folders.is_empty() => &[],
            _ => &[Engine::ClaudeCode, Engine::Codex],
        }
    }

    fn skill_folders(&self) -> Vec<String> {
        self.info
            .skill_folders
            .iter()
            .map(|f| f.trim_end_matches('/').to_string())
            .collect()
    }

    fn slash_commands(&self) -> bool {
        self.info.slash_commands
    }

    /// Its `*_BASE_URL` variables and the URL in each variable it names; for a variable that
    /// is not set, its default URL, but only an `https` URL of a public host name: a plugin
    /// (untrusted) cannot open the sandbox to an address (cloud metadata, a host service on
    /// loopback or the private network) by naming it.
    fn endpoints(&self, env: &[(String, String)]) -> Vec<String> {
        let mut urls = crate::sandbox::endpoint::from_env(env);
        for (var, default) in &self.info.endpoints {
            let set = env
                .iter()
                .find(|(k, v)| k == var && !v.is_empty())
                .map(|(_, v)| v.clone());
            let url = match set {
                Some(v) => Some(v),
                None => public_https(default).then(|| default.clone()),
            };
            if let Some(u) = url
                && !urls.contains(&u)
            {
                urls.push(u);
            }
        }
        urls
    }

    fn version_command(&self) -> Option<VersionCommand> {
        Some(VersionCommand {
            program: self.info.program.clone(),
            args: self.info.version_args.clone(),
        })
    }

    fn parser(&self, inv: &Invocation<'_>) -> Box<dyn StreamParser> {
        if self.info.speaks_acp {
            return crate::harness::acp::parser();
        }
        let call = self.call(inv);
        let mut store = self.plugin.store();
        let made = outside_async(|| {
            self.plugin.instantiate(&mut store).and_then(|inst| {
                self.plugin
                    .exports()
                    .parser(&mut store, &inst, &self.info.name, &call)
            })
        });
        let mut parser = PluginParser {
            plugin: self.plugin.clone(),
            kinds: self.info.error_kinds.clone(),
            store,
            guest: None,
            failure: None,
        };
        match made {
            Ok(Ok(guest)) => parser.guest = Some(guest),
            Ok(Err(e)) => parser.failure = Some(parser.why(&e)),
            Err(why) => parser.failure = Some(why),
        }
        Box::new(parser)
    }
}

struct PluginParser {
    plugin: Arc<LoadedPlugin>,
    /// The agent's own error kinds, as the plugin declared them.
    kinds: Vec<super::provides::ErrorKind>,
    store: Store<HostState>,
    guest: Option<Box<dyn GuestParser>>,
    /// Why the plugin stopped working; later lines are ignored and the turn fails.
    failure: Option<String>,
}

impl PluginParser {
    /// A fresh deadline for each call: the parser lives as long as the agent runs.
    fn arm(&mut self) {
        self.plugin.arm(&mut self.store);
    }

    /// What stopped a call, with the end of what the plugin wrote to stderr (a panic's
    /// message, say).
    fn why(&self, e: &wasmtime::Error) -> String {
        let stopped = self.plugin.classify(e).to_string();
        let all = self.store.data().stderr.contents();
        let said = String::from_utf8_lossy(&all);
        let lines: Vec<&str> = said
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.contains("RUST_BACKTRACE"))
            .collect();
        let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
        match tail.is_empty() {
            true => stopped,
            false => format!(
                "{stopped}; stderr: {}",
                crate::text::shorten(&crate::text::printable(&tail), 500)
            ),
        }
    }

    /// A fault of the plugin, as the case-run records it: assay's side, named as the plugin's.
    fn fault(&self, why: &str) -> AgentError {
        AgentError {
            category: ErrorCategory::Plugin,
            message: format!("the harness plugin {} failed: {why}", self.plugin.name),
            kind: None,
        }
    }
}

impl StreamParser for PluginParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        if self.failure.is_some() {
            return Vec::new();
        }
        self.arm();
        let Some(guest) = &self.guest else {
            return Vec::new();
        };
        let fed = match outside_async(|| guest.feed(&mut self.store, line)) {
            Ok(Ok(events)) => Ok(events),
            Ok(Err(e)) => Err(self.why(&e)),
            Err(why) => Err(why),
        };
        match fed {
            // An event the plugin got wrong is said in the transcript, never dropped unseen.
            Ok(events) => events
                .iter()
                .map(|e| {
                    super::summary::event(e, &self.kinds).unwrap_or_else(|err| Event::Error {
                        message: format!(
                            "the harness plugin sent an event assay cannot read ({err}): {}",
                            crate::text::shorten(e, 200)
                        ),
                        category: None,
                    })
                })
                .collect(),
            Err(why) => {
                let fault = self.fault(&why);
                self.failure = Some(why);
                vec![Event::Error {
                    message: fault.message,
                    category: Some(fault.category),
                }]
            }
        }
    }

    fn finish(&mut self, exit: &Exited) -> TurnSummary {
        let failed = |p: &Self, why: &str| TurnSummary {
            error: Some(p.fault(why)),
            ..TurnSummary::default()
        };
        if let Some(why) = self.failure.clone() {
            return failed(self, &why);
        }
        self.arm();
        let Some(guest) = &self.guest else {
            return failed(self, "no parser");
        };
        match outside_async(|| guest.finish(&mut self.store, exit)) {
            Ok(Ok(json)) => super::summary::summary(&json, &self.kinds)
                .unwrap_or_else(|e| failed(self, &format!("its summary is not valid: {e}"))),
            Ok(Err(e)) => failed(self, &self.why(&e)),
            Err(why) => failed(self, &why),
        }
    }
}

impl Drop for PluginParser {
    fn drop(&mut self) {
        if let Some(guest) = self.guest.take() {
            // The store goes with the parser: a resource the plugin cannot drop leaks nothing.
            let _ = outside_async(|| guest.resource().resource_drop(&mut self.store));
        }
    }
}

/// An `https` URL whose host is a DNS name outside the local and internal namespaces (not an
/// IP address, not `localhost`).
fn public_https(url: &str) -> bool {
    let Ok(u) = url::Url::parse(url) else {
        return false;
    };
    let Some(url::Host::Domain(host)) = u.host() else {
        return false;
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    u.scheme() == "https"
        && host.contains('.')
        && ![
            "localhost",
            ".local",
            ".internal",
            ".localdomain",
            ".home.arpa",
        ]
        .iter()
        .any(|s| host == s.trim_start_matches('.') || host.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::public_https;

    #[test]
    fn a_plugin_default_endpoint_must_be_a_public_https_host() {
        assert!(public_https("https://api.anthropic.com"));
        for bad in [
            "http://api.example.com",
            "https://169.254.169.254",
            "https://127.0.0.1:6379",
            "https://[::1]",
            "https://localhost",
            "https://db.internal",
            "https://printer.local",
            "https://metadata",
            "not a url",
        ] {
            assert!(!public_https(bad), "{bad}");
        }
    }
}
