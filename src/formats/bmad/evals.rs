//! `evals.json`: artifact evals as the first BMAD runners and Anthropic's skill-creator write
//! them (`references/schemas.md`): `{skill_name, evals: [{id, prompt, expected_output, files,
//! expectations}]}`, or a bare list of evals.
//!
//! skill-creator writes the cases first and the expectations later, so a case without them
//! loads with a warning; its instructions call them `assertions`, read as the same list when
//! it is a list of sentences.

use super::{Id, Input, fixtures, nothing_to_grade};
use crate::formats::location;
use crate::suite::{Case, Suite};
use crate::syntax::node::{Node, Value};
use crate::syntax::reader::{Doc, Map};

/// The keys of the file's top level, and of each eval.
pub const TOP_KEYS: &[&str] = &["skill_name", "evals"];
pub const EVAL_KEYS: &[&str] = &[
    "id",
    // skill-creator's descriptive name ("Give each eval a descriptive name").
    "name",
    "prompt",
    "expected_output",
    "files",
    "expectations",
    "assertions",
    "timeout",
    // assay's extension: a list of checks in assay's check-list syntax.
    crate::formats::checks::EXTENSION_KEY,
];

pub(super) fn read(doc: &mut Doc, root: &Node, input: &Input, suite: &mut Suite) -> Vec<Id> {
    let list = super::CaseList {
        key: "evals",
        top_keys: TOP_KEYS,
        item_keys: EVAL_KEYS,
        item: "an eval",
        read: read_eval,
    };
    let (top, ids) = super::read_case_list(doc, root, input, suite, &list);
    if let Some(top) = &top {
        suite.notes = top.str(doc, "_design_notes");
    }
    ids
}

fn read_eval(
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
    let prompt = m.req_text(doc, "prompt");
    let name = m.str(doc, "name").filter(|n| !n.trim().is_empty());
    let expected_output = m.str(doc, "expected_output");
    // BMAD has no check list of its own: every check of the case comes from here.
    let checks =
        crate::formats::checks::read_extension(doc, m, &mut std::collections::HashSet::new());
    let expectations = read_expectations(doc, m, node, checks.is_empty());
    let timeout = m.positive_int(doc, "timeout");
    let files = m.strings(doc, "files").unwrap_or_default();
    let (fixtures, unrunnable) = if files.is_empty() {
        Default::default()
    } else {
        fixtures::read(
            doc,
            &files,
            &m.path("files"),
            input,
            fixtures::Missing::FailsTheFile,
        )
    };
    let ((id, _), prompt) = (id?, prompt?);
    let prompt = with_input_files(prompt, &files);
    let mut case = Case::new(id, location(doc, node.span), vec![prompt]);
    case.name = name;
    case.expected_output = expected_output;
    case.judge.expectations = expectations;
    case.timeout_secs = timeout;
    case.fixtures = fixtures;
    case.unrunnable = unrunnable;
    case.checks = checks;
    Some(case)
}

/// The prompt, and after it the eval's input files as written in `files`, as skill-creator's
/// executor tells its agent ("Input files: …"): an agent is never left to guess that a fixture
/// was staged for it. Nothing is added when there are none.
fn with_input_files(prompt: String, files: &[(String, crate::diag::source::Span)]) -> String {
    if files.is_empty() {
        return prompt;
    }
    let listed: Vec<&str> = files.iter().map(|(f, _)| f.as_str()).collect();
    format!("{prompt}\n\nInput files: {}", listed.join(", "))
}

/// `expectations`, or skill-creator's `assertions` when it is a list of sentences; a case with
/// neither (and no checks) is warned about, since nothing grades it. A list of the wrong type
/// is its own error, not also "nothing to grade".
fn read_expectations(doc: &mut Doc, m: &Map<'_>, node: &Node, no_checks: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut unreadable = false;
    let mut list = |doc: &mut Doc, key: &str, out: &mut Vec<String>| {
        let n = m.opt(key)?;
        match doc.texts(n, &m.path(key)) {
            Some(items) => out.extend(items.into_iter().map(|(s, _)| s)),
            None => unreadable = true,
        }
        Some(n.span)
    };
    let mut at = list(doc, "expectations", &mut out);
    if let Some(n) = m.opt("assertions") {
        if is_sentences(n) {
            at = at.or(list(doc, "assertions", &mut out));
        } else {
            doc.warning(
                "ignored-key",
                n.span,
                &m.path("assertions"),
                "`assertions` is not a list of sentences, so nothing grades it (skill-creator's runner ignores it too)",
            )
            .help = Some("write each assertion as a sentence the judge grades PASS or FAIL, under `expectations`".into());
        }
    }
    if out.is_empty() && no_checks && !unreadable {
        nothing_to_grade(
            doc,
            at.unwrap_or(node.span),
            &m.path("expectations"),
            "expectations",
        );
    }
    out
}

fn is_sentences(n: &Node) -> bool {
    matches!(&n.value, Value::Seq(items) if items.iter().all(|i| matches!(i.value, Value::Str(_))))
}
