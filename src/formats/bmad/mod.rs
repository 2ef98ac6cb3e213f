//! BMAD's eval formats, and skill-creator's, which BMAD's runner calls compatible: one folder
//! of eval files per skill.
//!
//! - `evals.json` (`evals.rs`): artifact evals `{id, prompt, expected_output, files,
//!   expectations}`, as the BMAD runner's first versions and Anthropic's skill-creator write
//!   them (skill-creator's cases may have no `expectations` yet, and its `assertions` is the
//!   same list under the name its instructions use);
//! - `cases.json` (`cases.rs`): the current BMAD runner's cases `{id, input, rubric,
//!   state_prefix, files}`;
//! - `triggers.json` (`triggers.rs`), skill-creator's trigger files
//!   (`trigger-evals.json`, `description-evals.json`, `eval_set.json`) and agentskills.io's
//!   (`eval_queries.json`, `train_queries.json` with its holdout `validation_queries.json`):
//!   queries that should or should not fire the skill.
//!
//! Both runners ignore keys they do not know, so an unknown key is a warning naming it (with a
//! "did you mean"), never a refusal; assay's own `x-assay-…` keys stay strict.

pub mod adapter;
mod cases;
pub mod evals;
pub mod find;
mod fixtures;
mod sniff;
pub mod triggers;
mod unread;
pub mod write;

use std::path::PathBuf;

use crate::diag::Problem;
use crate::suite::Loaded;
use crate::suite::{Defaults, Format, Skill, Suite};
use crate::syntax::reader::Doc;
use crate::{diag::source::Span, syntax::node::Node};

use super::LoadCtx;
use super::is_assay_key as is_strict;

/// What the BMAD runner (and skill-creator) decide: the eval folder whole is the evaluation,
/// and fixtures are kept in its `files/`.
pub const POLICIES: crate::suite::Policies = crate::suite::Policies {
    fixture_dirs: &["files"],
    spec_is_folder: true,
    ..crate::suite::Policies::NONE
};

/// One BMAD eval folder, found by discovery, and the skill it belongs to.
#[derive(Debug, Clone)]
pub struct Input {
    /// The folder holding the eval files (and `setup/`, `<id>/setup/` overlays).
    pub dir: PathBuf,
    pub evals_file: Option<PathBuf>,
    /// The current runner's `cases.json`.
    pub cases_file: Option<PathBuf>,
    pub triggers_file: Option<PathBuf>,
    /// agentskills.io's `validation_queries.json`, beside its `train_queries.json` (the
    /// triggers file): the validation set, held out by `assay optimize`.
    pub validation_file: Option<PathBuf>,
    /// The skill's name, derived from its SKILL.md path (or the eval folder's name without one).
    pub skill_name: String,
    pub skill: Option<Skill>,
    pub project_root: PathBuf,
}

impl Input {
    /// The files to read, in order.
    fn files(&self) -> impl Iterator<Item = (&PathBuf, Reader)> {
        [
            (self.evals_file.as_ref(), Reader::Evals),
            (self.cases_file.as_ref(), Reader::Cases),
            (self.triggers_file.as_ref(), Reader::Triggers),
            (self.validation_file.as_ref(), Reader::Validation),
        ]
        .into_iter()
        .filter_map(|(f, r)| f.map(|f| (f, r)))
    }
}

#[derive(Debug, Clone, Copy)]
enum Reader {
    Evals,
    Cases,
    Triggers,
    Validation,
}

/// Keys starting with `_` are notes for people (as `_design_notes` is) and are never errors.
fn is_note(key: &str) -> bool {
    key.starts_with('_')
}

pub fn load(ctx: &LoadCtx, input: &Input) -> Loaded {
    let mut out = Loaded::default();
    let mut suite = new_suite(ctx, input);
    if input.skill.is_none() {
        out.problems.push(
            Problem::warning(
                "skill-not-found",
                &ctx.shown(&input.dir),
                format!(
                    "no SKILL.md found for skill `{}`; its evals run without the skill installed",
                    input.skill_name
                ),
            )
            .help(
                "put the skill at <project>/.claude/skills/<name>/SKILL.md, or pass --skill <path>",
            ),
        );
    }
    let mut ok = true;
    let mut earlier = std::collections::HashSet::new();
    for (file, reader) in input.files() {
        match ctx.parse(file, &ctx.shown(file)) {
            Ok((mut doc, root)) => {
                let ids = match reader {
                    Reader::Evals => evals::read(&mut doc, &root, input, &mut suite),
                    Reader::Cases => cases::read(&mut doc, &root, input, &mut suite),
                    Reader::Triggers | Reader::Validation => {
                        let set = match reader {
                            Reader::Validation => triggers::Set::Validation,
                            _ => triggers::Set::Triggers,
                        };
                        triggers::read(&mut doc, &root, input, &mut suite, set);
                        Vec::new()
                    }
                };
                check_ids(&mut doc, &ids, &mut earlier);
                ok &= !doc.has_errors();
                out.problems.append(&mut doc.problems);
            }
            Err(mut p) => {
                ok = false;
                out.problems.append(&mut p);
            }
        }
    }
    unread::warn(ctx, input, &mut out.problems);
    if let Some(file) = adapter::beside(&input.dir) {
        match adapter::read(ctx, &file, false) {
            Ok((spec, mut warnings)) => {
                suite.defaults.harness = Some(crate::suite::ADAPTER_HARNESS.into());
                suite.defaults.adapter = Some(spec);
                out.problems.append(&mut warnings);
            }
            Err(mut p) => {
                ok = false;
                out.problems.append(&mut p);
            }
        }
    }
    if ok {
        out.suites.push(suite);
    }
    out
}

fn new_suite(ctx: &LoadCtx, input: &Input) -> Suite {
    let source = input
        .evals_file
        .as_ref()
        .or(input.cases_file.as_ref())
        .or(input.triggers_file.as_ref())
        .unwrap_or(&input.dir);
    Suite {
        id: format!("{}:{}", label(input), input.skill_name),
        format: Format::Bmad,
        source: ctx.shown(source),
        project_root: input.project_root.clone(),
        skill: input.skill.clone(),
        description: input.skill.as_ref().and_then(|s| s.description.clone()),
        notes: None,
        defaults: Defaults {
            allow_hang_heuristic: true,
            ..Defaults::default()
        },
        base_overlay: Some(input.dir.join("setup")).filter(|p| p.is_dir()),
        package: None,
        cases: Vec::new(),
        triggers: Vec::new(),
        policies: POLICIES,
    }
}

/// The suite's label, before the skill's name in its id: `skill-creator` for skill-creator's
/// suites, told from BMAD's by where they live (skill-creator keeps `evals/evals.json` and its
/// trigger set in the skill's own folder, `references/schemas.md`; BMAD's runner writes
/// `evals/<skill>/` and its `cases.json`), else `bmad`.
fn label(input: &Input) -> &'static str {
    let own = |s: &Skill| {
        crate::suite::paths::normalize_abs(&s.path.join("evals"))
            == crate::suite::paths::normalize_abs(&input.dir)
    };
    if input.cases_file.is_none() && input.skill.as_ref().is_some_and(own) {
        "skill-creator"
    } else {
        "bmad"
    }
}

/// An id read from a case, where it was written, and its field path.
type Id = (String, Span, String);

/// Case ids are folder names in the run: unique within a file and across a folder's evals and
/// cases files. `earlier` holds the ids of files read before this one.
fn check_ids(doc: &mut Doc, ids: &[Id], earlier: &mut std::collections::HashSet<String>) {
    super::check_unique(
        doc,
        "eval id",
        ids.iter()
            .map(|(id, span, f)| (id.as_str(), *span, f.clone())),
    );
    for (id, span, field) in ids {
        if earlier.contains(id) {
            doc.error(
                "duplicate-id",
                *span,
                field,
                format!("eval id `{id}` is already used by another eval file of this folder"),
            );
        }
    }
    earlier.extend(ids.iter().map(|(id, _, _)| id.clone()));
}

/// An eval id: a string or an integer (the published suites use both), usable as a folder name.
fn read_id(doc: &mut Doc, m: &crate::syntax::reader::Map<'_>) -> Option<(String, Span)> {
    let n = m.req(doc, "id")?;
    let id = match &n.value {
        crate::syntax::node::Value::Int(i) => Some(i.to_string()),
        _ => doc.text(n, &m.path("id")),
    }?;
    if id.contains(['/', '\\']) || id == "." || id == ".." {
        doc.error(
            "bad-id",
            n.span,
            &m.path("id"),
            format!(
                "eval id `{id}` is used as a folder name and cannot contain `/` or be `.`/`..`"
            ),
        );
    }
    Some((id, n.span))
}

/// The root's list: a bare list, or the list under `key` of an object whose other keys are
/// checked against `top_keys`.
fn top_list<'n>(
    doc: &mut Doc,
    root: &'n Node,
    key: &str,
    top_keys: &[&str],
) -> (Option<crate::syntax::reader::Map<'n>>, Option<&'n [Node]>) {
    if let crate::syntax::node::Value::Seq(items) = &root.value {
        return (None, Some(items));
    }
    let Some(top) = doc.map(root, "") else {
        return (None, None);
    };
    let what = doc.source.path.file_name().map_or_else(
        || "the file".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    top.warn_unknown_keys(doc, &what, top_keys, is_note, is_strict);
    let list = top.req(doc, key).and_then(|n| doc.seq(n, key));
    (Some(top), list)
}

/// How one case file of the folder is laid out: the root's list under `key` (or a bare list),
/// the keys of the top object and of each item, and how an item reads into a case.
struct CaseList {
    key: &'static str,
    top_keys: &'static [&'static str],
    item_keys: &'static [&'static str],
    /// What an item is called in messages ("an eval").
    item: &'static str,
    read: fn(
        &mut Doc,
        &crate::syntax::reader::Map<'_>,
        &Node,
        &Input,
        &mut Vec<Id>,
    ) -> Option<crate::suite::Case>,
}

/// Reads a case file laid out as `list` into `suite`: the skill name checked, each item's
/// unknown keys warned about, each case given its overlay. Returns the top object (for the
/// file's own keys) and the ids read.
fn read_case_list<'n>(
    doc: &mut Doc,
    root: &'n Node,
    input: &Input,
    suite: &mut Suite,
    list: &CaseList,
) -> (Option<crate::syntax::reader::Map<'n>>, Vec<Id>) {
    let (top, items) = top_list(doc, root, list.key, list.top_keys);
    if let Some(top) = &top {
        check_skill_name(doc, top, input);
    }
    let overlays = Overlays::of(input);
    let mut ids = Vec::new();
    for (i, node) in items.unwrap_or_default().iter().enumerate() {
        let Some(m) = doc.map(node, &crate::syntax::reader::index(list.key, i)) else {
            continue;
        };
        m.warn_unknown_keys(doc, list.item, list.item_keys, is_note, is_strict);
        if let Some(case) = (list.read)(doc, &m, node, input, &mut ids) {
            suite.cases.push(overlays.apply(case));
        }
    }
    (top, ids)
}

/// `skill_name` is documentation for both runners; a name that differs from the skill under
/// test is said, never refused.
fn check_skill_name(doc: &mut Doc, top: &crate::syntax::reader::Map<'_>, input: &Input) {
    if let Some(name) = top.str(doc, "skill_name")
        && name != input.skill_name
        && let Some(span) = top.opt("skill_name").map(|n| n.span)
    {
        doc.warning(
            "skill-name-mismatch",
            span,
            "skill_name",
            format!(
                "skill_name is `{name}` but the skill under test is `{}` (from its SKILL.md path)",
                input.skill_name
            ),
        )
        .help = Some("skill_name is documentation only; the runner uses the SKILL.md path".into());
    }
}

/// The warning for a case nothing grades.
fn nothing_to_grade(doc: &mut Doc, span: Span, field: &str, key: &str) {
    doc.warning(
        "nothing-to-grade",
        span,
        field,
        format!("no {key}: this case can only show that the skill did not crash"),
    )
    .help = Some(format!(
        "add `{key}`: sentences the judge grades PASS or FAIL"
    ));
}

/// Per-case overlays, `<eval folder>/<id>/setup/`. The folder is listed once: a system call
/// per case costs more than the rest of loading a file of 100,000 cases.
struct Overlays<'a> {
    dir: &'a std::path::Path,
    entries: std::collections::HashSet<std::ffi::OsString>,
}

impl<'a> Overlays<'a> {
    fn of(input: &'a Input) -> Self {
        let entries = std::fs::read_dir(&input.dir)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
            .unwrap_or_default();
        Overlays {
            dir: &input.dir,
            entries,
        }
    }

    fn apply(&self, mut case: crate::suite::Case) -> crate::suite::Case {
        case.overlay = self
            .entries
            .contains(std::ffi::OsStr::new(&case.id))
            .then(|| self.dir.join(&case.id).join("setup"))
            .filter(|p| p.is_dir());
        case
    }
}

#[cfg(test)]
mod tests;
