//! UAAPS deterministic tests: `<artifact>/tests/test-config.json`, `fixtures/`, `cases/*.yaml`.
//!
//! The schema is the UAAPS spec's (skills: `input.command`, `input.stdin`, `input.files`;
//! hooks: `event`, `hook-index`, `input.fixture`, `input.overrides`; `expected.*`), with
//! assay's earlier keys kept as aliases; both are documented in `docs/uaaps-tests.md`. A case
//! runs a command (no agent, no LLM) and checks its exit code, output and files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::hooks::{Hook, HooksFile, payload};
use super::{claim_name, list_yaml, package_label, read_env, read_manifest, read_name};
use crate::formats::{LoadCtx, location};
use crate::suite::{
    Case, Check, CheckTarget, CommandSpec, Defaults, Fixture, Format, OutputSpec, StdinSource,
    Suite,
};
use crate::suite::{Loaded, paths};
use crate::syntax::reader::{Doc, Map, index};
use crate::{
    diag::source::Span,
    syntax::node::{Node, Value},
};

/// What a UAAPS `tests/` folder decides: its fixtures are kept in `fixtures/` beside the
/// config.
pub const POLICIES: crate::suite::Policies = crate::suite::Policies {
    fixture_dirs: &["fixtures"],
    ..crate::suite::Policies::NONE
};

/// The keys of `test-config.json`.
pub const CONFIG_KEYS: &[&str] = &["version", "command", "cwd", "timeout", "env"];
/// A skill's test case: the spec's keys, then assay's aliases.
pub const SKILL_CASE_KEYS: &[&str] = &[
    "name",
    "description",
    "input",
    "expected",
    "command",
    "args",
    "stdin",
    "stdin-file",
    "env",
    "checks",
];
/// A hook's test case: the spec's keys, then assay's aliases.
pub const HOOK_CASE_KEYS: &[&str] = &[
    "name",
    "description",
    "event",
    "hook-index",
    "input",
    "expected",
    "command",
    "args",
    "stdin",
    "stdin-file",
    "env",
    "checks",
];
/// The keys of a skill case's `input`, and of a hook case's.
pub const SKILL_INPUT_KEYS: &[&str] = &["command", "stdin", "files"];
pub const HOOK_INPUT_KEYS: &[&str] = &["fixture", "overrides"];
/// The spec's expectations, then assay's.
pub const EXPECTED_KEYS: &[&str] = &[
    "exit-code",
    "stdout-contains",
    "stderr-contains",
    "not-contains",
    "stdout-json",
    "stdout-not-contains",
    "stdout-equals",
    "stdout-matches",
    "files-created",
];
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

struct Config {
    argv: Option<Vec<String>>,
    /// `cwd` as written, from the package root; absent: the case's kind decides.
    cwd: Option<PathBuf>,
    timeout: u64,
    env: BTreeMap<String, String>,
}

/// Whose tests a folder holds: `hooks/tests` is a hook's, any other a skill's (or agent's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Skill,
    Hook,
}

/// One `tests/` folder being read.
struct Folder<'a> {
    ctx: &'a LoadCtx,
    kind: Kind,
    tests_dir: &'a Path,
    package_root: &'a Path,
    /// The artifact folder (`skills/<name>`, `hooks`) from the package root.
    artifact_rel: PathBuf,
    config: &'a Config,
    /// The artifact's `hooks.json`, for a hook's tests.
    hooks: Option<&'a HooksFile>,
}

impl Folder<'_> {
    /// The tests/ folder from the package root.
    fn tests_rel(&self) -> PathBuf {
        self.artifact_rel.join("tests")
    }
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
    let kind = if artifact.file_name().is_some_and(|n| n == "hooks") {
        Kind::Hook
    } else {
        Kind::Skill
    };
    let config_file = tests_dir.join("test-config.json");
    let config = read_config_file(ctx, &config_file, &artifact_rel, &mut out.problems);
    let mut ok = config.is_some();
    let hooks = match kind {
        Kind::Hook => HooksFile::read(ctx, &artifact.join("hooks.json")).unwrap_or_else(|mut p| {
            ok = false;
            out.problems.append(&mut p);
            None
        }),
        Kind::Skill => None,
    };
    // Cases are checked even when the config is broken, so every problem shows in one pass.
    let fallback = Config {
        argv: Some(Vec::new()),
        cwd: None,
        timeout: DEFAULT_TIMEOUT_SECS,
        env: BTreeMap::new(),
    };
    let folder = Folder {
        ctx,
        kind,
        tests_dir,
        package_root,
        artifact_rel: artifact_rel.clone(),
        config: config.as_ref().unwrap_or(&fallback),
        hooks: hooks.as_ref(),
    };
    let cases = read_cases(&folder, &mut out, &mut ok);
    if !ok {
        return out;
    }
    let config = config.expect("ok implies a config");
    out.suites.push(suite(
        ctx,
        &config,
        &config_file,
        &artifact_rel,
        package_root,
        package,
        cases,
    ));
    out
}

/// The suite of one tests/ folder, `uaaps-tests:<package>/<artifact path>`.
fn suite(
    ctx: &LoadCtx,
    config: &Config,
    config_file: &Path,
    artifact_rel: &Path,
    package_root: &Path,
    package: crate::suite::Package,
    cases: Vec<Case>,
) -> Suite {
    let label = artifact_rel.to_string_lossy().replace('\\', "/");
    Suite {
        id: format!(
            "uaaps-tests:{}/{}",
            package_label(&package),
            if label.is_empty() { "tests" } else { &label }
        ),
        format: Format::UaapsTests,
        source: ctx.shown(config_file),
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
        policies: POLICIES,
    }
}

/// `test-config.json`, or `None` (its problems reported) when it is broken.
fn read_config_file(
    ctx: &LoadCtx,
    file: &Path,
    artifact_rel: &Path,
    problems: &mut Vec<crate::diag::Problem>,
) -> Option<Config> {
    match ctx.parse(file, &ctx.shown(file)) {
        Ok((mut doc, node)) => {
            let c = read_config(&mut doc, &node, artifact_rel);
            let failed = doc.has_errors();
            problems.append(&mut doc.problems);
            if failed { None } else { c }
        }
        Err(mut p) => {
            problems.append(&mut p);
            None
        }
    }
}

/// Every `cases/*.yaml` of the folder; `ok` turns false on any error.
fn read_cases(f: &Folder<'_>, out: &mut Loaded, ok: &mut bool) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut names: Vec<(String, PathBuf)> = Vec::new();
    for file in list_yaml(&f.tests_dir.join("cases")) {
        match f.ctx.parse(&file, &f.ctx.shown(&file)) {
            Ok((mut doc, node)) => {
                claim_name(f.ctx, &mut doc, &node, &file, &mut names);
                if let Some(case) = read_case(&mut doc, &node, f) {
                    cases.push(case);
                }
                *ok &= !doc.has_errors();
                out.problems.append(&mut doc.problems);
            }
            Err(mut p) => {
                *ok = false;
                out.problems.append(&mut p);
            }
        }
    }
    cases
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
    let cwd = m
        .opt("cwd")
        .and_then(|n| doc.string(n, "cwd").map(|s| (s, n.span)))
        .and_then(|(s, span)| {
            let p = workspace_path(artifact_rel, &s);
            if p.is_none() {
                doc.error("bad-path", span, "cwd", format!("`{s}` leaves the package"));
            }
            p
        });
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

/// What a case runs, and how.
struct Run {
    argv: Vec<String>,
    stdin: Option<StdinSource>,
    cwd: PathBuf,
    timeout: u64,
    env: BTreeMap<String, String>,
    fixtures: Vec<Fixture>,
}

fn read_case(doc: &mut Doc, node: &Node, f: &Folder<'_>) -> Option<Case> {
    let m = doc.map(node, "")?;
    check_keys(
        doc,
        &m,
        f.kind,
        "a test case",
        [SKILL_CASE_KEYS, HOOK_CASE_KEYS],
    );
    let name = read_name(doc, &m);
    let description = m.str(doc, "description");
    let input = m.opt("input").and_then(|n| doc.map(n, "input"));
    if let Some(i) = &input {
        check_keys(doc, i, f.kind, "input", [SKILL_INPUT_KEYS, HOOK_INPUT_KEYS]);
    }
    let run = read_run(doc, &m, input.as_ref(), f, node.span);
    let checks = read_checks(doc, &m, &f.artifact_rel, node.span);
    let (name, run) = (name?, run?);
    let mut case = Case::new(name, location(doc, node.span), Vec::new());
    case.description = description;
    case.output = OutputSpec::Stdout;
    case.timeout_secs = Some(run.timeout);
    case.checks = checks;
    case.fixtures = run.fixtures;
    case.command = Some(CommandSpec {
        argv: run.argv,
        stdin: run.stdin,
        env: run.env,
        cwd: Some(run.cwd),
    });
    Some(case)
}

/// Reports unknown keys; a key of the other kind of test (a hook's `event` in a skill's
/// folder) says where it belongs.
fn check_keys(doc: &mut Doc, m: &Map<'_>, kind: Kind, what: &str, keys: [&[&str]; 2]) {
    let (known, other) = match kind {
        Kind::Skill => (keys[0], keys[1]),
        Kind::Hook => (keys[1], keys[0]),
    };
    let field = m.field.clone();
    let hint = |key: &str| {
        let shown = crate::syntax::reader::join(&field, key);
        other.contains(&key).then(|| match kind {
            Kind::Skill => format!(
                "`{shown}` belongs to a hook's test case (in hooks/tests/); a skill's case runs `input.command`"
            ),
            Kind::Hook => format!(
                "`{shown}` belongs to a skill's test case; a hook's case runs the hook of `event`, fed `input.fixture`"
            ),
        })
    };
    m.check_keys_with(doc, what, known, |_| false, hint);
}

fn read_run(
    doc: &mut Doc,
    m: &Map<'_>,
    input: Option<&Map<'_>>,
    f: &Folder<'_>,
    span: Span,
) -> Option<Run> {
    let hook = read_event(doc, m, f);
    let event = hook.is_some();
    let argv = match &hook {
        Some(h) => {
            refuse_with_event(doc, m);
            h.as_ref().map(|h| h.argv.clone())
        }
        None => read_argv(doc, m, input, f, span),
    };
    let (stdin, mut fixtures) = read_stdin(doc, m, input, f, event);
    if let (Kind::Skill, Some(i)) = (f.kind, input) {
        fixtures.extend(read_files(doc, i, f));
    }
    // A hook runs where an agent runs it, in the project (the package root); a skill's
    // script in the skill's folder, as the spec's "relative to skill root" says.
    let cwd = f.config.cwd.clone().unwrap_or_else(|| match event {
        true => PathBuf::new(),
        false => f.artifact_rel.clone(),
    });
    let mut env = f.config.env.clone();
    if let Some(n) = m.opt("env") {
        env.extend(read_env(doc, n, "env"));
    }
    env.entry("PACKAGE_ROOT".into())
        .or_insert_with(|| up_to_root(&cwd));
    let hook_timeout = hook.flatten().and_then(|h| h.timeout);
    Some(Run {
        argv: argv?,
        stdin,
        timeout: hook_timeout.map_or(f.config.timeout, |t| t.min(f.config.timeout)),
        cwd,
        env,
        fixtures,
    })
}

/// The package root seen from `cwd` (a path from the root): `.`, `..`, `../..`.
fn up_to_root(cwd: &Path) -> String {
    match cwd.components().count() {
        0 => ".".into(),
        n => vec![".."; n].join("/"),
    }
}

/// `Some` when the case names an `event` (a hook's case): its hook, or `None` after an error.
fn read_event(doc: &mut Doc, m: &Map<'_>, f: &Folder<'_>) -> Option<Option<Hook>> {
    if f.kind != Kind::Hook {
        return None;
    }
    let Some(n) = m.opt("event") else {
        if let Some(i) = m.opt("hook-index") {
            doc.error(
                "missing-field",
                i.span,
                "hook-index",
                "`hook-index` picks a hook group of `event`, and there is no `event`",
            );
        }
        return None;
    };
    let event = doc.text(n, "event");
    let index = match m.opt("hook-index") {
        Some(i) => doc
            .non_negative_int(i, "hook-index")
            .map(|v| (usize::try_from(v).unwrap_or(usize::MAX), i.span)),
        None => Some((0, n.span)),
    };
    let (Some(event), Some(index)) = (event, index) else {
        return Some(None);
    };
    let Some(hooks) = f.hooks else {
        let file = f.artifact_rel.join("hooks.json");
        doc.error(
            "missing-file",
            n.span,
            "event",
            format!(
                "{} is missing: a hook's test case runs a hook defined there",
                file.display()
            ),
        );
        return Some(None);
    };
    Some(hooks.hook(doc, (&event, n.span), index))
}

/// A case that runs the hook of its `event` takes no command of its own.
fn refuse_with_event(doc: &mut Doc, m: &Map<'_>) {
    for key in ["command", "args"] {
        if let Some(span) = m.opt(key).and(m.key_span(key)) {
            doc.error(
                "conflict",
                span,
                key,
                format!("a case with `event` runs that hook; give `event` or `{key}`, not both"),
            );
        }
    }
}

/// The command of a case without `event`: `input.command` (a skill's), the case's `command`,
/// or test-config.json's; then the case's `args`.
fn read_argv(
    doc: &mut Doc,
    m: &Map<'_>,
    input: Option<&Map<'_>>,
    f: &Folder<'_>,
    span: Span,
) -> Option<Vec<String>> {
    let spec = input
        .filter(|_| f.kind == Kind::Skill)
        .and_then(|i| i.opt("command"));
    let alias = m.opt("command");
    if let (Some(_), Some(_), Some(at)) = (spec, alias, m.key_span("command")) {
        let msg = "give `input.command` or `command`, not both";
        doc.error("conflict", at, "command", msg);
    }
    let mut argv = match (spec, alias) {
        (Some(n), _) => read_command(doc, n, "input.command"),
        (None, Some(n)) => read_command(doc, n, "command"),
        (None, None) => f.config.argv.clone(),
    };
    if argv.is_none() && spec.is_none() && alias.is_none() {
        let (field, msg) = match f.kind {
            Kind::Skill => (
                "input.command",
                "no command: set `input.command` (or `command` here or in test-config.json)",
            ),
            Kind::Hook => (
                "event",
                "no hook to run: set `event` (and `hook-index`) to run a hook of hooks.json, or a `command`",
            ),
        };
        doc.error(
            "missing-field",
            Span::new(span.start, span.start + 1),
            field,
            msg,
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
    argv
}

/// Standard input: the spec's `input.stdin` (a skill's) or event payload (a hook's
/// `input.fixture` and `input.overrides`), or the aliases `stdin` and `stdin-file`; at most
/// one. A hook's case with none gets `{}`. Also the fixture to stage.
fn read_stdin(
    doc: &mut Doc,
    m: &Map<'_>,
    input: Option<&Map<'_>>,
    f: &Folder<'_>,
    event: bool,
) -> (Option<StdinSource>, Vec<Fixture>) {
    let mut given: Vec<(&str, Span)> = Vec::new();
    let (mut stdin, mut fixtures) = (None, Vec::new());
    match (f.kind, input) {
        (Kind::Skill, Some(i)) => {
            if let (Some(n), Some(at)) = (i.opt("stdin"), i.key_span("stdin")) {
                given.push(("input.stdin", at));
                stdin = doc.string(n, "input.stdin").map(StdinSource::Text);
            }
        }
        (Kind::Hook, Some(i)) if i.opt("fixture").is_some() || i.opt("overrides").is_some() => {
            let at = i.key_span("fixture").or(i.key_span("overrides"));
            given.push(("input.fixture", at.unwrap_or(i.span)));
            if let Some((text, fixture)) = payload(f.ctx, doc, i, f.tests_dir, &f.tests_rel()) {
                stdin = Some(StdinSource::Text(text));
                fixtures.extend(fixture);
            }
        }
        _ => {}
    }
    if let (Some(n), Some(at)) = (m.opt("stdin"), m.key_span("stdin")) {
        given.push(("stdin", at));
        stdin = stdin.or(doc.string(n, "stdin").map(StdinSource::Text));
    }
    if let (Some(n), Some(at)) = (m.opt("stdin-file"), m.key_span("stdin-file")) {
        given.push(("stdin-file", at));
        stdin = stdin.or(read_stdin_file(doc, n, f.tests_dir).map(StdinSource::File));
    }
    if let [(a, _), (b, at), ..] = given.as_slice() {
        doc.error("conflict", *at, b, format!("give `{a}` or `{b}`, not both"));
    }
    if given.is_empty() && event {
        stdin = Some(StdinSource::Text("{}\n".into()));
    }
    (stdin, fixtures)
}

fn read_stdin_file(doc: &mut Doc, n: &Node, tests_dir: &Path) -> Option<PathBuf> {
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
}

/// A skill's `input.files`: relative to the skill's folder, inside the package; each is
/// staged where it is. One that is not there is a warning: the case runs without it.
fn read_files(doc: &mut Doc, input: &Map<'_>, f: &Folder<'_>) -> Vec<Fixture> {
    let mut out = Vec::new();
    let files = input.texts(doc, "files").unwrap_or_default();
    for (i, (written, span)) in files.into_iter().enumerate() {
        let field = index("input.files", i);
        let Some(rel) = workspace_path(&f.artifact_rel, &written) else {
            doc.error(
                "bad-path",
                span,
                &field,
                format!("`{written}` leaves the package"),
            );
            continue;
        };
        let shown = rel.to_string_lossy().replace('\\', "/");
        match paths::resolve_inside(f.package_root, &shown, "the package", true) {
            Ok(source) => out.push(Fixture { source, dest: rel }),
            Err(paths::PathError::Missing { .. }) => {
                doc.warning(
                    "missing-fixture",
                    span,
                    &field,
                    format!("`{written}` is not in the package (no {shown})"),
                )
                .help = Some(
                    "input.files are relative to the skill's folder; the case runs without it"
                        .into(),
                );
            }
            Err(e) => {
                doc.error("bad-fixture", span, &field, e.to_string());
            }
        }
    }
    out
}

/// The case's checks: `expected` (the exit code first, `0` unless it says otherwise or
/// `null`), then `checks`.
fn read_checks(doc: &mut Doc, m: &Map<'_>, artifact_rel: &Path, span: Span) -> Vec<Check> {
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
        let more = crate::formats::checks::read_check_list(doc, n, "checks", &mut ids);
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
                location: Some(location(doc, span)),
            },
        );
    }
    checks
}

/// How an `expected` key is written, and so how it is read into the configs of its checks.
enum Written {
    /// A list of strings, a check `<key>[i]` per item: `{needle}`.
    Needles,
    /// A JSON object that stdout must hold: `{json}`.
    Object,
    /// A string: `{text}`.
    Text,
    /// A regular expression: `{pattern}`.
    Regex,
    /// A list of paths from the artifact folder, a check `<key>[i]` per item: `{path}`.
    Paths,
}

/// An `expected` key and the check it becomes.
struct Expectation {
    key: &'static str,
    written: Written,
    /// The check type.
    kind: &'static str,
    target: CheckTarget,
}

/// Every `expected` key but `exit-code`, in the order their checks are made.
const EXPECTATIONS: &[Expectation] = {
    use CheckTarget::{Output, Process, Workspace};
    use Written::{Needles, Object, Paths, Regex, Text};
    const fn x(
        key: &'static str,
        written: Written,
        kind: &'static str,
        target: CheckTarget,
    ) -> Expectation {
        Expectation {
            key,
            written,
            kind,
            target,
        }
    }
    &[
        x("stdout-contains", Needles, "contains", Output),
        x("stdout-not-contains", Needles, "not_contains", Output),
        x("stderr-contains", Needles, "stderr_contains", Process),
        // The spec's: neither stdout nor stderr ("combined output").
        x("not-contains", Needles, "stdio_not_contains", Process),
        x("stdout-json", Object, "stdout_json", Process),
        x("stdout-equals", Text, "stdout_equals", Process),
        x("stdout-matches", Regex, "regex", Output),
        x("files-created", Paths, "file_exists", Workspace),
    ]
};

/// The checks of `expected`'s keys (but `exit-code`), as [`EXPECTATIONS`] says.
fn read_expected(doc: &mut Doc, e: &Map<'_>, artifact_rel: &Path, checks: &mut Vec<Check>) {
    for x in EXPECTATIONS {
        for (id, config, span) in read_expectation(doc, e, x, artifact_rel) {
            checks.push(check(doc, id, x.kind, config, x.target.clone(), span));
        }
    }
}

/// The id, config and place of each check one `expected` key makes.
fn read_expectation(
    doc: &mut Doc,
    e: &Map<'_>,
    x: &Expectation,
    artifact_rel: &Path,
) -> Vec<(String, serde_json::Value, Span)> {
    match x.written {
        Written::Needles => e
            .texts(doc, x.key)
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, (needle, span))| (index(x.key, i), json!({ "needle": needle }), span))
            .collect(),
        Written::Object => read_once(doc, e, x.key, |doc, n, field| {
            doc.map(n, field).map(|_| json!({ "json": n.to_json() }))
        }),
        Written::Text => read_once(doc, e, x.key, |doc, n, field| {
            doc.string(n, field).map(|text| json!({ "text": text }))
        }),
        Written::Regex => read_once(doc, e, x.key, |doc, n, field| {
            doc.regex(n, field)
                .map(|pattern| json!({ "pattern": pattern }))
        }),
        Written::Paths => read_files_created(doc, e, artifact_rel),
    }
}

/// The one check of a key written once, its config read by `read` (`None`: none, the key
/// left out or wrong).
fn read_once(
    doc: &mut Doc,
    e: &Map<'_>,
    key: &str,
    read: impl FnOnce(&mut Doc, &Node, &str) -> Option<serde_json::Value>,
) -> Vec<(String, serde_json::Value, Span)> {
    let Some(n) = e.opt(key) else {
        return Vec::new();
    };
    read(doc, n, &e.path(key))
        .map(|config| vec![(key.to_string(), config, n.span)])
        .unwrap_or_default()
}

/// `files-created`: paths from the artifact folder that must exist after the run.
fn read_files_created(
    doc: &mut Doc,
    e: &Map<'_>,
    artifact_rel: &Path,
) -> Vec<(String, serde_json::Value, Span)> {
    let mut out = Vec::new();
    for (i, (written, span)) in e
        .texts(doc, "files-created")
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let Some(p) = workspace_path(artifact_rel, &written) else {
            let field = index("expected.files-created", i);
            doc.error(
                "bad-path",
                span,
                &field,
                format!("`{written}` leaves the package"),
            );
            continue;
        };
        let config = json!({ "path": p.to_string_lossy() });
        out.push((index("files-created", i), config, span));
    }
    out
}

/// One check of an expectation, located where it is written.
fn check(
    doc: &Doc,
    id: String,
    kind: &str,
    config: serde_json::Value,
    target: CheckTarget,
    span: Span,
) -> Check {
    Check {
        id,
        kind: kind.into(),
        config,
        negate: false,
        weight: 1.0,
        target,
        location: Some(location(doc, span)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Loads `tests` of a package written from `files`.
    fn load_tests(files: &[(&str, &str)], tests: &str) -> (Loaded, tempfile::TempDir) {
        let d = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let path = d.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let ctx = LoadCtx::new(d.path());
        (load(&ctx, &d.path().join(tests), d.path()), d)
    }

    fn problems(l: &Loaded) -> Vec<String> {
        l.problems
            .iter()
            .map(|p| {
                let help = p.help.clone().unwrap_or_default();
                format!("{} {}: {} {help}", p.file.display(), p.code, p.message)
            })
            .collect()
    }

    const MANIFEST: (&str, &str) = ("package.agent.json", r#"{"name": "pkg"}"#);
    const SKILL_CONFIG: (&str, &str) = (
        "skills/s/tests/test-config.json",
        r#"{"version": 1, "env": {"A": "1"}}"#,
    );
    const HOOK_CONFIG: (&str, &str) = (
        "hooks/tests/test-config.json",
        r#"{"version": 1, "timeout": 20}"#,
    );
    const HOOKS: (&str, &str) = (
        "hooks/hooks.json",
        r#"{"version": 1, "hooks": {"pre-tool-use": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "sh hooks/other.sh"}]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": "sh ${PACKAGE_ROOT}/hooks/guard.sh", "timeout": 5}]}]}}"#,
    );
    const FIXTURE: (&str, &str) = (
        "hooks/tests/fixtures/write.json",
        r#"{"hookEventName": "pre-tool-use", "toolName": "Write", "toolInput": {"file_path": "/src/a.ts", "content": "x"}}"#,
    );

    #[test]
    fn a_skill_case_of_the_spec_runs_its_command_with_stdin_and_files() {
        let case = "name: basic\ninput:\n  command: \"python3 scripts/x.py data/in.txt\"\n  stdin: hello\n  files:\n    - data/in.txt\n    - data/gone.txt\nexpected:\n  exit-code: 3\n  stdout-contains: [Hello]\n  stderr-contains: [warn]\n  not-contains: [ERROR]\n  stdout-json:\n    ok: true\n";
        let (l, _d) = load_tests(
            &[
                MANIFEST,
                SKILL_CONFIG,
                ("skills/s/data/in.txt", "x"),
                ("skills/s/tests/cases/a.yaml", case),
            ],
            "skills/s/tests",
        );
        let p = problems(&l);
        assert_eq!(p.len(), 1, "{p:#?}");
        assert!(
            p[0].contains("missing-fixture") && p[0].contains("data/gone.txt"),
            "{p:?}"
        );
        let c = &l.suites[0].cases[0];
        let cmd = c.command.as_ref().unwrap();
        assert_eq!(cmd.argv, ["sh", "-c", "python3 scripts/x.py data/in.txt"]);
        assert_eq!(cmd.cwd.as_deref(), Some(Path::new("skills/s")));
        assert_eq!(cmd.stdin, Some(StdinSource::Text("hello".into())));
        assert_eq!(cmd.env["A"], "1");
        assert_eq!(cmd.env["PACKAGE_ROOT"], "../..");
        assert_eq!(c.fixtures.len(), 1);
        assert_eq!(c.fixtures[0].dest, Path::new("skills/s/data/in.txt"));
        let kinds: Vec<(&str, &str)> = c
            .checks
            .iter()
            .map(|k| (k.id.as_str(), k.kind.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("exit-code", "exit_code"),
                ("stdout-contains[0]", "contains"),
                ("stderr-contains[0]", "stderr_contains"),
                ("not-contains[0]", "stdio_not_contains"),
                ("stdout-json", "stdout_json"),
            ]
        );
        assert_eq!(c.checks[0].config, json!({"code": 3}));
        assert_eq!(c.checks[4].config, json!({"json": {"ok": true}}));
    }

    #[test]
    fn a_hook_case_of_the_spec_runs_the_hook_with_the_fixture_overridden() {
        let case = "name: blocks\nevent: pre-tool-use\nhook-index: 1\ninput:\n  fixture: fixtures/write.json\n  overrides:\n    toolInput.file_path: /etc/passwd\n    extra.n: 2\nexpected:\n  exit-code: 2\n";
        let bare = "name: bare\nevent: pre-tool-use\n";
        let (l, _d) = load_tests(
            &[
                MANIFEST,
                HOOK_CONFIG,
                HOOKS,
                FIXTURE,
                ("hooks/tests/cases/a.yaml", case),
                ("hooks/tests/cases/b.yaml", bare),
            ],
            "hooks/tests",
        );
        assert!(l.problems.is_empty(), "{:#?}", problems(&l));
        let c = &l.suites[0].cases[0];
        let cmd = c.command.as_ref().unwrap();
        assert_eq!(cmd.argv, ["sh", "-c", "sh ${PACKAGE_ROOT}/hooks/guard.sh"]);
        assert_eq!(cmd.cwd.as_deref(), Some(Path::new("")));
        assert_eq!(cmd.env["PACKAGE_ROOT"], ".");
        assert_eq!(c.timeout_secs, Some(5), "the hook's own timeout is shorter");
        let Some(StdinSource::Text(stdin)) = &cmd.stdin else {
            panic!("{:?}", cmd.stdin)
        };
        let sent: serde_json::Value = serde_json::from_str(stdin).unwrap();
        assert_eq!(sent["toolInput"]["file_path"], "/etc/passwd");
        assert_eq!(sent["toolInput"]["content"], "x");
        assert_eq!(sent["extra"]["n"], 2);
        assert_eq!(
            c.fixtures[0].dest,
            Path::new("hooks/tests/fixtures/write.json")
        );
        let b = &l.suites[0].cases[1];
        let cmd = b.command.as_ref().unwrap();
        assert_eq!(cmd.argv, ["sh", "-c", "sh hooks/other.sh"]);
        assert_eq!(cmd.stdin, Some(StdinSource::Text("{}\n".into())));
        assert_eq!(b.timeout_secs, Some(20));
    }

    #[test]
    fn the_earlier_keys_still_work_as_aliases() {
        let case = "name: old\ncommand: [python3, x.py]\nargs: [a]\nstdin-file: fixtures/in.txt\nenv: {B: \"2\"}\nexpected:\n  stdout-equals: ok\n  stdout-matches: \"^o\"\n  stdout-not-contains: [bad]\n  files-created: [out.txt]\n";
        let (l, _d) = load_tests(
            &[
                MANIFEST,
                SKILL_CONFIG,
                ("skills/s/tests/fixtures/in.txt", "x"),
                ("skills/s/tests/cases/a.yaml", case),
            ],
            "skills/s/tests",
        );
        assert!(l.problems.is_empty(), "{:#?}", problems(&l));
        let cmd = l.suites[0].cases[0].command.clone().unwrap();
        assert_eq!(cmd.argv, ["python3", "x.py", "a"]);
        assert!(matches!(cmd.stdin, Some(StdinSource::File(_))));
        assert_eq!(cmd.env["B"], "2");
        assert_eq!(l.suites[0].cases[0].checks.len(), 5);
    }

    #[test]
    fn conflicts_and_keys_of_the_other_kind_are_errors() {
        let skill = "name: a\nevent: stop\ncommand: x\ninput:\n  command: y\n  stdin: s\n  fixture: f.json\nstdin: t\n";
        let (l, _d) = load_tests(
            &[
                MANIFEST,
                SKILL_CONFIG,
                ("skills/s/tests/cases/a.yaml", skill),
            ],
            "skills/s/tests",
        );
        let p = problems(&l).join("\n");
        assert!(l.suites.is_empty());
        assert!(
            p.contains("unknown key `event`") && p.contains("belongs to a hook's test case"),
            "{p}"
        );
        assert!(
            p.contains("give `input.command` or `command`, not both"),
            "{p}"
        );
        assert!(p.contains("give `input.stdin` or `stdin`, not both"), "{p}");
        assert!(
            p.contains("`input.fixture` belongs to a hook's test case"),
            "{p}"
        );

        let hook = "name: a\nevent: pre-tool-use\ncommand: x\ninput:\n  fixture: fixtures/write.json\n  command: y\n  overides: {}\nstdin-file: fixtures/write.json\n";
        let (l, _d) = load_tests(
            &[
                MANIFEST,
                HOOK_CONFIG,
                HOOKS,
                FIXTURE,
                ("hooks/tests/cases/a.yaml", hook),
            ],
            "hooks/tests",
        );
        let p = problems(&l).join("\n");
        assert!(p.contains("give `event` or `command`, not both"), "{p}");
        assert!(
            p.contains("give `input.fixture` or `stdin-file`, not both"),
            "{p}"
        );
        assert!(
            p.contains("`input.command` belongs to a skill's test case"),
            "{p}"
        );
        assert!(p.contains("did you mean `overrides`?"), "{p}");
    }

    #[test]
    fn hook_cases_that_point_nowhere_are_errors() {
        let cases = [
            (
                "a",
                "name: a\nevent: pre-tool-used\n",
                "did you mean `pre-tool-use`?",
            ),
            (
                "b",
                "name: b\nevent: pre-tool-use\nhook-index: 2\n",
                "has 2 hook groups",
            ),
            (
                "c",
                "name: c\nhook-index: 0\nexpected: {}\n",
                "there is no `event`",
            ),
            (
                "d",
                "name: d\nexpected: {}\n",
                "no hook to run: set `event`",
            ),
            (
                "e",
                "name: e\nevent: pre-tool-use\ninput:\n  fixture: fixtures/write.json\n  overrides:\n    toolName.x: 1\n",
                "`toolName` is a string in the fixture",
            ),
            (
                "f",
                "name: f\nevent: pre-tool-use\ninput:\n  fixture: fixtures/nope.json\n",
                "does not exist",
            ),
        ];
        for (name, text, wanted) in cases {
            let file = format!("hooks/tests/cases/{name}.yaml");
            let (l, _d) = load_tests(
                &[MANIFEST, HOOK_CONFIG, HOOKS, FIXTURE, (&file, text)],
                "hooks/tests",
            );
            let p = problems(&l).join("\n");
            assert!(l.suites.is_empty() && p.contains(wanted), "{name}: {p}");
        }
        let (l, _d) = load_tests(
            &[
                MANIFEST,
                HOOK_CONFIG,
                ("hooks/tests/cases/a.yaml", "name: a\nevent: stop\n"),
            ],
            "hooks/tests",
        );
        let p = problems(&l).join("\n");
        assert!(p.contains("hooks/hooks.json is missing"), "{p}");
        let (l, _d) = load_tests(
            &[
                MANIFEST,
                HOOK_CONFIG,
                ("hooks/hooks.json", "{\"hooks\": "),
                ("hooks/tests/cases/a.yaml", "name: a\nevent: stop\n"),
            ],
            "hooks/tests",
        );
        assert!(l.suites.is_empty());
        assert!(
            problems(&l).join("\n").contains("hooks/hooks.json"),
            "{:?}",
            problems(&l)
        );
    }
}
