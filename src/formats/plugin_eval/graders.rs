//! The six grader types of Claude Code's plugin evals, checked strictly as its schema does
//! (every key named, each type's own), with its defaults filled: `regex`, `tool_order`,
//! `tool_used`, `file_exists`, `llm`, `baseline`.

use serde_json::{Map as JsonMap, Value as Json, json};

use super::issues::{Issues, int_in, received, string};
use super::merged::{At, GraderSource, MergedCase};
use crate::syntax::node::Value;

/// The grader types, in Claude Code's order.
pub const TYPES: &[&str] = &[
    "regex",
    "tool_order",
    "tool_used",
    "file_exists",
    "llm",
    "baseline",
];

/// The keys every grader takes.
pub const COMMON_KEYS: &[&str] = &["type", "name", "weight", "arm"];

/// Each type's own keys, in the order Claude Code writes its `config`.
pub const TYPE_KEYS: &[(&str, &[&str])] = &[
    ("regex", &["target", "pattern", "flags", "match"]),
    ("tool_order", &["before", "after"]),
    ("tool_used", &["tool", "input_match", "min", "max"]),
    ("file_exists", &["path", "exists"]),
    ("llm", &["criteria", "focus"]),
    ("baseline", &["baseline_file", "criteria"]),
];

/// The texts a `target` or `focus` names.
pub const TARGETS: &[&str] = &["trace", "last_message", "files", "mock_calls"];

/// A grader that passed.
#[derive(Debug, Clone, PartialEq)]
pub struct Grader {
    pub name: String,
    pub kind: &'static str,
    pub weight: f64,
    /// `with-only` or `both`, when set.
    pub arm: Option<String>,
    /// Its settings as Claude Code reports them (`config`), defaults filled.
    pub config: Json,
    /// Where it is written: a file of the merged case and a span.
    pub at: (usize, crate::diag::source::Span),
}

impl Grader {
    /// Still the blank `init` template.
    pub fn is_template(&self) -> bool {
        let todo = "TODO: describe what a successful response looks like";
        ["criteria", "pattern"].iter().any(|k| {
            self.config
                .get(k)
                .and_then(Json::as_str)
                .is_some_and(|s| s.contains(todo))
        })
    }

    /// Whether it only says that the plugin fired: `arm: with-only`, or `tool_used: Skill`
    /// with no `arm`.
    pub fn with_only(&self) -> bool {
        match self.arm.as_deref() {
            Some(a) => a == "with-only",
            None => self.kind == "tool_used" && self.config.get("tool") == Some(&json!("Skill")),
        }
    }
}

/// Every grader of a merged case.
pub fn check_all(is: &mut Issues, m: &MergedCase<'_>) -> Option<Vec<Grader>> {
    if let Some(v) = m.bad_graders {
        is.at(
            v,
            "graders",
            format!("Expected array, received {}", received(&v.node.value)),
        );
        return None;
    }
    if !m.has_graders {
        is.near(m.root, "graders", "Required");
        return None;
    }
    if m.graders.is_empty() {
        is.near(
            m.root,
            "graders",
            "Array must contain at least 1 element(s)",
        );
        return None;
    }
    let before = is.list.len();
    let out: Vec<Option<Grader>> = m
        .graders
        .iter()
        .enumerate()
        .map(|(i, g)| check_one(is, g, &format!("graders.{i}")))
        .collect();
    if is.list.len() > before {
        return None;
    }
    let out: Vec<Grader> = out.into_iter().flatten().collect();
    for (i, g) in out.iter().enumerate() {
        if out[..i].iter().any(|o| o.name == g.name) {
            is.near(
                Some(g.at),
                "graders",
                format!("duplicate grader name \"{}\"", g.name),
            );
            return None;
        }
    }
    Some(out)
}

/// One grader: its type first, then its keys.
fn check_one(is: &mut Issues, g: &GraderSource<'_>, field: &str) -> Option<Grader> {
    let kind = g.get("type").and_then(|v| v.node.as_str());
    let Some(kind) = kind.and_then(|k| TYPES.iter().copied().find(|t| *t == k)) else {
        let at = g
            .get("type")
            .map(|v| (v.file, v.node.span))
            .unwrap_or((g.file, g.span));
        let expected = TYPES
            .iter()
            .map(|t| format!("'{t}'"))
            .collect::<Vec<_>>()
            .join(" | ");
        is.near(
            Some(at),
            &format!("{field}.type"),
            format!("Invalid discriminator value. Expected {expected}"),
        );
        return None;
    };
    let own = TYPE_KEYS
        .iter()
        .find(|(t, _)| *t == kind)
        .map_or(&[][..], |(_, k)| *k);
    let name = match g.get("name") {
        Some(v) => string(is, v, &format!("{field}.name")),
        None => g.default_name.clone().or_else(|| {
            is.near(Some((g.file, g.span)), &format!("{field}.name"), "Required");
            None
        }),
    };
    let weight = weight(is, g.get("weight"), field);
    let arm = arm(is, g.get("arm"), field);
    let config = config(is, g, kind, field);
    let unknown: Vec<String> = g
        .entries
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !COMMON_KEYS.contains(k) && !own.contains(k))
        .map(|k| format!("'{k}'"))
        .collect();
    if !unknown.is_empty() {
        let msg = format!("Unrecognized key(s) in object: {}", unknown.join(", "));
        is.near(Some((g.file, g.span)), field, msg);
        return None;
    }
    let mut config = config?;
    if let (Some(a), Json::Object(o)) = (&arm, &mut config) {
        o.insert("arm".into(), json!(a));
    }
    Some(Grader {
        name: name?,
        kind,
        weight: weight?,
        arm,
        config,
        at: (g.file, g.span),
    })
}

fn weight(is: &mut Issues, v: Option<At<'_>>, field: &str) -> Option<f64> {
    let Some(v) = v else {
        return Some(1.0);
    };
    let w = match &v.node.value {
        Value::Int(n) => *n as f64,
        Value::Float(f) => *f,
        other => {
            is.at(
                v,
                &format!("{field}.weight"),
                format!("Expected number, received {}", received(other)),
            );
            return None;
        }
    };
    if w <= 0.0 {
        is.at(
            v,
            &format!("{field}.weight"),
            "Number must be greater than 0",
        );
        return None;
    }
    Some(w)
}

fn arm(is: &mut Issues, v: Option<At<'_>>, field: &str) -> Option<String> {
    let v = v?;
    match v.node.as_str() {
        Some(a @ ("with-only" | "both")) => Some(a.to_string()),
        _ => {
            let got = v
                .node
                .as_str()
                .map_or_else(|| received(&v.node.value).to_string(), str::to_string);
            is.at(
                v,
                &format!("{field}.arm"),
                format!("Invalid enum value. Expected 'with-only' | 'both', received '{got}'"),
            );
            None
        }
    }
}

/// The type's own keys, checked and normalised into Claude Code's `config`.
fn config(is: &mut Issues, g: &GraderSource<'_>, kind: &str, field: &str) -> Option<Json> {
    let mut out = JsonMap::new();
    let f = |k: &str| format!("{field}.{k}");
    let body = g.body.clone();
    let text = |is: &mut Issues, k: &str, from_body: bool| -> Option<String> {
        match g.get(k) {
            Some(v) => string(is, v, &f(k)),
            None if from_body && body.is_some() => body.clone(),
            None => {
                is.near(Some((g.file, g.span)), &f(k), "Required");
                None
            }
        }
    };
    match kind {
        "regex" => {
            let target = target(is, g.get("target"), &f("target"));
            let pattern = text(is, "pattern", true);
            let flags = flags(is, g.get("flags"), &f("flags"));
            let mode = match_mode(is, g.get("match"), &f("match"));
            out.insert("target".into(), target?);
            out.insert("pattern".into(), json!(pattern?));
            out.insert("flags".into(), json!(flags?));
            out.insert("match".into(), json!(mode?));
        }
        "tool_order" => {
            let before = tool_side(is, g.get("before"), &f("before"), g);
            let after = tool_side(is, g.get("after"), &f("after"), g);
            out.insert("before".into(), before?);
            out.insert("after".into(), after?);
        }
        "tool_used" => {
            let tool = text(is, "tool", false)?;
            out.insert("tool".into(), json!(tool));
            if let Some(v) = g.get("input_match") {
                out.insert(
                    "input_match".into(),
                    json!(string(is, v, &f("input_match"))?),
                );
            }
            for k in ["min", "max"] {
                if let Some(v) = g.get(k) {
                    out.insert(k.into(), json!(int_in(is, v, &f(k), 0, i64::MAX)?));
                }
            }
        }
        "file_exists" => {
            let path = text(is, "path", false);
            let exists = match g.get("exists") {
                Some(v) => match v.node.value {
                    Value::Bool(b) => Some(b),
                    ref other => {
                        is.at(
                            v,
                            &f("exists"),
                            format!("Expected boolean, received {}", received(other)),
                        );
                        None
                    }
                },
                None => Some(true),
            };
            out.insert("path".into(), json!(path?));
            out.insert("exists".into(), json!(exists?));
        }
        "llm" => {
            let criteria = text(is, "criteria", true);
            let focus = target(is, g.get("focus"), &f("focus"));
            out.insert("criteria".into(), json!(criteria?));
            out.insert("focus".into(), focus?);
        }
        _ => {
            let file = text(is, "baseline_file", false);
            let criteria = text(is, "criteria", true);
            out.insert("baseline_file".into(), json!(file?));
            out.insert("criteria".into(), json!(criteria?));
        }
    }
    Some(Json::Object(out))
}

/// A `target` or `focus`: one of [`TARGETS`], or `{source: file, path}`; `last_message`
/// when left out.
fn target(is: &mut Issues, v: Option<At<'_>>, field: &str) -> Option<Json> {
    let Some(v) = v else {
        return Some(json!("last_message"));
    };
    if let Some(s) = v.node.as_str().filter(|s| TARGETS.contains(s)) {
        return Some(json!(s));
    }
    let file = v.node.as_map().filter(|_| {
        v.node.get("source").and_then(|n| n.as_str()) == Some("file")
            && v.node.get("path").and_then(|n| n.as_str()).is_some()
    });
    match file {
        Some(entries) => {
            if unrecognized(is, v, field, entries, &["source", "path"]) {
                return None;
            }
            Some(json!({"source": "file", "path": v.node.get("path").and_then(|n| n.as_str())}))
        }
        None => {
            is.at(v, field, "Invalid input");
            None
        }
    }
}

fn flags(is: &mut Issues, v: Option<At<'_>>, field: &str) -> Option<String> {
    let Some(v) = v else {
        return Some(String::new());
    };
    let s = string(is, v, field)?;
    if !s.chars().all(|c| "dgimsuvy".contains(c)) {
        is.at(v, field, "must be JS RegExp flags (d g i m s u v y)");
        return None;
    }
    Some(s)
}

fn match_mode(is: &mut Issues, v: Option<At<'_>>, field: &str) -> Option<String> {
    let Some(v) = v else {
        return Some("contains".into());
    };
    let Some(s) = v.node.as_str() else {
        is.at(v, field, "Invalid input");
        return None;
    };
    let count = s
        .strip_prefix("count:")
        .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()));
    if s == "contains" || s == "not_contains" || count {
        Some(s.to_string())
    } else {
        is.at(v, field, "must be contains | not_contains | count:N");
        None
    }
}

/// A side of `tool_order`: a tool's name, or `{tool, input_match}`.
fn tool_side(
    is: &mut Issues,
    v: Option<At<'_>>,
    field: &str,
    g: &GraderSource<'_>,
) -> Option<Json> {
    let Some(v) = v else {
        is.near(Some((g.file, g.span)), field, "Required");
        return None;
    };
    if let Some(s) = v.node.as_str() {
        return Some(json!({"tool": s}));
    }
    let Some(entries) = v.node.as_map() else {
        is.at(v, field, "Invalid input");
        return None;
    };
    let mut out = JsonMap::new();
    let tool = v.node.get("tool").and_then(|n| n.as_str());
    let Some(tool) = tool else {
        is.at(v, field, "Invalid input");
        return None;
    };
    out.insert("tool".into(), json!(tool));
    if let Some(n) = v.node.get("input_match") {
        out.insert(
            "input_match".into(),
            json!(string(
                is,
                At {
                    node: n,
                    file: v.file
                },
                &format!("{field}.input_match")
            )?),
        );
    }
    if unrecognized(is, v, field, entries, &["tool", "input_match"]) {
        return None;
    }
    Some(Json::Object(out))
}

/// Reports the keys of a strict object beyond `known`, as zod words it; whether there were any.
fn unrecognized(
    is: &mut Issues,
    v: At<'_>,
    field: &str,
    entries: &[(crate::syntax::node::Key, crate::syntax::node::Node)],
    known: &[&str],
) -> bool {
    let extra: Vec<String> = entries
        .iter()
        .map(|(k, _)| k.name.as_str())
        .filter(|k| !known.contains(k))
        .map(|k| format!("'{k}'"))
        .collect();
    if !extra.is_empty() {
        let msg = format!("Unrecognized key(s) in object: {}", extra.join(", "));
        is.at(v, field, msg);
    }
    !extra.is_empty()
}
