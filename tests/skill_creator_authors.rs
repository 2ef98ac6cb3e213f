//! What a skill-creator author reads of a run (issue 43, items 8–10): each eval's `name`, the
//! input files the agent is told of, not-graded runs left out of `benchmark.json`, a judge
//! failure an error in JUnit as in the exit code, the judge's unusable answer kept, every
//! report of the folder rewritten by `assay grade`, and summary lines that say what is so.

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::judge_server::{JudgeReply, JudgeServer, says};
use support::*;

const TOML: &str = "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"echo '# Brief' > brief.md; echo Wrote brief.md\"]\n";

/// A skill-creator suite: two named evals, the first with an input file.
const EVALS: &str = r#"{"skill_name": "brief", "evals": [
  {"id": 1, "name": "brief-from-notes", "prompt": "Write brief.md from the notes.",
   "files": ["evals/files/notes.md"], "expectations": ["brief.md exists"]},
  {"id": 2, "name": "brief-from-nothing", "prompt": "Write brief.md.", "expectations": ["brief.md exists"]}
]}"#;

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", TOML),
            (
                "skills/brief/SKILL.md",
                "---\nname: brief\ndescription: Writes briefs.\n---\nWrite a brief.\n",
            ),
            ("skills/brief/evals/evals.json", EVALS),
            ("skills/brief/evals/files/notes.md", "- launch on Monday\n"),
        ],
    );
    d
}

/// A vendor key in assay's environment, which every record is cleaned of.
const VENDOR_KEY: &str = "sk-ant-kept-out-of-records";

fn judged(dir: &Path, judge: &JudgeServer, args: &[&str]) -> std::process::Output {
    assay_env(
        dir,
        args,
        &[
            ("ASSAY_JUDGE_BASE_URL", judge.url.clone()),
            ("ASSAY_JUDGE_API_KEY", "sk-judge".into()),
            ("ASSAY_JUDGE_TIMEOUT", "5".into()),
            ("ASSAY_JUDGE_ATTEMPTS", "1".into()),
            ("ANTHROPIC_API_KEY", VENDOR_KEY.into()),
        ],
    )
}

fn passes() -> JudgeReply {
    says(json!({
        "expectations": [{"text": "brief.md exists", "passed": true, "evidence": "brief.md: '# Brief'"}],
        "eval_feedback": {"suggestions": [], "overall": "The expectations are fine."}
    }))
}

fn run_args<'a>(out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "run",
        "--judge",
        "anthropic",
        "-j",
        "1",
        "--output-dir",
        out,
        "--reporter",
        "junit,skill-creator,markdown,html",
    ];
    a.extend_from_slice(extra);
    a
}

/// The folder of a case-run, by its case id.
fn case_dir(run: &Path, case: &str) -> std::path::PathBuf {
    Path::new(results(run)[case]["dir"].as_str().unwrap()).to_path_buf()
}

#[test]
fn names_input_files_and_a_not_graded_run_as_skill_creator_reads_them() {
    let d = project();
    // Eval 1 is graded; eval 2's judge answers nonsense twice (the answer and the repair).
    let judge = JudgeServer::start(vec![
        passes(),
        JudgeReply::Says(format!("PASS, looks great <secret {VENDOR_KEY}>")),
        JudgeReply::Says("I said PASS".into()),
    ]);
    let out = judged(d.path(), &judge, &run_args("out", &[]));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 3, "{said}");
    let run = d.path().join("out");

    // A suite in the skill's own evals/ folder is skill-creator's, and labelled so.
    let r = results(&run);
    assert_eq!(r["1"]["suite"], "skill-creator:brief", "{:#}", r["1"]);
    assert!(
        run.join("skill-creator_brief/1/run-1/result.json")
            .is_file()
    );
    // The eval's name is kept, beside its id.
    assert_eq!(r["1"]["case_name"], "brief-from-notes", "{:#}", r["1"]);
    // The agent is told of its input files, as skill-creator's executor tells it.
    let prompt = std::fs::read_to_string(case_dir(&run, "1").join("prompt.txt")).unwrap();
    assert!(
        prompt.starts_with("Write brief.md from the notes.")
            && prompt.contains("Input files: evals/files/notes.md"),
        "{prompt}"
    );
    let prompt = std::fs::read_to_string(case_dir(&run, "2").join("prompt.txt")).unwrap();
    assert_eq!(prompt.trim_end(), "Write brief.md.");

    // The judge's unusable answers are kept in the case-run's folder and named.
    let dir2 = case_dir(&run, "2");
    let error = r["2"]["judge"]["error"].as_str().unwrap();
    assert!(
        error.contains("not valid") && error.contains("judge-reply.txt"),
        "{error}"
    );
    let kept = std::fs::read_to_string(dir2.join("judge-reply.txt")).unwrap();
    assert!(
        kept.contains("PASS, looks great") && kept.contains("I said PASS"),
        "{kept}"
    );
    assert!(
        !kept.contains(VENDOR_KEY) && kept.contains("[redacted:ANTHROPIC_API_KEY]"),
        "redacted: {kept}"
    );

    // benchmark.json: the not-graded run is left out of the rates, and said.
    let b = read_json(&run.join("benchmark.json"));
    let runs = b["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{b:#}");
    assert_eq!(runs[0]["eval_name"], "brief-from-notes", "{b:#}");
    assert_eq!(
        b["run_summary"]["with_skill"]["pass_rate"]["mean"], 1.0,
        "{b:#}"
    );
    assert!(
        b["notes"].to_string().contains("not graded"),
        "{:#}",
        b["notes"]
    );
    let m = read_json(&run.join("skill-creator/eval-1/with_skill/run-1/eval_metadata.json"));
    assert_eq!(m["eval_name"], "brief-from-notes");

    // JUnit agrees with the exit code: the judge's failure is an error.
    let junit = std::fs::read_to_string(run.join("junit.xml")).unwrap();
    assert!(junit.contains("errors=\"1\""), "{junit}");
    let case2 = &junit[junit.find("name=\"2\"").unwrap()..];
    let case2 = &case2[..case2.find("</testcase>").unwrap()];
    assert!(
        case2.contains("<error") && !case2.contains("<skipped"),
        "{case2}"
    );
    // The terminal names the case by its name too.
    assert!(said.contains("brief-from-notes"), "{said}");
}

#[test]
fn assay_grade_rewrites_every_report_of_the_folder() {
    let d = project();
    let dead = JudgeServer::start(vec![
        JudgeReply::Error {
            status: 503,
            retry_after: None,
        };
        4
    ]);
    let out = judged(d.path(), &dead, &run_args("out", &[]));
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let run = d.path().join("out");
    let before = std::fs::read_to_string(run.join("junit.xml")).unwrap();
    assert!(before.contains("errors=\"2\""), "{before}");

    let judge = JudgeServer::start(vec![passes(), passes()]);
    let out = judged(d.path(), &judge, &["grade", "out", "--judge", "anthropic"]);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{said}");
    let junit = std::fs::read_to_string(run.join("junit.xml")).unwrap();
    assert!(
        junit.contains("errors=\"0\"")
            && junit.contains("failures=\"0\"")
            && !junit.contains("<error"),
        "{junit}"
    );
    let b = read_json(&run.join("benchmark.json"));
    assert_eq!(b["runs"].as_array().unwrap().len(), 2, "{b:#}");
    assert_eq!(
        b["run_summary"]["with_skill"]["pass_rate"]["mean"], 1.0,
        "{b:#}"
    );
    let g = read_json(&run.join("skill-creator/eval-2/with_skill/run-1/grading.json"));
    assert_eq!(g["summary"]["pass_rate"], 1.0, "{g:#}");
    let md = std::fs::read_to_string(run.join("summary.md")).unwrap();
    assert!(!md.contains("not graded"), "{md}");
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(!html.contains("data-verdict=\"not-graded\""), "{html}");
    assert!(
        said.contains("report.html") && said.contains("junit.xml"),
        "{said}"
    );
}

#[test]
fn the_summary_says_only_what_is_so() {
    let d = project();
    // Each run: the expectation fails; the judge flags no expectation as weak.
    let fails = || {
        says(json!({
            "expectations": [{"text": "brief.md exists", "passed": false, "evidence": "no file"}],
            "eval_feedback": {"suggestions": [], "overall": "Nothing to add."}
        }))
    };
    let judge = JudgeServer::start((0..4).map(|_| fails()).collect());
    let out = judged(
        d.path(),
        &judge,
        &[
            "run",
            "--judge",
            "anthropic",
            "-j",
            "1",
            "--runs",
            "2",
            "--output-dir",
            "out",
        ],
    );
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 1, "{said}");
    assert!(!said.contains("weak expectations"), "{said}");
    assert!(said.contains("k = 2"), "{said}");
    assert!(!said.contains("k = 3"), "{said}");
    let line = said
        .lines()
        .find(|l| l.contains("/1") && l.contains("0/2 passed"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(!line.contains("score 1.00"), "{line}");
}

#[test]
fn trigger_queries_have_no_baseline_cell_in_the_matrix() {
    let d = copy_example("tests/fixtures/run-basic");
    let run = d.path();
    // A baseline twin of one case, so the matrix has a baseline column.
    let from = run.join("skillet_hello/001/run-1");
    let to = run.join("skillet_hello/001/baseline-run-1");
    std::fs::create_dir_all(&to).unwrap();
    let mut r: Value = read_json(&from.join("result.json"));
    r["variant"] = json!("baseline");
    std::fs::write(to.join("result.json"), r.to_string()).unwrap();
    // A trigger query, run with the skill only.
    let t = run.join("bmad_brief/trigger-1/run-1");
    std::fs::create_dir_all(&t).unwrap();
    let mut q: Value = read_json(&run.join("bmad_brief/B1/run-1/result.json"));
    q["case"] = json!("trigger-1");
    q["kind"] = json!("trigger");
    q["dir"] = json!("bmad_brief/trigger-1/run-1");
    q["trigger"] = json!({"query": "write me a brief", "should_trigger": true, "fired": true});
    q["grade"] = json!({"verdict": "pass", "checks_passed": 0, "checks_total": 0, "score": 1.0, "reasons": []});
    std::fs::write(t.join("result.json"), q.to_string()).unwrap();
    let file = run.join("r.html");
    let out = assay(
        &repo(),
        &[
            "report",
            run.to_str().unwrap(),
            "--format",
            "html",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let html = std::fs::read_to_string(&file).unwrap();
    let at = html
        .find("bmad:brief/trigger-1")
        .unwrap_or_else(|| panic!("{html}"));
    let row = &html[at..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert_eq!(row.matches("fired 1/1").count(), 1, "{row}");
    assert!(row.contains("<td class=\"cell\">—</td>"), "{row}");
}

#[test]
fn without_bubblewrap_the_note_says_landlock_contains_the_agents() {
    // A PATH with `sh` and no `bwrap`: Landlock contains the agents instead.
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink("/bin/sh", bin.join("sh")).unwrap();
    let p = d.path().join("p");
    write_tree(
        &p,
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"echo ok\"]\n",
            ),
            (
                "evals/n/001.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: one\nprompt: say one\nexpected: one\nassertions:\n  - type: contains\n    value: ok\n",
            ),
        ],
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["run", "--output-dir", "out"])
        .current_dir(&p)
        .env_clear()
        .env("HOME", d.path())
        .env("PATH", &bin)
        .env("ASSAY_NO_CACHE", "1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{said}");
    let r = &results(&p.join("out"))["001"];
    assert_eq!(
        r["sandbox"]["kind"], "landlock",
        "needs Landlock on this machine: {r:#}"
    );
    let note = said
        .lines()
        .find(|l| l.starts_with("note: agents are contained by Landlock"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        note.contains("bubblewrap (`bwrap`) is not installed"),
        "{note}"
    );
    assert!(!note.contains("cannot be contained"), "{note}");
}

/// A judge that echoes its own key (or a vendor's) into an answer assay cannot use: the answer
/// kept in `judge-reply.txt` holds neither, whether `assay run` or `assay grade` kept it.
#[test]
fn the_judge_s_own_key_is_redacted_from_its_kept_answers() {
    let d = project();
    let echo = || {
        [
            passes(),
            JudgeReply::Says("PASS <key sk-judge-0123456789>".into()),
            JudgeReply::Says(format!("PASS <{VENDOR_KEY}>")),
        ]
    };
    let judge = JudgeServer::start(echo().to_vec());
    let keyed = |args: &[&str], judge: &JudgeServer| {
        assay_env(
            d.path(),
            args,
            &[
                ("ASSAY_JUDGE_BASE_URL", judge.url.clone()),
                ("ASSAY_JUDGE_API_KEY", "sk-judge-0123456789".into()),
                ("ASSAY_JUDGE_ATTEMPTS", "1".into()),
                ("ANTHROPIC_API_KEY", VENDOR_KEY.into()),
            ],
        )
    };
    let out = keyed(&run_args("out", &[]), &judge);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let run = d.path().join("out");
    let kept = || std::fs::read_to_string(case_dir(&run, "2").join("judge-reply.txt")).unwrap();
    let after_run = kept();
    assert!(
        !after_run.contains("sk-judge-0123456789") && !after_run.contains(VENDOR_KEY),
        "{after_run}"
    );
    assert!(
        after_run.contains("[redacted:ASSAY_JUDGE_API_KEY]"),
        "{after_run}"
    );
    // `assay grade` asks again (eval 1 then eval 2) and keeps eval 2's answers once more.
    let judge = JudgeServer::start(echo().to_vec());
    let out = keyed(&["grade", "out", "--judge", "anthropic"], &judge);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let after_grade = kept();
    assert!(
        !after_grade.contains("sk-judge-0123456789") && !after_grade.contains(VENDOR_KEY),
        "{after_grade}"
    );
    assert!(
        after_grade.contains("[redacted:ASSAY_JUDGE_API_KEY]")
            && after_grade.contains("[redacted:ANTHROPIC_API_KEY]"),
        "{after_grade}"
    );
}
