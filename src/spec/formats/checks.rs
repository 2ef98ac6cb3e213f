//! Reading a check's configuration against the built-in type registry.

use serde_json::{Map as JsonMap, Value as Json};

use crate::assert::formats;
use crate::assert::registry::{CheckType, KeyKind, KeySpec};
use crate::spec::node::Node;
use crate::spec::paths;
use crate::spec::reader::{Doc, Map};

/// Validates one value for a key of a check type and converts it to JSON.
pub fn read_value(doc: &mut Doc, spec: &KeySpec, node: &Node, field: &str) -> Option<Json> {
    match spec.kind {
        KeyKind::Text => doc.text(node, field).map(Json::from),
        KeyKind::Regex => doc.regex(node, field).map(Json::from),
        KeyKind::Int { min } => {
            let i = doc.int(node, field)?;
            if i < min {
                doc.error(
                    "out-of-range",
                    node.span,
                    field,
                    format!("must be at least {min}, found {i}"),
                );
                return None;
            }
            Some(Json::from(i))
        }
        KeyKind::FormatName => {
            let s = doc.string(node, field)?;
            if formats::lookup(&s).is_none() {
                let near = crate::diag::did_you_mean(&s, formats::names());
                doc.error(
                    "unknown-format",
                    node.span,
                    field,
                    format!("`{s}` is not a registered format name"),
                )
                .help = Some(match near {
                    Some(n) => format!("did you mean `{n}`?"),
                    None => format!(
                        "registered formats: {}; for a custom pattern use a `regex` or `min_count` assertion",
                        formats::names().collect::<Vec<_>>().join(", ")
                    ),
                });
                return None;
            }
            Some(Json::from(s))
        }
        KeyKind::Bool => doc.bool(node, field).map(Json::from),
        KeyKind::TextList => doc
            .texts(node, field)
            .map(|l| Json::from(l.into_iter().map(|(s, _)| s).collect::<Vec<_>>())),
        KeyKind::Number => doc.non_negative_number(node, field).map(Json::from),
        KeyKind::Path => {
            let s = doc.text(node, field)?;
            match paths::workspace_relative(&s) {
                Ok(_) => Some(Json::from(s)),
                Err(e) => {
                    doc.error("bad-path", node.span, field, e.to_string());
                    None
                }
            }
        }
    }
}

/// Reads every key of `ty` from `map` (reporting missing required ones) into a JSON object,
/// filling defaults. Unknown keys are the caller's to report, since formats differ on them.
pub fn read_config(doc: &mut Doc, map: &Map<'_>, ty: &CheckType) -> Option<Json> {
    let mut out = JsonMap::new();
    let mut ok = true;
    for spec in ty.keys {
        let node = if spec.required {
            map.req(doc, spec.name)
        } else {
            map.opt(spec.name)
        };
        match node {
            Some(n) => match read_value(doc, spec, n, &map.path(spec.name)) {
                Some(v) => {
                    out.insert(spec.name.to_string(), v);
                }
                None => ok = false,
            },
            None if spec.required => ok = false,
            None => {
                if let Some(d) = spec.default {
                    out.insert(spec.name.to_string(), Json::from(d));
                }
            }
        }
    }
    ok.then_some(Json::Object(out))
}
