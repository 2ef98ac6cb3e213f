//! WebAssembly plugins end to end: first-party plugins in a real run through the real Gemini
//! CLI, hostile plugins contained, grants, load-time validation, `assay plugin new|inspect`,
//! and a trusted native plugin.

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::model_server::{ModelServer, text, tool};
use support::*;

fn toml_plugin(path: &Path, extra: &str) -> String {
    format!("[[plugin]]\npath = \"{}\"\n{extra}\n", path.display())
}

fn outcome<'a>(r: &'a Value, id: &str) -> &'a Value {
    r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("{id} in {r:#}"))
}

/// `assay run examples/plugins` through the real Gemini CLI against `server`, into `d/<name>`.
fn run_example(d: &Path, name: &str, server: &ModelServer) -> std::process::Output {
    let out_dir = d.join(name).display().to_string();
    let ws = d.join("ws").display().to_string();
    assay_env(
        &repo(),
        &[
            "run",
            "examples/plugins",
            "--output-dir",
            &out_dir,
            "--workspace-dir",
            &ws,
        ],
        &gemini_env(server),
    )
}

const NOTES: &str = "---\nversion: 2.1.0\ndate: 2026-11-22\n---\n# Release 2.1.0\n\n## Highlights\n\nFaster grading.\n\n## Changes\n\n| Change | PR | Commit |\n|---|---|---|\n| Plugins | #12 | 3f2a9c1 |\n| Gemini CLI | #13 | 9b8e7d6 |\n\n## Upgrading\n\nFrom 2.0.4, nothing to do.\n";

#[test]
fn the_plugins_example_runs_through_the_real_gemini_cli() {
    wasm_plugins();
    agent_cli("gemini");
    let server = ModelServer::start();
    server.script(
        "/release-notes 2.1.0",
        vec![
            tool("write_file", json!({"file_path": "RELEASE_NOTES.md", "content": NOTES})),
            tool(
                "write_file",
                json!({"file_path": "release.json", "content": "{\"version\": \"2.1.0\", \"date\": \"2026-11-22\"}"}),
            ),
            text("Wrote RELEASE_NOTES.md and release.json for 2.1.0."),
        ],
    );
    let d = tempfile::tempdir().unwrap();
    let out = run_example(d.path(), "out", &server);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["release-notes"];
    assert_eq!(r["harness"], "gemini-cli");
    // The plugin harness's agent ran in the sandbox, reaching its model through the forwarder.
    assert_eq!(r["sandbox"]["kind"], "bwrap", "{r:#}");
    assert_eq!(r["sandbox"]["network"], "model", "{r:#}");
    assert_eq!(r["grade"]["verdict"], "pass", "{r:#}");
    assert_eq!(r["grade"]["checks_passed"], 7);
    assert_eq!(outcome(r, "sections")["provider"], "wasm:markdown");
    assert_eq!(
        outcome(r, "commits")["message"],
        "2 git-sha values found, at least 2 wanted"
    );
    assert_eq!(outcome(r, "manifest")["provider"], "wasm:json_schema");
    // The transcript came from Gemini CLI's stream through the plugin's parser.
    assert_eq!(r["tool_calls"]["write_file"], 2);
    assert_eq!(
        r["turns"][0]["final_message"],
        "Wrote RELEASE_NOTES.md and release.json for 2.1.0."
    );
    assert!(
        r["turns"][0]["session_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    let run = read_json(&d.path().join("out/run.json"));
    let names: Vec<&str> = run["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["markdown", "json_schema", "formats", "gemini_cli"]);
    assert_eq!(run["plugins"][0]["sandboxed"], true);
    assert!(
        server.requests().len() >= 3,
        "the CLI really talked to the server"
    );

    // The same checks fail on notes that lack what they ask for.
    let bad = ModelServer::start();
    bad.script(
        "/release-notes 2.1.0",
        vec![
            tool(
                "write_file",
                json!({"file_path": "RELEASE_NOTES.md", "content": "# Notes\n\nTODO\n"}),
            ),
            text("Done."),
        ],
    );
    let out = run_example(d.path(), "bad", &bad);
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("bad"))["release-notes"];
    assert_eq!(r["grade"]["checks_passed"], 0, "{r:#}");
    assert!(
        outcome(r, "sections")["message"]
            .as_str()
            .unwrap()
            .contains("missing heading(s): Highlights, Changes, Upgrading")
    );
    assert_eq!(
        outcome(r, "manifest")["message"],
        "release.json is not in the workspace"
    );
}

#[test]
fn a_gemini_api_error_is_a_categorised_failure() {
    wasm_plugins();
    agent_cli("gemini");
    let server = ModelServer::start();
    server.script(
        "/release-notes 2.1.0",
        vec![support::model_server::Reply::Error {
            status: 401,
            message: "API key not valid. Please pass a valid API key.".into(),
        }],
    );
    let d = tempfile::tempdir().unwrap();
    let out = run_example(d.path(), "out", &server);
    // A refused login is the infrastructure's error, never the skill failing: exit 3.
    assert_eq!(code(&out), 3, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["release-notes"];
    assert_eq!(r["status"], "error", "{r:#}");
    assert_eq!(r["error"]["category"], "auth", "{r:#}");
}

/// A project whose command agent prints "Hello, Ada!", with the hostile test plugin.
fn hostile_project(plugin_extra: &str, assertions: Value) -> tempfile::TempDir {
    let wasm = wasm_plugins().join("hostile.wasm");
    let d = tempfile::tempdir().unwrap();
    let toml = format!(
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"echo 'Hello, Ada!'\"]\n\n{}",
        toml_plugin(&wasm, plugin_extra)
    );
    let spec = json!({"skill_name": "h", "assertions": assertions}).to_string();
    write_tree(
        d.path(),
        &[
            ("assay.toml", &toml),
            (".claude/commands/h.md", "Say hello.\n"),
            (".claude/commands/h.eval.json", &spec),
        ],
    );
    d
}

#[test]
fn hostile_plugins_are_contained_and_every_other_result_is_kept() {
    wasm_plugins();
    let d = hostile_project(
        "timeout_ms = 300\nmemory_mib = 32",
        json!([
            {"id": "before", "type": "contains", "needle": "Hello"},
            {"id": "loop", "type": "loop"},
            {"id": "grow", "type": "grow"},
            {"id": "trap", "type": "trap"},
            {"id": "huge", "type": "huge"},
            {"id": "read", "type": "read-file", "path": "/etc/passwd"},
            {"id": "env", "type": "env"},
            {"id": "socket", "type": "socket", "addr": "127.0.0.1:9"},
            {"id": "echo", "type": "echo", "needle": "Ada"},
            {"id": "log", "type": "stderr"},
            {"id": "after", "type": "regex", "pattern": "Ada!$"}
        ]),
    );
    let started = std::time::Instant::now();
    let out = assay_env(
        d.path(),
        &["run", "--output-dir", "out"],
        &[("SECRET_TOKEN", "x".into())],
    );
    assert!(started.elapsed().as_secs() < 60, "bounded");
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["h"];
    let msg = |id: &str| outcome(r, id)["message"].as_str().unwrap().to_string();
    assert!(
        msg("loop").contains("ran past its 300 ms limit"),
        "{}",
        msg("loop")
    );
    assert!(
        msg("grow").contains("exceeded its 32 MiB memory limit"),
        "{}",
        msg("grow")
    );
    assert!(
        msg("trap").contains("trapped") && msg("trap").contains("this plugin traps"),
        "{}",
        msg("trap")
    );
    assert!(msg("huge").contains("memory limit"), "{}", msg("huge"));
    // Denied without a grant: no files, no variables, no sockets.
    assert!(
        msg("read").starts_with("could not read /etc/passwd"),
        "{}",
        msg("read")
    );
    assert_eq!(msg("env"), "sees 0 variables: ");
    assert_eq!(outcome(r, "env")["passed"], true);
    assert!(
        msg("socket").starts_with("could not connect"),
        "{}",
        msg("socket")
    );
    for id in ["loop", "grow", "trap", "huge"] {
        assert!(
            outcome(r, id)["error"].is_string(),
            "{id} is an error, not a verdict"
        );
    }
    // Everything else is intact, before and after the hostile ones.
    for id in ["before", "echo", "log", "after"] {
        assert_eq!(outcome(r, id)["passed"], true, "{id}: {r:#}");
    }
    assert_eq!(outcome(r, "log")["log"], "a line for the check's log");
    assert_eq!(r["grade"]["checks_total"], 11);
}

#[test]
fn grants_open_exactly_what_they_name() {
    wasm_plugins();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let checks = json!([
        {"id": "read", "type": "read-file", "path": "data/notes.txt"},
        {"id": "outside", "type": "read-file", "path": "/etc/passwd"},
        {"id": "env", "type": "env"},
        {"id": "socket", "type": "socket", "addr": addr},
        {"id": "other-socket", "type": "socket", "addr": "127.0.0.1:9"}
    ]);
    let d = hostile_project(
        &format!("read_dirs = [\"data\"]\nenv = [\"PLUGIN_TOKEN\"]\nnetwork = [\"{addr}\"]"),
        checks,
    );
    write_tree(d.path(), &[("data/notes.txt", "granted\n")]);
    let out = assay_env(
        d.path(),
        &["run", "--output-dir", "out"],
        &[("PLUGIN_TOKEN", "t".into()), ("OTHER_TOKEN", "o".into())],
    );
    let r = &results(&d.path().join("out"))["h"];
    let msg = |id: &str| outcome(r, id)["message"].as_str().unwrap().to_string();
    assert_eq!(
        msg("read"),
        "read 8 bytes of data/notes.txt",
        "{}",
        stdout(&out)
    );
    assert!(
        msg("outside").starts_with("could not read"),
        "{}",
        msg("outside")
    );
    assert_eq!(msg("env"), "sees 1 variables: PLUGIN_TOKEN");
    assert_eq!(msg("socket"), format!("connected to {addr}"));
    assert!(
        msg("other-socket").starts_with("could not connect"),
        "{}",
        msg("other-socket")
    );
    // The grants are recorded with the run.
    let run = read_json(&d.path().join("out/run.json"));
    assert_eq!(run["plugins"][0]["grants"]["env"], json!(["PLUGIN_TOKEN"]));
    assert_eq!(run["plugins"][0]["grants"]["network"], json!([addr]));
    drop(listener);
}

#[test]
fn plugin_types_are_validated_at_load_time_with_file_and_line() {
    wasm_plugins();
    let d = hostile_project(
        "",
        json!([
            {"id": "a", "type": "echo"},
            {"id": "b", "type": "ecko", "needle": "x"}
        ]),
    );
    let out = assay(d.path(), &["validate", "--format", "json"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let problems = v["problems"].as_array().unwrap();
    let refused = problems
        .iter()
        .find(|p| p["code"] == "bad-plugin-config")
        .unwrap();
    assert_eq!(
        refused["message"],
        "the `echo` plugin check refuses its configuration: `needle` is required: the text the output must contain"
    );
    assert_eq!(refused["field"], "assertions[0]");
    assert!(refused["line"].is_number(), "{refused}");
    let typo = problems
        .iter()
        .find(|p| p["code"] == "unknown-type")
        .unwrap();
    assert_eq!(
        typo["help"], "did you mean `echo`?",
        "plugin types are suggested too"
    );

    // A missing plugin file is bad input before anything runs.
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[("assay.toml", "[[plugin]]\npath = \"nope.wasm\"\n")],
    );
    let out = assay(d.path(), &["validate"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("nope.wasm: no such plugin file or folder"),
        "{}",
        stderr(&out)
    );
    // So is a file that is not a component.
    write_tree(d.path(), &[("notes.txt", "not a plugin\n")]);
    let out = assay(d.path(), &["validate", "--plugin", "notes.txt"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("neither a .wasm component nor a native library"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn inspect_lists_types_grants_and_needs() {
    let dir = wasm_plugins();
    let out = assay(
        &repo(),
        &[
            "plugin",
            "inspect",
            dir.join("markdown.wasm").to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    for want in [
        "sandboxed WebAssembly component, assay:plugin@0.3.0",
        "md-headings",
        "md-front-matter",
        "none declared: deny-by-default",
        "time 1000 ms per call, memory 64 MiB",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    let out = assay(
        &repo(),
        &[
            "plugin",
            "inspect",
            "--json",
            dir.join("gemini_cli.wasm").to_str().unwrap(),
        ],
    );
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["harnesses"][0]["name"], "gemini-cli");
    assert_eq!(v["harnesses"][0]["program"], "gemini");
    assert_eq!(v["wit"], "0.3.0");
    // The text says as much: the program, where skills go, the login and the endpoint.
    let out = assay(
        &repo(),
        &[
            "plugin",
            "inspect",
            dir.join("claude_code.wasm").to_str().unwrap(),
        ],
    );
    let text = stdout(&out);
    for want in [
        "program `claude`",
        "engines claude-code",
        "ANTHROPIC_BASE_URL",
        "env only if it reads variables",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    // A plugin built against WIT 0.1.0 (the gemini-cli adapter as it was) still loads, and is
    // described as 0.1.0 with what assay assumes for it.
    let old = repo().join("tests/fixtures/plugins/wit-0.1.0/gemini_cli.wasm");
    let out = assay(&repo(), &["plugin", "inspect", old.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("sandboxed WebAssembly component, assay:plugin@0.1.0"),
        "{}",
        stdout(&out)
    );
    let out = assay(
        &repo(),
        &["plugin", "inspect", "--json", old.to_str().unwrap()],
    );
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["wit"], "0.1.0");
    assert_eq!(v["harnesses"][0]["name"], "gemini-cli");
    assert_eq!(v["harnesses"][0]["engines"], json!([]));
    assert_eq!(v["harnesses"][0]["login"], Value::Null);
    // A 0.2.0 plugin still loads: its version asked with `--version`, no folders or kinds.
    let old = repo().join("tests/fixtures/plugins/wit-0.2.0/gemini_cli.wasm");
    let out = assay(
        &repo(),
        &["plugin", "inspect", "--json", old.to_str().unwrap()],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["wit"], "0.2.0");
    let h = &v["harnesses"][0];
    assert_eq!(h["version_args"], json!(["--version"]));
    assert_eq!(h["skill_folders"], json!([]));
    assert_eq!(h["error_kinds"], json!([]));
    // 0.3.0 says where its agent reads skills, how to ask its version, its own errors.
    let out = assay(
        &repo(),
        &["plugin", "inspect", dir.join("acme.wasm").to_str().unwrap()],
    );
    let text = stdout(&out);
    for want in [
        "program `acme-agent` (version from `acme-agent version`)",
        "skills go to .acme/skills",
        "own errors: quota (as rate-limit)",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    // 0.2.0 says where its agent reads skills, how it logs in and what it talks to.
    let out = assay(
        &repo(),
        &[
            "plugin",
            "inspect",
            "--json",
            dir.join("claude_code.wasm").to_str().unwrap(),
        ],
    );
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let h = &v["harnesses"][0];
    assert_eq!(h["name"], "claude-code-wasm");
    assert_eq!(h["engines"], json!(["claude-code"]));
    assert_eq!(h["login"]["files"], json!([".claude/.credentials.json"]));
    assert_eq!(
        h["endpoints"],
        json!([["ANTHROPIC_BASE_URL", "https://api.anthropic.com"]])
    );
    // The example's declaration gives the plugin its grants.
    let out = assay(
        &repo().join("examples/plugins"),
        &[
            "plugin",
            "inspect",
            "../../plugins/target/wasm32-wasip2/release/formats.wasm",
        ],
    );
    assert!(
        stdout(&out).contains("grants (from assay.toml)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_trusted_native_plugin_loads_only_with_allow_native_and_is_recorded_unsandboxed() {
    let lib = native_plugin();
    let d = tempfile::tempdir().unwrap();
    let spec = json!({"skill_name": "h", "assertions": [
        {"id": "lines", "type": "line-count", "min": 1, "max": 1},
        {"id": "two", "type": "line-count", "min": 2}
    ]})
    .to_string();
    let toml = |trusted: bool| {
        format!(
            "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"echo 'Hello, Ada!'\"]\n\n[[plugin]]\npath = \"{}\"\ntrusted = {trusted}\n",
            lib.display()
        )
    };
    write_tree(
        d.path(),
        &[
            ("assay.toml", &toml(false)),
            (".claude/commands/h.md", "Say hello.\n"),
            (".claude/commands/h.eval.json", &spec),
        ],
    );
    let out = assay(d.path(), &["run", "--output-dir", "out"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("runs unsandboxed, in assay's process, and loads only with --allow-native"),
        "{}",
        stderr(&out)
    );
    assert!(!d.path().join("out").exists(), "nothing ran");

    // `trusted = true` declares it native; it is not consent.
    write_tree(d.path(), &[("assay.toml", &toml(true))]);
    let out = assay(d.path(), &["run", "--output-dir", "out"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("assay.toml): ") && stderr(&out).contains("--allow-native"),
        "{}",
        stderr(&out)
    );
    assert!(!d.path().join("out").exists(), "nothing ran");
    let out = assay(d.path(), &["run", "--output-dir", "out", "--allow-native"]);
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["h"];
    assert_eq!(outcome(r, "lines")["passed"], true);
    assert_eq!(outcome(r, "two")["message"], "the output has 1 lines");
    assert_eq!(
        outcome(r, "lines")["provider"],
        "native:native_example (unsandboxed)"
    );
    let run = read_json(&d.path().join("out/run.json"));
    assert_eq!(run["plugins"][0]["sandboxed"], false);

    // Inspecting describes a native library without loading it, flag or not.
    let plain = tempfile::tempdir().unwrap();
    let lib_s = lib.display().to_string();
    for flag in [None, Some("--allow-native")] {
        let mut args = vec!["plugin", "inspect", &lib_s];
        args.extend(flag);
        let out = assay(plain.path(), &args);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert!(
            stdout(&out).contains("NATIVE library (ELF): runs unsandboxed")
                && stdout(&out).contains("not loaded"),
            "{}",
            stdout(&out)
        );
    }
}

#[test]
fn plugin_new_writes_templates_that_build_offline_and_pass_their_tests() {
    let built = wasm_plugins();
    let d = tempfile::tempdir().unwrap();
    // Share the plugins' build folder so dependencies compiled there are reused.
    let target = built.parent().unwrap().parent().unwrap().to_path_buf();
    for (name, kind) in [
        ("word-check", "assertion"),
        ("semver-format", "format"),
        ("my-agent", "harness"),
    ] {
        let out = assay(d.path(), &["plugin", "new", name, "--kind", kind]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let dir = d.path().join(name);
        for args in [
            vec!["test", "--offline", "--quiet"],
            vec![
                "build",
                "--offline",
                "--release",
                "--target",
                "wasm32-wasip2",
                "--quiet",
            ],
        ] {
            let o = std::process::Command::new("cargo")
                .args(&args)
                .current_dir(&dir)
                .env("CARGO_TARGET_DIR", &target)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{name}: cargo {args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let wasm = target.join(format!(
            "wasm32-wasip2/release/{}.wasm",
            name.replace('-', "_")
        ));
        let out = assay(d.path(), &["plugin", "inspect", wasm.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert!(stdout(&out).contains(name), "{}", stdout(&out));
    }
    // The harness scaffold targets the current WIT and says what its agent needs said.
    let agent = target.join("wasm32-wasip2/release/my_agent.wasm");
    let out = assay(d.path(), &["plugin", "inspect", agent.to_str().unwrap()]);
    for want in [
        "assay:plugin@0.3.0",
        "skills go to .my-agent/skills",
        "own errors: quota (as rate-limit)",
    ] {
        assert!(stdout(&out).contains(want), "{want}: {}", stdout(&out));
    }
    // The new check type works in a suite.
    let wasm = target.join("wasm32-wasip2/release/word_check.wasm");
    let p = d.path().join("proj");
    write_tree(
        &p,
        &[
            ("assay.toml", &toml_plugin(&wasm, "")),
            (".claude/commands/w.md", "Write.\n"),
            (
                ".claude/commands/w.eval.json",
                r#"{"skill_name": "w", "assertions": [{"id": "w", "type": "word-check", "word": "hello", "at_least": 2}]}"#,
            ),
            ("out.md", "Hello there. hello again.\n"),
        ],
    );
    let out = assay(
        &p,
        &[
            "grade",
            ".claude/commands/w.eval.json",
            "--output",
            "out.md",
        ],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("\"hello\" appears 2 times"),
        "{}",
        stdout(&out)
    );
    // Its settings are a typed struct: a misspelt key is refused when the suite loads.
    write_tree(
        &p,
        &[(
            ".claude/commands/w.eval.json",
            r#"{"skill_name": "w", "assertions": [{"id": "w", "type": "word-check", "wrod": "hello"}]}"#,
        )],
    );
    let out = assay(&p, &["validate"]);
    assert_eq!(code(&out), 2, "{}\n{}", stdout(&out), stderr(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(said.contains("unknown field `wrod`"), "{said}");
    // An existing folder is not overwritten; a bad name is refused.
    assert_eq!(code(&assay(d.path(), &["plugin", "new", "word-check"])), 2);
    assert_eq!(code(&assay(d.path(), &["plugin", "new", "Bad Name"])), 2);
}

#[test]
fn plugin_formats_check_extracted_fields_and_outputs() {
    let dir = wasm_plugins();
    use support::judge_server::{JudgeServer, says};
    let d = tempfile::tempdir().unwrap();
    let spec = json!({
        "skill_name": "v",
        "assertions": [{"id": "versions", "type": "has_format", "format": "semver", "count": 2}],
        "sections": [{"name": "Releases", "tiers": [{"label": "default", "min_entries": 1,
            "fields": [{"id": "r_version", "name": "version", "required": true, "format": "semver"}]}]}]
    })
    .to_string();
    write_tree(
        d.path(),
        &[
            ("assay.toml", &toml_plugin(&dir.join("formats.wasm"), "")),
            (".claude/commands/v.md", "List releases.\n"),
            (".claude/commands/v.eval.json", &spec),
            ("out.md", "Releases: 2.1.0 and 2.0.4.\n"),
        ],
    );
    let judge = JudgeServer::start(vec![says(json!({"sections": {"Releases": {"default": [
        {"version": "2.1.0"}, {"version": "v2.0"}
    ]}}}))]);
    let out = assay_env(
        d.path(),
        &[
            "grade",
            ".claude/commands/v.eval.json",
            "--output",
            "out.md",
            "--json",
        ],
        &[
            ("ASSAY_JUDGE", "anthropic".into()),
            ("ASSAY_JUDGE_BASE_URL", judge.url.clone()),
            ("ASSAY_JUDGE_API_KEY", "k".into()),
        ],
    );
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let g = &v["grading"];
    assert_eq!(
        outcome(g, "versions")["message"],
        "2 semver values found, at least 2 wanted"
    );
    let field = outcome(g, "r_version:format");
    assert_eq!(field["passed"], false);
    assert_eq!(field["evidence"], "entry 2: \"v2.0\"");
}

#[test]
fn a_check_type_written_in_python_runs_sandboxed() {
    let dir = repo().join("plugins/python-example");
    let found = std::process::Command::new("componentize-py")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    // Never a silent pass: without the tool the test fails, saying what to install.
    assert!(
        found,
        "componentize-py is not on PATH (pip install componentize-py)"
    );
    let built = std::process::Command::new("bash")
        .arg(dir.join("build.sh"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                &toml_plugin(&dir.join("py_word_limit.wasm"), "timeout_ms = 5000"),
            ),
            (".claude/commands/w.md", "Write.\n"),
            (
                ".claude/commands/w.eval.json",
                r#"{"skill_name": "w", "assertions": [
                  {"id": "short", "type": "py-word-limit", "max": 5},
                  {"id": "tight", "type": "py-word-limit", "max": 1}]}"#,
            ),
            ("out.md", "one two three\n"),
        ],
    );
    let out = assay(
        d.path(),
        &[
            "grade",
            ".claude/commands/w.eval.json",
            "--output",
            "out.md",
            "--json",
        ],
    );
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        outcome(&v["grading"], "short")["message"],
        "the output has 3 words, 0-5 wanted"
    );
    assert_eq!(outcome(&v["grading"], "tight")["passed"], false);
    // Its own validation runs at load time, like any plugin's.
    write_tree(
        d.path(),
        &[(
            ".claude/commands/w.eval.json",
            r#"{"skill_name": "w", "assertions": [{"id": "x", "type": "py-word-limit", "min": 3}]}"#,
        )],
    );
    let out = assay(d.path(), &["validate"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("`max` is required"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn gemini_is_offered_the_skill_under_test() {
    wasm_plugins();
    agent_cli("gemini");
    let server = ModelServer::start();
    let d = tempfile::tempdir().unwrap();
    let plugin = repo().join("plugins/target/wasm32-wasip2/release/gemini_cli.wasm");
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                &format!(
                    "[run]\nharness = \"gemini-cli\"\n\n[[plugin]]\npath = {:?}\n",
                    plugin.display().to_string()
                ),
            ),
            (
                "greeting/SKILL.md",
                "---\nname: greeting\ndescription: Writes greeting cards to greeting.txt.\n---\nWrite greeting.txt.\n",
            ),
            (
                "greeting/evals/evals.json",
                r#"{"skill_name": "greeting", "evals": [{"id": "g1", "prompt": "make a card", "expectations": []}]}"#,
            ),
        ],
    );
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--output-dir",
            "out",
            "--workspace-dir",
            "ws",
            "--baseline",
        ],
        &gemini_env(&server),
    );
    assert_ne!(code(&out), 2, "{}", stderr(&out));
    let requests: Vec<String> = server.requests().iter().map(|r| r.to_string()).collect();
    let offered = requests
        .iter()
        .filter(|r| r.contains("Writes greeting cards to greeting.txt."))
        .count();
    assert!(
        offered >= 1,
        "the skill run offers the skill: {requests:#?}"
    );
    assert!(
        offered < requests.len(),
        "the baseline's requests never list it: {requests:#?}"
    );
}

#[test]
fn a_harness_plugin_that_cannot_make_a_command_is_an_error_with_its_reason() {
    let d = hostile_project(
        "",
        json!([{"id": "a", "type": "contains", "needle": "Ada"}]),
    );
    let out = assay(
        d.path(),
        &[
            "run",
            "--harness",
            "refusing",
            "--output-dir",
            "out",
            "--workspace-dir",
            "ws",
        ],
    );
    assert_eq!(code(&out), 3, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["h"];
    assert_eq!(r["status"], "error", "{r:#}");
    assert_eq!(
        r["reason"], "the harness plugin failed: no command today",
        "{r:#}"
    );
    assert!(r["exit_code"].is_null(), "no process ran: {r:#}");
}

#[test]
fn an_event_a_harness_plugin_got_wrong_is_said_in_the_transcript_never_dropped() {
    let d = hostile_project("", json!([{"id": "a", "type": "min_length", "length": 1}]));
    let out = assay(
        d.path(),
        &[
            "run",
            "--harness",
            "garbled",
            "--output-dir",
            "out",
            "--workspace-dir",
            "ws",
        ],
    );
    assert_ne!(code(&out), 2, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("out"))["h"];
    let dir = std::path::Path::new(r["dir"].as_str().unwrap());
    let transcript = std::fs::read_to_string(dir.join("transcript.jsonl")).unwrap();
    let errors: Vec<&str> = transcript
        .lines()
        .filter(|l| l.contains("the harness plugin sent an event assay cannot read"))
        .collect();
    assert_eq!(
        errors.len(),
        2,
        "one per line the agent printed: {transcript}"
    );
    assert!(errors[0].contains("teleported"), "{}", errors[0]);
}

/// A project whose agent (the hostile plugin's `faulty` harness) runs each case's prompt with
/// `sh -c`: a calm case, one whose parser chatters on stderr, one whose parser panics and one
/// whose parser loops (the plugin's calls get 300 ms).
fn faulty_project() -> tempfile::TempDir {
    let wasm = wasm_plugins().join("hostile.wasm");
    let d = tempfile::tempdir().unwrap();
    let case = |name: &str, prompt: &str| {
        format!(
            "timestamp: 2026-11-26T00:00:00Z\nname: {name}\nprompt: \"{prompt}\"\nexpected: x\nassertions:\n  - type: contains\n    value: hello\n"
        )
    };
    write_tree(
        d.path(),
        &[
            ("assay.toml", &toml_plugin(&wasm, "timeout_ms = 300")),
            ("evals/f/1.yaml", &case("calm", "echo hello")),
            (
                "evals/f/2.yaml",
                &case("chatty", "echo chatter; echo hello"),
            ),
            ("evals/f/3.yaml", &case("panicky", "echo panic; echo hello")),
            ("evals/f/4.yaml", &case("loopy", "echo loop; echo hello")),
        ],
    );
    d
}

#[test]
fn a_harness_plugin_that_chatters_panics_or_loops_fails_alone_as_the_plugins_error() {
    let d = faulty_project();
    let out = assay(
        d.path(),
        &[
            "run",
            "--harness",
            "faulty",
            "--output-dir",
            "out",
            "--workspace-dir",
            "ws",
        ],
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    // Not a crash of assay (101), and not the skill failing (1): the plugin's faults are errors.
    assert_eq!(code(&out), 3, "{said}");
    assert!(!said.contains("Cannot start a runtime"), "{said}");
    let runs = results(&d.path().join("out"));
    assert_eq!(runs.len(), 4, "every case-run recorded: {said}");
    // By file: 1 calm, 2 chatty, 3 panicky, 4 loopy.
    for name in ["1", "2"] {
        let r = &runs[name];
        assert_eq!(
            r["grade"]["verdict"], "pass",
            "stderr chatter is harmless: {r:#}"
        );
    }
    for (name, why) in [("3", "the parser cannot read"), ("4", "300 ms")] {
        let r = &runs[name];
        assert_eq!(r["status"], "error", "{r:#}");
        assert_eq!(r["error"]["category"], "plugin", "{r:#}");
        let reason = r["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("hostile"), "names the plugin: {r:#}");
        assert!(reason.contains(why), "says why: {r:#}");
    }
}

/// A project run through the hostile plugin's `acme` harness, whose program `acme-agent` is
/// the script `agent` installed into `bin` (put on PATH): on `--version` it tries to leave
/// marks on the host (its working folder, HOME, `/tmp`) and prints a version.
fn acme_project(bin: &Path, mark: &str) -> tempfile::TempDir {
    let wasm = wasm_plugins().join("hostile.wasm");
    let d = tempfile::tempdir().unwrap();
    let agent = format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then\n  touch ./{mark} \"$HOME/{mark}\" /tmp/{mark}\n  echo 'acme-agent 1.4.2'\n  exit 0\nfi\necho \"hello from acme: $1\"\n"
    );
    std::fs::create_dir_all(bin).unwrap();
    std::fs::write(bin.join("acme-agent"), agent).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        bin.join("acme-agent"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                &format!("[run]\nharness = \"acme\"\n\n{}", toml_plugin(&wasm, "")),
            ),
            (
                "evals/a/1.yaml",
                "timestamp: 2026-11-26T00:00:00Z\nname: one\nprompt: go\nexpected: x\nassertions:\n  - type: contains\n    value: hello\n",
            ),
        ],
    );
    d
}

/// `assay <args>` in `dir` with `bin` first on PATH and HOME at `home`.
fn assay_with_path(dir: &Path, bin: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    assay_env(
        dir,
        args,
        &[("PATH", path), ("HOME", home.display().to_string())],
    )
}

#[test]
fn a_harness_program_asked_its_version_runs_in_the_sandbox_and_cannot_touch_the_host() {
    let tools = tempfile::tempdir().unwrap();
    let (bin, home) = (tools.path().join("bin"), tools.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let mark = format!("assay-acme-mark-{}", std::process::id());
    let d = acme_project(&bin, &mark);
    let marks = || {
        [
            home.join(&mark),
            std::env::temp_dir().join(&mark),
            Path::new("/tmp").join(&mark),
            d.path().join(&mark),
        ]
        .into_iter()
        .filter(|p| p.exists())
        .collect::<Vec<_>>()
    };
    let out = assay_with_path(d.path(), &bin, &home, &["doctor"]);
    assert!(
        marks().is_empty(),
        "doctor ran it on the host: {:?}",
        marks()
    );
    assert!(
        stdout(&out).contains("acme-agent 1.4.2"),
        "{}",
        stdout(&out)
    );
    let mut versions = Vec::new();
    for run in ["r1", "r2"] {
        let out = assay_with_path(
            d.path(),
            &bin,
            &home,
            &["run", "--harness", "acme", "--output-dir", run],
        );
        assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
        assert!(marks().is_empty(), "run ran it on the host: {:?}", marks());
        versions.push(read_json(&d.path().join(run).join("run.json"))["harnesses"]["acme"].clone());
    }
    assert_eq!(versions[0], "acme-agent 1.4.2");
    assert_eq!(versions[0], versions[1], "the same version each run");
    // A harness that says its program has no version flag: it is never run for one.
    let out = assay_with_path(
        d.path(),
        &bin,
        &home,
        &["run", "--harness", "acme-unversioned", "--output-dir", "r3"],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(marks().is_empty(), "run asked it anyway: {:?}", marks());
    let run = read_json(&d.path().join("r3/run.json"));
    assert_eq!(run["harnesses"]["acme-unversioned"], "");
}

#[test]
fn a_harness_program_the_sandbox_cannot_see_stops_the_run_before_any_case_runs() {
    let d = tempfile::tempdir().unwrap();
    // The agent installed in a folder on PATH that holds the project: the sandbox never shows
    // a folder holding the project, so the agent cannot be found inside it.
    let bin = d.path().join("acme");
    let mark = format!("assay-acme-inside-{}", std::process::id());
    let made = acme_project(&bin, &mark);
    let proj = bin.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    for e in std::fs::read_dir(made.path()).unwrap().flatten() {
        std::fs::rename(e.path(), proj.join(e.file_name())).unwrap();
    }
    let home = d.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = assay_with_path(
        &proj,
        &bin,
        &home,
        &["run", "--harness", "acme", "--output-dir", "out"],
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 3, "{said}");
    assert!(
        said.contains("cannot be started inside the sandbox"),
        "{said}"
    );
    assert!(said.contains("acme-agent"), "{said}");
    assert!(
        !proj.join("out").join("run.json").exists(),
        "nothing ran: {said}"
    );
    let out = assay_with_path(&proj, &bin, &home, &["doctor"]);
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert!(
        said.contains("cannot be started inside the sandbox"),
        "{said}"
    );
    // One with no version flag is looked up inside the sandbox all the same.
    let out = assay_with_path(
        &proj,
        &bin,
        &home,
        &[
            "run",
            "--harness",
            "acme-unversioned",
            "--output-dir",
            "out",
        ],
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 3, "{said}");
    assert!(said.contains("not found on the sandbox's PATH"), "{said}");
    assert!(!proj.join("out").join("run.json").exists(), "{said}");
}

#[test]
fn a_trigger_canary_whose_runs_cannot_tell_stops_the_run() {
    let wasm = wasm_plugins().join("hostile.wasm");
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                &format!(
                    "[run]\nharness = \"refusing\"\n\n{}",
                    toml_plugin(&wasm, "")
                ),
            ),
            (
                ".claude/skills/brief/SKILL.md",
                "---\nname: brief\ndescription: Writes briefs.\n---\nWrite a brief.\n",
            ),
            (
                ".claude/skills/brief/evals/evals.json",
                r#"{"evals": [{"id": "one", "prompt": "Write a brief.", "expectations": ["It is brief."]}]}"#,
            ),
            (
                ".claude/skills/brief/evals/triggers.json",
                r#"[{"query": "write me a brief", "should_trigger": true}]"#,
            ),
        ],
    );
    let out = assay(d.path(), &["run", "--output-dir", "out"]);
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 3, "{said}");
    assert!(
        said.contains("the trigger canary could not tell whether `brief` fires"),
        "{said}"
    );
    assert!(said.contains("no command today"), "{said}");
    assert!(
        !d.path().join("out/run.json").exists(),
        "nothing else ran: {said}"
    );
}

/// The acme example (`plugins/acme`): its agent `acme-agent` installed in `bin`, and its
/// example project (the skill in `.acme/skills/greeter`, where the agent reads it) copied to
/// a fresh folder, loading `wasm` (the example's adapter, or its fault drills).
fn acme_example(bin: &Path, wasm: &str) -> tempfile::TempDir {
    let example = repo().join("plugins/acme");
    std::fs::create_dir_all(bin).unwrap();
    std::fs::copy(example.join("agent/acme-agent"), bin.join("acme-agent")).unwrap();
    let d = tempfile::tempdir().unwrap();
    let cp = std::process::Command::new("cp")
        .args(["-R", "."])
        .arg(d.path())
        .current_dir(example.join("example"))
        .status()
        .unwrap();
    assert!(cp.success());
    let toml = std::fs::read_to_string(d.path().join("assay.toml")).unwrap();
    let wasm = wasm_plugins().join(wasm);
    let toml = toml.replace(
        "../../target/wasm32-wasip2/release/acme.wasm",
        &wasm.display().to_string(),
    );
    write_tree(d.path(), &[("assay.toml", &toml)]);
    d
}

#[test]
fn the_in_house_agent_example_runs_end_to_end_through_the_sandbox() {
    let tools = tempfile::tempdir().unwrap();
    let (bin, home) = (tools.path().join("bin"), tools.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let d = acme_example(&bin, "acme.wasm");
    let out = assay_with_path(d.path(), &bin, &home, &["run", "--output-dir", "out"]);
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    // The crash is the agent's failure; the quota, counted as a rate limit, the
    // infrastructure's error: exit 3.
    assert_eq!(code(&out), 3, "{said}");
    let run = read_json(&d.path().join("out/run.json"));
    assert_eq!(
        run["harnesses"]["acme"], "acme-agent 1.4.2",
        "asked with `version`"
    );
    let runs = results(&d.path().join("out"));
    let card = &runs["card"];
    assert_ne!(card["sandbox"]["kind"], "none", "{card:#}");
    assert_eq!(card["grade"]["verdict"], "pass", "{card:#}");
    assert_eq!(card["skills_invoked"], json!(["greeter"]), "{card:#}");
    let artifacts: Vec<&str> = card["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["path"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        artifacts,
        ["cards/ada.txt"],
        "the installed skill is no artifact"
    );
    let crash = &runs["crash"];
    assert_eq!(crash["status"], "failed", "{crash:#}");
    assert_eq!(crash["error"]["category"], "crash", "{crash:#}");
    assert!(
        crash["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("segmentation fault"),
        "{crash:#}"
    );
    // Its own error kind: kept as the kind, counted as declared, the summary kept whole.
    let quota = &runs["quota"];
    assert_eq!(quota["status"], "error", "{quota:#}");
    assert_eq!(quota["error"]["category"], "rate-limit", "{quota:#}");
    assert_eq!(quota["error"]["kind"], "quota", "{quota:#}");
    assert!(
        quota["reason"]
            .as_str()
            .unwrap_or_default()
            .starts_with("quota: "),
        "{quota:#}"
    );
    assert!(
        quota["turns"][0]["session_id"]
            .as_str()
            .is_some_and(|s| s.starts_with("acme-")),
        "{quota:#}"
    );
    // The trigger pair: fired 3 of 3, and 0 of 3.
    let fired = |id: &str| fired(&d.path().join("out/bmad_greeter"), id);
    assert_eq!((fired("trigger-1"), fired("trigger-2")), (3, 0), "{said}");

    // A baseline: the skill is gone from `.acme/skills`, where the project keeps it.
    let out = assay_with_path(
        d.path(),
        &bin,
        &home,
        &[
            "run",
            "--baseline",
            "--mode",
            "artifacts",
            "--output-dir",
            "base",
        ],
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    let card_dir = d.path().join("base/bmad_greeter/card");
    assert!(card_dir.is_dir(), "{said}");
    let base = results_by_folder(&card_dir);
    let base = base
        .iter()
        .find(|(k, _)| k.starts_with("baseline"))
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no baseline run: {said}"));
    assert_eq!(base["skills_invoked"], json!([]), "{base:#}");
    assert_eq!(base["artifacts"], json!([]), "{base:#}");
}

#[test]
fn the_in_house_agent_examples_adapter_failing_is_its_own_error_and_the_run_goes_on() {
    let tools = tempfile::tempdir().unwrap();
    let (bin, home) = (tools.path().join("bin"), tools.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let d = acme_example(&bin, "acme_drills.wasm");
    let cases = json!({"skill_name": "greeter", "evals": [
        {"id": "calm", "prompt": "Please write a greeting card for Ada.",
         "x-assay-checks": [{"type": "file_exists", "path": "cards/ada.txt"}]},
        {"id": "chatter", "prompt": "Please write a greeting card for Ada. drill:chatter",
         "x-assay-checks": [{"type": "file_exists", "path": "cards/ada.txt"}]},
        {"id": "panic", "prompt": "Please write a greeting card for Ada. drill:panic",
         "x-assay-checks": [{"type": "file_exists", "path": "cards/ada.txt"}]},
        {"id": "loop", "prompt": "Please write a greeting card for Ada. drill:loop",
         "x-assay-checks": [{"type": "file_exists", "path": "cards/ada.txt"}]},
    ]});
    std::fs::write(d.path().join("evals/greeter/evals.json"), cases.to_string()).unwrap();
    let out = assay_with_path(
        d.path(),
        &bin,
        &home,
        &["run", "--mode", "artifacts", "--output-dir", "out"],
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 3, "the plugin's faults are errors: {said}");
    assert!(!said.contains("thread 'main' panicked"), "{said}");
    let runs = results(&d.path().join("out"));
    assert_eq!(runs.len(), 4, "every case-run recorded: {said}");
    for id in ["calm", "chatter"] {
        assert_eq!(runs[id]["grade"]["verdict"], "pass", "{:#}", runs[id]);
    }
    for (id, why) in [("panic", "cannot read"), ("loop", "ms limit")] {
        let r = &runs[id];
        assert_eq!(r["status"], "error", "{r:#}");
        assert_eq!(r["error"]["category"], "plugin", "{r:#}");
        let reason = r["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("acme_drills"), "names the plugin: {r:#}");
        assert!(reason.contains(why), "says why: {r:#}");
    }
}

#[test]
fn a_harness_plugin_whose_skill_folders_leave_the_workspace_is_refused_before_anything_runs() {
    let wasm = wasm_plugins().join("escaping.wasm");
    let d = tempfile::tempdir().unwrap();
    let proj = d.path().join("a/b");
    write_tree(
        &proj,
        &[
            ("assay.toml", &toml_plugin(&wasm, "")),
            (
                ".claude/skills/greeter/SKILL.md",
                "---\nname: greeter\ndescription: Writes greeting cards\n---\nGreet.\n",
            ),
            (
                "evals/greeter/evals.json",
                r#"{"skill_name": "greeter", "evals": [{"id": "one", "prompt": "echo hi",
                    "x-assay-checks": [{"type": "contains", "value": "hi"}]}]}"#,
            ),
        ],
    );
    for args in [
        vec!["run", "--harness", "escaping", "--output-dir", "out"],
        vec![
            "run",
            "--harness",
            "escaping",
            "--baseline",
            "--output-dir",
            "out",
        ],
    ] {
        let out = assay(&proj, &args);
        let said = format!("{}\n{}", stdout(&out), stderr(&out));
        assert_eq!(code(&out), 2, "{said}");
        for want in [
            "skill folder `../../escaped` is not a plain relative folder",
            "skill folder `/tmp/escaped`",
            "error kind `crash` is assay's own category",
            "error kind `oom` counts as `limit`",
        ] {
            assert!(said.contains(want), "{want}: {said}");
        }
        assert!(!proj.join("out/run.json").exists(), "{said}");
    }
    // Nothing was installed where the folders point, from any workspace.
    assert!(!d.path().join("escaped").exists());
    assert!(!Path::new("/tmp/escaped/greeter").exists());
    // `plugin inspect` shows the plugin, and says what a run refuses it for.
    let out = assay(&proj, &["plugin", "inspect", wasm.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("refused by `assay run` (exit 2)"),
        "{}",
        stdout(&out)
    );
}

/// A harness plugin that declares its agent speaks ACP (`acme-acp`, in the acme example):
/// it gives only the command line, and assay's ACP client runs it through the sandbox and
/// reads the session: the skill (in the plugin's `.acme/skills`) loads, the file is
/// written and graded, the trigger pair fires 3/3 and 0/3, and a baseline has no skill.
#[test]
fn a_harness_plugin_whose_agent_speaks_acp_runs_through_assays_client() {
    let tools = tempfile::tempdir().unwrap();
    let bin = tools.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // The scripted agent is Python: the host's HOME stays (pyenv's python3 needs it).
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [("PATH", path)];
    std::fs::copy(
        repo().join("tests/fixtures/acp/fake-acp-agent"),
        bin.join("acme-acp-agent"),
    )
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    let wasm = wasm_plugins().join("acme.wasm");
    let checks = json!([
        {"type": "skill_invoked", "skill": "greeter"},
        {"type": "file_contains", "path": "card.txt", "needle": "written by fake-acp"}]);
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                &format!(
                    "[run]\nharness = \"acme-acp\"\n\n[[plugin]]\npath = \"{}\"\n",
                    wasm.display()
                ),
            ),
            (
                ".acme/skills/greeter/SKILL.md",
                "---\nname: greeter\ndescription: Writes greeting cards\n---\nWrite the card.\n",
            ),
            (
                "evals/greeter/evals.json",
                &json!({"skill_name": "greeter", "evals": [
                    {"id": "card", "prompt": "Use greeter, then write card.txt", "x-assay-checks": checks}]})
                .to_string(),
            ),
            (
                "evals/greeter/triggers.json",
                &json!([
                    {"query": "greeter: a card for Sam", "should_trigger": true},
                    {"query": "What is the capital of France?", "should_trigger": false}
                ])
                .to_string(),
            ),
        ],
    );
    let out = assay_env(d.path(), &["run", "--output-dir", "out"], &env);
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{said}");
    assert!(d.path().join("out").is_dir(), "{said}");
    let runs = results(&d.path().join("out"));
    let card = &runs["card"];
    assert_ne!(card["sandbox"]["kind"], "none", "{card:#}");
    assert_eq!(card["grade"]["verdict"], "pass", "{card:#}\n{said}");
    assert_eq!(card["skills_invoked"], json!(["greeter"]), "{card:#}");
    let raw = std::fs::read_to_string(d.path().join("out/bmad_greeter/card/run-1/raw.jsonl"))
        .unwrap_or_default();
    assert!(
        raw.contains(r#""bridge":"session""#),
        "run by assay's ACP client: {raw}"
    );
    let fired = |id: &str| fired(&d.path().join("out/bmad_greeter"), id);
    assert_eq!((fired("trigger-1"), fired("trigger-2")), (3, 0), "{said}");
    // A baseline: the skill is removed from the plugin's folder, and nothing loads it.
    let base = assay_env(
        d.path(),
        &[
            "run",
            "--baseline",
            "--mode",
            "artifacts",
            "--output-dir",
            "base",
        ],
        &env,
    );
    let runs = results(&d.path().join("base"));
    let card = &runs["card"];
    assert_eq!(
        card["skills_invoked"],
        json!([]),
        "{card:#}\n{}",
        stderr(&base)
    );
}
