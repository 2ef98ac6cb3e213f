//! A judge API on 127.0.0.1 that answers in both shapes — Anthropic Messages
//! (`POST /v1/messages`) and OpenAI chat completions (`POST /v1/chat/completions`) — from a
//! queue of scripted replies, with faults: HTTP errors (with `retry-after`), hangs and
//! malformed answers. Every request is recorded.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{OriginalUri, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::post;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
pub enum JudgeReply {
    /// The judge's text (JSON or not).
    Says(String),
    Error {
        status: u16,
        retry_after: Option<u64>,
    },
    Hang,
    /// A blind A/B answer: the response containing `better` wins, wherever it is shown.
    Prefers {
        better: String,
        confidence: f64,
    },
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<JudgeReply>>,
    requests: Mutex<Vec<(String, Value)>>,
}

pub struct JudgeServer {
    pub url: String,
    shared: Arc<Shared>,
}

impl JudgeServer {
    pub fn start(replies: Vec<JudgeReply>) -> JudgeServer {
        let shared = Arc::new(Shared {
            replies: Mutex::new(replies.into()),
            requests: Mutex::default(),
        });
        let app = Router::new()
            .route("/v1/messages", post(answer))
            .route("/v1/chat/completions", post(answer))
            .with_state(shared.clone());
        JudgeServer {
            url: super::serve(app),
            shared,
        }
    }

    /// (path, body) of every request so far.
    pub fn requests(&self) -> Vec<(String, Value)> {
        self.shared.requests.lock().unwrap().clone()
    }
}

pub fn says(v: Value) -> JudgeReply {
    JudgeReply::Says(v.to_string())
}

async fn answer(
    State(shared): State<Arc<Shared>>,
    OriginalUri(uri): OriginalUri,
    body: String,
) -> Response {
    let req: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let path = uri.path().to_string();
    shared.requests.lock().unwrap().push((path.clone(), req));
    let reply = shared
        .replies
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or(JudgeReply::Says("{}".into()));
    let reply = match reply {
        JudgeReply::Prefers { better, confidence } => {
            let text = body.as_str();
            let second = text.find("## Response 2").unwrap_or(text.len());
            let winner = match text.find(better.as_str()) {
                Some(i) if i < second => "1",
                _ => "2",
            };
            JudgeReply::Says(
                json!({"preferred": winner, "confidence": confidence, "reasoning": format!("response {winner} has {better}")})
                    .to_string(),
            )
        }
        other => other,
    };
    match reply {
        JudgeReply::Prefers { .. } => unreachable!("answered above"),
        JudgeReply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Response::new(Body::empty())
        }
        JudgeReply::Error {
            status,
            retry_after,
        } => {
            let mut b = Response::builder().status(StatusCode::from_u16(status).unwrap());
            if let Some(s) = retry_after {
                b = b.header("retry-after", s.to_string());
            }
            b.body(Body::from(
                json!({"error": {"message": "scripted failure"}}).to_string(),
            ))
            .unwrap()
        }
        JudgeReply::Says(text) => {
            let body = if path.ends_with("/messages") {
                json!({"id": "msg", "type": "message", "role": "assistant", "model": "judge",
                    "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                    "usage": {"input_tokens": 1, "output_tokens": 1}})
            } else {
                json!({"id": "chatcmpl", "object": "chat.completion", "model": "judge",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
            };
            Response::builder()
                .header("content-type", "application/json")
                .body(Body::from(body.to_string()))
                .unwrap()
        }
    }
}
