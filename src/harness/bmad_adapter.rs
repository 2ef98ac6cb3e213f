//! The `adapter` harness: a BMAD eval runner's platform adapter (`adapter.json`). Its
//! `invocation` is the agent's command line, `{prompt}` (or `{query}`) and `{cwd}` filled in;
//! the transcript is the JSONL the runner reads (Claude Code's stream-json events), on stdout
//! or in a file the runtime writes in its working folder. Like every harness it only
//! translates: the host runs the command in the sandbox, with the scrubbed environment.

use super::claude_code::ClaudeParser;
use super::{CommandLine, Event, Harness, Invocation, StreamParser};
use crate::process::Exited;
use crate::suite::AdapterSpec;
use crate::workspace::Engine;
use crate::{
    host::{HostEnv, Unavailable},
    record::agent::{AgentError, ErrorCategory, TurnSummary},
};

pub struct BmadAdapter {
    spec: AdapterSpec,
    /// Whether host variables (`auth_env`, `env_passthrough`) are forwarded: an adapter the
    /// user named, or one found beside the eval files under `--trust`.
    forward: bool,
}

impl BmadAdapter {
    pub fn new(spec: AdapterSpec, trust: bool) -> Self {
        let forward = spec.chosen || trust;
        BmadAdapter { spec, forward }
    }

    /// The host variables the adapter asks for but does not get (found beside the eval
    /// files, run without `--trust`).
    pub fn withheld(&self) -> Vec<String> {
        if self.forward {
            Vec::new()
        } else {
            self.asked()
        }
    }

    fn asked(&self) -> Vec<String> {
        self.spec
            .auth_env
            .iter()
            .chain(&self.spec.env_passthrough)
            .cloned()
            .collect()
    }
}

/// `{prompt}` and its alias `{query}`, and `{cwd}`, replaced in one argument.
fn fill(arg: &str, prompt: &str, cwd: &str) -> String {
    arg.replace("{prompt}", prompt)
        .replace("{query}", prompt)
        .replace("{cwd}", cwd)
}

/// A transcript the runtime writes to a file is read inside the sandbox, after the runtime
/// exits: its own stdout goes to stderr, then the file is printed; its exit code is kept.
const FILE_TRANSCRIPT: &str = "\"$@\" 1>&2; s=$?; cat -- \"$0\" 2>/dev/null; exit $s";

impl Harness for BmadAdapter {
    fn name(&self) -> &str {
        crate::suite::ADAPTER_HARNESS
    }

    fn preflight(&self, env: &HostEnv) -> Result<(), Unavailable> {
        let program = &self.spec.invocation[0];
        if program.contains('/') || env.which(program).is_some() {
            return Ok(());
        }
        Err(Unavailable {
            message: format!(
                "`{program}` (the invocation of {}) is not on PATH",
                self.spec.source.display()
            ),
            fix: format!("install `{program}`, or give its full path in `invocation`"),
        })
    }

    fn command(&self, inv: &Invocation<'_>) -> Result<CommandLine, String> {
        let cwd = inv.cwd.display().to_string();
        let templated = self
            .spec
            .invocation
            .iter()
            .any(|a| a.contains("{prompt}") || a.contains("{query}"));
        let mut argv: Vec<String> = self
            .spec
            .invocation
            .iter()
            .map(|a| fill(a, inv.prompt, &cwd))
            .collect();
        if let Some(file) = &self.spec.transcript_file {
            let mut wrapped = vec![
                "-c".to_string(),
                FILE_TRANSCRIPT.into(),
                inv.cwd.join(file).display().to_string(),
            ];
            wrapped.append(&mut argv);
            argv = std::iter::once("sh".to_string()).chain(wrapped).collect();
        }
        let mut argv = argv.into_iter();
        Ok(CommandLine {
            program: argv.next().unwrap_or_default(),
            args: argv.collect(),
            env: Vec::new(),
            // Without a placeholder the prompt goes to stdin, as with the command harness.
            stdin: (!templated).then(|| inv.prompt.as_bytes().to_vec()),
            shows: Vec::new(),
        })
    }

    /// The runtime's credential is forwarded only when set non-empty: an empty one would
    /// override its own fallback.
    fn prepare(
        &self,
        _home: &std::path::Path,
        env: &mut Vec<(String, String)>,
    ) -> std::io::Result<()> {
        if let Some(auth) = &self.spec.auth_env {
            env.retain(|(k, v)| k != auth || !v.is_empty());
        }
        Ok(())
    }

    fn passed_env(&self) -> Vec<String> {
        if self.forward {
            self.asked()
        } else {
            Vec::new()
        }
    }

    fn engines(&self) -> &'static [Engine] {
        if self.spec.skill_dir == crate::workspace::AGENT_SKILLS {
            &[Engine::Codex]
        } else {
            &[Engine::ClaudeCode]
        }
    }

    /// The runtime is any program: assay expands a `/skill` prompt itself.
    fn slash_commands(&self) -> bool {
        false
    }

    fn parser(&self, inv: &Invocation<'_>) -> Box<dyn StreamParser> {
        Box::new(TranscriptParser {
            inner: ClaudeParser::new(inv.allow_hang_heuristic),
            raw: String::new(),
            saw_result: false,
        })
    }
}

/// The runner's transcript: Claude Code's stream-json events where the runtime writes them;
/// from a runtime that writes no `result` event, all it printed is the output and its exit
/// code says whether it failed.
struct TranscriptParser {
    inner: ClaudeParser,
    raw: String,
    saw_result: bool,
}

/// How much of a runtime's plain output is kept as its final message.
const MAX_RAW: usize = 1 << 20;

impl StreamParser for TranscriptParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        if self.raw.len() < MAX_RAW {
            self.raw.push_str(line);
            self.raw.push('\n');
        }
        if !self.saw_result && line.contains("\"result\"") {
            self.saw_result = serde_json::from_str::<serde_json::Value>(line)
                .is_ok_and(|v| v.get("type").and_then(|t| t.as_str()) == Some("result"));
        }
        self.inner.line(line)
    }

    fn after_exit(&mut self, exit: &Exited) -> Vec<Event> {
        self.inner.after_exit(exit)
    }

    fn finish(&mut self, exit: &Exited) -> TurnSummary {
        let mut summary = self.inner.finish(exit);
        if self.saw_result {
            return summary;
        }
        summary.error = plain_exit_error(exit);
        if summary.final_message.is_none() {
            summary.final_message = Some(std::mem::take(&mut self.raw));
        }
        summary
    }
}

/// How a runtime without a `result` event ended: a timeout, or an exit code other than 0.
fn plain_exit_error(exit: &Exited) -> Option<AgentError> {
    if exit.timed_out {
        return Some(AgentError {
            category: ErrorCategory::Timeout,
            message: "stopped by the timeout before the runtime finished".into(),
            kind: None,
        });
    }
    match exit.code {
        Some(0) => None,
        code => Some(AgentError {
            category: ErrorCategory::Crash,
            message: format!(
                "the runtime exited {}: {}",
                code.map(|c| c.to_string())
                    .unwrap_or_else(|| "by signal".into()),
                exit.stderr_tail.trim()
            ),
            kind: None,
        }),
    }
}
