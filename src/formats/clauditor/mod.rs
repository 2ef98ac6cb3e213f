//! clauditor's eval format: one `<skill>.eval.json` per skill, beside
//! `.claude/commands/<skill>.md`, in a skill's folder beside its SKILL.md, or in its `assets/`
//! folder. A spec is one case: the skill invoked with `test_args`, graded by its assertions,
//! its extraction sections and the judge's criteria.
//!
//! - `skill.rs`: the skill a spec belongs to, the name it gets without `skill_name`, the specs
//!   `--skill` finds, and the system prompt derived when a spec sets none;
//! - `files.rs`: `input_files` (staged flat under `inputs/`) and the output graded;
//! - `ids.rs`: the one id pool of assertions, section fields and criteria;
//! - `assertions.rs`: clauditor's ten assertion types, with its migration hints;
//! - `sections.rs`: the extraction's sections, tiers and fields;
//! - `criteria.rs`: `grading_criteria`, the judge's rubric;
//! - `settings.rs`: harness, timeout, the judge's transport, provider and model, variance and
//!   thresholds, which become the suite's defaults;
//! - `triggers.rs`: `trigger_tests`;
//! - `find.rs` (discovery) and `write.rs` (`assay init --format clauditor`).

pub mod assertions;
pub mod criteria;
mod files;
pub mod find;
mod ids;
pub mod sections;
pub mod settings;
mod skill;
pub mod triggers;
pub mod write;

use std::path::{Path, PathBuf};

use super::{LoadCtx, location};
use crate::diag::Problem;
use crate::suite::Loaded;
use crate::suite::{Case, Format, Skill, Suite};
use crate::syntax::node::Node;
use crate::syntax::reader::{Doc, Map};
use ids::Ids;
use settings::SpecSettings;

/// What clauditor's runner decides: it waits 300 s, reads its own variables after assay's,
/// picks the harness this machine can run, keeps fixtures in `fixtures/`, and says its own
/// sentence when `--output` skips the input files.
pub const POLICIES: crate::suite::Policies = crate::suite::Policies {
    default_timeout_secs: Some(300),
    vars: crate::suite::RunnerVars {
        harness: Some("CLAUDITOR_HARNESS"),
        judge_provider: Some("CLAUDITOR_GRADING_PROVIDER"),
        judge_transport: Some("CLAUDITOR_TRANSPORT"),
    },
    auto_harness: true,
    fixture_dirs: &["fixtures"],
    output_bypass_warning: Some(
        "WARNING: --output bypasses the runner; input_files declaration is ignored.",
    ),
    ..crate::suite::Policies::NONE
};

/// The keys of a spec's top level.
pub const TOP_KEYS: &[&str] = &[
    "skill_name",
    "description",
    "test_args",
    "input_files",
    "assertions",
    "sections",
    "output_file",
    "output_files",
    "grading_criteria",
    "grading_model",
    "grade_thresholds",
    "trigger_tests",
    "variance",
    "user_prompt",
    "allow_hang_heuristic",
    "grading_provider",
    "timeout",
    "transport",
    "harness",
    "sync_tasks",
    "system_prompt",
    // assay's extension (clauditor ignores unknown top-level keys): checks of any assay type.
    super::checks::EXTENSION_KEY,
];
/// The values of `grading_provider`, `transport` and `harness` (`auto`: clauditor's choice).
pub const GRADING_PROVIDERS: &[&str] = &["anthropic", "openai", "auto"];
pub const GRADING_TRANSPORTS: &[&str] = &["api", "cli", "auto"];
pub const HARNESSES: &[&str] = &["claude-code", "codex", "auto"];

/// Maps a grading model to its provider as clauditor does, or `None` for an unknown prefix.
pub fn provider_for_model(model: &str) -> Option<&'static str> {
    let m = model.trim();
    if m.starts_with("claude-") {
        Some("anthropic")
    } else if m.starts_with("gpt-")
        || (m.starts_with('o') && m[1..].starts_with(|c: char| c.is_ascii_digit()))
    {
        Some("openai")
    } else {
        None
    }
}

/// Loads one spec: its suite, or the problems that stop it.
pub fn load(ctx: &LoadCtx, file: &Path, project_root: &Path) -> Loaded {
    let mut out = Loaded::default();
    let shown = ctx.shown(file);
    let (mut doc, root) = match ctx.parse(file, &shown) {
        Ok(v) => v,
        Err(p) => {
            out.problems = p;
            return out;
        }
    };
    let skill = skill::beside(file);
    if skill.is_none() {
        out.problems.push(
            Problem::warning(
                "skill-not-found",
                &shown,
                "no skill beside this spec (<name>.md, SKILL.md, or SKILL.md above an assets/ folder); it runs without a skill installed",
            )
            .help("put the spec beside .claude/commands/<name>.md, in the skill's folder, or in its assets/ folder"),
        );
    }
    let suite = read_spec(&mut doc, &root, file, skill, project_root);
    let failed = doc.has_errors();
    out.problems.append(&mut doc.problems);
    if let (false, Some(mut suite)) = (failed, suite) {
        suite.source = shown;
        out.suites.push(suite);
    }
    out
}

/// The spec's one case and its suite.
fn read_spec(
    doc: &mut Doc,
    root: &Node,
    file: &Path,
    skill: Option<Skill>,
    project_root: &Path,
) -> Option<Suite> {
    let m = doc.map(root, "")?;
    m.check_keys_with(
        doc,
        "a clauditor eval spec",
        TOP_KEYS,
        |k| k == "$schema",
        |_| None,
    );
    let skill_name = m
        .opt("skill_name")
        .and_then(|n| doc.text(n, "skill_name"))
        .unwrap_or_else(|| skill::default_name(file));
    let description = m.str(doc, "description");
    let test_args = m.str(doc, "test_args").unwrap_or_default();
    let user_prompt = m.text(doc, "user_prompt");
    let system_prompt = m.text(doc, "system_prompt");
    let invocation = skill.as_ref().map_or(&skill_name, |s| &s.name);
    let prompt = format!("/{invocation} {test_args}").trim_end().to_string();
    let mut case = Case::new(skill_name.clone(), location(doc, root.span), vec![prompt]);
    read_case(doc, &m, file, &mut case);
    let settings = SpecSettings::read(doc, &m);
    let triggers = m.opt("trigger_tests").map(|n| triggers::read(doc, n));
    let variance = m
        .opt("variance")
        .and_then(|n| settings::read_variance(doc, n));
    let thresholds = m
        .opt("grade_thresholds")
        .and_then(|n| settings::read_thresholds(doc, n));
    // clauditor's three-level rule: the spec's own, else an AGENTS.md, else the skill's body.
    let system_prompt = system_prompt
        .or_else(|| skill::system_prompt(doc, root.span, skill.as_ref()?, project_root));
    case.description = description.clone();
    case.judge.blind_compare_prompt = user_prompt;
    case.timeout_secs = settings.timeout;
    Some(Suite {
        id: format!("clauditor:{skill_name}"),
        format: Format::Clauditor,
        source: PathBuf::new(),
        project_root: project_root.to_path_buf(),
        skill,
        description,
        notes: None,
        defaults: settings.into_defaults(variance, thresholds, system_prompt),
        base_overlay: None,
        package: None,
        cases: vec![case],
        triggers: triggers.unwrap_or_default(),
        policies: POLICIES,
    })
}

/// What the case runs with and is graded by: its staged inputs, its output, assertions,
/// sections and criteria (their ids one pool), then assay's `x-assay-checks`.
fn read_case(doc: &mut Doc, m: &Map<'_>, file: &Path, case: &mut Case) {
    let spec_dir = file.parent().unwrap_or(Path::new("."));
    let mut ids = Ids::default();
    let (fixtures, basenames) = files::read_inputs(doc, m, spec_dir);
    case.output = files::read_outputs(doc, m, &basenames);
    case.checks = m
        .opt("assertions")
        .map(|n| assertions::read(doc, n, &mut ids))
        .unwrap_or_default();
    case.extraction = m
        .opt("sections")
        .map(|n| sections::read(doc, n, &mut ids))
        .unwrap_or_default();
    case.judge.rubric = m
        .opt("grading_criteria")
        .map(|n| criteria::read(doc, n, &mut ids))
        .unwrap_or_default();
    ids.check_unique(doc);
    // Last, so its ids are checked against the whole pool: assertions, fields and criteria.
    let extension = super::checks::read_extension(doc, m, &mut ids.taken());
    case.checks.extend(extension);
    case.cwd = (!fixtures.is_empty()).then(|| PathBuf::from("inputs"));
    case.fixtures = fixtures;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::checks::testing::{
        assert_budget_checks, assert_no_errors, at, errors, help_of,
    };

    /// Loads `text` as `brief.eval.json`.
    fn load_spec(text: &str) -> Loaded {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("brief.eval.json");
        std::fs::write(&file, text).unwrap();
        load(&LoadCtx::new(d.path()), &file, d.path())
    }

    #[test]
    fn x_assay_checks_reach_the_budget_checks_beside_the_assertions() {
        let text = r#"{
  "assertions": [{"id": "hello", "type": "contains", "needle": "hi"}],
  "x-assay-checks": [
    {"type": "max_turns", "turns": 3},
    {"type": "max_cost", "usd": 0.5},
    {"type": "max_duration", "seconds": 60}
  ]
}
"#;
        let loaded = load_spec(text);
        assert_no_errors(&loaded.problems);
        let checks = &loaded.suites[0].cases[0].checks;
        assert_eq!(
            (checks[0].id.as_str(), checks[0].kind.as_str()),
            ("hello", "contains")
        );
        assert_budget_checks(&checks[1..].iter().collect::<Vec<_>>());
        let loc = checks[1].location.as_ref().unwrap();
        assert_eq!((loc.line, loc.column), at(text, r#"{"type": "max_turns""#));
    }

    #[test]
    fn a_bad_x_assay_check_is_an_error_at_its_place() {
        let text = r#"{
  "x-assay-check": [],
  "x-assay-checks": [
    {"type": "max_turn", "turns": 3},
    {"type": "max_cost", "dollars": 0.5}
  ]
}
"#;
        let loaded = load_spec(text);
        assert!(loaded.suites.is_empty());
        assert_eq!(
            errors(&loaded.problems),
            [
                (
                    "unknown-key",
                    at(text, r#""x-assay-check""#),
                    "x-assay-check".to_string(),
                    "unknown key `x-assay-check` in a clauditor eval spec".to_string()
                ),
                (
                    "unknown-check-type",
                    at(text, r#""max_turn""#),
                    "x-assay-checks[0].type".to_string(),
                    "`max_turn` is not a check type".to_string()
                ),
                (
                    "missing-field",
                    at(text, r#"{"type": "max_cost""#),
                    "x-assay-checks[1].usd".to_string(),
                    "missing required field `usd`".to_string()
                ),
                (
                    "unknown-key",
                    at(text, r#""dollars""#),
                    "x-assay-checks[1].dollars".to_string(),
                    "unknown key `dollars` in a `max_cost` check".to_string()
                ),
            ]
        );
        assert_eq!(
            help_of(
                &loaded.problems,
                "unknown key `x-assay-check` in a clauditor eval spec"
            ),
            "did you mean `x-assay-checks`?"
        );
        assert_eq!(
            help_of(&loaded.problems, "`max_turn` is not a check type"),
            "did you mean `max_turns`?"
        );
    }

    #[test]
    fn assertions_stay_clauditors_ten_types_and_point_to_the_extension() {
        let text = r#"{"assertions": [{"id": "t", "type": "max_turns", "turns": 3}]}"#;
        let loaded = load_spec(text);
        assert_eq!(
            errors(&loaded.problems),
            [(
                "unknown-type",
                at(text, r#""max_turns""#),
                "assertions[0].type".to_string(),
                "unknown assertion type `max_turns`".to_string()
            )]
        );
        assert_eq!(
            help_of(&loaded.problems, "unknown assertion type `max_turns`"),
            "`max_turns` is an assay check type, not a clauditor assertion: list it under `x-assay-checks` (assay's extension key)"
        );
    }

    #[test]
    fn x_assay_check_ids_share_the_pool_of_assertions_fields_and_criteria() {
        let text = r#"{
  "assertions": [{"id": "a", "type": "contains", "needle": "hi"}],
  "sections": [{"name": "S", "tiers": [{"label": "t", "fields": [{"id": "f", "name": "F"}]}]}],
  "grading_criteria": [{"id": "c", "criterion": "Good."}],
  "x-assay-checks": [
    {"id": "a", "type": "max_turns", "turns": 3},
    {"id": "f", "type": "max_cost", "usd": 0.5},
    {"id": "c", "type": "max_duration", "seconds": 60},
    {"id": "d", "type": "max_duration", "seconds": 60},
    {"id": "d", "type": "max_duration", "seconds": 90}
  ]
}
"#;
        let loaded = load_spec(text);
        let dup = |id: &str, i: usize, needle: &str| {
            (
                "duplicate-id",
                at(text, needle),
                format!("x-assay-checks[{i}].id"),
                format!("check id `{id}` is used twice"),
            )
        };
        assert_eq!(
            errors(&loaded.problems),
            [
                dup("a", 0, r#""a", "type": "max_turns""#),
                dup("f", 1, r#""f", "type": "max_cost""#),
                dup("c", 2, r#""c", "type": "max_duration""#),
                dup("d", 4, r#""d", "type": "max_duration", "seconds": 90"#),
            ]
        );
    }

    #[test]
    fn providers_follow_model_prefixes() {
        assert_eq!(provider_for_model("claude-sonnet-4-6"), Some("anthropic"));
        assert_eq!(provider_for_model("gpt-5.4"), Some("openai"));
        assert_eq!(provider_for_model("o3-pro"), Some("openai"));
        assert_eq!(provider_for_model("gtp-5.4"), None);
        assert_eq!(provider_for_model("ollama"), None);
    }
}
