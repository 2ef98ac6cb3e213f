//! A package's MCP servers (UAAPS `mcp/servers.json`, Claude Code's `.mcp.json` shape) as
//! ACP's `McpServer`s, which the client passes to `session/new` and `session/load`: a
//! `command` server runs over stdio, a `url` one over HTTP (or SSE, with `"type": "sse"`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// The variable that hands them to the client (taken out of the agent's environment).
pub const VAR: &str = "ASSAY_ACP_MCP_SERVERS";

/// The servers in ACP's wire shape, by name.
pub fn to_acp(servers: &BTreeMap<String, Value>) -> Value {
    Value::Array(servers.iter().map(|(name, s)| one(name, s)).collect())
}

fn one(name: &str, s: &Value) -> Value {
    let pairs = |key: &str| -> Vec<Value> {
        s.get(key)
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| json!({"name": k, "value": v})))
                    .collect()
            })
            .unwrap_or_default()
    };
    match s.get("url").and_then(Value::as_str) {
        Some(url) => {
            let kind = match s.get("type").and_then(Value::as_str) {
                Some("sse") => "sse",
                _ => "http",
            };
            json!({"type": kind, "name": name, "url": url, "headers": pairs("headers")})
        }
        None => json!({
            "name": name,
            "command": s.get("command").and_then(Value::as_str).unwrap_or_default(),
            "args": s.get("args").cloned().filter(Value::is_array).unwrap_or(json!([])),
            "env": pairs("env"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_and_http_servers_take_acp_s_shape() {
        let servers: BTreeMap<String, Value> = serde_json::from_value(json!({
            "echo": {"command": "python3", "args": ["e.py"], "env": {"A": "1"}},
            "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"X": "y"}},
            "events": {"type": "sse", "url": "http://127.0.0.1:2/sse"},
        }))
        .unwrap();
        let acp = to_acp(&servers);
        let parsed: Vec<agent_client_protocol::v1::schema::McpServer> =
            serde_json::from_value(acp.clone()).unwrap();
        assert_eq!(parsed.len(), 3, "{acp}");
        assert_eq!(
            acp[0],
            json!({"name": "echo", "command": "python3", "args": ["e.py"], "env": [{"name": "A", "value": "1"}]})
        );
        assert_eq!(acp[1]["type"], "sse");
        assert_eq!(acp[2]["headers"], json!([{"name": "X", "value": "y"}]));
    }
}
