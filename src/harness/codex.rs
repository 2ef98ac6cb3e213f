//! The `codex` harness: `codex exec --json --skip-git-repo-check -s <sandbox> -`, the prompt on
//! stdin (which must reach EOF), later turns with `codex exec resume <thread_id>`.
//!
//! Codex's JSON stream: `thread.started`, `turn.started`, `turn.completed` (usage),
//! `turn.failed`, `error`, and `item.started`/`item.completed` for agent messages, reasoning,
//! command executions, file changes, MCP tool calls, web searches, to-do lists and errors.

use std::path::Path;

use serde_json::Value;

use super::{CommandLine, Event, Harness, HarnessSettings, Invocation, StreamParser};
use crate::process::Exited;
use crate::{
    host::{HostEnv, Unavailable},
    record::agent::{AgentError, ErrorCategory, TurnSummary, Usage},
};

pub const DEFAULT_SANDBOX: &str = "workspace-write";
pub const AUTH_VARS: &[&str] = &["OPENAI_API_KEY", "CODEX_API_KEY"];
/// Where `codex` keeps a login, below HOME.
pub const LOGIN_FILE: &str = ".codex/auth.json";

pub struct Codex {
    program: String,
    sandbox: String,
}

impl Codex {
    pub fn new(settings: &HarnessSettings) -> Self {
        Codex {
            program: settings.codex_bin.clone().unwrap_or_else(|| "codex".into()),
            sandbox: settings
                .codex_sandbox
                .clone()
                .unwrap_or_else(|| DEFAULT_SANDBOX.into()),
        }
    }
}

/// TOML basic-string quoting.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

impl Harness for Codex {
    fn name(&self) -> &str {
        "codex"
    }

    fn preflight(&self, env: &HostEnv) -> Result<(), Unavailable> {
        if env.which(&self.program).is_none() {
            return Err(Unavailable {
                message: format!("the Codex CLI (`{}`) is not installed", self.program),
                fix: "npm install -g @openai/codex".into(),
            });
        }
        let has_var = AUTH_VARS.iter().any(|v| env.var(v).is_some());
        let has_login = env
            .var("HOME")
            .is_some_and(|h| Path::new(h).join(LOGIN_FILE).is_file());
        if !has_var && !has_login {
            return Err(Unavailable {
                message: "Codex has no login: no OPENAI_API_KEY or CODEX_API_KEY, and no ~/.codex/auth.json".into(),
                fix: "set OPENAI_API_KEY, or run `codex login`".into(),
            });
        }
        Ok(())
    }

    /// OpenAI's key variables, `OPENAI_BASE_URL` and `~/.codex/auth.json`.
    fn login(&self) -> crate::host::Login {
        crate::host::Login::of(AUTH_VARS, &["OPENAI_BASE_URL"], &[LOGIN_FILE])
    }

    /// A private `CODEX_HOME` whose config bounds connection retries (Codex otherwise retries
    /// an unreachable API forever) and, with `OPENAI_BASE_URL` set, points the model provider
    /// at it over the Responses API.
    fn prepare(&self, home: &Path, env: &mut Vec<(String, String)>) -> std::io::Result<()> {
        let codex_home = home.join(crate::workspace::package::CODEX_HOME);
        std::fs::create_dir_all(&codex_home)?;
        // A package's MCP servers, staged there before (tables only: they go last).
        let staged = match std::fs::read_to_string(codex_home.join("config.toml")) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let base_url = env
            .iter()
            .find(|(k, _)| k == "OPENAI_BASE_URL")
            .map(|(_, v)| v.clone());
        let mut config = String::from("# Written by assay for this case-run.\n");
        if let Some(url) = &base_url {
            config.push_str("model_provider = \"assay\"\n\n[model_providers.assay]\nname = \"OpenAI-compatible (OPENAI_BASE_URL)\"\n");
            config.push_str(&format!("base_url = {}\n", quoted(url)));
            config.push_str("wire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\nrequest_max_retries = 0\nstream_max_retries = 0\n\n");
        }
        config.push_str("[features]\nunbounded_connection_retries = false\n");
        if !staged.is_empty() {
            config.push_str("\n# The package's, installed by assay.\n");
            config.push_str(&staged);
        }
        std::fs::write(codex_home.join("config.toml"), config)?;
        env.retain(|(k, _)| k != "CODEX_HOME");
        env.push(("CODEX_HOME".into(), codex_home.display().to_string()));
        if !env.iter().any(|(k, _)| k == "OPENAI_API_KEY")
            && let Some((_, v)) = env.iter().find(|(k, _)| k == "CODEX_API_KEY").cloned()
        {
            env.push(("OPENAI_API_KEY".into(), v));
        }
        Ok(())
    }

    fn command(&self, inv: &Invocation<'_>) -> Result<CommandLine, String> {
        // Inside assay's sandbox, Codex's own (bubblewrap again) is redundant and fails to
        // start its helper; the default gives way to assay's. A sandbox named in assay.toml
        // is kept.
        let sandbox = if inv.sandboxed && self.sandbox == DEFAULT_SANDBOX {
            "danger-full-access".to_string()
        } else {
            self.sandbox.clone()
        };
        let mut args = vec![
            "exec".to_string(),
            "--json".into(),
            "--skip-git-repo-check".into(),
            "-s".into(),
            sandbox,
        ];
        if let Some(m) = inv.model {
            args.extend(["-m".into(), m.to_string()]);
        }
        // A package's hooks, installed by assay in the case-run's own CODEX_HOME (nothing
        // else is there to trust), run without Codex's interactive trust review.
        if inv
            .home
            .join(crate::workspace::package::CODEX_HOME)
            .join("hooks.json")
            .is_file()
        {
            args.push("--dangerously-bypass-hook-trust".into());
        }
        if let Some(id) = inv.resume {
            args.extend(["resume".into(), id.to_string()]);
        }
        args.push("-".into());
        // Codex has no separate system-prompt channel in exec mode: the system prompt leads
        // the first message (as clauditor's Codex harness does).
        let prompt = match (inv.system_prompt, inv.turn) {
            (Some(sys), 0) => format!("{sys}\n\n{}", inv.prompt),
            _ => inv.prompt.to_string(),
        };
        Ok(CommandLine {
            program: self.program.clone(),
            args,
            env: Vec::new(),
            stdin: Some(prompt.into_bytes()),
            shows: Vec::new(),
        })
    }

    /// `OPENAI_BASE_URL`, else OpenAI's API and ChatGPT's (for a ChatGPT login).
    fn endpoints(&self, env: &[(String, String)]) -> Vec<String> {
        let mut e = crate::sandbox::endpoint::from_env(env);
        if !env
            .iter()
            .any(|(k, v)| k == "OPENAI_BASE_URL" && !v.is_empty())
        {
            e.push("https://api.openai.com".into());
            e.push("https://chatgpt.com".into());
        }
        e
    }

    /// Codex reads a project's skills from `.agents/skills/<name>/` (from the project root down
    /// to its working folder), with no setting and no trust needed; it has no `.claude/`.
    /// Sub-agents, rules and MCP servers go into its private `CODEX_HOME`.
    fn engines(&self) -> &'static [crate::workspace::Engine] {
        &[crate::workspace::Engine::Codex]
    }

    /// Codex has no slash commands (and `codex exec` expands no prompts).
    fn slash_commands(&self) -> bool {
        false
    }

    fn version_command(&self) -> Option<super::VersionCommand> {
        Some(super::VersionCommand::dashed(&self.program))
    }

    fn parser(&self, _inv: &Invocation<'_>) -> Box<dyn StreamParser> {
        Box::new(CodexParser::default())
    }
}

/// Parses `codex exec --json` output.
#[derive(Default)]
pub struct CodexParser {
    /// Commands reading a skill, said as they started (a trigger run may stop there): their
    /// completion adds only the result.
    started: Vec<String>,
    thread_id: Option<String>,
    last_message: Option<String>,
    usage: Usage,
    turns: u64,
    failure: Option<String>,
}

/// Whether a command plainly reads a skill where assay installs it for Codex, relative to the
/// workspace (`cat .agents/skills/<name>/SKILL.md`, in `bash -lc '…'` or not): a read that
/// cannot fail, so a trigger run may stop as it starts. Any other read of a `SKILL.md` (a path
/// elsewhere, another program) counts only once its result says it worked.
fn reads_installed_skill(command: &str) -> bool {
    let words: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || c == '\'' || c == '"')
        .filter(|w| !w.is_empty())
        .collect();
    let reader = words
        .iter()
        .position(|w| !["bash", "/bin/bash", "sh", "/bin/sh", "-lc", "-c"].contains(w));
    let Some(i) = reader else { return false };
    let installed = |p: &str| {
        let p = p.strip_prefix("./").unwrap_or(p);
        [".agents/skills/", ".codex/skills/"].iter().any(|root| {
            p.strip_prefix(root)
                .is_some_and(|rest| rest.ends_with("/SKILL.md") && rest.matches('/').count() == 1)
        })
    };
    ["cat", "head", "sed", "nl"].contains(&words[i])
        && words.len() == i + 2 + usize::from(words[i] == "sed") * 2
        && installed(words[words.len() - 1])
}

/// The skill a shell command reads: `…/skills/<name>/SKILL.md`.
fn skill_read_by(command: &str) -> Option<String> {
    let i = command.find("/SKILL.md")?;
    let before = &command[..i];
    let name = before.rsplit(['/', ' ', '"', '\'']).next()?;
    before
        .contains("skills/")
        .then(|| name.to_string())
        .filter(|n| !n.is_empty())
}

fn classify(message: &str) -> ErrorCategory {
    let m = message.to_ascii_lowercase();
    let status = |code: &str| super::says_status(&m, code);
    if status("401") || m.contains("unauthorized") || m.contains("api key") {
        ErrorCategory::Auth
    } else if status("429") || m.contains("rate limit") || m.contains("too many requests") {
        ErrorCategory::RateLimit
    } else if super::unreachable(&m) {
        ErrorCategory::Network
    } else if ["500", "502", "503", "529"].into_iter().any(status)
        || ["server", "disconnected", "high demand", "overloaded"]
            .iter()
            .any(|w| m.contains(w))
    {
        ErrorCategory::Server
    } else {
        ErrorCategory::Agent
    }
}

/// A string field of `v`, empty when absent.
fn str_of(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

impl CodexParser {
    /// The turn's token usage, added to the run's.
    fn usage(&mut self, v: &Value) {
        if let Some(u) = v.get("usage") {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            self.usage.add(&Usage {
                input_tokens: n("input_tokens"),
                output_tokens: n("output_tokens"),
                cache_read_tokens: n("cached_input_tokens"),
                cache_write_tokens: n("cache_write_input_tokens"),
            });
        }
    }

    /// A failure: an error event; the first one (or the turn's) is the turn's failure.
    fn failed(&mut self, message: String, the_turns: bool, out: &mut Vec<Event>) {
        out.push(Event::Error {
            message: message.clone(),
            category: Some(classify(&message)),
        });
        if the_turns {
            self.failure = Some(message);
        } else {
            self.failure.get_or_insert(message);
        }
    }

    /// A started item: a command reading a skill is said at once, the load waiting for its
    /// result (or taken at its call, where it cannot fail: a trigger run's stop).
    fn started(&mut self, item: &Value, out: &mut Vec<Event>) {
        let id = str_of(item, "id");
        if str_of(item, "type") != "command_execution"
            || id.is_empty()
            || self.started.len() >= 1000
            || self.started.contains(&id)
        {
            return;
        }
        let command = str_of(item, "command");
        let Some(name) = skill_read_by(&command).filter(|_| reads_installed_skill(&command)) else {
            return;
        };
        self.started.push(id.clone());
        out.push(Event::ToolCall {
            id: id.clone(),
            name: "command_execution".into(),
            input: serde_json::json!({ "command": command }),
        });
        out.push(Event::SkillInvoked {
            name,
            call: Some(id),
        });
    }

    /// A finished item: a message, reasoning, a command, file changes, a tool call, an error.
    fn item(&mut self, item: &Value, out: &mut Vec<Event>) {
        let id = str_of(item, "id");
        match item.get("type").and_then(Value::as_str).unwrap_or("") {
            "agent_message" => {
                let text = str_of(item, "text");
                self.last_message = Some(text.clone());
                out.push(Event::Message { text });
            }
            "reasoning" => out.push(Event::Reasoning {
                text: str_of(item, "text"),
            }),
            "command_execution" if self.started.contains(&id) => {
                self.started.retain(|s| *s != id);
                command_result(item, id, out);
            }
            "command_execution" => command(item, id, out),
            "file_change" => {
                for c in item
                    .get("changes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    out.push(Event::FileChange {
                        path: str_of(c, "path"),
                        kind: str_of(c, "kind"),
                    });
                }
            }
            "mcp_tool_call" => out.push(Event::ToolCall {
                id,
                name: format!("{}.{}", str_of(item, "server"), str_of(item, "tool")),
                input: item.get("arguments").cloned().unwrap_or(Value::Null),
            }),
            "web_search" => out.push(Event::ToolCall {
                id,
                name: "web_search".into(),
                input: serde_json::json!({ "query": str_of(item, "query") }),
            }),
            "error" => out.push(Event::Error {
                message: str_of(item, "message"),
                category: None,
            }),
            _ => {}
        }
    }
}

/// A command the agent ran: the call, the skill it read, and its result.
fn command(item: &Value, id: String, out: &mut Vec<Event>) {
    let command = str_of(item, "command");
    let skill = skill_read_by(&command);
    out.push(Event::ToolCall {
        id: id.clone(),
        name: "command_execution".into(),
        input: serde_json::json!({ "command": command }),
    });
    if let Some(name) = skill {
        out.push(Event::SkillInvoked { name, call: None });
    }
    command_result(item, id, out);
}

/// A finished command's result.
fn command_result(item: &Value, id: String, out: &mut Vec<Event>) {
    let exit = item.get("exit_code").and_then(Value::as_i64);
    out.push(Event::ToolResult {
        id,
        output: str_of(item, "aggregated_output"),
        is_error: exit.is_some_and(|c| c != 0) || str_of(item, "status") == "failed",
    });
}

#[cfg(test)]
mod started_reads {
    use super::reads_installed_skill;

    #[test]
    fn only_a_plain_read_of_the_installed_skill_is_taken_as_it_starts() {
        for c in [
            "cat .agents/skills/greeting/SKILL.md",
            "/bin/bash -lc 'cat ./.agents/skills/greeting/SKILL.md'",
            "bash -lc \"sed -n 1,200p .codex/skills/greeting/SKILL.md\"",
        ] {
            assert!(reads_installed_skill(c), "{c}");
        }
        for c in [
            "cat /elsewhere/.agents/skills/greeting/SKILL.md",
            "cat skills/greeting/SKILL.md",
            "echo .agents/skills/greeting/SKILL.md",
            "cat .agents/skills/greeting/SKILL.md; rm -rf .agents",
            "cat .agents/skills/a/b/SKILL.md",
        ] {
            assert!(!reads_installed_skill(c), "{c}");
        }
    }
}

impl StreamParser for CodexParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "thread.started" => {
                self.thread_id = Some(str_of(&v, "thread_id"));
                out.push(Event::SessionStarted {
                    session_id: str_of(&v, "thread_id"),
                    model: None,
                    tools: Vec::new(),
                    skills: Vec::new(),
                });
            }
            "turn.started" => self.turns += 1,
            "turn.completed" => self.usage(&v),
            "turn.failed" => {
                let message = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("the turn failed")
                    .to_string();
                self.failed(message, true, &mut out);
            }
            "error" => self.failed(str_of(&v, "message"), false, &mut out),
            "item.completed" => {
                let item = v.get("item").cloned().unwrap_or(Value::Null);
                self.item(&item, &mut out);
            }
            "item.started" => self.started(v.get("item").unwrap_or(&Value::Null), &mut out),
            _ => {}
        }
        out
    }

    /// Codex reports a hook's block only in its log: `… error=Command blocked by PreToolUse
    /// hook: <reason>. Command: <command>`.
    fn after_exit(&mut self, exit: &Exited) -> Vec<Event> {
        exit.stderr_tail
            .lines()
            .filter_map(|l| {
                let (_, rest) = l.split_once(" blocked by ")?;
                let (event, reason) = rest.split_once(" hook: ")?;
                (!event.contains(' ')).then(|| Event::HookRan {
                    event: event.to_string(),
                    exit_code: None,
                    outcome: format!("blocked: {}", reason.trim()),
                })
            })
            .collect()
    }

    fn finish(&mut self, exit: &Exited) -> TurnSummary {
        let error = if exit.timed_out {
            Some(AgentError {
                category: ErrorCategory::Timeout,
                message: "stopped by the timeout".into(),
                kind: None,
            })
        } else if let Some(m) = &self.failure {
            Some(AgentError {
                category: classify(m),
                message: m.clone(),
                kind: None,
            })
        } else if exit.code != Some(0) {
            Some(AgentError {
                category: ErrorCategory::Crash,
                message: format!(
                    "codex exited with {}: {}",
                    exit.code
                        .map_or("a signal".to_string(), |c| format!("code {c}")),
                    exit.stderr_tail.trim()
                ),
                kind: None,
            })
        } else {
            None
        };
        TurnSummary {
            session_id: self.thread_id.clone(),
            model: None,
            final_message: self.last_message.clone(),
            error,
            num_turns: Some(self.turns),
            cost_usd: None,
            cost_note: None,
            usage: self.usage,
            duration_ms: Some(exit.duration.as_millis() as u64),
            permission_denials: Vec::new(),
            agent: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_classified_from_codex_wording() {
        // What codex 0.169 prints for HTTP 500, 429 and 401.
        assert_eq!(
            classify("We’re currently experiencing high demand, which may cause temporary errors."),
            ErrorCategory::Server
        );
        assert_eq!(
            classify("exceeded retry limit, last status: 429 Too Many Requests"),
            ErrorCategory::RateLimit
        );
        assert_eq!(
            classify("unexpected status 401 Unauthorized: nope"),
            ErrorCategory::Auth
        );
    }

    #[test]
    fn skill_reads_are_seen_in_commands() {
        assert_eq!(
            skill_read_by("cat .codex/skills/greeting/SKILL.md").as_deref(),
            Some("greeting")
        );
        assert_eq!(
            skill_read_by("sed -n 1,80p '/w/.agents/skills/brief/SKILL.md'").as_deref(),
            Some("brief")
        );
        assert_eq!(skill_read_by("cat README.md"), None);
    }
}
