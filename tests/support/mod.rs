//! Shared helpers for the CLI integration tests.

pub mod judge_server;
pub mod model_server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A stdio MCP server (`python3 -c`) offering one tool, `pkg_echo_tool` (newline-delimited
/// JSON-RPC); a call of it leaves `mcp-called.txt` in the working folder.
pub const MCP_ECHO_SERVER: &str = r#"
import sys, json
for line in sys.stdin:
    try:
        m = json.loads(line)
    except Exception:
        continue
    if m.get("id") is None:
        continue
    meth = m.get("method")
    if meth == "initialize":
        r = {"protocolVersion": m.get("params", {}).get("protocolVersion", "2025-06-18"),
             "capabilities": {"tools": {}}, "serverInfo": {"name": "pkgecho", "version": "1"}}
    elif meth == "tools/list":
        r = {"tools": [{"name": "pkg_echo_tool", "description": "Echoes for the package test.",
                        "inputSchema": {"type": "object", "properties": {}}}]}
    elif meth == "tools/call":
        open("mcp-called.txt", "w").write("called\n")
        r = {"content": [{"type": "text", "text": "echoed"}]}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
    sys.stdout.flush()
"#;

/// Serves `app` on a free 127.0.0.1 port from its own thread; returns its base URL.
pub fn serve(app: axum::Router) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    url
}

/// A BMAD eval asking for a greeting card for Ada: the end-to-end tests' shared fixture.
pub const GREETING_EVALS: &str = r#"{"evals": [{"id": "ada", "prompt": "Write a greeting card for Ada.", "expectations": ["greeting.txt exists"]}]}"#;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the real `assay` binary in `dir` with a plain, colourless environment.
pub fn assay(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        // Every test sees its case-runs really run; the cache's own tests turn it back on.
        .env("ASSAY_NO_CACHE", "1")
        .output()
        .expect("assay runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Writes `files` (path, contents) under `root`, creating folders.
pub fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// A project of one skill `name` (in `.claude/skills/`, its SKILL.md `skill_md`) and one
/// skill-creator eval of it (`evals/<name>/evals.json`), with `toml` as its `assay.toml`.
pub fn one_skill_project(
    root: &Path,
    toml: &str,
    name: &str,
    skill_md: &str,
    eval: serde_json::Value,
) {
    write_tree(
        root,
        &[
            ("assay.toml", toml),
            (&format!(".claude/skills/{name}/SKILL.md"), skill_md),
            (
                &format!("evals/{name}/evals.json"),
                &serde_json::json!({"skill_name": name, "evals": [eval]}).to_string(),
            ),
        ],
    );
}

/// The pinned agent CLI installed by `.ci/run` (`npm ci --prefix tests/agents`), or `None`
/// with a printed reason. Under CI a missing CLI fails the test instead.
pub fn agent_cli(name: &str) -> PathBuf {
    // The folder by its real path: a worktree's `node_modules` may be a link to another
    // checkout's, which the sandbox shows only by its own path.
    let modules = repo().join("tests/agents/node_modules");
    let modules = std::fs::canonicalize(&modules).unwrap_or(modules);
    let p = modules.join(".bin").join(name);
    if p.exists() {
        return p;
    }
    // Never a silent pass: a test that cannot run its agent fails, saying what to install.
    panic!("{name} CLI not installed: run `npm install --prefix tests/agents` (or scripts/test)")
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

/// The `result.json` of every case-run in a run folder, keyed by `case`.
pub fn results(run_dir: &Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    case_runs(run_dir)
        .into_iter()
        .map(|(_, v)| (v["case"].as_str().unwrap().to_string(), v))
        .collect()
}

/// The `result.json` of every case-run in a run folder, keyed by its folder's name (`run-1`,
/// `baseline-2`, `variant-1`, …), with `dir` set to the folder.
pub fn results_by_folder(run_dir: &Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    case_runs(run_dir)
        .into_iter()
        .map(|(dir, mut v)| {
            v["dir"] = serde_json::json!(dir.display().to_string());
            (dir.file_name().unwrap().to_string_lossy().into_owned(), v)
        })
        .collect()
}

/// How many runs of a trigger query (`<run_dir>/<suite>/<id>/run-*`) saw the skill fire.
pub fn fired(suite_dir: &Path, id: &str) -> usize {
    results_by_folder(&suite_dir.join(id))
        .values()
        .filter(|r| r["trigger"]["fired"] == true)
        .count()
}

/// Each case-run folder under `run_dir` with its `result.json`.
fn case_runs(run_dir: &Path) -> Vec<(PathBuf, serde_json::Value)> {
    let mut out = Vec::new();
    let mut stack = vec![run_dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "result.json") {
                let v = read_json(&p);
                record_raw(&p, &v);
                out.push((d.clone(), v));
            }
        }
    }
    out
}

/// With `ASSAY_RECORD_RAW=<dir>`, keeps each case-run's `raw.jsonl` (what the agent printed)
/// and `result.json` as `<dir>/<test>--<case>-<variant>-<run>-<harness>.{jsonl,result.json}`:
/// how the recorded streams in tests/fixtures/streams were made (see its README).
fn record_raw(result_json: &Path, v: &serde_json::Value) {
    let Some(dir) = std::env::var_os("ASSAY_RECORD_RAW") else {
        return;
    };
    let raw = result_json.with_file_name("raw.jsonl");
    if !raw.is_file() {
        return;
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("test")
        .replace("::", "-");
    // The case-run's folder names its run.
    let folder = result_json
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = format!(
        "{test}--{}-{}-{folder}-{}",
        v["case"].as_str().unwrap_or(""),
        v["variant"].as_str().unwrap_or(""),
        v["harness"].as_str().unwrap_or("")
    )
    .replace(['/', ' '], "_");
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&raw, dir.join(format!("{name}.jsonl"))).unwrap();
    std::fs::copy(result_json, dir.join(format!("{name}.result.json"))).unwrap();
}

/// The environment that points the real Claude Code CLI at a scripted server.
pub fn claude_env(
    claude: &Path,
    server: &model_server::ModelServer,
) -> Vec<(&'static str, String)> {
    vec![
        ("ASSAY_CLAUDE_BIN", claude.display().to_string()),
        ("ANTHROPIC_BASE_URL", server.url.clone()),
        ("ANTHROPIC_API_KEY", "sk-assay-test".into()),
        ("CLAUDE_CODE_MAX_RETRIES", "0".into()),
        // These tests are about the agent; judging has its own tests.
        ("ASSAY_JUDGE", "none".into()),
    ]
}

/// [`claude_env`], with the judge an Anthropic one at `judge_url` (the scripted judge server).
pub fn claude_judged_env(
    claude: &Path,
    server: &model_server::ModelServer,
    judge_url: &str,
) -> Vec<(&'static str, String)> {
    let mut env = claude_env(claude, server);
    env.retain(|(k, _)| *k != "ASSAY_JUDGE");
    env.extend([
        ("ASSAY_JUDGE", "anthropic".to_string()),
        ("ASSAY_JUDGE_BASE_URL", judge_url.to_string()),
        ("ASSAY_JUDGE_API_KEY", "sk-judge".to_string()),
    ]);
    env
}

/// The environment that points the real Codex CLI at a scripted server.
pub fn codex_env(codex: &Path, server: &model_server::ModelServer) -> Vec<(&'static str, String)> {
    vec![
        ("ASSAY_CODEX_BIN", codex.display().to_string()),
        ("OPENAI_BASE_URL", format!("{}/v1", server.url)),
        ("OPENAI_API_KEY", "sk-assay-test".into()),
        ("ASSAY_JUDGE", "none".into()),
    ]
}

/// Runs `assay` in `dir` with `args` and extra environment variables.
pub fn assay_env(dir: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("ASSAY_NO_CACHE", "1")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("CLAUDE_CODE_OAUTH_TOKEN")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("assay runs")
}

/// Builds assay's first-party and test plugins once per test binary (`cargo build --release
/// --target wasm32-wasip2` in `plugins/`) and returns the folder of `.wasm` files. Without the
/// wasm32-wasip2 target it skips (returns `None`) with a reason, or fails under CI.
pub fn wasm_plugins() -> PathBuf {
    static BUILT: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let dir = repo().join("plugins");
        let out = Command::new("cargo")
            .args([
                "build",
                "--release",
                "--target",
                "wasm32-wasip2",
                "--workspace",
                "--exclude",
                "native-example",
            ])
            .current_dir(&dir)
            .env_remove("CARGO_TARGET_DIR")
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(dir.join("target/wasm32-wasip2/release"))
    });
    match built {
        Ok(p) => p.clone(),
        Err(e) => panic!("the plugins did not build (rustup target add wasm32-wasip2?): {e}"),
    }
}

/// Builds the example native plugin for the host and returns the library's path.
pub fn native_plugin() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = repo().join("plugins");
            let out = Command::new("cargo")
                .args(["build", "--release", "-p", "native-example"])
                .current_dir(&dir)
                .env_remove("CARGO_TARGET_DIR")
                .output()
                .expect("cargo runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            dir.join("target/release/libnative_example.so")
        })
        .clone()
}

/// The environment that points the real Gemini CLI (through the gemini-cli harness plugin)
/// at a scripted server.
pub fn gemini_env(server: &model_server::ModelServer) -> Vec<(&'static str, String)> {
    let bin = repo().join("tests/agents/node_modules/.bin");
    vec![
        (
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        ),
        ("GOOGLE_GEMINI_BASE_URL", server.url.clone()),
        ("GEMINI_API_KEY", "assay-test-key".into()),
        ("ASSAY_JUDGE", "none".into()),
    ]
}

/// A Skillet case for the sandbox's tests: it passes when the agent says `finished`. (The
/// comment is a token only the spec holds, to see whether an agent can read its spec.)
pub const HOSTILE_CASE: &str = "# grading-secret-7f3a\ntimestamp: 2026-11-22T00:00:00Z\nname: hostile\nprompt: go\nexpected: x\nassertions:\n  - type: contains\n    value: finished\n";

/// A project whose agent is `bash hostile.sh` running `script`, with [`HOSTILE_CASE`].
pub fn hostile_project(dir: &Path, script: &str) {
    write_tree(
        dir,
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"bash\", \"hostile.sh\"]\n",
            ),
            ("hostile.sh", script),
            ("evals/hostile/001.yaml", HOSTILE_CASE),
        ],
    );
}

/// `assay run .` in `dir`, colourless, every case-run really run, under the default sandbox
/// whatever the calling environment says; add arguments and variables to it.
pub fn assay_run(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_assay"));
    c.args(["run", "."])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("ASSAY_NO_CACHE", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("ASSAY_SANDBOX")
        .env_remove("ASSAY_NETWORK");
    c
}

/// [`assay_run`] in `project` under the sandbox `backend`, with a private HOME at `<d>/home`
/// (made here), the run folder at `<d>/run` and the workspaces under `<d>/ws`.
pub fn contained(d: &Path, project: &Path, backend: &str) -> Command {
    std::fs::create_dir_all(d.join("home")).unwrap();
    let mut c = assay_run(project);
    c.args(["--sandbox", backend])
        .arg("--output-dir")
        .arg(d.join("run"))
        .arg("--workspace-dir")
        .arg(d.join("ws"))
        .env("HOME", d.join("home"));
    c
}

/// An agent run with `--network none` failed to reach its model, and its case-run `case` in
/// `run_dir` says so: an error of the infrastructure (never the skill's failure), category
/// `network`, and why (exit 3).
pub fn assert_offline(out: &Output, run_dir: &Path, case: &str) {
    assert_eq!(code(out), 3, "{}\n{}", stdout(out), stderr(out));
    let r = &results(run_dir)[case];
    assert_eq!(r["status"], "error", "{r:#}");
    assert_eq!(r["error"]["category"], "network", "{r:#}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap_or_default()
            .ends_with("(the sandbox has no network: --network none)"),
        "{r:#}"
    );
}

/// What the agent of [`hostile_project`] said (its `output.txt` in `run_dir`); the run's own
/// output when there is none.
pub fn hostile_output(run_dir: &Path, out: &Output) -> String {
    std::fs::read_to_string(run_dir.join("skillet_hostile/001/run-1/output.txt"))
        .unwrap_or_else(|e| panic!("{e}\n{}\n{}", stdout(out), stderr(out)))
}

/// A fresh copy of one of the repository's examples (`examples/quickstart`, …), hidden files
/// included, in a temporary folder.
pub fn copy_example(example: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let status = Command::new("cp")
        .arg("-r")
        .arg(format!("{}/.", repo().join(example).display()))
        .arg(d.path())
        .status()
        .unwrap();
    assert!(status.success(), "copying {example}");
    d
}

/// Scripts the trigger canary ("Use the <skill> skill.") to fire the skill, as a real model
/// does when a request names it.
pub fn fire_canary(server: &model_server::ModelServer, skill: &str) {
    server.script_each(
        &assay::run::canary::query(skill),
        None,
        vec![
            model_server::tool("Skill", serde_json::json!({"skill": skill})),
            model_server::text("done"),
        ],
    );
}

/// The DOM of the page at `url` after its scripts ran, in headless Chromium, and what the
/// browser logged (CSP violations among it).
pub fn dump_dom(url: &str) -> (String, String) {
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--dump-dom",
        ])
        .arg(url)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{log}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), log)
}

/// Chromium (Debian `chromium`) for the HTML tests; without it they fail, saying what to
/// install (never a silent pass).
pub fn chromium() -> String {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return name.to_string();
        }
    }
    panic!("no chromium on PATH (apt-get install chromium)")
}

/// Whether a process whose command line has `needle` as an argument is alive (not a zombie).
pub fn process_with_arg(needle: &str) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.flatten().any(|e| {
        let p = e.path();
        let cmd = std::fs::read(p.join("cmdline")).unwrap_or_default();
        let has = cmd.split(|b| *b == 0).any(|a| a == needle.as_bytes());
        let zombie = std::fs::read_to_string(p.join("stat"))
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.starts_with('Z')))
            .unwrap_or(true);
        has && !zombie
    })
}

/// The fenced ```yaml blocks of a Markdown file: (first line number, text).
pub fn yaml_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, Vec<&str>)> = None;
    for (i, line) in markdown.lines().enumerate() {
        match &mut open {
            None if line.trim_start().starts_with("```yaml") => open = Some((i + 2, Vec::new())),
            None => {}
            Some(_) if line.trim_start().starts_with("```") => {
                if let Some((first, body)) = open.take() {
                    blocks.push((first, body.join("\n") + "\n"));
                }
            }
            Some((_, body)) => body.push(line),
        }
    }
    blocks
}

/// One test per Linux sandbox backend: `fn name(backend: &str) { … }` becomes that function
/// and `mod name { #[test] fn bwrap(); #[test] fn landlock(); }` calling it, so a failure
/// names the backend (`name::landlock`).
macro_rules! per_backend {
    ($(#[$m:meta])* fn $name:ident($b:ident: &str) $body:block) => {
        $(#[$m])*
        fn $name($b: &str) $body
        mod $name {
            #[test]
            fn bwrap() {
                super::$name("bwrap")
            }
            #[test]
            fn landlock() {
                super::$name("landlock")
            }
        }
    };
}
