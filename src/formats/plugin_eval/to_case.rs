//! A checked plugin-eval case into assay's model: its prompt and limits, its deterministic
//! graders as checks with Claude Code's semantics (`js_regex`, `tool_used`, `tool_order`,
//! `created_glob`), its `llm` and `baseline` graders as judge items; and the problems of a
//! refused case, each pointing into the file it is about.

use std::path::Path;

use serde_json::{Value as Json, json};

use super::case_files::CaseFiles;
use super::graders::Grader;
use super::issues::Issue;
use super::merged::MergedCase;
use super::validate::CaseDef;
use crate::diag::Problem;
use crate::formats::LoadCtx;
use crate::suite::{AgentLimits, Case, Check, CheckTarget, Criterion, Location};

/// The case, and warnings about keys Claude Code ignores.
pub fn case(
    ctx: &LoadCtx,
    root: &Path,
    files: &CaseFiles,
    merged: &MergedCase<'_>,
    def: CaseDef,
) -> (Case, Vec<Problem>) {
    let location = case_location(ctx, files);
    let mut turns = vec![def.prompt.clone()];
    turns.extend(def.extensions.more_turns.iter().cloned());
    let mut c = Case::new(def.name.clone(), location, turns);
    c.pass_threshold = def.extensions.threshold;
    c.fixtures = super::add_dirs::fixtures(&files.dir, &def.add_dirs);
    c.description = def.description.clone();
    c.timeout_secs = Some(def.timeout_seconds);
    c.runs = Some(def.runs);
    c.tags = def.tags.clone();
    c.agent = AgentLimits {
        max_turns: Some(def.max_turns),
        model: def.model.clone(),
        allowed_tools: def.allowed_tools.clone(),
        disallowed_tools: def.disallowed_tools.clone(),
        append_system_prompt: def.append_system_prompt.clone(),
        gated: true,
        env: def.env.clone(),
    };
    if let Some(script) = &def.scaffold_script {
        // The script runs from a copy of the eval folder (its neighbours' files with it),
        // made in the case-run's HOME for the script alone.
        let evals = files
            .dir
            .ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == "evals"))
            .unwrap_or(&files.dir)
            .to_path_buf();
        let rel = files.dir.join(script);
        let rel = rel
            .strip_prefix(&evals)
            .unwrap_or(&rel)
            .to_string_lossy()
            .into_owned();
        c.setup = Some(format!(
            "bash \"$HOME\"/{}/{}",
            crate::suite::SETUP_FILES,
            shell_quote(&rel)
        ));
        c.setup_files = Some(evals);
    }
    for g in &def.graders {
        if g.with_only() {
            c.with_only.push(g.name.clone());
        }
        match g.kind {
            "llm" | "baseline" => {
                c.judge.rubric.push(criterion(files, g));
                c.judge.rubric_votes = JUDGE_VOTES;
            }
            _ => c.checks.push(check(ctx, merged, &def.name, g)),
        }
    }
    c.native = Some(native(root, files, &def));
    let mut warnings = ignored_keys(ctx, files);
    if def.scaffold_script.is_some() {
        warnings.push(Problem::warning(
            "scaffold-needs-trust",
            &c.location.file,
            format!("case \"{}\": its scaffold_script runs only with --trust (author-supplied bash, run in the sandbox); without it the case runs against an unstaged workspace, as `claude plugin eval` does without --scaffold", def.name),
        ));
    }
    (c, warnings)
}

/// The case as Claude Code's `--json` describes it, keys in its order.
fn native(root: &Path, files: &CaseFiles, def: &CaseDef) -> Json {
    let dir = files.dir.strip_prefix(root).map_or_else(
        |_| files.dir.to_string_lossy().into_owned(),
        |r| {
            if r.as_os_str().is_empty() {
                ".".into()
            } else {
                r.to_string_lossy().into_owned()
            }
        },
    );
    let mut o = serde_json::Map::new();
    o.insert("name".into(), json!(def.name));
    o.insert("dir".into(), json!(dir));
    o.insert("source".into(), json!(files.source()));
    o.insert("promptMarkdown".into(), json!(def.prompt));
    if let Some(m) = &def.model {
        o.insert("model".into(), json!(m));
    }
    o.insert("runsPerCase".into(), json!(def.runs));
    o.insert("timeoutSeconds".into(), json!(def.timeout_seconds));
    o.insert("maxTurns".into(), json!(def.max_turns));
    let graders: Vec<Json> = def.graders.iter().map(native_grader).collect();
    o.insert("graders".into(), json!(graders));
    // The plugin, for the result's `suite.plugins` (not a field of Claude Code's case).
    if super::plugin::has_manifest(root) || root.join("SKILL.md").is_file() {
        let (name, version) = super::plugin::identity(root);
        let p = crate::suite::Package {
            name: Some(name),
            version,
            root: root.to_path_buf(),
            parts: Default::default(),
            claude_plugin: true,
        };
        o.insert("plugin".into(), plugin_json(&p));
    }
    Json::Object(o)
}

/// A plugin as the result's `suite.plugins` lists it: name, version, path.
pub fn plugin_json(p: &crate::suite::Package) -> Json {
    let mut o = serde_json::Map::new();
    o.insert("name".into(), json!(p.name.clone().unwrap_or_default()));
    if let Some(v) = &p.version {
        o.insert("version".into(), json!(v));
    }
    o.insert("path".into(), json!(p.root.display().to_string()));
    Json::Object(o)
}

fn native_grader(g: &Grader) -> Json {
    let mut o = serde_json::Map::new();
    o.insert("name".into(), json!(g.name));
    o.insert("type".into(), json!(g.kind));
    o.insert("weight".into(), json!(g.weight));
    if let Some(c) = g.config.get("criteria") {
        o.insert("graderMarkdown".into(), c.clone());
    }
    o.insert("config".into(), g.config.clone());
    Json::Object(o)
}

/// Where the case is written: its `case.yaml`, else its `prompt.md`.
fn case_location(ctx: &LoadCtx, files: &CaseFiles) -> Location {
    let file = if files.yaml.is_some() {
        files.dir.join("case.yaml")
    } else {
        files.dir.join("prompt.md")
    };
    Location {
        file: ctx.shown(&file),
        line: 1,
        column: 1,
    }
}

/// A deterministic grader as a check of the same semantics.
fn check(ctx: &LoadCtx, merged: &MergedCase<'_>, case: &str, g: &Grader) -> Check {
    let cfg = &g.config;
    let (kind, config, target) = match g.kind {
        "regex" => {
            let mut o = json!({
                "pattern": cfg["pattern"],
                "flags": cfg["flags"],
                "match": cfg["match"],
                "case": case,
            });
            match &cfg["target"] {
                Json::String(s) => o["source"] = json!(s),
                t => o["path"] = t["path"].clone(),
            }
            ("js_regex", o, CheckTarget::Transcript)
        }
        "file_exists" => (
            "created_glob",
            json!({"path": cfg["path"], "exists": cfg["exists"]}),
            CheckTarget::Workspace,
        ),
        kind => {
            let mut o = cfg.clone();
            if let Some(m) = o.as_object_mut() {
                m.remove("arm");
            }
            (
                if kind == "tool_used" {
                    "tool_used"
                } else {
                    "tool_order"
                },
                o,
                CheckTarget::Transcript,
            )
        }
    };
    let mut c = Check::new(
        g.name.clone(),
        kind,
        config,
        target,
        Some(grader_location(ctx, merged, g)),
    );
    c.weight = g.weight;
    c
}

fn grader_location(ctx: &LoadCtx, merged: &MergedCase<'_>, g: &Grader) -> Location {
    let source = &merged.sources[g.at.0];
    let (line, column) = source.line_col(g.at.1.start);
    Location {
        file: ctx.shown(&source.path),
        line,
        column,
    }
}

/// How many times Claude Code asks its judge about an `llm` or `baseline` grader; the
/// majority decides.
const JUDGE_VOTES: u32 = 3;

/// The most of a baseline's reference trajectory shown to the judge.
const MAX_REFERENCE: usize = 100_000;

/// An `llm` or `baseline` grader as a judge item: its criteria; a baseline's with the
/// reference trajectory it is compared with (`baseline_file`, read when the case loads).
fn criterion(files: &CaseFiles, g: &Grader) -> Criterion {
    let criteria = g.config["criteria"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let text = match g.config.get("baseline_file").and_then(Json::as_str) {
        Some(f) => {
            let reference = std::fs::read(files.dir.join(f))
                .map(|b| String::from_utf8_lossy(&b[..b.len().min(MAX_REFERENCE)]).into_owned())
                .unwrap_or_else(|e| format!("(the reference {f} cannot be read: {e})"));
            format!(
                "{criteria}\n\nPass when the run satisfies this at least as well as the BASELINE trajectory below ({f}):\n{reference}"
            )
        }
        None => criteria,
    };
    // What Claude Code shows its judge (`focus`), said to assay's, which is shown them all.
    let text = match g.config.get("focus") {
        Some(Json::String(f)) if f == "trace" => {
            format!("{text}\n\n(Judge this from the agent's whole transcript.)")
        }
        Some(Json::String(f)) if f == "files" => {
            format!("{text}\n\n(Judge this from the files the run created.)")
        }
        Some(Json::Object(o)) => match o.get("path").and_then(Json::as_str) {
            Some(p) => format!("{text}\n\n(Judge this from the file {p} the run left.)"),
            None => text,
        },
        _ => text,
    };
    Criterion {
        id: g.name.clone(),
        criterion: text,
    }
}

/// Keys of `case.yaml` Claude Code reads nothing from: warned, as it ignores them.
fn ignored_keys(ctx: &LoadCtx, files: &CaseFiles) -> Vec<Problem> {
    let Some((doc, node)) = &files.yaml else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut warn = |section: &str, n: &crate::syntax::node::Node, known: &[&str]| {
        for (k, _) in n.as_map().unwrap_or(&[]) {
            if !known.contains(&k.name.as_str()) && !crate::formats::is_assay_key(&k.name) {
                let field = if section.is_empty() {
                    k.name.clone()
                } else {
                    format!("{section}.{}", k.name)
                };
                out.push(
                    Problem::warning("ignored-key", &ctx.shown(&doc.source.path), format!("`{field}` is not a key Claude Code reads; `claude plugin eval` ignores it"))
                        .at(&doc.source, k.span)
                        .field(&field),
                );
            }
        }
    };
    warn("", node, super::CASE_KEYS);
    if let Some(c) = node.get("context") {
        warn("context", c, super::CONTEXT_KEYS);
    }
    if let Some(e) = node.get("execution") {
        warn("execution", e, super::EXECUTION_KEYS);
    }
    out
}

/// A refused case's problems, each in the file it is about (the case folder when none is).
pub fn problems(
    ctx: &LoadCtx,
    dir: &Path,
    merged: &MergedCase<'_>,
    issues: Vec<Issue>,
) -> Vec<Problem> {
    issues
        .into_iter()
        .map(|i| {
            let message = if i.schema {
                format!("{}: {}", i.field, i.message)
            } else {
                i.message
            };
            match i.at {
                Some((file, span)) => {
                    let source = &merged.sources[file];
                    Problem::error("case-refused", &source.path, message)
                        .at(source, span)
                        .field(&i.field)
                }
                None => Problem::error("case-refused", &ctx.shown(dir), message),
            }
        })
        .collect()
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
