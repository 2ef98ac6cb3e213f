//! What the MCP stand-ins of a case-run saw (Claude Code plugin evals' `mocks/`): every call
//! to a mocked tool with its answer, and the mock that stopped the run, if one did.

use serde::{Deserialize, Serialize};

/// The stand-ins of one case-run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MockRecord {
    /// The servers stood in for, each with its tools and how they answer.
    pub servers: Vec<MockedServer>,
    /// Servers the plugin declares that had no mock and were not started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<String>,
    /// The calls, in the order they came.
    pub calls: Vec<MockCall>,
    /// The call that stopped the run: a guard (`expect:`) it broke, or an agent mock's
    /// `abort_when:`. Such a run fails with a score of 0, whatever its graders say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<MockAbort>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MockedServer {
    pub server: String,
    /// Tool name → `fixed` or `agent`.
    pub tools: std::collections::BTreeMap<String, String>,
}

/// One call to a mocked tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MockCall {
    pub server: String,
    pub tool: String,
    /// The tool's name as the agent called it (`mcp__plugin_<plugin>_<server>__<tool>`).
    pub name: String,
    pub input: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// `ok`, `tool_error` or `abort`.
    pub verdict: String,
}

/// Why a mock stopped the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MockAbort {
    pub server: String,
    pub tool: String,
    pub reason: String,
}

impl MockRecord {
    /// The calls as Claude Code's `mock_calls` target shows them: one JSON object per line.
    pub fn calls_text(&self) -> String {
        self.calls
            .iter()
            .map(|c| {
                let mut o = serde_json::Map::new();
                o.insert("tool".into(), c.name.clone().into());
                o.insert("input".into(), c.input.clone());
                if let Some(out) = &c.output {
                    o.insert("output".into(), out.clone().into());
                }
                if c.is_error {
                    o.insert("isError".into(), true.into());
                }
                o.insert("verdict".into(), c.verdict.clone().into());
                serde_json::Value::Object(o).to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
