//! A scripted model server on 127.0.0.1 that the real agent CLIs talk to in tests.
//!
//! It speaks the Anthropic Messages API (`POST /v1/messages`, SSE streaming) for Claude
//! Code, and the OpenAI Responses API (`POST /v1/responses`, SSE) for Codex, whose shell tool
//! is a `function_call` named `exec_command`, and the Gemini API
//! (`POST /v1beta/models/<model>:streamGenerateContent`, SSE) for Gemini CLI, and the OpenAI
//! Chat Completions API (`POST /v1/chat/completions`, SSE or whole, tool calls as
//! `tool_calls`) for the agents that take an OpenAI-compatible endpoint (Qwen Code, …). Each test scripts replies by the text of the latest user message: text, tool calls
//! (`{cwd}` in a tool input becomes the agent's working directory, read from the request),
//! HTTP errors and hangs. Every request is recorded for assertions.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use serde_json::{Value, json};

/// One scripted model reply.
#[derive(Debug, Clone)]
pub enum Reply {
    Text(String),
    /// A tool call; `{cwd}` in string values is replaced by the agent's working directory.
    Tool {
        name: String,
        input: Value,
    },
    /// An HTTP error with this status.
    Error {
        status: u16,
        message: String,
    },
    /// Never answer (for timeouts).
    Hang,
    /// An outage: this status for this request and every later one of the rule, with nothing
    /// telling the client not to retry (unlike [`Reply::Error`], whose Anthropic answer says
    /// `x-should-retry: false`): the agent's own retry loop runs as it would against a real
    /// outage.
    Down(u16),
}

/// A base URL where nothing listens: every connection is refused.
pub fn refused_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

/// A base URL whose server reads each request and closes the connection without a word (the
/// client sees the socket hang up: ECONNRESET).
pub fn resetting_url() -> String {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let _ = conn.set_read_timeout(Some(Duration::from_millis(200)));
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            drop(conn);
        }
    });
    url
}

pub fn text(t: &str) -> Reply {
    Reply::Text(t.to_string())
}

pub fn tool(name: &str, input: Value) -> Reply {
    Reply::Tool {
        name: name.to_string(),
        input,
    }
}

struct Rule {
    when: String,
    replies: Vec<Reply>,
    next: usize,
    /// Reply by the conversation's own step (its assistant messages so far), so concurrent
    /// conversations with the same prompt each get the whole script (Anthropic API only).
    per_conversation: bool,
    /// Only for requests whose text contains this (e.g. a skill offered to the model).
    requires: Option<String>,
}

#[derive(Default)]
struct Shared {
    rules: Mutex<Vec<Rule>>,
    requests: Mutex<Vec<Value>>,
    ids: Mutex<u64>,
}

pub struct ModelServer {
    pub url: String,
    shared: Arc<Shared>,
}

impl ModelServer {
    /// Starts the server on a free loopback port, on its own thread.
    pub fn start() -> ModelServer {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/v1/messages", post(messages))
            .route("/v1/responses", post(responses))
            .route("/v1/chat/completions", post(chat))
            .route("/v1beta/models/{*call}", post(gemini))
            .with_state(shared.clone());
        ModelServer {
            url: super::serve(app),
            shared,
        }
    }

    /// Replies, in order, to requests whose latest user message contains `when`. After the
    /// last, the model says "done".
    pub fn script(&self, when: &str, replies: Vec<Reply>) {
        self.shared.rules.lock().unwrap().push(Rule {
            when: when.to_string(),
            replies,
            next: 0,
            per_conversation: false,
            requires: None,
        });
    }

    /// Like [`script`](Self::script), but every conversation with this prompt gets the whole
    /// script from its first reply, however many run at once; with `requires`, only requests
    /// containing that text (anywhere: system prompt, tools, messages) match.
    pub fn script_each(&self, when: &str, requires: Option<&str>, replies: Vec<Reply>) {
        self.shared.rules.lock().unwrap().push(Rule {
            when: when.to_string(),
            replies,
            next: 0,
            per_conversation: true,
            requires: requires.map(str::to_string),
        });
    }

    pub fn requests(&self) -> Vec<Value> {
        self.shared.requests.lock().unwrap().clone()
    }
}

/// The texts of the user messages, newest first (tool results carry none).
fn user_texts(req: &Value) -> Vec<String> {
    let empty = Vec::new();
    let messages = req["messages"].as_array().unwrap_or(&empty);
    messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
        .filter(|t| !t.is_empty())
        .collect()
}

fn working_directory(req: &Value) -> String {
    let s = req.to_string();
    let marker = "Primary working directory: ";
    s.find(marker)
        .map(|i| {
            s[i + marker.len()..]
                .chars()
                .take_while(|c| *c != '\\' && *c != '"')
                .collect()
        })
        .unwrap_or_default()
}

fn fill(v: &Value, cwd: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace("{cwd}", cwd)),
        Value::Array(a) => a.iter().map(|x| fill(x, cwd)).collect(),
        Value::Object(o) => o.iter().map(|(k, x)| (k.clone(), fill(x, cwd))).collect(),
        other => other.clone(),
    }
}

/// `{skill:NAME}`, a whole string of a tool input, becomes the longest name in the request that
/// starts with NAME (letters, digits, `-`): a runner that offers the skill under a name of its
/// own (skill-creator's `run_eval.py`: `NAME-skill-<id>`, `NAME-eval-<id>`) gets that name.
fn named_skill(v: &Value, body: &str) -> Value {
    match v {
        Value::String(s) => match s.strip_prefix("{skill:").and_then(|r| r.strip_suffix('}')) {
            Some(name) => Value::String(longest_name(body, name)),
            None => v.clone(),
        },
        Value::Array(a) => a.iter().map(|x| named_skill(x, body)).collect(),
        Value::Object(o) => o
            .iter()
            .map(|(k, x)| (k.clone(), named_skill(x, body)))
            .collect(),
        other => other.clone(),
    }
}

fn longest_name(body: &str, name: &str) -> String {
    let part = |c: char| c.is_ascii_alphanumeric() || c == '-';
    body.match_indices(name)
        .filter(|(i, _)| !body[..*i].ends_with(part))
        .filter_map(|(i, _)| body[i..].split(|c: char| !part(c)).next())
        .max_by_key(|s| s.len())
        .unwrap_or(name)
        .to_string()
}

async fn messages(
    State(shared): State<Arc<Shared>>,
    _headers: HeaderMap,
    body: String,
) -> Response {
    let req: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    shared.requests.lock().unwrap().push(req.clone());
    // The rule for the newest user message that any rule matches: a skill's injected text or a
    // tool result does not change which conversation this is.
    let step = req["messages"]
        .as_array()
        .map(|m| m.iter().filter(|m| m["role"] == "assistant").count());
    let reply = next_reply(&shared, &user_texts(&req), step, &body);
    let id = {
        let mut n = shared.ids.lock().unwrap();
        *n += 1;
        *n
    };
    let model = req["model"].as_str().unwrap_or("claude-test").to_string();
    let stream = req["stream"].as_bool().unwrap_or(false);
    match reply {
        Reply::Down(status) => down(
            status,
            &json!({"type": "error", "error": {"type": kind_of(status), "message": outage_message(status)}}),
        ),
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Response::new(Body::empty())
        }
        Reply::Error { status, message } => {
            let kind = kind_of(status);
            Response::builder()
                .status(StatusCode::from_u16(status).unwrap())
                .header("content-type", "application/json")
                .header("x-should-retry", "false")
                .body(Body::from(
                    json!({"type": "error", "error": {"type": kind, "message": message}})
                        .to_string(),
                ))
                .unwrap()
        }
        Reply::Text(t) => respond(
            stream,
            &model,
            id,
            json!({"type": "text", "text": t}),
            "end_turn",
        ),
        Reply::Tool { name, input } => {
            let input = named_skill(&fill(&input, &working_directory(&req)), &body);
            let block = json!({"type": "tool_use", "id": format!("toolu_{id:04}"), "name": name, "input": input});
            respond(stream, &model, id, block, "tool_use")
        }
    }
}

/// The Anthropic API's name for an error of this status.
fn kind_of(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

/// An outage's answer: the status and the body, and nothing said about retrying.
fn down(status: u16, body: &Value) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn respond(stream: bool, model: &str, id: u64, block: Value, stop: &str) -> Response {
    let usage = json!({"input_tokens": 100, "output_tokens": 20});
    if !stream {
        let msg = json!({"id": format!("msg_{id}"), "type": "message", "role": "assistant", "model": model,
            "content": [block], "stop_reason": stop, "stop_sequence": null, "usage": usage});
        return Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(msg.to_string()))
            .unwrap();
    }
    let mut out = String::new();
    let mut ev =
        |name: &str, data: Value| out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_{id}"), "type": "message",
        "role": "assistant", "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 100, "output_tokens": 1}}}),
    );
    match block["type"].as_str() {
        Some("tool_use") => {
            let mut start = block.clone();
            start["input"] = json!({});
            ev(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": start}),
            );
            ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": block["input"].to_string()}}),
            );
        }
        _ => {
            ev(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
            );
            ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": block["text"]}}),
            );
        }
    }
    ev(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    );
    ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
        "usage": {"output_tokens": 20}}),
    );
    ev("message_stop", json!({"type": "message_stop"}));
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from(out))
        .unwrap()
}

/// User texts of a Responses API request, newest first.
fn input_texts(req: &Value) -> Vec<String> {
    let empty = Vec::new();
    req["input"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
        .filter(|t| !t.is_empty())
        .collect()
}

fn codex_cwd(req: &Value) -> String {
    let s = req.to_string();
    s.find("<cwd>")
        .and_then(|i| {
            s[i + 5..]
                .find("</cwd>")
                .map(|j| s[i + 5..i + 5 + j].to_string())
        })
        .unwrap_or_default()
}

/// An outage's reply where the API's error answer says nothing about retrying anyway.
fn outage_as_error(r: Reply) -> Reply {
    match r {
        Reply::Down(status) => Reply::Error {
            status,
            message: outage_message(status).into(),
        },
        other => other,
    }
}

/// What a model API says with an outage's status, in OpenAI's and Anthropic's words (an
/// agent that loses the status keeps these).
fn outage_message(status: u16) -> &'static str {
    match status {
        429 => "Rate limit reached for requests: the model is down",
        401 => "Incorrect API key provided",
        _ => "The server had an error while processing your request: the model is down",
    }
}

fn next_reply(shared: &Shared, said: &[String], step: Option<usize>, body: &str) -> Reply {
    let mut rules = shared.rules.lock().unwrap();
    let hit = said.iter().find_map(|t| {
        rules.iter().position(|r| {
            t.contains(&r.when)
                && r.requires
                    .as_ref()
                    .is_none_or(|x| body.contains(x.as_str()))
        })
    });
    match hit.map(|i| &mut rules[i]) {
        Some(rule) => {
            let at = match step {
                Some(s) if rule.per_conversation => s,
                _ => rule.next,
            };
            let down = rule
                .replies
                .last()
                .filter(|r| matches!(r, Reply::Down(_)))
                .cloned();
            let r = rule
                .replies
                .get(at)
                .cloned()
                .or(down)
                .unwrap_or_else(|| text("done"));
            rule.next += 1;
            r
        }
        None => text("done"),
    }
}

async fn responses(State(shared): State<Arc<Shared>>, body: String) -> Response {
    let req: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    shared.requests.lock().unwrap().push(req.clone());
    let reply = outage_as_error(next_reply(&shared, &input_texts(&req), None, &body));
    let id = {
        let mut n = shared.ids.lock().unwrap();
        *n += 1;
        *n
    };
    let item = match reply {
        Reply::Down(_) => unreachable!("an outage is answered as an error here"),
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return Response::new(Body::empty());
        }
        Reply::Error { status, message } => {
            return Response::builder()
                .status(StatusCode::from_u16(status).unwrap())
                .header("content-type", "application/json")
                .body(Body::from(
                    json!({"error": {"message": message, "type": "server_error", "code": null}})
                        .to_string(),
                ))
                .unwrap();
        }
        Reply::Text(t) => json!({"type": "message", "role": "assistant", "id": format!("msg_{id}"),
            "content": [{"type": "output_text", "text": t, "annotations": []}]}),
        Reply::Tool { name, input } => {
            let input = fill(&input, &codex_cwd(&req));
            json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": format!("call_{id}"),
                "name": name, "arguments": input.to_string()})
        }
    };
    let mut out = String::new();
    let mut ev = |data: Value| {
        out.push_str(&format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap_or("")
        ));
    };
    let rid = format!("resp_{id}");
    ev(json!({"type": "response.created", "response": {"id": rid}}));
    ev(json!({"type": "response.output_item.added", "output_index": 0, "item": item}));
    ev(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
    ev(
        json!({"type": "response.completed", "response": {"id": rid, "usage": {"input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120}}}),
    );
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(out))
        .unwrap()
}

/// User texts of a Gemini request, newest first (function responses carry none).
fn gemini_texts(req: &Value) -> Vec<String> {
    let empty = Vec::new();
    req["contents"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .map(|m| {
            m["parts"]
                .as_array()
                .unwrap_or(&empty)
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .filter(|t| !t.is_empty())
        .collect()
}

/// Gemini CLI names the workspace in its session context.
fn gemini_cwd(req: &Value) -> String {
    let marker = "Workspace Directories:**\n  - ";
    gemini_texts(req)
        .iter()
        .find_map(|t| {
            let i = t.find(marker)?;
            Some(t[i + marker.len()..].lines().next()?.trim().to_string())
        })
        .unwrap_or_default()
}

async fn gemini(
    State(shared): State<Arc<Shared>>,
    axum::extract::Path(call): axum::extract::Path<String>,
    body: String,
) -> Response {
    let req: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let json_response = |v: Value| {
        Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(v.to_string()))
            .unwrap()
    };
    if call.ends_with(":countTokens") {
        return json_response(json!({"totalTokens": 100}));
    }
    let usage =
        json!({"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120});
    if call.ends_with(":generateContent") {
        // The CLI's own helper calls (model routing): a plain, valid answer, not scripted.
        let text = json!({"complexity_reasoning": "scripted", "complexity_score": 10}).to_string();
        return json_response(
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
            "finishReason": "STOP", "index": 0}], "usageMetadata": usage}),
        );
    }
    shared.requests.lock().unwrap().push(req.clone());
    let part = match outage_as_error(next_reply(&shared, &gemini_texts(&req), None, &body)) {
        Reply::Down(_) => unreachable!("an outage is answered as an error here"),
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return Response::new(Body::empty());
        }
        Reply::Error { status, message } => {
            let code = match status {
                401 => "UNAUTHENTICATED",
                429 => "RESOURCE_EXHAUSTED",
                _ => "INTERNAL",
            };
            return Response::builder()
                .status(StatusCode::from_u16(status).unwrap())
                .header("content-type", "application/json")
                .body(Body::from(
                    json!({"error": {"code": status, "message": message, "status": code}})
                        .to_string(),
                ))
                .unwrap();
        }
        Reply::Text(t) => json!({"text": t}),
        Reply::Tool { name, input } => {
            json!({"functionCall": {"name": name, "args": fill(&input, &gemini_cwd(&req))}})
        }
    };
    let chunk = json!({"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
        "index": 0}], "usageMetadata": usage, "modelVersion": "gemini-test"});
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(format!("data: {chunk}\r\n\r\n")))
        .unwrap()
}

/// The workspace path in a request (agents name their working folder in their system
/// prompt, each in its own words): the first absolute path through an `assay-ws-` folder.
fn any_cwd(body: &str) -> String {
    let Some(at) = body.find("/assay-ws-") else {
        return String::new();
    };
    let start = body[..at]
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || "/._-".contains(c)))
        .map_or(0, |i| i + 1);
    let end = body[at..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || "/._-".contains(c)))
        .map_or(body.len(), |i| at + i);
    body[start..end].trim_end_matches(['/', '.']).to_string()
}

/// An OpenAI Chat Completions request: the reply by the latest user text (and the
/// conversation's own step, so each conversation gets its whole script), streamed as
/// `chat.completion.chunk`s when asked.
async fn chat(State(shared): State<Arc<Shared>>, body: String) -> Response {
    let req: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    shared.requests.lock().unwrap().push(req.clone());
    let step = req["messages"]
        .as_array()
        .map(|m| m.iter().filter(|m| m["role"] == "assistant").count());
    let reply = outage_as_error(next_reply(&shared, &user_texts(&req), step, &body));
    let id = {
        let mut n = shared.ids.lock().unwrap();
        *n += 1;
        *n
    };
    let model = req["model"].as_str().unwrap_or("gpt-test").to_string();
    let (delta, finish) = match reply {
        Reply::Down(_) => unreachable!("an outage is answered as an error here"),
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return Response::new(Body::empty());
        }
        Reply::Error { status, message } => {
            return Response::builder()
                .status(StatusCode::from_u16(status).unwrap())
                .header("content-type", "application/json")
                .body(Body::from(
                    json!({"error": {"message": message, "type": "server_error", "code": status}})
                        .to_string(),
                ))
                .unwrap();
        }
        Reply::Text(t) => (json!({"role": "assistant", "content": t}), "stop"),
        Reply::Tool { name, input } => {
            let input = named_skill(&fill(&input, &any_cwd(&body)), &body);
            let call = json!({"index": 0, "id": format!("call_{id}"), "type": "function",
                "function": {"name": name, "arguments": input.to_string()}});
            (
                json!({"role": "assistant", "content": null, "tool_calls": [call]}),
                "tool_calls",
            )
        }
    };
    let usage = json!({"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120});
    let head = json!({"id": format!("chatcmpl-{id}"), "created": 1_764_000_000, "model": model});
    if !req["stream"].as_bool().unwrap_or(false) {
        let mut message = delta.clone();
        if let Some(calls) = message["tool_calls"].as_array_mut() {
            for c in calls {
                c.as_object_mut().map(|o| o.remove("index"));
            }
        }
        let mut whole = head.clone();
        whole["object"] = json!("chat.completion");
        whole["choices"] = json!([{"index": 0, "message": message, "finish_reason": finish}]);
        whole["usage"] = usage;
        return Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(whole.to_string()))
            .unwrap();
    }
    let chunk = |choices: Value, usage: Value| {
        let mut c = head.clone();
        c["object"] = json!("chat.completion.chunk");
        c["choices"] = choices;
        if !usage.is_null() {
            c["usage"] = usage;
        }
        format!("data: {c}\n\n")
    };
    let mut out = chunk(
        json!([{"index": 0, "delta": delta, "finish_reason": null}]),
        Value::Null,
    );
    out.push_str(&chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
        Value::Null,
    ));
    out.push_str(&chunk(json!([]), usage));
    out.push_str("data: [DONE]\n\n");
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from(out))
        .unwrap()
}
