//! Claude Code's advisories for a plugin-eval case, before it runs: a grader that cannot pass
//! with the tools the run grants (a file check when no tool can write a file, a `tool_used`
//! or `tool_order` on a tool the case is not granted or keeps from itself), in Claude Code's
//! words, so a pilot run that scores 0 in both arms is not read as "the plugin did nothing".

use serde_json::Value;

use crate::harness::claude_code::kept_tools;
use crate::suite::{Case, ToolGrants};

/// The tools that can create a file.
const CREATORS: &[&str] = &["Bash", "PowerShell", "Write", "Edit", "NotebookEdit"];

/// The advisories of a gated case (Claude Code plugin evals) run with `grants`, from its
/// graders as Claude Code lists them; `scaffolded` when its scaffold runs (a file it makes
/// may be what a file target reads).
pub fn of_case(case: &Case, grants: &ToolGrants, scaffolded: bool) -> Vec<String> {
    let graders = case
        .native
        .as_ref()
        .and_then(|n| n.get("graders"))
        .and_then(Value::as_array);
    let (Some(graders), true) = (graders, case.agent.gated) else {
        return Vec::new();
    };
    let grader = |g: &Value| -> (String, String, Value) {
        let s = |k: &str| g.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        (
            s("name"),
            s("type"),
            g.get("config").cloned().unwrap_or(Value::Null),
        )
    };
    let kept = kept_tools(&case.agent, grants);
    let mut out = Vec::new();
    if CREATORS.iter().all(|t| kept.iter().any(|k| k == t)) {
        let listed: Vec<&str> = CREATORS
            .iter()
            .copied()
            .filter(|t| denied(case, grants, t))
            .collect();
        for (name, kind, config) in graders.iter().map(grader) {
            if needs_a_file(&kind, &config, scaffolded) {
                out.push(no_file_tool(&name, &listed));
            }
        }
    }
    for (name, kind, config) in graders.iter().map(grader) {
        for tool in called_tools(&kind, &config) {
            if kept.contains(&tool) {
                out.push(withheld_tool(denied(case, grants, &tool), &name, &tool));
            }
        }
    }
    out
}

/// Whether the case or the run keeps `tool` from the agent by name.
fn denied(case: &Case, grants: &ToolGrants, tool: &str) -> bool {
    case.agent
        .disallowed_tools
        .iter()
        .chain(&grants.deny)
        .any(|d| d == tool)
}

fn withheld_tool(denied: bool, name: &str, tool: &str) -> String {
    if denied {
        format!(
            "grader \"{name}\" cannot pass: it needs a {tool} call in the trace, but {tool} is in the case's disallowed_tools or --disallow-tools, so no call can occur — change that list (and grant the tool if it is not granted), or drop the grader"
        )
    } else {
        format!(
            "grader \"{name}\" cannot pass with the granted tools: it needs a {tool} call in the trace, but {tool} is not granted, so the run withholds it from the model and no call (not even a refused one) can occur — add {tool} to the case's allowed_tools and grant it with --allow-tools {tool}"
        )
    }
}

fn no_file_tool(id: &str, listed: &[&str]) -> String {
    if listed.is_empty() {
        format!(
            "grader \"{id}\" cannot pass with the granted tools: it checks a file the run creates, but no tool the run may use can create one (a plugin hook still could; a skill's own allowed-tools does not count inside a run) — add Write (or Edit / Bash) to the case's allowed_tools and grant it with --allow-tools"
        )
    } else {
        format!(
            "grader \"{id}\" cannot pass: it checks a file the run creates, but no tool the run may use can create one (a plugin hook still could), and the case's disallowed_tools or --disallow-tools lists {} — take one off that list and grant it (allowed_tools and --allow-tools), or drop the grader",
            listed.join(", ")
        )
    }
}

/// A grader that passes only when the run made a file: `file_exists` (not `exists: false`),
/// a positive match over `files`, any grader reading a file (unless a scaffold made it).
fn needs_a_file(kind: &str, config: &Value, scaffolded: bool) -> bool {
    let on = match kind {
        "file_exists" => return config.get("exists") != Some(&Value::Bool(false)),
        "regex" => config.get("target"),
        "llm" => config.get("focus"),
        _ => return false,
    };
    match on {
        Some(Value::Object(_)) => !scaffolded,
        Some(Value::String(s)) if s == "files" && kind == "regex" => {
            match config
                .get("match")
                .and_then(Value::as_str)
                .unwrap_or("contains")
            {
                "not_contains" => false,
                m => m.strip_prefix("count:").is_none_or(|n| n.trim() != "0"),
            }
        }
        _ => false,
    }
}

/// The tools a `tool_used` (at least once) or `tool_order` grader needs called.
fn called_tools(kind: &str, config: &Value) -> Vec<String> {
    let name = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let mut out: Vec<String> = match kind {
        "tool_used" if config.get("min").and_then(Value::as_u64).unwrap_or(1) >= 1 => {
            name(config.get("tool")).into_iter().collect()
        }
        "tool_order" => [
            name(config.pointer("/before/tool")),
            name(config.pointer("/after/tool")),
        ]
        .into_iter()
        .flatten()
        .collect(),
        _ => Vec::new(),
    };
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::Location;
    use serde_json::json;

    fn case(graders: Value) -> Case {
        let loc = Location {
            file: "c".into(),
            line: 1,
            column: 1,
        };
        let mut c = Case::new("c", loc, vec!["hi".into()]);
        c.agent.gated = true;
        c.agent.allowed_tools = vec!["Write".into(), "Read".into()];
        c.native = Some(json!({ "graders": graders }));
        c
    }

    #[test]
    fn a_file_grader_with_no_writing_tool_and_a_tool_grader_on_a_withheld_tool_are_named() {
        let c = case(json!([
            {"name": "g0", "type": "file_exists", "config": {"path": "out/*.md", "exists": true}},
            {"name": "g1", "type": "file_exists", "config": {"path": "x", "exists": false}},
            {"name": "g2", "type": "regex", "config": {"target": "files", "match": "count:0"}},
            {"name": "g3", "type": "llm", "config": {"focus": {"source": "file", "path": "a"}}},
            {"name": "g4", "type": "tool_used", "config": {"tool": "Bash"}},
            {"name": "g5", "type": "tool_used", "config": {"tool": "Bash", "min": 0}},
        ]));
        let none = ToolGrants::default();
        let got = of_case(&c, &none, false);
        assert_eq!(got.len(), 3, "{got:#?}");
        assert!(
            got[0]
                .starts_with("grader \"g0\" cannot pass with the granted tools: it checks a file")
        );
        assert!(got[1].starts_with("grader \"g3\""));
        assert!(
            got[2].contains(
                "add Bash to the case's allowed_tools and grant it with --allow-tools Bash"
            )
        );
        // Granting Write (listed by the case) and Bash clears them.
        let mut grants = ToolGrants {
            allow: vec!["Write".into(), "Bash".into()],
            deny: Vec::new(),
        };
        assert!(of_case(&c, &grants, false).is_empty());
        // Keeping Bash from every case (`--disallow-tools`) says so, over the grant.
        grants.deny.push("Bash".into());
        let got = of_case(&c, &grants, false);
        assert!(
            got[0].contains("Bash is in the case's disallowed_tools or --disallow-tools"),
            "{got:#?}"
        );
    }
}
