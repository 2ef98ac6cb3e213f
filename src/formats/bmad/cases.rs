//! `cases.json`: the current BMAD runner's cases (bmad-builder's `bmad-eval-runner`), a list or
//! `{"cases": [...]}` of `{id, input, rubric, state_prefix, files}`.
//!
//! `state_prefix` places the skill mid-workflow: the runner prepends it to `input` with a
//! blank line between (its own trailing whitespace trimmed), and so does assay. `rubric` is
//! graded as expectations are: each item PASS or FAIL with evidence, weak ones flagged.

use super::{Id, Input, fixtures, nothing_to_grade};
use crate::formats::location;
use crate::suite::{Case, Check, CheckTarget, Suite};
use crate::syntax::node::Node;
use crate::syntax::reader::{Doc, Map};

const TOP_KEYS: &[&str] = &["skill_name", "cases"];
const CASE_KEYS: &[&str] = &[
    "id",
    "input",
    "rubric",
    "state_prefix",
    "files",
    "timeout",
    crate::formats::checks::EXTENSION_KEY,
];

pub(super) fn read(doc: &mut Doc, root: &Node, input: &Input, suite: &mut Suite) -> Vec<Id> {
    let list = super::CaseList {
        key: "cases",
        top_keys: TOP_KEYS,
        item_keys: CASE_KEYS,
        item: "a case",
        read: read_case,
    };
    super::read_case_list(doc, root, input, suite, &list).1
}

fn read_case(
    doc: &mut Doc,
    m: &Map<'_>,
    node: &Node,
    input: &Input,
    ids: &mut Vec<Id>,
) -> Option<Case> {
    let id = super::read_id(doc, m);
    if let Some((id, span)) = &id {
        ids.push((id.clone(), *span, m.path("id")));
    }
    let text = m.req_text(doc, "input");
    let prefix = m.str(doc, "state_prefix");
    let checks =
        crate::formats::checks::read_extension(doc, m, &mut std::collections::HashSet::new());
    let rubric = m
        .opt("rubric")
        .map(|n| (n.span, doc.texts(n, &m.path("rubric"))));
    if checks.is_empty() {
        match &rubric {
            None => nothing_to_grade(doc, node.span, &m.path("rubric"), "rubric"),
            Some((span, Some(items))) if items.is_empty() => {
                nothing_to_grade(doc, *span, &m.path("rubric"), "rubric")
            }
            _ => {}
        }
    }
    let rubric: Vec<String> = rubric
        .and_then(|(_, items)| items)
        .unwrap_or_default()
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    let timeout = m.positive_int(doc, "timeout");
    let (fixtures, unrunnable) = m
        .opt("files")
        .and_then(|n| doc.strings(n, &m.path("files")))
        .map(|files| {
            fixtures::read(
                doc,
                &files,
                &m.path("files"),
                input,
                fixtures::Missing::FailsTheCase,
            )
        })
        .unwrap_or_default();
    let ((id, _), text) = (id?, text?);
    let mut case = Case::new(
        id,
        location(doc, node.span),
        vec![compose(prefix.as_deref(), &text)],
    );
    case.judge.expectations = rubric;
    case.timeout_secs = timeout;
    case.checks = checks;
    // The runner's fixtures fail closed: one the agent changed or deleted fails the case, with
    // the files named.
    if !fixtures.is_empty() {
        case.checks.push(Check::new(
            "fixtures-unchanged".into(),
            "fixture_unchanged",
            serde_json::json!({}),
            CheckTarget::Workspace,
            Some(case.location.clone()),
        ));
    }
    case.fixtures = fixtures;
    case.unrunnable = unrunnable;
    Some(case)
}

/// The prompt the runner sends: `state_prefix`, trailing whitespace trimmed, a blank line, then
/// `input`; `input` alone when the prefix is absent or empty.
pub fn compose(prefix: Option<&str>, input: &str) -> String {
    match prefix.map(str::trim_end).filter(|p| !p.is_empty()) {
        Some(p) => format!("{p}\n\n{input}"),
        None => input.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::compose;

    #[test]
    fn state_prefix_comes_first_with_a_blank_line() {
        assert_eq!(
            compose(Some("[step 3 done]\n  "), "Go on."),
            "[step 3 done]\n\nGo on."
        );
        assert_eq!(compose(Some(""), "Go on."), "Go on.");
        assert_eq!(compose(None, "Go on."), "Go on.");
    }
}
