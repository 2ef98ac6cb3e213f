//! clauditor format: `<skill>.eval.json` beside `.claude/commands/<skill>.md` or a skill's SKILL.md.

pub mod find;
pub mod write;

use std::path::{Path, PathBuf};

use super::{LoadCtx, check_unique, location};
use crate::diag::Problem;
use crate::spec::model::{
    Case, Check, CheckTarget, Criterion, Defaults, Field, Fixture, Format, JudgeConfig, OutputSpec,
    Section, Skill, Suite, Thresholds, Tier, TriggerCase, Variance,
};
use crate::spec::node::{Node, Span, Value};
use crate::spec::reader::{Doc, Map, index};
use crate::spec::{Loaded, paths};
use crate::spec::{check_types, value_formats};

/// What clauditor's runner decides: it waits 300 s, reads its own variables after assay's,
/// picks the harness this machine can run, keeps fixtures in `fixtures/`, and says its own
/// sentence when `--output` skips the input files.
pub const POLICIES: crate::spec::model::Policies = crate::spec::model::Policies {
    default_timeout_secs: Some(300),
    vars: crate::spec::model::RunnerVars {
        harness: Some("CLAUDITOR_HARNESS"),
        judge_provider: Some("CLAUDITOR_GRADING_PROVIDER"),
        judge_transport: Some("CLAUDITOR_TRANSPORT"),
    },
    auto_harness: true,
    fixture_dirs: &["fixtures"],
    output_bypass_warning: Some(
        "WARNING: --output bypasses the runner; input_files declaration is ignored.",
    ),
    ..crate::spec::model::Policies::NONE
};

const TOP_KEYS: &[&str] = &[
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
const SECTION_KEYS: &[&str] = &["name", "tiers"];
const TIER_KEYS: &[&str] = &[
    "label",
    "description",
    "min_entries",
    "max_entries",
    "fields",
];
const FIELD_KEYS: &[&str] = &["id", "name", "required", "format"];
const CRITERION_KEYS: &[&str] = &["id", "criterion"];
const TRIGGER_KEYS: &[&str] = &["should_trigger", "should_not_trigger"];
const VARIANCE_KEYS: &[&str] = &["n_runs", "min_stability"];
const THRESHOLD_KEYS: &[&str] = &["min_pass_rate", "min_mean_score"];
pub const PROVIDERS: &[&str] = &["anthropic", "openai", "auto"];
pub const TRANSPORTS: &[&str] = &["api", "cli", "auto"];
pub const HARNESSES: &[&str] = &["claude-code", "codex", "auto"];

/// Old or near keys and the per-type key they should be (clauditor's migration hints after #67).
fn migration_hint(ty: &str, key: &str) -> Option<&'static str> {
    match (ty, key) {
        ("contains" | "not_contains", "value" | "pattern") => Some("needle"),
        ("regex" | "min_count", "value") => Some("pattern"),
        ("min_length", "value" | "min") | ("max_length", "value" | "max") => Some("length"),
        (
            "min_count" | "has_urls" | "has_entries" | "urls_reachable",
            "minimum" | "min_count" | "threshold",
        ) => Some("count"),
        ("has_urls" | "has_entries" | "urls_reachable" | "has_format", "value") => Some("count"),
        ("has_format", "minimum" | "min_count") => Some("count"),
        _ => None,
    }
}

/// The skill name clauditor gives a spec that has no `skill_name`.
pub fn default_skill_name(file: &Path) -> String {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if (name == "SKILL.eval.json" || name == "eval.json")
        && let Some(dir) = file.parent().and_then(|p| p.file_name())
    {
        return dir.to_string_lossy().into_owned();
    }
    name.strip_suffix(".eval.json")
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(&name)
        .to_string()
}

/// The skill a spec file sits beside: `<name>.md` (a command), the folder's SKILL.md, or, for
/// a spec in a skill's `assets/` folder (clauditor's own layout, run there with
/// `--eval <skill>/assets/<name>.eval.json`), that skill.
pub fn skill_beside(file: &Path) -> Option<Skill> {
    let dir = file.parent()?;
    let name = file.file_name()?.to_string_lossy();
    let stem = name.strip_suffix(".eval.json")?;
    if stem != "SKILL" {
        let command = dir.join(format!("{stem}.md"));
        if command.is_file() {
            return crate::spec::skill::read(&command);
        }
    }
    crate::spec::skill::read(dir).or_else(|| {
        let owner = dir
            .parent()
            .filter(|_| dir.file_name().is_some_and(|n| n == "assets"))?;
        crate::spec::skill::read(owner)
    })
}

/// The clauditor specs of the skill in `dir` (named `name`), as `--skill` finds them: the
/// `SKILL.eval.json` beside its SKILL.md, then `assets/<name>.eval.json`.
pub fn specs_of_skill(dir: &Path, name: &str) -> Vec<PathBuf> {
    [
        dir.join("SKILL.eval.json"),
        dir.join("assets").join(format!("{name}.eval.json")),
    ]
    .into_iter()
    .filter(|p| p.is_file())
    .collect()
}

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
    let skill = skill_beside(file);
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

/// A value that must be one of a few words; `null_ok` says whether `null` means "default".
fn choice(
    doc: &mut Doc,
    m: &Map<'_>,
    key: &str,
    allowed: &[&str],
    null_ok: bool,
) -> Option<String> {
    let node = m
        .entries
        .iter()
        .find(|(k, _)| k.name == key)
        .map(|(_, v)| v)?;
    if node.value == Value::Null {
        if !null_ok {
            doc.error(
                "wrong-type",
                node.span,
                key,
                format!("`{key}` must be one of {}, not null", allowed.join(", ")),
            )
            .help = Some("omit the key to use the default `auto`".into());
        }
        return None;
    }
    let s = doc.string(node, key)?;
    if !allowed.contains(&s.as_str()) {
        doc.error(
            "bad-value",
            node.span,
            key,
            format!("`{key}` must be one of {}, found {s:?}", allowed.join(", ")),
        )
        .help = crate::diag::did_you_mean(&s, allowed.iter().copied())
            .map(|a| format!("did you mean `{a}`?"));
        return None;
    }
    (s != "auto").then_some(s)
}

/// A boolean that may be left out but not set to null.
fn strict_bool(doc: &mut Doc, m: &Map<'_>, key: &str) -> Option<bool> {
    let node = m
        .entries
        .iter()
        .find(|(k, _)| k.name == key)
        .map(|(_, v)| v)?;
    doc.bool(node, key)
}

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
    let spec_dir = file.parent().unwrap_or(Path::new("."));

    let skill_name = match m.opt("skill_name") {
        Some(n) => doc.text(n, "skill_name"),
        None => Some(default_skill_name(file)),
    }
    .unwrap_or_else(|| default_skill_name(file));
    let description = m.str(doc, "description");
    let test_args = m.str(doc, "test_args").unwrap_or_default();
    let user_prompt = m.text(doc, "user_prompt");
    let system_prompt = m.text(doc, "system_prompt");

    let mut ids: Vec<(String, Span, String)> = Vec::new();
    let (fixtures, basenames) = read_input_files(doc, &m, spec_dir);
    let output = read_outputs(doc, &m, &basenames);
    let mut checks = m
        .opt("assertions")
        .map(|n| read_assertions(doc, n, &mut ids))
        .unwrap_or_default();
    let extraction = m
        .opt("sections")
        .map(|n| read_sections(doc, n, &mut ids))
        .unwrap_or_default();
    let rubric = m
        .opt("grading_criteria")
        .map(|n| read_criteria(doc, n, &mut ids))
        .unwrap_or_default();
    check_unique(
        doc,
        "id",
        ids.iter()
            .map(|(id, span, f)| (id.as_str(), *span, f.clone())),
    );
    // Last, so its ids are checked against the whole pool: assertions, fields and criteria.
    let mut taken = ids.iter().map(|(id, _, _)| id.clone()).collect();
    checks.extend(super::checks::read_extension(doc, &m, &mut taken));

    let allow_hang_heuristic = strict_bool(doc, &m, "allow_hang_heuristic").unwrap_or(true);
    let sync_tasks = strict_bool(doc, &m, "sync_tasks").unwrap_or(false);
    let timeout = m.positive_int(doc, "timeout");
    let transport = choice(doc, &m, "transport", TRANSPORTS, false);
    let harness = choice(doc, &m, "harness", HARNESSES, false);
    let provider = choice(doc, &m, "grading_provider", PROVIDERS, true);
    let grading_model = m.text(doc, "grading_model");
    if let (None, Some(model)) = (&provider, &grading_model)
        && provider_for_model(model).is_none()
        && let Some(n) = m.opt("grading_model")
    {
        doc.error(
            "unknown-model",
            n.span,
            "grading_model",
            format!("cannot tell the provider of model `{model}`: claude-* is anthropic, gpt-* and o<digit>* are openai"),
        )
        .help = Some("set grading_provider explicitly, or fix a typo such as gtp- for gpt-".into());
    }
    let triggers = m
        .opt("trigger_tests")
        .map(|n| read_triggers(doc, n))
        .unwrap_or_default();
    let variance = m.opt("variance").and_then(|n| {
        let v = doc.map(n, "variance")?;
        v.check_keys(doc, "variance", VARIANCE_KEYS);
        let runs = v.positive_int(doc, "n_runs").unwrap_or(5);
        let min_stability = v
            .opt("min_stability")
            .and_then(|n| doc.fraction(n, "variance.min_stability"));
        Some(Variance {
            runs: runs.min(u32::MAX as u64) as u32,
            min_stability: Some(min_stability.unwrap_or(0.8)),
        })
    });
    let thresholds = m.opt("grade_thresholds").and_then(|n| {
        let t = doc.map(n, "grade_thresholds")?;
        t.check_keys(doc, "grade_thresholds", THRESHOLD_KEYS);
        let d = Thresholds::default();
        Some(Thresholds {
            min_pass_rate: t
                .opt("min_pass_rate")
                .and_then(|n| doc.fraction(n, "grade_thresholds.min_pass_rate"))
                .unwrap_or(d.min_pass_rate),
            min_mean_score: t
                .opt("min_mean_score")
                .and_then(|n| doc.fraction(n, "grade_thresholds.min_mean_score"))
                .unwrap_or(d.min_mean_score),
        })
    });

    // clauditor's three-level rule: the spec's own, else an AGENTS.md, else the skill's body.
    let system_prompt = system_prompt.or_else(|| {
        let skill = skill.as_ref()?;
        match derived_system_prompt(skill, project_root) {
            Ok(p) => Some(p),
            Err(e) => {
                doc.error("system-prompt", root.span, "system_prompt", e)
                    .help = Some(
                    "set system_prompt in the spec, or fix the AGENTS.md or skill file".into(),
                );
                None
            }
        }
    });

    let invocation = skill
        .as_ref()
        .map(|s| s.name.clone())
        .unwrap_or_else(|| skill_name.clone());
    let prompt = format!("/{invocation} {test_args}").trim_end().to_string();
    let mut case = Case::new(skill_name.clone(), location(doc, root.span), vec![prompt]);
    case.description = description.clone();
    case.cwd = (!fixtures.is_empty()).then(|| PathBuf::from("inputs"));
    case.fixtures = fixtures;
    case.checks = checks;
    case.extraction = extraction;
    case.judge.rubric = rubric;
    case.judge.blind_compare_prompt = user_prompt;
    case.output = output;
    case.timeout_secs = timeout;

    Some(Suite {
        id: format!("clauditor:{skill_name}"),
        format: Format::Clauditor,
        source: PathBuf::new(),
        project_root: project_root.to_path_buf(),
        skill,
        description,
        notes: None,
        defaults: Defaults {
            harness,
            timeout_secs: timeout,
            judge: JudgeConfig {
                model: grading_model,
                provider,
                // `auto` is clauditor's default and means something (the CLI when `claude`
                // is on PATH, else the API), so it is kept.
                transport: Some(transport.unwrap_or_else(|| "auto".into())),
                family: None,
            },
            thresholds,
            variance,
            system_prompt,
            allow_hang_heuristic,
            sync_tasks,
            ..Defaults::default()
        },
        base_overlay: None,
        package: None,
        cases: vec![case],
        triggers,
        policies: POLICIES,
    })
}

/// The system prompt clauditor derives when a spec sets none: the first `AGENTS.md` of the
/// skill's folder (a SKILL.md skill only: a command's folder is shared by every command) and
/// the project root, each inside its folder after links are resolved; else the skill file's
/// body, front matter stripped ("" when it has none).
pub fn derived_system_prompt(skill: &Skill, project_root: &Path) -> Result<String, String> {
    let mut candidates = Vec::new();
    if skill.kind == crate::spec::SkillKind::Dir {
        candidates.push(skill.path.clone());
    }
    candidates.push(project_root.to_path_buf());
    for anchor in candidates {
        let file = anchor.join("AGENTS.md");
        if !file.is_file() {
            continue;
        }
        let (Ok(real), Ok(anchor_real)) = (file.canonicalize(), anchor.canonicalize()) else {
            continue;
        };
        if !real.starts_with(&anchor_real) {
            return Err(format!(
                "{} resolves to {}, outside {}",
                file.display(),
                real.display(),
                anchor_real.display()
            ));
        }
        return std::fs::read_to_string(&real)
            .map_err(|e| format!("cannot read {}: {e}", file.display()));
    }
    let file = match skill.kind {
        crate::spec::SkillKind::Dir => skill.path.join("SKILL.md"),
        crate::spec::SkillKind::Command => skill.path.clone(),
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    crate::spec::skill::body(&text)
        .ok_or_else(|| format!("{}: front matter without a closing `---`", file.display()))
}

/// `input_files`: relative to the spec's folder, inside it, existing, flattened to `inputs/<basename>`.
fn read_input_files(doc: &mut Doc, m: &Map<'_>, spec_dir: &Path) -> (Vec<Fixture>, Vec<String>) {
    let mut fixtures = Vec::new();
    let mut names: Vec<(String, Span, usize)> = Vec::new();
    let Some(list) = m.strings(doc, "input_files") else {
        return (fixtures, Vec::new());
    };
    for (i, (written, span)) in list.iter().enumerate() {
        let field = index("input_files", i);
        let source = match paths::resolve_inside(spec_dir, written, "the spec's folder", true) {
            Ok(p) => p,
            Err(e) => {
                doc.error("bad-input-file", *span, &field, e.to_string())
                    .help =
                    Some("input_files are relative to the folder holding the .eval.json".into());
                continue;
            }
        };
        // Staged under the name of the file itself (a symlink's target name, as clauditor does).
        let real = source.canonicalize().unwrap_or_else(|_| source.clone());
        let base = real
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some((_, _, j)) = names.iter().find(|(n, _, _)| *n == base) {
            doc.error(
                "input-collision",
                *span,
                &field,
                format!("input_files entries {j} and {i} both stage as inputs/{base}"),
            )
            .help = Some("input files are flattened to their base names; rename one".into());
            continue;
        }
        names.push((base.clone(), *span, i));
        fixtures.push(Fixture {
            source,
            dest: PathBuf::from("inputs").join(&base),
        });
    }
    (fixtures, names.into_iter().map(|(n, _, _)| n).collect())
}

fn read_outputs(doc: &mut Doc, m: &Map<'_>, inputs: &[String]) -> OutputSpec {
    let file = m.text(doc, "output_file");
    let globs = m.texts(doc, "output_files").unwrap_or_default();
    for (i, (pat, span)) in globs.iter().enumerate() {
        if paths::is_absolute(pat) {
            doc.error(
                "bad-path",
                *span,
                &index("output_files", i),
                "output_files patterns are relative to the skill's working directory",
            );
            continue;
        }
        let last = pat.trim_end_matches('/').rsplit('/').next().unwrap_or(pat);
        if inputs.iter().any(|b| b == last) {
            doc.error(
                "output-collision",
                *span,
                &index("output_files", i),
                format!("output_files pattern `{pat}` collides with the input file `{last}`"),
            )
            .help = Some("declare the output under another name or folder; inputs/ is where input_files are staged".into());
        }
    }
    if let Some(n) = m.opt("output_file")
        && let Some(f) = &file
        && paths::is_absolute(f)
    {
        doc.error(
            "bad-path",
            n.span,
            "output_file",
            "output_file is relative to the skill's working directory",
        );
    }
    match (file, globs.is_empty()) {
        (Some(path), _) => OutputSpec::File { path },
        (None, false) => OutputSpec::Files {
            globs: globs.into_iter().map(|(g, _)| g).collect(),
        },
        (None, true) => OutputSpec::FinalMessage,
    }
}

/// Reads a required, non-empty string `id` into the shared id pool.
fn read_id(doc: &mut Doc, m: &Map<'_>, ids: &mut Vec<(String, Span, String)>) -> Option<String> {
    let n = m.req(doc, "id")?;
    let id = doc.text(n, &m.path("id"))?;
    ids.push((id.clone(), n.span, m.path("id")));
    Some(id)
}

fn read_assertions(
    doc: &mut Doc,
    node: &Node,
    ids: &mut Vec<(String, Span, String)>,
) -> Vec<Check> {
    let mut checks = Vec::new();
    let Some(items) = doc.seq(node, "assertions") else {
        return checks;
    };
    for (i, item) in items.iter().enumerate() {
        let field = index("assertions", i);
        let Some(a) = doc.map(item, &field) else {
            continue;
        };
        let id = read_id(doc, &a, ids);
        let Some(ty_node) = a.req(doc, "type") else {
            continue;
        };
        let Some(ty) = doc.string(ty_node, &a.path("type")) else {
            continue;
        };
        if super::checks::is_plugin_type(doc, &ty) {
            let config = super::checks::config_of(&a, &["id", "type", "name"]);
            if let (Some(id), Some(config)) = (
                id,
                super::checks::plugin_check(doc, &ty, config, item, &field),
            ) {
                let at = Some(location(doc, item.span));
                checks.push(Check::new(id, ty, config, CheckTarget::Output, at));
            }
            continue;
        }
        let Some(check_type) = check_types::CLAUDITOR_TYPES
            .contains(&ty.as_str())
            .then(|| check_types::lookup(&ty))
            .flatten()
        else {
            doc.error(
                "unknown-type",
                ty_node.span,
                &a.path("type"),
                format!("unknown assertion type `{ty}`"),
            )
            .help = super::checks::extension_hint(&ty, "clauditor").or_else(|| {
                let names = super::checks::all_type_names(doc, check_types::CLAUDITOR_TYPES);
                Some(
                    match crate::diag::did_you_mean(&ty, names.iter().map(String::as_str)) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!("assertion types: {}", names.join(", ")),
                    },
                )
            });
            continue;
        };
        let mut known = vec!["id", "type", "name"];
        known.extend(check_types::clauditor_keys(check_type));
        a.check_keys_with(doc, &format!("a `{ty}` assertion"), &known, |_| false, |k| {
            migration_hint(&ty, k).map(|to| {
                if k == "value" {
                    format!("did you mean `{to}`? `value` was replaced by per-type keys (clauditor #67)")
                } else {
                    format!("did you mean `{to}`?")
                }
            })
        });
        // An optional key written as null is an error, not the default (as in clauditor).
        for spec in check_type.keys.iter().filter(|k| !k.required) {
            if let Some((_, v)) = a.entries.iter().find(|(k, _)| k.name == spec.name)
                && v.value == Value::Null
            {
                doc.error(
                    "wrong-type",
                    v.span,
                    &a.path(spec.name),
                    format!("`{}` must not be null", spec.name),
                )
                .help = Some("omit the key to use the default".into());
            }
        }
        let name = a.str(doc, "name");
        let config = super::checks::read_config(doc, &a, check_type);
        if let (Some(id), Some(config)) = (id, config) {
            let mut config = config;
            if let (Some(name), Some(obj)) = (name, config.as_object_mut()) {
                obj.insert("name".into(), name.into());
            }
            let at = Some(location(doc, item.span));
            checks.push(Check::new(id, ty, config, check_type.target.clone(), at));
        }
    }
    checks
}

fn read_sections(
    doc: &mut Doc,
    node: &Node,
    ids: &mut Vec<(String, Span, String)>,
) -> Vec<Section> {
    let mut sections = Vec::new();
    let Some(items) = doc.seq(node, "sections") else {
        return sections;
    };
    for (si, item) in items.iter().enumerate() {
        let field = index("sections", si);
        let Some(s) = doc.map(item, &field) else {
            continue;
        };
        s.check_keys(doc, "a section", SECTION_KEYS);
        let name = s.req_text(doc, "name");
        if !s.has("tiers") {
            let msg = if s.has("fields") {
                "a section has flat `fields` without `tiers`; wrap the fields in a tiers[] entry"
            } else {
                "missing required field `tiers`"
            };
            doc.error("missing-field", item.span, &s.path("tiers"), msg);
            continue;
        }
        let tiers = s
            .opt("tiers")
            .and_then(|n| doc.seq(n, &s.path("tiers")))
            .map(|tiers| {
                tiers
                    .iter()
                    .enumerate()
                    .filter_map(|(ti, t)| read_tier(doc, t, &index(&s.path("tiers"), ti), ids))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(name) = name {
            sections.push(Section { name, tiers });
        }
    }
    sections
}

fn read_tier(
    doc: &mut Doc,
    node: &Node,
    field: &str,
    ids: &mut Vec<(String, Span, String)>,
) -> Option<Tier> {
    let t = doc.map(node, field)?;
    t.check_keys(doc, "a tier", TIER_KEYS);
    let label = t.req_text(doc, "label");
    let description = t.str(doc, "description");
    let min_entries = t
        .opt("min_entries")
        .and_then(|n| doc.non_negative_int(n, &t.path("min_entries")))
        .unwrap_or(0);
    let max_entries = t
        .opt("max_entries")
        .and_then(|n| doc.non_negative_int(n, &t.path("max_entries")));
    if let (Some(max), Some(n)) = (max_entries, t.opt("max_entries"))
        && max < min_entries
    {
        doc.error(
            "out-of-range",
            n.span,
            &t.path("max_entries"),
            format!("max_entries ({max}) is below min_entries ({min_entries})"),
        );
    }
    let mut fields = Vec::new();
    if let Some(items) = t.opt("fields").and_then(|n| doc.seq(n, &t.path("fields"))) {
        for (fi, item) in items.iter().enumerate() {
            let ff = index(&t.path("fields"), fi);
            let Some(f) = doc.map(item, &ff) else {
                continue;
            };
            f.check_keys_with(
                doc,
                "a field",
                FIELD_KEYS,
                |_| false,
                |k| (k == "pattern").then(|| "use `format`, not `pattern`".to_string()),
            );
            let id = read_id(doc, &f, ids);
            let name = f.req_text(doc, "name");
            let required = f.bool(doc, "required").unwrap_or(true);
            let format = f
                .opt("format")
                .and_then(|n| read_field_format(doc, n, &f.path("format")));
            if let (Some(id), Some(name)) = (id, name) {
                fields.push(Field {
                    id,
                    name,
                    required,
                    format,
                });
            }
        }
    }
    Some(Tier {
        label: label?,
        description,
        min_entries,
        max_entries,
        fields,
    })
}

/// A field's `format`: a registered name, or an inline regex matched against the whole value.
fn read_field_format(doc: &mut Doc, node: &Node, field: &str) -> Option<String> {
    let s = doc.string(node, field)?;
    if s.is_empty() {
        doc.error(
            "empty",
            node.span,
            field,
            "format may not be empty; leave it out to skip format checks",
        );
        return None;
    }
    if value_formats::lookup(&s).is_some() || doc.extra.as_ref().is_some_and(|e| e.has_format(&s)) {
        return Some(s);
    }
    if let Err(e) = fancy_regex::Regex::new(&format!("^(?:{s})$")) {
        doc.error(
            "unknown-format",
            node.span,
            field,
            format!("`{s}` is neither a registered format nor a valid regex: {e}"),
        )
        .help = crate::diag::did_you_mean(&s, value_formats::names())
            .map(|n| format!("did you mean the format `{n}`?"));
        return None;
    }
    Some(s)
}

fn read_criteria(
    doc: &mut Doc,
    node: &Node,
    ids: &mut Vec<(String, Span, String)>,
) -> Vec<Criterion> {
    let mut out = Vec::new();
    let Some(items) = doc.seq(node, "grading_criteria") else {
        return out;
    };
    for (i, item) in items.iter().enumerate() {
        let field = index("grading_criteria", i);
        if let Value::Str(_) = item.value {
            doc.error(
                "wrong-type",
                item.span,
                &field,
                "a criterion is an object, found a string",
            )
            .help = Some("write {\"id\": \"…\", \"criterion\": \"…\"}".into());
            continue;
        }
        let Some(c) = doc.map(item, &field) else {
            continue;
        };
        c.check_keys(doc, "a grading criterion", CRITERION_KEYS);
        let id = read_id(doc, &c, ids);
        let criterion = c.req_text(doc, "criterion");
        if let (Some(id), Some(criterion)) = (id, criterion) {
            out.push(Criterion { id, criterion });
        }
    }
    out
}

fn read_triggers(doc: &mut Doc, node: &Node) -> Vec<TriggerCase> {
    let mut out = Vec::new();
    let Some(t) = doc.map(node, "trigger_tests") else {
        return out;
    };
    t.check_keys(doc, "trigger_tests", TRIGGER_KEYS);
    for (key, should) in [("should_trigger", true), ("should_not_trigger", false)] {
        for (i, (query, span)) in t
            .texts(doc, key)
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            out.push(TriggerCase {
                id: format!("{key}[{i}]"),
                query,
                should_trigger: should,
                routing: Default::default(),
                location: location(doc, span),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::formats::checks::testing::{
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
    fn default_names_follow_clauditor() {
        assert_eq!(default_skill_name(Path::new("a/foo.eval.json")), "foo");
        assert_eq!(default_skill_name(Path::new("a/b.c.eval.json")), "b.c");
        assert_eq!(
            default_skill_name(Path::new("skills/brief/SKILL.eval.json")),
            "brief"
        );
        assert_eq!(
            default_skill_name(Path::new("skills/brief/eval.json")),
            "brief"
        );
    }

    #[test]
    fn a_spec_in_a_skills_assets_folder_pairs_with_that_skill() {
        let d = tempfile::tempdir().unwrap();
        let skill = d.path().join("brief");
        std::fs::create_dir_all(skill.join("assets")).unwrap();
        std::fs::create_dir_all(d.path().join("loose/assets")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "---\nname: brief\n---\nBody.\n").unwrap();
        let paired = skill_beside(&skill.join("assets/brief.eval.json")).unwrap();
        assert_eq!(
            (paired.name.as_str(), paired.path.as_path()),
            ("brief", skill.as_path())
        );
        // Only an `assets/` folder's owner: not any folder above a spec.
        std::fs::create_dir_all(skill.join("evals")).unwrap();
        assert!(skill_beside(&skill.join("evals/brief.eval.json")).is_none());
        assert!(skill_beside(&d.path().join("loose/assets/brief.eval.json")).is_none());
        assert_eq!(specs_of_skill(&skill, "brief"), Vec::<PathBuf>::new());
        std::fs::write(skill.join("assets/brief.eval.json"), "{}").unwrap();
        std::fs::write(skill.join("assets/other.eval.json"), "{}").unwrap();
        std::fs::write(skill.join("SKILL.eval.json"), "{}").unwrap();
        assert_eq!(
            specs_of_skill(&skill, "brief"),
            [
                skill.join("SKILL.eval.json"),
                skill.join("assets/brief.eval.json")
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

    #[test]
    fn front_matter_is_stripped_as_clauditor_does() {
        let body = |t: &str| crate::spec::skill::body(t);
        assert_eq!(
            body("---\nname: x\n---\nDo it.\n").as_deref(),
            Some("Do it.\n")
        );
        assert_eq!(
            body("\n---\nname: x\n---\n\nDo it.").as_deref(),
            Some("\nDo it.")
        );
        assert_eq!(body("---\nname: x\n---\n").as_deref(), Some(""));
        assert_eq!(
            body("No front matter.\n").as_deref(),
            Some("No front matter.\n")
        );
        assert_eq!(body("---\nname: x\nnever closed\n"), None);
    }

    #[test]
    fn the_system_prompt_comes_from_agents_md_then_the_skill_body() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("skills/brief")).unwrap();
        std::fs::create_dir_all(root.join(".claude/commands")).unwrap();
        std::fs::write(
            root.join("skills/brief/SKILL.md"),
            "---\nname: brief\n---\nWrite briefs.\n",
        )
        .unwrap();
        std::fs::write(root.join(".claude/commands/c.md"), "Command body.\n").unwrap();
        let dir = crate::spec::skill::read(&root.join("skills/brief")).unwrap();
        let cmd = crate::spec::skill::read(&root.join(".claude/commands/c.md")).unwrap();
        assert_eq!(
            derived_system_prompt(&dir, root).unwrap(),
            "Write briefs.\n"
        );
        assert_eq!(
            derived_system_prompt(&cmd, root).unwrap(),
            "Command body.\n"
        );
        std::fs::write(root.join("AGENTS.md"), "Project rules.").unwrap();
        assert_eq!(derived_system_prompt(&dir, root).unwrap(), "Project rules.");
        assert_eq!(derived_system_prompt(&cmd, root).unwrap(), "Project rules.");
        // The skill's own AGENTS.md first; a command's folder is shared, so never its.
        std::fs::write(root.join("skills/brief/AGENTS.md"), "Skill rules.").unwrap();
        std::fs::write(root.join(".claude/commands/AGENTS.md"), "Shared.").unwrap();
        assert_eq!(derived_system_prompt(&dir, root).unwrap(), "Skill rules.");
        assert_eq!(derived_system_prompt(&cmd, root).unwrap(), "Project rules.");
        // A link out of its folder is an error, not a silent read.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "secret").unwrap();
        std::fs::remove_file(root.join("skills/brief/AGENTS.md")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.md"),
            root.join("skills/brief/AGENTS.md"),
        )
        .unwrap();
        assert!(
            derived_system_prompt(&dir, root)
                .unwrap_err()
                .contains("outside")
        );
    }
}
