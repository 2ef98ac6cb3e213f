//! Trigger evals: a list of `{query, should_trigger}`, as BMAD's `triggers.json`,
//! skill-creator's trigger eval sets (`run_eval.py --eval-set`) and agentskills.io's query
//! files ("Optimizing descriptions": `eval_queries.json`, or `train_queries.json` with
//! `validation_queries.json` beside it) write them, or that list under `queries` of an object
//! (`{skill_name, queries}`), as repositories keep skill-creator's `trigger-eval.json`.

use std::collections::HashMap;

use crate::formats::location;
use crate::suite::{Suite, TriggerCase};
use crate::syntax::reader::{Doc, Map, index};
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
    // agentskills.io's: its query set, and the training set of its train/validation split.
    "eval_queries.json",
    TRAIN_FILE,
];

/// Trigger file names generic enough for other tools' files (a dataset's `train_queries.json`):
/// found only when the file is in a trigger set's shape, or cannot be read as JSON (the loader
/// then says why); another tool's file is left alone.
pub const GENERIC_NAMES: &[&str] = &["eval_queries.json", TRAIN_FILE];

/// agentskills.io's training set: the folder's trigger set, with [`VALIDATION_FILE`] beside it.
pub const TRAIN_FILE: &str = "train_queries.json";

/// agentskills.io's validation set: read only beside [`TRAIN_FILE`], as its holdout.
pub const VALIDATION_FILE: &str = "validation_queries.json";

/// Which set a trigger file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Set {
    /// The folder's trigger set (queries `trigger-1`, …).
    Triggers,
    /// The validation set beside `train_queries.json` (queries `validation-1`, …): held out.
    Validation,
}

/// The keys of a trigger query, and of the file's top level.
pub const TRIGGER_KEYS: &[&str] = &[
    "query",
    "should_trigger",
    // assay's extension: which skills the query must and must not reach.
    crate::formats::checks::EXTENSION_KEY,
];

/// The keys of a trigger file that is an object: the list is under `queries`.
pub const TOP_KEYS: &[&str] = &["skill_name", "queries"];

pub(super) fn read(doc: &mut Doc, root: &Node, input: &super::Input, suite: &mut Suite, set: Set) {
    let (top, items) = super::top_list(doc, root, "queries", TOP_KEYS);
    if let Some(top) = &top {
        super::check_skill_name(doc, top, input);
    }
    let Some(items) = items else {
        return;
    };
    let list = if top.is_some() { "queries" } else { "" };
    let mut queries: HashMap<String, Span> = HashMap::new();
    let training = match set {
        Set::Validation => training_queries(suite),
        Set::Triggers => HashMap::new(),
    };
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
        once_in_file(doc, &m, node.span, &query, &mut queries);
        let holdout = set == Set::Validation;
        if let Some((file, line)) = training.get(query.trim()) {
            overlap(doc, &m, file, *line);
        }
        suite.triggers.push(TriggerCase {
            id: format!(
                "{}-{}",
                if holdout { "validation" } else { "trigger" },
                i + 1
            ),
            query,
            should_trigger,
            routing,
            location: location(doc, node.span),
            holdout,
        });
    }
}

/// A query the file already holds is warned about (at `span`, naming the first's line).
fn once_in_file(
    doc: &mut Doc,
    m: &Map<'_>,
    span: Span,
    query: &str,
    queries: &mut HashMap<String, Span>,
) {
    if let Some(first) = queries.get(query) {
        let (line, _) = doc.source.line_col(first.start);
        doc.warning(
            "duplicate-query",
            span,
            &m.path("query"),
            format!("the same query is already on line {line}"),
        );
    } else {
        queries.insert(query.to_string(), span);
    }
}

/// The training queries read so far (trimmed), each with its file's name and line.
fn training_queries(suite: &Suite) -> HashMap<String, (String, usize)> {
    suite
        .triggers
        .iter()
        .filter(|t| !t.holdout)
        .map(|t| {
            let file = t.location.file.file_name().map_or_else(
                || t.location.file.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            (t.query.trim().to_string(), (file, t.location.line))
        })
        .collect()
}

/// A validation query that is also a training query (in `file` at `line`) is an error: the
/// holdout would measure what training already saw.
fn overlap(doc: &mut Doc, m: &Map<'_>, file: &str, line: usize) {
    let span = m.opt("query").map_or(m.span, |n| n.span);
    doc.error(
        "holdout-overlap",
        span,
        &m.path("query"),
        format!(
            "this validation query is also a training query ({file} line {line}): the holdout must hold queries training never saw"
        ),
    )
    .help = Some(format!("keep the query in one of {TRAIN_FILE} and {VALIDATION_FILE}"));
}
