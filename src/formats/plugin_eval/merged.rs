//! One case as Claude Code merges its files: `prompt.md`'s front matter over `case.yaml` (its
//! top keys and `execution` keys win, `disallowed_tools` lists are joined), the prompt body over
//! `execution.prompt`, and the grader files after `case.yaml`'s graders. Every value keeps the
//! file it came from, so a message points into the right file.

use std::sync::Arc;

use super::case_files::CaseFiles;
use crate::diag::source::{Source, Span};
use crate::syntax::node::{Key, Node, Value};

/// The front matter keys of `prompt.md` that set the case's top level.
pub const PROMPT_TOP_KEYS: &[&str] = &[
    "schema_version",
    "name",
    "description",
    "tags",
    "plugins",
    "runs",
    "expected_outcome",
];

/// The front matter keys of `prompt.md` that set the case's `execution`.
pub const PROMPT_EXECUTION_KEYS: &[&str] = &[
    "model",
    "max_turns",
    "timeout_seconds",
    "allowed_tools",
    "disallowed_tools",
    "artifact_publish",
    "growthbook_overrides",
    "append_system_prompt",
    "env",
];

/// A value and the file it is in (an index into [`MergedCase::sources`]).
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    pub node: &'a Node,
    pub file: usize,
}

/// A grader before validation: its keys, where they are, and the file it came from.
#[derive(Debug)]
pub struct GraderSource<'a> {
    pub entries: Vec<(&'a str, At<'a>)>,
    pub file: usize,
    pub span: Span,
    /// A grader file's name without `.md`: the grader's name unless it sets one.
    pub default_name: Option<String>,
    /// A grader file's body, trimmed and not empty: its `criteria` or `pattern` unless set.
    pub body: Option<String>,
}

impl<'a> GraderSource<'a> {
    pub fn get(&self, key: &str) -> Option<At<'a>> {
        self.entries
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }
}

/// The merged case.
pub struct MergedCase<'a> {
    /// The files values come from: `case.yaml`, `prompt.md`, then each grader file.
    pub sources: Vec<Arc<Source>>,
    /// Where a case-level message points: `case.yaml`'s document, else `None` (the folder).
    pub root: Option<(usize, Span)>,
    pub top: Vec<(&'a str, At<'a>)>,
    /// `case.yaml`'s `execution` when it is a mapping, or `None` when it is absent.
    pub execution: Option<Vec<(&'a str, At<'a>)>>,
    /// `execution` as written when it is not a mapping (an error to report).
    pub bad_execution: Option<At<'a>>,
    /// The two `disallowed_tools` lists, joined.
    pub disallowed: Vec<At<'a>>,
    /// The prompt body, when `prompt.md` has one.
    pub prompt_body: Option<String>,
    /// `graders` as `case.yaml` writes it, when it is not a list (an error to report).
    pub bad_graders: Option<At<'a>>,
    pub graders: Vec<GraderSource<'a>>,
    /// Whether any grader list was given at all.
    pub has_graders: bool,
    /// `prompt.md` front matter keys that are not Claude Code's.
    pub unknown_prompt_keys: Vec<(&'a Key, usize)>,
}

fn entries(node: &Node, file: usize) -> Vec<(&str, At<'_>)> {
    node.as_map()
        .unwrap_or(&[])
        .iter()
        .map(|(k, v)| (k.name.as_str(), At { node: v, file }))
        .collect()
}

fn set<'a>(list: &mut Vec<(&'a str, At<'a>)>, key: &'a str, v: At<'a>) {
    match list.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = v,
        None => list.push((key, v)),
    }
}

/// Merges a case's files.
pub fn merge(files: &CaseFiles) -> MergedCase<'_> {
    let mut m = MergedCase {
        sources: Vec::new(),
        root: None,
        top: Vec::new(),
        execution: None,
        bad_execution: None,
        disallowed: Vec::new(),
        prompt_body: None,
        bad_graders: None,
        graders: Vec::new(),
        has_graders: false,
        unknown_prompt_keys: Vec::new(),
    };
    from_yaml(&mut m, files);
    if let Some(p) = &files.prompt {
        from_prompt(&mut m, p);
    }
    for (name, md) in &files.graders {
        m.sources.push(md.source.clone());
        let file = m.sources.len() - 1;
        let body = md.body.trim();
        m.has_graders = true;
        m.graders.push(GraderSource {
            entries: entries(
                md.front.as_ref().expect("grader files have front matter"),
                file,
            ),
            file,
            span: md.front.as_ref().map_or(Span::new(0, 0), |f| f.span),
            default_name: Some(name.trim_end_matches(".md").to_string()),
            body: (!body.is_empty()).then(|| body.to_string()),
        });
    }
    m
}

fn from_yaml<'a>(m: &mut MergedCase<'a>, files: &'a CaseFiles) {
    let Some((doc, node)) = &files.yaml else {
        return;
    };
    m.sources.push(doc.source.clone());
    m.root = Some((0, node.span));
    for (k, v) in entries(node, 0) {
        match k {
            "execution" => match &v.node.value {
                Value::Map(_) => {
                    let mut exec = entries(v.node, 0);
                    if let Some(pos) = exec.iter().position(|(k, _)| *k == "disallowed_tools") {
                        m.disallowed.push(exec.remove(pos).1);
                    }
                    m.execution = Some(exec);
                }
                _ => m.bad_execution = Some(v),
            },
            "graders" => match &v.node.value {
                Value::Seq(items) => {
                    m.has_graders = true;
                    m.graders.extend(items.iter().map(|g| GraderSource {
                        entries: entries(g, 0),
                        file: 0,
                        span: g.span,
                        default_name: None,
                        body: None,
                    }));
                }
                _ => m.bad_graders = Some(v),
            },
            _ => m.top.push((k, v)),
        }
    }
}

fn from_prompt<'a>(m: &mut MergedCase<'a>, p: &'a super::front_matter::Md) {
    m.sources.push(p.source.clone());
    let file = m.sources.len() - 1;
    // With a prompt.md, an `execution` that is not a mapping is dropped, as Claude Code does.
    if m.bad_execution.take().is_some() || m.execution.is_none() {
        m.execution.get_or_insert_with(Vec::new);
    }
    for (k, v) in p.entries() {
        let at = At { node: v, file };
        let key = k.name.as_str();
        if key == "disallowed_tools" {
            m.disallowed.push(at);
        } else if PROMPT_TOP_KEYS.contains(&key) {
            set(&mut m.top, key, at);
        } else if PROMPT_EXECUTION_KEYS.contains(&key) {
            set(m.execution.get_or_insert_with(Vec::new), key, at);
        } else {
            m.unknown_prompt_keys.push((k, file));
        }
    }
    let body = p.body.trim();
    if !body.is_empty() {
        m.prompt_body = Some(body.to_string());
    }
}
