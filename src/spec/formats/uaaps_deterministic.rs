//! UAAPS deterministic tests: `<artifact>/tests/test-config.json`, `fixtures/`, `cases/*.yaml`.
//!
//! The UAAPS reference names these folders but not their schema; assay's schema is documented
//! in `docs/formats/uaaps-tests.md`. A case runs a command (no agent, no LLM) and checks its
//! exit code, output and files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::uaaps::{claim_name, list_yaml, package_label, read_env, read_manifest, read_name};
use super::{LoadCtx, location};
use crate::spec::model::{
    Case, Check, CheckTarget, CommandSpec, Defaults, Format, OutputSpec, StdinSource, Suite,
};
use crate::spec::node::{Node, Span, Value};
use crate::spec::reader::{Doc, Map, index};
use crate::spec::{Loaded, paths};

const CONFIG_KEYS: &[&str] = &["version", "command", "cwd", "timeout", "env"];
const CASE_KEYS: &[&str] = &[
    "name",
    "description",
    "command",
    "args",
    "stdin",
    "stdin-file",
    "env",
    "expected",
    "checks",
];
const EXPECTED_KEYS: &[&str] = &[
    "exit-code",
    "stdout-contains",
    "stdout-not-contains",
    "stdout-equals",
    "stdout-matches",
    "stderr-contains",
    "files-created",
];
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

struct Config {
    argv: Option<Vec<String>>,
    cwd: PathBuf,
    timeout: u64,
    env: BTreeMap<String, String>,
}

/// Loads one `tests/` folder of a package artifact (`skills/<name>/tests`, `hooks/tests`).
pub fn load(ctx: &LoadCtx, tests_dir: &Path, package_root: &Path) -> Loaded {
    let mut out = Loaded::default();
    let package = read_manifest(ctx, package_root, &mut out.problems);
    let artifact = tests_dir.parent().unwrap_or(package_root);
    let artifact_rel = artifact
        .strip_prefix(package_root)
        .unwrap_or(Path::new(""))
        .to_path_buf();
    let config_file = tests_dir.join("test-config.json");
    let config = match ctx.parse(&config_file, &ctx.shown(&config_file)) {
        Ok((mut doc, node)) => {
            let c = read_config(&mut doc, &node, &artifact_rel);
            let failed = doc.has_errors();
            out.problems.append(&mut doc.problems);
            if failed { None } else { c }
        }
        Err(mut p) => {
            out.problems.append(&mut p);
            None
        }
    };
    let mut cases = Vec::new();
    let mut ok = config.is_some();
    // Cases are checked even when the config is broken, so every problem shows in one pass.
    let fallback = Config {
        argv: Some(Vec::new()),
        cwd: artifact_rel.clone(),
        timeout: DEFAULT_TIMEOUT_SECS,
        env: BTreeMap::new(),
    };
    let mut names: Vec<(String, PathBuf)> = Vec::new();
    for file in list_yaml(&tests_dir.join("cases")) {
        match ctx.parse(&file, &ctx.shown(&file)) {
            Ok((mut doc, node)) => {
                let config = config.as_ref().unwrap_or(&fallback);
                claim_name(ctx, &mut doc, &node, &file, &mut names);
                if let Some(case) = read_case(&mut doc, &node, config, tests_dir, &artifact_rel) {
                    cases.push(case);
                }
                ok &= !doc.has_errors();
                out.problems.append(&mut doc.problems);
            }
            Err(mut p) => {
                ok = false;
                out.problems.append(&mut p);
            }
        }
    }
    if !ok {
        return out;
    }
    let config = config.expect("ok implies a config");
    let label = artifact_rel.to_string_lossy().replace('\\', "/");
    out.suites.push(Suite {
        id: format!(
            "uaaps-tests:{}/{}",
            package_label(&package),
            if label.is_empty() { "tests" } else { &label }
        ),
        format: Format::UaapsTests,
        source: ctx.shown(&config_file),
        project_root: package_root.to_path_buf(),
        skill: None,
        description: None,
        notes: None,
        defaults: Defaults {
            harness: Some("command".into()),
            timeout_secs: Some(config.timeout),
            env: config.env.clone(),
            ..Defaults::default()
        },
        base_overlay: None,
        package: Some(package),
        cases,
        triggers: Vec::new(),
    });
    out
}

/// A command: a string (run with `sh -c`) or a list of program and arguments.
fn read_command(doc: &mut Doc, node: &Node, field: &str) -> Option<Vec<String>> {
    match &node.value {
        Value::Str(_) => doc
            .text(node, field)
            .map(|s| vec!["sh".into(), "-c".into(), s]),
        Value::Seq(_) => {
            let argv: Vec<String> = doc
                .strings(node, field)?
                .into_iter()
                .map(|(s, _)| s)
                .collect();
            if argv.first().is_none_or(|p| p.trim().is_empty()) {
                doc.error("empty", node.span, field, "the command needs a program");
                return None;
            }
            Some(argv)
        }
        _ => {
            doc.error(
                "wrong-type",
                node.span,
                field,
                format!(
                    "expected a string or a list, found {}",
                    node.value.kind_name()
                ),
            );
            None
        }
    }
}

fn read_config(doc: &mut Doc, node: &Node, artifact_rel: &Path) -> Option<Config> {
    let m = doc.map(node, "")?;
    m.check_keys(doc, "test-config.json", CONFIG_KEYS);
    if let Some(n) = m.req(doc, "version")
        && let Some(v) = doc.int(n, "version")
        && v != 1
    {
        doc.error(
            "unsupported-version",
            n.span,
            "version",
            format!("test config version {v} is not supported; this assay reads version 1"),
        );
    }
    let argv = m
        .opt("command")
        .and_then(|n| read_command(doc, n, "command"));
    let cwd = match m
        .opt("cwd")
        .and_then(|n| doc.string(n, "cwd").map(|s| (s, n.span)))
    {
        Some((s, span)) => match workspace_path(artifact_rel, &s) {
            Some(p) => p,
            None => {
                doc.error("bad-path", span, "cwd", format!("`{s}` leaves the package"));
                artifact_rel.to_path_buf()
            }
        },
        None => artifact_rel.to_path_buf(),
    };
    let timeout = m
        .positive_int(doc, "timeout")
        .unwrap_or(DEFAULT_TIMEOUT_SECS);
    let env = m
        .opt("env")
        .map(|n| read_env(doc, n, "env"))
        .unwrap_or_default();
    Some(Config {
        argv,
        cwd,
        timeout,
        env,
    })
}

/// A path written relative to the artifact folder, as a path from the package root.
fn workspace_path(artifact_rel: &Path, written: &str) -> Option<PathBuf> {
    if paths::is_absolute(written) {
        return None;
    }
    paths::normalize(&artifact_rel.join(written))
}

fn read_case(
    doc: &mut Doc,
    node: &Node,
    config: &Config,
    tests_dir: &Path,
    artifact_rel: &Path,
) -> Option<Case> {
    let m = doc.map(node, "")?;
    m.check_keys(doc, "a test case", CASE_KEYS);
    let name = read_name(doc, &m);
    let description = m.str(doc, "description");
    let mut argv = match m.opt("command") {
        Some(n) => read_command(doc, n, "command"),
        None => config.argv.clone(),
    };
    if argv.is_none() && !m.has("command") {
        doc.error(
            "missing-field",
            Span::new(node.span.start, node.span.start + 1),
            "command",
            "no command: set `command` here or in test-config.json",
        );
    }
    if let Some(args) = m.strings(doc, "args")
        && let Some(argv) = argv.as_mut()
    {
        if argv.len() == 3 && argv[0] == "sh" && argv[1] == "-c" {
            // A shell command string: pass arguments as positional parameters.
            argv[2].push_str(" \"$@\"");
            argv.push("sh".into());
        }
        argv.extend(args.into_iter().map(|(a, _)| a));
    }
    let stdin_text = m.str(doc, "stdin");
    let stdin_file = m.opt("stdin-file").and_then(|n| {
        let s = doc.string(n, "stdin-file")?;
        match paths::resolve_inside(tests_dir, &s, "the tests/ folder", true) {
            Ok(p) => Some(p),
            Err(e) => {
                doc.error("bad-fixture", n.span, "stdin-file", e.to_string())
                    .help = Some(
                    "stdin-file is relative to the tests/ folder, e.g. fixtures/event.json".into(),
                );
                None
            }
        }
    });
    if stdin_text.is_some() && m.has("stdin-file") {
        let span = m.key_span("stdin-file").unwrap_or(node.span);
        doc.error(
            "conflict",
            span,
            "stdin-file",
            "give `stdin` or `stdin-file`, not both",
        );
    }
    let mut env = config.env.clone();
    if let Some(n) = m.opt("env") {
        env.extend(read_env(doc, n, "env"));
    }
    let mut checks = Vec::new();
    let mut exit_code = Some(0);
    if let Some(n) = m.opt("expected")
        && let Some(e) = doc.map(n, "expected")
    {
        e.check_keys(doc, "expected", EXPECTED_KEYS);
        if e.has("exit-code") {
            exit_code = e.opt("exit-code").and_then(|n| {
                doc.non_negative_int(n, "expected.exit-code")
                    .map(|c| c as i64)
            });
        }
        read_expected(doc, &e, artifact_rel, &mut checks);
    }
    if let Some(n) = m.opt("checks") {
        let mut ids: std::collections::HashSet<String> =
            checks.iter().map(|c| c.id.clone()).collect();
        ids.insert("exit-code".to_string());
        let more = super::checks::read_check_list(doc, n, "checks", &mut ids);
        checks.extend(more);
    }
    if let Some(code) = exit_code {
        checks.insert(
            0,
            Check {
                id: "exit-code".into(),
                kind: "exit_code".into(),
                config: json!({ "code": code }),
                negate: false,
                weight: 1.0,
                target: CheckTarget::Process,
                location: Some(location(doc, node.span)),
            },
        );
    }
    let (name, argv) = (name?, argv?);
    let mut case = Case::new(name, location(doc, node.span), Vec::new());
    case.description = description;
    case.output = OutputSpec::Stdout;
    case.timeout_secs = Some(config.timeout);
    case.checks = checks;
    case.command = Some(CommandSpec {
        argv,
        stdin: stdin_file
            .map(StdinSource::File)
            .or(stdin_text.map(StdinSource::Text)),
        env,
        cwd: Some(config.cwd.clone()),
    });
    Some(case)
}

fn read_expected(doc: &mut Doc, e: &Map<'_>, artifact_rel: &Path, checks: &mut Vec<Check>) {
    let mut push = |doc: &mut Doc, id: String, kind: &str, config, target, negate, span: Span| {
        checks.push(Check {
            id,
            kind: kind.into(),
            config,
            negate,
            weight: 1.0,
            target,
            location: Some(location(doc, span)),
        })
    };
    for (key, kind, negate) in [
        ("stdout-contains", "contains", false),
        ("stdout-not-contains", "not_contains", false),
        ("stderr-contains", "stderr_contains", false),
    ] {
        for (i, (needle, span)) in e
            .texts(doc, key)
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            let target = if kind == "stderr_contains" {
                CheckTarget::Process
            } else {
                CheckTarget::Output
            };
            push(
                doc,
                index(key, i),
                kind,
                json!({ "needle": needle }),
                target,
                negate,
                span,
            );
        }
    }
    if let Some(n) = e.opt("stdout-equals")
        && let Some(text) = doc.string(n, "expected.stdout-equals")
    {
        push(
            doc,
            "stdout-equals".into(),
            "stdout_equals",
            json!({ "text": text }),
            CheckTarget::Process,
            false,
            n.span,
        );
    }
    if let Some(n) = e.opt("stdout-matches")
        && let Some(pattern) = doc.regex(n, "expected.stdout-matches")
    {
        push(
            doc,
            "stdout-matches".into(),
            "regex",
            json!({ "pattern": pattern }),
            CheckTarget::Output,
            false,
            n.span,
        );
    }
    for (i, (written, span)) in e
        .texts(doc, "files-created")
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        match workspace_path(artifact_rel, &written) {
            Some(p) => push(
                doc,
                index("files-created", i),
                "file_exists",
                json!({ "path": p.to_string_lossy() }),
                CheckTarget::Workspace,
                false,
                span,
            ),
            None => {
                doc.error(
                    "bad-path",
                    span,
                    &index("expected.files-created", i),
                    format!("`{written}` leaves the package"),
                );
            }
        }
    }
}
