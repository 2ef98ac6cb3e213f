//! A harness adapter from a plugin: the plugin builds the command and parses the agent's
//! output line by line (through a parser resource living in one store for the turn); the host
//! still owns the process, its limits and its isolation.

use std::sync::Arc;

use wasmtime::Store;
use wasmtime::component::ResourceAny;

use super::host::{HostState, harness as wit};
use super::loaded::{HarnessInfo, LoadedPlugin};
use crate::harness::{
    AgentError, CommandLine, ErrorCategory, Event, Harness, HostEnv, Invocation, StreamParser,
    TurnSummary, Unavailable,
};
use crate::process::Exited;

pub struct PluginHarness {
    plugin: Arc<LoadedPlugin>,
    info: HarnessInfo,
}

impl PluginHarness {
    pub fn new(plugin: Arc<LoadedPlugin>, info: HarnessInfo) -> Self {
        PluginHarness { plugin, info }
    }
}

fn invocation(inv: &Invocation<'_>) -> wit::Invocation {
    wit::Invocation {
        prompt: inv.prompt.to_string(),
        turn: inv.turn as u32,
        resume: inv.resume.map(str::to_string),
        model: inv.model.map(str::to_string),
        system_prompt: inv.system_prompt.map(str::to_string),
        cwd: inv.cwd.display().to_string(),
        home: inv.home.display().to_string(),
    }
}

impl Harness for PluginHarness {
    fn name(&self) -> &str {
        &self.info.name
    }

    fn preflight(&self, env: &HostEnv) -> Result<(), Unavailable> {
        match env.which(&self.info.program) {
            Some(_) => Ok(()),
            None => Err(Unavailable {
                message: format!(
                    "`{}` (for the {} harness from the plugin {}) is not on PATH",
                    self.info.program, self.info.name, self.plugin.name
                ),
                fix: format!("install {} or put it on PATH", self.info.program),
            }),
        }
    }

    fn command(&self, inv: &Invocation<'_>) -> Result<CommandLine, String> {
        let wit_inv = invocation(inv);
        let result = self.plugin.call(|store, inst, p| {
            p.harness_guest(store, inst)?
                .call_command(&mut *store, &self.info.name, &wit_inv)
        });
        match result {
            Ok(Ok(c)) => Ok(CommandLine {
                program: c.program,
                args: c.args,
                env: c.env,
                stdin: c.stdin.map(String::into_bytes),
            }),
            Ok(Err(e)) => Err(format!("the harness plugin failed: {e}")),
            Err(e) => Err(format!("the harness plugin failed: {e}")),
        }
    }

    /// An agent assay does not know: the skill (and a package's parts) go where Claude Code
    /// and Codex look (`.agents/skills` is also read by Gemini CLI).
    fn engines(&self) -> &'static [crate::workspace::Engine] {
        &[
            crate::workspace::Engine::ClaudeCode,
            crate::workspace::Engine::Codex,
        ]
    }

    fn version_command(&self) -> Option<(String, Vec<String>)> {
        Some((self.info.program.clone(), vec!["--version".into()]))
    }

    fn parser(&self, inv: &Invocation<'_>) -> Box<dyn StreamParser> {
        let wit_inv = invocation(inv);
        let mut store = self.plugin.store();
        let made = self.plugin.instantiate(&mut store).and_then(|inst| {
            let guest = self.plugin.harness_guest(&mut store, &inst)?;
            let parser = guest
                .parser()
                .call_constructor(&mut store, &self.info.name, &wit_inv)?;
            Ok((guest, parser))
        });
        match made {
            Ok((guest, parser)) => Box::new(PluginParser {
                plugin: self.plugin.clone(),
                store,
                guest: Some((guest, parser)),
                failure: None,
            }),
            Err(e) => Box::new(PluginParser {
                plugin: self.plugin.clone(),
                store,
                guest: None,
                failure: Some(self.plugin.classify(&e).to_string()),
            }),
        }
    }
}

struct PluginParser {
    plugin: Arc<LoadedPlugin>,
    store: Store<HostState>,
    guest: Option<(wit::Guest, ResourceAny)>,
    /// Why the plugin stopped working; later lines are ignored and the turn fails.
    failure: Option<String>,
}

impl PluginParser {
    /// A fresh deadline for each call: the parser lives as long as the agent runs.
    fn arm(&mut self) {
        self.plugin.arm(&mut self.store);
    }
}

impl StreamParser for PluginParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        if self.failure.is_some() {
            return Vec::new();
        }
        self.arm();
        let Some((guest, parser)) = &self.guest else {
            return Vec::new();
        };
        match guest.parser().call_feed(&mut self.store, *parser, line) {
            // An event the plugin got wrong is said in the transcript, never dropped unseen.
            Ok(events) => events
                .iter()
                .map(|e| {
                    serde_json::from_str(e).unwrap_or_else(|err| Event::Error {
                        message: format!(
                            "the harness plugin sent an event assay cannot read ({err}): {}",
                            crate::text::shorten(e, 200)
                        ),
                        category: None,
                    })
                })
                .collect(),
            Err(e) => {
                let why = self.plugin.classify(&e).to_string();
                self.failure = Some(why.clone());
                vec![Event::Error {
                    message: why,
                    category: Some(ErrorCategory::Crash),
                }]
            }
        }
    }

    fn finish(&mut self, exit: &Exited) -> TurnSummary {
        let crashed = |why: String| TurnSummary {
            error: Some(AgentError {
                category: ErrorCategory::Crash,
                message: format!("the harness plugin failed: {why}"),
            }),
            ..TurnSummary::default()
        };
        if let Some(why) = self.failure.clone() {
            return crashed(why);
        }
        self.arm();
        let Some((guest, parser)) = &self.guest else {
            return crashed("no parser".into());
        };
        match guest.parser().call_finish(
            &mut self.store,
            *parser,
            exit.code,
            exit.timed_out,
            &exit.stderr_tail,
        ) {
            Ok(json) => serde_json::from_str(&json)
                .unwrap_or_else(|e| crashed(format!("its summary is not valid: {e}"))),
            Err(e) => crashed(self.plugin.classify(&e).to_string()),
        }
    }
}

impl Drop for PluginParser {
    fn drop(&mut self) {
        if let Some((_, parser)) = self.guest.take() {
            let _ = parser.resource_drop(&mut self.store);
        }
    }
}
