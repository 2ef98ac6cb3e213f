//! The claude-code harness adapter as a component: `claude -p <prompt> --output-format
//! stream-json --verbose`, translated line by line into assay's transcript events and a turn
//! summary, exactly as assay's built-in `claude-code` harness does (tests/harness_equivalence.rs
//! holds the two to identical output on recorded streams). It is offered as `claude-code-wasm`;
//! the built-in stays the default.
//!
//! Claude Code's stream emits a `system/init` event, one `assistant` event per content block
//! (text, tool_use, thinking), `user` events carrying tool results, and a closing `result`
//! event. API errors arrive as a `result` with `is_error: true` and `api_error_status`.

use assay_plugin::{
    CommandLine, ErrorCategory, Event, Exit, Harness, Invocation, Login, Parser, Plugin, Value,
    json,
};

const DEFAULT_PERMISSION_MODE: &str = "bypassPermissions";
/// Variables that carry a Claude login.
const AUTH_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
];

pub struct ClaudeCode;

fn setting<'a>(inv: &'a Invocation, name: &str) -> Option<&'a str> {
    inv.settings
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

impl Harness for ClaudeCode {
    fn name(&self) -> &str {
        "claude-code-wasm"
    }

    fn summary(&self) -> &str {
        "Claude Code in headless stream-json mode (the built-in adapter, as a component)"
    }

    fn program(&self) -> &str {
        "claude"
    }

    fn engines(&self) -> Vec<String> {
        vec!["claude-code".into()]
    }

    fn login(&self) -> Option<Login> {
        Some(Login {
            vars: AUTH_VARS.iter().map(|v| v.to_string()).collect(),
            files: vec![".claude/.credentials.json".into()],
            fix: "set ANTHROPIC_API_KEY, or run `claude` once and log in".into(),
        })
    }

    fn endpoints(&self) -> Vec<(String, String)> {
        vec![(
            "ANTHROPIC_BASE_URL".into(),
            "https://api.anthropic.com".into(),
        )]
    }

    fn command(&self, inv: &Invocation) -> Result<CommandLine, String> {
        let permission_mode = setting(inv, "permission-mode").unwrap_or(DEFAULT_PERMISSION_MODE);
        let mut args = vec![
            "-p".to_string(),
            inv.prompt.clone(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            // Hooks that ran, for `hook:` targets and `agent-blocked`.
            "--include-hook-events".into(),
            "--permission-mode".into(),
            permission_mode.to_string(),
        ];
        if let Some(agent) = &inv.agent {
            args.extend(["--agent".into(), agent.clone()]);
        }
        if let Some(m) = &inv.model {
            args.extend(["--model".into(), m.clone()]);
        }
        if let Some(id) = &inv.resume {
            args.extend(["--resume".into(), id.clone()]);
        }
        let mut env = vec![
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ),
            ("DISABLE_AUTOUPDATER".into(), "1".into()),
        ];
        // Claude Code refuses to bypass permissions as root unless told it is sandboxed; the
        // workspace is assay's sandbox.
        if inv.as_root && permission_mode == DEFAULT_PERMISSION_MODE {
            env.push(("IS_SANDBOX".into(), "1".into()));
        }
        if inv.sync_tasks {
            env.push(("CLAUDE_CODE_DISABLE_BACKGROUND_TASKS".into(), "1".into()));
        }
        Ok(CommandLine {
            program: "claude".into(),
            args,
            env,
            stdin: None,
        })
    }

    fn parser(&self, inv: &Invocation) -> Box<dyn Parser> {
        Box::new(Stream {
            agent: inv.agent.clone(),
            hang_heuristic: inv.hang_heuristic,
            sync_tasks: inv.sync_tasks,
            ..Stream::default()
        })
    }
}

/// One turn of Claude Code's `stream-json`.
#[derive(Default)]
pub struct Stream {
    /// The agent the session was asked to run as, until the init event confirms it.
    agent: Option<String>,
    hang_heuristic: bool,
    /// Background tasks were forced to run synchronously.
    sync_tasks: bool,
    session_id: Option<String>,
    model: Option<String>,
    last_text: Option<String>,
    result: Option<Value>,
    tool_names: Vec<String>,
    background: Vec<String>,
    awaited: bool,
    assistant_messages: u64,
}

/// The skill a tool call uses: a `Skill` call names it; a Read of `…/skills/<name>/SKILL.md`
/// loads it.
fn skill_of_tool_call(name: &str, input: &Value) -> Option<String> {
    match name {
        "Skill" => ["skill", "command", "name"]
            .iter()
            .find_map(|k| input.get(k).and_then(Value::as_str))
            .map(|s| s.trim_start_matches('/').to_string()),
        "Read" => {
            let path = input.get("file_path").and_then(Value::as_str)?;
            let mut parts = path.rsplit('/');
            (parts.next()? == "SKILL.md").then(|| parts.next().map(str::to_string))?
        }
        _ => None,
    }
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn str_at(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

fn list_at(v: &Value, k: &str) -> Vec<String> {
    v.get(k)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

impl Stream {
    fn assistant(&mut self, v: &Value, out: &mut Vec<Event>) {
        self.assistant_messages += 1;
        let blocks = v.pointer("/message/content").and_then(Value::as_array);
        for b in blocks.into_iter().flatten() {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = str_at(b, "text");
                    self.last_text = Some(text.clone());
                    out.push(Event::Message { text });
                }
                Some("thinking") => out.push(Event::Reasoning {
                    text: str_at(b, "thinking"),
                }),
                Some("tool_use") => {
                    let name = str_at(b, "name");
                    let input = b.get("input").cloned().unwrap_or(Value::Null);
                    let id = str_at(b, "id");
                    if input.get("run_in_background").and_then(Value::as_bool) == Some(true) {
                        self.background.push(id.clone());
                    }
                    if matches!(
                        name.as_str(),
                        "TaskOutput" | "BashOutput" | "TaskStop" | "KillShell"
                    ) {
                        self.awaited = true;
                    }
                    let skill = skill_of_tool_call(&name, &input);
                    self.tool_names.push(name.clone());
                    out.push(Event::ToolCall { id, name, input });
                    if let Some(name) = skill {
                        out.push(Event::SkillInvoked { name });
                    }
                }
                _ => {}
            }
        }
    }

    /// One turn that ends in a question, or an AskUserQuestion call: the agent is waiting.
    fn looks_interactive(&self, num_turns: Option<u64>, final_message: Option<&str>) -> bool {
        if self.tool_names.iter().any(|n| n == "AskUserQuestion") {
            return true;
        }
        num_turns.unwrap_or(self.assistant_messages) <= 1
            && final_message.is_some_and(|m| m.trim_end().ends_with('?'))
    }
}

impl Parser for Stream {
    fn feed(&mut self, line: &str) -> Vec<Value> {
        let Ok(v) = assay_plugin::serde_json::from_str::<Value>(line) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let subtype = v.get("subtype").and_then(Value::as_str);
        match v.get("type").and_then(Value::as_str) {
            Some("system") if subtype == Some("init") => {
                self.session_id = v
                    .get("session_id")
                    .and_then(Value::as_str)
                    .map(String::from);
                self.model = v.get("model").and_then(Value::as_str).map(String::from);
                out.push(Event::SessionStarted {
                    session_id: self.session_id.clone().unwrap_or_default(),
                    model: self.model.clone(),
                    tools: list_at(&v, "tools"),
                    skills: list_at(&v, "skills"),
                });
                // `--agent <name>`: the session runs as that agent when Claude Code found it.
                if let Some(name) = self.agent.take()
                    && list_at(&v, "agents").contains(&name)
                {
                    out.push(Event::AgentStarted { name });
                }
            }
            Some("system") if subtype == Some("task_started") => {
                let name = str_at(&v, "subagent_type");
                if !name.is_empty() {
                    out.push(Event::AgentStarted { name });
                }
            }
            Some("system") if subtype == Some("hook_response") => out.push(Event::HookRan {
                event: str_at(&v, "hook_event"),
                exit_code: v.get("exit_code").and_then(Value::as_i64),
                outcome: str_at(&v, "outcome"),
            }),
            Some("assistant") => self.assistant(&v, &mut out),
            Some("user") => {
                let blocks = v.pointer("/message/content").and_then(Value::as_array);
                for b in blocks.into_iter().flatten() {
                    if b.get("type").and_then(Value::as_str) == Some("tool_result") {
                        out.push(Event::ToolResult {
                            id: str_at(b, "tool_use_id"),
                            output: text_of(b.get("content").unwrap_or(&Value::Null)),
                            is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                        });
                    }
                }
            }
            Some("result") => {
                if v.get("is_error").and_then(Value::as_bool) == Some(true) {
                    out.push(Event::Error {
                        message: text_of(v.get("result").unwrap_or(&Value::Null)),
                        category: Some(classify(&v)),
                    });
                }
                if self.session_id.is_none() {
                    self.session_id = v
                        .get("session_id")
                        .and_then(Value::as_str)
                        .map(String::from);
                }
                self.result = Some(v);
            }
            _ => {}
        }
        out.into_iter().map(Value::from).collect()
    }

    fn finish(&mut self, exit: &Exit) -> Value {
        let Some(r) = &self.result else {
            let (category, message) = if exit.timed_out {
                (
                    ErrorCategory::Timeout,
                    "stopped by the timeout before Claude Code finished".to_string(),
                )
            } else {
                (
                    ErrorCategory::Crash,
                    format!(
                        "Claude Code ended without a result (exit {}): {}",
                        exit.code
                            .map(|c| c.to_string())
                            .unwrap_or_else(|| "by signal".into()),
                        exit.stderr_tail.trim()
                    ),
                )
            };
            return json!({
                "session_id": self.session_id,
                "model": self.model,
                "final_message": self.last_text,
                "duration_ms": exit.duration_ms,
                "error": {"category": category, "message": message},
            });
        };
        let final_message = r
            .get("result")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| self.last_text.clone());
        let num_turns = r.get("num_turns").and_then(Value::as_u64);
        let usage = r.get("usage").map(|u| {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            json!({
                "input_tokens": n("input_tokens"),
                "output_tokens": n("output_tokens"),
                "cache_read_tokens": n("cache_read_input_tokens"),
                "cache_write_tokens": n("cache_creation_input_tokens"),
            })
        });
        let error = if r.get("is_error").and_then(Value::as_bool) == Some(true) {
            Some((
                classify(r),
                text_of(r.get("result").unwrap_or(&Value::Null)),
            ))
        } else if exit.timed_out {
            Some((ErrorCategory::Timeout, "stopped by the timeout".to_string()))
        } else if !self.background.is_empty() && !self.awaited && !self.sync_tasks {
            Some((
                ErrorCategory::BackgroundTasks,
                format!(
                    "{} background task(s) were launched and never awaited; set sync_tasks to evaluate them",
                    self.background.len()
                ),
            ))
        } else if self.hang_heuristic && self.looks_interactive(num_turns, final_message.as_deref())
        {
            Some((
                ErrorCategory::InteractiveHang,
                "the agent stopped after one turn to ask the user something".to_string(),
            ))
        } else {
            None
        };
        let mut summary = json!({
            "session_id": self.session_id,
            "model": self.model,
            "final_message": final_message,
            "num_turns": num_turns,
            "cost_usd": r.get("total_cost_usd").and_then(Value::as_f64),
            "duration_ms": r.get("duration_ms").and_then(Value::as_u64).unwrap_or(exit.duration_ms),
            "error": error.map(|(category, message)| json!({"category": category, "message": message})),
            "permission_denials": r.get("permission_denials").and_then(Value::as_array).cloned().unwrap_or_default(),
        });
        if let Some(u) = usage {
            summary["usage"] = u;
        }
        summary
    }
}

/// Whether an agent's (lowercased) error text says its model API could not be reached.
fn unreachable(text: &str) -> bool {
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
        // A connection failed or closed before an answer (the OpenAI SDK's words and Node's).
        "connection error",
        "econnreset",
        "socket hang up",
        "cannot connect to api",
        "socket connection was closed",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// The error category of a failed `result` event.
fn classify(r: &Value) -> ErrorCategory {
    let status = r.get("api_error_status").and_then(Value::as_u64);
    let text = text_of(r.get("result").unwrap_or(&Value::Null)).to_ascii_lowercase();
    match status {
        Some(401 | 403) => ErrorCategory::Auth,
        Some(429) => ErrorCategory::RateLimit,
        Some(500..=599) => ErrorCategory::Server,
        _ if text.contains("invalid api key")
            || text.contains("authentication")
            || text.contains("/login") =>
        {
            ErrorCategory::Auth
        }
        _ if text.contains("rate limit") => ErrorCategory::RateLimit,
        _ if unreachable(&text) => ErrorCategory::Network,
        _ if text.contains("overloaded") || text.contains("connection") => ErrorCategory::Server,
        _ => ErrorCategory::Agent,
    }
}

fn plugin() -> Plugin {
    Plugin::new().harness(ClaudeCode)
}

assay_plugin::export!(plugin);
