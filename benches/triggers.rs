//! Trigger evals against skill-creator's `run_eval.py` (issue 46): 30 queries × 3 runs through
//! the real Claude Code CLI and OpenCode, against the scripted model server, counting what a
//! trigger verdict (one run of one query: fired or not) costs in model requests, tokens and
//! wall time, for `run_eval.py`, assay with `--trigger-full-runs` (before: every run goes to
//! the agent's end) and assay by default (after: a run stops once the skill under test has
//! loaded). assay's two must give the same verdict on every run. Then `assay optimize
//! description` (one round of 3 candidates) with and without `--trigger-full-runs`.
//!
//! Run with `cargo bench --bench triggers` (arguments pick parts: `claude-code`, `opencode`,
//! `optimize`; `TRIGGERS_RUNS` sets the runs per query, 3 by default). `run_eval.py` is read
//! at pinned commits from a clone of anthropics/skills: `ASSAY_SKILLS_GIT` names its git folder,
//! else the bench clones it into `target/triggers-bench/skills.git` (needs the network).
//! Figures are kept in docs/benchmarks.md.

#[path = "../tests/support/mod.rs"]
#[allow(dead_code, unused_macros)]
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

use serde_json::{Value, json};
use support::judge_server::{JudgeReply, JudgeServer};
use support::model_server::{ModelServer, Reply, text, tool};

/// skill-creator's `run_eval.py` driving `claude -p`: anthropics/skills' main (2026-07-01).
const CLAUDE_RUN_EVAL: &str = "9d2f1ae187231d8199c64b5b762e1bdf2244733d";
/// The OpenCode adaptation of skill-creator (`opencode run --format json`), 2026-03-16, a
/// commit offered to anthropics/skills but not on its main.
const OPENCODE_RUN_EVAL: &str = "9108b7fa0b2b16fe8866eab448072feeb2dac1a6";

/// The words that make the optimiser's scripted model load the skill after reading.
const KEYWORD: &str = "zebra-cards";

const SKILL: &str = "---\nname: greeting\ndescription: Writes greeting cards into cards/. Use for greeting cards, birthday cards and thank-you notes.\n---\nWrite the card to cards/<name>.txt.\n";

/// What a query's scripted model does.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Loads the skill at once, then a 6-step task.
    Task,
    /// Two read-only steps, then loads the skill (and one step more).
    Reads,
    /// Never loads it: a few read-only steps and an answer.
    Not,
}

/// The 30 queries: 10 of each kind, each with a tag no other contains.
fn queries() -> Vec<(String, Kind)> {
    let task = "write a greeting card for Ada and file it with the others";
    let reads = "look at the notes here first, then make a thank-you card for the team";
    let not = "how many files in this folder mention invoices?";
    (1..=30)
        .map(|i| match (i - 1) / 10 {
            0 => (format!("Q{i:02}: {task}"), Kind::Task),
            1 => (format!("Q{i:02}: {reads}"), Kind::Reads),
            _ => (format!("Q{i:02}: {not}"), Kind::Not),
        })
        .collect()
}

/// One agent CLI: how assay names it, how its tools are called, how it reaches the server.
struct Agent {
    harness: &'static str,
    cli: PathBuf,
    skill: fn() -> Reply,
    glob: fn() -> Reply,
    grep: fn() -> Reply,
    step: fn(usize) -> Reply,
}

fn claude_code() -> Agent {
    Agent {
        harness: "claude-code",
        cli: support::agent_cli("claude"),
        skill: || tool("Skill", json!({"skill": "{skill:greeting}"})),
        glob: || tool("Glob", json!({"pattern": "*.md"})),
        grep: || tool("Grep", json!({"pattern": "invoice"})),
        step: |n| tool("Bash", json!({"command": format!("echo {n} >> steps.txt")})),
    }
}

fn opencode() -> Agent {
    Agent {
        harness: "opencode",
        cli: support::agent_cli("opencode"),
        skill: || tool("skill", json!({"name": "{skill:greeting}"})),
        glob: || tool("glob", json!({"pattern": "*.md"})),
        grep: || tool("grep", json!({"pattern": "invoice"})),
        step: |n| {
            let command = format!("echo {n} >> steps.txt");
            tool("bash", json!({"command": command, "description": "a step"}))
        },
    }
}

/// Each query's conversation, and the canary's (it names the skill: the model loads it). With
/// `reads_need`, the queries that read first load the skill only when the request holds that
/// text (the description does): else the model answers at once.
fn script(server: &ModelServer, agent: &Agent, reads_need: Option<&str>) {
    for (q, kind) in queries() {
        let mut replies = Vec::new();
        if kind != Kind::Task {
            replies.extend([(agent.glob)(), (agent.grep)()]);
        }
        match kind {
            Kind::Task => replies.push((agent.skill)()),
            Kind::Reads => replies.extend([(agent.skill)(), (agent.step)(1)]),
            Kind::Not => {}
        }
        if kind == Kind::Task {
            replies.extend((1..=6).map(agent.step));
        }
        replies.push(text("Done."));
        let need = reads_need.filter(|_| kind == Kind::Reads);
        server.script_each(&q, need, replies);
    }
    let canary = assay::run::canary::query("greeting");
    server.script_each(&canary, None, vec![(agent.skill)(), text("Done.")]);
}

/// What one way of reaching the verdicts cost, and the verdicts: each query's runs, fired or
/// not, in order of query.
struct Measure {
    requests: usize,
    tokens_in: usize,
    tokens_out: usize,
    seconds: f64,
    verdicts: Vec<Vec<bool>>,
}

impl Measure {
    /// Requests and tokens from the server's record: input tokens estimated as a request's
    /// JSON bytes / 4, output tokens as the server reports them (20 a reply).
    fn new(server: &ModelServer, started: Instant, verdicts: Vec<Vec<bool>>) -> Measure {
        let requests = server.requests();
        let bytes: usize = requests.iter().map(|r| r.to_string().len()).sum();
        Measure {
            requests: requests.len(),
            tokens_in: bytes.div_ceil(4),
            tokens_out: 20 * requests.len(),
            seconds: started.elapsed().as_secs_f64(),
            verdicts,
        }
    }

    fn row(&self, agent: &str, way: &str) -> String {
        let n = self.verdicts.iter().map(Vec::len).sum::<usize>().max(1) as f64;
        let fired: usize = self.verdicts.iter().flatten().filter(|f| **f).count();
        format!(
            "| {agent} | {way} | {} | {:.2} | {:.0} | {:.0} | {:.2} | {fired} of {n} fired |",
            self.requests,
            self.requests as f64 / n,
            self.tokens_in as f64 / n,
            self.tokens_out as f64 / n,
            self.seconds / n,
        )
    }
}

/// A copy of the binaries the bench was built with, in a folder of this process's own
/// (removed at the end): a build in the shared target folder during the bench replaces them,
/// and a sandbox finds its first process beside assay.
fn bin_dir() -> PathBuf {
    let pid = std::process::id();
    support::repo().join(format!("target/triggers-bench/bin-{pid}"))
}

fn assay_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let built = PathBuf::from(env!("CARGO_BIN_EXE_assay"));
        let dir = bin_dir();
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["assay", "assay-sandbox-init"] {
            std::fs::copy(built.with_file_name(name), dir.join(name)).unwrap();
        }
        dir.join("assay")
    })
}

/// Runs the copy of `assay` in `dir`, as the tests run it (`support::assay_env`).
fn assay(dir: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    Command::new(assay_bin())
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

fn runs() -> usize {
    std::env::var("TRIGGERS_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

/// The environment that points the agent (under assay) at the server.
fn assay_env(agent: &Agent, server: &ModelServer) -> Vec<(&'static str, String)> {
    if agent.harness == "claude-code" {
        return support::claude_env(&agent.cli, server);
    }
    let path = format!(
        "{}:{}",
        agent.cli.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    vec![
        ("PATH", path),
        ("OPENAI_BASE_URL", format!("{}/v1", server.url)),
        ("OPENAI_API_KEY", "sk-test".into()),
        ("ASSAY_JUDGE", "none".into()),
    ]
}

/// A project of the skill and its trigger suite (BMAD's `triggers.json`).
fn assay_project(root: &Path) {
    let suite: Vec<Value> = queries()
        .iter()
        .map(|(q, k)| json!({"query": q, "should_trigger": *k != Kind::Not}))
        .collect();
    support::write_tree(
        root,
        &[
            ("assay.toml", ""),
            (".claude/skills/greeting/SKILL.md", SKILL),
            (
                "evals/greeting/triggers.json",
                &Value::from(suite).to_string(),
            ),
            ("notes.md", "Team notes: the launch went well.\n"),
        ],
    );
}

/// `assay run --mode triggers` through the agent, with `extra` flags.
fn assay_triggers(agent: &Agent, extra: &[&str]) -> Measure {
    let server = ModelServer::start();
    script(&server, agent, None);
    let d = tempfile::tempdir().unwrap();
    assay_project(d.path());
    let runs = runs().to_string();
    let mut args = vec!["run", "--harness", agent.harness, "--mode", "triggers"];
    args.extend(["--trigger-runs", &runs, "-j", "1", "--timeout", "180"]);
    args.extend(["--output-dir", "out", "--model", model(agent)]);
    if agent.harness == "claude-code" {
        args.extend(["--pass-env", "CLAUDE_CODE_MAX_RETRIES"]);
    }
    args.extend_from_slice(extra);
    let started = Instant::now();
    let out = assay(d.path(), &args, &assay_env(agent, &server));
    let said = format!("{}{}", support::stdout(&out), support::stderr(&out));
    let verdicts = assay_verdicts(&d.path().join("out/bmad_greeting"), &said);
    Measure::new(&server, started, verdicts)
}

fn model(agent: &Agent) -> &'static str {
    if agent.harness == "claude-code" {
        "claude-sonnet-4-5"
    } else {
        "gpt-test"
    }
}

/// Each query's runs (`trigger-<n>/run-<k>/result.json`), fired or not.
fn assay_verdicts(suite_dir: &Path, said: &str) -> Vec<Vec<bool>> {
    (1..=queries().len())
        .map(|n| {
            let runs = support::results_by_folder(&suite_dir.join(format!("trigger-{n}")));
            assert!(!runs.is_empty(), "no runs of trigger-{n}: {said}");
            runs.values()
                .map(|r| {
                    assert_eq!(r["status"], "completed", "{r:#}\n{said}");
                    r["trigger"]["fired"] == true
                })
                .collect()
        })
        .collect()
}

/// skill-creator's `scripts/` (the package `run_eval.py` imports from) at `commit`, in `dir`.
fn run_eval_scripts(commit: &str, dir: &Path) -> PathBuf {
    let git = skills_git();
    let scripts = dir.join("scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    for file in ["__init__.py", "utils.py", "run_eval.py"] {
        let spec = format!("{commit}:skills/skill-creator/scripts/{file}");
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(&git)
            .args(["show", &spec])
            .output()
            .unwrap();
        assert!(out.status.success(), "git show {spec}: {out:?}");
        std::fs::write(scripts.join(file), out.stdout).unwrap();
    }
    dir.to_path_buf()
}

/// The git folder of anthropics/skills, with both pinned commits.
fn skills_git() -> PathBuf {
    if let Ok(git) = std::env::var("ASSAY_SKILLS_GIT") {
        return PathBuf::from(git);
    }
    let git = support::repo().join("target/triggers-bench/skills.git");
    if !git.exists() {
        let url = "https://github.com/anthropics/skills";
        let ok = Command::new("git")
            .args(["clone", "--bare", "--filter=blob:none", url])
            .arg(&git)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "cloning {url}: set ASSAY_SKILLS_GIT to a clone of it");
        for commit in [CLAUDE_RUN_EVAL, OPENCODE_RUN_EVAL] {
            let _ = Command::new("git")
                .arg("--git-dir")
                .arg(&git)
                .args(["fetch", "origin", commit])
                .status();
        }
    }
    git
}

/// `run_eval.py` through the agent, on the same queries against a fresh server: one worker,
/// as its workers share one project folder and would see each other's temporary skill.
fn run_eval(agent: &Agent) -> Measure {
    let server = ModelServer::start();
    script(&server, agent, None);
    let tools = tempfile::tempdir().unwrap();
    let (commit, marker) = match agent.harness {
        "claude-code" => (CLAUDE_RUN_EVAL, ".claude"),
        _ => (OPENCODE_RUN_EVAL, ".agents"),
    };
    let creator = run_eval_scripts(commit, &tools.path().join("skill-creator"));
    let d = tempfile::tempdir().unwrap();
    let set: Vec<Value> = queries()
        .iter()
        .map(|(q, k)| json!({"query": q, "should_trigger": *k != Kind::Not}))
        .collect();
    support::write_tree(
        d.path(),
        &[
            ("skill/greeting/SKILL.md", SKILL),
            ("eval_set.json", &Value::from(set).to_string()),
            ("notes.md", "Team notes: the launch went well.\n"),
        ],
    );
    std::fs::create_dir_all(d.path().join(marker)).unwrap();
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "scripts.run_eval", "--eval-set", "eval_set.json"])
        .args(["--skill-path", "skill/greeting", "--num-workers", "1"])
        .args(["--timeout", "180", "--runs-per-query", &runs().to_string()])
        .current_dir(d.path())
        .env("PYTHONPATH", &creator);
    run_eval_env(&mut cmd, agent, &server, tools.path());
    let started = Instant::now();
    let out = cmd.output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {said}"));
    Measure::new(&server, started, run_eval_verdicts(&v))
}

/// The agent on PATH, pointed at the server, its home a fresh folder.
fn run_eval_env(cmd: &mut Command, agent: &Agent, server: &ModelServer, home: &Path) {
    let path = format!(
        "{}:{}",
        agent.cli.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path).env("HOME", home);
    cmd.env("XDG_CONFIG_HOME", home.join(".config"));
    cmd.env("XDG_DATA_HOME", home.join(".local/share"));
    cmd.env("XDG_CACHE_HOME", home.join(".cache"));
    cmd.env("XDG_STATE_HOME", home.join(".local/state"));
    if agent.harness == "claude-code" {
        cmd.env("ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", "sk-assay-test")
            .env("CLAUDE_CODE_MAX_RETRIES", "0")
            // As assay sets them for Claude Code: nothing but the model's traffic.
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env_remove("CLAUDECODE");
        cmd.args(["--model", model(agent)]);
        return;
    }
    // OpenCode's settings as assay writes them (tests/acp.rs): every tool allowed, the
    // OpenAI-compatible provider `assay` at the server.
    let config = json!({"autoupdate": false, "share": "disabled", "permission": "allow",
        "model": "assay/gpt-test", "small_model": "assay/gpt-test",
        "provider": {"assay": {"npm": "@ai-sdk/openai-compatible", "name": "scripted",
            "options": {"baseURL": format!("{}/v1", server.url), "apiKey": "sk-test"},
            "models": {"gpt-test": {"name": "gpt-test", "tool_call": true}}}}});
    let dir = home.join(".config/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("opencode.json"), config.to_string()).unwrap();
    for k in assay::harness::acp::presets::OPENCODE_QUIET {
        cmd.env(k, "1");
    }
    cmd.args(["--model", "assay/gpt-test"]);
}

/// `run_eval.py`'s results by query: as many fired runs as it counted, in order of query.
fn run_eval_verdicts(v: &Value) -> Vec<Vec<bool>> {
    let by_query: BTreeMap<&str, &Value> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["query"].as_str().unwrap(), r))
        .collect();
    queries()
        .iter()
        .map(|(q, _)| {
            let r = by_query[q.as_str()];
            let (fired, runs) = (r["triggers"].as_u64().unwrap(), r["runs"].as_u64().unwrap());
            (0..runs).map(|i| i < fired).collect()
        })
        .collect()
}

/// The queries on which two ways' verdicts (fired runs of each) differ.
fn differences(a: &Measure, b: &Measure) -> Vec<String> {
    let count = |v: &Vec<bool>| v.iter().filter(|f| **f).count();
    queries()
        .iter()
        .zip(a.verdicts.iter().zip(&b.verdicts))
        .filter(|(_, (x, y))| count(x) != count(y))
        .map(|((q, _), (x, y))| format!("{}: {} vs {}", &q[..3], count(x), count(y)))
        .collect()
}

/// The three ways through one agent, a row of the table each as it ends; then whether
/// assay's verdicts agree, and where `run_eval.py`'s differ from them.
fn compare(agent: &Agent) {
    let evals = run_eval(agent);
    println!(
        "{}",
        evals.row(agent.harness, "skill-creator `run_eval.py`")
    );
    let before = assay_triggers(agent, &["--trigger-full-runs"]);
    println!(
        "{}",
        before.row(agent.harness, "assay before (`--trigger-full-runs`)")
    );
    let after = assay_triggers(agent, &[]);
    println!(
        "{}",
        after.row(agent.harness, "assay after (stops at the load)")
    );
    let same = differences(&before, &after);
    assert!(same.is_empty(), "assay's verdicts changed: {same:?}");
    eprintln!(
        "{}: assay before and after agree on all {} queries; run_eval.py's fired runs against assay's: {:?}",
        agent.harness,
        queries().len(),
        differences(&evals, &after)
    );
}

/// `assay optimize description` (one round, 3 candidates) through Claude Code: the agent's
/// model requests and the time taken.
fn optimize(extra: &[&str]) -> (usize, f64, String) {
    let agent = claude_code();
    let server = ModelServer::start();
    // The model loads the skill on the queries that read first only when the description
    // says KEYWORD, as the first candidate does: the loop has something to find.
    script(&server, &agent, Some(KEYWORD));
    let d = tempfile::tempdir().unwrap();
    assay_project(d.path());
    let candidates: Vec<String> = (1..=3)
        .map(|i| match i {
            1 => format!("Writes greeting cards and {KEYWORD} for teams; use for any card."),
            _ => format!("Writes greeting cards (wording {i}); use for cards and notes."),
        })
        .collect();
    let proposer = JudgeServer::start(vec![JudgeReply::Says(
        json!({"candidates": candidates}).to_string(),
    )]);
    let mut env = support::claude_env(&agent.cli, &server);
    env.retain(|(k, _)| *k != "ASSAY_JUDGE");
    env.push(("ASSAY_JUDGE_BASE_URL", proposer.url.clone()));
    env.push(("ASSAY_JUDGE_API_KEY", "sk-proposer".into()));
    let runs = runs().to_string();
    let mut args = vec!["optimize", "description", ".claude/skills/greeting"];
    args.extend([
        "--harness",
        "claude-code",
        "--pass-env",
        "CLAUDE_CODE_MAX_RETRIES",
    ]);
    args.extend(["--proposer", "anthropic:claude-proposer", "--seed", "7"]);
    args.extend([
        "--iterations",
        "1",
        "--candidates",
        "3",
        "--trigger-runs",
        &runs,
    ]);
    args.extend(["--output-dir", "opt", "--timeout", "180"]);
    args.extend_from_slice(extra);
    let started = Instant::now();
    let out = assay(d.path(), &args, &env);
    let said = format!("{}{}", support::stdout(&out), support::stderr(&out));
    let rec = support::read_json(&d.path().join("opt/optimize.json"));
    let verdict = format!("improved: {}; {}", rec["improved"], rec["verdict"]);
    eprintln!("optimize {extra:?}: {verdict}\n{said}");
    (
        server.requests().len(),
        started.elapsed().as_secs_f64(),
        verdict,
    )
}

fn main() {
    let picked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wants = |part: &str| picked.is_empty() || picked.iter().any(|p| p == part);
    println!(
        "| agent | way | requests | requests per verdict | input tokens per verdict | output tokens per verdict | seconds per verdict | verdicts |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (name, agent) in [
        ("claude-code", claude_code as fn() -> Agent),
        ("opencode", opencode),
    ] {
        if wants(name) {
            compare(&agent());
        }
    }
    if wants("optimize") {
        let (before, bs, bv) = optimize(&["--trigger-full-runs"]);
        let (after, as_, av) = optimize(&[]);
        println!(
            "\n| `assay optimize description`, 3 candidates | agent requests | seconds | outcome |"
        );
        println!("|---|---|---|---|");
        println!("| before (`--trigger-full-runs`) | {before} | {bs:.0} | {bv} |");
        println!("| after | {after} | {as_:.0} | {av} |");
        assert_eq!(bv, av, "the optimisation's outcome changed");
        let ratio = after as f64 / before.max(1) as f64;
        println!("\nafter / before: {ratio:.2} (goal ≤ 0.5)");
    }
    let _ = std::fs::remove_dir_all(bin_dir());
}
