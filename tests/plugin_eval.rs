//! Claude Code's plugin evals (`claude plugin eval`'s format): read as Claude Code's loader
//! reads them, and run through the real Claude Code CLI against the scripted model server,
//! with the plugin loaded in one arm and left out of the other.

use crate::support;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use support::model_server::{ModelServer, text, tool};
use support::*;

const MANIFEST: &str = r#"{"name": "tidy", "version": "0.1.0", "description": "commit messages"}"#;
const SKILL: &str = "---\nname: tidy-commit\ndescription: Writes commit messages. Use for commit messages.\n---\nWrite a conventional commit line.\n";

/// A plugin with one skill and the cases given, as `(path under evals/, text)`.
fn plugin(dir: &Path, cases: &[(&str, &str)]) {
    let mut files = vec![
        (
            ".claude-plugin/plugin.json".to_string(),
            MANIFEST.to_string(),
        ),
        ("skills/tidy-commit/SKILL.md".to_string(), SKILL.to_string()),
    ];
    files.extend(
        cases
            .iter()
            .map(|(p, t)| (format!("evals/{p}"), t.to_string())),
    );
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    write_tree(dir, &files);
}

fn run(claude: &Path, server: &ModelServer, dir: &Path, args: &[&str]) -> Output {
    let mut all = vec![
        "run",
        "--harness",
        "claude-code",
        "--pass-env",
        "CLAUDE_CODE_MAX_RETRIES",
    ];
    all.extend(["--output-dir", "out", "--workspace-dir", "/tmp"]);
    all.extend_from_slice(args);
    assay_env(dir, &all, &claude_env(claude, server))
}

/// Every case-run's result, by `<case>/<arm>/<run>`.
fn by_arm(run_dir: &Path) -> std::collections::BTreeMap<String, Value> {
    results_by_folder(run_dir)
        .into_values()
        .map(|r| {
            let key = format!(
                "{}/{}/{}",
                r["case"].as_str().unwrap_or(""),
                r["variant"].as_str().unwrap_or("skill"),
                r["run"]
            );
            (key, r)
        })
        .collect()
}

#[test]
fn a_case_runs_with_and_without_the_plugin_and_is_scored_by_weight() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script_each(
        "Write me a commit message",
        None,
        vec![
            tool("Skill", json!({"skill": "tidy-commit"})),
            tool(
                "Write",
                json!({"file_path": "{cwd}/out/msg.txt", "content": "x\n"}),
            ),
            text("refactor: rename getUser to fetchUser"),
        ],
    );
    let d = tempfile::tempdir().unwrap();
    plugin(
        d.path(),
        &[
            (
                "commit/prompt.md",
                "---\nruns: 1\nallowed_tools: [Skill, Read]\n---\nWrite me a commit message for the rename.\n",
            ),
            (
                "commit/graders/conventional.md",
                "---\ntype: regex\npattern: '^(feat|fix|refactor): '\nflags: m\nweight: 2\n---\n",
            ),
            (
                "commit/graders/fired.md",
                "---\ntype: tool_used\ntool: Skill\ninput_match: tidy-commit\n---\n",
            ),
            (
                "commit/graders/wrote.md",
                "---\ntype: file_exists\npath: 'out/*.txt'\n---\n",
            ),
        ],
    );
    let out = run(
        &claude,
        &server,
        d.path(),
        &["--allow-tools", "Write", "--reporter", "claude-plugin-eval"],
    );
    let runs = by_arm(&d.path().join("out"));
    let with = &runs["commit/skill/1"];
    let without = &runs["commit/baseline/1"];
    assert_eq!(runs.len(), 2, "{}\n{}", stdout(&out), stderr(&out));
    // With the plugin: the skill fired (shown, not scored), the message and the file pass.
    assert_eq!(with["grade"]["score"], json!(1.0), "{with:#}");
    assert_eq!(with["grade"]["verdict"], "pass", "{with:#}");
    // Without it, the with-only grader is left out; the scripted model still answers alike.
    let ids: Vec<&str> = without["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["conventional", "wrote"], "{without:#}");
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let result = read_json(&d.path().join("out/aggregate-result.json"));
    let case = &result["cases"][0];
    assert_eq!(case["name"], "commit");
    assert_eq!(case["source"], "prose");
    let graders = &case["arms"]["with"][0]["graders"];
    assert_eq!(
        graders[1],
        json!({"name": "fired", "passed": true, "weight": 1, "explanation": "Skill called 1x (expected 1..∞)", "withOnly": true, "scored": false})
    );
    assert_eq!(
        case["arms"]["without"][0]["graders"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        case["aggregates"],
        json!({"score": 1, "passRate": 1, "scoreWithout": 1, "passRateWithout": 1, "delta": 0}),
        "{result:#}"
    );
    assert_eq!(result["aggregates"]["casesPassed"], 1);
    let root = d.path().display().to_string();
    assert_eq!(result["suite"]["root"], json!(root));
    assert_eq!(
        result["suite"]["plugins"],
        json!([{"name": "tidy", "version": "0.1.0", "path": root}])
    );
}

/// A suite written for Claude Code's tools (`Bash`, `Skill`, `Write`), run on another engine:
/// its graders match that engine's calls by kind (a shell call, a skill loaded, a file
/// written), so the same suite grades alike.
fn runs_on(harness: &str, env: Vec<(&'static str, String)>, server: &ModelServer) -> Value {
    let d = tempfile::tempdir().unwrap();
    plugin(
        d.path(),
        &[
            (
                "tests/prompt.md",
                "---\nruns: 1\n---\nRun the tests and note it.\n",
            ),
            (
                "tests/graders/shell.md",
                "---\ntype: tool_used\ntool: Bash\ninput_match: npm test\n---\n",
            ),
            (
                "tests/graders/fired.md",
                "---\ntype: tool_used\ntool: Skill\ninput_match: tidy-commit\n---\n",
            ),
            (
                "tests/graders/noted.md",
                "---\ntype: file_exists\npath: 'out/*.txt'\n---\n",
            ),
            (
                "tests/graders/order.md",
                "---\ntype: tool_order\nbefore: Skill\nafter: Bash\n---\n",
            ),
            (
                "tests/graders/said.md",
                "---\ntype: regex\npattern: done\n---\n",
            ),
        ],
    );
    let mut args = vec![
        "run",
        ".",
        "--harness",
        harness,
        "--model",
        "gpt-test",
        "--output-dir",
        "out",
    ];
    args.extend([
        "--workspace-dir",
        "/tmp",
        "--ablation",
        "none",
        "--allow-tools",
        "Bash",
        "Write",
    ]);
    let out = assay_env(d.path(), &args, &env);
    let r = results(&d.path().join("out"))
        .remove("tests")
        .unwrap_or_default();
    assert_eq!(
        r["grade"]["score"],
        json!(1.0),
        "{r:#}\n{}\n{}\n{:#?}",
        stdout(&out),
        stderr(&out),
        server.requests().len()
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    r
}

#[test]
fn a_claude_code_suite_runs_on_codex_with_its_tools_mapped() {
    let codex = agent_cli("codex");
    let server = ModelServer::start();
    server.script_each(
        "Run the tests",
        None,
        vec![
            tool(
                "exec_command",
                json!({"cmd": "cat .agents/skills/tidy-commit/SKILL.md"}),
            ),
            tool(
                "exec_command",
                json!({"cmd": "mkdir -p out; echo 'npm test' > out/ran.txt"}),
            ),
            text("done"),
        ],
    );
    let r = runs_on("codex", codex_env(&codex, &server), &server);
    assert_eq!(r["tool_kinds"]["shell"], 2, "{r:#}");
    assert_eq!(r["skills_invoked"], json!(["tidy-commit"]));
}

#[test]
fn a_claude_code_suite_runs_on_opencode_over_acp_with_its_tools_mapped() {
    let opencode = agent_cli("opencode");
    let server = ModelServer::start();
    server.script_each(
        "Run the tests",
        None,
        vec![
            tool("skill", json!({"name": "tidy-commit"})),
            tool("bash", json!({"command": "mkdir -p out && echo 'npm test' > out/ran.txt", "description": "run the tests"})),
            text("done"),
        ],
    );
    let path = format!(
        "{}:{}",
        opencode.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = vec![
        ("PATH", path),
        ("OPENAI_BASE_URL", format!("{}/v1", server.url)),
        ("OPENAI_API_KEY", "sk-test".into()),
        ("ASSAY_JUDGE", "none".into()),
    ];
    let r = runs_on("opencode", env, &server);
    assert_eq!(r["tool_kinds"]["shell"], 1, "{r:#}");
    assert_eq!(r["tool_kinds"]["skill"], 1, "{r:#}");
}

#[test]
fn a_case_of_its_own_threshold_more_turns_folders_and_variables() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script_each(
        "Read the note",
        None,
        vec![
            tool("Read", json!({"file_path": "{cwd}/resources/note.txt"})),
            tool("Bash", json!({"command": "echo \"$EVAL_MODE\" > mode.txt"})),
            text("first part done"),
        ],
    );
    // The second turn resumes the session: its reply is the conversation's fourth.
    let unused = || text("unused");
    server.script_each(
        "And now the second part",
        None,
        vec![unused(), unused(), unused(), text("second part done")],
    );
    let d = tempfile::tempdir().unwrap();
    plugin(
        d.path(),
        &[
            (
                "own/case.yaml",
                "schema_version: \"1.1\"\nname: own\nruns: 1\nx-assay-threshold: 0.7\nx-assay-turns: [\"And now the second part.\"]\ncontext:\n  add_dirs: [resources]\nexecution:\n  prompt: Read the note.\n  env: {EVAL_MODE: fast}\ngraders:\n  - {name: second, type: regex, pattern: second part done}\n  - {name: read, type: tool_used, tool: Read, input_match: note\\.txt}\n  - {name: mode, type: regex, pattern: fast, target: {source: file, path: mode.txt}}\n  - {name: never, type: regex, pattern: nowhere}\n",
            ),
            ("own/resources/note.txt", "a note\n"),
        ],
    );
    let out = run(
        &claude,
        &server,
        d.path(),
        &["--ablation", "none", "--allow-tools", "Bash"],
    );
    let r = results(&d.path().join("out"))
        .remove("own")
        .unwrap_or_default();
    assert_eq!(r["grade"]["score"], json!(0.75), "{r:#}\n{}", stderr(&out));
    assert_eq!(r["turns"].as_array().map_or(0, Vec::len), 2, "{r:#}");
    assert_eq!(r["pass_threshold"], json!(0.7));
    // 0.75 reaches the case's own threshold, where Claude Code's 1.0 would fail it.
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    // A variable a case may not set, and a folder outside the plugin, are refused at load.
    write_tree(
        d.path(),
        &[(
            "evals/own/case.yaml",
            "schema_version: \"1.1\"\nname: own\ncontext: {add_dirs: [../../..]}\nexecution: {prompt: hi, env: {HOME: /tmp}}\ngraders: [{name: g, type: regex, pattern: x}]\n",
        )],
    );
    let out = assay(d.path(), &["validate", "."]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("execution.env key \"HOME\" is not allowed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_marketplace_case_loads_the_plugin_it_names() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                ".claude-plugin/marketplace.json",
                r#"{"name": "shop", "plugins": []}"#,
            ),
            ("plugins/tidy/.claude-plugin/plugin.json", MANIFEST),
            ("plugins/tidy/skills/tidy-commit/SKILL.md", SKILL),
            (
                "evals/named/prompt.md",
                "---\nruns: 1\nplugins: [\"../../plugins/tidy\"]\n---\nWrite me a commit message.\n",
            ),
            (
                "evals/named/graders/g.md",
                "---\ntype: regex\n---\nrefactor\n",
            ),
        ],
    );
    // Both arms: the case's own plugin resolves, so it also runs without it.
    let out = assay(d.path(), &["run", ".", "--dry-run"]);
    assert!(
        stdout(&out).contains("plan: 2 case-runs (1 case run, 1 baseline run)"),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    // An entry that is not there, or lies outside, refuses the case as Claude Code does.
    write_tree(
        d.path(),
        &[(
            "evals/named/prompt.md",
            "---\nplugins: [\"../../plugins/gone\"]\n---\nHi.\n",
        )],
    );
    let out = assay(d.path(), &["validate", "."]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out)
            .contains("case \"named\": plugins entry \"../../plugins/gone\" does not exist"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_scaffold_runs_with_trust_only_and_its_files_are_no_creation() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script_each("Look at the seed", None, vec![text("seen")]);
    let d = tempfile::tempdir().unwrap();
    plugin(
        d.path(),
        &[
            (
                "seeded/case.yaml",
                "schema_version: \"1.1\"\nname: seeded\nruns: 1\ncontext: {scaffold_script: scaffold.sh}\nexecution: {prompt: Look at the seed.}\ngraders:\n  - {name: staged, type: regex, pattern: seeded, target: {source: file, path: seed.txt}}\n  - {name: not-created, type: file_exists, path: seed.txt, exists: false}\n",
            ),
            (
                "seeded/scaffold.sh",
                "#!/usr/bin/env bash\n. \"$(dirname \"$0\")/../common.sh\"\necho \"$WORD\" > seed.txt\n",
            ),
            ("common.sh", "WORD=seeded\n"),
        ],
    );
    let out = run(
        &claude,
        &server,
        d.path(),
        &["--ablation", "none", "--trust"],
    );
    let r = results(&d.path().join("out"))
        .remove("seeded")
        .unwrap_or_default();
    assert_eq!(r["grade"]["score"], json!(1.0), "{r:#}\n{}", stderr(&out));
    // Without --trust the case runs unstaged: the file is not there.
    let out = run(&claude, &server, d.path(), &["--ablation", "none"]);
    let r = results(&d.path().join("out"))
        .remove("seeded")
        .unwrap_or_default();
    assert_eq!(r["grade"]["score"], json!(0.5), "{r:#}\n{}", stderr(&out));
    assert!(
        stderr(&out).contains("its scaffold_script runs only with --trust"),
        "{}",
        stderr(&out)
    );
}

/// Claude Code's advisories, before anything runs: a file grader with no tool that can write
/// a file, a `tool_used` on a tool the run does not grant; a grant clears them.
#[test]
fn graders_that_cannot_pass_with_the_granted_tools_are_named_before_the_run() {
    let d = tempfile::tempdir().unwrap();
    plugin(
        d.path(),
        &[
            (
                "c/prompt.md",
                "---\nallowed_tools: [Read, Bash]\n---\nDo it.\n",
            ),
            (
                "c/graders/made.md",
                "---\ntype: file_exists\npath: '*.md'\n---\n",
            ),
            (
                "c/graders/ran.md",
                "---\ntype: tool_used\ntool: Bash\n---\n",
            ),
            (
                "c/graders/absent.md",
                "---\ntype: file_exists\npath: x\nexists: false\n---\n",
            ),
        ],
    );
    let args = ["run", ".", "--dry-run", "--harness", "claude-code"];
    let out = assay_env(d.path(), &args, &[]);
    let warned: Vec<String> = stderr(&out)
        .lines()
        .chain(stdout(&out).lines())
        .filter(|l| l.starts_with('⚠'))
        .map(str::to_string)
        .collect();
    assert_eq!(warned.len(), 2, "{warned:#?}\n{}", stderr(&out));
    assert!(warned[0].starts_with("⚠ tidy/c: grader \"made\" cannot pass with the granted tools: it checks a file the run creates"), "{warned:#?}");
    assert!(
        warned[1]
            .ends_with("add Bash to the case's allowed_tools and grant it with --allow-tools Bash"),
        "{warned:#?}"
    );
    let granted = [&args[..], &["--allow-tools", "Bash"]].concat();
    let out = assay_env(d.path(), &granted, &[]);
    assert!(
        !format!("{}{}", stdout(&out), stderr(&out)).contains('⚠'),
        "{}",
        stderr(&out)
    );
    // `--disallow-tools` keeps it from every case, over the grant, and says so.
    let kept = [&granted[..], &["--disallow-tools", "Bash"]].concat();
    let out = assay_env(d.path(), &kept, &[]);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains("it needs a Bash call in the trace, but Bash is in the case's disallowed_tools or --disallow-tools"),
        "{said}"
    );
}

/// `context.history_file`: a recorded session the case's prompt continues, through the real
/// Claude Code (the model sees the earlier turns).
#[test]
fn a_case_continues_its_recorded_session() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script_each(
        "NEXT-TURN",
        Some("PLUM-CODEWORD"),
        // The reply to the conversation's second step: the history holds the first.
        vec![text("unused"), text("The codeword was PLUM.")],
    );
    let id = "5f1c2a9e-0d3b-4c7a-9e21-3b6f0c8d4a17";
    let line = |uuid: &str, parent: Value, kind: &str, message: Value| {
        json!({"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": "/x",
            "sessionId": id, "version": "2.1.197", "type": kind, "message": message,
            "uuid": uuid, "timestamp": "2026-11-27T10:00:00.000Z"})
        .to_string()
    };
    let u1 = "11111111-1111-4111-8111-111111111111";
    let history = [
        line(u1, Value::Null, "user", json!({"role": "user", "content": "Remember the PLUM-CODEWORD."})),
        line(
            "22222222-2222-4222-8222-222222222222",
            json!(u1),
            "assistant",
            json!({"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Noted."}], "stop_reason": "end_turn",
                "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}}),
        ),
    ]
    .join("\n");
    let d = tempfile::tempdir().unwrap();
    let case = "schema_version: \"1.1\"\nname: recall\nruns: 1\ncontext:\n  history_file: session.jsonl\nexecution:\n  prompt: \"NEXT-TURN: what was the codeword?\"\ngraders:\n  - name: recalled\n    type: regex\n    pattern: PLUM\n";
    plugin(
        d.path(),
        &[
            ("recall/case.yaml", case),
            ("recall/session.jsonl", &history),
        ],
    );
    let out = run(&claude, &server, d.path(), &["--ablation", "none"]);
    assert!(d.path().join("out").is_dir(), "{}", stderr(&out));
    let runs = by_arm(&d.path().join("out"));
    let r = &runs["recall/skill/1"];
    assert_eq!(r["grade"]["verdict"], "pass", "{r:#}\n{}", stderr(&out));
    // A history outside the plugin refuses the case, naming it.
    let case = case.replace("session.jsonl", "../../../elsewhere.jsonl");
    std::fs::write(d.path().join("evals/recall/case.yaml"), case).unwrap();
    std::fs::write(d.path().parent().unwrap().join("elsewhere.jsonl"), "{}").ok();
    let out = run(&claude, &server, d.path(), &["--ablation", "none"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("context.history_file \"../../../elsewhere.jsonl\""),
        "{}",
        stderr(&out)
    );
}

/// A plugin-eval suite takes the cache and shards as any format does: run again, nothing
/// runs; cut in two, each shard takes its share of the cases with both their arms.
#[test]
fn a_plugin_eval_suite_is_cached_and_sharded() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script_each("CACHED-", None, vec![text("refactor: done")]);
    let d = tempfile::tempdir().unwrap();
    let case = |p: &str| format!("---\nruns: 1\n---\nCACHED-{p}: write the commit line.\n");
    let grader = "---\ntype: regex\npattern: '^refactor: '\n---\n";
    let (a, b) = (case("a"), case("b"));
    plugin(
        d.path(),
        &[
            ("a/prompt.md", &a),
            ("a/graders/line.md", grader),
            ("b/prompt.md", &b),
            ("b/graders/line.md", grader),
        ],
    );
    let keys = tempfile::tempdir().unwrap();
    let mut env = claude_env(&claude, &server);
    env.extend([
        ("ASSAY_NO_CACHE", "0".to_string()),
        (
            "ASSAY_CACHE_KEY",
            keys.path().join("cache.key").display().to_string(),
        ),
        (
            "XDG_DATA_HOME",
            keys.path().join("data").display().to_string(),
        ),
    ]);
    let go = |out: &str, more: &[&str]| {
        let mut args = vec!["run", ".", "--harness", "claude-code", "--output-dir", out];
        args.extend_from_slice(more);
        let o = assay_env(d.path(), &args, &env);
        format!("{}\n{}", stdout(&o), stderr(&o))
    };
    let first = go("r1", &[]);
    assert!(
        first.contains("plan: 4 case-runs (2 case runs, 2 baseline runs): 4 agent runs"),
        "{first}"
    );
    let second = go("r2", &[]);
    assert!(
        second.contains("0 agent runs, 4 already done (cache or --resume)"),
        "{second}"
    );
    let mut taken = Vec::new();
    for k in ["1/2", "2/2"] {
        let out = format!("s{}", &k[..1]);
        let said = go(&out, &["--no-cache", "--shard", k]);
        assert!(said.contains("2 agent runs"), "{said}");
        let runs = by_arm(&d.path().join(&out));
        taken.extend(runs.into_keys());
    }
    taken.sort();
    assert_eq!(
        taken,
        ["a/baseline/1", "a/skill/1", "b/baseline/1", "b/skill/1"]
    );
}
