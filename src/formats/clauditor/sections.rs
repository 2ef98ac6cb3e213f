//! `sections`: what clauditor extracts from the output, as named sections of tiers (each with
//! its entry counts) of fields (each with an id in the shared pool and an optional format).

use super::ids::Ids;
use crate::suite::value_formats;
use crate::suite::{Field, Section, Tier};
use crate::syntax::node::Node;
use crate::syntax::reader::{Doc, index};

/// The keys of a section, of its tiers and of their fields.
pub const SECTION_KEYS: &[&str] = &["name", "tiers"];
pub const TIER_KEYS: &[&str] = &[
    "label",
    "description",
    "min_entries",
    "max_entries",
    "fields",
];
pub const FIELD_KEYS: &[&str] = &["id", "name", "required", "format"];

/// The `sections` list, each field's id added to `ids`.
pub(super) fn read(doc: &mut Doc, node: &Node, ids: &mut Ids) -> Vec<Section> {
    let Some(items) = doc.seq(node, "sections") else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(si, item)| read_section(doc, item, &index("sections", si), ids))
        .collect()
}

fn read_section(doc: &mut Doc, item: &Node, field: &str, ids: &mut Ids) -> Option<Section> {
    let s = doc.map(item, field)?;
    s.check_keys(doc, "a section", SECTION_KEYS);
    let name = s.req_text(doc, "name");
    if !s.has("tiers") {
        let msg = if s.has("fields") {
            "a section has flat `fields` without `tiers`; wrap the fields in a tiers[] entry"
        } else {
            "missing required field `tiers`"
        };
        doc.error("missing-field", item.span, &s.path("tiers"), msg);
        return None;
    }
    let tiers = s
        .opt("tiers")
        .and_then(|n| doc.seq(n, &s.path("tiers")))
        .map(|tiers| {
            tiers
                .iter()
                .enumerate()
                .filter_map(|(ti, t)| read_tier(doc, t, &index(&s.path("tiers"), ti), ids))
                .collect()
        })
        .unwrap_or_default();
    Some(Section { name: name?, tiers })
}

fn read_tier(doc: &mut Doc, node: &Node, field: &str, ids: &mut Ids) -> Option<Tier> {
    let t = doc.map(node, field)?;
    t.check_keys(doc, "a tier", TIER_KEYS);
    let label = t.req_text(doc, "label");
    let description = t.str(doc, "description");
    let min_entries = t
        .opt("min_entries")
        .and_then(|n| doc.non_negative_int(n, &t.path("min_entries")))
        .unwrap_or(0);
    let max_entries = t
        .opt("max_entries")
        .and_then(|n| doc.non_negative_int(n, &t.path("max_entries")));
    if let (Some(max), Some(n)) = (max_entries, t.opt("max_entries"))
        && max < min_entries
    {
        doc.error(
            "out-of-range",
            n.span,
            &t.path("max_entries"),
            format!("max_entries ({max}) is below min_entries ({min_entries})"),
        );
    }
    let fields = t
        .opt("fields")
        .and_then(|n| doc.seq(n, &t.path("fields")))
        .map(|items| {
            items
                .iter()
                .enumerate()
                .filter_map(|(fi, item)| read_field(doc, item, &index(&t.path("fields"), fi), ids))
                .collect()
        })
        .unwrap_or_default();
    Some(Tier {
        label: label?,
        description,
        min_entries,
        max_entries,
        fields,
    })
}

fn read_field(doc: &mut Doc, item: &Node, field: &str, ids: &mut Ids) -> Option<Field> {
    let f = doc.map(item, field)?;
    f.check_keys_with(
        doc,
        "a field",
        FIELD_KEYS,
        |_| false,
        |k| (k == "pattern").then(|| "use `format`, not `pattern`".to_string()),
    );
    let id = ids.read(doc, &f);
    let name = f.req_text(doc, "name");
    let required = f.bool(doc, "required").unwrap_or(true);
    let format = f
        .opt("format")
        .and_then(|n| read_format(doc, n, &f.path("format")));
    Some(Field {
        id: id?,
        name: name?,
        required,
        format,
    })
}

/// A field's `format`: a registered name, or an inline regex matched against the whole value.
fn read_format(doc: &mut Doc, node: &Node, field: &str) -> Option<String> {
    let s = doc.string(node, field)?;
    if s.is_empty() {
        doc.error(
            "empty",
            node.span,
            field,
            "format may not be empty; leave it out to skip format checks",
        );
        return None;
    }
    if value_formats::lookup(&s).is_some() || doc.extra.as_ref().is_some_and(|e| e.has_format(&s)) {
        return Some(s);
    }
    if let Err(e) = fancy_regex::Regex::new(&format!("^(?:{s})$")) {
        doc.error(
            "unknown-format",
            node.span,
            field,
            format!("`{s}` is neither a registered format nor a valid regex: {e}"),
        )
        .help = crate::diag::did_you_mean(&s, value_formats::names())
            .map(|n| format!("did you mean the format `{n}`?"));
        return None;
    }
    Some(s)
}
