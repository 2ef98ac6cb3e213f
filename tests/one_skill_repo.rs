//! A one-skill repository, as a new author lays it out: `SKILL.md`, `assay.toml` and `evals/`
//! in one folder, which is both the project and the skill. The installed skill is the skill's
//! files alone (never `.assay/`, the eval specs, `.git`); nothing is left in the temp folder;
//! a skill folder with no marker is its own project; one edited case re-runs one case.

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;
use support::model_server::{ModelServer, text, tool};
use support::*;

const SKILL: &str = "---\nname: greeter\ndescription: Writes greeting cards. Use when asked for a greeting.\n---\nWrite a short greeting.\n";

/// Three cases, each graded by one check that the output contains `needle`.
fn evals(needles: [&str; 3]) -> String {
    let case = |id: usize, needle: &str| {
        format!(
            r#"    {{"id": {id}, "prompt": "Greet person {id}.", "expectations": [],
     "x-assay-checks": [{{"type": "contains", "needle": "{needle}"}}]}}"#
        )
    };
    format!(
        "{{\"skill_name\": \"greeter\", \"evals\": [\n{},\n{},\n{}\n]}}",
        case(1, needles[0]),
        case(2, needles[1]),
        case(3, needles[2])
    )
}

/// A one-skill repository in `dir` whose `command` agent runs `agent` (a shell line), with a
/// `.git`, an earlier run's grading in `.assay/`, a fixture and a script of the skill's own.
fn one_skill_repo(dir: &Path, agent: &str) {
    let toml = format!(
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", {}]\n",
        serde_json::Value::String(agent.into())
    );
    write_tree(
        dir,
        &[
            ("SKILL.md", SKILL),
            ("scripts/card.sh", "echo card\n"),
            ("assay.toml", &toml),
            ("evals/evals.json", &evals(["ok", "ok", "ok"])),
            ("evals/files/names.txt", "Ada\n"),
            (".git/HEAD", "ref: refs/heads/main\n"),
            (
                ".assay/runs/20250101T000000Z/bmad_greeter/1/run-1/grading.json",
                r#"{"expectations": [{"text": "EARLIER-GRADED-EXPECTATION", "passed": true}]}"#,
            ),
            (".assay/history.jsonl", "{\"earlier\": true}\n"),
        ],
    );
}

/// Runs assay with the cache on, its key in `keys`, and `tmp` as the temp folder.
fn assay_cached(dir: &Path, keys: &Path, tmp: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("ASSAY_NO_CACHE")
        .env_remove("ASSAY_SANDBOX")
        .env("ASSAY_CACHE_KEY", keys.join("cache.key"))
        .env("XDG_DATA_HOME", keys.join("data"))
        .env("TMPDIR", tmp)
        .output()
        .expect("assay runs")
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_installed_skill_is_its_files_alone_and_nothing_is_left_in_the_temp_folder() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("greeter");
    // The agent lists every file of its workspace, then says ok.
    one_skill_repo(&repo, "find . -type f | sort; echo ok");
    let (keys, tmp) = (d.path().join("keys"), d.path().join("tmp"));
    std::fs::create_dir_all(&tmp).unwrap();
    assert!(entries(&tmp).is_empty());
    let out = assay_cached(&repo, &keys, &tmp, &["run", ".", "--output-dir", "r1"]);
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{said}");
    let runs = results(&repo.join("r1"));
    assert_eq!(runs.len(), 3, "{said}");
    let dir = Path::new(runs["1"]["dir"].as_str().unwrap()).to_path_buf();
    let listed = std::fs::read_to_string(dir.join("output.txt")).unwrap();
    // Every engine's skill folder holds the skill's files, and only those.
    for root in ["./.claude/skills/greeter", "./.agents/skills/greeter"] {
        let mut installed: Vec<&str> = listed
            .lines()
            .filter_map(|l| l.strip_prefix(root))
            .collect();
        installed.sort();
        assert_eq!(installed, ["/SKILL.md", "/scripts/card.sh"], "{listed}");
    }
    // Nothing of `.assay/`, `.git` or the specs anywhere in the workspace.
    for never in [
        ".assay",
        ".git/",
        "evals.json",
        "assay.toml",
        "grading.json",
    ] {
        assert!(
            !listed.contains(never),
            "{never} in the workspace:\n{listed}"
        );
    }
    let prompt = std::fs::read_to_string(dir.join("prompt.txt")).unwrap_or_default();
    assert!(!prompt.contains("EARLIER-GRADED"), "{prompt}");
    // The workspaces (and their shared copies) are gone when assay ends.
    assert!(
        entries(&tmp).is_empty(),
        "left in the temp folder: {:?}",
        entries(&tmp)
    );
}

/// The text of the `tool_result` blocks of a request to the model, if it has any.
fn tool_result(request: &serde_json::Value) -> Option<String> {
    let blocks: Vec<String> = request["messages"]
        .as_array()?
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect();
    (!blocks.is_empty()).then(|| blocks.join("\n"))
}

#[test]
fn claude_code_sees_the_skills_files_alone_in_its_skill_folder() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    // The agent looks into its installed skill, and for an earlier run's grading there.
    server.script_each(
        "Greet person",
        None,
        vec![
            tool(
                "Bash",
                json!({"command": "ls -aR .claude/skills/greeter; cat .claude/skills/greeter/.assay/runs/*/*/1/run-1/grading.json .claude/skills/greeter/evals/evals.json 2>/dev/null; true"}),
            ),
            text("ok"),
        ],
    );
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("greeter");
    one_skill_repo(&repo, "echo ok");
    let mut env = claude_env(&claude, &server);
    env.push(("TMPDIR", d.path().join("tmp").display().to_string()));
    std::fs::create_dir_all(d.path().join("tmp")).unwrap();
    // Unsandboxed: what is installed does not depend on the sandbox, and the pinned CLI lives
    // in the checkout, which the sandbox does not show.
    let out = assay_env(
        &repo,
        &[
            "run",
            ".",
            "--harness",
            "claude-code",
            "--pass-env",
            "CLAUDE_CODE_MAX_RETRIES",
            "--sandbox",
            "none",
            "--output-dir",
            "out",
        ],
        &env,
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{said}");
    // What the CLI sent back to the model after running the command: the tool's result.
    let results: Vec<String> = server.requests().iter().filter_map(tool_result).collect();
    assert_eq!(results.len(), 3, "{said}");
    for r in &results {
        assert!(r.contains("SKILL.md") && r.contains("card.sh"), "{r}");
        for never in [
            "EARLIER-GRADED",
            ".assay",
            "assay.toml",
            "HEAD",
            "Greet person 2",
        ] {
            assert!(!r.contains(never), "{never} reached the agent: {r}");
        }
    }
    assert!(entries(&d.path().join("tmp")).is_empty());
}

#[test]
fn a_skill_folder_without_a_marker_is_its_own_project() {
    let d = tempfile::tempdir().unwrap();
    let skill = d.path().join("x/skill");
    write_tree(
        &skill,
        &[
            ("SKILL.md", SKILL),
            ("evals/evals.json", &evals(["ok", "ok", "ok"])),
        ],
    );
    // Beside it, another user's project: never copied into a workspace.
    write_tree(d.path(), &[("other/secret.txt", "not yours\n")]);
    let out = assay(
        &skill,
        &[
            "run",
            ".",
            "--harness",
            "command",
            "--command",
            "sh -c 'ls -a; echo ok'",
            "--sandbox",
            "none",
            "--output-dir",
            "r1",
        ],
    );
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{said}");
    let run = read_json(&skill.join("r1/run.json"));
    let projects: Vec<&String> = run["projects"].as_object().unwrap().keys().collect();
    let want = skill.canonicalize().unwrap();
    assert_eq!(projects.len(), 1, "{run:#}");
    assert_eq!(
        Path::new(projects[0]).canonicalize().unwrap(),
        want,
        "the project is the folder given: {run:#}"
    );
    let runs = results(&skill.join("r1"));
    let dir = Path::new(runs["1"]["dir"].as_str().unwrap());
    let listed = std::fs::read_to_string(dir.join("output.txt")).unwrap();
    assert!(listed.contains("SKILL.md"), "{listed}");
    assert!(
        !listed.contains("other"),
        "the parent was copied:\n{listed}"
    );

    let list = assay(&skill, &["list", ".", "--json"]);
    let suites: serde_json::Value = serde_json::from_str(&stdout(&list)).unwrap();
    assert_eq!(
        Path::new(suites[0]["project_root"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        want
    );
}

#[test]
fn one_edited_case_runs_one_agent_run() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("greeter");
    one_skill_repo(&repo, "echo ok");
    let (keys, tmp) = (d.path().join("keys"), d.path().join("tmp"));
    std::fs::create_dir_all(&tmp).unwrap();
    let run = |out: &str| {
        let o = assay_cached(&repo, &keys, &tmp, &["run", ".", "--output-dir", out]);
        let said = format!("{}\n{}", stdout(&o), stderr(&o));
        (code(&o), said)
    };
    let (c, said) = run("r1");
    assert_eq!(c, 0, "{said}");
    assert!(
        said.contains("plan: 3 case-runs (3 case runs): 3 agent runs\n"),
        "{said}"
    );

    // Case 3's check changes: case 3 alone runs again (and now fails).
    std::fs::write(repo.join("evals/evals.json"), evals(["ok", "ok", "nope"])).unwrap();
    let (c, said) = run("r2");
    assert_eq!(c, 1, "{said}");
    assert!(
        said.contains(
            "plan: 3 case-runs (3 case runs): 1 agent run, 2 already done (cache or --resume)"
        ),
        "{said}"
    );
    let r2 = results(&repo.join("r2"));
    assert!(r2["1"].get("cached").is_some(), "{said}");
    assert!(r2["2"].get("cached").is_some(), "{said}");
    assert!(r2["3"].get("cached").is_none(), "{said}");

    // The file reformatted (every case on other lines, a trailing newline): nothing runs.
    let text = std::fs::read_to_string(repo.join("evals/evals.json")).unwrap();
    std::fs::write(
        repo.join("evals/evals.json"),
        format!("\n\n{}\n", text.replace("[\n", "[\n\n")),
    )
    .unwrap();
    let (c, said) = run("r3");
    assert_eq!(c, 1, "{said}");
    assert!(
        said.contains(
            "plan: 3 case-runs (3 case runs): 0 agent runs, 3 already done (cache or --resume)"
        ),
        "{said}"
    );

    // The skill itself changes: every case runs again.
    std::fs::write(repo.join("SKILL.md"), format!("{SKILL}Be warm.\n")).unwrap();
    let (_, said) = run("r4");
    assert!(
        said.contains("plan: 3 case-runs (3 case runs): 3 agent runs\n"),
        "{said}"
    );
}

/// The lines up to (and with) the next "waiting for changes".
fn pass(rx: &mpsc::Receiver<String>) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut lines = Vec::new();
    while Instant::now() < deadline {
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
            let done = l.contains("waiting for changes");
            lines.push(l);
            if done {
                return lines;
            }
        }
    }
    panic!("no pass ended within 60 s: {lines:#?}");
}

#[test]
fn in_watch_a_trailing_newline_reruns_nothing() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("greeter");
    one_skill_repo(&repo, "echo ok");
    let keys = d.path().join("keys");
    let mut child = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["watch", "--debounce", "100"])
        .current_dir(&repo)
        .env("NO_COLOR", "1")
        .env_remove("ASSAY_NO_CACHE")
        .env_remove("ASSAY_SANDBOX")
        .env("ASSAY_CACHE_KEY", keys.join("cache.key"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    for stream in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let first = pass(&rx).join("\n");
    assert!(first.contains("3 case-runs: 3 passed"), "{first}");
    let file = repo.join("evals/evals.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}\n")).unwrap();
    // The pass the newline started (a stray event may start one before it).
    let mut second = String::new();
    for _ in 0..3 {
        second = pass(&rx).join("\n");
        if second.contains("evals/evals.json") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(second.contains("changed: evals/evals.json"), "{second}");
    assert!(
        second.contains("0 agent runs, 3 already done (cache or --resume)"),
        "{second}"
    );
    assert_eq!(second.matches("(from the cache)").count(), 3, "{second}");
}
