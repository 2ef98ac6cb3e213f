//! Trigger evals: a list of `{query, should_trigger}`, as BMAD's `triggers.json` and
//! skill-creator's trigger eval sets (`run_eval.py --eval-set`) write them, or that list under
//! `queries` of an object (`{skill_name, queries}`), as repositories keep skill-creator's
//! `trigger-eval.json`.

use std::collections::HashMap;

use crate::formats::location;
use crate::suite::{Suite, TriggerCase};
use crate::syntax::reader::{Doc, index};
use crate::{diag::source::Span, syntax::node::Node};

/// The names a skill's trigger eval file goes by: BMAD's, then those skill-creator's users
/// give the set its scripts read (its review page exports `eval_set.json`).
pub const TRIGGER_FILES: &[&str] = &[
    "triggers.json",
    "trigger-evals.json",
    "trigger_evals.json",
    // skill-creator's SKILL.md names the set `--eval-set <path-to-trigger-eval.json>`.
    "trigger-eval.json",
    "trigger_eval.json",
    "description-evals.json",
    "description_evals.json",
    "eval_set.json",
];

/// The keys of a trigger query, and of the file's top level.
pub const TRIGGER_KEYS: &[&str] = &[
    "query",
    "should_trigger",
    // assay's extension: which skills the query must and must not reach.
    crate::formats::checks::EXTENSION_KEY,
];

/// The keys of a trigger file that is an object: the list is under `queries`.
pub const TOP_KEYS: &[&str] = &["skill_name", "queries"];

pub(super) fn read(doc: &mut Doc, root: &Node, input: &super::Input, suite: &mut Suite) {
    let (top, items) = super::top_list(doc, root, "queries", TOP_KEYS);
    if let Some(top) = &top {
        super::check_skill_name(doc, top, input);
    }
    let Some(items) = items else {
        return;
    };
    let list = if top.is_some() { "queries" } else { "" };
    let mut queries: HashMap<String, Span> = HashMap::new();
    for (i, node) in items.iter().enumerate() {
        let field = index(list, i);
        let Some(m) = doc.map(node, &field) else {
            continue;
        };
        m.warn_unknown_keys(
            doc,
            "a trigger eval",
            TRIGGER_KEYS,
            super::is_note,
            super::is_strict,
        );
        let query = m.req_text(doc, "query");
        let should = m
            .req(doc, "should_trigger")
            .and_then(|n| doc.bool(n, &m.path("should_trigger")));
        let routing = crate::formats::checks::read_routing(doc, &m);
        let (Some(query), Some(should_trigger)) = (query, should) else {
            continue;
        };
        if let Some(first) = queries.get(&query) {
            let (line, _) = doc.source.line_col(first.start);
            doc.warning(
                "duplicate-query",
                node.span,
                &m.path("query"),
                format!("the same query is already on line {line}"),
            );
        } else {
            queries.insert(query.clone(), node.span);
        }
        suite.triggers.push(TriggerCase {
            id: format!("trigger-{}", i + 1),
            query,
            should_trigger,
            routing,
            location: location(doc, node.span),
        });
    }
}
