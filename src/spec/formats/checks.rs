//! Reading a check's configuration against the built-in type registry.

use serde_json::{Map as JsonMap, Value as Json};

use crate::spec::check_types::{CheckType, KeyKind, KeySpec};
use crate::spec::node::Node;
use crate::spec::paths;
use crate::spec::reader::{Doc, Map};
use crate::spec::value_formats;

/// Validates one value for a key of a check type and converts it to JSON.
pub fn read_value(doc: &mut Doc, spec: &KeySpec, node: &Node, field: &str) -> Option<Json> {
    match spec.kind {
        KeyKind::Text => doc.text(node, field).map(Json::from),
        KeyKind::Needle => doc.needle(node, field).map(Json::from),
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
            let from_plugin = doc.extra.as_ref().is_some_and(|e| e.has_format(&s));
            if value_formats::lookup(&s).is_none() && !from_plugin {
                let near = crate::diag::did_you_mean(&s, value_formats::names());
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
                        value_formats::names().collect::<Vec<_>>().join(", ")
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

/// Keys every item of an assay check list may have besides its type's own.
const COMMON_KEYS: &[&str] = &["id", "type", "negate", "weight"];

/// Reads assay's own check-list syntax (UAAPS tests `checks`, UAAPS eval `x-assay-checks`):
/// a list of `{type, id?, negate?, weight?, <the type's keys>}` reaching every built-in type.
/// Ids default to `<type>-<n>` and must be unique in `ids`.
pub fn read_check_list(
    doc: &mut Doc,
    node: &Node,
    field: &str,
    ids: &mut std::collections::HashSet<String>,
) -> Vec<crate::spec::Check> {
    use crate::spec::check_types;
    let mut out = Vec::new();
    let Some(items) = doc.seq(node, field) else {
        return out;
    };
    for (i, item) in items.iter().enumerate() {
        let path = format!("{field}[{i}]");
        let Some(m) = doc.map(item, &path) else {
            continue;
        };
        let Some(ty) = m.req_text(doc, "type") else {
            continue;
        };
        // A plugin's type takes every other key as its configuration, which it validates;
        // a built-in type's keys are checked against its schema.
        let (config, target) = if is_plugin_type(doc, &ty) {
            let config = plugin_check(doc, &ty, config_of(&m, COMMON_KEYS), item, &path);
            (config, crate::spec::CheckTarget::Output)
        } else if let Some(check_type) = check_types::lookup(&ty) {
            let mut known: Vec<&str> = COMMON_KEYS.to_vec();
            known.extend(check_type.key_names());
            m.check_keys(doc, &format!("a `{ty}` check"), &known);
            (read_config(doc, &m, check_type), check_type.target.clone())
        } else {
            let all = all_type_names(
                doc,
                &check_types::BUILTIN
                    .iter()
                    .map(|t| t.name)
                    .collect::<Vec<_>>(),
            );
            let names = all.iter().map(String::as_str);
            let near = crate::diag::did_you_mean(&ty, names.clone());
            doc.error(
                "unknown-check-type",
                m.opt("type").map_or(item.span, |n| n.span),
                &m.path("type"),
                format!("`{ty}` is not a check type"),
            )
            .help = Some(match near {
                Some(n) => format!("did you mean `{n}`?"),
                None => format!("check types: {}", names.collect::<Vec<_>>().join(", ")),
            });
            continue;
        };
        let id = match m.text(doc, "id") {
            Some(id) => id,
            None => format!("{ty}-{}", i + 1),
        };
        if !ids.insert(id.clone()) {
            doc.error(
                "duplicate-id",
                m.opt("id").map_or(item.span, |n| n.span),
                &m.path("id"),
                format!("check id `{id}` is used twice"),
            );
        }
        let negate = m.bool(doc, "negate").unwrap_or(false);
        let weight = match m.opt("weight") {
            Some(n) => match doc.non_negative_number(n, &m.path("weight")) {
                Some(w) if w > 0.0 => w,
                Some(_) => {
                    doc.error(
                        "out-of-range",
                        n.span,
                        &m.path("weight"),
                        "a weight must be above 0".to_string(),
                    );
                    1.0
                }
                None => 1.0,
            },
            None => 1.0,
        };
        if let Some(config) = config {
            out.push(crate::spec::Check {
                id,
                kind: ty,
                config,
                negate,
                weight,
                target,
                location: Some(super::location(doc, item.span)),
            });
        }
    }
    out
}

/// Whether `ty` is a plugin's check type.
pub fn is_plugin_type(doc: &Doc, ty: &str) -> bool {
    doc.extra.as_ref().is_some_and(|e| e.has_check_type(ty))
}

/// A plugin check: its configuration is `config` (a JSON object), validated by the plugin at
/// load time; a refusal is reported at `span`.
pub fn plugin_check(
    doc: &mut Doc,
    ty: &str,
    config: Json,
    node: &Node,
    field: &str,
) -> Option<Json> {
    let extra = doc.extra.clone()?;
    match extra.validate_check(ty, &config) {
        Ok(()) => Some(config),
        Err(why) => {
            doc.error(
                "bad-plugin-config",
                node.span,
                field,
                format!("the `{ty}` plugin check refuses its configuration: {why}"),
            );
            None
        }
    }
}

/// The keys of a map except `skip`, as a JSON object.
pub fn config_of(map: &Map<'_>, skip: &[&str]) -> Json {
    let mut out = JsonMap::new();
    for (k, v) in map.entries {
        if !skip.contains(&k.name.as_str()) {
            out.insert(k.name.clone(), v.to_json());
        }
    }
    Json::Object(out)
}

/// Every check type name a loader may suggest: built-ins and plugins'.
pub fn all_type_names(doc: &Doc, builtin: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = builtin.iter().map(|s| s.to_string()).collect();
    if let Some(e) = &doc.extra {
        names.extend(e.check_type_names());
    }
    names
}
