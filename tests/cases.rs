//! Cases, not case-runs: one run with repeats, a baseline, trigger queries and a judge
//! failure, through the real Claude Code CLI against the scripted model server and a judge on
//! loopback. Every output speaks in cases: the terminal, Markdown, JUnit, GitHub and the UAAPS
//! report, each pinned by a snapshot (times and folders filtered out).

use crate::support;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use support::judge_server::{JudgeReply, JudgeServer, says};
use support::model_server::{ModelServer, text, tool};
use support::*;

const SKILL: &str = "---\nname: meeting-notes\ndescription: Writes meeting notes to notes.md. Use when the user asks for meeting notes.\n---\nWrite notes.md with each action item and its owner.\n";

const CASES: &str = r#"{
  "skill_name": "meeting-notes",
  "cases": [
    {
      "id": "sync",
      "input": "Write the notes for the sync meeting.",
      "rubric": ["the notes name an owner"],
      "x-assay-checks": [{"type": "file_contains", "path": "notes.md", "needle": "Ada"}]
    },
    {
      "id": "retro",
      "input": "Write the notes for the retro.",
      "x-assay-checks": [{"type": "file_contains", "path": "notes.md", "needle": "owner: Grace"}]
    }
  ]
}"#;

const TRIGGERS: &str = r#"[
  {"query": "Write up the notes from this meeting, please", "should_trigger": true},
  {"query": "What is the weather in Paris?", "should_trigger": false},
  {"query": "Summarise the standup for me", "should_trigger": true}
]"#;

/// The model writes notes.md only when the skill is offered; it fires the skill on the first
/// trigger query, not on the weather, and (wrongly) not on the standup.
fn model() -> ModelServer {
    let server = ModelServer::start();
    let offered = Some("Writes meeting notes to notes.md");
    for (prompt, notes) in [
        (
            "notes for the sync meeting",
            "# Sync\n\n- Ada: ship the fix\n",
        ),
        (
            "notes for the retro",
            "# Retro\n\n- Grace to own the release\n",
        ),
    ] {
        server.script_each(
            prompt,
            offered,
            vec![
                tool("Skill", json!({"skill": "meeting-notes"})),
                tool(
                    "Write",
                    json!({"file_path": "{cwd}/notes.md", "content": notes}),
                ),
                text("Wrote notes.md."),
            ],
        );
        server.script_each(prompt, None, vec![text("Here are some notes.")]);
    }
    server.script_each(
        "notes from this meeting",
        None,
        vec![
            tool("Skill", json!({"skill": "meeting-notes"})),
            text("Done."),
        ],
    );
    server.script_each("weather", None, vec![text("Sunny.")]);
    server.script_each("standup", None, vec![text("Sure.")]);
    fire_canary(&server, "meeting-notes");
    server
}

/// The judge refuses the first request (HTTP 400, not retried), then finds the item met.
fn judge() -> JudgeServer {
    let met = json!({"expectations": [
        {"text": "the notes name an owner", "passed": true, "evidence": "notes.md: 'Ada: ship the fix'"}
    ]});
    let mut replies = vec![JudgeReply::Error {
        status: 400,
        retry_after: None,
    }];
    replies.extend((0..12).map(|_| says(met.clone())));
    JudgeServer::start(replies)
}

fn run(dir: &Path, server: &ModelServer, judge: &JudgeServer, out: &str) -> Output {
    let claude = agent_cli("claude");
    let mut env = claude_judged_env(&claude, server, &judge.url);
    env.extend([
        // The cache on, its key outside the project.
        ("ASSAY_NO_CACHE", "0".to_string()),
        (
            "ASSAY_CACHE_KEY",
            dir.with_extension("cache-key").display().to_string(),
        ),
    ]);
    let ws = dir.with_extension("workspaces").display().to_string();
    let args = [
        "run",
        "--harness",
        "claude-code",
        "--workspace-dir",
        &ws,
        "--runs",
        "3",
        "--trigger-runs",
        "2",
        "--baseline",
        "-j",
        "1",
        "--output-dir",
        out,
        "--no-history",
    ];
    assay_env(dir, &args, &env)
}

/// Text with what changes from run to run (times, costs, folders, dates) replaced.
fn steady(text: &str, dir: &Path) -> String {
    let mut s = text.replace(&dir.display().to_string(), "[project]");
    for (pattern, with) in [
        (r"[+-]?\d+(\.\d+)? ?(ms|s)\b", "[time]"),
        (r#"time="[0-9.]+""#, r#"time="[time]""#),
        (
            r#""duration_seconds": [0-9.]+"#,
            r#""duration_seconds": [time]"#,
        ),
        (r"\d{4}-\d\d-\d\dT[0-9:.\-]+Z?", "[date]"),
        (r"\d{8}-\d{6}[-0-9a-z]*", "[stamp]"),
        (r"claude-code [0-9.]+", "claude-code [version]"),
        (
            r#""(runtime_version|engine_version|assay_version|session_id)": "[^"]*""#,
            r#""$1": "[v]""#,
        ),
        (r#""(os|arch)": "[^"]*""#, r#""$1": "[os]""#),
        (r"\$\d+\.\d+", "$[cost]"),
    ] {
        s = regex_replace(&s, pattern, with);
    }
    s
}

fn regex_replace(s: &str, pattern: &str, with: &str) -> String {
    fancy_regex::Regex::new(pattern)
        .unwrap()
        .replace_all(s, with)
        .into_owned()
}

/// `assay report out --format <format>`, as printed.
fn raw_report(dir: &Path, format: &str) -> String {
    let out = assay(dir, &["report", "out", "--format", format]);
    assert!(matches!(code(&out), 0 | 1 | 3), "{}", stderr(&out));
    stdout(&out)
}

fn report(dir: &Path, format: &str) -> String {
    steady(&raw_report(dir, format), dir)
}

#[test]
fn every_output_of_a_compared_repeated_run_speaks_in_cases() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/skills/meeting-notes/SKILL.md", SKILL),
            ("evals/meeting-notes/cases.json", CASES),
            ("evals/meeting-notes/triggers.json", TRIGGERS),
        ],
    );
    let (server, judge) = (model(), judge());
    let out = run(d.path(), &server, &judge, "out");
    let said = format!("{}\n{}", stdout(&out), stderr(&out));
    // retro fails every run and the standup never fires; the judge failed once: exit 3 (a
    // result not fully graded), never 0.
    assert_eq!(code(&out), 3, "{said}");
    let terminal = steady(&said, d.path());
    assert!(
        terminal.contains("2 cases: 1 passed, 1 failed · 3 trigger queries: 2 passed, 1 failed"),
        "{terminal}"
    );
    // The judge's failure names the case and the cause.
    assert!(
        terminal.contains("meeting-notes/sync [run 1/3]: the judge API answered 400"),
        "{terminal}"
    );
    insta::assert_snapshot!("cases_terminal", terminal);

    let junit = report(d.path(), "junit");
    let doc = roxmltree::Document::parse(&junit).unwrap();
    let testcases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    // A testcase per case and per trigger query; the baseline's runs are properties.
    assert_eq!(testcases.len(), 5, "{junit}");
    let failures = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .count();
    assert_eq!(failures, 2, "retro and the standup: {junit}");
    let sync = testcases
        .iter()
        .find(|t| t.attribute("name") == Some("sync"))
        .unwrap();
    let prop = |name: &str| {
        sync.descendants()
            .find(|n| n.has_tag_name("property") && n.attribute("name") == Some(name))
            .and_then(|n| n.attribute("value"))
            .map(str::to_string)
    };
    assert_eq!(prop("assay.baseline.pass_rate").as_deref(), Some("0.00"));
    assert_eq!(prop("assay.pass_rate").as_deref(), Some("1.00"));
    insta::assert_snapshot!("cases_junit", junit);

    let github = report(d.path(), "github");
    let errors: Vec<&str> = github
        .lines()
        .filter(|l| l.starts_with("::error"))
        .collect();
    assert_eq!(errors.len(), 2, "one per failing case or query: {github}");
    assert!(
        errors
            .iter()
            .any(|l| l.contains("Summarise the standup for me")),
        "{github}"
    );
    insta::assert_snapshot!("cases_github", github);

    let text = raw_report(d.path(), "uaaps");
    let uaaps: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        uaaps["summary"],
        json!({"total": 5, "passed": 3, "failed": 2, "skipped": 0, "pass_rate": 0.6})
    );
    let names: Vec<&str> = uaaps["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    // One entry per case and per query (in the run folder's order), never one per run.
    assert_eq!(
        names,
        ["retro", "sync", "trigger-1", "trigger-2", "trigger-3"]
    );
    let sync = &uaaps["cases"][1];
    assert_eq!(sync["verdict"], "PASS", "{sync:#}");
    assert_eq!(
        sync["runs"],
        json!({"total": 2, "passed": 2, "pass_rate": 1.0})
    );
    assert_eq!(sync["baseline"]["verdict"], "FAIL", "{sync:#}");
    insta::assert_snapshot!("cases_uaaps", steady(&text, d.path()));

    let json: Value = serde_json::from_str(&raw_report(d.path(), "json")).unwrap();
    assert_eq!(
        json["headline"],
        "2 cases: 1 passed, 1 failed · 3 trigger queries: 2 passed, 1 failed · with the skill 1/2 cases vs without 0/2 (+50 points, Fisher p = 1.00)"
    );

    // The HTML report: the same headline, the case-runs the skill's, a matrix row per case and
    // per query (the viewer's own tests drive it in Chromium).
    let html = raw_report(d.path(), "html");
    assert!(
        html.contains("<p>6 of 12 case-runs passed (50%): 6 passed · 5 failed · 1 not graded · baseline runs: 0 of 6 passed</p>"),
        "{html}"
    );
    assert_eq!(html.matches("<tr id=\"m").count(), 5);
    assert!(html.contains("bmad:meeting-notes/trigger-3 “Summarise the standup for me”</a>"));

    let markdown = report(d.path(), "markdown");
    insta::assert_snapshot!("cases_markdown", markdown);

    // The same run again: every case-run comes from the cache, the canary's too; only the one
    // the judge failed on runs again (a result not fully graded is never cached).
    let asked = server.requests().len();
    let again = run(d.path(), &server, &judge, "again");
    let said = format!("{}\n{}", stdout(&again), stderr(&again));
    let new = &server.requests()[asked..];
    assert!(
        !new.is_empty()
            && new
                .iter()
                .all(|r| r.to_string().contains("notes for the sync meeting")),
        "{said}"
    );
    assert!(
        said.contains("1 agent run, 17 already done (cache or --resume)"),
        "{said}"
    );
    assert!(
        said.contains(
            "canary: `meeting-notes` fired through claude-code in 2 of 2 run(s), from the cache"
        ),
        "{said}"
    );
}
