//! `assertions`: clauditor's ten deterministic assertion types (`check_types::CLAUDITOR_TYPES`)
//! with their per-type keys, and a plugin's assertion types beside them. Keys that clauditor
//! renamed (#67) get a hint naming the new key.

use super::ids::Ids;
use crate::formats::{checks, location};
use crate::suite::check_types::{self, CheckType};
use crate::suite::{Check, CheckTarget};
use crate::syntax::node::{Node, Value};
use crate::syntax::reader::{Doc, Map, index};

/// Keys every assertion may have besides its type's own.
pub const ASSERTION_KEYS: &[&str] = &["id", "type", "name"];

/// Old or near keys and the per-type key they should be (clauditor's migration hints after #67).
fn migration_hint(ty: &str, key: &str) -> Option<&'static str> {
    match (ty, key) {
        ("contains" | "not_contains", "value" | "pattern") => Some("needle"),
        ("regex" | "min_count", "value") => Some("pattern"),
        ("min_length", "value" | "min") | ("max_length", "value" | "max") => Some("length"),
        (
            "min_count" | "has_urls" | "has_entries" | "urls_reachable",
            "minimum" | "min_count" | "threshold",
        ) => Some("count"),
        ("has_urls" | "has_entries" | "urls_reachable" | "has_format", "value") => Some("count"),
        ("has_format", "minimum" | "min_count") => Some("count"),
        _ => None,
    }
}

/// The `assertions` list, each id added to `ids`.
pub(super) fn read(doc: &mut Doc, node: &Node, ids: &mut Ids) -> Vec<Check> {
    let Some(items) = doc.seq(node, "assertions") else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| read_assertion(doc, item, &index("assertions", i), ids))
        .collect()
}

fn read_assertion(doc: &mut Doc, item: &Node, field: &str, ids: &mut Ids) -> Option<Check> {
    let a = doc.map(item, field)?;
    let id = ids.read(doc, &a);
    let ty_node = a.req(doc, "type")?;
    let ty = doc.string(ty_node, &a.path("type"))?;
    if checks::is_plugin_type(doc, &ty) {
        let config = checks::config_of(&a, ASSERTION_KEYS);
        let config = checks::plugin_check(doc, &ty, config, item, field);
        let at = Some(location(doc, item.span));
        return Some(Check::new(id?, ty, config?, CheckTarget::Output, at));
    }
    let Some(check_type) = check_types::CLAUDITOR_TYPES
        .contains(&ty.as_str())
        .then(|| check_types::lookup(&ty))
        .flatten()
    else {
        unknown_type(doc, ty_node, &a.path("type"), &ty);
        return None;
    };
    check_keys(doc, &a, &ty, check_type);
    let name = a.str(doc, "name");
    let mut config = checks::read_config(doc, &a, check_type);
    let id = id?;
    if let (Some(name), Some(obj)) = (name, config.as_mut().and_then(|c| c.as_object_mut())) {
        obj.insert("name".into(), name.into());
    }
    let at = Some(location(doc, item.span));
    Some(Check::new(id, ty, config?, check_type.target.clone(), at))
}

/// The error for a type that is not one of clauditor's, pointing to the extension key when it
/// is one of assay's.
fn unknown_type(doc: &mut Doc, node: &Node, field: &str, ty: &str) {
    doc.error(
        "unknown-type",
        node.span,
        field,
        format!("unknown assertion type `{ty}`"),
    )
    .help = checks::extension_hint(ty, "clauditor").or_else(|| {
        let names = checks::all_type_names(doc, check_types::CLAUDITOR_TYPES);
        Some(
            match crate::diag::did_you_mean(ty, names.iter().map(String::as_str)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("assertion types: {}", names.join(", ")),
            },
        )
    });
}

/// The assertion's keys: its type's own beside the common ones, with clauditor's migration
/// hints; an optional key written as null is an error, not the default (as in clauditor).
fn check_keys(doc: &mut Doc, a: &Map<'_>, ty: &str, check_type: &CheckType) {
    let mut known = ASSERTION_KEYS.to_vec();
    known.extend(check_types::clauditor_keys(check_type));
    a.check_keys_with(
        doc,
        &format!("a `{ty}` assertion"),
        &known,
        |_| false,
        |k| {
            migration_hint(ty, k).map(|to| {
                if k == "value" {
                    format!(
                        "did you mean `{to}`? `value` was replaced by per-type keys (clauditor #67)"
                    )
                } else {
                    format!("did you mean `{to}`?")
                }
            })
        },
    );
    for spec in check_type.keys.iter().filter(|k| !k.required) {
        if let Some((_, v)) = a.entries.iter().find(|(k, _)| k.name == spec.name)
            && v.value == Value::Null
        {
            doc.error(
                "wrong-type",
                v.span,
                &a.path(spec.name),
                format!("`{}` must not be null", spec.name),
            )
            .help = Some("omit the key to use the default".into());
        }
    }
}
