//! Reading a check's configuration against the built-in type registry.

use serde_json::{Map as JsonMap, Value as Json};

use crate::record::case_run::Routing;
use crate::suite::check_types::{CheckType, KeyKind, KeySpec};
use crate::suite::paths;
use crate::suite::value_formats;
use crate::syntax::node::Node;
use crate::syntax::reader::{Doc, Map, index};

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
        KeyKind::Object => doc.map(node, field).map(|_| node.to_json()),
        KeyKind::String => doc.string(node, field).map(Json::from),
        KeyKind::Any => Some(node.to_json()),
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

/// assay's extension key on a case of every format (BMAD eval objects, clauditor specs, Skillet
/// files, UAAPS eval cases): a list in assay's check-list syntax. The original runners ignore
/// (or, being `x-`, let pass) the key, so a suite that uses it stays valid for its own runner.
pub const EXTENSION_KEY: &str = "x-assay-checks";

/// Reads the case map `m`'s [`EXTENSION_KEY`], when present, with [`read_check_list`]: its ids
/// must be unique against `ids` (the case's other check ids), to which they are added.
pub fn read_extension(
    doc: &mut Doc,
    m: &Map<'_>,
    ids: &mut std::collections::HashSet<String>,
) -> Vec<crate::suite::Check> {
    match m.opt(EXTENSION_KEY) {
        Some(n) => read_check_list(doc, n, &m.path(EXTENSION_KEY), ids),
        None => Vec::new(),
    }
}

/// Reads a trigger query's [`EXTENSION_KEY`]: assay's check-list syntax limited to the
/// routing types ([`crate::suite::check_types::ROUTING`]), made into the query's routing.
pub fn read_routing(doc: &mut Doc, m: &Map<'_>) -> Routing {
    let Some(node) = m.opt(EXTENSION_KEY) else {
        return Routing::default();
    };
    let field = m.path(EXTENSION_KEY);
    if let crate::syntax::node::Value::Seq(items) = &node.value {
        for (i, item) in items.iter().enumerate() {
            refuse_if_not_routing(doc, item, &index(&field, i));
        }
    }
    let checks = read_check_list(doc, node, &field, &mut std::collections::HashSet::new());
    for c in &checks {
        check_skill_names(doc, c, node, &field);
    }
    let routing = routing_of(checks);
    if let Some(both) = routing
        .must_fire
        .iter()
        .find(|s| routing.must_not_fire.contains(s))
    {
        doc.error(
            "contradiction",
            node.span,
            &field,
            format!("`{both}` is both in must_fire and must_not_fire"),
        );
    }
    routing
}

/// Refuses, where it is written, what the list reader accepts but says nothing about routing:
/// a check type of another kind, a negation, a plugin's check type.
fn refuse_if_not_routing(doc: &mut Doc, item: &Node, field: &str) {
    use crate::suite::check_types::ROUTING;
    let ty = item.get("type").and_then(|t| t.as_str());
    let ty_span = item.get("type").map_or(item.span, |n| n.span);
    if let Some(ty) = ty.filter(|t| !ROUTING.contains(t) && !is_plugin_type(doc, t))
        && crate::suite::check_types::lookup(ty).is_some()
    {
        doc.error(
            "not-a-routing-check",
            ty_span,
            &format!("{field}.type"),
            format!("`{ty}` does not apply to a trigger query"),
        )
        .help = Some(format!(
            "a trigger query takes {} (what fired is all a trigger run records)",
            ROUTING.join(", ")
        ));
    }
    if let Some(n) = item.get("negate") {
        doc.error(
            "not-a-routing-check",
            n.span,
            &format!("{field}.negate"),
            "a routing check cannot be negated".to_string(),
        )
        .help = Some("write must_not_fire instead of a negated must_fire".into());
    }
    if let Some(ty) = ty.filter(|t| is_plugin_type(doc, t)) {
        doc.error(
            "not-a-routing-check",
            ty_span,
            &format!("{field}.type"),
            format!("the plugin check `{ty}` does not apply to a trigger query"),
        )
        .help = Some(format!("a trigger query takes {}", ROUTING.join(", ")));
    }
}

/// The skills a routing check names (`skill`, then `allow`'s).
fn named_skills(c: &crate::suite::Check) -> impl Iterator<Item = &str> {
    let allow = c.config.get("allow").and_then(Json::as_array);
    c.config
        .get("skill")
        .into_iter()
        .chain(allow.into_iter().flatten())
        .filter_map(Json::as_str)
}

/// A skill is named by its folder: a name with a control character or a slash names none,
/// and would only reach a report.
fn check_skill_names(doc: &mut Doc, c: &crate::suite::Check, node: &Node, field: &str) {
    let bad_name = |n: &str| n.chars().any(|c| c.is_control() || c == '/');
    if let Some(n) = named_skills(c).find(|n| bad_name(n)) {
        doc.error(
            "not-a-skill-name",
            node.span,
            field,
            format!(
                "{} is not a skill name",
                crate::text::one_line(&format!("`{n}`"))
            ),
        )
        .help = Some("a skill's name is its folder's name: no control characters or `/`".into());
    }
}

/// The routing the checks of a trigger query say.
fn routing_of(checks: Vec<crate::suite::Check>) -> Routing {
    let mut routing = Routing::default();
    for c in checks {
        let skill = || {
            c.config
                .get("skill")
                .and_then(Json::as_str)
                .map(str::to_string)
        };
        match c.kind.as_str() {
            "must_fire" => routing.must_fire.extend(skill()),
            "must_not_fire" => routing.must_not_fire.extend(skill()),
            "no_other_skill" => {
                routing.no_other_skill = true;
                let allow = c.config.get("allow").and_then(Json::as_array);
                let allow = allow.into_iter().flatten().filter_map(Json::as_str);
                routing.allow.extend(allow.map(str::to_string));
            }
            _ => {}
        }
    }
    routing
}

/// A hint for a format's own assertion list naming one of assay's check types that the format
/// does not have: where to write it instead.
pub fn extension_hint(ty: &str, format: &str) -> Option<String> {
    crate::suite::check_types::lookup(ty).map(|_| {
        format!(
            "`{ty}` is an assay check type, not a {format} assertion: list it under `{EXTENSION_KEY}` (assay's extension key)"
        )
    })
}

/// Reads assay's own check-list syntax (UAAPS tests `checks`, every format's
/// `x-assay-checks`): a list of `{type, id?, negate?, weight?, <the type's keys>}` reaching
/// every built-in type. Ids default to `<type>-<n>` (`x-assay-<type>-<n>` when another check
/// of the case already has that one, as a Skillet assertion may) and must be unique in `ids`.
pub fn read_check_list(
    doc: &mut Doc,
    node: &Node,
    field: &str,
    ids: &mut std::collections::HashSet<String>,
) -> Vec<crate::suite::Check> {
    let Some(items) = doc.seq(node, field) else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| read_listed_check(doc, item, &index(field, i), i, ids))
        .collect()
}

/// The `i`th check of a list, at `path`.
fn read_listed_check(
    doc: &mut Doc,
    item: &Node,
    path: &str,
    i: usize,
    ids: &mut std::collections::HashSet<String>,
) -> Option<crate::suite::Check> {
    let m = doc.map(item, path)?;
    let ty = m.req_text(doc, "type")?;
    // A plugin's type takes every other key as its configuration, which it validates;
    // a built-in type's keys are checked against its schema.
    let (config, target) = if is_plugin_type(doc, &ty) {
        let config = plugin_check(doc, &ty, config_of(&m, COMMON_KEYS), item, path);
        (config, crate::suite::CheckTarget::Output)
    } else if let Some(check_type) = crate::suite::check_types::lookup(&ty) {
        let mut known: Vec<&str> = COMMON_KEYS.to_vec();
        known.extend(check_type.key_names());
        m.check_keys(doc, &format!("a `{ty}` check"), &known);
        (read_config(doc, &m, check_type), check_type.target.clone())
    } else {
        unknown_check_type(doc, &m, item, &ty);
        return None;
    };
    let id = match m.text(doc, "id") {
        Some(id) => id,
        None => default_id(&ty, i, ids),
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
    let weight = m
        .opt("weight")
        .map_or(1.0, |n| read_weight(doc, n, &m.path("weight")));
    Some(crate::suite::Check {
        id,
        kind: ty,
        config: config?,
        negate,
        weight,
        target,
        location: Some(super::location(doc, item.span)),
    })
}

/// The error for a type that is neither built in nor a plugin's, with the nearest name.
fn unknown_check_type(doc: &mut Doc, m: &Map<'_>, item: &Node, ty: &str) {
    let builtin: Vec<&str> = crate::suite::check_types::BUILTIN
        .iter()
        .map(|t| t.name)
        .collect();
    let all = all_type_names(doc, &builtin);
    let names = all.iter().map(String::as_str);
    let near = crate::diag::did_you_mean(ty, names.clone());
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
}

/// A check's `weight`: above 0 (1 when it is not a number, or not above 0, after the error).
fn read_weight(doc: &mut Doc, n: &Node, field: &str) -> f64 {
    match doc.non_negative_number(n, field) {
        Some(w) if w > 0.0 => w,
        Some(_) => {
            doc.error(
                "out-of-range",
                n.span,
                field,
                "a weight must be above 0".to_string(),
            );
            1.0
        }
        None => 1.0,
    }
}

/// The id of the `i`th check of a list when it names none: `<type>-<n>`, or, when a check of
/// the case already has that id (a Skillet assertion's are made the same way),
/// `x-assay-<type>-<n>`, numbered further in the unlikely case that is taken too.
fn default_id(ty: &str, i: usize, ids: &std::collections::HashSet<String>) -> String {
    let plain = format!("{ty}-{}", i + 1);
    if !ids.contains(&plain) {
        return plain;
    }
    let prefixed = format!("x-assay-{plain}");
    (1..)
        .map(|k| {
            if k == 1 {
                prefixed.clone()
            } else {
                format!("{prefixed}-{k}")
            }
        })
        .find(|id| !ids.contains(id))
        .unwrap_or(prefixed)
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

/// What the loaders' tests of `x-assay-checks` share.
#[cfg(test)]
pub(super) mod testing {
    use serde_json::json;

    use crate::diag::Problem;
    use crate::suite::{Check, CheckTarget};

    /// The three budget checks each format's test writes, read with their default ids.
    pub fn assert_budget_checks(checks: &[&Check]) {
        let got: Vec<_> = checks
            .iter()
            .map(|c| (c.id.as_str(), c.kind.as_str(), &c.config, &c.target))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "max_turns-1",
                    "max_turns",
                    &json!({"turns": 3}),
                    &CheckTarget::Transcript
                ),
                (
                    "max_cost-2",
                    "max_cost",
                    &json!({"usd": 0.5}),
                    &CheckTarget::Transcript
                ),
                (
                    "max_duration-3",
                    "max_duration",
                    &json!({"seconds": 60.0}),
                    &CheckTarget::Process
                ),
            ]
        );
        assert!(checks.iter().all(|c| !c.negate && c.weight == 1.0));
    }

    /// The 1-based line and column of the first `needle` in `text` (ASCII).
    pub fn at(text: &str, needle: &str) -> (usize, usize) {
        let start = text.find(needle).unwrap_or_else(|| panic!("no {needle:?}"));
        let line = text[..start].matches('\n').count() + 1;
        let column = start - text[..start].rfind('\n').map_or(0, |i| i + 1) + 1;
        (line, column)
    }

    /// The errors among `problems`, as `(code, (line, column), field, message)`, by place.
    pub fn errors(problems: &[Problem]) -> Vec<(&'static str, (usize, usize), String, String)> {
        let mut out: Vec<_> = problems
            .iter()
            .filter(|p| p.is_error())
            .map(|p| {
                (
                    p.code,
                    p.line_col().unwrap_or((0, 0)),
                    p.field.clone().unwrap_or_default(),
                    p.message.clone(),
                )
            })
            .collect();
        out.sort_by_key(|e| e.1);
        out
    }

    pub fn assert_no_errors(problems: &[Problem]) {
        let found = errors(problems);
        assert!(found.is_empty(), "{found:#?}");
    }

    /// The help of the one error with `message`.
    pub fn help_of(problems: &[Problem], message: &str) -> String {
        let found: Vec<_> = problems.iter().filter(|p| p.message == message).collect();
        assert_eq!(found.len(), 1, "{message}: {problems:#?}");
        found[0].help.clone().unwrap_or_default()
    }
}
