//! A staged Claude Code plugin's MCP servers as a run with mocks gives them to the agent
//! (Claude Code plugin evals' `--mocks`, on by default): a mocked server points at assay's
//! stand-in for it, over HTTP at `${ASSAY_MOCKS_BASE_URL}/<server>`; a server with no mock is
//! not started, unless `--allow-real-servers`. The plugin keeps its servers' names, so the
//! tools keep theirs (`mcp__plugin_<plugin>_<server>__<tool>`).

use std::path::Path;

use serde_json::{Map, Value, json};

use super::StageError;

/// The variable the agent's environment gives the case-run's stand-ins' base URL in.
pub const URL_VAR: &str = "ASSAY_MOCKS_BASE_URL";

/// What a run with mocks does to a staged plugin's MCP servers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StandIns {
    /// The servers with a mock (`mocks/<server>/`).
    pub mocked: Vec<String>,
    /// `--allow-real-servers`: a server with no mock starts for real.
    pub keep_unmocked: bool,
}

/// The servers a declared plugin will not start: those with no mock (none with
/// `keep_unmocked`).
pub fn withheld(root: &Path, s: &StandIns) -> Vec<String> {
    if s.keep_unmocked {
        return Vec::new();
    }
    crate::suite::mocks::declared_servers(root)
        .into_keys()
        .filter(|n| !s.mocked.contains(n))
        .collect()
}

/// Rewrites the staged plugin at `dir`: one `.mcp.json` with the stand-ins, the servers kept,
/// and no `mcpServers` left in its manifest.
pub fn rewrite(dir: &Path, s: &StandIns) -> Result<(), StageError> {
    let mut servers = Map::new();
    for (name, server) in crate::suite::mocks::declared_servers(dir) {
        if s.mocked.contains(&name) {
            continue;
        }
        if s.keep_unmocked {
            servers.insert(name, server);
        }
    }
    for name in &s.mocked {
        servers.insert(
            name.clone(),
            json!({"type": "http", "url": format!("${{{URL_VAR}}}/{name}")}),
        );
    }
    for m in crate::suite::mocks::MANIFESTS {
        let path = dir.join(m);
        if let Some(Value::Object(mut manifest)) = read_json(&path)
            && manifest.remove("mcpServers").is_some()
        {
            write(&path, &Value::Object(manifest))?;
        }
    }
    write(&dir.join(".mcp.json"), &json!({ "mcpServers": servers }))
}

fn write(path: &Path, v: &Value) -> Result<(), StageError> {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    super::io(
        "write the MCP stand-ins into",
        path,
        std::fs::write(path, text),
    )
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mocked_servers_point_at_the_stand_in_and_the_rest_are_withheld() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::write(
            d.join(".mcp.json"),
            r#"{"real": {"command": "x"}, "tracker": {"type": "http", "url": "https://t"}}"#,
        )
        .unwrap();
        std::fs::create_dir(d.join(".claude-plugin")).unwrap();
        std::fs::write(
            d.join(".claude-plugin/plugin.json"),
            r#"{"name": "p", "mcpServers": {"inline": {"command": "y"}}}"#,
        )
        .unwrap();
        assert_eq!(
            crate::suite::mocks::declared_servers(d)
                .into_keys()
                .collect::<Vec<_>>(),
            ["inline", "real", "tracker"]
        );
        let s = StandIns {
            mocked: vec!["tracker".into()],
            keep_unmocked: false,
        };
        assert_eq!(withheld(d, &s), ["inline", "real"]);
        rewrite(d, &s).unwrap();
        let v = read_json(&d.join(".mcp.json")).unwrap();
        assert_eq!(
            v,
            json!({"mcpServers": {"tracker": {"type": "http", "url": "${ASSAY_MOCKS_BASE_URL}/tracker"}}})
        );
        assert!(
            read_json(&d.join(".claude-plugin/plugin.json"))
                .unwrap()
                .get("mcpServers")
                .is_none()
        );
        let keep = StandIns {
            mocked: vec!["tracker".into()],
            keep_unmocked: true,
        };
        rewrite(d, &keep).unwrap();
        assert!(crate::suite::mocks::declared_servers(d).contains_key("tracker"));
    }
}
