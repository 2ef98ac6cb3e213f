//! Running like a team: trigger evals, baselines and resumed runs through the real Claude Code
//! CLI against the scripted model server; repeated runs with statistics, the cache, shards and
//! Ctrl-C through the command harness.

use crate::support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::judge_server::{JudgeServer, says};
use support::model_server::{ModelServer, Reply, text, tool};
use support::*;

const NOTES_SKILL: &str = "---\nname: meeting-notes\ndescription: Turns meeting transcripts into action items. Use when the user asks for meeting notes or action items.\n---\nList each action item with its owner.\n";

/// Runs assay through Claude Code. Workspaces go outside the project: Claude Code also reads
/// `.claude/skills` of parent folders, so a workspace inside the project would see its skills.
fn claude_run(claude: &Path, server: &ModelServer, dir: &Path, args: &[&str]) -> Output {
    let ws = dir.with_extension("workspaces").display().to_string();
    let mut all = vec![
        "run",
        "--harness",
        "claude-code",
        "--pass-env",
        "CLAUDE_CODE_MAX_RETRIES",
        "--workspace-dir",
        &ws,
    ];
    all.extend_from_slice(args);
    assay_env(dir, &all, &claude_env(claude, server))
}

fn report_json(dir: &Path) -> Value {
    let out = assay(dir, &["report", "out", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn trigger_evals_observe_the_real_agent_invoking_the_skill() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    // The model invokes the skill for notes and action items, and not for the weather; for
    // the third query it should, but does not.
    server.script_each(
        "notes from this meeting",
        None,
        vec![
            tool("Skill", json!({"skill": "meeting-notes"})),
            text("Action items: Ada ships the fix."),
        ],
    );
    server.script_each(
        "from the call",
        None,
        vec![
            tool(
                "Read",
                json!({"file_path": "{cwd}/.claude/skills/meeting-notes/SKILL.md"}),
            ),
            text("Here they are."),
        ],
    );
    server.script_each("weather", None, vec![text("Sunny.")]);
    server.script_each("standup", None, vec![text("Sure.")]);
    fire_canary(&server, "meeting-notes");
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/skills/meeting-notes/SKILL.md", NOTES_SKILL),
            (
                "evals/meeting-notes/triggers.json",
                r#"[
  {"query": "Write up the notes from this meeting", "should_trigger": true},
  {"query": "What are the action items from the call?", "should_trigger": true},
  {"query": "What is the weather in Paris?", "should_trigger": false},
  {"query": "Summarise the standup for me", "should_trigger": true}
]"#,
            ),
        ],
    );
    let out = claude_run(
        &claude,
        &server,
        d.path(),
        &["--output-dir", "out", "--trigger-runs", "2", "-j", "2"],
    );
    let said = stdout(&out);
    assert_eq!(
        code(&out),
        1,
        "the standup query never fired\n{said}\n{}",
        stderr(&out)
    );
    assert!(
        said.contains("triggers of bmad:meeting-notes (observed through the agent): 3/4 queries passed, precision 1.00, recall 0.67, accuracy 0.75"),
        "{said}"
    );
    assert!(
        said.contains(
            "FAIL trigger-4 \"Summarise the standup for me\": fired 0/2 (0%), should trigger"
        ),
        "{said}"
    );
    // Every query ran twice through the real CLI, each in its own workspace where the skill was
    // offered to the model under its own name.
    let asked: Vec<Value> = server.requests();
    for q in [
        "notes from this meeting",
        "from the call",
        "weather in Paris",
        "Summarise the standup",
    ] {
        let firsts = asked
            .iter()
            .filter(|r| first_request(r))
            .filter(|r| r.to_string().contains(q))
            .count();
        assert_eq!(firsts, 2, "{q} asked twice");
    }
    assert!(
        asked.iter().any(|r| r
            .to_string()
            .contains("Turns meeting transcripts into action items")),
        "the skill's description reached the model"
    );
    let v = report_json(d.path());
    let t = &v["statistics"]["triggers"];
    assert_eq!(t[0]["fired"], 2);
    assert_eq!(t[1]["fired"], 2, "a Read of SKILL.md counts as firing");
    assert_eq!(t[2]["fired"], 0);
    assert_eq!(t[3]["passed"], false);
    assert_eq!(v["statistics"]["trigger_suites"][0]["mode"], "agent");

    // --mode artifacts runs no trigger eval (there is no artifact eval either).
    let out = claude_run(
        &claude,
        &server,
        d.path(),
        &["--output-dir", "none", "--mode", "artifacts"],
    );
    assert!(stdout(&out).contains("0 case-runs"), "{}", stdout(&out));
}

#[test]
fn a_slash_command_is_installed_as_a_skill_for_its_trigger_evals() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script_each(
        "birthday card",
        None,
        vec![
            tool("Skill", json!({"skill": "greet"})),
            text("Card written."),
        ],
    );
    fire_canary(&server, "greet");
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                ".claude/commands/greet.md",
                "Write a greeting card for $ARGUMENTS into card.txt.\n",
            ),
            (
                ".claude/commands/greet.eval.json",
                r#"{"skill_name": "greet", "test_args": "Ada",
                   "assertions": [{"id": "card", "type": "contains", "needle": "Card"}],
                   "trigger_tests": {"should_trigger": ["Make a birthday card for Ada"],
                                     "should_not_trigger": ["Fix the failing build"]}}"#,
            ),
        ],
    );
    let out = claude_run(
        &claude,
        &server,
        d.path(),
        &[
            "--output-dir",
            "out",
            "--mode",
            "triggers",
            "--trigger-runs",
            "1",
            "--keep-workspaces",
        ],
    );
    let said = stdout(&out);
    assert_eq!(code(&out), 0, "{said}\n{}", stderr(&out));
    assert!(said.contains("1.00, recall 1.00, accuracy 1.00"), "{said}");
    assert!(
        said.contains(
            "is a slash command; it was installed as the skill .claude/skills/greet/SKILL.md"
        ),
        "{said}"
    );
    let rs = results(&d.path().join("out"));
    let fired = &rs["should_trigger[0]"];
    assert_eq!(fired["trigger"]["fired"], true, "{fired:#}");
    // In the workspace the command is a skill with front matter, and no longer a command.
    let ws = Path::new(fired["workspace"].as_str().unwrap()).join("work");
    let skill = std::fs::read_to_string(ws.join(".claude/skills/greet/SKILL.md")).unwrap();
    assert!(
        skill.starts_with("---\nname: greet\ndescription: \"Write a greeting card for $ARGUMENTS into card.txt.\"\n---"),
        "{skill}"
    );
    assert!(!ws.join(".claude/commands/greet.md").exists());
    let v = report_json(d.path());
    let kinds: Vec<&Value> = v["case_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["kind"])
        .collect();
    assert_eq!(kinds, [&json!("trigger"), &json!("trigger")]);
}

#[test]
fn trigger_mode_judge_asks_the_judge_instead_of_the_agent_and_says_so() {
    // Both answers say "trigger": right for the first query, wrong for the second.
    let judge = JudgeServer::start(vec![
        says(json!({"trigger": true, "reason": "asks for notes"})),
        says(json!({"trigger": true, "reason": "also notes?"})),
    ]);
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/skills/meeting-notes/SKILL.md", NOTES_SKILL),
            (
                "evals/meeting-notes/triggers.json",
                r#"[{"query": "Write up the notes from this meeting", "should_trigger": true},
                    {"query": "What is the weather in Paris?", "should_trigger": false}]"#,
            ),
        ],
    );
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--trigger-mode",
            "judge",
            "--harness",
            "no-such-agent-needed",
            "--judge",
            "anthropic",
            "--judge-jobs",
            "1",
            "--output-dir",
            "out",
        ],
        &[
            ("ASSAY_JUDGE_BASE_URL", judge.url.clone()),
            ("ASSAY_JUDGE_API_KEY", "sk-judge".to_string()),
        ],
    );
    // An unknown harness is still refused: the plan names one for every case.
    assert_eq!(code(&out), 3, "{}", stderr(&out));

    let out = assay_env(
        d.path(),
        &[
            "run",
            "--trigger-mode",
            "judge",
            "--judge",
            "anthropic",
            "--judge-jobs",
            "1",
            "--output-dir",
            "out",
        ],
        &[
            ("ASSAY_JUDGE_BASE_URL", judge.url.clone()),
            ("ASSAY_JUDGE_API_KEY", "sk-judge".to_string()),
            // No agent runs in judge mode: a missing CLI must not matter.
            ("ASSAY_CLAUDE_BIN", "/nonexistent/claude".to_string()),
        ],
    );
    let said = stdout(&out);
    assert_eq!(code(&out), 1, "{said}\n{}", stderr(&out));
    assert!(
        said.contains(
            "(estimated by the judge from the name and description, not run): 1/2 queries passed"
        ),
        "{said}"
    );
    let asked = judge.requests();
    assert_eq!(asked.len(), 2, "one judge call per query, not per run");
    let prompt = asked[0].1.to_string();
    assert!(prompt.contains("meeting-notes"), "{prompt}");
    assert!(prompt.contains("Turns meeting transcripts into action items"));
    let html = assay(d.path(), &["report", "out", "--format", "html"]);
    assert!(stdout(&html).contains("Estimated by the judge"));
}

#[test]
fn a_baseline_shows_what_the_skill_changes_with_a_p_value() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    // With the skill offered, the model knows the codename; without it, it does not.
    server.script_each(
        "codename of the release",
        Some("codename lookups"),
        vec![text("The codename is BLUE-HERON.")],
    );
    server.script_each(
        "codename of the release",
        None,
        vec![text("I do not know the codename.")],
    );
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                ".claude/skills/codenames/SKILL.md",
                "---\nname: codenames\ndescription: Knows release codenames. Use for codename lookups.\n---\nThe release codename is BLUE-HERON.\n",
            ),
            (
                ".claude/skills/codenames/codenames.eval.json",
                r#"{"skill_name": "codenames", "test_args": "What is the codename of the release?",
                   "assertions": [{"id": "named", "type": "contains", "needle": "BLUE-HERON"}]}"#,
            ),
        ],
    );
    let out = claude_run(
        &claude,
        &server,
        d.path(),
        &[
            "--output-dir",
            "out",
            "--runs",
            "4",
            "--baseline",
            "-j",
            "2",
        ],
    );
    let said = stdout(&out);
    assert_eq!(code(&out), 0, "{said}\n{}", stderr(&out));
    assert!(said.contains("4/4 vs 0/4 passed (+100 points)"), "{said}");
    // Each live line says which run of which variant it is: the baseline's failures do not
    // read as a flaky skill.
    let lines = format!("{said}{}", stderr(&out));
    for run in 1..=4 {
        let skill = format!("codenames/codenames [run {run}/4] (");
        let baseline = format!("codenames/codenames [baseline, run {run}/4] (");
        assert!(lines.contains(&skill), "{skill}: {lines}");
        assert!(lines.contains(&baseline), "{baseline}: {lines}");
    }
    // The headline is in cases, the baseline a comparison, not failures of the run.
    assert!(
        said.contains("1 case: 1 passed · with the skill 1/1 case vs without 0/1 (+100 points, Fisher p = 1.00)"),
        "{said}"
    );
    assert!(
        said.contains("8 case-runs: 4 passed · baseline runs: 4 failed"),
        "{said}"
    );
    let v = report_json(d.path());
    let b = &v["statistics"]["baselines"][0];
    assert_eq!(b["skill"]["pass_rate"]["passed"], 4);
    assert_eq!(b["baseline"]["pass_rate"]["passed"], 0);
    assert_eq!(b["delta_pass_rate"], 1.0);
    // Fisher's exact test on [[4, 0], [0, 4]]: 2 / C(8, 4) = 0.0286.
    let p = b["p_value"].as_f64().unwrap();
    assert!((p - 2.0 / 70.0).abs() < 1e-9, "{p}");
    let runs = v["case_runs"].as_array().unwrap();
    assert_eq!(
        runs.iter().filter(|c| c["variant"] == "baseline").count(),
        4
    );
    // The baseline's workspaces had no skill: the model was never offered it there.
    let offered = server
        .requests()
        .iter()
        .filter(|r| first_request(r))
        .filter(|r| r.to_string().contains("codename lookups"))
        .count();
    assert_eq!(offered, 4, "only the four runs with the skill offered it");
}

/// A conversation's first request: no assistant message yet.
fn first_request(r: &Value) -> bool {
    r["messages"]
        .as_array()
        .is_some_and(|m| !m.iter().any(|m| m["role"] == "assistant"))
}

/// Starts `assay run` in the background.
fn spawn_assay(dir: &Path, args: &[&str], env: &[(&str, String)]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("ASSAY_NO_CACHE", "1")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_for(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ok() {
        assert!(t.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn interrupt(child: &std::process::Child) {
    send(child, "INT");
}

/// Sends `kill -<sig>` to assay.
fn send(child: &std::process::Child, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn an_interrupted_run_is_resumed_redoing_only_what_is_missing() {
    let claude = agent_cli("claude");
    let server = ModelServer::start();
    server.script_each("first job", None, vec![text("one done")]);
    server.script_each("second job", None, vec![text("two done")]);
    server.script_each("third job", None, vec![Reply::Hang]);
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                ".claude/skills/jobs/SKILL.md",
                "---\nname: jobs\ndescription: Does jobs.\n---\nDo it.\n",
            ),
            (
                "evals/jobs/evals.json",
                r#"{"evals": [
                    {"id": "one", "prompt": "Do the first job.", "expectations": ["done"]},
                    {"id": "two", "prompt": "Do the second job.", "expectations": ["done"]},
                    {"id": "three", "prompt": "Do the third job.", "expectations": ["done"]}]}"#,
            ),
        ],
    );
    let args = [
        "run",
        "--harness",
        "claude-code",
        "--pass-env",
        "CLAUDE_CODE_MAX_RETRIES",
        "-j",
        "3",
        "--output-dir",
        "out",
    ];
    let started = Instant::now();
    let child = spawn_assay(d.path(), &args, &claude_env(&claude, &server));
    let out_dir = d.path().join("out");
    wait_for("two finished case-runs", Duration::from_secs(60), || {
        ["one", "two"].iter().all(|c| {
            out_dir
                .join(format!("bmad_jobs/{c}/run-1/result.json"))
                .is_file()
        })
    });
    // The third is stuck on a model that never answers; Ctrl-C stops it.
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 130, "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(
        stderr(&out).contains("assay run --resume out"),
        "{}",
        stderr(&out)
    );
    let rs = results(&out_dir);
    assert_eq!(rs["three"]["status"], "error");
    assert_eq!(
        rs["three"]["reason"],
        "interrupted (Ctrl-C, SIGTERM or SIGHUP) before it finished"
    );
    assert_eq!(read_json(&out_dir.join("run.json"))["interrupted"], true);

    // The model answers now; resuming runs the third case only.
    let fixed = ModelServer::start();
    fixed.script_each("job", None, vec![text("done")]);
    let mut resume = args.to_vec();
    resume.truncate(resume.len() - 2);
    resume.extend(["--resume", "out"]);
    let out = assay_env(d.path(), &resume, &claude_env(&claude, &fixed));
    let said = stdout(&out);
    assert_eq!(code(&out), 0, "{said}\n{}", stderr(&out));
    assert!(
        said.contains("3 case-runs: 3 not graded, 2 kept from the resumed run"),
        "{said}"
    );
    let asked: Vec<String> = fixed.requests().iter().map(|r| r.to_string()).collect();
    assert!(!asked.is_empty());
    assert!(
        asked.iter().all(|r| r.contains("third job")),
        "only the third ran again"
    );
    let run = read_json(&out_dir.join("run.json"));
    assert_eq!(run["resumed"].as_array().unwrap().len(), 1);
    assert_eq!(results(&out_dir)["three"]["status"], "completed");
}

/// A project whose command agent is `agent.sh`, with one clauditor case per name.
fn command_project(agent: &str, cases: &[&str]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, String)> = vec![
        (
            "assay.toml".into(),
            "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"agent.sh\"]\n"
                .into(),
        ),
        ("agent.sh".into(), agent.into()),
    ];
    for c in cases {
        files.push((format!(".claude/commands/{c}.md"), format!("Say {c}.\n")));
        files.push((
            format!(".claude/commands/{c}.eval.json"),
            format!(
                r#"{{"skill_name": "{c}", "test_args": "{c}", "assertions": [{{"id": "ok", "type": "contains", "needle": "ok"}}]}}"#
            ),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write_tree(d.path(), &refs);
    d
}

#[test]
fn repeated_runs_give_statistics_and_gate_the_case() {
    // Passes on odd runs, fails on even ones: a flaky agent (its counter lives outside).
    let state = tempfile::tempdir().unwrap();
    let counter = state.path().join("n");
    let agent = format!(
        "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; if [ $((n % 2)) = 1 ]; then echo ok; else echo no; fi\n",
        c = counter.display()
    );
    let d = command_project(&agent, &["flaky"]);
    // Unsandboxed: the counter lives outside the workspace, which the sandbox would stop.
    let out = assay(
        d.path(),
        &[
            "run",
            "--runs",
            "4",
            "-j",
            "1",
            "--output-dir",
            "out",
            "--sandbox",
            "none",
        ],
    );
    let said = stdout(&out);
    assert_eq!(code(&out), 1, "2 of 4 is below the default 100%\n{said}");
    assert!(
        said.contains("clauditor:flaky/flaky: 2/4 passed, 50% [15%–85%], pass@3 1.00, pass^3 0.00, check score 0.50 ± 0.58, stability 0.50 · flaky"),
        "{said}"
    );
    assert!(said.contains("2/4 runs passed (needs 100%)"), "{said}");
    let v = report_json(d.path());
    let c = &v["statistics"]["cases"][0];
    assert_eq!(c["runs"], 4);
    assert!((c["pass_rate"]["low"].as_f64().unwrap() - 0.1500).abs() < 1e-3);
    assert!((c["pass_rate"]["high"].as_f64().unwrap() - 0.8500).abs() < 1e-3);
    assert_eq!(c["flaky"], true);
    assert_eq!(
        v["statistics"]["total"]["flaky"],
        json!(["clauditor:flaky/flaky"])
    );
    let junit = stdout(&assay(d.path(), &["report", "out", "--format", "junit"]));
    // One testcase for the case, its runs as properties.
    assert!(junit.contains("testcase name=\"flaky\""), "{junit}");
    assert!(
        junit.contains("<property name=\"assay.runs\" value=\"4\"/>"),
        "{junit}"
    );

    // A lower bar lets it pass; so does the suite's own variance gate.
    let out = assay(
        d.path(),
        &[
            "run",
            "--runs",
            "4",
            "--min-pass-rate",
            "0.5",
            "--output-dir",
            "lenient",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let eval = d.path().join(".claude/commands/flaky.eval.json");
    std::fs::write(
        &eval,
        r#"{"skill_name": "flaky", "test_args": "flaky", "assertions": [{"id": "ok", "type": "contains", "needle": "ok"}],
            "variance": {"n_runs": 3, "min_stability": 0.6}}"#,
    )
    .unwrap();
    std::fs::write(&counter, "0").unwrap();
    let out = assay(
        d.path(),
        &[
            "run",
            "-j",
            "1",
            "--output-dir",
            "variance",
            "--sandbox",
            "none",
        ],
    );
    let said = stdout(&out);
    // n_runs 3: runs 1 and 3 pass; stability 2/3 ≥ 0.6 with most runs passing.
    assert_eq!(code(&out), 0, "{said}");
    assert!(said.contains("2/3 passed"), "{said}");
    assert_eq!(results(&d.path().join("variance")).len(), 1);
    assert!(
        d.path()
            .join("variance/clauditor_flaky/flaky/run-3/result.json")
            .is_file()
    );
}

#[test]
fn unchanged_case_runs_come_from_the_cache_until_an_input_changes() {
    let log = tempfile::tempdir().unwrap();
    let calls = log.path().join("calls");
    let agent = format!("echo called >> {}; echo ok\n", calls.display());
    let d = command_project(&agent, &["a", "b"]);
    let cached = [
        ("ASSAY_NO_CACHE", "0".to_string()),
        // The agent logs its calls outside its workspace, which the sandbox would stop.
        ("ASSAY_SANDBOX", "none".to_string()),
        // The cache's key in the test's own folder, never the real HOME.
        (
            "ASSAY_CACHE_KEY",
            log.path().join("cache.key").display().to_string(),
        ),
    ];
    let run = |name: &str, extra: &[&str]| {
        let mut args = vec!["run", "--output-dir", name];
        args.extend_from_slice(extra);
        let out = assay_env(d.path(), &args, &cached);
        assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
        stdout(&out)
    };
    let count = || {
        std::fs::read_to_string(&calls)
            .unwrap_or_default()
            .lines()
            .count()
    };
    run("r1", &[]);
    assert_eq!(count(), 2);
    let said = run("r2", &[]);
    assert_eq!(count(), 2, "nothing ran again");
    assert!(
        said.contains("2 case-runs: 2 passed, 2 from the cache"),
        "{said}"
    );
    assert!(
        said.contains("PASS       clauditor:a/a (from the cache)"),
        "{said}"
    );
    let v: Value = serde_json::from_str(&stdout(&assay(
        d.path(),
        &["report", "r2", "--format", "json"],
    )))
    .unwrap();
    let cached: Vec<&Value> = v["case_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["cached"])
        .collect();
    assert_eq!(cached, [&json!(true), &json!(true)]);
    let md = stdout(&assay(d.path(), &["report", "r2", "--format", "markdown"]));
    assert!(md.contains("(cached)"), "{md}");
    // The cached folder is complete: output, prompt, result.
    assert!(d.path().join("r2/clauditor_a/a/run-1/output.txt").is_file());

    // Editing one skill reruns its case only; editing the agent script reruns both.
    std::fs::write(d.path().join(".claude/commands/a.md"), "Say a, loudly.\n").unwrap();
    run("r3", &[]);
    assert_eq!(count(), 3);
    std::fs::write(
        d.path().join("agent.sh"),
        format!("echo called >> {}; echo ok; echo\n", calls.display()),
    )
    .unwrap();
    run("r4", &[]);
    assert_eq!(count(), 5);
    // --no-cache runs everything.
    run("r5", &["--no-cache"]);
    assert_eq!(count(), 7);
}

#[test]
fn shards_split_the_cases_deterministically_and_merge_back() {
    let names = ["c1", "c2", "c3", "c4", "c5"];
    let d = command_project("echo ok\n", &names);
    let mut seen = Vec::new();
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let dir = format!("s{k}");
        let out = assay(d.path(), &["run", "--shard", &shard, "--output-dir", &dir]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let cases: Vec<String> = results(&d.path().join(&dir)).into_keys().collect();
        // Again: the same slice.
        let again = assay(
            d.path(),
            &["run", "--shard", &shard, "--output-dir", "again"],
        );
        assert_eq!(code(&again), 0);
        let same: Vec<String> = results(&d.path().join("again")).into_keys().collect();
        std::fs::remove_dir_all(d.path().join("again")).unwrap();
        assert_eq!(cases, same);
        seen.push(cases);
    }
    assert_eq!(seen[0].len(), 3);
    assert_eq!(seen[1].len(), 2);
    let mut all: Vec<String> = seen.concat();
    all.sort();
    assert_eq!(all, names);
    let out = assay(
        d.path(),
        &["report", "merge", "s1", "s2", "--output-dir", "all"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(results(&d.path().join("all")).len(), 5);
    for bad in ["0/2", "3/2", "x"] {
        let out = assay(d.path(), &["run", "--shard", bad]);
        assert_eq!(code(&out), 2, "{bad}");
        assert!(stderr(&out).contains("is not K/N"), "{}", stderr(&out));
    }
}

#[test]
fn ctrl_c_stops_the_agents_records_what_finished_and_exits_130() {
    stops_cleanly_on("INT", 130, "interrupted: stopping the running agents");
}

#[test]
fn sigterm_stops_the_agents_records_what_finished_and_exits_143() {
    stops_cleanly_on(
        "TERM",
        143,
        "interrupted by SIGTERM: stopping the running agents",
    );
}

#[test]
fn sighup_stops_the_agents_records_what_finished_and_exits_129() {
    stops_cleanly_on(
        "HUP",
        129,
        "interrupted by SIGHUP: stopping the running agents",
    );
}

/// `kill -<sig>` mid-run stops the running agent (none is left), records the finished
/// case-run and the stopped one, writes whole JSON, and exits `code` saying `said`.
fn stops_cleanly_on(sig: &str, exit: i32, said: &str) {
    let marker = format!("assay-{sig}-{}", std::process::id());
    let agent =
        format!("read p; case \"$p\" in *slow*) exec sleep 300 {marker} ;; *) echo ok ;; esac\n");
    // `sleep 300 <marker>` fails on the extra argument on some systems; a loop is portable.
    let agent = agent.replace(
        &format!("exec sleep 300 {marker}"),
        &format!("exec sh -c 'while :; do sleep 1; done' {marker}"),
    );
    let d = command_project(&agent, &["fast", "slow"]);
    let started = Instant::now();
    let child = spawn_assay(d.path(), &["run", "-j", "2", "--output-dir", "out"], &[]);
    let out_dir = d.path().join("out");
    wait_for("the fast case-run", Duration::from_secs(30), || {
        out_dir
            .join("clauditor_fast/fast/run-1/result.json")
            .is_file()
    });
    let running = || {
        let out = Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .unwrap();
        !out.stdout.is_empty()
    };
    wait_for("the slow agent to start", Duration::from_secs(30), running);
    send(&child, sig);
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), exit, "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(stderr(&out).contains(said), "{}", stderr(&out));
    assert!(stdout(&out).contains("run folder: out"), "{}", stdout(&out));
    wait_for("the slow agent to be gone", Duration::from_secs(10), || {
        !running()
    });
    let rs = results(&out_dir);
    assert_eq!(rs["fast"]["grade"]["verdict"], "pass");
    assert_eq!(rs["slow"]["status"], "error");
    assert_eq!(read_json(&out_dir.join("run.json"))["interrupted"], true);
    // Every JSON file in the folder is whole.
    for f in ["run.json", "clauditor_slow/slow/run-1/result.json"] {
        read_json(&out_dir.join(f));
    }
}

#[test]
fn a_second_ctrl_c_kills_at_once() {
    let marker = format!("assay-ctrl-c-twice-{}", std::process::id());
    // An agent that ignores SIGTERM: the first Ctrl-C would wait out the 5 s grace.
    let agent = format!("exec sh -c 'trap \"\" TERM; while :; do sleep 1; done' {marker}\n");
    let d = command_project(&agent, &["stubborn"]);
    let child = spawn_assay(d.path(), &["run", "--output-dir", "out"], &[]);
    let running = || {
        let out = Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .unwrap();
        !out.stdout.is_empty()
    };
    wait_for("the agent to start", Duration::from_secs(30), running);
    interrupt(&child);
    std::thread::sleep(Duration::from_millis(300));
    let second = Instant::now();
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 130, "{}", stderr(&out));
    assert!(
        second.elapsed() < Duration::from_secs(3),
        "killed at once, not after the grace: {:?}",
        second.elapsed()
    );
    assert!(stderr(&out).contains("killed"), "{}", stderr(&out));
    wait_for("the agent to be gone", Duration::from_secs(5), || {
        !running()
    });
}

#[test]
fn a_skill_that_does_not_fire_even_when_named_stops_the_run_before_its_trigger_evals() {
    let claude = agent_cli("claude");
    // The model never uses the skill, whatever is asked (as when it is not installed where
    // the agent looks): no canary is scripted.
    let server = ModelServer::start();
    server.script_each("notes from this meeting", None, vec![text("Sure.")]);
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                ".claude/skills/meeting-notes/SKILL.md",
                "---\nname: meeting-notes\ndescription: Writes meeting notes. Use for meetings.\n---\nWrite notes.\n",
            ),
            (
                "evals/meeting-notes/triggers.json",
                r#"[{"query": "Write up the notes from this meeting", "should_trigger": true},
                    {"query": "What is the weather in Paris?", "should_trigger": false}]"#,
            ),
        ],
    );
    let out = claude_run(
        &claude,
        &server,
        d.path(),
        &["--output-dir", "out", "--trigger-runs", "2"],
    );
    let (so, se) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), 3, "{so}\n{se}");
    assert!(
        se.contains("error: the trigger canary failed: `meeting-notes` did not fire on \"Use the meeting-notes skill.\" in 2 run(s) through claude-code"),
        "{se}"
    );
    assert!(se.contains("nothing else was run"), "{se}");
    assert!(!d.path().join("out").exists(), "no trigger eval ran");

    // --no-canary: the trigger evals run, and the figures are said to look like a broken
    // detector.
    let out = claude_run(
        &claude,
        &server,
        d.path(),
        &["--output-dir", "out", "--trigger-runs", "2", "--no-canary"],
    );
    let so = stdout(&out);
    assert_eq!(code(&out), 1, "{so}\n{}", stderr(&out));
    assert!(
        so.contains("warning: the skill never fired on any query (0% recall, no false positive)"),
        "{so}"
    );

    // And when the model uses a skill named to it, the canary passes and says so.
    fire_canary(&server, "meeting-notes");
    let out = claude_run(
        &claude,
        &server,
        d.path(),
        &["--output-dir", "out2", "--trigger-runs", "2"],
    );
    assert!(
        stderr(&out).contains("canary: `meeting-notes` fired through claude-code in 2 of 2 run(s)"),
        "{}",
        stderr(&out)
    );
}
