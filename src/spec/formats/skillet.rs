//! Skillet format: one YAML file per eval, `<dir>/<name>/NNN.yaml`, nested folders allowed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::{LoadCtx, location};
use crate::spec::check_types;
use crate::spec::model::{Case, Check, CheckTarget, Defaults, Format, Suite};
use crate::spec::node::Node;
use crate::spec::reader::{Doc, index};
use crate::spec::{Loaded, skill};

const KEYS: &[&str] = &[
    "timestamp",
    "name",
    "prompt",
    "expected",
    "actual",
    "setup",
    "teardown",
    "schema_version",
    "assertions",
    // assay's extension: checks of any assay type. They do not replace the judge.
    super::checks::EXTENSION_KEY,
];
const ASSERTION_KEYS: &[&str] = &["type", "value"];
/// Skillet assertion types and the assay key their `value` becomes.
const ASSERTION_TYPES: &[(&str, &str)] = &[
    ("contains", "needle"),
    ("not_contains", "needle"),
    ("regex", "pattern"),
    ("starts_with", "prefix"),
    ("ends_with", "suffix"),
    ("tool_called", "tool"),
    ("tool_not_called", "tool"),
];
pub const SCHEMA_VERSIONS: &[i64] = &[1];

/// Whether a YAML file looks like a Skillet eval, without parsing it: at least two of its
/// top-level keys are Skillet's required ones.
pub fn looks_like_skillet(text: &str) -> bool {
    let mut found = 0;
    for line in text.lines() {
        for key in ["timestamp:", "name:", "prompt:", "expected:"] {
            if line.starts_with(key) {
                found += 1;
            }
        }
    }
    found >= 2
}

struct Parsed {
    file: PathBuf,
    name: Option<String>,
    case: Option<Case>,
}

/// Loads Skillet files and groups them into suites: a suite is the nearest folder named like
/// the files' `name` (the eval category), or else the file's own folder.
pub fn load(
    ctx: &LoadCtx,
    files: &[PathBuf],
    project_root_of: &dyn Fn(&Path) -> PathBuf,
) -> Loaded {
    let mut out = Loaded::default();
    let mut groups: BTreeMap<PathBuf, Vec<Parsed>> = BTreeMap::new();
    let mut failed_groups: Vec<PathBuf> = Vec::new();
    for file in files {
        let shown = ctx.shown(file);
        let parsed = match ctx.parse(file, &shown) {
            Ok((mut doc, root)) => {
                let (name, case) = read_case(&mut doc, &root);
                let failed = doc.has_errors();
                out.problems.append(&mut doc.problems);
                Parsed {
                    file: file.clone(),
                    name,
                    case: if failed { None } else { case },
                }
            }
            Err(mut p) => {
                out.problems.append(&mut p);
                Parsed {
                    file: file.clone(),
                    name: None,
                    case: None,
                }
            }
        };
        let folder = suite_folder(file, parsed.name.as_deref());
        if parsed.case.is_none() {
            failed_groups.push(folder.clone());
        }
        groups.entry(folder).or_default().push(parsed);
    }

    for (folder, mut members) in groups {
        if failed_groups.contains(&folder) {
            continue;
        }
        let suite_name = folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "skillet".into());
        let project_root = project_root_of(&folder);
        members.sort_by(|a, b| a.file.cmp(&b.file));
        let mut cases = Vec::new();
        for m in members {
            let Some(mut case) = m.case else { continue };
            let rel = m
                .file
                .strip_prefix(&folder)
                .unwrap_or(&m.file)
                .with_extension("");
            case.id = rel.to_string_lossy().replace('\\', "/");
            if let Some(name) = m.name.filter(|n| *n != suite_name) {
                out.problems.push(crate::diag::Problem::warning(
                    "name-mismatch",
                    &ctx.shown(&m.file),
                    format!("`name: {name}` differs from its folder `{suite_name}`; grouped with the folder"),
                ));
            }
            cases.push(case);
        }
        out.suites.push(Suite {
            id: format!("skillet:{suite_name}"),
            format: Format::Skillet,
            source: ctx.shown(&folder),
            skill: skill::find_in_project(&project_root, &suite_name),
            project_root,
            description: None,
            notes: None,
            defaults: Defaults {
                allow_hang_heuristic: true,
                ..Defaults::default()
            },
            base_overlay: None,
            package: None,
            cases,
            triggers: Vec::new(),
        });
    }
    out
}

fn suite_folder(file: &Path, name: Option<&str>) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    if let Some(name) = name {
        for dir in file.ancestors().skip(1).take(8) {
            if dir.file_name().is_some_and(|n| n == name) {
                return dir.to_path_buf();
            }
        }
    }
    parent
}

fn read_case(doc: &mut Doc, root: &Node) -> (Option<String>, Option<Case>) {
    let Some(m) = doc.map(root, "") else {
        return (None, None);
    };
    m.check_keys(doc, "a Skillet eval", KEYS);

    if let Some(n) = m.opt("schema_version")
        && let Some(v) = doc.int(n, "schema_version")
        && !SCHEMA_VERSIONS.contains(&v)
    {
        doc.error(
            "unsupported-version",
            n.span,
            "schema_version",
            format!("schema_version {v} is not supported; this assay reads version 1"),
        )
        .help = Some("omit schema_version or set it to 1".into());
    }
    let timestamp = m.req(doc, "timestamp").and_then(|n| {
        let s = match &n.value {
            crate::spec::node::Value::Str(s) => s.clone(),
            _ => return doc.string(n, "timestamp"),
        };
        if !is_iso8601(&s) {
            doc.error(
                "bad-timestamp",
                n.span,
                "timestamp",
                format!("`{s}` is not an ISO 8601 timestamp"),
            )
            .help = Some("write it like 2025-01-15T10:30:00Z".into());
            return None;
        }
        Some(s)
    });
    let name = m.req_text(doc, "name");
    let turns = m.req(doc, "prompt").and_then(|n| match &n.value {
        crate::spec::node::Value::Seq(_) => {
            let list = doc.texts(n, "prompt")?;
            if list.is_empty() {
                doc.error(
                    "empty",
                    n.span,
                    "prompt",
                    "a multi-turn prompt needs at least one turn",
                );
                return None;
            }
            Some(list.into_iter().map(|(s, _)| s).collect::<Vec<_>>())
        }
        _ => doc.text(n, "prompt").map(|s| vec![s]),
    });
    let expected = m.req_text(doc, "expected");
    let actual = m.str(doc, "actual");
    let setup = m.text(doc, "setup");
    let teardown = m.text(doc, "teardown");
    let mut checks = m
        .opt("assertions")
        .and_then(|n| doc.seq(n, "assertions"))
        .map(|items| read_assertions(doc, items))
        .unwrap_or_default();
    // As in Skillet, its own deterministic assertions replace the judge; `expected` stays as
    // context. assay's `x-assay-checks` do not: a budget check added to a judged case keeps
    // its judge.
    let replaces_judge = !checks.is_empty();
    let mut ids = checks.iter().map(|c| c.id.clone()).collect();
    checks.extend(super::checks::read_extension(doc, &m, &mut ids));

    let (Some(turns), Some(expected)) = (turns, expected) else {
        return (name, None);
    };
    let mut case = Case::new(String::new(), location(doc, root.span), turns);
    if !replaces_judge {
        case.judge.criteria = Some(expected.clone());
    }
    case.expected_output = Some(expected);
    case.recorded_output = actual;
    case.setup = setup;
    case.teardown = teardown;
    case.checks = checks;
    case.created = timestamp;
    (name, Some(case))
}

fn read_assertions(doc: &mut Doc, items: &[Node]) -> Vec<Check> {
    let mut checks = Vec::new();
    for (i, node) in items.iter().enumerate() {
        let field = index("assertions", i);
        let Some(m) = doc.map(node, &field) else {
            continue;
        };
        m.check_keys(doc, "an assertion", ASSERTION_KEYS);
        let Some(ty_node) = m.req(doc, "type") else {
            continue;
        };
        let Some(ty) = doc.string(ty_node, &m.path("type")) else {
            continue;
        };
        if super::checks::is_plugin_type(doc, &ty) {
            // A plugin type's settings are Skillet's `value`: an object as is, anything else
            // as `{"value": …}`.
            let config = match m.opt("value").map(|n| n.to_json()) {
                Some(serde_json::Value::Object(o)) => serde_json::Value::Object(o),
                Some(v) => json!({ "value": v }),
                None => json!({}),
            };
            if let Some(config) = super::checks::plugin_check(doc, &ty, config, node, &field) {
                let at = Some(location(doc, node.span));
                checks.push(Check::new(
                    format!("{ty}-{}", i + 1),
                    ty,
                    config,
                    CheckTarget::Output,
                    at,
                ));
            }
            continue;
        }
        let Some(&(_, key)) = ASSERTION_TYPES.iter().find(|(t, _)| *t == ty) else {
            let names: Vec<_> = ASSERTION_TYPES.iter().map(|(t, _)| *t).collect();
            doc.error(
                "unknown-type",
                ty_node.span,
                &m.path("type"),
                format!("unknown assertion type `{ty}`"),
            )
            .help = super::checks::extension_hint(&ty, "Skillet").or_else(|| {
                Some(
                    match crate::diag::did_you_mean(&ty, names.iter().copied()) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!("Skillet assertion types: {}", names.join(", ")),
                    },
                )
            });
            continue;
        };
        let Some(value_node) = m.req(doc, "value") else {
            continue;
        };
        let spec = check_types::lookup(&ty)
            .and_then(|t| t.keys.iter().find(|k| k.name == key))
            .expect("every Skillet type is built in");
        let Some(value) = super::checks::read_value(doc, spec, value_node, &m.path("value")) else {
            continue;
        };
        let target = if ty.starts_with("tool_") {
            CheckTarget::Transcript
        } else {
            CheckTarget::Output
        };
        // Skillet's text checks ignore case; its regex and tool checks do not.
        let config = match ty.as_str() {
            "contains" | "not_contains" | "starts_with" | "ends_with" => {
                json!({ key: value, "ignore_case": true })
            }
            _ => json!({ key: value }),
        };
        let at = Some(location(doc, node.span));
        checks.push(Check::new(
            format!("{ty}-{}", i + 1),
            ty,
            config,
            target,
            at,
        ));
    }
    checks
}

/// ISO 8601 as people write it in these files: a date, a local date-time, or an instant.
fn is_iso8601(s: &str) -> bool {
    s.parse::<jiff::Timestamp>().is_ok()
        || s.parse::<jiff::civil::DateTime>().is_ok()
        || s.parse::<jiff::civil::Date>().is_ok()
        || s.parse::<jiff::Zoned>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::formats::checks::testing::{
        assert_budget_checks, assert_no_errors, at, errors, help_of,
    };

    const HEAD: &str =
        "timestamp: 2025-01-15T10:30:00Z\nname: greet\nprompt: Say hi\nexpected: A greeting.\n";

    /// Loads `text` as `evals/greet/001.yaml`.
    fn load_case(text: &str) -> Loaded {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("evals/greet/001.yaml");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        let root = d.path().to_path_buf();
        load(&LoadCtx::new(d.path()), &[file], &|_| root.clone())
    }

    #[test]
    fn x_assay_checks_reach_the_budget_checks_and_keep_the_judge() {
        let text = format!(
            "{HEAD}x-assay-checks:\n  - {{type: max_turns, turns: 3}}\n  - {{type: max_cost, usd: 0.5}}\n  - {{type: max_duration, seconds: 60}}\n"
        );
        let loaded = load_case(&text);
        assert_no_errors(&loaded.problems);
        let case = &loaded.suites[0].cases[0];
        assert_budget_checks(&case.checks.iter().collect::<Vec<_>>());
        let loc = case.checks[1].location.as_ref().unwrap();
        assert_eq!((loc.line, loc.column), at(&text, "{type: max_cost"));
        // Only Skillet's own assertions replace the judge: a budget check does not.
        assert_eq!(case.judge.criteria.as_deref(), Some("A greeting."));
    }

    #[test]
    fn skillet_assertions_still_replace_the_judge_beside_x_assay_checks() {
        let text = format!(
            "{HEAD}assertions:\n  - {{type: contains, value: hi}}\nx-assay-checks:\n  - {{type: contains, needle: hello}}\n  - {{type: max_duration, seconds: 60}}\n"
        );
        let loaded = load_case(&text);
        assert_no_errors(&loaded.problems);
        let case = &loaded.suites[0].cases[0];
        assert_eq!(case.judge.criteria, None);
        assert_eq!(case.expected_output.as_deref(), Some("A greeting."));
        // The assertion took `contains-1`; the extension's default id steps aside.
        let ids: Vec<_> = case.checks.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["contains-1", "x-assay-contains-1", "max_duration-2"]);
        // Skillet's text checks ignore case; assay's own are as written (case-sensitive).
        assert_eq!(case.checks[0].config["ignore_case"], true);
        assert_eq!(
            case.checks[1].config,
            serde_json::json!({"needle": "hello"})
        );
    }

    #[test]
    fn a_bad_x_assay_check_is_an_error_at_its_place() {
        let text = format!(
            "{HEAD}x-assay-check: []\nx-assay-checks:\n  - type: max_turn\n    turns: 3\n  - type: max_cost\n    dollars: 0.5\nassertions:\n  - {{type: max_duration, value: 60}}\n"
        );
        let loaded = load_case(&text);
        assert!(loaded.suites.is_empty());
        assert_eq!(
            errors(&loaded.problems),
            [
                (
                    "unknown-key",
                    at(&text, "x-assay-check:"),
                    "x-assay-check".to_string(),
                    "unknown key `x-assay-check` in a Skillet eval".to_string()
                ),
                (
                    "unknown-check-type",
                    at(&text, "max_turn\n"),
                    "x-assay-checks[0].type".to_string(),
                    "`max_turn` is not a check type".to_string()
                ),
                (
                    "missing-field",
                    at(&text, "type: max_cost"),
                    "x-assay-checks[1].usd".to_string(),
                    "missing required field `usd`".to_string()
                ),
                (
                    "unknown-key",
                    at(&text, "dollars"),
                    "x-assay-checks[1].dollars".to_string(),
                    "unknown key `dollars` in a `max_cost` check".to_string()
                ),
                (
                    "unknown-type",
                    at(&text, "max_duration"),
                    "assertions[0].type".to_string(),
                    "unknown assertion type `max_duration`".to_string()
                ),
            ]
        );
        assert_eq!(
            help_of(
                &loaded.problems,
                "unknown key `x-assay-check` in a Skillet eval"
            ),
            "did you mean `x-assay-checks`?"
        );
        assert_eq!(
            help_of(&loaded.problems, "`max_turn` is not a check type"),
            "did you mean `max_turns`?"
        );
        assert_eq!(
            help_of(&loaded.problems, "unknown assertion type `max_duration`"),
            "`max_duration` is an assay check type, not a Skillet assertion: list it under `x-assay-checks` (assay's extension key)"
        );
    }

    #[test]
    fn x_assay_check_ids_are_unique_against_the_assertions() {
        let text = format!(
            "{HEAD}assertions:\n  - {{type: contains, value: hi}}\nx-assay-checks:\n  - {{id: contains-1, type: max_turns, turns: 3}}\n  - {{id: t, type: max_turns, turns: 3}}\n  - {{id: t, type: max_cost, usd: 0.5}}\n"
        );
        let loaded = load_case(&text);
        assert_eq!(
            errors(&loaded.problems),
            [
                (
                    "duplicate-id",
                    at(&text, "contains-1, type"),
                    "x-assay-checks[0].id".to_string(),
                    "check id `contains-1` is used twice".to_string()
                ),
                (
                    "duplicate-id",
                    at(&text, "t, type: max_cost"),
                    "x-assay-checks[2].id".to_string(),
                    "check id `t` is used twice".to_string()
                ),
            ]
        );
    }

    #[test]
    fn timestamps() {
        assert!(is_iso8601("2025-01-15T10:30:00Z"));
        assert!(is_iso8601("2025-01-15T10:30:00+02:00"));
        assert!(is_iso8601("2025-01-15"));
        assert!(!is_iso8601("yesterday"));
        assert!(!is_iso8601("2025-13-45"));
    }

    #[test]
    fn sniffs_skillet_files() {
        assert!(looks_like_skillet("timestamp: x\nname: y\nprompt: z\n"));
        assert!(!looks_like_skillet("on: push\njobs:\n  name: x\n"));
    }
}
