//! Routing across sibling skills, end to end: the real Claude Code CLI against the scripted
//! model server, with a second skill installed beside the one under test by `--with-skills`.
//! The scripted model uses the sibling only when the CLI offers it (its description is in the
//! request), so a query routed to it proves it was installed; trigger queries say where they
//! must and must not go (`x-assay-checks`: `must_fire`, `must_not_fire`, `no_other_skill`).

use crate::support;

use serde_json::json;
use support::model_server::{ModelServer, text, tool};
use support::*;

const BRIEF: &str =
    "---\nname: brief\ndescription: Writes product briefs from notes.\n---\nWrite brief.md.\n";
/// Only requests that offer this skill hold this text.
const SLIDES_SAYS: &str = "Builds slide decks for launches";

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let triggers = json!([
        {"query": "draft a product brief for billing", "should_trigger": true,
         "x-assay-checks": [{"type": "no_other_skill"}]},
        {"query": "make slides for the launch", "should_trigger": false,
         "x-assay-checks": [{"type": "must_fire", "skill": "slides"}]},
        {"query": "write a brief and a deck for pricing", "should_trigger": true,
         "x-assay-checks": [{"type": "must_not_fire", "skill": "slides"}]},
        {"query": "what is the capital of Australia", "should_trigger": false},
    ]);
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (".claude/skills/brief/SKILL.md", BRIEF),
            (
                "evals/brief/triggers.json",
                &serde_json::to_string_pretty(&triggers).unwrap(),
            ),
            (
                "siblings/slides/SKILL.md",
                &format!("---\nname: slides\ndescription: {SLIDES_SAYS}.\n---\nMake slides.\n"),
            ),
        ],
    );
    d
}

fn run(dir: &std::path::Path, server: &ModelServer, extra: &[&str]) -> std::process::Output {
    let claude = agent_cli("claude");
    let env = claude_env(&claude, server);
    let mut args = vec![
        "run",
        "--harness",
        "claude-code",
        "--pass-env",
        "CLAUDE_CODE_MAX_RETRIES",
        "--mode",
        "triggers",
        "--trigger-runs",
        "2",
        "--no-cache",
    ];
    args.extend_from_slice(extra);
    assay_env(dir, &args, &env)
}

#[test]
fn with_skills_installs_siblings_and_reports_where_each_query_went() {
    let server = ModelServer::start();
    fire_canary(&server, "brief");
    let fire = |skills: &[&str]| {
        let mut r: Vec<_> = skills
            .iter()
            .map(|s| tool("Skill", json!({"skill": s})))
            .collect();
        r.push(text("done"));
        r
    };
    server.script_each("draft a product brief", None, fire(&["brief"]));
    server.script_each("make slides", Some(SLIDES_SAYS), fire(&["slides"]));
    server.script_each(
        "write a brief and a deck",
        Some(SLIDES_SAYS),
        fire(&["brief", "slides"]),
    );
    server.script_each("write a brief and a deck", None, fire(&["brief"]));

    let d = project();
    let out = run(
        d.path(),
        &server,
        &[
            "--with-skills",
            "siblings",
            "--output-dir",
            "out",
            "--reporter",
            "markdown,json",
        ],
    );
    let (so, se) = (stdout(&out), stderr(&out));
    // The third query reached the sibling it must not: the run fails on it alone.
    assert_eq!(code(&out), 1, "{so}\n{se}");
    assert!(
        so.contains("routing: must_not_fire `slides` did not hold (rate 100%"),
        "{so}"
    );
    assert!(so.contains("reached: brief 2/2, slides 2/2"), "{so}");
    assert!(so.contains("reached: slides 2/2"), "{so}");
    assert!(
        so.contains("slides: precision 0.50, recall 1.00 over 3 queries (tp 1, fp 1, tn 1, fn 0)"),
        "{so}"
    );
    assert!(
        so.contains("brief: precision 1.00, recall 1.00 over 4 queries"),
        "{so}"
    );

    let report = read_json(&d.path().join("out/report.json"));
    let triggers = report["statistics"]["triggers"].as_array().unwrap();
    let passed: Vec<bool> = triggers
        .iter()
        .map(|t| t["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(passed, [true, true, false, true], "{triggers:#?}");
    assert_eq!(triggers[1]["skills"][0]["skill"], "slides");
    assert_eq!(triggers[1]["rules"][0]["passed"], true);
    assert_eq!(triggers[1]["rules"][0]["kind"], "must_fire");
    assert_eq!(triggers[1]["rules"][0]["skills"], json!(["slides"]));
    assert_eq!(triggers[0]["rules"][0]["kind"], "no_other_skill");
    assert_eq!(triggers[0]["rules"][0]["skills"], json!(["brief"]));
    assert_eq!(triggers[1]["expect"]["must_fire"], json!(["slides"]));
    let routing = report["statistics"]["routing"].as_array().unwrap();
    let names: Vec<&str> = routing
        .iter()
        .map(|s| s["skill"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["brief", "slides"]);
    let run_json = read_json(&d.path().join("out/run.json"));
    assert_eq!(run_json["options"]["with_skills"], json!(["slides"]));
    let md = std::fs::read_to_string(d.path().join("out/summary.md")).unwrap();
    assert!(md.contains("Routing per skill"), "{md}");
    assert!(md.contains(r"must\_fire \`slides\`"), "{md}");

    // Without the sibling, the query meant for it reaches nothing: its must_fire fails.
    let out = run(d.path(), &server, &["--filter", "trigger-2"]);
    let (so, se) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), 1, "{so}\n{se}");
    assert!(
        so.contains("routing: must_fire `slides` did not hold (rate 0%"),
        "{so}"
    );
}

#[test]
fn a_bad_with_skills_folder_or_routing_check_stops_the_run_with_exit_2() {
    let d = project();
    let server = ModelServer::start();
    let out = run(d.path(), &server, &["--with-skills", "nowhere"]);
    assert_eq!(code(&out), 2, "{}\n{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("--with-skills"), "{}", stderr(&out));
    std::fs::create_dir_all(d.path().join("empty")).unwrap();
    let out = run(d.path(), &server, &["--with-skills", "empty"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("holds no skill"), "{}", stderr(&out));

    // A check that is not about routing on a trigger query: named where it is written.
    write_tree(
        d.path(),
        &[(
            "evals/brief/triggers.json",
            r#"[{"query": "q", "should_trigger": true,
  "x-assay-checks": [{"type": "contains", "needle": "x"}, {"type": "must_fire", "skill": "a", "negate": true}]}]"#,
        )],
    );
    let out = assay(d.path(), &["validate"]);
    let se = stderr(&out) + &stdout(&out);
    assert!(!se.contains("not a skill name"), "{se}");
    assert_eq!(code(&out), 2, "{se}");
    assert!(
        se.contains("`contains` does not apply to a trigger query"),
        "{se}"
    );
    assert!(se.contains("a routing check cannot be negated"), "{se}");
    assert!(se.contains("triggers.json:2:"), "{se}");
    assert!(server.requests().is_empty(), "nothing ran");

    // A skill name that is no folder's, made to forge a line of a report: refused at load.
    write_tree(
        d.path(),
        &[(
            "evals/brief/triggers.json",
            r#"[{"query": "q", "should_trigger": true,
  "x-assay-checks": [{"type": "must_fire", "skill": "x\n::error::forged\u001b[2J"}]}]"#,
        )],
    );
    let out = assay(d.path(), &["validate"]);
    let se = stderr(&out) + &stdout(&out);
    assert_eq!(code(&out), 2, "{se}");
    assert!(se.contains("is not a skill name"), "{se}");
    assert!(
        !se.lines().any(|l| l.starts_with("::error::forged")) && !se.contains('\u{1b}'),
        "{se}"
    );
}
