//! One turn of an ACP agent, as the bridge prints it ([`super::bridge`]): the agent's own
//! JSON-RPC messages, each as `{"agent": …}`, and the bridge's, `{"bridge": …}`, turned
//! into the normalized events and the turn's summary.
//!
//! | ACP (`session/update`) | event |
//! |---|---|
//! | `agent_message_chunk` (joined until something else comes) | `message` |
//! | `agent_thought_chunk` (joined) | `reasoning` |
//! | `tool_call` | `tool_call` (name: the agent's tool name from `_meta`, else `kind`) |
//! | `tool_call_update` ending `completed` or `failed` | `tool_result` |
//! | a tool call loading a skill (each engine words it its own way) | `skill_invoked` |
//! | a tool call's `diff` content, once it has ended | `file_change` (`add`, `update`) |
//! | `plan` (each time the agent states or revises it) | `reasoning`: `Plan:` and each entry with its status |
//! | `usage_update` with a cost in USD | the turn's cost |
//! | the `session/prompt` answer's `usage` | the turn's tokens |
//!
//! Updates before the bridge says the session is ready (a loaded session's replayed
//! history) are not this turn's and are left out.

use std::collections::HashMap;

use serde_json::Value;

use crate::process::Exited;
use crate::{
    harness::{Event, StreamParser},
    record::agent::{AgentError, ErrorCategory, TurnSummary},
};

/// The longest tool output kept in a `tool_result` event, and tool input in a `tool_call`.
const MAX_TOOL_OUTPUT: usize = 64 << 10;
/// The longest message or reasoning kept (the agent's; the rest is cut).
const MAX_TEXT: usize = 1 << 20;
/// The most tool calls followed in one turn; later ones are left out.
const MAX_TOOLS: usize = 10_000;

#[derive(Default)]
pub struct AcpParser {
    /// The bridge said the session is ready: what comes after is this turn's.
    started: bool,
    /// The bridge said the turn stopped: nothing after it is this turn's.
    stopped: bool,
    session: Option<String>,
    /// The agent's name and version, as its `initialize` answer gave them.
    agent: Option<String>,
    text: String,
    thought: String,
    last_message: Option<String>,
    tools: HashMap<String, Tool>,
    /// Every call in the order first seen, to say at the turn's end those not yet running.
    held: Vec<String>,
    stop: Option<String>,
    failure: Option<String>,
    /// The model API's failure, said only as message text before an `end_turn` (see
    /// [`MODEL_FAILED`]).
    model_failed: Option<String>,
    /// The session's cost so far, as the agent last said it (a running total).
    cost: Option<f64>,
    /// Its cost when this turn began (after a loaded session's replay).
    cost_before: Option<f64>,
    /// Why a cost the agent claimed in this turn was not believed: the turn's is unknown.
    cost_refused: Option<String>,
    /// The tokens the agent said the turn took (the `session/prompt` answer's `usage`).
    usage: crate::record::agent::Usage,
}

/// What is known of one tool call so far.
#[derive(Default)]
struct Tool {
    name: String,
    title: String,
    input: Value,
    call_said: bool,
    skill_said: bool,
    result_said: bool,
}

/// The most file changes taken from one tool call's diffs.
const MAX_CHANGES: usize = 256;

impl StreamParser for AcpParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return Vec::new();
        };
        if let Some(what) = v.get("bridge").and_then(Value::as_str) {
            return self.bridge(what, &v);
        }
        match v.get("agent") {
            Some(msg) if self.started && !self.stopped => self.agent(msg),
            // A replay's running cost, for this turn's to be told from it.
            Some(msg) if !self.started => {
                self.track_cost(msg);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn after_exit(&mut self, _exit: &Exited) -> Vec<Event> {
        let mut out = self.flush();
        out.extend(self.say_held());
        out
    }

    fn finish(&mut self, exit: &Exited) -> TurnSummary {
        TurnSummary {
            session_id: self.session.clone(),
            final_message: self.last_message.clone(),
            error: self.error(exit),
            cost_usd: self
                .cost
                .filter(|_| self.cost_refused.is_none())
                .map(|c| (c - self.cost_before.unwrap_or(0.0)).max(0.0)),
            cost_note: self.cost_refused.clone(),
            duration_ms: Some(exit.duration.as_millis() as u64),
            usage: self.usage,
            agent: self.agent.clone(),
            ..TurnSummary::default()
        }
    }
}

impl AcpParser {
    fn bridge(&mut self, what: &str, v: &Value) -> Vec<Event> {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        match what {
            "session" => {
                self.started = true;
                self.cost_before = self.cost;
                self.cost_refused = None;
                self.session = text("session_id");
                self.agent = text("agent")
                    .map(|a| crate::text::shorten(&crate::text::printable(a.trim()), 200))
                    .filter(|a| !a.is_empty());
                vec![Event::SessionStarted {
                    session_id: self.session.clone().unwrap_or_default(),
                    model: None,
                    tools: Vec::new(),
                    skills: Vec::new(),
                }]
            }
            "stop" => {
                self.stop = text("stop_reason");
                self.stopped = true;
                let mut out = self.flush();
                out.extend(self.say_held());
                out
            }
            "error" => {
                self.failure = text("message");
                let mut out = self.flush();
                out.extend(self.say_held());
                out
            }
            _ => Vec::new(),
        }
    }

    fn agent(&mut self, msg: &Value) -> Vec<Event> {
        if let Some(usage) = msg
            .pointer("/result/usage")
            .filter(|_| msg.pointer("/result/stopReason").is_some())
        {
            self.usage = tokens(usage);
        }
        if msg.get("method").and_then(Value::as_str) != Some("session/update") {
            return Vec::new();
        }
        let Some(u) = msg.pointer("/params/update") else {
            return Vec::new();
        };
        // Another session's update is not this turn's.
        let sid = msg.pointer("/params/sessionId").and_then(Value::as_str);
        if sid.is_some() && sid != self.session.as_deref() {
            return Vec::new();
        }
        let chunk = || {
            u.pointer("/content/text")
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        match u.get("sessionUpdate").and_then(Value::as_str) {
            Some("agent_message_chunk") => {
                let out = flush_into(&mut self.thought, |t| Event::Reasoning { text: t });
                if MODEL_FAILED.iter().any(|p| chunk().starts_with(p)) {
                    self.model_failed = Some(crate::text::shorten(chunk(), 500));
                }
                push_bounded(&mut self.text, chunk());
                out
            }
            Some("agent_thought_chunk") => {
                let out = self.flush_message();
                push_bounded(&mut self.thought, chunk());
                out
            }
            Some("tool_call") | Some("tool_call_update") => {
                let mut out = self.flush();
                out.extend(self.tool(u));
                out
            }
            Some("usage_update") => {
                self.track_cost(msg);
                Vec::new()
            }
            Some("plan") => {
                let mut out = self.flush();
                out.extend(plan(u).map(|text| Event::Reasoning { text }));
                out
            }
            _ => Vec::new(),
        }
    }

    /// The session's running cost from a `usage_update` (in USD; ACP's `cost` is the total),
    /// when it is believable ([`crate::harness::believed_cost`]); a claim that is not makes
    /// the turn's cost unknown.
    fn track_cost(&mut self, msg: &Value) {
        let Some(u) = msg.pointer("/params/update") else {
            return;
        };
        if u.get("sessionUpdate").and_then(Value::as_str) == Some("usage_update")
            && u.pointer("/cost/currency").and_then(Value::as_str) == Some("USD")
            && let Some(amount) = u.pointer("/cost/amount").and_then(Value::as_f64)
        {
            match crate::harness::believed_cost(amount) {
                Ok(amount) => self.cost = Some(amount),
                Err(why) => self.cost_refused = Some(why),
            }
        }
    }

    /// A tool call or an update of one: the call once it runs (OpenCode, Qwen Code and
    /// Claude's adapter announce a pending call with `rawInput: {}`, or only its `cwd`, and give
    /// the arguments in a later update), a skill it loads, and its result once it has ended.
    fn tool(&mut self, u: &Value) -> Vec<Event> {
        let Some(id) = u.get("toolCallId").and_then(Value::as_str) else {
            return Vec::new();
        };
        let id = crate::text::shorten(&crate::text::printable(id), 200);
        let first = !self.tools.contains_key(&id);
        if first && self.tools.len() >= MAX_TOOLS {
            return Vec::new();
        }
        if first {
            self.held.push(id.clone());
        }
        let t = self.tools.entry(id.clone()).or_default();
        if let Some(name) = own_tool_name(u) {
            t.name = name;
        } else if first || t.name.is_empty() {
            t.name = first_name(u, first).unwrap_or_default();
        }
        if let Some(title) = u.get("title").and_then(Value::as_str) {
            t.title = title.to_string();
        }
        if let Some(input) = u.get("rawInput").filter(|i| !is_empty(i)) {
            t.input = bounded(input);
        }
        let status = u.get("status").and_then(Value::as_str);
        let ended = matches!(status, Some("completed") | Some("failed"));
        let result = ended.then(|| crate::text::cut_bytes(content_text(u), MAX_TOOL_OUTPUT));
        let running = ended || status == Some("in_progress");
        let mut out = match running || t.call_said {
            true => self.say_call(&id, result.as_deref()),
            false => Vec::new(),
        };
        let t = self.tools.entry(id.clone()).or_default();
        if let Some(output) = result.filter(|_| !t.result_said) {
            t.result_said = true;
            out.push(Event::ToolResult {
                id,
                output,
                is_error: status == Some("failed"),
            });
            if status == Some("completed") {
                out.extend(file_changes(u));
            }
        }
        out
    }

    /// A tool call, the first time it is said, and the skill it loads once that is known (by
    /// its name, title or input, or, for a failed load whose input never came, as its
    /// `result` names it).
    fn say_call(&mut self, id: &str, result: Option<&str>) -> Vec<Event> {
        let mut out = Vec::new();
        let Some(t) = self.tools.get_mut(id) else {
            return out;
        };
        if !t.call_said {
            t.call_said = true;
            out.push(Event::ToolCall {
                id: id.to_string(),
                name: t.name.clone(),
                input: t.input.clone(),
            });
        }
        if !t.skill_said
            && let Some(skill) = skill_loaded(&t.name, &t.title, &t.input)
                .or_else(|| skill_not_found(&t.name, result?))
        {
            t.skill_said = true;
            out.push(Event::SkillInvoked {
                name: skill,
                call: Some(id.to_string()),
            });
        }
        out
    }

    /// The calls still waiting for their input, the turn over: said as they are.
    fn say_held(&mut self) -> Vec<Event> {
        let held = std::mem::take(&mut self.held);
        held.iter().flat_map(|id| self.say_call(id, None)).collect()
    }

    fn flush_message(&mut self) -> Vec<Event> {
        let text = std::mem::take(&mut self.text);
        if text.is_empty() {
            return Vec::new();
        }
        self.last_message = Some(text.clone());
        vec![Event::Message { text }]
    }

    /// The message and reasoning gathered so far, as events.
    fn flush(&mut self) -> Vec<Event> {
        let mut out = flush_into(&mut self.thought, |t| Event::Reasoning { text: t });
        out.extend(self.flush_message());
        out
    }

    /// Why the turn failed: the bridge's error, a stop short of the turn's end, the timeout,
    /// or the agent gone before it answered.
    fn error(&self, exit: &Exited) -> Option<AgentError> {
        let error = |category, message: String| {
            Some(AgentError {
                category,
                message,
                kind: None,
            })
        };
        if exit.timed_out {
            return error(ErrorCategory::Timeout, "stopped by the timeout".into());
        }
        if let Some(why) = &self.failure {
            // The agent gone mid-session: a crash, said with the end of its stderr.
            if why.contains("transport closed") || why.contains("transport_closed") {
                return error(
                    ErrorCategory::Crash,
                    format!(
                        "the ACP agent ended before finishing its turn: {}",
                        crate::text::shorten(exit.stderr_tail.trim(), 500)
                    ),
                );
            }
            let why = crate::text::shorten(&crate::text::printable(why), 500);
            return error(classify(&why), format!("the ACP agent failed: {why}"));
        }
        match self.stop.as_deref() {
            Some("end_turn") => self.model_failed.as_ref().and_then(|said| {
                let said = crate::text::printable(said);
                error(
                    classify(&said),
                    format!("the agent's model API failed: {said}"),
                )
            }),
            Some("cancelled") => error(
                ErrorCategory::Agent,
                "the agent cancelled its turn before assay's timeout".into(),
            ),
            Some(other) => error(
                ErrorCategory::Agent,
                format!("the agent stopped before the end of its turn: {other}"),
            ),
            None => error(
                ErrorCategory::Crash,
                format!(
                    "the ACP agent ended without finishing its turn ({}): {}",
                    exit.code
                        .map_or("killed by a signal".into(), |c| format!("exit {c}")),
                    crate::text::shorten(exit.stderr_tail.trim(), 500)
                ),
            ),
        }
    }
}

/// The tokens of a `session/prompt` answer's `usage` (ACP's `inputTokens`, `outputTokens`,
/// `cachedReadTokens`, `cachedWriteTokens`).
fn tokens(u: &Value) -> crate::record::agent::Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    crate::record::agent::Usage {
        input_tokens: n("inputTokens"),
        output_tokens: n("outputTokens"),
        cache_read_tokens: n("cachedReadTokens"),
        cache_write_tokens: n("cachedWriteTokens"),
    }
}

/// A plan as the agent stated it: `Plan:` and a line per entry, `- [status] what`.
fn plan(u: &Value) -> Option<String> {
    let entries = u.get("entries")?.as_array()?;
    let mut text = String::from("Plan:");
    for e in entries {
        let what = e.get("content").and_then(Value::as_str).unwrap_or_default();
        let status = e.get("status").and_then(Value::as_str).unwrap_or("pending");
        text.push_str(&format!(
            "\n- [{}] {}",
            crate::text::shorten(&crate::text::printable(status), 40),
            crate::text::printable(what)
        ));
        if text.len() > MAX_TEXT {
            return Some(crate::text::cut_bytes(text, MAX_TEXT));
        }
    }
    Some(text)
}

/// The files a completed tool call's `diff` content changed: added (no old text) or updated.
fn file_changes(u: &Value) -> Vec<Event> {
    let Some(items) = u.get("content").and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("diff"))
        .filter_map(|c| {
            let path = c.get("path").and_then(Value::as_str)?;
            let kind = match c.get("oldText") {
                None | Some(Value::Null) => "add",
                Some(_) => "update",
            };
            Some(Event::FileChange {
                path: crate::text::shorten(&crate::text::printable(path), 4096),
                kind: kind.into(),
            })
        })
        .take(MAX_CHANGES)
        .collect()
}

/// Appends the agent's text, up to [`MAX_TEXT`].
fn push_bounded(buf: &mut String, text: &str) {
    if buf.len() < MAX_TEXT {
        buf.push_str(text);
        if buf.len() > MAX_TEXT {
            *buf = crate::text::cut_bytes(std::mem::take(buf), MAX_TEXT);
        }
    }
}

/// A tool's input as kept: itself, or, past [`MAX_TOOL_OUTPUT`] as JSON, its text cut.
fn bounded(input: &Value) -> Value {
    let text = input.to_string();
    match text.len() > MAX_TOOL_OUTPUT {
        true => serde_json::json!({"cut": crate::text::cut_bytes(text, MAX_TOOL_OUTPUT)}),
        false => input.clone(),
    }
}

fn flush_into(buf: &mut String, make: impl Fn(String) -> Event) -> Vec<Event> {
    match buf.is_empty() {
        true => Vec::new(),
        false => vec![make(std::mem::take(buf))],
    }
}

/// The agent's own name for a tool, where it says it (Claude's adapter and Qwen Code put it
/// in `_meta`).
fn own_tool_name(u: &Value) -> Option<String> {
    ["/_meta/claudeCode/toolName", "/_meta/toolName", "/name"]
        .iter()
        .find_map(|p| u.pointer(p).and_then(Value::as_str))
        .map(|s| crate::text::shorten(&crate::text::printable(s), 200))
}

/// A tool's name where the agent gives none of its own: the title of its first sight when
/// that is one word (OpenCode announces a call titled `bash`, `skill`, `task`, and only later
/// retitles it with the command or the skill), else ACP's kind (`read`, `edit`, `execute`, …).
fn first_name(u: &Value, first: bool) -> Option<String> {
    let title = u.get("title").and_then(Value::as_str).filter(|t| {
        first
            && (1..=64).contains(&t.len())
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    });
    title
        .or_else(|| u.get("kind").and_then(Value::as_str))
        .map(|s| crate::text::shorten(&crate::text::printable(s), 200))
}

/// The skill a `session/update` of a tool call (announced or updated) loads, read from that
/// one message alone (the ACP client's stop, [`super::bridge`]): the tool's own name, else its
/// title where that is one word, else its kind.
pub(super) fn skill_called(v: &Value) -> Option<String> {
    if v.get("method").and_then(Value::as_str) != Some("session/update") {
        return None;
    }
    let u = v.pointer("/params/update")?;
    let kind = u.get("sessionUpdate").and_then(Value::as_str)?;
    if kind != "tool_call" && kind != "tool_call_update" {
        return None;
    }
    let name = own_tool_name(u)
        .or_else(|| first_name(u, true))
        .unwrap_or_else(|| "other".into());
    let title = u.get("title").and_then(Value::as_str).unwrap_or("");
    skill_loaded(&name, title, u.get("rawInput").unwrap_or(&Value::Null))
}

/// The skill a tool call loads, as each engine says it: a tool named `skill` with the skill
/// in its input (`skill` or `name`), or a tool of no name but the kind `other` whose title
/// begins `Using skill: x` (Copilot), `Loaded skill: x` (OpenCode) or `Load skill: x`
/// (Claude's adapter). A title is the agent's to word (a shell call's is its command line, a
/// sub-task's its description): anywhere else it is no skill load.
fn skill_loaded(name: &str, title: &str, input: &Value) -> Option<String> {
    let by_name = name.eq_ignore_ascii_case("skill").then(|| {
        ["skill", "name"]
            .iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
    });
    let by_title = || {
        let lower = title.to_ascii_lowercase();
        ["using skill:", "loaded skill:", "load skill:", "use skill:"]
            .iter()
            .find(|p| name == "other" && lower.starts_with(**p))
            .map(|p| &title[p.len()..])
    };
    let found = by_name.flatten().or_else(by_title)?;
    let skill = found
        .trim()
        .trim_matches(|c| c == '"' || c == '\'' || c == '`');
    (!skill.is_empty()).then(|| crate::text::shorten(&crate::text::printable(skill), 200))
}

/// The skill a failed call of the skill tool asked for, as its failure names it, where its
/// input never said (Qwen Code: `Skill "x" not found. Available skills: …`).
fn skill_not_found(name: &str, result: &str) -> Option<String> {
    if !name.eq_ignore_ascii_case("skill") {
        return None;
    }
    let rest = result.trim_start().strip_prefix("Skill \"")?;
    let (skill, after) = rest.split_once('"')?;
    (after.trim_start().starts_with("not found") && !skill.trim().is_empty())
        .then(|| crate::text::shorten(&crate::text::printable(skill.trim()), 200))
}

/// Whether a tool input says nothing: absent, `null` or `{}`.
fn is_empty(input: &Value) -> bool {
    input.is_null() || input.as_object().is_some_and(|o| o.is_empty())
}

/// The text of a tool call's content (text blocks; a diff as its path).
fn content_text(u: &Value) -> String {
    let Some(items) = u.get("content").and_then(Value::as_array) else {
        return match u.get("rawOutput") {
            Some(Value::String(s)) => s.clone(),
            Some(v) if !v.is_null() => v.to_string(),
            _ => String::new(),
        };
    };
    items
        .iter()
        .filter_map(|c| match c.get("type").and_then(Value::as_str) {
            Some("content") => c
                .pointer("/content/text")
                .and_then(Value::as_str)
                .map(str::to_string),
            Some("diff") => c
                .get("path")
                .and_then(Value::as_str)
                .map(|p| format!("(diff of {p})")),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How an engine says, as a message of its turn, that the model API failed after its own
/// retries, and then ends the turn as if it had answered (`stopReason: end_turn`): Copilot CLI's
/// `Error: Failed to get response from the AI model; retried 5 times (…) Last error: 500 …`. The
/// turn is then the infrastructure's error, never an answer graded as the skill's.
const MODEL_FAILED: &[&str] = &["Error: Failed to get response from the AI model"];

/// An ACP error's category, from its words (agents report the model API's failures so).
fn classify(why: &str) -> ErrorCategory {
    let lower = why.to_ascii_lowercase();
    // A status is a number of its own (a port holding `401` says nothing).
    let any = |words: &[&str]| {
        words
            .iter()
            .any(|w| match w.bytes().all(|b| b.is_ascii_digit()) {
                true => crate::harness::says_status(&lower, w),
                false => lower.contains(w),
            })
    };
    if any(&[
        "authenticat",
        "unauthorized",
        "401",
        "403",
        "api key",
        "login",
    ]) {
        ErrorCategory::Auth
    } else if any(&["429", "rate limit", "quota"]) {
        ErrorCategory::RateLimit
    } else if crate::harness::unreachable(&lower) {
        ErrorCategory::Network
    } else if any(&[
        "overloaded",
        "500",
        "502",
        "503",
        "529",
        "internal server error",
    ]) {
        ErrorCategory::Server
    } else if lower.contains(r#""errorname": "apierror""#) {
        // OpenCode's error of the model API's answer, its status left out: the API failed.
        ErrorCategory::Server
    } else {
        ErrorCategory::Agent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(u: Value) -> String {
        json_line(
            serde_json::json!({"agent": {"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": "s", "update": u}}}),
        )
    }

    fn json_line(v: Value) -> String {
        v.to_string()
    }

    fn feed(lines: &[String]) -> (Vec<Event>, AcpParser) {
        let mut p = AcpParser::default();
        let mut out = Vec::new();
        for l in lines {
            out.extend(p.line(l));
        }
        (out, p)
    }

    fn skills(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::SkillInvoked { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect()
    }

    fn session() -> String {
        json_line(serde_json::json!({"bridge": "session", "session_id": "s"}))
    }

    fn stop() -> String {
        json_line(serde_json::json!({"bridge": "stop", "stop_reason": "end_turn"}))
    }

    #[test]
    fn a_call_is_said_with_the_input_its_later_updates_give() {
        use serde_json::json;
        // OpenCode: a pending call with only its cwd, the command once it runs.
        let (events, _) = feed(&[
            session(),
            update(
                json!({"sessionUpdate": "tool_call", "toolCallId": "b", "title": "bash",
                "kind": "execute", "status": "pending", "rawInput": {"cwd": "/w"}}),
            ),
            update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "b",
                "status": "in_progress", "rawInput": {"command": "echo ran", "cwd": "/w"}}),
            ),
            update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "b",
                "status": "completed", "rawOutput": {"output": "ran"}}),
            ),
            // Claude's adapter: `{}`, then the input with no status, then the end.
            update(
                json!({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "Bash",
                "status": "pending", "rawInput": {}, "_meta": {"claudeCode": {"toolName": "Bash"}}}),
            ),
            update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "c",
                "rawInput": {"command": "ls"}}),
            ),
            update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "c",
                "status": "completed", "content": []}),
            ),
            // One never run: said as it is when the turn ends.
            update(
                json!({"sessionUpdate": "tool_call", "toolCallId": "d", "title": "read",
                "status": "pending", "rawInput": {"path": "a"}}),
            ),
            stop(),
        ]);
        let calls: Vec<(String, Value)> = events
            .iter()
            .filter_map(|e| match e {
                Event::ToolCall { id, input, .. } => Some((id.clone(), input.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            [
                ("b".to_string(), json!({"command": "echo ran", "cwd": "/w"})),
                ("c".into(), json!({"command": "ls"})),
                ("d".into(), json!({"path": "a"}))
            ]
        );
        // Each call comes before its result.
        let at = |want: &Event| events.iter().position(|e| e == want).unwrap();
        let result = events
            .iter()
            .position(|e| matches!(e, Event::ToolResult { id, .. } if id == "b"))
            .unwrap();
        assert!(
            at(&Event::ToolCall {
                id: "b".into(),
                name: "bash".into(),
                input: calls[0].1.clone()
            }) < result
        );
    }

    #[test]
    fn a_failed_skill_call_whose_input_never_came_is_named_by_its_failure() {
        use serde_json::json;
        // Qwen Code's baseline: `skill` with `{}`, failed with the skill named in the text.
        let (events, _) = feed(&[
            session(),
            update(
                json!({"sessionUpdate": "tool_call", "toolCallId": "q", "title": "Skill",
                "kind": "read", "status": "pending", "rawInput": {}, "_meta": {"toolName": "skill"}}),
            ),
            update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "q", "status": "failed",
                "content": [{"type": "content", "content": {"type": "text",
                "text": "Skill \"greeter\" not found. Available skills: batch"}}],
                "_meta": {"toolName": "skill"}}),
            ),
        ]);
        assert_eq!(
            events
                .iter()
                .filter_map(|e| match e {
                    Event::SkillInvoked { name, call } => Some((name.clone(), call.clone())),
                    _ => None,
                })
                .collect::<Vec<_>>(),
            [("greeter".to_string(), Some("q".to_string()))]
        );
        // Another tool's failure naming a skill is none.
        assert_eq!(skill_not_found("bash", "Skill \"x\" not found"), None);
        assert_eq!(skill_not_found("skill", "Skill \"x\" was loaded"), None);
    }

    #[test]
    fn plans_diffs_and_the_turn_s_tokens_are_read() {
        use serde_json::json;
        let (events, p) = feed(&[
            session(),
            update(json!({"sessionUpdate": "plan", "entries": [
                {"content": "Read the skill", "priority": "high", "status": "completed"},
                {"content": "Write the card", "priority": "high", "status": "in_progress"}]})),
            update(
                json!({"sessionUpdate": "tool_call", "toolCallId": "w", "title": "write", "kind": "edit"}),
            ),
            update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "w", "status": "completed",
                "content": [{"type": "diff", "path": "/ws/card.txt", "oldText": null, "newText": "Hi"},
                            {"type": "diff", "path": "/ws/a.txt", "oldText": "a", "newText": "b"}]}),
            ),
            // A failed edit changed nothing.
            update(
                json!({"sessionUpdate": "tool_call", "toolCallId": "x", "title": "write", "kind": "edit"}),
            ),
            update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "x", "status": "failed",
                "content": [{"type": "diff", "path": "/ws/no.txt", "newText": "b"}]}),
            ),
            json_line(
                json!({"agent": {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn",
                "usage": {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12, "cachedReadTokens": 5}}}}),
            ),
            json_line(json!({"bridge": "stop", "stop_reason": "end_turn"})),
        ]);
        assert!(
            events.contains(&Event::Reasoning {
                text: "Plan:\n- [completed] Read the skill\n- [in_progress] Write the card".into()
            }),
            "{events:?}"
        );
        let changes: Vec<(String, String)> = events
            .iter()
            .filter_map(|e| match e {
                Event::FileChange { path, kind } => Some((path.clone(), kind.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            changes,
            [
                ("/ws/card.txt".to_string(), "add".to_string()),
                ("/ws/a.txt".into(), "update".into())
            ]
        );
        assert_eq!(
            (
                p.usage.input_tokens,
                p.usage.output_tokens,
                p.usage.cache_read_tokens
            ),
            (10, 2, 5)
        );
    }

    #[test]
    fn the_client_s_stop_sees_each_engine_s_call_of_the_skill_from_its_line_alone() {
        let call = |u: Value| {
            let line: Value = serde_json::from_str(&update(u)).unwrap();
            skill_called(&line["agent"])
        };
        let calls = [
            // Copilot, OpenCode (running, its input given), Qwen Code, Claude's ACP adapter
            serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "1",
                "title": "Using skill: greeter", "kind": "other", "rawInput": {"skill": "greeter"}}),
            serde_json::json!({"sessionUpdate": "tool_call_update", "toolCallId": "1",
                "status": "in_progress", "title": "skill", "kind": "other", "rawInput": {"name": "greeter"}}),
            serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "1",
                "title": "Skill: Use skill: \"greeter\"", "kind": "read", "_meta": {"toolName": "skill"},
                "rawInput": {"skill": "greeter"}}),
            serde_json::json!({"sessionUpdate": "tool_call_update", "toolCallId": "1",
                "title": "Load skill: greeter", "rawInput": {"skill": "greeter"}}),
        ];
        for u in calls {
            assert_eq!(call(u.clone()).as_deref(), Some("greeter"), "{u}");
        }
        let not = [
            // Announced with no input yet; a shell call; a message.
            serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "1", "title": "skill", "kind": "other"}),
            serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "2", "title": "bash",
                "kind": "execute", "rawInput": {"command": "cat skills/greeter/SKILL.md"}}),
            serde_json::json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "skill"}}),
        ];
        for u in not {
            assert_eq!(call(u.clone()), None, "{u}");
        }
    }

    #[test]
    fn each_engine_s_skill_load_is_seen() {
        let cases = [
            // Copilot
            vec![update(
                serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "1",
                "title": "Using skill: greeter", "kind": "other", "rawInput": {"skill": "greeter"}}),
            )],
            // OpenCode: a call titled "skill", then its update naming the skill
            vec![
                update(
                    serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "1", "title": "skill", "kind": "other"}),
                ),
                update(
                    serde_json::json!({"sessionUpdate": "tool_call_update", "toolCallId": "1",
                    "title": "Loaded skill: greeter", "rawInput": {"name": "greeter"}, "status": "completed"}),
                ),
            ],
            // Qwen Code
            vec![update(
                serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "1",
                "title": "Skill: Use skill: \"greeter\"", "kind": "read", "_meta": {"toolName": "skill"},
                "rawInput": {"skill": "greeter"}}),
            )],
            // Claude's ACP adapter
            vec![
                update(
                    serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "1", "title": "Load skill",
                    "kind": "other", "_meta": {"claudeCode": {"toolName": "Skill"}}}),
                ),
                update(
                    serde_json::json!({"sessionUpdate": "tool_call_update", "toolCallId": "1",
                    "title": "Load skill: greeter", "rawInput": {"skill": "greeter"}}),
                ),
            ],
        ];
        for lines in cases {
            let mut all = vec![session()];
            all.extend(lines.iter().cloned());
            all.push(stop());
            let (events, _) = feed(&all);
            assert_eq!(skills(&events), ["greeter"], "{lines:?}");
        }
        // A title the agent words is no skill load: a shell command's, OpenCode's sub-task's,
        // or one that only mentions a skill.
        let forged = [
            ("bash", "execute", "Loaded skill: forged"),
            ("task", "other", "Loaded skill: forged"),
            ("Run the greeter", "other", "Run: Loaded skill: forged"),
        ];
        for (first, kind, title) in forged {
            let (events, _) = feed(&[
                session(),
                update(
                    serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "9",
                    "title": first, "kind": kind, "rawInput": {"description": title}}),
                ),
                update(
                    serde_json::json!({"sessionUpdate": "tool_call_update", "toolCallId": "9",
                    "title": title, "kind": kind, "status": "completed"}),
                ),
            ]);
            assert!(skills(&events).is_empty(), "{first} {title}: {events:?}");
        }
        // A file read or an edit is no skill.
        let (events, _) = feed(&[
            session(),
            update(
                serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "2", "title": "Read SKILLS.md", "kind": "read"}),
            ),
        ]);
        assert!(skills(&events).is_empty());
    }

    #[test]
    fn chunks_join_replays_are_left_out_and_the_stop_decides() {
        let chunk = |kind: &str, t: &str| {
            update(
                serde_json::json!({"sessionUpdate": kind, "content": {"type": "text", "text": t}}),
            )
        };
        let (events, mut p) = feed(&[
            chunk("agent_message_chunk", "replayed"),
            session(),
            chunk("agent_thought_chunk", "hm"),
            chunk("agent_message_chunk", "Hel"),
            chunk("agent_message_chunk", "lo"),
            update(
                serde_json::json!({"sessionUpdate": "usage_update", "used": 1, "size": 2,
                "cost": {"amount": 0.5, "currency": "USD"}}),
            ),
            json_line(serde_json::json!({"bridge": "stop", "stop_reason": "end_turn"})),
        ]);
        let texts: Vec<&Event> = events
            .iter()
            .filter(|e| matches!(e, Event::Message { .. } | Event::Reasoning { .. }))
            .collect();
        assert_eq!(
            texts,
            [
                &Event::Reasoning { text: "hm".into() },
                &Event::Message {
                    text: "Hello".into()
                }
            ]
        );
        let exit = Exited {
            code: Some(0),
            signal: None,
            timed_out: false,
            interrupted: false,
            duration: std::time::Duration::from_millis(5),
            stdout_bytes: 0,
            truncated: false,
            stderr_tail: String::new(),
            started: None,
            stopped_by: None,
            decided: false,
        };
        let s = p.finish(&exit);
        assert_eq!(s.final_message.as_deref(), Some("Hello"));
        assert_eq!(s.cost_usd, Some(0.5));
        assert_eq!(s.error, None);
        // A refusal, a protocol error and a vanished agent are errors of their kinds.
        for (line, category) in [
            (
                serde_json::json!({"bridge": "stop", "stop_reason": "refusal"}),
                ErrorCategory::Agent,
            ),
            (
                serde_json::json!({"bridge": "error", "message": "Authentication required"}),
                ErrorCategory::Auth,
            ),
            (
                serde_json::json!({"bridge": "error", "message": "Incoming transport closed"}),
                ErrorCategory::Crash,
            ),
            (
                serde_json::json!({"bridge": "error", "message": "429 Too Many Requests"}),
                ErrorCategory::RateLimit,
            ),
            // OpenCode's for a model API that answered an error, and for one it cannot reach.
            (
                serde_json::json!({"bridge": "error", "message":
                    "Internal error: The server had an error: {\n  \"service\": \"session\",\n  \"errorName\": \"APIError\"\n}"}),
                ErrorCategory::Server,
            ),
            (
                serde_json::json!({"bridge": "error", "message":
                    "Internal error: Cannot connect to API: The socket connection was closed unexpectedly."}),
                ErrorCategory::Network,
            ),
            // A port is no status: Claude's adapter names the gateway it could not use.
            (
                serde_json::json!({"bridge": "error", "message":
                    "Internal error: API Error: 500 The server had an error. Check your inference gateway (127.0.0.1:40127)."}),
                ErrorCategory::Server,
            ),
            // Qwen Code's word (the OpenAI SDK's) for a model API it cannot reach.
            (
                serde_json::json!({"bridge": "error",
                    "message": "Internal error: {\n  \"details\": \"Connection error.\"\n}"}),
                ErrorCategory::Network,
            ),
        ] {
            let (_, mut p) = feed(&[session(), json_line(line.clone())]);
            assert_eq!(
                p.finish(&exit).error.map(|e| e.category),
                Some(category),
                "{line}"
            );
        }
        let (_, mut p) = feed(&[session()]);
        assert_eq!(
            p.finish(&exit).error.map(|e| e.category),
            Some(ErrorCategory::Crash),
            "no stop: the agent never finished"
        );
        // Copilot says the model API's failure as its message and ends the turn: an error.
        for (said, category) in [
            ("500 the model is down", ErrorCategory::Server),
            ("429 slow down", ErrorCategory::RateLimit),
        ] {
            let (_, mut p) = feed(&[
                session(),
                chunk(
                    "agent_message_chunk",
                    "Info: Request failed due to a transient API error. Retrying...",
                ),
                chunk(
                    "agent_message_chunk",
                    &format!(
                        "Error: Failed to get response from the AI model; retried 5 times (total retry wait time: 15.90 seconds) Last error: {said}"
                    ),
                ),
                json_line(serde_json::json!({"bridge": "stop", "stop_reason": "end_turn"})),
            ]);
            assert_eq!(
                p.finish(&exit).error.map(|e| e.category),
                Some(category),
                "{said}"
            );
        }
        // The words anywhere but at a message's start are the agent's answer.
        let (_, mut p) = feed(&[
            session(),
            chunk(
                "agent_message_chunk",
                "It said: Error: Failed to get response from the AI model",
            ),
            json_line(serde_json::json!({"bridge": "stop", "stop_reason": "end_turn"})),
        ]);
        assert_eq!(p.finish(&exit).error, None);
        // The cost is the session's running total: a turn's is its rise. Another session's
        // updates, and anything after the stop, are not this turn's.
        let usage = |amount: f64| {
            update(
                serde_json::json!({"sessionUpdate": "usage_update", "used": 1, "size": 2,
                "cost": {"amount": amount, "currency": "USD"}}),
            )
        };
        let other = json_line(
            serde_json::json!({"agent": {"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": "other", "update": {"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "not mine"}}}}}),
        );
        let (events, mut p) = feed(&[
            usage(0.5),
            session(),
            other,
            usage(0.75),
            json_line(serde_json::json!({"bridge": "stop", "stop_reason": "end_turn"})),
            chunk("agent_message_chunk", "after the stop"),
        ]);
        let s = p.finish(&exit);
        assert_eq!(s.cost_usd, Some(0.25));
        assert_eq!(s.cost_note, None);
        // A claim past belief, either way, leaves the turn's cost unknown, saying why; one
        // made in a replay before the turn is not this turn's.
        for claim in [1e308, -1e308, -0.5, 2e6] {
            let (_, mut p) = feed(&[
                session(),
                usage(0.5),
                usage(claim),
                json_line(serde_json::json!({"bridge": "stop", "stop_reason": "end_turn"})),
            ]);
            let s = p.finish(&exit);
            assert_eq!(s.cost_usd, None, "{claim}");
            assert!(
                s.cost_note
                    .as_deref()
                    .is_some_and(|n| n.contains("not believed")),
                "{claim}: {s:?}"
            );
        }
        let (_, mut p) = feed(&[
            usage(1e308),
            session(),
            usage(0.5),
            json_line(serde_json::json!({"bridge": "stop", "stop_reason": "end_turn"})),
        ]);
        let s = p.finish(&exit);
        assert_eq!((s.cost_usd, s.cost_note), (Some(0.5), None));
        assert!(
            !events.iter().any(|e| matches!(e, Event::Message { .. })),
            "{events:?}"
        );
    }
}
