//! Stand-ins for the MCP servers a plugin declares (Claude Code plugin evals' `mocks/`): per
//! server, the tools it answers and how — a canned body (`fixed`) or a model playing the
//! server (`agent`) — with the guards a call's input must pass (`expect:`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

/// One mocked server: the folder name under `mocks/` (the server's key in the plugin's
/// `.mcp.json`), its tools' responders, and the listings saved from the real server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MockServer {
    pub name: String,
    pub tools: BTreeMap<String, Responder>,
    /// `_tools.json`: each tool's description and input schema, as the real server lists
    /// them (a tool without one is listed with a permissive schema).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub listings: BTreeMap<String, ToolListing>,
}

/// A tool as `tools/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolListing {
    pub description: String,
    pub input_schema: serde_json::Value,
}

/// How a mocked tool answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Responder {
    /// The body, with `{{input.<field>}}` and `{{file:<path>}}` filled in; an error result
    /// when `is_error`.
    Fixed {
        body: String,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        expect: Option<Expect>,
        /// The mock's folder (`{{file:…}}` reads only below it) and file.
        base_dir: PathBuf,
        source: PathBuf,
    },
    /// A model answers as the server described by `prompt`, keeping the calls before in
    /// mind; it stops the run when the call meets one of `abort_when`'s conditions.
    Agent {
        prompt: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        abort_when: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        expect: Option<Expect>,
        base_dir: PathBuf,
        source: PathBuf,
    },
}

impl Responder {
    pub fn expect(&self) -> Option<&Expect> {
        match self {
            Responder::Fixed { expect, .. } | Responder::Agent { expect, .. } => expect.as_ref(),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Responder::Fixed { .. } => "fixed",
            Responder::Agent { .. } => "agent",
        }
    }
}

/// `expect:` guards, by field path (`a.b`, `items.0`).
pub type Expect = BTreeMap<String, Guard>;

/// What one field of a call's input must be.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Guard {
    /// One of these values (strings compared as written, numbers and booleans as text).
    OneOf(Vec<String>),
    /// A JavaScript regular expression (`/…/`, flags `i` and `s` only).
    Pattern { source: String, flags: String },
    /// A JSON type: `string`, `number`, `bool`, `object` or `array`.
    Type(String),
    /// Exactly this value.
    Equals(String),
    /// Guards on the fields of an object.
    Fields(Expect),
}

/// The manifests a plugin may have, in Claude Code's order.
pub const MANIFESTS: &[&str] = &[".claude-plugin/plugin.json", "plugin.json"];

/// The MCP servers a plugin declares (its `.mcp.json`, bare or under `mcpServers`, and its
/// manifest's `mcpServers`: inline, or the files it names), by name.
pub fn declared_servers(root: &Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    if let Some(v) = read_json(&root.join(".mcp.json")) {
        out.extend(servers_of(&v));
    }
    for m in MANIFESTS {
        let Some(manifest) = read_json(&root.join(m)) else {
            continue;
        };
        match manifest.get("mcpServers") {
            Some(v @ Value::Object(_)) => out.extend(servers_of(v)),
            Some(Value::String(f)) => out.extend(file_servers(root, f)),
            Some(Value::Array(a)) => {
                for f in a.iter().filter_map(Value::as_str) {
                    out.extend(file_servers(root, f));
                }
            }
            _ => {}
        }
        break;
    }
    out
}

/// `{"mcpServers": {…}}` or a bare `{name: server}`.
fn servers_of(v: &Value) -> BTreeMap<String, Value> {
    let o = v
        .get("mcpServers")
        .and_then(Value::as_object)
        .or_else(|| v.as_object());
    o.into_iter()
        .flatten()
        .filter(|(_, s)| s.is_object())
        .map(|(k, s)| (k.clone(), s.clone()))
        .collect()
}

/// The servers of a file the manifest names, kept inside the plugin.
fn file_servers(root: &Path, rel: &str) -> BTreeMap<String, Value> {
    let rel = PathBuf::from(rel.trim_start_matches("./"));
    if rel.is_absolute() || rel.components().any(|c| c.as_os_str() == "..") {
        return BTreeMap::new();
    }
    read_json(&root.join(rel))
        .map(|v| servers_of(&v))
        .unwrap_or_default()
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}
