//! The `command` harness: any program. The prompt replaces `{prompt}` in its arguments, or
//! goes to its stdin; its stdout is the output and its exit code is kept.

use super::{CommandLine, Event, Harness, HarnessSettings, Invocation, StreamParser};
use crate::process::Exited;
use crate::{
    host::{HostEnv, Unavailable},
    record::agent::TurnSummary,
};

pub struct CommandHarness {
    argv: Vec<String>,
}

impl CommandHarness {
    pub fn new(settings: &HarnessSettings) -> Self {
        CommandHarness {
            argv: settings.command.clone(),
        }
    }

    /// A harness for one fixed command (a deterministic test case).
    pub fn with_argv(argv: Vec<String>) -> Self {
        CommandHarness { argv }
    }
}

impl Harness for CommandHarness {
    /// Any program: the skill (and a package's parts) go where Claude Code and Codex look
    /// (`.agents/skills` is also the Agent Skills standard's folder, read by Gemini CLI).
    fn engines(&self) -> &'static [crate::workspace::Engine] {
        &[
            crate::workspace::Engine::ClaudeCode,
            crate::workspace::Engine::Codex,
        ]
    }

    fn name(&self) -> &str {
        "command"
    }

    fn preflight(&self, env: &HostEnv) -> Result<(), Unavailable> {
        let Some(program) = self.argv.first() else {
            return Err(Unavailable {
                message: "the command harness has no command to run".into(),
                fix: "set `command = [\"program\", \"arg\", …]` under [harness] in assay.toml, or pass --command".into(),
            });
        };
        if program.contains('/') || env.which(program).is_some() {
            Ok(())
        } else {
            Err(Unavailable {
                message: format!("`{program}` (the command harness's program) is not on PATH"),
                fix: format!("install `{program}`, or give its full path"),
            })
        }
    }

    fn command(&self, inv: &Invocation<'_>) -> Result<CommandLine, String> {
        let templated = self.argv.iter().any(|a| a.contains("{prompt}"));
        let mut argv = self.argv.iter().map(|a| a.replace("{prompt}", inv.prompt));
        Ok(CommandLine {
            program: argv.next().unwrap_or_default(),
            args: argv.collect(),
            env: Vec::new(),
            stdin: (!templated).then(|| inv.prompt.as_bytes().to_vec()),
            shows: Vec::new(),
        })
    }

    fn sealed_stdout(&self) -> bool {
        false
    }
    fn parser(&self, _inv: &Invocation<'_>) -> Box<dyn StreamParser> {
        Box::new(OutputParser::default())
    }
}

/// Every stdout line is output; all of stdout is the final message.
#[derive(Default)]
pub struct OutputParser {
    text: String,
}

impl StreamParser for OutputParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        self.text.push_str(line);
        self.text.push('\n');
        vec![Event::Output {
            text: line.to_string(),
        }]
    }

    fn finish(&mut self, exit: &Exited) -> TurnSummary {
        TurnSummary {
            final_message: Some(std::mem::take(&mut self.text)),
            duration_ms: Some(exit.duration.as_millis() as u64),
            ..TurnSummary::default()
        }
    }
}
