//! BMAD eval runner format: `evals/<skill>/evals.json` (artifact evals) and `triggers.json`.

use std::path::{Path, PathBuf};

use super::{LoadCtx, check_unique, location};
use crate::diag::Problem;
use crate::spec::model::{Case, Defaults, Fixture, Format, Skill, Suite, TriggerCase};
use crate::spec::node::Span;
use crate::spec::reader::{Doc, index};
use crate::spec::{Loaded, paths};

const TOP_KEYS: &[&str] = &["skill_name", "_design_notes", "evals"];
const EVAL_KEYS: &[&str] = &[
    "id",
    "prompt",
    "expected_output",
    "files",
    "expectations",
    "timeout",
    // assay's extension: a list of checks in assay's check-list syntax.
    super::checks::EXTENSION_KEY,
];
const TRIGGER_KEYS: &[&str] = &[
    "query",
    "should_trigger",
    // assay's extension: which skills the query must and must not reach.
    super::checks::EXTENSION_KEY,
];

/// One BMAD eval folder, found by discovery, and the skill it belongs to.
#[derive(Debug, Clone)]
pub struct Input {
    /// The folder holding the eval files (and `setup/`, `<id>/setup/` overlays).
    pub dir: PathBuf,
    pub evals_file: Option<PathBuf>,
    pub triggers_file: Option<PathBuf>,
    /// The skill's name, derived from its SKILL.md path (or the eval folder's name without one).
    pub skill_name: String,
    pub skill: Option<Skill>,
    pub project_root: PathBuf,
}

/// Keys starting with `_` are notes for people (as `_design_notes` is) and are never errors.
fn is_note(key: &str) -> bool {
    key.starts_with('_')
}

pub fn load(ctx: &LoadCtx, input: &Input) -> Loaded {
    let mut out = Loaded::default();
    let shown_dir = ctx.shown(&input.dir);
    let base_overlay = Some(input.dir.join("setup")).filter(|p| p.is_dir());
    let mut suite = Suite {
        id: format!("bmad:{}", input.skill_name),
        format: Format::Bmad,
        source: ctx.shown(
            input
                .evals_file
                .as_ref()
                .or(input.triggers_file.as_ref())
                .unwrap_or(&input.dir),
        ),
        project_root: input.project_root.clone(),
        skill: input.skill.clone(),
        description: input.skill.as_ref().and_then(|s| s.description.clone()),
        notes: None,
        defaults: Defaults {
            allow_hang_heuristic: true,
            ..Defaults::default()
        },
        base_overlay,
        package: None,
        cases: Vec::new(),
        triggers: Vec::new(),
    };
    if input.skill.is_none() {
        out.problems.push(
            Problem::warning(
                "skill-not-found",
                &shown_dir,
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
    if let Some(file) = &input.evals_file {
        match ctx.parse(file, &ctx.shown(file)) {
            Ok((mut doc, root)) => {
                read_evals(&mut doc, &root, input, &mut suite);
                ok &= !doc.has_errors();
                out.problems.append(&mut doc.problems);
            }
            Err(mut p) => {
                ok = false;
                out.problems.append(&mut p);
            }
        }
    }
    if let Some(file) = &input.triggers_file {
        match ctx.parse(file, &ctx.shown(file)) {
            Ok((mut doc, root)) => {
                read_triggers(&mut doc, &root, &mut suite);
                ok &= !doc.has_errors();
                out.problems.append(&mut doc.problems);
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

fn read_evals(doc: &mut Doc, root: &crate::spec::node::Node, input: &Input, suite: &mut Suite) {
    // The runner also accepts a bare list of evals.
    if let crate::spec::node::Value::Seq(items) = &root.value {
        read_eval_list(doc, items, input, suite);
        return;
    }
    let Some(top) = doc.map(root, "") else {
        return;
    };
    top.check_keys_with(doc, "evals.json", TOP_KEYS, is_note, |_| None);

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
    suite.notes = top.str(doc, "_design_notes");

    if let Some(evals) = top.req(doc, "evals").and_then(|n| doc.seq(n, "evals")) {
        read_eval_list(doc, evals, input, suite);
    }
}

fn read_eval_list(
    doc: &mut Doc,
    evals: &[crate::spec::node::Node],
    input: &Input,
    suite: &mut Suite,
) {
    let mut ids = Vec::new();
    // The eval folder's entries, listed once: looking for `<id>/setup` with a system call per
    // eval costs more than the rest of loading a file of 100,000 evals.
    let entries: std::collections::HashSet<std::ffi::OsString> = std::fs::read_dir(&input.dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
        .unwrap_or_default();
    for (i, node) in evals.iter().enumerate() {
        let field = index("evals", i);
        let Some(m) = doc.map(node, &field) else {
            continue;
        };
        m.check_keys_with(doc, "an eval", EVAL_KEYS, is_note, |_| None);

        let id_node = m.req(doc, "id");
        // The docs say string; the published example suite uses integers, so both are read.
        let id = id_node.and_then(|n| match &n.value {
            crate::spec::node::Value::Int(i) => Some(i.to_string()),
            _ => doc.text(n, &m.path("id")),
        });
        if let (Some(id), Some(n)) = (&id, id_node) {
            if id.contains(['/', '\\']) || id == "." || id == ".." {
                doc.error(
                    "bad-id",
                    n.span,
                    &m.path("id"),
                    format!("eval id `{id}` is used as a folder name and cannot contain `/` or be `.`/`..`"),
                );
            }
            ids.push((id.clone(), n.span, m.path("id")));
        }
        let prompt = m.req_text(doc, "prompt");
        let expected_output = m.str(doc, "expected_output");
        // BMAD has no check list of its own: every check of the case comes from here.
        let checks = super::checks::read_extension(doc, &m, &mut std::collections::HashSet::new());
        let expectations = m.req(doc, "expectations").and_then(|n| {
            let list = doc.texts(n, &m.path("expectations"))?;
            if list.is_empty() && checks.is_empty() {
                doc.warning(
                    "nothing-to-grade",
                    n.span,
                    &m.path("expectations"),
                    "no expectations: this eval can only show that the skill did not crash",
                );
            }
            Some(list)
        });
        let timeout = m.positive_int(doc, "timeout");
        let fixtures = m
            .opt("files")
            .and_then(|n| doc.strings(n, &m.path("files")))
            .map(|files| {
                read_fixtures(
                    doc,
                    &files,
                    &m.path("files"),
                    &input.project_root,
                    &input.dir,
                )
            })
            .unwrap_or_default();

        let (Some(id), Some(prompt)) = (id, prompt) else {
            continue;
        };
        let mut case = Case::new(id.clone(), location(doc, node.span), vec![prompt]);
        case.expected_output = expected_output;
        case.judge.expectations = expectations
            .unwrap_or_default()
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        case.timeout_secs = timeout;
        case.fixtures = fixtures;
        case.checks = checks;
        case.overlay = entries
            .contains(std::ffi::OsStr::new(&id))
            .then(|| input.dir.join(&id).join("setup"))
            .filter(|p| p.is_dir());
        suite.cases.push(case);
    }
    check_unique(
        doc,
        "eval id",
        ids.iter()
            .map(|(id, span, f)| (id.as_str(), *span, f.clone())),
    );
}

/// `files` are paths from the project root (or, failing that, from the eval folder), staged at
/// the path as written, inside the workspace.
fn read_fixtures(
    doc: &mut Doc,
    files: &[(String, Span)],
    field: &str,
    root: &Path,
    dir: &Path,
) -> Vec<Fixture> {
    let mut out = Vec::new();
    for (i, (written, span)) in files.iter().enumerate() {
        let found =
            paths::resolve_inside(root, written, "the project root", true).or_else(|e| match e {
                paths::PathError::Missing { .. } => {
                    paths::resolve_inside(dir, written, "the eval folder", true).map_err(|e2| {
                        if matches!(e2, paths::PathError::Missing { .. }) {
                            e
                        } else {
                            e2
                        }
                    })
                }
                other => Err(other),
            });
        match found {
            Ok(source) => {
                let dest =
                    paths::normalize(Path::new(written)).unwrap_or_else(|| PathBuf::from(written));
                out.push(Fixture { source, dest });
            }
            Err(e) => {
                doc.error("bad-fixture", *span, &index(field, i), e.to_string())
                    .help = Some(
                    "BMAD fixture paths are relative to the project root (or the eval folder)"
                        .into(),
                );
            }
        }
    }
    out
}

fn read_triggers(doc: &mut Doc, root: &crate::spec::node::Node, suite: &mut Suite) {
    let Some(items) = doc.seq(root, "") else {
        return;
    };
    let mut queries: std::collections::HashMap<String, Span> = std::collections::HashMap::new();
    for (i, node) in items.iter().enumerate() {
        let field = index("", i);
        let Some(m) = doc.map(node, &field) else {
            continue;
        };
        m.check_keys(doc, "a trigger eval", TRIGGER_KEYS);
        let query = m.req_text(doc, "query");
        let should = m
            .req(doc, "should_trigger")
            .and_then(|n| doc.bool(n, &m.path("should_trigger")));
        let routing = super::checks::read_routing(doc, &m);
        if let (Some(query), Some(should_trigger)) = (query, should) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::formats::checks::testing::{
        assert_budget_checks, assert_no_errors, at, errors, help_of,
    };

    /// Loads `text` as a skill's evals.json.
    fn load_evals(text: &str) -> Loaded {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("evals/brief");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("evals.json"), text).unwrap();
        let input = Input {
            evals_file: Some(dir.join("evals.json")),
            triggers_file: None,
            skill_name: "brief".into(),
            skill: None,
            project_root: d.path().to_path_buf(),
            dir,
        };
        load(&LoadCtx::new(d.path()), &input)
    }

    /// One eval whose `x-assay-checks` (and other extra keys) are `extra`.
    fn one_eval(extra: &str) -> String {
        format!(
            "{{\n  \"evals\": [\n    {{\n      \"id\": \"one\",\n      \"prompt\": \"Write a brief.\",\n      \"expectations\": [\"It is brief.\"],\n{extra}\n    }}\n  ]\n}}\n"
        )
    }

    #[test]
    fn x_assay_checks_reach_the_budget_checks() {
        let text = one_eval(
            r#"      "x-assay-checks": [
        {"type": "max_turns", "turns": 3},
        {"type": "max_cost", "usd": 0.5},
        {"type": "max_duration", "seconds": 60}
      ]"#,
        );
        let loaded = load_evals(&text);
        assert_no_errors(&loaded.problems);
        let case = &loaded.suites[0].cases[0];
        assert_budget_checks(&case.checks.iter().collect::<Vec<_>>());
        let at_check = case.checks[2].location.as_ref().unwrap();
        assert_eq!(
            (at_check.line, at_check.column),
            at(&text, r#"{"type": "max_duration""#)
        );
        // The expectations are still the judge's.
        assert_eq!(case.judge.expectations, ["It is brief."]);
    }

    #[test]
    fn a_bad_x_assay_check_is_an_error_at_its_place() {
        let text = one_eval(
            r#"      "x-assay-check": [],
      "x-assay-checks": [
        {"type": "max_turn", "turns": 3},
        {"type": "max_cost", "dollars": 0.5}
      ]"#,
        );
        let loaded = load_evals(&text);
        assert!(loaded.suites.is_empty());
        let f = "evals[0].x-assay-checks";
        assert_eq!(
            errors(&loaded.problems),
            [
                (
                    "unknown-key",
                    at(&text, r#""x-assay-check""#),
                    "evals[0].x-assay-check".to_string(),
                    "unknown key `x-assay-check` in an eval".to_string()
                ),
                (
                    "unknown-check-type",
                    at(&text, r#""max_turn""#),
                    format!("{f}[0].type"),
                    "`max_turn` is not a check type".to_string()
                ),
                (
                    "missing-field",
                    at(&text, r#"{"type": "max_cost""#),
                    format!("{f}[1].usd"),
                    "missing required field `usd`".to_string()
                ),
                (
                    "unknown-key",
                    at(&text, r#""dollars""#),
                    format!("{f}[1].dollars"),
                    "unknown key `dollars` in a `max_cost` check".to_string()
                ),
            ]
        );
        assert_eq!(
            help_of(&loaded.problems, "unknown key `x-assay-check` in an eval"),
            "did you mean `x-assay-checks`?"
        );
        assert_eq!(
            help_of(&loaded.problems, "`max_turn` is not a check type"),
            "did you mean `max_turns`?"
        );
    }

    #[test]
    fn x_assay_check_ids_are_unique_in_the_eval() {
        let text = one_eval(
            r#"      "x-assay-checks": [
        {"id": "budget", "type": "max_turns", "turns": 3},
        {"id": "budget", "type": "max_cost", "usd": 0.5}
      ]"#,
        );
        let loaded = load_evals(&text);
        assert_eq!(
            errors(&loaded.problems),
            [(
                "duplicate-id",
                at(&text, r#""budget", "type": "max_cost""#),
                "evals[0].x-assay-checks[1].id".to_string(),
                "check id `budget` is used twice".to_string()
            )]
        );
        // Each eval has its own ids.
        let two = r#"{"evals": [
  {"id": "a", "prompt": "p", "expectations": [], "x-assay-checks": [{"id": "t", "type": "max_turns", "turns": 1}]},
  {"id": "b", "prompt": "p", "expectations": [], "x-assay-checks": [{"id": "t", "type": "max_turns", "turns": 1}]}
]}"#;
        let loaded = load_evals(two);
        assert_no_errors(&loaded.problems);
        // An eval graded by checks alone is not "nothing to grade".
        assert!(!loaded.problems.iter().any(|p| p.code == "nothing-to-grade"));
    }
}
