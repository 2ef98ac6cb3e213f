//! Claude Code's own plugin evals (`claude plugin eval`, Claude Code 2.1.269 and later): a
//! plugin's eval folder (`evals/` unless the manifest's `experimental.evals` says) holds one
//! folder per case, with a `prompt.md` (front matter and the prompt), a `case.yaml`, or both,
//! and `graders/*.md`. Read as Claude Code 2.1.332's loader reads them: the same cases found,
//! the same refused with the same causes (docs/formats.md, "Claude Code plugin evals").

pub mod add_dirs;
pub mod case_files;
pub mod extensions;
pub mod find;
pub mod front_matter;
pub mod graders;
pub mod issues;
pub mod merged;
pub mod mocks;
pub mod plugin;
pub mod to_case;
pub mod validate;
pub mod write;

use std::path::{Path, PathBuf};

use super::LoadCtx;
use crate::diag::Problem;
use crate::suite::{Format, Loaded, Suite};

/// What Claude Code's runner decides: 300 s per run; the eval folder whole is the
/// evaluation; each run starts in an empty folder; a no-plugin arm beside the plugin's; a
/// case passes at a mean score of 1.0.
pub const POLICIES: crate::suite::Policies = crate::suite::Policies {
    default_timeout_secs: Some(300),
    spec_is_folder: true,
    empty_workspace: true,
    compare_without: true,
    pass_threshold: Some(DEFAULT_THRESHOLD),
    setup_optional: true,
    ..crate::suite::Policies::NONE
};

/// The runs of a case that does not say.
pub const DEFAULT_RUNS: u32 = 3;

/// The score a case must reach unless `--threshold` says: all of its weight.
pub const DEFAULT_THRESHOLD: f64 = 1.0;

/// The keys of `case.yaml`'s top level, `context` and `execution` that Claude Code reads
/// (others are ignored, with a warning here).
pub const CASE_KEYS: &[&str] = &[
    "x-assay-threshold",
    "x-assay-turns",
    "schema_version",
    "name",
    "description",
    "tags",
    "plugins",
    "context",
    "execution",
    "runs",
    "graders",
    "expected_outcome",
];
pub const CONTEXT_KEYS: &[&str] = &["scaffold_script", "history_file", "add_dirs"];
pub const EXECUTION_KEYS: &[&str] = &[
    "prompt",
    "max_turns",
    "timeout_seconds",
    "model",
    "allowed_tools",
    "disallowed_tools",
    "artifact_publish",
    "growthbook_overrides",
    "append_system_prompt",
    "env",
];

/// Loads the cases in `cases` (folders, in Claude Code's order) of the plugin at `root`.
pub fn load(ctx: &LoadCtx, root: &Path, cases: &[PathBuf]) -> Loaded {
    let mut problems = Vec::new();
    let mut suite_cases = Vec::new();
    for dir in cases {
        match load_case(ctx, root, dir) {
            Ok((case, warnings)) => {
                suite_cases.push(case);
                problems.extend(warnings);
            }
            Err(p) => problems.extend(p),
        }
    }
    let (name, version) = plugin::identity(root);
    // A folder with a manifest, or a skill folder: loaded as a plugin in the case-runs
    // with it, and left out of the baseline's.
    let is_plugin = plugin::has_manifest(root) || root.join("SKILL.md").is_file();
    let package = is_plugin.then(|| crate::suite::Package {
        name: Some(name.clone()),
        version: version.clone(),
        root: root.to_path_buf(),
        parts: Default::default(),
        claude_plugin: true,
    });
    let suites = vec![Suite {
        id: name.clone(),
        format: Format::ClaudePluginEval,
        source: ctx.shown(root),
        project_root: root.to_path_buf(),
        skill: None,
        description: Some(match version {
            Some(v) => format!("plugin {name} {v}"),
            None => format!("plugin {name}"),
        }),
        notes: None,
        defaults: Default::default(),
        base_overlay: None,
        package,
        cases: suite_cases,
        triggers: Vec::new(),
        policies: POLICIES,
    }];
    Loaded { suites, problems }
}

/// One case folder: the case, and warnings; or the refusals.
fn load_case(
    ctx: &LoadCtx,
    root: &Path,
    dir: &Path,
) -> Result<(crate::suite::Case, Vec<Problem>), Vec<Problem>> {
    let refuse =
        |file: &Path, why: String| vec![Problem::error("case-refused", &ctx.shown(file), why)];
    let files = case_files::read(ctx, dir).map_err(|(f, why)| refuse(&f, why))?;
    if files.yaml.is_none() && !files.has_markdown() {
        return Err(refuse(dir, "no case definition: case.yaml and prompt.md are empty or missing here (write the user prompt to test in prompt.md, or define the case in case.yaml)".into()));
    }
    if let Some((name, _)) = files.graders.iter().find(|(_, md)| {
        md.front
            .as_ref()
            .and_then(|f| f.get("type"))
            .and_then(|t| t.as_str())
            .is_none()
    }) {
        return Err(refuse(
            dir,
            format!(
                "graders/{name}: frontmatter must include \"type:\" ({})",
                graders::TYPES.join(" | ")
            ),
        ));
    }
    let merged = merged::merge(&files);
    let folder = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let def = validate::check(&merged, &folder)
        .map_err(|issues| to_case::problems(ctx, dir, &merged, issues))?;
    let outside: Vec<Problem> = def
        .add_dirs
        .iter()
        .filter_map(|e| add_dirs::refusal(dir, root, e))
        .map(|why| Problem::error("case-refused", &ctx.shown(dir), why))
        .collect();
    if !outside.is_empty() {
        return Err(outside);
    }
    let history = match &def.history_file {
        Some(h) => Some(
            add_dirs::history(dir, root, h)
                .map_err(|why| vec![Problem::error("case-refused", &ctx.shown(dir), why)])?,
        ),
        None => None,
    };
    let plugins = plugin::of_case(dir, root, &def.name, def.plugins.as_deref().unwrap_or(&[]))
        .map_err(|why| vec![Problem::error("case-refused", &ctx.shown(dir), why)])?;
    let (mocks, notes) = mocks::read(&mocks::layers(root, dir))
        .map_err(|(file, why)| vec![Problem::error("case-refused", &ctx.shown(&file), why)])?;
    let (mut case, mut warnings) = to_case::case(ctx, root, &files, &merged, def);
    warnings.extend(
        notes
            .into_iter()
            .map(|n| Problem::warning("mocks", &ctx.shown(dir), n)),
    );
    let plugin_root = plugins.first().map_or(root, |p| p.root.as_path());
    if let Some(w) = mocks::unmocked_warning(plugin_root, &mocks) {
        warnings.push(Problem::warning("mocks", &ctx.shown(dir), w));
    }
    case.mocks = mocks;
    case.history = history;
    if let (Some(p), Some(serde_json::Value::Object(native))) =
        (plugins.first(), case.native.as_mut())
    {
        native.insert("plugin".into(), to_case::plugin_json(p));
    }
    case.plugins = plugins;
    Ok((case, warnings))
}
