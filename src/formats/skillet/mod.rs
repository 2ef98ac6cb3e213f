//! Skillet format: one YAML file per eval, `<dir>/<name>/NNN.yaml`, nested folders allowed.

pub mod find;
pub mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::{LoadCtx, location};
use crate::suite::check_types;
use crate::suite::{Case, Check, CheckTarget, Defaults, Format, Suite};
use crate::suite::{Loaded, skill};
use crate::syntax::node::Node;
use crate::syntax::reader::{Doc, index};

/// What Skillet decides: a case whose setup script fails is skipped (it could not be set up).
pub const POLICIES: crate::suite::Policies = crate::suite::Policies {
    failed_setup_skips: true,
    ..crate::suite::Policies::NONE
};

/// The keys of a Skillet eval file, and of each of its assertions.
pub const KEYS: &[&str] = &[
    "timestamp",
    "name",
    "prompt",
    "expected",
    "actual",
    "setup",
    "teardown",
    "schema_version",
    "assertions",
    "domain",
    // Written by Skillet's `generate-evals` (category, source, confidence, …); its loader
    // keeps it as it keeps any key. Not read.
    "_meta",
    // assay's extension: checks of any assay type. They do not replace the judge.
    super::checks::EXTENSION_KEY,
];
pub const ASSERTION_KEYS: &[&str] = &["type", "value"];
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
/// Skillet's eval domains (`domain:`, what aspect of the skill an eval tests).
pub const DOMAINS: &[&str] = &["triggering", "functional", "performance"];

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
    case: Option<Case>,
}

/// Loads Skillet files and groups them into suites as Skillet's loader does: an eval set is a
/// folder and every YAML file under it, subfolders included ([`set_folder`]). `scan_root` is
/// the file or folder the files were found under.
pub fn load(
    ctx: &LoadCtx,
    files: &[PathBuf],
    scan_root: &Path,
    project_root_of: &dyn Fn(&Path) -> PathBuf,
) -> Loaded {
    let mut out = Loaded::default();
    let mut groups: BTreeMap<PathBuf, Vec<Parsed>> = BTreeMap::new();
    let mut failed_groups: Vec<PathBuf> = Vec::new();
    for file in files {
        let shown = ctx.shown(file);
        let parsed = match ctx.parse(file, &shown) {
            Ok((mut doc, root)) => {
                let case = read_case(&mut doc, &root);
                let failed = doc.has_errors();
                out.problems.append(&mut doc.problems);
                Parsed {
                    file: file.clone(),
                    case: if failed { None } else { case },
                }
            }
            Err(mut p) => {
                out.problems.append(&mut p);
                Parsed {
                    file: file.clone(),
                    case: None,
                }
            }
        };
        let folder = set_folder(file, scan_root);
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
            policies: POLICIES,
        });
    }
    out
}

/// The eval set a file belongs to. Skillet loads a set by its folder (`skillet eval <dir>`, or
/// `<name>` for `~/.skillet/evals/<name>/`) with every YAML file below it, so a set is the
/// folder directly inside an `evals/` folder that holds the file; failing that, the folder the
/// user named (`scan_root`), or a named file's own folder. A file's `name` (its category) does
/// not decide its set, as in Skillet.
fn set_folder(file: &Path, scan_root: &Path) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new("."));
    let limit = if scan_root != file && file.starts_with(scan_root) {
        scan_root
    } else {
        parent
    };
    for dir in file.ancestors().skip(1) {
        if !dir.starts_with(limit) {
            break;
        }
        if dir
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == "evals")
        {
            return dir.to_path_buf();
        }
    }
    limit.to_path_buf()
}

fn read_case(doc: &mut Doc, root: &Node) -> Option<Case> {
    let m = doc.map(root, "")?;
    // Skillet's loader keeps keys it does not know: named, with a "did you mean", and the
    // eval still loads (assay's own `x-assay-…` keys stay strict).
    m.warn_unknown_keys(doc, "a Skillet eval", KEYS, |_| false, super::is_assay_key);
    read_domain(doc, &m);

    if let Some(n) = m.opt("schema_version") {
        read_schema_version(doc, n);
    }
    let timestamp = m.req(doc, "timestamp").and_then(|n| read_timestamp(doc, n));
    m.req_text(doc, "name");
    let turns = m.req(doc, "prompt").and_then(|n| read_prompt(doc, n));
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
        return None;
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
    Some(case)
}

/// `schema_version`: 1, the only one there is.
fn read_schema_version(doc: &mut Doc, n: &Node) {
    if let Some(v) = doc.int(n, "schema_version")
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
}

/// `timestamp`: an ISO 8601 string.
fn read_timestamp(doc: &mut Doc, n: &Node) -> Option<String> {
    let s = match &n.value {
        crate::syntax::node::Value::Str(s) => s.clone(),
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
}

/// `prompt`: one turn, or a list of at least one.
fn read_prompt(doc: &mut Doc, n: &Node) -> Option<Vec<String>> {
    match &n.value {
        crate::syntax::node::Value::Seq(_) => {
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
    }
}

/// `domain`: a string; one outside Skillet's three is loaded with a warning (Skillet's
/// `--domain` filter would never select it).
fn read_domain(doc: &mut Doc, m: &crate::syntax::reader::Map<'_>) {
    let Some(node) = m.opt("domain") else {
        return;
    };
    let Some(domain) = doc.string(node, "domain") else {
        return;
    };
    if !DOMAINS.contains(&domain.as_str()) {
        doc.warning(
            "unknown-domain",
            node.span,
            "domain",
            format!(
                "`{domain}` is not one of Skillet's domains ({})",
                DOMAINS.join(", ")
            ),
        )
        .help = crate::diag::did_you_mean(&domain, DOMAINS.iter().copied())
            .map(|d| format!("did you mean `{d}`?"));
    }
}

fn read_assertions(doc: &mut Doc, items: &[Node]) -> Vec<Check> {
    items
        .iter()
        .enumerate()
        .filter_map(|(i, node)| read_assertion(doc, node, i))
        .collect()
}

/// The `i`th assertion: its type's check, id `<type>-<i+1>`, its `value` under the type's key.
fn read_assertion(doc: &mut Doc, node: &Node, i: usize) -> Option<Check> {
    let field = index("assertions", i);
    let m = doc.map(node, &field)?;
    m.check_keys(doc, "an assertion", ASSERTION_KEYS);
    let ty_node = m.req(doc, "type")?;
    let ty = doc.string(ty_node, &m.path("type"))?;
    let id = format!("{ty}-{}", i + 1);
    if super::checks::is_plugin_type(doc, &ty) {
        // A plugin type's settings are Skillet's `value`: an object as is, anything else
        // as `{"value": …}`.
        let config = match m.opt("value").map(|n| n.to_json()) {
            Some(serde_json::Value::Object(o)) => serde_json::Value::Object(o),
            Some(v) => json!({ "value": v }),
            None => json!({}),
        };
        let config = super::checks::plugin_check(doc, &ty, config, node, &field)?;
        let at = Some(location(doc, node.span));
        return Some(Check::new(id, ty, config, CheckTarget::Output, at));
    }
    let Some(&(_, key)) = ASSERTION_TYPES.iter().find(|(t, _)| *t == ty) else {
        unknown_type(doc, ty_node, &m.path("type"), &ty);
        return None;
    };
    let value_node = m.req(doc, "value")?;
    let spec = check_types::lookup(&ty)
        .and_then(|t| t.keys.iter().find(|k| k.name == key))
        .expect("every Skillet type is built in");
    let value = super::checks::read_value(doc, spec, value_node, &m.path("value"))?;
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
    Some(Check::new(id, ty, config, target, at))
}

/// The error for a type that is not one of Skillet's, pointing to the extension key when it
/// is one of assay's.
fn unknown_type(doc: &mut Doc, node: &Node, field: &str, ty: &str) {
    let names: Vec<_> = ASSERTION_TYPES.iter().map(|(t, _)| *t).collect();
    doc.error(
        "unknown-type",
        node.span,
        field,
        format!("unknown assertion type `{ty}`"),
    )
    .help = super::checks::extension_hint(ty, "Skillet").or_else(|| {
        Some(match crate::diag::did_you_mean(ty, names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("Skillet assertion types: {}", names.join(", ")),
        })
    });
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
    use crate::formats::checks::testing::{
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
        load(&LoadCtx::new(d.path()), &[file], d.path(), &|_| {
            root.clone()
        })
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
    fn a_set_is_the_folder_inside_evals_with_all_its_subfolders() {
        let set = |file: &str, scan: &str| set_folder(Path::new(file), Path::new(scan));
        let f = "/p/evals/add/sub/001.yaml";
        assert_eq!(set(f, "/p"), Path::new("/p/evals/add"));
        assert_eq!(set(f, "/p/evals/add"), Path::new("/p/evals/add"));
        // A subfolder named on the command line is its own set, as `skillet eval <dir>` has it.
        assert_eq!(set(f, "/p/evals/add/sub"), Path::new("/p/evals/add/sub"));
        // Outside any `evals/`: the folder named, or a named file's own folder.
        assert_eq!(
            set("/p/sets/a/b/001.yaml", "/p/sets/a"),
            Path::new("/p/sets/a")
        );
        assert_eq!(set(f, f), Path::new("/p/evals/add/sub"));
        assert_eq!(set("/p/evals/001.yaml", "/p/evals"), Path::new("/p/evals"));
    }

    #[test]
    fn a_set_keeps_its_subfolders_and_its_evals_names_without_warnings() {
        let d = tempfile::tempdir().unwrap();
        let eval = |name: &str| {
            format!("timestamp: 2025-01-15T10:30:00Z\nname: {name}\nprompt: p\nexpected: e\n")
        };
        let files: Vec<PathBuf> = [
            ("evals/add/001.yaml", "add"),
            ("evals/add/002.yaml", "add-multiturn"),
            ("evals/add/folders/001.yaml", "suggest-folders"),
        ]
        .iter()
        .map(|(path, name)| {
            let file = d.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, eval(name)).unwrap();
            file
        })
        .collect();
        let root = d.path().to_path_buf();
        let loaded = load(&LoadCtx::new(d.path()), &files, d.path(), &|_| root.clone());
        assert_eq!(loaded.problems.len(), 0, "{:?}", loaded.problems);
        assert_eq!(loaded.suites.len(), 1);
        let ids: Vec<_> = loaded.suites[0]
            .cases
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        assert_eq!(ids, ["001", "002", "folders/001"]);
        assert_eq!(loaded.suites[0].id, "skillet:add");
    }

    #[test]
    fn domain_and_generated_meta_load() {
        for domain in DOMAINS {
            let loaded = load_case(&format!("{HEAD}domain: {domain}\n"));
            assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
            assert_eq!(loaded.suites[0].cases.len(), 1);
        }
        let meta =
            format!("{HEAD}_meta:\n  category: positive\n  confidence: 0.9\n  generated: true\n");
        assert!(load_case(&meta).problems.is_empty());
        // Not one of the three: loaded, with a warning and the likely one.
        let text = format!("{HEAD}domain: triggerring\n");
        let loaded = load_case(&text);
        assert_eq!(loaded.suites.len(), 1);
        let p = &loaded.problems[0];
        assert_eq!((p.code, p.is_error()), ("unknown-domain", false));
        assert_eq!(p.line_col(), Some(at(&text, "triggerring")));
        assert_eq!(p.help.as_deref(), Some("did you mean `triggering`?"));
        // Not a string: an error.
        let text = format!("{HEAD}domain: [functional]\n");
        assert_eq!(errors(&load_case(&text).problems)[0].0, "wrong-type");
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
