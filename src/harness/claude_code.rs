//! The `claude-code` harness: `claude -p <prompt> --output-format stream-json --verbose`.
//!
//! Claude Code's stream emits a `system/init` event, one `assistant` event per content block
//! (text, tool_use, thinking), `user` events carrying tool results, and a closing `result`
//! event. API errors arrive as a `result` with `is_error: true` and `api_error_status`.

use serde_json::Value;

use super::{CommandLine, Event, Harness, HarnessSettings, Invocation, StreamParser};
use crate::process::Exited;
use crate::{
    host::{HostEnv, Unavailable},
    record::agent::{AgentError, ErrorCategory, TurnSummary, Usage},
};

pub const DEFAULT_PERMISSION_MODE: &str = "bypassPermissions";
/// Variables that carry a Claude login.
pub const AUTH_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
];

/// Where `claude` keeps a login, below HOME.
pub const LOGIN_FILE: &str = ".claude/.credentials.json";

pub struct ClaudeCode {
    program: String,
    permission_mode: String,
}

impl ClaudeCode {
    pub fn new(settings: &HarnessSettings) -> Self {
        ClaudeCode {
            program: settings
                .claude_bin
                .clone()
                .unwrap_or_else(|| "claude".into()),
            permission_mode: settings
                .permission_mode
                .clone()
                .unwrap_or_else(|| DEFAULT_PERMISSION_MODE.into()),
        }
    }
}

impl Harness for ClaudeCode {
    fn name(&self) -> &str {
        "claude-code"
    }

    fn preflight(&self, env: &HostEnv) -> Result<(), Unavailable> {
        if env.which(&self.program).is_none() {
            return Err(Unavailable {
                message: format!("the Claude Code CLI (`{}`) is not installed", self.program),
                fix: "npm install -g @anthropic-ai/claude-code".into(),
            });
        }
        if !env.has_login(AUTH_VARS, &[LOGIN_FILE]) {
            return Err(Unavailable {
                message: "Claude Code has no login: no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN, and no ~/.claude/.credentials.json".into(),
                fix: "set ANTHROPIC_API_KEY, or run `claude` once and log in".into(),
            });
        }
        Ok(())
    }

    fn loads_plugins(&self) -> bool {
        true
    }

    fn command(&self, inv: &Invocation<'_>) -> Result<CommandLine, String> {
        let mut args = vec![
            "-p".to_string(),
            inv.prompt.to_string(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            // Hooks that ran, for `hook:` targets and `agent-blocked`.
            "--include-hook-events".into(),
            "--permission-mode".into(),
            self.permission_mode.clone(),
        ];
        if let Some(agent) = inv.agent {
            args.extend(["--agent".into(), agent.to_string()]);
        }
        if let Some(m) = inv.model {
            args.extend(["--model".into(), m.to_string()]);
        }
        if let Some(id) = inv.resume {
            args.extend(["--resume".into(), id.to_string()]);
        }
        args.extend(limit_args(inv));
        let mut env = vec![
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ),
            ("DISABLE_AUTOUPDATER".into(), "1".into()),
        ];
        // Claude Code refuses to bypass permissions as root unless told it is sandboxed; the
        // workspace is assay's sandbox.
        if crate::host::running_as_root() && self.permission_mode == DEFAULT_PERMISSION_MODE {
            env.push(("IS_SANDBOX".into(), "1".into()));
        }
        if inv.sync_tasks {
            env.push(("CLAUDE_CODE_DISABLE_BACKGROUND_TASKS".into(), "1".into()));
        }
        Ok(CommandLine {
            program: self.program.clone(),
            args,
            env,
            stdin: None,
            shows: Vec::new(),
        })
    }

    /// Claude Code's own retries of a failing model API bounded ([`MAX_RETRIES`]), unless the
    /// user passed `CLAUDE_CODE_MAX_RETRIES` of their own.
    fn prepare(
        &self,
        _home: &std::path::Path,
        env: &mut Vec<(String, String)>,
    ) -> std::io::Result<()> {
        cap_retries(env);
        Ok(())
    }

    /// Anthropic's key variables, `ANTHROPIC_BASE_URL` and `~/.claude/.credentials.json`.
    fn login(&self) -> crate::host::Login {
        crate::host::Login::of(AUTH_VARS, &["ANTHROPIC_BASE_URL"], &[LOGIN_FILE])
    }

    /// `ANTHROPIC_BASE_URL`, else Anthropic's API.
    fn endpoints(&self, env: &[(String, String)]) -> Vec<String> {
        let mut e = crate::sandbox::endpoint::from_env(env);
        if !env
            .iter()
            .any(|(k, v)| k == "ANTHROPIC_BASE_URL" && !v.is_empty())
        {
            e.push("https://api.anthropic.com".into());
        }
        e
    }

    fn resume_recorded(
        &self,
        history: &std::path::Path,
        home: &std::path::Path,
        cwd: &std::path::Path,
    ) -> Result<String, String> {
        super::claude_code_history::stage(history, home, cwd)
    }

    fn version_command(&self) -> Option<super::VersionCommand> {
        Some(super::VersionCommand::dashed(&self.program))
    }

    fn parser(&self, inv: &Invocation<'_>) -> Box<dyn StreamParser> {
        Box::new(ClaudeParser {
            agent: inv.agent.map(str::to_string),
            allow_hang_heuristic: inv.allow_hang_heuristic,
            sync_tasks: inv.sync_tasks,
            ..ClaudeParser::default()
        })
    }
}

/// Parses Claude Code's `stream-json` output.
#[derive(Default)]
pub struct ClaudeParser {
    /// The agent the session was asked to run as (`--agent`), until the init event confirms it.
    agent: Option<String>,
    allow_hang_heuristic: bool,
    /// Background tasks were forced to run synchronously, so none is left un-awaited.
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

impl ClaudeParser {
    pub fn new(allow_hang_heuristic: bool) -> Self {
        ClaudeParser {
            allow_hang_heuristic,
            ..ClaudeParser::default()
        }
    }
}

/// The skill a tool call uses: a `Skill` call names it; a Read of `…/skills/<name>/SKILL.md`
/// loads it.
/// Tools an eval grants whenever a case lists them: reading, searching, skills, sub-agents,
/// questions, task and todo lists (Claude Code's plugin evals).
pub const READ_ONLY_TOOLS: &[&str] = &[
    "Read",
    "Glob",
    "Grep",
    "NotebookRead",
    "Skill",
    "AskUserQuestion",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "TaskStop",
    "Agent",
    "TodoWrite",
];

/// Tools kept from a gated case unless granted: those that write, run or reach the network,
/// and those never available in an eval.
pub const GATED_TOOLS: &[&str] = &[
    "Bash",
    "PowerShell",
    "Write",
    "Edit",
    "NotebookEdit",
    "WebFetch",
    "WebSearch",
    "Monitor",
    "EnterWorktree",
    "ExitWorktree",
    "Workflow",
];

/// The tools kept from a case: its `disallowed_tools`, and for a gated case those the run
/// keeps from it (`--disallow-tools`) and the gated tools neither granted by the run
/// (`--allow-tools`, every case) nor listed by the case where the run grants them.
pub fn kept_tools(l: &crate::suite::AgentLimits, grants: &crate::suite::ToolGrants) -> Vec<String> {
    let name_of = |a: &String| a.split('(').next().unwrap_or(a).to_string();
    let operator = |t: &str| grants.allow.iter().any(|g| name_of(g) == t);
    // A case's own entry grants a read-only tool, or one the run grants; the run's grants
    // reach every case.
    let granted = |t: &str| {
        operator(t)
            || l.allowed_tools
                .iter()
                .any(|a| name_of(a) == t && (!l.gated || READ_ONLY_TOOLS.contains(&t)))
    };
    let mut kept: Vec<String> = l.disallowed_tools.clone();
    if l.gated {
        for d in &grants.deny {
            if !kept.contains(d) {
                kept.push(d.clone());
            }
        }
        kept.extend(
            GATED_TOOLS
                .iter()
                .filter(|t| !granted(t))
                .map(|t| t.to_string()),
        );
    }
    kept
}

/// The flags for a case's limits: its turns, the tools kept from it, the plugins to load,
/// the system prompt's addition.
fn limit_args(inv: &Invocation<'_>) -> Vec<String> {
    let l = inv.limits;
    let mut args = Vec::new();
    if let Some(n) = l.max_turns {
        args.extend(["--max-turns".into(), n.to_string()]);
    }
    for dir in &inv.plugin_dirs {
        args.extend(["--plugin-dir".into(), dir.to_string_lossy().into_owned()]);
    }
    let kept = kept_tools(l, inv.grants);
    if !kept.is_empty() {
        args.push(format!("--disallowed-tools={}", kept.join(",")));
    }
    if let Some(p) = &l.append_system_prompt {
        args.push(format!("--append-system-prompt={p}"));
    }
    args
}

pub fn skill_of_tool_call(name: &str, input: &Value) -> Option<String> {
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

/// A string field of `v`, empty when absent.
fn str_of(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

impl ClaudeParser {
    /// A `system` event: the session's start, a sub-agent's, a retry, a hook.
    fn system(&mut self, v: &Value, out: &mut Vec<Event>) {
        match v.get("subtype").and_then(Value::as_str) {
            Some("init") => self.init(v, out),
            // A sub-agent started through the `Agent` tool.
            Some("task_started") => {
                let name = str_of(v, "subagent_type");
                if !name.is_empty() {
                    out.push(Event::AgentStarted { name });
                }
            }
            Some("api_retry") => out.push(Event::Retrying {
                attempt: v.get("attempt").and_then(Value::as_u64).unwrap_or(0),
                max_retries: v.get("max_retries").and_then(Value::as_u64).unwrap_or(0),
                status: v.get("error_status").and_then(Value::as_u64),
            }),
            Some("hook_response") => out.push(Event::HookRan {
                event: str_of(v, "hook_event"),
                exit_code: v.get("exit_code").and_then(Value::as_i64),
                outcome: str_of(v, "outcome"),
            }),
            _ => {}
        }
    }

    /// The session started: its id, model, tools and skills, and the agent it runs as.
    fn init(&mut self, v: &Value, out: &mut Vec<Event>) {
        let list = |k: &str| -> Vec<String> {
            v.get(k)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        self.session_id = v
            .get("session_id")
            .and_then(Value::as_str)
            .map(String::from);
        self.model = v.get("model").and_then(Value::as_str).map(String::from);
        out.push(Event::SessionStarted {
            session_id: self.session_id.clone().unwrap_or_default(),
            model: self.model.clone(),
            tools: list("tools"),
            skills: list("skills"),
        });
        // `--agent <name>`: the session runs as that agent when Claude Code found it.
        if let Some(name) = self.agent.take()
            && list("agents").contains(&name)
        {
            out.push(Event::AgentStarted { name });
        }
    }

    /// An assistant message: its text, its thinking, its tool calls.
    fn assistant(&mut self, v: &Value, out: &mut Vec<Event>) {
        self.assistant_messages += 1;
        let blocks = v.pointer("/message/content").and_then(Value::as_array);
        for b in blocks.into_iter().flatten() {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = str_of(b, "text");
                    self.last_text = Some(text.clone());
                    out.push(Event::Message { text });
                }
                Some("thinking") => out.push(Event::Reasoning {
                    text: str_of(b, "thinking"),
                }),
                Some("tool_use") => self.tool_use(b, out),
                _ => {}
            }
        }
    }

    /// A tool call, the skill it uses, and whether it starts or awaits background work.
    fn tool_use(&mut self, b: &Value, out: &mut Vec<Event>) {
        let name = str_of(b, "name");
        let input = b.get("input").cloned().unwrap_or(Value::Null);
        let id = str_of(b, "id");
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
            out.push(Event::SkillInvoked { name, call: None });
        }
    }

    /// The turn's result: an error when it is one, and the session id if not known yet.
    fn result(&mut self, v: Value, out: &mut Vec<Event>) {
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
}

/// A user message's tool results.
fn tool_results(v: &Value, out: &mut Vec<Event>) {
    let blocks = v.pointer("/message/content").and_then(Value::as_array);
    for b in blocks.into_iter().flatten() {
        if b.get("type").and_then(Value::as_str) == Some("tool_result") {
            out.push(Event::ToolResult {
                id: str_of(b, "tool_use_id"),
                output: text_of(b.get("content").unwrap_or(&Value::Null)),
                is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
            });
        }
    }
}

impl StreamParser for ClaudeParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        match v.get("type").and_then(Value::as_str) {
            Some("system") => self.system(&v, &mut out),
            Some("assistant") => self.assistant(&v, &mut out),
            Some("user") => tool_results(&v, &mut out),
            Some("result") => self.result(v, &mut out),
            _ => {}
        }
        out
    }

    fn finish(&mut self, exit: &Exited) -> TurnSummary {
        let mut s = TurnSummary {
            session_id: self.session_id.clone(),
            model: self.model.clone(),
            final_message: self.last_text.clone(),
            duration_ms: Some(exit.duration.as_millis() as u64),
            ..TurnSummary::default()
        };
        let Some(r) = &self.result else {
            s.error = Some(AgentError {
                category: if exit.timed_out {
                    ErrorCategory::Timeout
                } else {
                    ErrorCategory::Crash
                },
                message: if exit.timed_out {
                    "stopped by the timeout before Claude Code finished".into()
                } else {
                    format!(
                        "Claude Code ended without a result (exit {}): {}",
                        exit.code
                            .map(|c| c.to_string())
                            .unwrap_or_else(|| "by signal".into()),
                        exit.stderr_tail.trim()
                    )
                },
                kind: None,
            });
            return s;
        };
        if let Some(text) = r.get("result").and_then(Value::as_str) {
            s.final_message = Some(text.to_string());
        }
        s.num_turns = r.get("num_turns").and_then(Value::as_u64);
        s.cost_usd = r.get("total_cost_usd").and_then(Value::as_f64);
        s.duration_ms = r
            .get("duration_ms")
            .and_then(Value::as_u64)
            .or(s.duration_ms);
        s.permission_denials = r
            .get("permission_denials")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(u) = r.get("usage") {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            s.usage = Usage {
                input_tokens: n("input_tokens"),
                output_tokens: n("output_tokens"),
                cache_read_tokens: n("cache_read_input_tokens"),
                cache_write_tokens: n("cache_creation_input_tokens"),
            };
        }
        if r.get("is_error").and_then(Value::as_bool) == Some(true) {
            s.error = Some(AgentError {
                category: classify(r),
                message: text_of(r.get("result").unwrap_or(&Value::Null)),
                kind: None,
            });
        } else if exit.timed_out {
            s.error = Some(AgentError {
                category: ErrorCategory::Timeout,
                message: "stopped by the timeout".into(),
                kind: None,
            });
        } else if !self.background.is_empty() && !self.awaited && !self.sync_tasks {
            s.error = Some(AgentError {
                category: ErrorCategory::BackgroundTasks,
                message: format!(
                    "{} background task(s) were launched and never awaited; set sync_tasks to evaluate them",
                    self.background.len()
                ),
                kind: None,
            });
        } else if self.allow_hang_heuristic && self.looks_interactive(&s) {
            s.error = Some(AgentError {
                category: ErrorCategory::InteractiveHang,
                message: "the agent stopped after one turn to ask the user something".into(),
                kind: None,
            });
        }
        s
    }
}

impl ClaudeParser {
    /// One turn that ends in a question, or an AskUserQuestion call: the agent is waiting.
    fn looks_interactive(&self, s: &TurnSummary) -> bool {
        if self.tool_names.iter().any(|n| n == "AskUserQuestion") {
            return true;
        }
        let one_turn = s.num_turns.unwrap_or(self.assistant_messages) <= 1;
        one_turn
            && s.final_message
                .as_deref()
                .is_some_and(|m| m.trim_end().ends_with('?'))
    }
}

/// How many times Claude Code retries a failing model API call under assay, unless
/// `CLAUDE_CODE_MAX_RETRIES` is passed (its own default, 10, takes three minutes of backoff
/// before an outage is said): an outage is an error of the case-run within seconds.
pub const MAX_RETRIES: &str = "3";

/// Sets `CLAUDE_CODE_MAX_RETRIES` to [`MAX_RETRIES`] where the environment has none (Claude Code
/// and the Claude Agent SDK under Claude's ACP adapter read it).
pub fn cap_retries(env: &mut Vec<(String, String)>) {
    if !env.iter().any(|(k, _)| k == "CLAUDE_CODE_MAX_RETRIES") {
        env.push(("CLAUDE_CODE_MAX_RETRIES".into(), MAX_RETRIES.into()));
    }
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
        _ if super::unreachable(&text) => ErrorCategory::Network,
        _ if text.contains("overloaded") || text.contains("connection") => ErrorCategory::Server,
        _ => ErrorCategory::Agent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn hooks_and_sub_agents_become_events() {
        let mut p = ClaudeParser {
            agent: Some("rev".into()),
            ..ClaudeParser::default()
        };
        let init =
            r#"{"type":"system","subtype":"init","session_id":"s","agents":["claude","rev"]}"#;
        assert!(
            p.line(init)
                .contains(&Event::AgentStarted { name: "rev".into() })
        );
        let mut unknown = ClaudeParser {
            agent: Some("ghost".into()),
            ..ClaudeParser::default()
        };
        assert!(
            !unknown
                .line(init)
                .iter()
                .any(|e| matches!(e, Event::AgentStarted { .. }))
        );
        assert_eq!(
            p.line(r#"{"type":"system","subtype":"task_started","subagent_type":"fmt"}"#),
            vec![Event::AgentStarted { name: "fmt".into() }]
        );
        assert_eq!(
            p.line(r#"{"type":"system","subtype":"hook_response","hook_event":"PreToolUse","exit_code":2,"outcome":"error"}"#),
            vec![Event::HookRan {
                event: "PreToolUse".into(),
                exit_code: Some(2),
                outcome: "error".into()
            }]
        );
    }

    fn exited(code: i32) -> Exited {
        Exited {
            code: Some(code),
            signal: None,
            timed_out: false,
            interrupted: false,
            duration: Duration::from_millis(5),
            stdout_bytes: 0,
            truncated: false,
            stderr_tail: String::new(),
            started: None,
            stopped_by: None,
            decided: false,
        }
    }

    #[test]
    fn skills_are_recognised_from_skill_calls_and_reads() {
        assert_eq!(
            skill_of_tool_call("Skill", &serde_json::json!({"skill": "brief"})).as_deref(),
            Some("brief")
        );
        assert_eq!(
            skill_of_tool_call(
                "Read",
                &serde_json::json!({"file_path": "/w/.claude/skills/brief/SKILL.md"})
            )
            .as_deref(),
            Some("brief")
        );
        assert_eq!(
            skill_of_tool_call("Read", &serde_json::json!({"file_path": "/w/README.md"})),
            None
        );
    }

    #[test]
    fn api_errors_are_classified() {
        let mut p = ClaudeParser::new(true);
        p.line(r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: 429 rate limited"}"#);
        assert_eq!(
            p.finish(&exited(1)).error.unwrap().category,
            ErrorCategory::RateLimit
        );
        let mut p = ClaudeParser::new(true);
        p.line(r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"Invalid API key"}"#);
        assert_eq!(
            p.finish(&exited(1)).error.unwrap().category,
            ErrorCategory::Auth
        );
        let mut p = ClaudeParser::new(true);
        assert_eq!(
            p.finish(&exited(1)).error.unwrap().category,
            ErrorCategory::Crash
        );
    }

    #[test]
    fn a_question_after_one_turn_is_an_interactive_hang_unless_allowed() {
        let lines = [
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Which file should I use?"}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"Which file should I use?"}"#,
        ];
        let mut p = ClaudeParser::new(true);
        lines.iter().for_each(|l| drop(p.line(l)));
        assert_eq!(
            p.finish(&exited(0)).error.unwrap().category,
            ErrorCategory::InteractiveHang
        );
        let mut p = ClaudeParser::new(false);
        lines.iter().for_each(|l| drop(p.line(l)));
        assert!(p.finish(&exited(0)).error.is_none());
    }
}
