//! An agent mock: a model plays the MCP server its Markdown describes, answering one call
//! at a time with the server's earlier calls in view, and stops the run when a call meets a
//! condition of its `abort_when:` (only then: a mock without `abort_when:` cannot abort).
//! The model is the run's judge.

use std::sync::Arc;

use serde_json::Value;

use crate::judge::provider::{Judge, Prompt};
use crate::suite::mocks::Responder;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallVerdict {
    Ok,
    ToolError,
    Abort,
}

impl CallVerdict {
    pub fn name(self) -> &'static str {
        match self {
            CallVerdict::Ok => "ok",
            CallVerdict::ToolError => "tool_error",
            CallVerdict::Abort => "abort",
        }
    }
}

/// A responder's answer to one call.
#[derive(Debug, Clone)]
pub struct MockAnswer {
    pub verdict: CallVerdict,
    pub text: String,
    /// The run stops for assay's reason (the model could not answer), not the skill's.
    pub infrastructure: bool,
}

impl MockAnswer {
    pub fn ok(text: String) -> MockAnswer {
        MockAnswer {
            verdict: CallVerdict::Ok,
            text,
            infrastructure: false,
        }
    }
    pub fn tool_error(text: String) -> MockAnswer {
        MockAnswer {
            verdict: CallVerdict::ToolError,
            text,
            infrastructure: false,
        }
    }
    pub fn abort(text: String) -> MockAnswer {
        MockAnswer {
            verdict: CallVerdict::Abort,
            text,
            infrastructure: false,
        }
    }
}

/// One call put to an agent mock.
pub struct Ask<'a> {
    pub server: &'a str,
    pub tool: &'a str,
    pub responder: &'a Responder,
    pub input: &'a Value,
    /// The server's earlier calls, a line each.
    pub history: &'a [String],
}

/// The most of the earlier calls shown to the model.
const MAX_HISTORY: usize = 20;
/// The most of one earlier answer shown.
const MAX_SHOWN: usize = 2_000;

/// A call as the model sees it among the earlier ones.
pub fn history_line(tool: &str, input: &Value, verdict: CallVerdict, text: &str) -> String {
    let text: String = text.chars().take(MAX_SHOWN).collect();
    serde_json::json!({"tool": tool, "input": input, "verdict": verdict.name(), "output": text})
        .to_string()
}

/// The model's answer; a model that fails (an outage, an answer that is not the JSON asked
/// for) aborts the run as an infrastructure error.
pub async fn answer(
    judge: &Result<Arc<Judge>, String>,
    runtime: &tokio::runtime::Handle,
    ask: &Ask<'_>,
) -> MockAnswer {
    let judge = match judge {
        Ok(j) => j.clone(),
        Err(why) => return failed(format!("no model for agent mocks: {why}")),
    };
    let Responder::Agent { abort_when, .. } = ask.responder else {
        return failed("not an agent mock".into());
    };
    let prompt = prompt(ask);
    let asked = runtime.spawn(async move { judge.ask(&prompt).await }).await;
    let text = match asked {
        Ok(Ok(a)) => a.text,
        Ok(Err(e)) => return failed(e.to_string()),
        Err(e) => return failed(e.to_string()),
    };
    let Some(v) = crate::judge::modes::extract_json(&text) else {
        return failed("its answer is not the JSON object asked for".into());
    };
    let reply = v
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match v.get("verdict").and_then(Value::as_str) {
        Some("ok") => MockAnswer::ok(reply),
        Some("tool_error") => MockAnswer::tool_error(reply),
        // Only `abort_when:` can abort.
        Some("abort") if abort_when.is_some() => MockAnswer::abort(reply),
        Some("abort") => MockAnswer::tool_error(reply),
        _ => failed("its answer has no verdict of ok, tool_error or abort".into()),
    }
}

fn failed(why: String) -> MockAnswer {
    MockAnswer {
        verdict: CallVerdict::Abort,
        text: format!("mock agent responder failed: {why}"),
        infrastructure: true,
    }
}

fn prompt(ask: &Ask<'_>) -> Prompt {
    let Responder::Agent {
        prompt, abort_when, ..
    } = ask.responder
    else {
        unreachable!("asked only of agent mocks")
    };
    let mut system = format!(
        "You stand in for the MCP server \"{}\" in a test of an AI agent. Nothing you do touches a real service. MockAnswer each tool call as that server would, keeping the state of the world consistent with the earlier calls.\n\nThe server, as its author describes it:\n{prompt}\n",
        ask.server
    );
    match abort_when {
        Some(conditions) => system.push_str(&format!(
            "\nStop the run (verdict \"abort\", with the reason as text) when the call meets any of these conditions, and only then:\n{conditions}\n"
        )),
        None => system.push_str("\nNever abort: answer \"ok\", or \"tool_error\" for a call the server would refuse.\n"),
    }
    system.push('\n');
    system.push_str(crate::judge::fence::FENCE_RULE);
    system.push_str("\nReply with one JSON object and nothing else: {\"verdict\": \"ok\" | \"tool_error\" | \"abort\", \"text\": \"<the tool's result as the server returns it, or the reason>\"}.");
    let start = ask.history.len().saturating_sub(MAX_HISTORY);
    let earlier = if ask.history.is_empty() {
        "(none)".to_string()
    } else {
        ask.history[start..].join("\n")
    };
    let user = format!(
        "Earlier calls to this server:\n{}\n\nThe call to answer: tool `{}` with input\n{}",
        crate::judge::fence::fence("untrusted-history", &earlier),
        ask.tool,
        crate::judge::fence::fence("untrusted-input", &ask.input.to_string()),
    );
    Prompt {
        system,
        user,
        max_tokens: 4096,
    }
}
