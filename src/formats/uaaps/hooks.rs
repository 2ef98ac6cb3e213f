//! What a UAAPS hook test case runs: the command hooks of one hook group of the artifact's
//! `hooks.json` (`event`, `hook-index`), fed an event payload on standard input (`input.fixture`
//! with `input.overrides` applied).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value as Json;

use crate::diag::{Problem, did_you_mean};
use crate::formats::LoadCtx;
use crate::suite::Fixture;
use crate::suite::paths;
use crate::syntax::reader::{Doc, Map, join};
use crate::{
    diag::source::{Source, Span},
    syntax::node::{Node, Value},
};

/// Runs several command hooks of one group in order, each with the same payload on standard
/// input, and stops at the first that exits non-zero (its code is the case's exit code).
const CHAIN: &str =
    r#"p=$(cat); for c in "$@"; do printf '%s\n' "$p" | sh -c "$c" || exit $?; done"#;

/// A parsed `hooks.json`, read only where a case points into it.
pub struct HooksFile {
    source: Arc<Source>,
    root: Node,
    /// As shown in messages (`hooks/hooks.json`).
    pub shown: PathBuf,
}

/// The command line of one hook group, and the shortest `timeout` its hooks declare.
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    pub argv: Vec<String>,
    pub timeout: Option<u64>,
}

impl HooksFile {
    /// `Ok(None)` when there is no such file; its syntax errors otherwise.
    pub fn read(ctx: &LoadCtx, file: &Path) -> Result<Option<HooksFile>, Vec<Problem>> {
        if !file.is_file() {
            return Ok(None);
        }
        let shown = ctx.shown(file);
        let (doc, root) = ctx.parse(file, &shown)?;
        Ok(Some(HooksFile {
            source: doc.source,
            root,
            shown,
        }))
    }

    /// A problem about this file, at `span`.
    fn problem(&self, span: Span, field: &str, msg: String) -> Problem {
        Problem::error("bad-hooks", &self.source.path, msg)
            .at(&self.source, span)
            .field(field)
    }

    /// The hook group `index` of `event`. Problems with the case's fields go to `doc` at the
    /// case's spans; problems inside `hooks.json` name that file.
    pub fn hook(&self, doc: &mut Doc, event: (&str, Span), index: (usize, Span)) -> Option<Hook> {
        let (name, at) = event;
        let Some(events) = self.root.get("hooks").filter(|n| n.as_map().is_some()) else {
            doc.problems.push(self.problem(
                self.root.span,
                "hooks",
                format!("{} has no `hooks` object", self.shown.display()),
            ));
            return None;
        };
        let Some(groups) = events.get(name) else {
            let known = events.as_map().unwrap_or_default();
            let names: Vec<&str> = known.iter().map(|(k, _)| k.name.as_str()).collect();
            doc.error(
                "unknown-event",
                at,
                "event",
                format!("{} has no `{name}` event", self.shown.display()),
            )
            .help = Some(match did_you_mean(name, names.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None if names.is_empty() => "it defines no event".into(),
                None => format!("its events: {}", names.join(", ")),
            });
            return None;
        };
        let field = join("hooks", name);
        let Value::Seq(list) = &groups.value else {
            let msg = format!("`{field}` must be a list of hook groups");
            doc.problems.push(self.problem(groups.span, &field, msg));
            return None;
        };
        let Some(group) = list.get(index.0) else {
            doc.error(
                "out-of-range",
                index.1,
                "hook-index",
                format!(
                    "`{name}` has {} hook group{} in {}; hook-index counts from 0",
                    list.len(),
                    if list.len() == 1 { "" } else { "s" },
                    self.shown.display()
                ),
            );
            return None;
        };
        self.group(doc, group, &format!("{field}[{}]", index.0), at)
    }

    /// The command hooks of one group; a group with none is an error at the case's `event`.
    fn group(&self, doc: &mut Doc, group: &Node, field: &str, at: Span) -> Option<Hook> {
        let Some(Value::Seq(hooks)) = group.get("hooks").map(|n| &n.value) else {
            let msg = format!("`{field}` needs a `hooks` list");
            doc.problems.push(self.problem(group.span, field, msg));
            return None;
        };
        let mut commands = Vec::new();
        let mut timeout: Option<u64> = None;
        for h in hooks {
            let is_command = h.get("type").and_then(Node::as_str) == Some("command");
            let Some(command) = h
                .get("command")
                .and_then(Node::as_str)
                .filter(|_| is_command)
            else {
                continue;
            };
            commands.push(command.to_string());
            if let Some(t) = h.get("timeout").and_then(seconds) {
                timeout = Some(timeout.map_or(t, |old| old.min(t)));
            }
        }
        if commands.is_empty() {
            doc.error(
                "no-command-hook",
                at,
                "event",
                format!(
                    "hook group `{field}` in {} has no command hook",
                    self.shown.display()
                ),
            )
            .help = Some(
                "a test runs command hooks (type \"command\"); a prompt hook needs an LLM".into(),
            );
            return None;
        }
        let argv = match commands.as_slice() {
            [one] => vec!["sh".into(), "-c".into(), one.clone()],
            _ => ["sh", "-c", CHAIN, "sh"]
                .into_iter()
                .map(String::from)
                .chain(commands)
                .collect(),
        };
        Some(Hook { argv, timeout })
    }
}

/// A hook's `timeout`: a positive number of seconds, rounded up.
fn seconds(n: &Node) -> Option<u64> {
    match n.value {
        Value::Int(i) if i > 0 => Some(i as u64),
        Value::Float(f) if f > 0.0 && f.is_finite() => Some(f.ceil() as u64),
        _ => None,
    }
}

/// The event payload of a case: the fixture (or `{}`) with the overrides applied, as one line
/// of JSON; and the fixture, staged in the workspace where it is in the package.
pub fn payload(
    ctx: &LoadCtx,
    doc: &mut Doc,
    input: &Map<'_>,
    tests_dir: &Path,
    tests_rel: &Path,
) -> Option<(String, Option<Fixture>)> {
    let mut value = Json::Object(Default::default());
    let mut fixture = None;
    let mut ok = true;
    if let Some(n) = input.opt("fixture") {
        ok = false;
        if let Some((json, f)) = read_fixture(ctx, doc, n, tests_dir, tests_rel) {
            (value, fixture, ok) = (json, Some(f), true);
        }
    }
    if let Some(n) = input.opt("overrides")
        && let Some(m) = doc.map(n, "input.overrides")
    {
        for (key, v) in m.entries {
            if let Err(why) = set_path(&mut value, &key.name, v.to_json()) {
                let field = join("input.overrides", &key.name);
                doc.error("bad-override", key.span, &field, why).help = Some(
                    "a dotted path of object keys (and list indexes): toolInput.file_path".into(),
                );
                ok = false;
            }
        }
    }
    ok.then(|| (format!("{value}\n"), fixture))
}

fn read_fixture(
    ctx: &LoadCtx,
    doc: &mut Doc,
    n: &Node,
    tests_dir: &Path,
    tests_rel: &Path,
) -> Option<(Json, Fixture)> {
    let written = doc.text(n, "input.fixture")?;
    let source = match paths::resolve_inside(tests_dir, &written, "the tests/ folder", true) {
        Ok(p) => p,
        Err(e) => {
            doc.error("bad-fixture", n.span, "input.fixture", e.to_string())
                .help = Some(
                "input.fixture is relative to the tests/ folder, e.g. fixtures/event.json".into(),
            );
            return None;
        }
    };
    let (fixture_doc, node) = match ctx.parse(&source, &ctx.shown(&source)) {
        Ok(parsed) => parsed,
        Err(mut p) => {
            doc.problems.append(&mut p);
            return None;
        }
    };
    if fixture_doc.has_errors() {
        doc.problems.extend(fixture_doc.problems);
        return None;
    }
    let dest =
        paths::normalize(&tests_rel.join(&written)).unwrap_or_else(|| tests_rel.join(&written));
    Some((node.to_json(), Fixture { source, dest }))
}

/// Sets the value at a dotted path (`toolInput.file_path`), making the objects on the way
/// that are missing; a number indexes a list that is already there.
pub fn set_path(root: &mut Json, path: &str, value: Json) -> Result<(), String> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!(
            "`{path}` is not a dotted path: it has an empty part"
        ));
    }
    let mut value = Some(value);
    let mut cur = root;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let above = || parts[..i].join(".");
        cur = match cur {
            Json::Object(m) if last => {
                m.insert(part.to_string(), value.take().unwrap_or_default());
                return Ok(());
            }
            Json::Object(m) => m
                .entry(part.to_string())
                .or_insert_with(|| Json::Object(Default::default())),
            Json::Array(items) => {
                let len = items.len();
                let slot = part
                    .parse::<usize>()
                    .ok()
                    .and_then(|k| items.get_mut(k))
                    .ok_or_else(|| {
                        format!(
                            "`{}` is a list of {len} items; `{part}` is not one of its indexes",
                            above()
                        )
                    })?;
                if last {
                    *slot = value.take().unwrap_or_default();
                    return Ok(());
                }
                slot
            }
            other => {
                let what = match other {
                    Json::Null => "null",
                    Json::Bool(_) => "a boolean",
                    Json::Number(_) => "a number",
                    _ => "a string",
                };
                return Err(format!(
                    "`{}` is {what} in the fixture, not an object",
                    above()
                ));
            }
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn set_path_overrides_nested_fields_and_makes_missing_objects() {
        let mut v =
            json!({"toolInput": {"file_path": "/src/app.ts", "content": "x"}, "l": [1, {"a": 2}]});
        set_path(&mut v, "toolInput.file_path", json!("/etc/passwd")).unwrap();
        set_path(&mut v, "new.deep.key", json!(true)).unwrap();
        set_path(&mut v, "l.1.a", json!(3)).unwrap();
        set_path(&mut v, "l.0", json!("first")).unwrap();
        assert_eq!(
            v,
            json!({"toolInput": {"file_path": "/etc/passwd", "content": "x"}, "l": ["first", {"a": 3}], "new": {"deep": {"key": true}}})
        );
        let mut bad = json!({"s": "text", "l": [1]});
        assert!(
            set_path(&mut bad, "s.x", json!(1))
                .unwrap_err()
                .contains("`s` is a string")
        );
        assert!(
            set_path(&mut bad, "l.5", json!(1))
                .unwrap_err()
                .contains("list of 1 items")
        );
        assert!(set_path(&mut bad, "l.x", json!(1)).is_err());
        assert!(
            set_path(&mut bad, "a..b", json!(1))
                .unwrap_err()
                .contains("empty part")
        );
        assert!(set_path(&mut bad, "", json!(1)).is_err());
    }

    fn hooks(text: &str) -> (HooksFile, Doc) {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("hooks.json");
        std::fs::write(&file, text).unwrap();
        let ctx = LoadCtx::new(d.path());
        let h = HooksFile::read(&ctx, &file).unwrap().unwrap();
        let doc = Doc::new(Source::new("case.yaml", "event: x\n".to_string()));
        (h, doc)
    }

    const HOOKS: &str = r#"{"hooks": {
        "pre-tool-use": [{"matcher": "Write", "hooks": [{"type": "command", "command": "sh a.sh", "timeout": 5}]},
                         {"hooks": [{"type": "command", "command": "one"}, {"type": "prompt", "prompt": "p"}, {"type": "command", "command": "two", "timeout": 2.5}]}],
        "stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}]}]
    }}"#;

    #[test]
    fn finds_the_command_hooks_of_a_group() {
        let (h, mut doc) = hooks(HOOKS);
        let at = Span::new(0, 1);
        let one = h.hook(&mut doc, ("pre-tool-use", at), (0, at)).unwrap();
        assert_eq!(one.argv, ["sh", "-c", "sh a.sh"]);
        assert_eq!(one.timeout, Some(5));
        let two = h.hook(&mut doc, ("pre-tool-use", at), (1, at)).unwrap();
        assert_eq!(two.argv[4..], ["one".to_string(), "two".to_string()]);
        assert_eq!(two.timeout, Some(3));
        assert!(doc.problems.is_empty(), "{:?}", doc.problems);
    }

    #[test]
    fn a_missing_event_group_or_command_is_an_error() {
        let (h, mut doc) = hooks(HOOKS);
        let at = Span::new(0, 1);
        assert!(h.hook(&mut doc, ("pre-tool-us", at), (0, at)).is_none());
        assert!(h.hook(&mut doc, ("pre-tool-use", at), (2, at)).is_none());
        assert!(h.hook(&mut doc, ("stop", at), (0, at)).is_none());
        let msgs: Vec<String> = doc
            .problems
            .iter()
            .map(|p| format!("{} {}", p.message, p.help.clone().unwrap_or_default()))
            .collect();
        assert!(
            msgs[0].contains("no `pre-tool-us` event") && msgs[0].contains("`pre-tool-use`"),
            "{msgs:?}"
        );
        assert!(msgs[1].contains("has 2 hook groups"), "{msgs:?}");
        assert!(msgs[2].contains("no command hook"), "{msgs:?}");
        let (h, mut doc) = hooks(r#"{"hooks": {"stop": {"x": 1}}}"#);
        assert!(h.hook(&mut doc, ("stop", at), (0, at)).is_none());
        assert!(doc.problems[0].message.contains("must be a list"));
        assert_eq!(doc.problems[0].code, "bad-hooks");
    }
}
