//! `grading_criteria`: the judge's rubric, one `{id, criterion}` object per criterion, each id
//! in the shared pool.

use super::ids::Ids;
use crate::suite::Criterion;
use crate::syntax::node::{Node, Value};
use crate::syntax::reader::{Doc, index};

/// The keys of a criterion.
pub const CRITERION_KEYS: &[&str] = &["id", "criterion"];

/// The `grading_criteria` list, each id added to `ids`.
pub(super) fn read(doc: &mut Doc, node: &Node, ids: &mut Ids) -> Vec<Criterion> {
    let Some(items) = doc.seq(node, "grading_criteria") else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| read_criterion(doc, item, &index("grading_criteria", i), ids))
        .collect()
}

fn read_criterion(doc: &mut Doc, item: &Node, field: &str, ids: &mut Ids) -> Option<Criterion> {
    if let Value::Str(_) = item.value {
        doc.error(
            "wrong-type",
            item.span,
            field,
            "a criterion is an object, found a string",
        )
        .help = Some("write {\"id\": \"…\", \"criterion\": \"…\"}".into());
        return None;
    }
    let c = doc.map(item, field)?;
    c.check_keys(doc, "a grading criterion", CRITERION_KEYS);
    let id = ids.read(doc, &c);
    let criterion = c.req_text(doc, "criterion");
    Some(Criterion {
        id: id?,
        criterion: criterion?,
    })
}
