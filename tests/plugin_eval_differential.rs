//! The differential test against Claude Code itself: the same plugin-eval suites through
//! `claude plugin eval --json` (Claude Code 2.1.332, pinned in `tests/reference`) and through `assay run --reporter claude-plugin-eval`, both
//! driving the same Claude Code against the same scripted model: the same cases, grader
//! verdicts and explanations, run and case scores, Δ and exit codes; and the same load-time
//! refusals.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::model_server::{ModelServer, text, tool};
use support::*;

/// Claude Code 2.1.332, the version whose `claude plugin eval` is the reference.
fn reference_cli() -> PathBuf {
    let p = repo().join("tests/reference/node_modules/@anthropic-ai/claude-code/bin/claude.exe");
    assert!(
        p.exists(),
        "Claude Code 2.1.332 not installed: run `npm ci --prefix tests/reference` (or scripts/test)"
    );
    std::fs::canonicalize(&p).unwrap_or(p)
}

const MANIFEST: &str =
    r#"{"name": "diffplug", "version": "1.2.0", "description": "a plugin for the differential"}"#;
const SKILL: &str = "---\nname: tidy-commit\ndescription: Writes commit messages. Use for commit messages.\n---\nWrite a conventional commit line.\n";

/// Every grader type and field, prompt.md-only, case.yaml-only and mixed cases, grader files,
/// with-only graders (by default and all of a case's), weights, a PCRE pattern that throws.
const CASES: &[(&str, &str)] = &[
    (
        "a-prose/prompt.md",
        "---\nruns: 1\nallowed_tools: [Skill, Read, Write]\ntags: [files]\n---\nDIFF-A: write the notes.\n",
    ),
    (
        "a-prose/graders/a-contains.md",
        "---\ntype: regex\npattern: '^refactor: '\nflags: m\nweight: 2\n---\n",
    ),
    (
        "a-prose/graders/b-absent.md",
        "---\ntype: regex\npattern: feat\nmatch: not_contains\n---\n",
    ),
    (
        "a-prose/graders/c-count.md",
        "---\ntype: regex\npattern: '[Hh]ello'\nmatch: 'count:2'\n---\n",
    ),
    (
        "a-prose/graders/d-files.md",
        "---\ntype: regex\ntarget: files\n---\nout/notes\\.txt\n",
    ),
    (
        "a-prose/graders/e-file.md",
        "---\ntype: regex\npattern: '^one$'\nflags: m\ntarget: {source: file, path: out/notes.txt}\n---\n",
    ),
    (
        "a-prose/graders/f-skill.md",
        "---\ntype: tool_used\ntool: Skill\n---\n",
    ),
    (
        "a-prose/graders/g-write.md",
        "---\ntype: tool_used\ntool: Write\ninput_match: 'notes\\.txt'\nmin: 1\nmax: 1\n---\n",
    ),
    (
        "a-prose/graders/h-order.md",
        "---\ntype: tool_order\nbefore: Write\nafter: {tool: Read, input_match: notes}\n---\n",
    ),
    (
        "a-prose/graders/i-exists.md",
        "---\ntype: file_exists\npath: 'out/*.txt'\n---\n",
    ),
    (
        "a-prose/graders/j-none.md",
        "---\ntype: file_exists\npath: '**/*.md'\nexists: false\n---\n",
    ),
    (
        "a-prose/graders/k-fails.md",
        "---\ntype: regex\npattern: nowhere\nweight: 3\n---\n",
    ),
    (
        "a-prose/graders/no-front-matter.md",
        "Not a grader: no front matter.\n",
    ),
    (
        "b-yaml/case.yaml",
        "schema_version: \"1.1\"\nname: b-yaml\nruns: 1\ntags: [smoke]\nmax_turns: 99 # ignored at the top level\nexecution:\n  prompt: \"DIFF-B: the capital of France?\"\n  max_turns: 4\n  timeout_seconds: 120\n  allowed_tools: [Skill]\ngraders:\n  - {name: skill-both, type: tool_used, tool: Skill, arm: both}\n  - {name: pcre, type: regex, pattern: '(?i)paris'}\n  - {name: paris, type: regex, pattern: paris, flags: i, weight: 2}\n",
    ),
    (
        "c-mixed/case.yaml",
        "schema_version: \"1.0\"\nname: c-mixed\nruns: 1\nexecution:\n  prompt: replaced by prompt.md\n  max_turns: 12\n  allowed_tools: [Glob, Read]\ngraders:\n  - name: y-first\n    type: tool_order\n    before: Glob\n    after: Read\n",
    ),
    (
        "c-mixed/prompt.md",
        "---\nmax_turns: 6\n---\nDIFF-C: look around.\n",
    ),
    (
        "c-mixed/graders/z-last.md",
        "---\ntype: regex\n---\nfound\n",
    ),
    (
        "d-only-skill/prompt.md",
        "---\nruns: 1\n---\nDIFF-D: no skill needed.\n",
    ),
    (
        "d-only-skill/graders/s.md",
        "---\ntype: tool_used\ntool: Skill\n---\n",
    ),
    (
        "e-judged/prompt.md",
        "---\nruns: 1\n---\nDIFF-E: explain the rename.\n",
    ),
    (
        "e-judged/graders/e-yes.md",
        "---\ntype: llm\n---\nJUDGE-YES: the reply names the rename.\n",
    ),
    (
        "e-judged/graders/e-no.md",
        "---\ntype: llm\nweight: 2\nfocus: trace\n---\nJUDGE-NO: the reply is in French.\n",
    ),
    (
        "e-judged/graders/e-base.md",
        "---\ntype: baseline\nbaseline_file: ref.jsonl\n---\nJUDGE-BASE: at least as specific as the reference.\n",
    ),
    (
        "e-judged/ref.jsonl",
        "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"renamed\"}]}}\n",
    ),
];

fn plugin(dir: &Path) {
    let mut files = vec![
        (
            ".claude-plugin/plugin.json".to_string(),
            MANIFEST.to_string(),
        ),
        ("skills/tidy-commit/SKILL.md".to_string(), SKILL.to_string()),
    ];
    files.extend(
        CASES
            .iter()
            .map(|(p, t)| (format!("evals/{p}"), t.to_string())),
    );
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    write_tree(dir, &files);
}

/// The scripted model: the same replies to each case's prompt in every conversation.
fn model() -> ModelServer {
    let server = ModelServer::start();
    // The judges' rules first: a judge's request holds the case's prompt too.
    // Claude Code's judge: one word per criterion, three votes each.
    let one_word = Some("exactly one word: PASS or FAIL");
    server.script_each("JUDGE-YES:", one_word, vec![text("PASS")]);
    server.script_each("JUDGE-NO:", one_word, vec![text("FAIL")]);
    server.script_each("JUDGE-BASE:", one_word, vec![text("PASS")]);
    // assay's judge: every criterion of the case in one JSON answer.
    let verdicts = json!([
        {"id": "e-base", "passed": true, "score": 1.0, "evidence": "renamed", "reasoning": "as specific"},
        {"id": "e-no", "passed": false, "score": 0.0, "evidence": "", "reasoning": "English"},
        {"id": "e-yes", "passed": true, "score": 1.0, "evidence": "renamed", "reasoning": "names it"},
    ]);
    server.script_each(
        "## Criteria",
        Some("JUDGE-YES:"),
        vec![text(&verdicts.to_string())],
    );
    server.script_each(
        "DIFF-A",
        None,
        vec![
            tool("Skill", json!({"skill": "tidy-commit"})),
            tool(
                "Write",
                json!({"file_path": "{cwd}/out/notes.txt", "content": "one\ntwo\n"}),
            ),
            tool("Read", json!({"file_path": "{cwd}/out/notes.txt"})),
            text("refactor: rename getUser\nHello hello"),
        ],
    );
    server.script_each(
        "DIFF-B",
        None,
        vec![
            tool("Skill", json!({"skill": "tidy-commit"})),
            text("Paris."),
        ],
    );
    server.script_each(
        "DIFF-C",
        None,
        vec![
            tool("Glob", json!({"pattern": "*"})),
            tool("Read", json!({"file_path": "{cwd}/nothing.txt"})),
            text("found nothing"),
        ],
    );
    server.script_each("DIFF-D", None, vec![text("no skill here")]);
    server.script_each(
        "DIFF-E",
        None,
        vec![text("I renamed getUser to fetchUser.")],
    );
    server
}

/// `claude plugin eval` on the plugin, its `--json` result and exit.
fn reference(server: &ModelServer, plugin: &Path, home: &Path, args: &[&str]) -> (Value, Output) {
    let json = home.join("cc.json");
    let out = Command::new(reference_cli())
        .args(["plugin", "eval"])
        .arg(plugin)
        .args(["--trust-plugin", "--no-publish", "--json"])
        .arg(&json)
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", "sk-assay-test")
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .env("DISABLE_AUTOUPDATER", "1")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("CLAUDE_CODE_OAUTH_TOKEN")
        .output()
        .expect("claude runs");
    let v = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (v, out)
}

/// `assay run` on the plugin through the same Claude Code, its result in Claude Code's schema
/// and exit.
fn assay_side(server: &ModelServer, plugin: &Path, args: &[&str]) -> (Value, Output) {
    let mut all = vec![
        "run",
        ".",
        "--harness",
        "claude-code",
        "--output-dir",
        "out",
    ];
    all.extend([
        "--workspace-dir",
        "/tmp",
        "--reporter",
        "claude-plugin-eval",
    ]);
    all.extend_from_slice(args);
    let mut env = claude_env(&reference_cli(), server);
    env.retain(|(k, _)| *k != "ASSAY_JUDGE");
    env.extend([
        ("ASSAY_JUDGE", "anthropic".to_string()),
        ("ASSAY_JUDGE_BASE_URL", server.url.clone()),
        ("ASSAY_JUDGE_API_KEY", "sk-judge".to_string()),
    ]);
    let out = assay_env(plugin, &all, &env);
    let v = std::fs::read_to_string(plugin.join("out/aggregate-result.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (v, out)
}

/// What must agree, of a result: per case its loader view, each arm's runs (score, each
/// grader's verdict, weight, explanation, withOnly, scored) and its aggregates; the totals.
fn comparable(v: &Value) -> Value {
    let run = |r: &Value| {
        json!({
            "score": r["score"],
            "passed": r["passed"],
            "aborted": r["aborted"],
            "graders": r["graders"].as_array().map(|gs| gs.iter().map(|g| json!({
                "name": g["name"], "passed": g["passed"], "weight": g["weight"],
                "explanation": g["explanation"], "withOnly": g["withOnly"], "scored": g["scored"],
            })).collect::<Vec<_>>()),
        })
    };
    let cases: Vec<Value> = v["cases"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let arms: serde_json::Map<String, Value> = c["arms"]
                        .as_object()
                        .map(|a| {
                            a.iter()
                                .map(|(k, rs)| {
                                    (
                                        k.clone(),
                                        rs.as_array()
                                            .map(|x| x.iter().map(run).collect::<Vec<_>>())
                                            .into(),
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    json!({
                        "name": c["name"], "dir": c["dir"], "source": c["source"],
                        "promptMarkdown": c["promptMarkdown"], "runsPerCase": c["runsPerCase"],
                        "timeoutSeconds": c["timeoutSeconds"], "maxTurns": c["maxTurns"],
                        "graders": c["graders"], "arms": arms, "aggregates": c["aggregates"],
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"cases": cases, "aggregates": v["aggregates"], "threshold": v["suite"]["threshold"], "ablation": v["suite"]["ablation"]})
}

/// Every difference between the two, by JSON path.
fn differences(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                differences(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    &format!("{at}.{k}"),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(p, q, &format!("{at}[{i}]"), out);
            }
        }
        (Value::Number(x), Value::Number(y))
            if (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() < 1e-9 => {}
        _ if a == b => {}
        _ => out.push(format!("{at}: claude {b} / assay {a}")),
    }
}

/// Runs both and compares; the number of grader verdicts compared.
fn agree(server: &ModelServer, args: &[&str], cases: usize) -> usize {
    agree_on(server, plugin, args, cases)
}

/// [`agree`] on the plugin `write` makes.
fn agree_on(server: &ModelServer, write: fn(&Path), args: &[&str], cases: usize) -> usize {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    write(d.path());
    let (cc, cc_out) = reference(server, d.path(), home.path(), args);
    assert!(
        cc.is_object(),
        "claude plugin eval wrote no result: {}\n{}",
        stdout(&cc_out),
        stderr(&cc_out)
    );
    let (ours, our_out) = assay_side(server, d.path(), args);
    assert!(
        ours.is_object(),
        "assay wrote no result: {}\n{}",
        stdout(&our_out),
        stderr(&our_out)
    );
    let mut diffs = Vec::new();
    differences(&comparable(&ours), &comparable(&cc), "", &mut diffs);
    assert!(
        diffs.is_empty(),
        "{} mismatches with {args:?}:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
    assert_eq!(
        code(&our_out),
        code(&cc_out),
        "exit codes with {args:?}: assay {}\n{}",
        stdout(&our_out),
        stderr(&our_out)
    );
    let names: Vec<&Value> = cc["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(names.len(), cases, "{names:?} {}", stdout(&cc_out));
    cc["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["arms"].as_object().into_iter().flat_map(|a| a.values()))
        .flat_map(|runs| runs.as_array().into_iter().flatten())
        .map(|r| r["graders"].as_array().map_or(0, Vec::len))
        .sum()
}

#[test]
fn verdicts_scores_and_exits_agree_with_claude_code() {
    let server = model();
    // Both arms (Claude Code's default), every case: three below the threshold of 1.
    let both = agree(&server, &["--runs", "1", "--allow-tools", "Write"], 5);
    assert_eq!(both, 39, "grader verdicts compared");
    // One arm, a threshold of 0.5, one tag: the case passes, exit 0.
    let one = agree(
        &server,
        &[
            "--runs",
            "1",
            "--ablation",
            "none",
            "--threshold",
            "0.5",
            "--tag",
            "smoke",
        ],
        1,
    );
    assert_eq!(one, 3);
}

/// A plugin whose MCP server is mocked: a fixed responder with the call's fields and a guard,
/// read back through `target: mock_calls`; a case whose call breaks the guard (the run is
/// aborted, score 0).
fn mocked_plugin(dir: &Path) {
    write_tree(
        dir,
        &[
            (
                ".claude-plugin/plugin.json",
                r#"{"name": "diffmock", "version": "0.3.0"}"#,
            ),
            (
                ".mcp.json",
                r#"{"mcpServers": {"tracker": {"type": "http", "url": "https://tracker.invalid/mcp"}}}"#,
            ),
            ("skills/tidy-commit/SKILL.md", SKILL),
            (
                "evals/mocks/tracker/create_issue.md",
                "---\nexpect:\n  project: [web, api]\n  title: string\n---\nCreated issue #4821 in {{input.project}}: {{input.title}}\n",
            ),
            (
                "evals/m-filed/prompt.md",
                "---\nruns: 1\n---\nMOCK-FILE: file the login bug.\n",
            ),
            (
                "evals/m-filed/graders/called.md",
                "---\ntype: tool_used\ntool: mcp__plugin_diffmock_tracker__create_issue\ninput_match: Login\n---\n",
            ),
            (
                "evals/m-filed/graders/answered.md",
                "---\ntype: regex\ntarget: mock_calls\npattern: 'Created issue #4821 in web: Login broken'\n---\n",
            ),
            (
                "evals/m-filed/graders/said.md",
                "---\ntype: regex\npattern: Filed\nweight: 2\n---\n",
            ),
            (
                "evals/m-wrong/prompt.md",
                "---\nruns: 1\n---\nMOCK-WRONG: file it in ios.\n",
            ),
            (
                "evals/m-wrong/graders/said.md",
                "---\ntype: regex\npattern: Filed\n---\n",
            ),
        ],
    );
}

/// Mocked MCP tools answer, are graded through `mock_calls`, and a broken guard aborts the
/// run, alike in both.
#[test]
fn mocked_runs_agree_with_claude_code() {
    let server = ModelServer::start();
    let create = "mcp__plugin_diffmock_tracker__create_issue";
    server.script_each(
        "MOCK-FILE",
        None,
        vec![
            tool(create, json!({"title": "Login broken", "project": "web"})),
            text("Filed it."),
        ],
    );
    server.script_each(
        "MOCK-WRONG",
        None,
        vec![
            tool(create, json!({"title": "Login broken", "project": "ios"})),
            text("Filed it."),
        ],
    );
    let graders = agree_on(
        &server,
        mocked_plugin,
        &["--runs", "1", "--ablation", "none"],
        2,
    );
    assert_eq!(graders, 3, "grader verdicts compared");
}

/// Cases Claude Code refuses to load, one cause each, and one it loads.
const REFUSED: &[(&str, &str)] = &[
    ("ok/prompt.md", "---\nruns: 1\n---\nDIFF-D: fine.\n"),
    ("ok/graders/g.md", "---\ntype: regex\n---\nskill\n"),
    (
        "r01/case.yaml",
        "name: r01\nexecution: {prompt: hi}\ngraders: [{name: g, type: regex, pattern: x}]\n",
    ),
    (
        "r02/case.yaml",
        "schema_version: 1.0\nname: r02\nexecution: {prompt: hi}\ngraders: [{name: g, type: regex, pattern: x}]\n",
    ),
    (
        "r03/case.yaml",
        "schema_version: \"2.0\"\nname: r03\nexecution: {prompt: hi}\ngraders: [{name: g, type: regex, pattern: x}]\n",
    ),
    ("r04/prompt.md", "Only a prompt.\n"),
    ("r05/prompt.md", "A prompt.\n"),
    ("r05/graders/x.md", "---\nweight: 2\n---\nno type\n"),
    (
        "r06/case.yaml",
        "schema_version: \"1.1\"\nname: r06\nexecution: {prompt: hi}\ngraders: [{name: g, type: semantic}]\n",
    ),
    (
        "r07/case.yaml",
        "schema_version: \"1.1\"\nname: r07\nexecution: {prompt: hi}\ngraders: [{type: regex, pattern: x}]\n",
    ),
    (
        "r08/case.yaml",
        "schema_version: \"1.1\"\nname: r08\nexecution: {prompt: hi}\ngraders:\n  - {name: a, type: regex, pattern: x}\n  - {name: b, type: llm, criteria: c, target: trace}\n",
    ),
    ("r09/prompt.md", "---\nfoo: 1\n---\nA prompt.\n"),
    ("r09/graders/g.md", "---\ntype: regex\npattern: x\n---\n"),
    (
        "r10/case.yaml",
        "schema_version: \"1.1\"\nname: r10\nexecution: {prompt: hi, max_turns: 1.5}\ngraders: [{name: g, type: regex, pattern: x}]\n",
    ),
    (
        "r11/case.yaml",
        "schema_version: \"1.1\"\nname: r11\ngraders: [{name: g, type: regex, pattern: x}]\n",
    ),
    (
        "r12/case.yaml",
        "schema_version: \"1.1\"\nname: r12\nruns: 0\nexecution: {prompt: hi}\ngraders: [{name: g, type: regex, pattern: x}]\n",
    ),
    (
        "r13/case.yaml",
        "schema_version: \"1.1\"\nname: r13\nexecution: {prompt: hi}\ngraders: [{name: g, type: regex, pattern: x, flags: x}]\n",
    ),
    (
        "r14/case.yaml",
        "schema_version: \"1.1\"\nname: r14\nexecution: {prompt: hi}\ngraders: [{name: g, type: regex, pattern: x, match: 'count:'}]\n",
    ),
    (
        "r15/case.yaml",
        "schema_version: \"1.1\"\nname: r15\nexecution: {prompt: hi}\ngraders: [{name: g, type: regex, pattern: x}, {name: g, type: regex, pattern: y}]\n",
    ),
    (
        "r16/case.yaml",
        "schema_version: \"1.1\"\nname: r16\nexecution: {prompt: hi}\ngraders: [{name: g, type: tool_used, tool: Skill, arm: never}]\n",
    ),
    ("r17/prompt.md", "TODO: describe what the agent should do\n"),
    ("r17/graders/g.md", "---\ntype: regex\npattern: x\n---\n"),
    (
        "r18/case.yaml",
        "schema_version: \"1.1\"\nname: r18\nexecution: {prompt: hi}\ngraders: [{name: g, type: file_exists, path: a, exists: no}]\n",
    ),
    (
        "r19/case.yaml",
        "schema_version: \"1.1\"\nname: \"\"\nexecution: {prompt: hi}\ngraders: [{name: g, type: regex, pattern: x}]\n",
    ),
    (
        "r20/case.yaml",
        "schema_version: \"1.1\"\nname: r20\nexecution: {prompt: hi}\ngraders: []\n",
    ),
];

/// Each refused case folder (relative to `evals/`) and its causes, from Claude Code's `✗`
/// lines (`✗ <file>: <error>`; a schema error's issues after `invalid case.yaml:`).
fn claude_refusals(stderr: &str, evals: &Path) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut out = std::collections::BTreeMap::new();
    for line in stderr.lines().filter_map(|l| l.strip_prefix("✗ ")) {
        let Some((file, why)) = line.split_once(": ") else {
            continue;
        };
        let file = Path::new(file);
        let rel = file.strip_prefix(evals).unwrap_or(file);
        let case = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let causes: Vec<String> = match why.strip_prefix("invalid case.yaml:") {
            Some(issues) => issues
                .split("   ")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            None => vec![why.trim().to_string()],
        };
        out.entry(case).or_insert_with(Vec::new).extend(causes);
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

/// The same from `assay validate --format json`: each error's case folder and message.
fn assay_refusals(v: &Value) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut out = std::collections::BTreeMap::new();
    for p in v["problems"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["severity"] == "error")
    {
        let file = p["file"].as_str().unwrap_or("");
        let case = file
            .strip_prefix("evals/")
            .unwrap_or(file)
            .split('/')
            .next()
            .unwrap_or("")
            .to_string();
        out.entry(case)
            .or_insert_with(Vec::new)
            .push(p["message"].as_str().unwrap_or("").to_string());
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

#[test]
fn load_time_refusals_agree_with_claude_code() {
    let server = model();
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let mut files = vec![(
        ".claude-plugin/plugin.json".to_string(),
        MANIFEST.to_string(),
    )];
    files.extend(
        REFUSED
            .iter()
            .map(|(p, t)| (format!("evals/{p}"), t.to_string())),
    );
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    write_tree(d.path(), &files);
    let plugin = std::fs::canonicalize(d.path()).unwrap();
    let (cc, cc_out) = reference(
        &server,
        &plugin,
        home.path(),
        &["--runs", "1", "--ablation", "none"],
    );
    let theirs = claude_refusals(&stderr(&cc_out), &plugin.join("evals"));
    let out = assay(&plugin, &["validate", ".", "--format", "json"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let ours = assay_refusals(&serde_json::from_str(&stdout(&out)).unwrap());
    assert_eq!(theirs.len(), 20, "{}", stderr(&cc_out));
    assert_eq!(
        cc["cases"].as_array().map_or(0, Vec::len),
        1,
        "the valid case loads"
    );
    let mut diffs = Vec::new();
    for case in theirs
        .keys()
        .chain(ours.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        if theirs.get(case) != ours.get(case) {
            diffs.push(format!(
                "{case}: claude {:?} / assay {:?}",
                theirs.get(case),
                ours.get(case)
            ));
        }
    }
    assert!(
        diffs.is_empty(),
        "{} refusals differ:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

#[test]
fn the_starter_assay_init_writes_is_loaded_by_claude_code() {
    let server = model();
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[(
            "skills/greet/SKILL.md",
            "---\nname: greet\ndescription: Writes greetings.\n---\nSay hello.\n",
        )],
    );
    let out = assay(
        d.path(),
        &["init", "skills/greet", "--format", "claude-plugin-eval"],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let skill = std::fs::canonicalize(d.path().join("skills/greet")).unwrap();
    let (cc, cc_out) = reference(
        &server,
        &skill,
        home.path(),
        &["--runs", "1", "--ablation", "none"],
    );
    assert!(!stderr(&cc_out).contains('✗'), "{}", stderr(&cc_out));
    let names: Vec<&Value> = cc["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(
        names,
        [&json!("greet-chooses"), &json!("greet-fires")],
        "{}",
        stderr(&cc_out)
    );
    let graders = cc["cases"][1]["graders"].as_array().map_or(0, Vec::len);
    assert_eq!(graders, 2);
}
