//! The host of every case-run's stand-ins: one HTTP server on the host's loopback, on a thread
//! of its own, started on first use. A case-run's sandbox reaches it through the relay every
//! model endpoint takes (its URL is in `ASSAY_MOCKS_BASE_URL`); each case-run's stand-ins are
//! at `/<token>/<server>`, the token random and the case-run's alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;

use super::Session;

/// The largest message a stand-in reads.
const MAX_BODY: usize = 4 << 20;

type Sessions = Arc<Mutex<HashMap<String, Arc<Session>>>>;

struct Host {
    port: u16,
    sessions: Sessions,
}

static HOST: OnceLock<Result<Host, String>> = OnceLock::new();

fn host() -> Result<&'static Host, String> {
    HOST.get_or_init(start).as_ref().map_err(Clone::clone)
}

fn start() -> Result<Host, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot listen on the loopback for MCP stand-ins: {e}"))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    // Made here, so a host that cannot serve is an error of the case-run that asked for it
    // (an infrastructure error), never stand-ins that silently do not answer.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the MCP stand-ins' runtime: {e}"))?;
    let listener = {
        let _in = rt.enter();
        tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?
    };
    let sessions: Sessions = Arc::default();
    let shared = sessions.clone();
    std::thread::Builder::new()
        .name("assay-mcp-mocks".into())
        .spawn(move || serve(rt, listener, shared))
        .map_err(|e| e.to_string())?;
    Ok(Host { port, sessions })
}

fn serve(rt: tokio::runtime::Runtime, listener: tokio::net::TcpListener, sessions: Sessions) {
    rt.block_on(async move {
        let app = axum::Router::new()
            .route("/{token}/{server}", post(message).get(no_stream))
            .layer(DefaultBodyLimit::max(MAX_BODY))
            .with_state(sessions);
        // The server ends with the process.
        if let Err(e) = axum::serve(listener, app).await {
            eprintln!("assay: the MCP stand-ins stopped: {e}");
        }
    });
}

/// Registers a case-run's session: its token and the host's port.
pub fn register(session: Arc<Session>) -> Result<(String, u16), String> {
    let host = host()?;
    let token = format!("{:032x}", rand::random::<u128>());
    host.sessions
        .lock()
        .map_err(|_| "the MCP stand-ins' table is poisoned".to_string())?
        .insert(token.clone(), session);
    Ok((token, host.port))
}

/// Forgets a case-run's session: its URL answers 404 from now on.
pub fn forget(token: &str) {
    if let Some(Ok(host)) = HOST.get()
        && let Ok(mut s) = host.sessions.lock()
    {
        s.remove(token);
    }
}

async fn message(
    State(sessions): State<Sessions>,
    Path((token, server)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> Response {
    let session = sessions.lock().ok().and_then(|s| s.get(&token).cloned());
    let Some(session) = session else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
        let err = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}});
        return (StatusCode::BAD_REQUEST, axum::Json(err)).into_response();
    };
    match super::mcp::handle(&session, &server, &msg).await {
        Some(answer) => axum::Json(answer).into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// No server-sent stream: a stand-in only answers requests.
async fn no_stream() -> StatusCode {
    StatusCode::METHOD_NOT_ALLOWED
}
