//! A case's MCP mocks, read as Claude Code 2.1.332 reads them: a `mocks/` folder in each
//! folder from the eval folder down to the case (the case's last), each holding
//! `<server>/<tool>.md` (a responder for one tool), `<server>/_server.md` (one `type: agent`
//! answering the tools it lists) and `<server>/_tools.json` (the real server's `tools/list`).
//! A deeper layer's `<tool>.md` replaces a shallower one's; the deepest `_server.md` wins.
//! The refusals are Claude Code's, in its words.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::front_matter;
use crate::suite::mocks::{Expect, Guard, MockServer, Responder, ToolListing};

/// The most entries Claude Code reads in `mocks/` or one server's folder.
const MAX_ENTRIES: usize = 256;
/// The most guards one responder's `expect:` may carry.
const MAX_GUARDS: usize = 32;
/// The body of a stub `claude plugin eval init` writes, which must be filled in before a run.
pub const STUB: &str = "TODO: replace with the canned result this tool should return";
const SERVER_FILE: &str = "_server.md";
const TOOLS_FILE: &str = "_tools.json";
const KEYS: &str = "(keys: type, expect, error, tools, abort_when)";

/// The folders whose `mocks/` apply to the case at `case_dir`, shallowest first: from the
/// eval folder holding it down to the case itself.
pub fn layers(root: &Path, case_dir: &Path) -> Vec<PathBuf> {
    let evals = match super::plugin::configured_eval_dir(root) {
        Some(rel) => root.join(rel),
        None => case_dir
            .ancestors()
            .skip(1)
            .find(|a| a.file_name().is_some_and(|n| n == "evals"))
            .map_or_else(|| case_dir.to_path_buf(), Path::to_path_buf),
    };
    let mut out: Vec<PathBuf> = case_dir
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(&evals))
        .map(Path::to_path_buf)
        .collect();
    out.reverse();
    out.push(case_dir.to_path_buf());
    out
}

/// The warning for the servers the plugin declares that have no mock: with mocks on (the
/// default) they are not started, unless `--allow-real-servers`.
pub fn unmocked_warning(plugin: &Path, mocks: &[MockServer]) -> Option<String> {
    let names: Vec<String> = crate::suite::mocks::declared_servers(plugin)
        .into_keys()
        .filter(|n| !mocks.iter().any(|m| &m.name == n))
        .map(|n| format!("\"{n}\""))
        .collect();
    let (has, is, its, them) = match names.len() {
        0 => return None,
        1 => ("has", "is", "its", "it"),
        _ => ("have", "are", "their", "them"),
    };
    Some(format!(
        "mocks: {} {has} no mock and {is} NOT started — {its} tools are unavailable this run; add mocks/<server>/ to mock {them}, or pass --allow-real-servers to run the plugin's real {} (inside assay's sandbox), or --mocks off",
        names.join(", "),
        if names.len() == 1 {
            "server"
        } else {
            "servers"
        }
    ))
}

/// One layer's servers: the tool files, the `_server.md` agent with the tools it answers,
/// and the listings.
#[derive(Default)]
struct Layer {
    tool_files: BTreeMap<String, Responder>,
    server_agent: Option<(Responder, Vec<String>)>,
    listings: BTreeMap<String, ToolListing>,
}

/// A refusal: the file (or folder) it is about, and why.
pub type Refusal = (PathBuf, String);

/// The merged servers of the case, and warnings; `Err` is a refusal.
pub fn read(layers: &[PathBuf]) -> Result<(Vec<MockServer>, Vec<String>), Refusal> {
    let mut by_server: BTreeMap<String, Vec<Layer>> = BTreeMap::new();
    for dir in layers {
        let mocks = dir.join("mocks");
        for (name, layer) in read_layer(&mocks)? {
            by_server.entry(name).or_default().push(layer);
        }
    }
    let mut warnings = Vec::new();
    let mut servers = Vec::new();
    for (name, layers) in by_server {
        let server = merge(&name, layers, &mut warnings);
        if server.tools.is_empty() {
            warnings.push(format!(
                "mocks: mocks/{name}/ has no <tool>.md responders in any layer — nothing is mocked for {name}"
            ));
            continue;
        }
        servers.push(server);
    }
    Ok((servers, warnings))
}

fn merge(name: &str, layers: Vec<Layer>, warnings: &mut Vec<String>) -> MockServer {
    let mut tools = BTreeMap::new();
    let mut listings = BTreeMap::new();
    let agent = layers.iter().rev().find_map(|l| l.server_agent.clone());
    if let Some((responder, names)) = &agent {
        for t in names {
            tools.insert(t.clone(), responder.clone());
        }
    }
    for l in layers {
        for (t, r) in l.tool_files {
            if agent.as_ref().is_some_and(|(_, names)| names.contains(&t)) {
                warnings.push(format!(
                    "mocks: {name}/{SERVER_FILE} will not see {t} — answered by {name}/{t}.md, so its abort_when does not cover that tool"
                ));
            }
            tools.insert(t, r);
        }
        listings.extend(l.listings);
    }
    MockServer {
        name: name.to_string(),
        tools,
        listings,
    }
}

/// The servers of one `mocks/` folder (none when it is missing).
fn read_layer(mocks: &Path) -> Result<Vec<(String, Layer)>, Refusal> {
    let refuse = |why: String| (mocks.to_path_buf(), why);
    let meta = match std::fs::symlink_metadata(mocks) {
        Ok(m) => m,
        Err(_) => return Ok(Vec::new()),
    };
    if meta.file_type().is_symlink() && !mocks.exists() {
        return Err(refuse(
            "mocks/ is a symbolic link whose target does not exist".into(),
        ));
    }
    if !mocks.is_dir() {
        return Err(refuse("mocks is not a directory".into()));
    }
    let entries =
        sorted_entries(mocks).map_err(|e| refuse(format!("mocks/ is unreadable ({e})")))?;
    if entries.len() > MAX_ENTRIES {
        return Err(refuse(format!(
            "mocks/ has {} entries (cap: {MAX_ENTRIES})",
            entries.len()
        )));
    }
    let mut out = Vec::new();
    for (name, path) in entries {
        if !path.is_dir() {
            continue;
        }
        if !is_segment(&name) {
            return Err((
                path,
                format!(
                    "mocks/{name}/: name the directory after the server segment of the tool name (letters, digits, \"_\" and \"-\" only)"
                ),
            ));
        }
        if name.contains("__") {
            return Err((
                path,
                format!(
                    "mocks/{name}/: \"__\" is the tool-name separator and cannot appear in a mock directory name"
                ),
            ));
        }
        let layer = read_server(&path, &name).map_err(|(p, why)| (path.join(p), why))?;
        out.push((name.clone(), layer));
    }
    Ok(out)
}

fn sorted_entries(dir: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        out.push((e.file_name().to_string_lossy().into_owned(), e.path()));
    }
    out.sort();
    Ok(out)
}

/// Letters, digits, `_` and `-`: what a tool name's segment may hold.
fn is_segment(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// One server's folder; a refusal names a file in it (relative), or the folder (empty).
fn read_server(dir: &Path, server: &str) -> Result<Layer, Refusal> {
    let entries = sorted_entries(dir).map_err(|e| {
        (
            PathBuf::new(),
            format!("mocks/{server}/ is unreadable ({e})"),
        )
    })?;
    if entries.len() > MAX_ENTRIES {
        return Err((
            PathBuf::new(),
            format!(
                "mocks/{server}/ has {} entries (cap: {MAX_ENTRIES})",
                entries.len()
            ),
        ));
    }
    let mut layer = Layer::default();
    for (name, path) in entries {
        read_entry(&mut layer, (&name, &path), dir, server)
            .map_err(|why| (PathBuf::from(&name), why))?;
    }
    Ok(layer)
}

fn read_entry(
    layer: &mut Layer,
    (name, path): (&str, &Path),
    dir: &Path,
    server: &str,
) -> Result<(), String> {
    {
        if name == TOOLS_FILE {
            layer.listings = listings(path, server)?;
            return Ok(());
        }
        let Some(tool) = name.strip_suffix(".md") else {
            return Ok(());
        };
        if !path.is_file() {
            return Ok(());
        }
        if name == SERVER_FILE {
            layer.server_agent = Some(server_agent(path, dir, server)?);
            return Ok(());
        }
        if !is_segment(tool) {
            return Err(format!(
                "mocks/{server}/{name}: name responder files after the tool (letters, digits, \"_\" and \"-\" only), e.g. list_issues.md"
            ));
        }
        if tool.contains("__") {
            return Err(format!(
                "mocks/{server}/{name}: \"__\" is the tool-name separator and cannot appear in a mocked tool name"
            ));
        }
        let (responder, _) = responder(path, dir, server, false)?;
        layer.tool_files.insert(tool.to_string(), responder);
    }
    Ok(())
}

fn server_agent(path: &Path, dir: &Path, server: &str) -> Result<(Responder, Vec<String>), String> {
    let at = format!("mocks/{server}/{SERVER_FILE}");
    let (responder, tools) = responder(path, dir, server, true)?;
    if !matches!(responder, Responder::Agent { .. }) {
        return Err(format!(
            "{at}: only `type: agent` is meaningful here (one agent answering several tools); put a fixed answer in <tool>.md"
        ));
    }
    if tools.is_empty() {
        return Err(format!(
            "{at}: an agent answering several tools needs `tools: [...]`"
        ));
    }
    if tools.len() > 1 && responder.expect().is_some() {
        return Err(format!(
            "{at}: `expect:` here would guard all {} tools it answers; put the guard on the one tool it is meant for as mocks/{server}/<tool>.md",
            tools.len()
        ));
    }
    Ok((responder, tools))
}

/// One responder file: its front matter checked strictly, its body.
fn responder(
    path: &Path,
    dir: &Path,
    server: &str,
    is_server: bool,
) -> Result<(Responder, Vec<String>), String> {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let at = format!("mocks/{server}/{file}");
    let md = front_matter::read(path, Path::new(&at), &at)?;
    let fm = md
        .front
        .as_ref()
        .map_or(Value::Object(Default::default()), |n| n.to_json());
    let fm = front(&fm).map_err(|(field, why)| format!("{at}: {field}: {why} {KEYS}"))?;
    let expect = match &fm.expect {
        Some(v) => Some(expect(v, "").map_err(|why| format!("{at}: {why}"))?),
        None => None,
    };
    if !fm.tools.is_empty() && !is_server {
        return Err(format!(
            "{at}: `tools:` belongs in {SERVER_FILE} (a <tool>.md answers the tool it is named after)"
        ));
    }
    let body = md.body.trim_start_matches('\n').trim_end().to_string();
    let (base_dir, source) = (dir.to_path_buf(), path.to_path_buf());
    let responder = if fm.agent {
        if fm.error.is_some() {
            return Err(format!("{at}: `error:` applies to fixed responders only"));
        }
        if body.is_empty() || body.contains(STUB) {
            let stub = if body.is_empty() {
                ""
            } else {
                " (it still holds the scaffolded placeholder)"
            };
            return Err(format!(
                "{at}: an agent responder needs a description of the server it plays as its body{stub}"
            ));
        }
        Responder::Agent {
            prompt: body,
            abort_when: fm.abort_when.filter(|a| !a.trim().is_empty()),
            expect,
            base_dir,
            source,
        }
    } else {
        if fm.abort_when.is_some() {
            return Err(format!(
                "{at}: `abort_when:` needs `type: agent`; a fixed responder guards its input with `expect:`"
            ));
        }
        if body.contains(STUB) {
            return Err(format!(
                "{at}: still holds the scaffolded placeholder — write the tool's canned answer as the body"
            ));
        }
        Responder::Fixed {
            body,
            is_error: fm.error.unwrap_or(false),
            expect,
            base_dir,
            source,
        }
    };
    Ok((responder, fm.tools))
}

/// A responder's front matter, read as Claude Code's strict schema reads it.
struct Front {
    agent: bool,
    expect: Option<Value>,
    error: Option<bool>,
    tools: Vec<String>,
    abort_when: Option<String>,
}

/// `Err((field, message))` in zod's words.
fn front(fm: &Value) -> Result<Front, (String, String)> {
    let Some(o) = fm.as_object() else {
        return Err(("frontmatter".into(), "Expected object".into()));
    };
    if let Some(k) = o
        .keys()
        .find(|k| !["type", "expect", "error", "tools", "abort_when"].contains(&k.as_str()))
    {
        return Err((
            "frontmatter".into(),
            format!("Unrecognized key(s) in object: '{k}'"),
        ));
    }
    let agent = match o.get("type") {
        None => false,
        Some(Value::String(s)) if s == "fixed" => false,
        Some(Value::String(s)) if s == "agent" => true,
        Some(v) => return Err(("type".into(), enum_message(v))),
    };
    let expect = match o.get("expect") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_)) => Some(v.clone()),
        Some(v) => return Err(("expect".into(), expected("object", v))),
    };
    let error = match o.get("error") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(v) => return Err(("error".into(), expected("boolean", v))),
    };
    let tools = match o.get("tools") {
        None => Vec::new(),
        Some(Value::Array(a)) => tool_names(a)?,
        Some(v) => return Err(("tools".into(), expected("array", v))),
    };
    let abort_when = match o.get("abort_when") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => return Err(("abort_when".into(), expected("string", v))),
    };
    Ok(Front {
        agent,
        expect,
        error,
        tools,
        abort_when,
    })
}

fn tool_names(a: &[Value]) -> Result<Vec<String>, (String, String)> {
    let mut out = Vec::new();
    for (i, v) in a.iter().enumerate() {
        let Value::String(s) = v else {
            return Err((format!("tools.{i}"), expected("string", v)));
        };
        if !is_segment(s) {
            return Err((
                format!("tools.{i}"),
                "tool names may contain only letters, digits, \"_\" and \"-\"".into(),
            ));
        }
        out.push(s.clone());
    }
    Ok(out)
}

fn enum_message(v: &Value) -> String {
    format!(
        "Invalid enum value. Expected 'fixed' | 'agent', received {}",
        match v {
            Value::String(s) => format!("'{s}'"),
            other => other.to_string(),
        }
    )
}

fn expected(kind: &str, v: &Value) -> String {
    let got = match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    format!("Expected {kind}, received {got}")
}

/// `expect:` into guards, refused as Claude Code refuses it.
fn expect(v: &Value, at: &str) -> Result<Expect, String> {
    if at.is_empty() && count_guards(v) > MAX_GUARDS {
        return Err(format!(
            "expect: {} guards is more than the {MAX_GUARDS} one responder may carry — every call checks each of them; keep the ones that catch a wrong call",
            count_guards(v)
        ));
    }
    let mut out = Expect::new();
    for (k, g) in v.as_object().into_iter().flatten() {
        let path = if at.is_empty() {
            k.clone()
        } else {
            format!("{at}.{k}")
        };
        out.insert(k.clone(), guard(g, &path)?);
    }
    Ok(out)
}

fn count_guards(v: &Value) -> usize {
    v.as_object().into_iter().flatten().fold(0, |n, (_, g)| {
        n + if g.is_object() { count_guards(g) } else { 1 }
    })
}

fn guard(g: &Value, path: &str) -> Result<Guard, String> {
    Ok(match g {
        Value::Array(a) if a.is_empty() => {
            return Err(format!(
                "expect.{path}: an empty list of allowed values can never be satisfied — list at least one"
            ));
        }
        Value::Array(a) => Guard::OneOf(a.iter().map(scalar_text).collect()),
        Value::Object(_) => Guard::Fields(expect(g, path)?),
        other => {
            let s = scalar_text(other);
            match pattern(&s) {
                Some((source, flags)) => {
                    if flags.chars().any(|c| !matches!(c, 'i' | 's')) {
                        return Err(format!(
                            "expect.{path}: {s} — only the i and s flags are supported in expect: guards"
                        ));
                    }
                    if let Err(e) = regress::Regex::with_flags(&source, flags.as_str()) {
                        return Err(format!(
                            "expect.{path}: invalid regular expression {s} ({e}) — a value written /like this/ is read as a regex; for a literal that starts and ends with a slash, write a one-element list: [\"{s}\"]"
                        ));
                    }
                    Guard::Pattern { source, flags }
                }
                None if ["string", "number", "bool", "boolean", "object", "array"]
                    .contains(&s.as_str()) =>
                {
                    Guard::Type(s)
                }
                None => Guard::Equals(s),
            }
        }
    })
}

/// `/source/flags`, as a guard written like a JavaScript regular expression literal.
pub fn pattern(s: &str) -> Option<(String, String)> {
    let rest = s.strip_prefix('/')?;
    let end = rest.rfind('/')?;
    let (source, flags) = (&rest[..end], &rest[end + 1..]);
    (!source.is_empty() && flags.chars().all(|c| c.is_ascii_lowercase()))
        .then(|| (source.to_string(), flags.to_string()))
}

/// A YAML scalar as JavaScript's `String()` writes it.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// `_tools.json`: a saved `tools/list` response (bare, or the JSON-RPC reply holding it).
fn listings(path: &Path, server: &str) -> Result<BTreeMap<String, ToolListing>, String> {
    let at = format!("mocks/{server}/{TOOLS_FILE}");
    let text = std::fs::read_to_string(path).map_err(|e| format!("{at} is unreadable ({e})"))?;
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("{at}: not valid JSON ({e})"))?;
    let v = v.get("result").cloned().unwrap_or(v);
    let shape = || {
        format!(
            "{at}: expected a saved tools/list response ({{\"tools\": [{{\"name\", \"description\", \"inputSchema\"}}]}})"
        )
    };
    let tools = v.get("tools").and_then(Value::as_array).ok_or_else(shape)?;
    let mut out = BTreeMap::new();
    for t in tools {
        let name = t
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(shape)?;
        let description = match t.get("description") {
            None => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(shape()),
        };
        let input_schema = match t.get("inputSchema") {
            None => serde_json::json!({"type": "object"}),
            Some(s @ Value::Object(_)) => s.clone(),
            Some(_) => return Err(shape()),
        };
        out.insert(
            name.to_string(),
            ToolListing {
                description,
                input_schema,
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn layers_run_from_the_eval_folder_down_to_the_case() {
        let root = Path::new("/p");
        let got = layers(root, Path::new("/p/evals/skill/case"));
        assert_eq!(
            got,
            vec![
                PathBuf::from("/p/evals"),
                PathBuf::from("/p/evals/skill"),
                PathBuf::from("/p/evals/skill/case")
            ]
        );
    }

    #[test]
    fn a_deeper_tool_file_replaces_a_shallower_one_and_the_server_agent() {
        let t = tempfile::tempdir().unwrap();
        let (evals, case) = (t.path().join("evals"), t.path().join("evals/c"));
        write(&evals, "mocks/s/a.md", "outer {{input.x}}");
        write(
            &evals,
            "mocks/s/_server.md",
            "---\ntype: agent\ntools: [a, b]\n---\nA fake server.",
        );
        write(&case, "mocks/s/a.md", "---\nerror: true\n---\ninner");
        let (servers, warnings) = read(&[evals, case]).unwrap();
        let s = &servers[0];
        assert!(
            matches!(&s.tools["a"], Responder::Fixed { body, is_error: true, .. } if body == "inner")
        );
        assert!(matches!(&s.tools["b"], Responder::Agent { .. }));
        assert!(warnings[0].contains("will not see a"), "{warnings:?}");
    }

    #[test]
    fn refusals_are_claude_codes() {
        let cases = [
            (
                "mocks/s/t.md",
                "---\ntype: fixed\nabort_when: x\n---\nbody",
                "`abort_when:` needs `type: agent`",
            ),
            (
                "mocks/s/t.md",
                "---\nfoo: 1\n---\nbody",
                "Unrecognized key(s) in object: 'foo' (keys: type, expect, error, tools, abort_when)",
            ),
            (
                "mocks/s/t.md",
                STUB,
                "still holds the scaffolded placeholder",
            ),
            (
                "mocks/s/t.md",
                "---\ntype: agent\n---\n",
                "an agent responder needs a description",
            ),
            (
                "mocks/s/t.md",
                "---\ntools: [a]\n---\nx",
                "`tools:` belongs in _server.md",
            ),
            (
                "mocks/s/t.md",
                "---\nexpect:\n  a: []\n---\nx",
                "expect.a: an empty list",
            ),
            (
                "mocks/s/t.md",
                "---\nexpect:\n  a: /x/g\n---\nx",
                "only the i and s flags",
            ),
            (
                "mocks/s/_server.md",
                "---\ntype: agent\n---\nx",
                "needs `tools: [...]`",
            ),
            (
                "mocks/s/_server.md",
                "x",
                "only `type: agent` is meaningful here",
            ),
            ("mocks/a__b/t.md", "x", "\"__\" is the tool-name separator"),
            (
                "mocks/s.x/t.md",
                "x",
                "name the directory after the server segment",
            ),
        ];
        for (rel, text, says) in cases {
            let t = tempfile::tempdir().unwrap();
            write(t.path(), rel, text);
            let why = read(&[t.path().to_path_buf()]).err().unwrap_or_default().1;
            assert!(why.contains(says), "{rel}: {why}");
        }
    }

    #[test]
    fn guards_read_as_their_kinds() {
        let v: Value =
            serde_json::json!({"a": "string", "b": ["x", 2], "c": "/^ab/i", "d": {"e": "yes"}});
        let e = expect(&v, "").unwrap();
        assert_eq!(e["a"], Guard::Type("string".into()));
        assert_eq!(e["b"], Guard::OneOf(vec!["x".into(), "2".into()]));
        assert_eq!(
            e["c"],
            Guard::Pattern {
                source: "^ab".into(),
                flags: "i".into()
            }
        );
        assert!(matches!(&e["d"], Guard::Fields(f) if f["e"] == Guard::Equals("yes".into())));
    }
}
