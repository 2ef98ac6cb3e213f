//! `trigger_tests`: queries that should, and should not, make the agent pick the skill.

use crate::formats::location;
use crate::suite::TriggerCase;
use crate::syntax::node::Node;
use crate::syntax::reader::Doc;

/// The keys of `trigger_tests`.
pub const TRIGGER_KEYS: &[&str] = &["should_trigger", "should_not_trigger"];

/// The trigger queries, `should_trigger[i]` first, then `should_not_trigger[i]`.
pub(super) fn read(doc: &mut Doc, node: &Node) -> Vec<TriggerCase> {
    let mut out = Vec::new();
    let Some(t) = doc.map(node, "trigger_tests") else {
        return out;
    };
    t.check_keys(doc, "trigger_tests", TRIGGER_KEYS);
    for (key, should) in [("should_trigger", true), ("should_not_trigger", false)] {
        for (i, (query, span)) in t
            .texts(doc, key)
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            out.push(TriggerCase {
                id: format!("{key}[{i}]"),
                query,
                should_trigger: should,
                routing: Default::default(),
                location: location(doc, span),
                holdout: false,
            });
        }
    }
    out
}
