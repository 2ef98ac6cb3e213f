//! UAAPS agent packages: `package.agent.json`, `evals/eval-config.json` and `evals/cases/*.yaml`.

pub mod find;
pub mod write;

pub mod deterministic;
pub mod hooks;
pub mod package;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::{LoadCtx, location};
use crate::diag::{Problem, did_you_mean};
use crate::suite::{
    Case, Check, CheckTarget, Defaults, Fixture, Format, JudgeConfig, Package, Sandbox, Suite,
    Target, TargetKind,
};
use crate::suite::{Loaded, paths};
use crate::syntax::reader::{Doc, Map, index};
use crate::{diag::source::Span, syntax::node::Node};

/// What a UAAPS package's eval config decides: 120 s, `evals/` whole is the evaluation, and
/// fixtures are kept in `evals/fixtures/` and `evals/files/`.
pub const POLICIES: crate::suite::Policies = crate::suite::Policies {
    default_timeout_secs: Some(DEFAULT_TIMEOUT_SECS),
    fixture_dirs: &["fixtures", "files"],
    spec_is_folder: true,
    ..crate::suite::Policies::NONE
};

/// The keys of `eval-config.json`, and of its `sandbox`.
pub const CONFIG_KEYS: &[&str] = &["version", "engine", "timeout", "judge", "sandbox", "env"];
pub const SANDBOX_KEYS: &[&str] = &["network", "writable-paths"];
/// The keys of an eval case, and of its `input`, `expected` and `judge`.
pub const CASE_KEYS: &[&str] = &[
    "name",
    "description",
    "target",
    "input",
    "expected",
    "judge",
    // assay's extension: any check type, with negate and weight (docs/checks.md).
    "x-assay-checks",
];
pub const INPUT_KEYS: &[&str] = &["prompt", "files", "workspace-files"];
pub const EXPECTED_KEYS: &[&str] = &["contains", "not-contains", "files-created", "agent-blocked"];
pub const JUDGE_KEYS: &[&str] = &["criteria"];
/// The spec's engines assay runs, each the harness of that name: `copilot`, reserved by the
/// spec "until headless modes are available", runs headless now (`copilot --acp`).
pub const ENGINES: &[&str] = &["claude-code", "codex", "copilot"];
/// Engines the UAAPS spec reserves but that have no headless mode yet.
pub const RESERVED_ENGINES: &[&str] = &["cursor"];
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// The `package.agent.json` manifest: only the fields assay uses are read; the manifest's
/// own schema belongs to the package manager.
pub fn read_manifest(ctx: &LoadCtx, root: &Path, problems: &mut Vec<Problem>) -> Package {
    let mut pkg = Package {
        name: None,
        version: None,
        root: root.to_path_buf(),
        parts: Default::default(),
        claude_plugin: false,
    };
    let file = root.join("package.agent.json");
    if !file.is_file() {
        return pkg;
    }
    match ctx.parse(&file, &ctx.shown(&file)) {
        Ok((mut doc, node)) => {
            if let Some(m) = doc.map(&node, "") {
                pkg.name = m.text(&mut doc, "name");
                pkg.version = m.text(&mut doc, "version");
            }
            problems.append(&mut doc.problems);
        }
        Err(mut p) => problems.append(&mut p),
    }
    pkg
}

/// The name a package's suites go by: its manifest name, else its folder's.
pub fn package_label(pkg: &Package) -> String {
    pkg.name.clone().unwrap_or_else(|| {
        pkg.root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "package".into())
    })
}

/// Loads a package's LLM-judged evals (`<root>/evals/`).
pub fn load(ctx: &LoadCtx, root: &Path) -> Loaded {
    let mut out = Loaded::default();
    let mut package = read_manifest(ctx, root, &mut out.problems);
    let evals = root.join("evals");
    let config_file = evals.join("eval-config.json");
    let cases_dir = evals.join("cases");
    let case_files = list_yaml(&cases_dir);

    if !config_file.is_file() {
        if !case_files.is_empty() {
            out.problems.push(
                Problem::error(
                    "missing-file",
                    &ctx.shown(&config_file),
                    "evals/cases/ holds eval cases but evals/eval-config.json is missing",
                )
                .help("create it with at least {\"version\": 1, \"engine\": \"claude-code\"}"),
            );
        }
        return out;
    }

    let defaults = load_config(ctx, &config_file, &mut out.problems);
    if case_files.is_empty() {
        out.problems.push(Problem::warning(
            "no-cases",
            &ctx.shown(&cases_dir),
            "evals/eval-config.json is here but evals/cases/ holds no *.yaml cases",
        ));
    }
    let cases = load_cases(ctx, root, &case_files, &mut out.problems);
    package.parts = super::uaaps::package::read_parts(ctx, root, &mut out.problems);
    if let (Some(cases), Some(defaults)) = (cases, defaults) {
        out.suites.push(Suite {
            id: format!("uaaps:{}", package_label(&package)),
            format: Format::Uaaps,
            source: ctx.shown(&config_file),
            project_root: root.to_path_buf(),
            skill: None,
            description: None,
            notes: None,
            defaults,
            base_overlay: None,
            package: Some(package),
            cases,
            triggers: Vec::new(),
            policies: POLICIES,
        });
    }
    out
}

/// `evals/eval-config.json`'s defaults, or `None` when it has errors (in `problems`).
fn load_config(ctx: &LoadCtx, file: &Path, problems: &mut Vec<Problem>) -> Option<Defaults> {
    match ctx.parse(file, &ctx.shown(file)) {
        Ok((mut doc, node)) => {
            let d = read_config(&mut doc, &node);
            let failed = doc.has_errors();
            problems.append(&mut doc.problems);
            if failed { None } else { d }
        }
        Err(mut p) => {
            problems.append(&mut p);
            None
        }
    }
}

/// The eval cases of `files`, or `None` when one has errors (all of them in `problems`).
fn load_cases(
    ctx: &LoadCtx,
    root: &Path,
    files: &[PathBuf],
    problems: &mut Vec<Problem>,
) -> Option<Vec<Case>> {
    let evals = root.join("evals");
    let mut cases = Vec::new();
    let mut names: Vec<(String, PathBuf)> = Vec::new();
    let mut ok = true;
    for file in files {
        match ctx.parse(file, &ctx.shown(file)) {
            Ok((mut doc, node)) => {
                claim_name(ctx, &mut doc, &node, file, &mut names);
                match read_case(&mut doc, &node, root, &evals).filter(|_| !doc.has_errors()) {
                    Some(case) => cases.push(case),
                    None => ok = false,
                }
                problems.append(&mut doc.problems);
            }
            Err(mut p) => {
                ok = false;
                problems.append(&mut p);
            }
        }
    }
    ok.then_some(cases)
}

/// `*.yaml` and `*.yml` files directly in `dir`, sorted.
pub fn list_yaml(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
        })
        .collect();
    files.sort();
    files
}

/// `eval-config.json`: the package's defaults for its eval cases.
fn read_config(doc: &mut Doc, node: &Node) -> Option<Defaults> {
    let m = doc.map(node, "")?;
    m.check_keys(doc, "eval-config.json", CONFIG_KEYS);
    if let Some(n) = m.req(doc, "version") {
        read_version(doc, n);
    }
    let engine = m.req(doc, "engine").and_then(|n| read_engine(doc, n));
    let timeout = m.opt("timeout").and_then(|n| read_timeout(doc, n));
    let judge = m.text(doc, "judge");
    let sandbox = m.opt("sandbox").and_then(|n| read_sandbox(doc, n));
    let env = m
        .opt("env")
        .map(|n| read_env(doc, n, "env"))
        .unwrap_or_default();
    Some(Defaults {
        harness: engine.clone(),
        // Absent: the format's 120 s, below assay.toml (Format::default_timeout_secs).
        timeout_secs: timeout,
        judge: JudgeConfig {
            // Absent: a judge of the engine's own model family.
            family: judge.is_none().then(|| {
                match engine.as_deref() {
                    Some("codex") => "openai",
                    _ => "anthropic",
                }
                .to_string()
            }),
            model: judge,
            ..JudgeConfig::default()
        },
        allow_hang_heuristic: true,
        sandbox: Some(sandbox.unwrap_or_default()),
        env,
        ..Defaults::default()
    })
}

/// `version`: 1, the only one there is.
fn read_version(doc: &mut Doc, n: &Node) {
    match doc.number(n, "version") {
        Some(1.0) | None => {}
        Some(v) => {
            doc.error(
                "unsupported-version",
                n.span,
                "version",
                format!("eval config version {v} is not supported; this assay reads version 1"),
            );
        }
    }
}

/// `engine`: one of [`ENGINES`]; one of [`RESERVED_ENGINES`] is refused with its reason.
fn read_engine(doc: &mut Doc, n: &Node) -> Option<String> {
    let e = doc.string(n, "engine")?;
    if ENGINES.contains(&e.as_str()) {
        return Some(e);
    }
    if RESERVED_ENGINES.contains(&e.as_str()) {
        doc.error(
            "unsupported-engine",
            n.span,
            "engine",
            format!("engine `{e}` is not supported: it has no headless mode to run evals with"),
        )
        .help = Some("use \"claude-code\", \"codex\" or \"copilot\"".into());
    } else {
        doc.error(
            "unknown-engine",
            n.span,
            "engine",
            format!("unknown engine `{e}`"),
        )
        .help = Some(match did_you_mean(&e, ENGINES.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("supported engines: {}", ENGINES.join(", ")),
        });
    }
    None
}

/// `timeout`: a positive number of seconds, rounded up.
fn read_timeout(doc: &mut Doc, n: &Node) -> Option<u64> {
    let t = doc.number(n, "timeout")?;
    if t <= 0.0 {
        doc.error(
            "out-of-range",
            n.span,
            "timeout",
            format!("must be a positive number of seconds, found {t}"),
        );
        return None;
    }
    Some(t.ceil() as u64)
}

/// `sandbox`: whether the network is open, and the workspace paths the agent may write.
fn read_sandbox(doc: &mut Doc, n: &Node) -> Option<Sandbox> {
    let s = doc.map(n, "sandbox")?;
    s.check_keys(doc, "sandbox", SANDBOX_KEYS);
    let network = s.bool(doc, "network").unwrap_or(false);
    let writable_paths = s
        .texts(doc, "writable-paths")
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .filter_map(|(i, (p, span))| match paths::workspace_relative(&p) {
            Ok(_) => Some(p),
            Err(e) => {
                doc.error(
                    "bad-path",
                    span,
                    &index("sandbox.writable-paths", i),
                    e.to_string(),
                );
                None
            }
        })
        .collect();
    Some(Sandbox {
        network,
        writable_paths,
    })
}

/// A map of environment variable names to string values.
pub fn read_env(doc: &mut Doc, node: &Node, field: &str) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let Some(m) = doc.map(node, field) else {
        return env;
    };
    for (k, v) in m.entries {
        let f = m.path(&k.name);
        if k.name.is_empty() || k.name.contains('=') || k.name.contains('\0') {
            doc.error(
                "bad-env",
                k.span,
                &f,
                format!("`{}` is not a valid environment variable name", k.name),
            );
            continue;
        }
        if let Some(s) = doc.string(v, &f) {
            env.insert(k.name.clone(), s);
        }
    }
    env
}

/// Reports a case whose `name` another case file of the same folder already uses.
pub fn claim_name(
    ctx: &LoadCtx,
    doc: &mut Doc,
    node: &Node,
    file: &Path,
    names: &mut Vec<(String, PathBuf)>,
) {
    let Some((key, value)) = node
        .as_map()
        .and_then(|m| m.iter().find(|(k, _)| k.name == "name"))
    else {
        return;
    };
    let Some(name) = value.as_str() else { return };
    if let Some((_, first)) = names.iter().find(|(n, _)| n == name) {
        doc.error(
            "duplicate-id",
            key.span,
            "name",
            format!("duplicate case name `{name}`"),
        )
        .help = Some(format!("also used in {}", ctx.shown(first).display()));
    } else {
        names.push((name.to_string(), file.to_path_buf()));
    }
}

/// The required case `name`: `[a-z0-9-]`, 1 to 64 characters.
pub fn read_name(doc: &mut Doc, m: &Map<'_>) -> Option<String> {
    let node = m.req(doc, "name")?;
    let name = doc.string(node, "name")?;
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !ok {
        doc.error(
            "bad-name",
            node.span,
            "name",
            format!("`{name}` is not a valid case name: use a-z, 0-9 and -, at most 64 characters"),
        );
        return None;
    }
    Some(name)
}

fn read_case(doc: &mut Doc, node: &Node, root: &Path, evals: &Path) -> Option<Case> {
    let m = doc.map(node, "")?;
    m.check_keys(doc, "an eval case", CASE_KEYS);
    let name = read_name(doc, &m);
    let description = m.str(doc, "description");
    let target = m.opt("target").and_then(|n| read_target(doc, n, root));

    let mut fixtures = Vec::new();
    let mut workspace_files = Vec::new();
    let prompt = m.req(doc, "input").and_then(|n| {
        let input = doc.map(n, "input")?;
        input.check_keys(doc, "input", INPUT_KEYS);
        if let Some(files) = input.strings(doc, "files") {
            for (i, (written, span)) in files.iter().enumerate() {
                match paths::resolve_inside(evals, written, "the evals/ folder", true) {
                    Ok(source) => fixtures.push(Fixture {
                        source,
                        dest: paths::normalize(Path::new(written))
                            .unwrap_or_else(|| PathBuf::from(written)),
                    }),
                    Err(e) => {
                        doc.error(
                            "bad-fixture",
                            *span,
                            &index("input.files", i),
                            e.to_string(),
                        )
                        .help =
                            Some("input.files are relative to the package's evals/ folder".into());
                    }
                }
            }
        }
        if let Some(files) = input.strings(doc, "workspace-files") {
            for (i, (written, span)) in files.iter().enumerate() {
                match paths::workspace_relative(written) {
                    Ok(p) => workspace_files.push(p),
                    Err(e) => {
                        doc.error(
                            "bad-path",
                            *span,
                            &index("input.workspace-files", i),
                            e.to_string(),
                        );
                    }
                }
            }
        }
        input.req_text(doc, "prompt")
    });

    let mut checks = Vec::new();
    if let Some(n) = m.opt("expected") {
        read_expected(doc, n, &mut checks);
    }
    let mut ids = checks.iter().map(|c| c.id.clone()).collect();
    let more = super::checks::read_extension(doc, &m, &mut ids);
    checks.extend(more);
    let criteria = m.req(doc, "judge").and_then(|n| {
        let j = doc.map(n, "judge")?;
        j.check_keys(doc, "judge", JUDGE_KEYS);
        j.req_text(doc, "criteria")
    });

    let (name, prompt, criteria) = (name?, prompt?, criteria?);
    let mut case = Case::new(name, location(doc, node.span), vec![prompt]);
    case.description = description;
    case.target = target;
    case.fixtures = fixtures;
    case.workspace_files = workspace_files;
    case.checks = checks;
    case.judge.criteria = Some(criteria);
    Some(case)
}

fn read_target(doc: &mut Doc, n: &Node, root: &Path) -> Option<Target> {
    let s = doc.string(n, "target")?;
    let target: Target = match s.parse() {
        Ok(t) => t,
        Err(why) => {
            doc.error("bad-target", n.span, "target", why);
            return None;
        }
    };
    let (kind, name) = (target.kind, target.name.as_str());
    let (folder, exists) = match kind {
        TargetKind::Skill => (
            "skills",
            root.join("skills").join(name).join("SKILL.md").is_file(),
        ),
        TargetKind::Agent => ("agents", root.join("agents").join(name).is_dir()),
        TargetKind::Hook => ("hooks", root.join("hooks").is_dir()),
    };
    if !exists {
        let known: Vec<String> = std::fs::read_dir(root.join(folder))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let help = match did_you_mean(name, known.iter().map(String::as_str)) {
            Some(k) => format!("did you mean `{k}`?"),
            None if kind == TargetKind::Hook => "the package has no hooks/ folder".into(),
            None => format!("the package's {folder}/ folder has no `{name}`"),
        };
        doc.error(
            "unknown-target",
            n.span,
            "target",
            format!("target `{s}` is not in this package"),
        )
        .help = Some(help);
        return None;
    }
    Some(target)
}

fn read_expected(doc: &mut Doc, n: &Node, checks: &mut Vec<Check>) {
    let Some(e) = doc.map(n, "expected") else {
        return;
    };
    e.check_keys(doc, "expected", EXPECTED_KEYS);
    let mut push = |doc: &mut Doc,
                    kind: &str,
                    id: String,
                    config: serde_json::Value,
                    target,
                    negate,
                    span: Span| {
        checks.push(Check {
            id,
            kind: kind.to_string(),
            config,
            negate,
            weight: 1.0,
            target,
            location: Some(location(doc, span)),
        });
    };
    for (key, kind) in [("contains", "contains"), ("not-contains", "not_contains")] {
        for (i, (needle, span)) in texts(doc, &e, key).into_iter().enumerate() {
            push(
                doc,
                kind,
                format!("{key}[{i}]"),
                json!({ "needle": needle }),
                CheckTarget::Output,
                false,
                span,
            );
        }
    }
    for (i, (written, span)) in texts(doc, &e, "files-created").into_iter().enumerate() {
        match paths::workspace_relative(&written) {
            // Created by the agent: a file that was there before the run does not pass.
            Ok(_) => push(
                doc,
                "file_created",
                format!("files-created[{i}]"),
                json!({ "path": written }),
                CheckTarget::Workspace,
                false,
                span,
            ),
            Err(err) => {
                doc.error(
                    "bad-path",
                    span,
                    &index("expected.files-created", i),
                    err.to_string(),
                );
            }
        }
    }
    if let Some(blocked) = e.bool(doc, "agent-blocked") {
        let span = e.opt("agent-blocked").map(|n| n.span).unwrap_or_default();
        // `false` is an expectation too: the agent must not have been blocked.
        push(
            doc,
            "agent_blocked",
            "agent-blocked".into(),
            json!({}),
            CheckTarget::Transcript,
            !blocked,
            span,
        );
    }
}

fn texts(doc: &mut Doc, m: &Map<'_>, key: &str) -> Vec<(String, Span)> {
    m.texts(doc, key).unwrap_or_default()
}
