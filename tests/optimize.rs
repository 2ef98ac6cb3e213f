//! `assay optimize description` end to end: the real Claude Code CLI against the scripted
//! model server, whose model fires the skill only when the description the CLI sends it holds
//! a keyword; a scripted proposer (the judge server) offers candidates. The optimiser must
//! find the one with the keyword, prove it on holdout, and reject a candidate whose gain is
//! noise.

mod support;

use serde_json::json;
use support::judge_server::{JudgeReply, JudgeServer};
use support::model_server::{ModelServer, text, tool};
use support::*;

const SKILL: &str = "---\nname: brief\ndescription: Writes documents.\n---\nWrite a one-page brief.md from the user's notes.\n";

/// Five requests the skill is for, five it is not.
const POSITIVE: [&str; 5] = [
    "draft a product brief for the billing revamp",
    "turn my launch notes into a one-page brief",
    "I need a PRD summary for the mobile app",
    "summarize this feature plan as a product brief",
    "write the brief for our Q3 pricing change",
];
const NEGATIVE: [&str; 5] = [
    "what is the capital of Australia",
    "fix the typo in README.md",
    "how many days are in a leap year",
    "translate hello into French",
    "list the files in this folder",
];

/// The word that makes the scripted model use the skill.
const KEYWORD: &str = "zebra-protocol";
/// A word that makes it use the skill on two requests only: a gain that is noise.
const WEAK: &str = "quokka-mode";

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let triggers: Vec<serde_json::Value> = POSITIVE
        .iter()
        .map(|q| json!({"query": q, "should_trigger": true}))
        .chain(
            NEGATIVE
                .iter()
                .map(|q| json!({"query": q, "should_trigger": false})),
        )
        .collect();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/skills/brief/SKILL.md", SKILL),
            (
                "evals/brief/triggers.json",
                &serde_json::to_string_pretty(&triggers).unwrap(),
            ),
        ],
    );
    d
}

fn optimize(
    dir: &std::path::Path,
    server: &ModelServer,
    proposer: &JudgeServer,
    extra: &[&str],
) -> std::process::Output {
    let claude = agent_cli("claude");
    let mut env = claude_env(&claude, server);
    env.retain(|(k, _)| *k != "ASSAY_JUDGE");
    env.push(("ASSAY_JUDGE_BASE_URL", proposer.url.clone()));
    env.push(("ASSAY_JUDGE_API_KEY", "sk-proposer".into()));
    let mut args = vec![
        "optimize",
        "description",
        ".claude/skills/brief",
        "--harness",
        "claude-code",
        "--pass-env",
        "CLAUDE_CODE_MAX_RETRIES",
        "--proposer",
        "anthropic:claude-proposer",
        "--trigger-runs",
        "3",
        "--iterations",
        "1",
        "--seed",
        "7",
    ];
    args.extend_from_slice(extra);
    assay_env(dir, &args, &env)
}

#[test]
fn finds_the_description_that_fires_proves_it_on_holdout_and_rejects_noise() {
    let server = ModelServer::start();
    // The model uses the skill on every request it is for when the description says KEYWORD,
    // and on one train and one holdout request when it says WEAK; otherwise never.
    let queries: Vec<assay::optimize::Query> = POSITIVE
        .iter()
        .map(|q| (q, true))
        .chain(NEGATIVE.iter().map(|q| (q, false)))
        .enumerate()
        .map(|(i, (q, should))| assay::optimize::Query {
            id: format!("q{:03}", i + 1),
            query: q.to_string(),
            should_trigger: should,
        })
        .collect();
    let (train, holdout) = assay::optimize::split::stratified(&queries, 0.6, 7);
    let weak: Vec<&str> = [&train, &holdout]
        .iter()
        .map(|half| {
            half.iter()
                .find(|q| q.should_trigger)
                .unwrap()
                .query
                .as_str()
        })
        .collect();
    let fire = || vec![tool("Skill", json!({"skill": "brief"})), text("done")];
    for q in POSITIVE {
        server.script_each(q, Some(KEYWORD), fire());
        if weak.contains(&q) {
            server.script_each(q, Some(WEAK), fire());
        }
    }

    // A real gain: accepted, and written with --write.
    let d = project();
    let good = format!(
        "Writes product briefs and PRD summaries from notes; use when asked for a brief ({KEYWORD})."
    );
    let proposer = JudgeServer::start(vec![JudgeReply::Says(
        json!({"candidates": [good]}).to_string(),
    )]);
    let out = optimize(
        d.path(),
        &server,
        &proposer,
        &["--write", "--output-dir", "opt"],
    );
    let (so, se) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{so}\n{se}");
    assert!(so.contains("improved: holdout accuracy 50%"), "{so}\n{se}");
    assert!(so.contains("→ 100%"), "{so}");
    assert!(so.contains("-description: Writes documents."), "{so}");
    assert!(so.contains(&format!("+description: \"{good}\"")), "{so}");
    let skill = std::fs::read_to_string(d.path().join(".claude/skills/brief/SKILL.md")).unwrap();
    assert!(skill.contains(KEYWORD), "{skill}");
    let rec = read_json(&d.path().join("opt/optimize.json"));
    assert_eq!(rec["improved"], true);
    assert_eq!(rec["iterations"][0]["accepted"], 0);
    let c = &rec["iterations"][0]["candidates"][0];
    assert!(c["comparison"]["p_value"].as_f64().unwrap() < rec["level"].as_f64().unwrap());
    // The proposer saw the train queries it got wrong, never the holdout.
    let asked = proposer.requests()[0].1.to_string();
    for q in &holdout {
        assert!(
            !asked.contains(&q.query),
            "holdout query shown: {}",
            q.query
        );
    }
    assert!(
        train
            .iter()
            .filter(|q| q.should_trigger)
            .all(|q| asked.contains(&q.query)),
        "{asked}"
    );

    // Resumed, it decides again from what is recorded: no proposer call, no agent run.
    let before = server.requests().len();
    let silent = JudgeServer::start(vec![]);
    let out = optimize(d.path(), &server, &silent, &["--resume", "opt"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("improved: holdout accuracy 50%"),
        "{}",
        stdout(&out)
    );
    assert!(silent.requests().is_empty(), "the proposer was asked again");
    assert_eq!(server.requests().len(), before, "an agent ran again");

    // Noise: better by one query on holdout, not significantly. Nothing is written.
    let d = project();
    let weak_desc = format!("Writes documents ({WEAK}).");
    let proposer = JudgeServer::start(vec![JudgeReply::Says(
        json!({"candidates": [weak_desc]}).to_string(),
    )]);
    let out = optimize(
        d.path(),
        &server,
        &proposer,
        &["--write", "--output-dir", "opt"],
    );
    let (so, se) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{so}\n{se}");
    assert!(so.contains("no significant improvement"), "{so}\n{se}");
    assert!(se.contains("candidate 1.1: train"), "{se}");
    let rec = read_json(&d.path().join("opt/optimize.json"));
    let c = &rec["iterations"][0]["candidates"][0];
    assert_eq!(c["comparison"]["better"], true, "{c:#}");
    assert_eq!(c["comparison"]["significant"], false, "{c:#}");
    assert_eq!(
        std::fs::read_to_string(d.path().join(".claude/skills/brief/SKILL.md")).unwrap(),
        SKILL,
        "a description whose gain is noise is never written"
    );
}
