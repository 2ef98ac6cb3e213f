//! The MCP messages a stand-in answers (JSON-RPC 2.0 over streamable HTTP, one message per
//! request): `initialize`, `ping`, `tools/list` and `tools/call`; a notification has no
//! answer. Everything else is "method not found".

use serde_json::{Value, json};

use super::Session;
use crate::suite::mocks::MockServer;

/// The protocol version answered to a client that asks none.
const PROTOCOL: &str = "2025-06-18";

/// The answer to one message, or `None` for a notification.
pub async fn handle(session: &Session, server: &str, msg: &Value) -> Option<Value> {
    let id = msg.get("id").cloned()?;
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    let result = match (method, session.servers.get(server)) {
        ("initialize", _) => Ok(json!({
            "protocolVersion": params.get("protocolVersion").and_then(Value::as_str).unwrap_or(PROTOCOL),
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": format!("assay-mock-{server}"), "version": env!("CARGO_PKG_VERSION")},
        })),
        ("ping", _) => Ok(json!({})),
        ("tools/list", Some(s)) => Ok(json!({ "tools": listing(s) })),
        ("tools/call", Some(_)) => Ok(call(session, server, &params).await),
        ("tools/list" | "tools/call", None) => Err((-32602, format!("no mocked server {server}"))),
        (m, _) => Err((-32601, format!("method not found: {m}"))),
    };
    Some(match result {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    })
}

/// Each mocked tool, as the real server lists it when `_tools.json` says how.
fn listing(s: &MockServer) -> Vec<Value> {
    s.tools
        .keys()
        .map(|t| match s.listings.get(t) {
            Some(l) => json!({"name": t, "description": l.description, "inputSchema": l.input_schema}),
            None => json!({"name": t, "description": "", "inputSchema": {"type": "object", "additionalProperties": true}}),
        })
        .collect()
}

async fn call(session: &Session, server: &str, params: &Value) -> Value {
    let tool = params.get("name").and_then(Value::as_str).unwrap_or("");
    let input = params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let (text, is_error) = session.call(server, tool, input).await;
    json!({"content": [{"type": "text", "text": text}], "isError": is_error})
}
