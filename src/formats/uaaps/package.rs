//! The parts of a UAAPS package an eval installs besides skills, commands and hooks:
//! `agents/<name>/agent.yaml` + `system-prompt.md`, `rules/<name>/RULE.md`,
//! `mcp/servers.json` and `AGENTS.md`. Read and checked when the suite loads, so a broken
//! agent definition is an error naming its file before any agent starts.

use std::collections::BTreeMap;
use std::path::Path;

use crate::diag::Problem;
use crate::formats::LoadCtx;
use crate::suite::{PackageAgent, PackageParts};
use crate::syntax::node::{Node, Value};
use crate::syntax::reader::Doc;

/// The keys of `agent.yaml` assay reads; the package format names `name`, `skills`, `tools`
/// and `params`, and Claude Code's agents add `description` and `model`.
const AGENT_KEYS: &[&str] = &["name", "description", "skills", "tools", "params", "model"];
const SERVER_KEYS: &[&str] = &["command", "args", "env", "url", "type", "headers", "cwd"];

pub fn read_parts(ctx: &LoadCtx, root: &Path, problems: &mut Vec<Problem>) -> PackageParts {
    PackageParts {
        agents: sub_folders(&root.join("agents"))
            .into_iter()
            .filter_map(|(name, dir)| read_agent(ctx, &name, &dir, problems))
            .collect(),
        rules: sub_folders(&root.join("rules"))
            .into_iter()
            .filter_map(|(name, dir)| {
                let file = dir.join("RULE.md");
                if file.is_file() {
                    return Some((name, file));
                }
                problems.push(missing(ctx, &file, "a rule folder needs its RULE.md"));
                None
            })
            .collect(),
        mcp_servers: read_servers(ctx, &root.join("mcp/servers.json"), problems),
        agents_md: root.join("AGENTS.md").is_file(),
        hooks: root.join("hooks/hooks.json").is_file(),
    }
}

/// The folders directly in `dir`, by name, sorted; links are not followed.
fn sub_folders(dir: &Path) -> Vec<(String, std::path::PathBuf)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    out.sort();
    out
}

fn missing(ctx: &LoadCtx, file: &Path, why: &str) -> Problem {
    Problem::error(
        "missing-file",
        &ctx.shown(file),
        format!("{} is missing: {why}", ctx.shown(file).display()),
    )
}

fn read_agent(
    ctx: &LoadCtx,
    name: &str,
    dir: &Path,
    problems: &mut Vec<Problem>,
) -> Option<PackageAgent> {
    let file = dir.join("agent.yaml");
    let prompt_file = dir.join("system-prompt.md");
    if !file.is_file() {
        problems.push(missing(ctx, &file, "an agent folder needs its agent.yaml"));
        return None;
    }
    let (mut doc, node) = match ctx.parse(&file, &ctx.shown(&file)) {
        Ok(parsed) => parsed,
        Err(mut p) => {
            problems.append(&mut p);
            return None;
        }
    };
    let agent = read_agent_doc(&mut doc, &node, name);
    let failed = doc.has_errors();
    problems.append(&mut doc.problems);
    let mut agent = agent.filter(|_| !failed)?;
    match std::fs::read_to_string(&prompt_file) {
        Ok(text) if !text.trim().is_empty() => agent.system_prompt = text,
        Ok(_) => {
            problems.push(Problem::error(
                "empty",
                &ctx.shown(&prompt_file),
                format!("{} is empty", ctx.shown(&prompt_file).display()),
            ));
            return None;
        }
        Err(_) => {
            problems.push(missing(
                ctx,
                &prompt_file,
                "an agent needs its system prompt",
            ));
            return None;
        }
    }
    Some(agent)
}

fn read_agent_doc(doc: &mut Doc, node: &Node, folder: &str) -> Option<PackageAgent> {
    let m = doc.map(node, "")?;
    m.check_keys(doc, "agent.yaml", AGENT_KEYS);
    if let Some(n) = m.opt("name")
        && let Some(name) = doc.text(n, "name")
        && name != folder
    {
        doc.error(
            "name-mismatch",
            n.span,
            "name",
            format!("the agent is named `{name}` but its folder is agents/{folder}/"),
        )
        .help = Some(format!(
            "name the folder agents/{name}/, or the agent `{folder}`"
        ));
    }
    // `tools` as a list, or Claude Code's comma-separated string.
    let tools = match m.opt("tools").map(|n| &n.value) {
        Some(Value::Str(s)) => s
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
        Some(_) => m
            .texts(doc, "tools")
            .unwrap_or_default()
            .into_iter()
            .map(|(t, _)| t)
            .collect(),
        None => Vec::new(),
    };
    if m.has("skills") {
        m.strings(doc, "skills");
    }
    let description = m.text(doc, "description");
    let model = m.text(doc, "model");
    Some(PackageAgent {
        name: folder.to_string(),
        description,
        tools,
        model,
        system_prompt: String::new(),
    })
}

/// `mcp/servers.json`: `{"mcpServers": {...}}` (Claude Code's `.mcp.json` shape),
/// `{"servers": {...}}`, or the servers object itself.
fn read_servers(
    ctx: &LoadCtx,
    file: &Path,
    problems: &mut Vec<Problem>,
) -> BTreeMap<String, serde_json::Value> {
    let mut out = BTreeMap::new();
    if !file.is_file() {
        return out;
    }
    let (mut doc, node) = match ctx.parse(file, &ctx.shown(file)) {
        Ok(parsed) => parsed,
        Err(mut p) => {
            problems.append(&mut p);
            return out;
        }
    };
    let (servers, field) = match ["mcpServers", "servers"]
        .iter()
        .find_map(|k| node.get(k).map(|n| (n, *k)))
    {
        Some((n, k)) => (n, k.to_string()),
        None => (&node, String::new()),
    };
    if let Some(m) = doc.map(servers, &field) {
        for (key, server) in m.entries {
            let at = crate::syntax::reader::join(&field, &key.name);
            let Some(s) = doc.map(server, &at) else {
                continue;
            };
            s.check_keys(&mut doc, "an MCP server", SERVER_KEYS);
            let command = s.opt("command").is_some();
            let url = s.opt("url").is_some();
            if command == url {
                doc.error(
                    "bad-server",
                    server.span,
                    &at,
                    "an MCP server needs either `command` (a program to start) or `url`",
                );
                continue;
            }
            if command {
                s.text(&mut doc, "command");
            } else {
                s.text(&mut doc, "url");
            }
            if s.has("args") {
                s.strings(&mut doc, "args");
            }
            if let Some(env) = s.opt("env")
                && let Some(e) = doc.map(env, &s.path("env"))
            {
                for (k, v) in e.entries {
                    doc.string(v, &e.path(&k.name));
                }
            }
            out.insert(key.name.clone(), server.to_json());
        }
    }
    if doc.has_errors() {
        out.clear();
    }
    problems.append(&mut doc.problems);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(files: &[(&str, &str)]) -> (PackageParts, Vec<Problem>) {
        let d = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let path = d.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let ctx = LoadCtx::new(d.path());
        let mut problems = Vec::new();
        let parts = read_parts(&ctx, d.path(), &mut problems);
        (parts, problems)
    }

    #[test]
    fn reads_agents_rules_servers_and_agents_md() {
        let (p, problems) = parts(&[
            (
                "agents/rev/agent.yaml",
                "name: rev\ndescription: Reviews code.\ntools: Read, Grep\nskills: [lint]\nparams: {depth: 2}\n",
            ),
            ("agents/rev/system-prompt.md", "You review.\n"),
            ("agents/fmt/agent.yaml", "tools: [Read]\nmodel: inherit\n"),
            ("agents/fmt/system-prompt.md", "You format.\n"),
            ("rules/style/RULE.md", "Use tabs.\n"),
            (
                "mcp/servers.json",
                r#"{"mcpServers": {"echo": {"command": "python3", "args": ["e.py"], "env": {"A": "1"}}, "web": {"url": "http://127.0.0.1:1/mcp"}}}"#,
            ),
            ("AGENTS.md", "Be brief.\n"),
        ]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            p.agents.iter().map(|a| &a.name).collect::<Vec<_>>(),
            ["fmt", "rev"]
        );
        assert_eq!(p.agents[1].tools, ["Read", "Grep"]);
        assert_eq!(p.agents[1].description.as_deref(), Some("Reviews code."));
        assert_eq!(p.agents[0].model.as_deref(), Some("inherit"));
        assert_eq!(p.agents[0].system_prompt, "You format.\n");
        assert_eq!(p.rules[0].0, "style");
        assert_eq!(p.mcp_servers.len(), 2);
        assert!(p.agents_md);
    }

    #[test]
    fn broken_parts_are_errors_naming_the_file() {
        let (p, problems) = parts(&[
            ("agents/rev/agent.yaml", "name: reviewer\ntools: 3\n"),
            ("agents/rev/system-prompt.md", "x"),
            ("agents/nop/agent.yaml", "description: x\n"),
            ("agents/bare/system-prompt.md", "x"),
            ("rules/empty/README.md", "x"),
            ("mcp/servers.json", r#"{"s": {"args": ["x"]}}"#),
        ]);
        let text: Vec<String> = problems
            .iter()
            .map(|p| format!("{} {}", p.file.display(), p.message))
            .collect();
        let has = |s: &str| text.iter().any(|t| t.contains(s));
        assert!(
            has("agents/rev/agent.yaml the agent is named `reviewer`"),
            "{text:#?}"
        );
        assert!(has("agents/rev/agent.yaml expected a list"), "{text:#?}");
        assert!(has("agents/nop/system-prompt.md is missing"), "{text:#?}");
        assert!(has("agents/bare/agent.yaml is missing"), "{text:#?}");
        assert!(has("rules/empty/RULE.md is missing"), "{text:#?}");
        assert!(
            has("mcp/servers.json an MCP server needs either"),
            "{text:#?}"
        );
        assert!(p.agents.is_empty() && p.rules.is_empty() && p.mcp_servers.is_empty());
    }
}
