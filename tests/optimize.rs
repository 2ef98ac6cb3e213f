//! `assay optimize description` end to end: the real Claude Code CLI against the scripted
//! model server, whose model fires the skill only when the description the CLI sends it holds
//! a keyword; a scripted proposer (the judge server) offers candidates. The optimiser must
//! find the one with the keyword, prove it on holdout, and reject a candidate whose gain is
//! noise.

use crate::support;

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
        "--seed",
        "7",
    ];
    if !extra.contains(&"--iterations") {
        args.extend(["--iterations", "1"]);
    }
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
    // A reviewer's notes on a train query (given to the proposer) and a holdout one (never).
    let reviewed = tempfile::tempdir().unwrap();
    let positive = |half: &[assay::optimize::Query]| {
        half.iter()
            .find(|q| q.should_trigger)
            .unwrap()
            .query
            .clone()
    };
    reviewed_run(
        reviewed.path(),
        &[
            (
                "t-train",
                &positive(&train),
                "TRAIN-NOTE: briefs are the whole point",
            ),
            (
                "t-holdout",
                &positive(&holdout),
                "HOLDOUT-NOTE: never show this",
            ),
        ],
    );
    let feedback = reviewed.path().to_str().unwrap().to_string();
    let out = optimize(
        d.path(),
        &server,
        &proposer,
        &["--write", "--output-dir", "opt", "--feedback", &feedback],
    );
    let (so, se) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{so}\n{se}");
    assert!(so.contains("improved: holdout accuracy 50%"), "{so}\n{se}");
    assert!(
        se.contains("feedback: 1 reviewer note(s) on train queries"),
        "{se}"
    );
    assert!(so.contains("→ 100%"), "{so}");
    assert!(so.contains("-description: Writes documents."), "{so}");
    assert!(so.contains(&format!("+description: \"{good}\"")), "{so}");
    let skill = std::fs::read_to_string(d.path().join(".claude/skills/brief/SKILL.md")).unwrap();
    assert!(skill.contains(KEYWORD), "{skill}");
    let rec = read_json(&d.path().join("opt/optimize.json"));
    assert_eq!(rec["improved"], true);
    // The HTML view beside it: the candidate accepted, the diff, no script.
    let page = std::fs::read_to_string(d.path().join("opt/report.html")).unwrap();
    assert!(
        page.contains("<tr class=\"accepted\" id=\"candidate-1-1\">"),
        "{page}"
    );
    assert!(
        page.contains(KEYWORD) && !page.contains("<script"),
        "{page}"
    );
    assert!(
        page.contains("<span class=\"del\">-description: Writes documents.</span>"),
        "{page}"
    );
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
    assert!(
        asked.contains("TRAIN-NOTE") && !asked.contains("HOLDOUT-NOTE"),
        "{asked}"
    );
    let used: Vec<(String, bool)> = rec["feedback"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["case"].as_str().unwrap().to_string(), n["used"] == true))
        .collect();
    assert_eq!(
        used,
        [
            ("t-train".to_string(), true),
            ("t-holdout".to_string(), false)
        ]
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
    let page = std::fs::read_to_string(d.path().join("opt/report.html")).unwrap();
    assert!(page.contains("improved: holdout accuracy 50%"), "{page}");
    // Written to the file now: the diff still shows (from the written file).
    assert!(
        page.contains("+description: &quot;Writes product briefs"),
        "{page}"
    );
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

/// A run folder with a trigger case-run per (case, query), and a reviewer's `bad` note on
/// each in its feedback.json.
fn reviewed_run(dir: &std::path::Path, runs: &[(&str, &str, &str)]) {
    let base = read_json(&repo().join("tests/fixtures/run-basic/bmad_brief/B1/run-1/result.json"));
    let mut items = Vec::new();
    for (case, query, note) in runs {
        let mut r = base.clone();
        r["case"] = json!(case);
        r["kind"] = json!("trigger");
        r["trigger"] = json!({"query": query, "should_trigger": true, "fired": false});
        let to = dir.join("bmad_brief").join(case).join("run-1");
        std::fs::create_dir_all(&to).unwrap();
        std::fs::write(to.join("result.json"), r.to_string()).unwrap();
        items.push(
            json!({"suite": "bmad:brief", "case": case, "run": 1, "verdict": "bad", "note": note}),
        );
    }
    let f = json!({"schema": "assay.feedback/v1", "run": "", "items": items});
    std::fs::write(dir.join("feedback.json"), f.to_string()).unwrap();
}

#[test]
fn feedback_that_cannot_be_read_is_bad_input_naming_it() {
    let d = project();
    for (arg, says) in [("nowhere", "nowhere"), ("evals", "no feedback.json")] {
        let out = assay(
            d.path(),
            &[
                "optimize",
                "description",
                ".claude/skills/brief",
                "--feedback",
                arg,
            ],
        );
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    }
    std::fs::write(d.path().join("f.json"), "{\"schema\": \"x\"}").unwrap();
    let out = assay(
        d.path(),
        &[
            "optimize",
            "description",
            ".claude/skills/brief",
            "--feedback",
            "f.json",
        ],
    );
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("f.json: not a feedback file"),
        "{}",
        stderr(&out)
    );
}

/// A finished optimisation's record, built by hand: a hostile candidate accepted, one rejected
/// as noise, and a reviewer's note left out because its query is in holdout.
fn hand_record(file: &std::path::Path) -> assay::optimize::Record {
    let score = |correct: u64, runs: u64| {
        json!({"queries": [{"id": "q1", "query": "draft a <b>brief</b>", "should_trigger": true,
                            "fired": correct, "runs": runs}],
               "correct": correct, "runs": runs, "failed": 0, "cost_usd": 0.0})
    };
    let evil = "Briefs.</script><script>alert(1)</script><img src=x onerror=alert(2)>";
    serde_json::from_value(json!({
        "schema": "assay.optimize/v1", "skill": "brief", "file": file,
        "seed": 7, "train_fraction": 0.6, "trigger_runs": 3, "threshold": 0.5,
        "alpha": 0.05, "level": 0.025, "proposer": "anthropic claude-proposer",
        "train": [{"id": "q1", "query": "draft a <b>brief</b>", "should_trigger": true}],
        "holdout": [{"id": "q2", "query": "write the brief", "should_trigger": true}],
        "start": {"description": "Writes documents.", "train": score(3, 6), "holdout": score(6, 12)},
        "iterations": [{"number": 1, "from": "Writes documents.", "accepted": 0, "candidates": [
            {"description": evil, "train": score(6, 6), "holdout": score(12, 12),
             "comparison": {"p_value": 0.0137, "level": 0.025, "better": true, "significant": true}},
            {"description": "Writes documents, quokka.", "train": score(5, 6), "holdout": score(8, 12),
             "comparison": {"p_value": 0.68, "level": 0.025, "better": true, "significant": false}}]}],
        "best": {"description": evil, "train": score(6, 6), "holdout": score(12, 12)},
        "improved": true,
        "verdict": "improved: holdout accuracy 50% [25–75%] → 100% [76–100%]",
        "cost_usd": 0.5,
        "feedback": [{"source": "runs/r1", "suite": "bmad:brief", "case": "t2", "run": 1,
                      "verdict": "bad", "note": "<img src=x onerror=alert(3)>", "query": "write the brief",
                      "should_trigger": true, "fired": false, "used": false,
                      "left_out": "its query is a holdout query (the proposer never sees the holdout)"}],
        "planned": {"iterations": 1, "candidates": 2, "holdout_top": 2}
    }))
    .unwrap()
}

#[test]
fn an_optimisation_folder_renders_as_one_html_page_with_hostile_text_inert() {
    let d = project();
    let dir = d.path().join("opt");
    let rec = hand_record(&d.path().join(".claude/skills/brief/SKILL.md"));
    assay::optimize::save(&dir, &rec).unwrap();
    // save writes the page beside optimize.json.
    let saved = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let out = assay(d.path(), &["report", "opt", "--format", "html"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let page = stdout(&out);
    assert_eq!(page, saved, "the same page either way");
    assert!(page.contains("content=\"default-src 'none';"), "{page}");
    for s in [
        "Fisher&apos;s exact test",
        "<tr class=\"accepted\" id=\"candidate-1-1\">",
        "Briefs.&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;",
        "the gain may be noise",
        "&lt;img src=x onerror=alert(3)&gt;",
        "no: its query is a holdout query",
        "<span class=\"del\">-description: Writes documents.</span>",
    ] {
        assert!(page.contains(s), "{s}: {page}");
    }
    assert!(!page.contains("<script") && !page.contains("<img") && !page.contains("<b>"));
    // -o writes it; --format json gives the record; other formats say what there is.
    let out = assay(
        d.path(),
        &["report", "opt", "--format", "html", "-o", "page.html"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(d.path().join("page.html")).unwrap(),
        saved
    );
    let out = assay(d.path(), &["report", "opt", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let back: assay::optimize::Record = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(back, rec);
    let out = assay(d.path(), &["report", "opt"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("is an optimisation folder"),
        "{}",
        stderr(&out)
    );
    // A broken record is an error naming the file.
    std::fs::write(dir.join("optimize.json"), "{").unwrap();
    let out = assay(d.path(), &["report", "opt", "--format", "html"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("optimize.json"), "{}", stderr(&out));

    // In a real browser: it renders, the hostile text is text, no element was injected, and
    // no script ran (the page has none, and its policy allows none).
    let file = dir.join("report.html");
    let (dom, log) = dump_dom(&format!("file://{}", file.display()));
    assert!(dom.contains("<h2>Iteration 1</h2>"), "{dom}");
    assert!(dom.contains("<svg class=\"plot\""), "{dom}");
    assert!(!dom.contains("<script") && !dom.contains("<img"), "{dom}");
    assert!(dom.contains("&lt;img src=x onerror=alert(2)&gt;"), "{dom}");
    assert!(!log.contains("Content Security Policy"), "{log}");
}

/// The proposer offers a description it offered before (real models do): it is measured from
/// the cache under its new label, never a fatal "no trigger run said whether the skill fired".
#[test]
fn a_candidate_proposed_again_reuses_its_measurement() {
    let server = ModelServer::start();
    let d = project();
    let weak_desc = format!("Writes documents ({WEAK}).");
    let reply = || JudgeReply::Says(json!({"candidates": [weak_desc.clone()]}).to_string());
    let proposer = JudgeServer::start(vec![reply(), reply()]);
    let out = optimize(
        d.path(),
        &server,
        &proposer,
        &["--iterations", "2", "--output-dir", "opt"],
    );
    let (so, se) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{so}\n{se}");
    assert!(se.contains("candidate 2.1: train"), "{se}");
    let rec = read_json(&d.path().join("opt/optimize.json"));
    let iterations = rec["iterations"].as_array().unwrap();
    assert_eq!(iterations.len(), 2, "{rec:#}");
    let (a, b) = (
        &iterations[0]["candidates"][0],
        &iterations[1]["candidates"][0],
    );
    assert_eq!(
        a["train"], b["train"],
        "the same description, the same measurement"
    );
}

/// A proposer that answers with prose stops the optimisation: exit 3, and the record and its
/// page say it stopped, why, and what the proposer answered (never "in progress" forever).
#[test]
fn a_stopped_optimisation_says_so_and_what_the_proposer_answered() {
    let server = ModelServer::start();
    let d = project();
    let proposer = JudgeServer::start(vec![JudgeReply::Says(
        "I would rather not write descriptions today.".into(),
    )]);
    let out = optimize(d.path(), &server, &proposer, &["--output-dir", "opt"]);
    let (so, se) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), 3, "{so}\n{se}");
    let rec = read_json(&d.path().join("opt/optimize.json"));
    let stopped = rec["stopped"].as_str().unwrap_or_default();
    assert!(
        stopped.starts_with("an error: the proposer did not answer with JSON: I would rather not"),
        "{rec:#}"
    );
    assert_eq!(rec["verdict"], "", "no verdict: {rec:#}");
    let page = std::fs::read_to_string(d.path().join("opt/report.html")).unwrap();
    assert!(page.contains("stopped: no verdict"), "{page}");
    assert!(!page.contains("in progress"), "{page}");
    assert!(
        page.contains("I would rather not write descriptions today."),
        "{page}"
    );
}
