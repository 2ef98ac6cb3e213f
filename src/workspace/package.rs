//! A UAAPS package installed whole, where each engine reads each part.
//!
//! | part | Claude Code | Codex |
//! |---|---|---|
//! | `skills/<n>/` | `.claude/skills/<n>/` | `.agents/skills/<n>/` |
//! | `commands/<n>.md` | `.claude/commands/<n>.md` | none (no slash commands) |
//! | `hooks/hooks.json` | merged into `.claude/settings.json` | `$CODEX_HOME/hooks.json` (same shape), run with `--dangerously-bypass-hook-trust` |
//! | `agents/<n>/` | `.claude/agents/<n>.md` (front matter + system prompt) | `$CODEX_HOME/agents/<n>.toml` |
//! | `rules/<n>/RULE.md` | `.claude/rules/<n>.md` | appended to `$CODEX_HOME/AGENTS.md` |
//! | `mcp/servers.json` | `.mcp.json` (merged) | `[mcp_servers.<n>]` in `$CODEX_HOME/config.toml` |
//! | `AGENTS.md` | `CLAUDE.md` importing `@AGENTS.md` | read as is |
//!
//! The workspace is a copy of the package, so `AGENTS.md` is already at its root. Codex's
//! parts go into the case-run's private `CODEX_HOME` (`<home>/.codex`), which the Codex
//! harness completes with its own settings ([`crate::harness::codex`]).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::writer::Writer;
use super::{StageError, copy, io};
use crate::suite::{Package, PackageAgent};

/// The conventions of an agent CLI: where it reads skills, agents, rules and MCP servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    ClaudeCode,
    Codex,
}

impl Engine {
    /// Where the engine reads a project's skills, relative to the workspace.
    pub fn skill_root(self) -> &'static str {
        match self {
            Engine::ClaudeCode => super::CLAUDE_SKILLS,
            Engine::Codex => super::AGENT_SKILLS,
        }
    }
}

/// Where the Codex harness keeps its private home, inside the case-run's HOME.
pub const CODEX_HOME: &str = ".codex";

/// Where a Claude Code plugin is staged for `--plugin-dir`, inside the case-run's HOME.
pub const PLUGINS: &str = ".assay-plugins";

/// The plugins staged in a case-run's HOME, for Claude Code's `--plugin-dir`.
pub fn staged_plugins(home: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(home.join(PLUGINS))
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// A Claude Code plugin copied whole into `<home>/.assay-plugins/<name>`, never its eval
/// folders (`evals/`, where its graders are) nor its `results/`.
fn stage_plugin(
    pkg: &Package,
    home: &Path,
    exclude: &[PathBuf],
    stand_ins: Option<&super::stand_ins::StandIns>,
) -> Result<(), StageError> {
    let name = pkg.name.clone().unwrap_or_else(|| "plugin".into());
    let to = home.join(PLUGINS).join(name);
    let mut except: Vec<PathBuf> = exclude.to_vec();
    for e in walkdir_named(&pkg.root, &["evals", "results"]) {
        except.push(e);
    }
    io(
        "stage the plugin from",
        &pkg.root,
        copy::copy_tree_except(&pkg.root, &to, true, &except),
    )?;
    match stand_ins {
        Some(s) => super::stand_ins::rewrite(&to, s),
        None => Ok(()),
    }
}

/// The folders under `root` with one of `names`, found without following links.
fn walkdir_named(root: &Path, names: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.filter_map(Result::ok) {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let p = e.path();
            if names.iter().any(|n| e.file_name() == *n) {
                out.push(p);
            } else {
                stack.push(p);
            }
        }
    }
    out
}

/// Where and how a package is installed.
pub struct Install<'a> {
    /// The engines whose conventions the agent follows.
    pub engines: &'a [Engine],
    /// The engines' skill folders and the harness's own.
    pub roots: &'a [String],
    /// Never installed.
    pub exclude: &'a [PathBuf],
    /// The agent loads a Claude Code plugin whole (`--plugin-dir`).
    pub loads_plugins: bool,
    /// Its MCP servers as mocks give them.
    pub stand_ins: Option<super::stand_ins::StandIns>,
}

/// Installs a package's skills in each of the roots, and its commands, hooks, agents, rules,
/// MCP servers and AGENTS.md for each engine; never what is excluded. A Claude Code plugin is
/// staged whole for an agent that loads plugins, its skills installed for any other.
pub fn install(
    pkg: &Package,
    writer: &Writer,
    home: &Path,
    how: &Install<'_>,
) -> Result<(), StageError> {
    let (engines, roots, exclude) = (how.engines, how.roots, how.exclude);
    if pkg.claude_plugin && how.loads_plugins {
        return stage_plugin(pkg, home, exclude, how.stand_ins.as_ref());
    }
    let src = pkg.root.join("skills");
    // Claude Code loads a plugin's skills from the plugin itself (`--plugin-dir`).
    let by_plugin = |r: &&String| pkg.claude_plugin && r.as_str() == super::CLAUDE_SKILLS;
    for root in roots
        .iter()
        .filter(|_| src.is_dir())
        .filter(|r| !by_plugin(r))
    {
        install_skills(&src, &writer.path(Path::new(root)), exclude)?;
    }
    for engine in engines {
        match engine {
            Engine::ClaudeCode => claude_code(pkg, writer, exclude)?,
            Engine::Codex => codex(pkg, &home.join(CODEX_HOME))?,
        }
    }
    Ok(())
}

/// Each skill of the package's `skills/` into `to`, its files alone ([`copy::copy_skill`]),
/// and the files beside them; a symlink there is left out (it may lead out of the package).
fn install_skills(src: &Path, to: &Path, exclude: &[PathBuf]) -> Result<(), StageError> {
    io("create", to, std::fs::create_dir_all(to))?;
    let entries = io("install the package's", src, std::fs::read_dir(src))?;
    for entry in entries {
        let entry = io("install the package's", src, entry)?;
        let (from, dest) = (entry.path(), to.join(entry.file_name()));
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let skipped = copy::NEVER_SHIPPED.contains(&&*entry.file_name().to_string_lossy());
        if exclude.contains(&from) || (kind.is_dir() && skipped) {
            continue;
        }
        let copied = if kind.is_dir() {
            copy::copy_skill(&from, &dest, exclude)
        } else if kind.is_file() {
            copy::copy_file(&from, &dest)
        } else {
            continue;
        };
        io("install the package's skill", &from, copied)?;
    }
    Ok(())
}

fn claude_code(pkg: &Package, writer: &Writer, exclude: &[PathBuf]) -> Result<(), StageError> {
    let commands = pkg.root.join("commands");
    if commands.is_dir() {
        io(
            "install the package's",
            &commands,
            copy::copy_tree_except(
                &commands,
                &writer.path(Path::new(super::CLAUDE_COMMANDS)),
                false,
                exclude,
            ),
        )?;
    }
    if pkg.parts.hooks {
        super::install_hooks(&pkg.root.join("hooks/hooks.json"), writer)?;
    }
    for agent in &pkg.parts.agents {
        write(
            writer,
            &Path::new(".claude/agents").join(format!("{}.md", agent.name)),
            &claude_agent(agent),
        )?;
    }
    for (name, file) in &pkg.parts.rules {
        let dest = writer.path(&Path::new(".claude/rules").join(format!("{name}.md")));
        io("install the rule", file, copy::copy_file(file, &dest))?;
    }
    if !pkg.parts.mcp_servers.is_empty() {
        let rel = Path::new(".mcp.json");
        let mut config: Value = writer
            .read_to_string(rel)
            .and_then(|t| serde_json::from_str(&t).ok())
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        let servers = config
            .as_object_mut()
            .expect("checked to be an object")
            .entry("mcpServers")
            .or_insert_with(|| json!({}));
        if !servers.is_object() {
            *servers = json!({});
        }
        let servers = servers.as_object_mut().expect("just made an object");
        for (name, server) in &pkg.parts.mcp_servers {
            servers.insert(name.clone(), server.clone());
        }
        let text = serde_json::to_string_pretty(&config).unwrap_or_default();
        write(writer, rel, &text)?;
    }
    if pkg.parts.agents_md {
        // Claude Code reads CLAUDE.md, not AGENTS.md: a CLAUDE.md that imports it.
        let rel = Path::new("CLAUDE.md");
        let existing = writer.read_to_string(rel).unwrap_or_default();
        if !existing.lines().any(|l| l.trim() == "@AGENTS.md") {
            let text = if existing.is_empty() {
                "@AGENTS.md\n".to_string()
            } else {
                format!("{}\n\n@AGENTS.md\n", existing.trim_end())
            };
            write(writer, rel, &text)?;
        }
    }
    Ok(())
}

/// `.claude/agents/<name>.md`: YAML front matter (values JSON-quoted, which YAML reads as
/// plain strings whatever they hold), then the system prompt.
fn claude_agent(agent: &PackageAgent) -> String {
    let q = |s: &str| Value::String(s.to_string()).to_string();
    let description = agent
        .description
        .clone()
        .unwrap_or_else(|| format!("The {} agent.", agent.name));
    let mut front = format!(
        "---\nname: {}\ndescription: {}\n",
        q(&agent.name),
        q(&description)
    );
    if !agent.tools.is_empty() {
        front.push_str(&format!("tools: {}\n", q(&agent.tools.join(", "))));
    }
    if let Some(model) = &agent.model {
        front.push_str(&format!("model: {}\n", q(model)));
    }
    format!("{front}---\n\n{}", agent.system_prompt)
}

fn codex(pkg: &Package, codex_home: &Path) -> Result<(), StageError> {
    let parts = &pkg.parts;
    if parts.agents.is_empty()
        && parts.rules.is_empty()
        && parts.mcp_servers.is_empty()
        && !parts.hooks
    {
        return Ok(());
    }
    io("create", codex_home, std::fs::create_dir_all(codex_home))?;
    if parts.hooks {
        // Codex reads Claude Code's hooks.json shape from its home; the harness runs them
        // without a trust review (`--dangerously-bypass-hook-trust`): the home is the
        // case-run's, holding only what assay put there.
        let from = pkg.root.join("hooks/hooks.json");
        let to = codex_home.join("hooks.json");
        io("install the hooks from", &from, copy::copy_file(&from, &to))?;
    }
    for agent in &parts.agents {
        let mut t = toml::Table::new();
        t.insert("name".into(), agent.name.clone().into());
        t.insert(
            "description".into(),
            agent
                .description
                .clone()
                .unwrap_or_else(|| format!("The {} agent.", agent.name))
                .into(),
        );
        t.insert(
            "developer_instructions".into(),
            agent.system_prompt.clone().into(),
        );
        let dir = codex_home.join("agents");
        io("create", &dir, std::fs::create_dir_all(&dir))?;
        let file = dir.join(format!("{}.toml", agent.name));
        io("write", &file, std::fs::write(&file, t.to_string()))?;
    }
    if !parts.rules.is_empty() {
        // Codex reads project instructions from AGENTS.md files only; its home's AGENTS.md
        // holds instructions for every project.
        let mut text = String::new();
        for (name, file) in &parts.rules {
            let rule = io("read the rule", file, std::fs::read_to_string(file))?;
            text.push_str(&format!("# Rule: {name}\n\n{}\n\n", rule.trim_end()));
        }
        let file = codex_home.join("AGENTS.md");
        io("write", &file, std::fs::write(&file, text))?;
    }
    if !parts.mcp_servers.is_empty() {
        let mut servers = toml::Table::new();
        for (name, server) in &parts.mcp_servers {
            if let Some(t) = toml_of(server) {
                servers.insert(name.clone(), t);
            }
        }
        let mut doc = toml::Table::new();
        doc.insert("mcp_servers".into(), toml::Value::Table(servers));
        let file = codex_home.join("config.toml");
        io("write", &file, std::fs::write(&file, doc.to_string()))?;
    }
    Ok(())
}

/// A JSON value as TOML (nulls dropped; TOML has none).
fn toml_of(v: &Value) -> Option<toml::Value> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64()?),
        },
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(a) => toml::Value::Array(a.iter().filter_map(toml_of).collect()),
        Value::Object(o) => toml::Value::Table(
            o.iter()
                .filter_map(|(k, v)| Some((k.clone(), toml_of(v)?)))
                .collect(),
        ),
    })
}

fn write(writer: &Writer, rel: &Path, text: &str) -> Result<(), StageError> {
    let path = writer.path(rel);
    if let Some(parent) = path.parent() {
        io("create", parent, std::fs::create_dir_all(parent))?;
    }
    io("write", &path, std::fs::write(&path, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_agent_file_quotes_what_it_is_given() {
        let a = PackageAgent {
            name: "rev".into(),
            description: Some("Reviews: code\n---\nname: evil".into()),
            tools: vec!["Read".into(), "Grep".into()],
            model: Some("inherit".into()),
            system_prompt: "You review.\n".into(),
        };
        let text = claude_agent(&a);
        assert_eq!(
            text,
            "---\nname: \"rev\"\ndescription: \"Reviews: code\\n---\\nname: evil\"\ntools: \"Read, Grep\"\nmodel: \"inherit\"\n---\n\nYou review.\n"
        );
        assert_eq!(
            crate::suite::skill::front_matter_field(&text, "description").as_deref(),
            Some("Reviews: code\n---\nname: evil")
        );
    }

    #[test]
    fn mcp_servers_become_codex_tables() {
        let v = json!({"command": "python3", "args": ["s.py"], "env": {"A": "1"}, "x": null});
        let mut servers = toml::Table::new();
        servers.insert("echo".into(), toml_of(&v).unwrap());
        let mut doc = toml::Table::new();
        doc.insert("mcp_servers".into(), toml::Value::Table(servers));
        let back: toml::Table = doc.to_string().parse().unwrap();
        let echo = &back["mcp_servers"]["echo"];
        assert_eq!(echo["command"].as_str(), Some("python3"));
        assert_eq!(echo["args"][0].as_str(), Some("s.py"));
        assert_eq!(echo["env"]["A"].as_str(), Some("1"));
        assert!(echo.get("x").is_none());
    }
}
