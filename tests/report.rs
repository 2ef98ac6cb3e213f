//! Reports: each format pinned by a snapshot of a fixed run folder, reporters written by
//! `assay run`, and a run folder left by an interrupted run.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

const FIXTURE: &str = "tests/fixtures/run-basic";

fn report(format: &str) -> String {
    let out = assay(&repo(), &["report", FIXTURE, "--format", format]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn the_json_report_is_versioned_and_complete() {
    let text = report("json");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema"], "assay.report/v1");
    let s = &v["summary"];
    assert_eq!(
        (
            s["total"].as_u64(),
            s["passed"].as_u64(),
            s["failed"].as_u64()
        ),
        (Some(4), Some(1), Some(1))
    );
    assert_eq!(s["not_graded"], 1);
    assert_eq!(s["errors"], 1);
    assert_eq!(s["pass_rate"], 0.25);
    insta::assert_snapshot!("report_json", text);
}

#[test]
fn junit_loads_as_xml_with_one_testcase_per_case_run() {
    let text = report("junit");
    // Well-formed: a real XML parser reads it to the end.
    let mut reader = quick_xml::Reader::from_str(&text);
    let (mut cases, mut failures) = (0, 0);
    loop {
        match reader.read_event().expect("well-formed XML") {
            quick_xml::events::Event::Eof => break,
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
                match e.name().as_ref() {
                    b"testcase" => cases += 1,
                    b"failure" => failures += 1,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    assert_eq!((cases, failures), (4, 1));
    insta::assert_snapshot!("report_junit", text);
}

#[test]
fn markdown_puts_the_failures_with_their_reasons() {
    let text = report("markdown");
    assert!(
        text.starts_with(
            "## assay: 4 cases: 1 passed, 1 failed, 1 with errors, 1 not graded\n\n1 of 4 case-runs passed (25%)"
        ),
        "{text}"
    );
    insta::assert_snapshot!("report_markdown", text);
}

#[test]
fn report_refuses_what_is_not_a_run_folder() {
    let out = assay(&repo(), &["report", "examples"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("is not a run folder"),
        "{}",
        stderr(&out)
    );
}

fn project(command: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let quoted = command.replace('\\', "\\\\").replace('"', "\\\"");
    let toml = format!(
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"{quoted}\"]\n"
    );
    write_tree(
        d.path(),
        &[
            ("assay.toml", &toml),
            (
                "evals/n/001.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: one\nprompt: say one\nexpected: one\nassertions:\n  - type: contains\n    value: ok\n",
            ),
            (
                "evals/n/002.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: two\nprompt: say two\nexpected: two\nassertions:\n  - type: contains\n    value: nope\n",
            ),
            (
                "evals/n/003.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: three\nprompt: say three\nexpected: three\nassertions:\n  - type: contains\n    value: ok\n",
            ),
        ],
    );
    d
}

#[test]
fn assay_run_writes_the_reporters_it_is_asked_for() {
    let d = project("echo ok");
    let out = assay(
        d.path(),
        &[
            "run",
            "--output-dir",
            "out",
            "--reporter",
            "junit,markdown",
            "--reporter",
            "json",
            "--json",
            "-j",
            "1",
        ],
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    // Only the JSON report is on stdout; progress went to stderr.
    let v: Value = serde_json::from_str(&stdout(&out)).expect("stdout is the JSON report");
    assert_eq!(v["summary"]["failed"], 1);
    assert!(
        stderr(&out).contains("FAIL       skillet:n/002"),
        "{}",
        stderr(&out)
    );
    for f in ["report.json", "junit.xml", "summary.md"] {
        assert!(d.path().join("out").join(f).is_file(), "{f}");
    }
    let md = std::fs::read_to_string(d.path().join("out/summary.md")).unwrap();
    assert!(md.contains("### Failures"), "{md}");
    // Regenerated later, the same report.
    let again = assay(d.path(), &["report", "out", "--format", "json"]);
    assert_eq!(
        stdout(&again),
        std::fs::read_to_string(d.path().join("out/report.json")).unwrap()
    );
}

#[test]
fn an_interrupted_run_leaves_a_folder_reports_can_read() {
    // The first case-run is quick; the others hang until the run is killed.
    let d = project("case \"$(cat)\" in *one*) echo ok;; *) sleep 60;; esac");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["run", "--output-dir", "out", "-j", "1", "--timeout", "120"])
        .current_dir(d.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let first = d.path().join("out/skillet_n/001/run-1/result.json");
    let started = Instant::now();
    while !first.is_file() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(first.is_file(), "the first case-run was recorded");
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let out = assay(d.path(), &["report", "out", "--format", "json"]);
    // What the run planned and never recorded is missing, and the report says it failed.
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let total = v["summary"]["total"].as_u64().unwrap();
    assert!(total > 1, "{v:#}");
    assert_eq!(v["summary"]["passed"], 1, "{v:#}");
    assert_eq!(v["summary"]["missing"], total - 1, "{v:#}");
    assert_eq!(v["case_runs"][0]["outcome"], "passed");
    // Nothing torn: every file in the folder that is JSON parses.
    for e in walk(&d.path().join("out")) {
        if e.extension().is_some_and(|x| x == "json") {
            let t = std::fs::read_to_string(&e).unwrap();
            serde_json::from_str::<Value>(&t)
                .unwrap_or_else(|err| panic!("{}: {err}", e.display()));
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn the_uaaps_report_has_the_reference_shape() {
    let text = report("uaaps");
    let v: Value = serde_json::from_str(&text).unwrap();
    for key in [
        "version",
        "id",
        "timestamp",
        "duration_seconds",
        "config",
        "agent",
        "judge",
        "environment",
        "package",
        "summary",
        "cases",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    assert_eq!(v["summary"]["skipped"], 1, "not graded is SKIP, never PASS");
    let greeting = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "greeting")
        .unwrap();
    assert_eq!(greeting["verdict"], "FAIL");
    assert_eq!(greeting["deterministic_checks"]["no_urls"], "FAIL");
    insta::assert_snapshot!(
        "report_uaaps",
        text.replace(std::env::consts::ARCH, "<arch>")
    );
}

#[test]
fn the_uaaps_reporter_writes_into_the_packages_evals_reports() {
    let d = tempfile::tempdir().unwrap();
    let pkg = d.path().join("pkg");
    copy_dir(&repo().join("examples/uaaps"), &pkg);
    let out = assay_env(
        &pkg,
        &[
            "run",
            "--harness",
            "command",
            "--command",
            "echo The file has 8 words and 2 lines",
            "--filter",
            "count-words",
            "--reporter",
            "uaaps",
            "--output-dir",
            "out",
        ],
        &[("ASSAY_JUDGE", "none".into())],
    );
    assert_eq!(
        code(&out),
        1,
        "no file written: {}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let reports: Vec<_> = std::fs::read_dir(pkg.join("evals/reports"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(reports.len(), 1);
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(reports[0].path()).unwrap()).unwrap();
    assert_eq!(v["package"]["name"], "@example/text-tools");
    assert_eq!(v["cases"][0]["name"], "count-words");
    assert_eq!(v["cases"][0]["target"], "skill:text-tools");
    let checks = &v["cases"][0]["deterministic_checks"];
    assert_eq!(checks["contains"], "PASS", "{v:#}");
    assert_eq!(checks["not_contains"], "PASS");
    assert_eq!(
        checks["files_created"], "FAIL",
        "the command agent wrote no file"
    );
    assert_eq!(v["cases"][0]["verdict"], "FAIL");
    assert!(pkg.join("out/uaaps-report.json").is_file());
}

/// A UAAPS package whose one case passes when `word` is in the agent's answer.
fn small_package(dir: &Path, name: &str, word: &str, timeout: Option<u64>) {
    let config = match timeout {
        Some(t) => format!(r#"{{"version": 1, "engine": "claude-code", "timeout": {t}}}"#),
        None => r#"{"version": 1, "engine": "claude-code", "judge": "claude-sonnet"}"#.to_string(),
    };
    write_tree(
        dir,
        &[
            (
                "package.agent.json",
                &format!(r#"{{"name": "{name}", "version": "1.0.0"}}"#),
            ),
            ("evals/eval-config.json", &config),
            (
                "evals/cases/say.yaml",
                &format!(
                    "name: say-{name}\ninput:\n  prompt: say it\nexpected:\n  contains: [{word}]\njudge:\n  criteria: ok\n"
                ),
            ),
        ],
    );
}

#[test]
fn each_package_gets_its_own_uaaps_report_and_report_files_diff() {
    let d = tempfile::tempdir().unwrap();
    write_tree(d.path(), &[("assay.toml", "")]);
    small_package(&d.path().join("a"), "pkg-a", "hello", None);
    small_package(&d.path().join("b"), "pkg-b", "hello", Some(45));
    let pass = || support::judge_server::says(json!({"pass": true, "reasoning": "fine"}));
    let judge = support::judge_server::JudgeServer::start((0..4).map(|_| pass()).collect());
    let run = |out: &str| {
        assay_env(
            d.path(),
            &[
                "run",
                "--harness",
                "command",
                "--command",
                "echo hello",
                "--reporter",
                "uaaps",
                "--output-dir",
                out,
                "--workspace-dir",
                "ws",
            ],
            &[
                ("ASSAY_JUDGE_BASE_URL", judge.url.clone()),
                ("ASSAY_JUDGE_API_KEY", "sk-judge".into()),
                ("ANTHROPIC_API_KEY", "sk-judge".into()),
            ],
        )
    };
    let first = run("out1");
    assert_ne!(code(&first), 2, "{}", stderr(&first));
    let reports = |pkg: &str| -> Vec<std::path::PathBuf> {
        let mut r: Vec<_> = std::fs::read_dir(d.path().join(pkg).join("evals/reports"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        r.sort();
        r
    };
    let read =
        |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let a = read(&reports("a")[0]);
    let b = read(&reports("b")[0]);
    assert_eq!(a["package"]["name"], "pkg-a");
    assert_eq!(b["package"]["name"], "pkg-b");
    let names = |v: &Value| -> Vec<String> {
        v["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&a), ["say-pkg-a"], "only its own cases: {a:#}");
    assert_eq!(names(&b), ["say-pkg-b"]);
    assert_eq!(a["summary"]["total"], 1);
    assert_eq!(a["cases"][0]["verdict"], "PASS", "{a:#}");
    // `judge: claude-sonnet` is a current model id, and its vendor is the provider.
    assert_eq!(a["judge"]["model"], "claude-sonnet-4-6", "{a:#}");
    assert_eq!(a["judge"]["model_provider"], "anthropic");
    // The effective timeout: UAAPS's default, and the package's own.
    assert_eq!(a["config"]["timeout"], 120, "{a:#}");
    assert_eq!(b["config"]["timeout"], 45);

    // A regression between two reports of package a, diffed from the report files.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    small_package(&d.path().join("a"), "pkg-a", "goodbye", None);
    let second = run("out2");
    assert_eq!(code(&second), 1, "{}", stderr(&second));
    let files = reports("a");
    assert_eq!(files.len(), 2, "{files:?}");
    let diff = assay(
        d.path(),
        &[
            "report",
            "diff",
            files[0].to_str().unwrap(),
            files[1].to_str().unwrap(),
        ],
    );
    assert_eq!(code(&diff), 1, "{}\n{}", stdout(&diff), stderr(&diff));
    let text = stdout(&diff);
    assert!(text.contains("pass rate 100% → 0%"), "{text}");
    assert!(
        text.contains("uaaps:pkg-a/say-pkg-a: passed → failed"),
        "{text}"
    );
    // Not a report: a clear error, exit 2.
    std::fs::write(d.path().join("x.json"), "[1]").unwrap();
    let bad = assay(
        d.path(),
        &["report", "diff", "x.json", files[0].to_str().unwrap()],
    );
    assert_eq!(code(&bad), 2);
    assert!(
        stderr(&bad).contains("x.json is neither a run folder nor a UAAPS eval report"),
        "{}",
        stderr(&bad)
    );
}

fn copy_dir(from: &Path, to: &Path) {
    for e in walk(from) {
        let rel = e.strip_prefix(from).unwrap();
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&e, &dest).unwrap();
    }
}

#[test]
fn diff_names_regressions_and_fixes_between_real_runs() {
    let state = tempfile::tempdir().unwrap();
    let s = state.path().display();
    let d = project(&format!(
        "p=$(cat); case \"$p\" in *two*) cat {s}/two;; *three*) cat {s}/three;; *) echo ok;; esac"
    ));
    let run = |name: &str, two: &str, three: &str| {
        std::fs::write(state.path().join("two"), two).unwrap();
        std::fs::write(state.path().join("three"), three).unwrap();
        // The agent's answers live outside the project, where the cache cannot see them
        // (and the sandbox would not let it read them).
        let out = assay(
            d.path(),
            &[
                "run",
                "--no-cache",
                "--output-dir",
                name,
                "--sandbox",
                "none",
            ],
        );
        assert!(code(&out) <= 1, "{}", stderr(&out));
    };
    run("a", "ok\n", "ok\n");
    run("b", "nope\n", "fail\n");
    let out = assay(d.path(), &["report", "diff", "a", "b"]);
    assert_eq!(
        code(&out),
        1,
        "a regression fails the diff: {}",
        stdout(&out)
    );
    let text = stdout(&out);
    assert!(text.contains("pass rate 67% → 67% (+0 points)"), "{text}");
    assert!(
        text.contains("regressed (1):\n  ✗ skillet:n/003: passed → failed"),
        "{text}"
    );
    assert!(
        text.contains("fixed (1):\n  ✓ skillet:n/002: failed → passed"),
        "{text}"
    );
    assert!(text.contains("unchanged: 1"), "{text}");
    let out = assay(d.path(), &["report", "diff", "a", "b", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["regressed"][0]["case"], "003");
    assert_eq!(v["fixed"][0]["before"], "failed");
    // No change, no failure.
    assert_eq!(code(&assay(d.path(), &["report", "diff", "b", "b"])), 0);
    assert_eq!(
        code(&assay(d.path(), &["report", "diff", "a", "nowhere"])),
        2
    );
}

#[test]
fn shards_merge_into_one_run_folder_that_reports_read() {
    let d = project("echo ok");
    for (name, filter) in [("s1", "001"), ("s2", "*/00[23]")] {
        let out = assay(d.path(), &["run", "--output-dir", name, "--filter", filter]);
        assert!(code(&out) <= 1, "{}", stderr(&out));
    }
    let out = assay(
        d.path(),
        &["report", "merge", "s1", "s2", "--output-dir", "all"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("merged 3 case-run(s) from 2 run folder(s)"),
        "{}",
        stdout(&out)
    );
    let out = assay(d.path(), &["report", "all", "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["summary"]["total"], 3);
    assert_eq!(v["summary"]["passed"], 2);
    assert_eq!(v["config"]["merged_from"].as_array().unwrap().len(), 2);
    // The same case-run in two shards is refused, and nothing is written.
    let out = assay(
        d.path(),
        &["report", "merge", "s1", "all", "--output-dir", "again"],
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("is in more than one of the runs"),
        "{}",
        stderr(&out)
    );
    assert!(!d.path().join("again").exists());
    // An existing output folder is never overwritten.
    assert_eq!(
        code(&assay(
            d.path(),
            &["report", "merge", "s1", "--output-dir", "s2"]
        )),
        2
    );
}

#[test]
fn the_html_report_is_one_self_contained_file_that_chromium_renders() {
    let text = report("html");
    // Self-contained: its own script and data only, and nothing fetched (no src, no
    // stylesheet links; tests/viewer.rs checks the policy and the script).
    assert_eq!(text.matches("<script").count(), 2);
    for banned in [" src=", "<link", "@import"] {
        assert!(!text.contains(banned), "{banned}");
    }
    insta::assert_snapshot!("report_html", text);

    let browser = chromium();
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("report.html");
    let out = assay(
        &repo(),
        &[
            "report",
            FIXTURE,
            "--format",
            "html",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let dom = std::process::Command::new(&browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}", file.display()))
        .output()
        .unwrap();
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains(
            "<h1>assay: 4 cases: 1 passed, 1 failed, 1 with errors, 1 not graded</h1><p>1 of 4 case-runs passed (25%): 1 passed · 1 failed · 1 not graded · 1 with errors</p>"
        ),
        "{dom}"
    );
    assert_eq!(dom.matches("<section class=\"case\"").count(), 4);
    assert!(dom.contains("the output contains \"https://\", which it must not"));
    assert!(dom.contains("setup failed: the setup script exited with code 3"));
    assert!(
        dom.contains("<summary><code>greeting.txt</code></summary>"),
        "artifacts are shown"
    );
    assert!(
        dom.contains("Write a brief &lt;for&gt; \"Ada\" &amp; co"),
        "text is escaped, not markup"
    );
}

#[test]
fn the_terminal_summary_is_plain_lines_off_a_terminal_with_failures_first() {
    let d = project("echo ok");
    let out = assay(d.path(), &["run", "--output-dir", "out", "-j", "1"]);
    assert_eq!(code(&out), 1);
    insta::with_settings!({filters => vec![(r"\(\d+\.\d+s\)", "(<time>)")]}, {
        insta::assert_snapshot!("terminal_plain", stdout(&out));
    });
}

#[test]
fn weak_expectations_the_judge_flags_are_in_the_terminal_markdown_and_html_escaped() {
    use support::judge_server::{JudgeServer, says};
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"echo '# Brief' > brief.md; echo Wrote brief.md\"]\n",
            ),
            (
                "evals/brief/evals.json",
                r#"{"evals": [{"id": "A1", "prompt": "Write brief.md", "expectations": ["brief.md exists"]}]}"#,
            ),
        ],
    );
    // The judge passes the eval and flags its one expectation as weak, in hostile text.
    let hostile = "<script>alert(1)</script> **an empty file** | would `pass` \u{1b}[2K";
    let judge = JudgeServer::start(vec![says(serde_json::json!({
        "expectations": [{"text": "brief.md exists", "passed": true, "evidence": "brief.md: '# Brief'"}],
        "eval_feedback": {
            "suggestions": [{"assertion": "brief.md exists", "reason": hostile}],
            "overall": "Check the brief's content,\nnot only that it exists."
        }
    }))]);
    let out = assay_env(
        d.path(),
        &[
            "run",
            "--output-dir",
            "out",
            "--judge",
            "anthropic",
            "--reporter",
            "markdown,html",
        ],
        &[
            ("ASSAY_JUDGE_BASE_URL", judge.url.clone()),
            ("ASSAY_JUDGE_API_KEY", "sk-judge".into()),
        ],
    );
    // A pass: the feedback is shown, and changes no verdict.
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let term = stdout(&out);
    assert!(
        term.contains("weak expectations flagged by the judge (1 case):\n  bmad:brief/A1:\n    - \"brief.md exists\": <script>alert(1)</script> **an empty file** | would `pass` \\u{1b}[2K\n    overall: Check the brief's content, not only that it exists."),
        "{term}"
    );
    assert!(
        !term.contains('\u{1b}'),
        "no escape sequence reaches the terminal"
    );

    let md = std::fs::read_to_string(d.path().join("out/summary.md")).unwrap();
    assert!(
        md.contains("### Weak expectations")
            && md.contains("**`bmad:brief/A1`**: Check the brief's content, not only that it exists.")
            && md.contains("- brief.md exists: &lt;script&gt;alert(1)&lt;/script&gt; \\*\\*an empty file\\*\\* \\| would \\`pass\\` \\\\u{1b}\\[2K"),
        "{md}"
    );
    assert!(!md.contains("<script"), "{md}");

    let file = d.path().join("out/report.html");
    let html = std::fs::read_to_string(&file).unwrap();
    assert!(
        !html.contains("<script>alert") && html.matches("<script").count() == 2,
        "raw HTML from the judge is escaped"
    );
    let dom = std::process::Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}", file.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("<h4>Weak expectations</h4>"), "{dom}");
    assert!(
        dom.contains("<li><q>brief.md exists</q>: &lt;script&gt;alert(1)&lt;/script&gt; **an empty file** | would `pass` \\u{1b}[2K</li>"),
        "the judge's words are text in the page: {dom}"
    );
    assert!(
        !dom.contains("<script>alert") && dom.matches("<script").count() == 2,
        "{dom}"
    );
    assert!(
        dom.contains("Check the brief's content,\nnot only that it exists."),
        "{dom}"
    );
}

#[test]
fn github_annotations_point_at_each_failing_case_and_escape_what_they_quote() {
    let text = report("github");
    assert!(
        text.contains("::error file=.claude/commands/greeting.eval.json,line=1,title="),
        "{text}"
    );
    // One command per line: nothing quoted can start another.
    for line in text.lines() {
        assert!(
            line.starts_with("::error ") || line.starts_with("::warning "),
            "{line}"
        );
    }
    insta::assert_snapshot!("report_github", text);
}

#[test]
fn reporter_github_prints_annotations_and_appends_the_step_summary() {
    let d = copy_example("examples/quickstart");
    // A check the stand-in agent fails, with a needle that tries to inject a workflow command.
    let spec = d.path().join(".claude/commands/greeting.eval.json");
    let text = std::fs::read_to_string(&spec).unwrap().replace(
        r#""needle": "Hello, Ada!""#,
        r#""needle": "Bye\n::add-mask::x""#,
    );
    std::fs::write(&spec, text).unwrap();
    let summary = d.path().join("step-summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out = assay_env(
        d.path(),
        &["run", "--reporter", "github", "--output-dir", "out"],
        &[("GITHUB_STEP_SUMMARY", summary.display().to_string())],
    );
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let printed = stdout(&out);
    let annotation = printed
        .lines()
        .find(|l| l.starts_with("::error file=.claude/commands/greeting.eval.json,line=1,"))
        .unwrap_or_else(|| panic!("{printed}"));
    assert!(annotation.contains("names_ada"), "{annotation}");
    assert!(
        !printed.lines().any(|l| l.starts_with("::add-mask")),
        "an injected command: {printed}"
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.starts_with("earlier step\n"), "appended, not replaced");
    assert!(md.contains("names_ada"), "{md}");
    assert!(d.path().join("out/github-annotations.txt").is_file());
}

/// The annotations are per case, over its runs, and for the skill alone: a baseline that fails
/// (as it should: no skill) is no error, and a case failing three runs is one annotation.
#[test]
fn github_annotates_each_failing_case_once_and_never_a_baseline() {
    let d = copy_example("examples/quickstart");
    let out = assay(
        d.path(),
        &[
            "run",
            "--reporter",
            "github",
            "--baseline",
            "--runs",
            "3",
            "--output-dir",
            "with",
        ],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let printed = stdout(&out);
    assert!(
        !printed
            .lines()
            .any(|l| l.starts_with("::error") || l.starts_with("::warning")),
        "the baseline's runs were annotated: {printed}"
    );
    // Every case fails every run (the agent ignores the skill): one error per case.
    let out = assay(
        d.path(),
        &[
            "run",
            "--reporter",
            "github",
            "--baseline",
            "--runs",
            "3",
            "--command",
            "echo nope",
        ],
    );
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let printed = stdout(&out);
    let errors: Vec<&str> = printed
        .lines()
        .filter(|l| l.starts_with("::error file="))
        .collect();
    assert_eq!(errors.len(), 3, "{errors:#?}");
    for e in &errors {
        assert!(e.contains("failed (0 of 3 runs passed)"), "{e}");
    }
}

#[test]
fn text_from_a_suite_never_starts_a_workflow_command_in_what_run_prints() {
    let d = copy_example("examples/quickstart");
    // A trigger query (shown in the summary of failing queries) that tries to start commands.
    let spec = d.path().join(".claude/commands/greeting.eval.json");
    let text = std::fs::read_to_string(&spec).unwrap().replacen(
        r#""assertions""#,
        r#""trigger_tests": {"should_trigger": ["hi\n::add-mask::leak\n::error file=x.py,line=1::fake"]}, "assertions""#,
        1,
    );
    std::fs::write(&spec, text).unwrap();
    let out = assay(
        d.path(),
        &[
            "run",
            "--output-dir",
            "out",
            "--reporter",
            "github",
            "--trigger-runs",
            "1",
        ],
    );
    let all = format!("{}\n{}", stdout(&out), stderr(&out));
    assert!(all.contains("add-mask"), "the query is shown: {all}");
    for line in all.lines() {
        assert!(
            !line.starts_with("::add-mask") && !line.starts_with("::error file=x.py"),
            "{line}\n{all}"
        );
    }
}

/// `report diff` pairs the skill's runs with the skill's and the baseline's with the
/// baseline's: the same runs again change nothing; a baseline that fails in more runs is never a
/// regression; a case that passed 2 of 2 runs and now 3 of 3 says so.
#[test]
fn diff_pairs_each_arm_with_itself_and_speaks_in_cases() {
    let d = copy_example("examples/quickstart");
    let run = |out: &str, runs: &str| {
        let o = assay(
            d.path(),
            &[
                "run",
                "--baseline",
                "--runs",
                runs,
                "--no-cache",
                "--output-dir",
                out,
            ],
        );
        assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
    };
    run("r1", "2");
    run("r2", "2");
    run("r3", "3");
    let same = assay(d.path(), &["report", "diff", "r1", "r2"]);
    let text = stdout(&same);
    assert_eq!(code(&same), 0, "{text}{}", stderr(&same));
    assert!(text.contains("pass rate 100% → 100%"), "{text}");
    assert!(text.contains("unchanged: 6"), "{text}");
    assert!(!text.contains('✗') && !text.contains('✓'), "{text}");

    let more = assay(d.path(), &["report", "diff", "r1", "r3"]);
    let text = stdout(&more);
    assert_eq!(
        code(&more),
        0,
        "a failing baseline run is no regression: {text}"
    );
    assert!(
        text.contains("skillet:greeting/001 run 3: absent → passed"),
        "{text}"
    );
    assert!(
        text.contains("~ skillet:greeting/001 [baseline, run 3]: absent → failed"),
        "{text}"
    );
    assert!(
        text.contains("skillet:greeting/001: 2/2 → 3/3 runs passed"),
        "{text}"
    );
    let json = assay(d.path(), &["report", "diff", "r1", "r3", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert!(v["regressed"].as_array().unwrap().is_empty(), "{v:#}");
    assert!(
        v["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["variant"] == "baseline"),
        "{v:#}"
    );
    assert_eq!(v["new"][0]["variant"], "skill", "{v:#}");
    assert_eq!(v["cases"].as_array().unwrap().len(), 3, "{v:#}");
}

/// `--reporter skill-creator` writes skill-creator's `benchmark.json` as its schema defines it
/// (`references/schemas.md`): the field names its viewer reads, exactly.
#[test]
fn the_skill_creator_reporter_writes_its_benchmark_json() {
    let d = copy_example("examples/quickstart");
    let out = assay(
        d.path(),
        &[
            "run",
            "--baseline",
            "--runs",
            "2",
            "--reporter",
            "skill-creator",
            "--output-dir",
            "out",
        ],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let b = read_json(&d.path().join("out/benchmark.json"));
    assert_eq!(b["metadata"]["runs_per_configuration"], 2, "{b:#}");
    assert_eq!(
        b["metadata"]["evals_run"].as_array().unwrap().len(),
        3,
        "{b:#}"
    );
    let runs = b["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 12, "{b:#}");
    for r in runs {
        let configuration = r["configuration"].as_str().unwrap();
        assert!(
            ["with_skill", "without_skill"].contains(&configuration),
            "{r:#}"
        );
        assert!(r["eval_id"].is_u64() && r["eval_name"].is_string(), "{r:#}");
        assert!(r["run_number"].is_u64(), "{r:#}");
        for field in [
            "pass_rate",
            "passed",
            "failed",
            "total",
            "time_seconds",
            "tokens",
            "tool_calls",
            "errors",
        ] {
            assert!(r["result"][field].is_number(), "{field}: {r:#}");
        }
        assert!(
            r.get("pass_rate").is_none(),
            "pass_rate belongs under result"
        );
        for e in r["expectations"].as_array().unwrap() {
            assert!(
                e["text"].is_string() && e["passed"].is_boolean() && e["evidence"].is_string(),
                "{e:#}"
            );
        }
    }
    let with = &b["run_summary"]["with_skill"];
    let without = &b["run_summary"]["without_skill"];
    for arm in [with, without] {
        for field in ["pass_rate", "time_seconds", "tokens"] {
            for stat in ["mean", "stddev", "min", "max"] {
                assert!(arm[field][stat].is_number(), "{field}.{stat}: {b:#}");
            }
        }
    }
    assert_eq!(with["pass_rate"]["mean"], 1.0, "{b:#}");
    assert!(
        without["pass_rate"]["mean"].as_f64().unwrap() < 1.0,
        "{b:#}"
    );
    // A number, as agentskills.io's benchmark.json has it (skill-creator's viewer reads it too).
    let delta = b["run_summary"]["delta"]["pass_rate"].as_f64().unwrap();
    assert!(delta > 0.0, "{b:#}");
    // skill-creator's workspace, as its eval viewer reads it: a folder per eval,
    // configuration and run, with outputs/, grading.json and eval_metadata.json.
    let ws = d.path().join("out/skill-creator");
    assert_eq!(read_json(&ws.join("benchmark.json")), b);
    for eval in 1..=3 {
        for configuration in ["with_skill", "without_skill"] {
            for run in 1..=2 {
                let r = ws.join(format!("eval-{eval}/{configuration}/run-{run}"));
                assert!(r.join("outputs/output.txt").is_file(), "{}", r.display());
                let g = read_json(&r.join("grading.json"));
                assert!(g["summary"]["total"].as_u64().unwrap() > 0, "{g:#}");
                let m = read_json(&r.join("eval_metadata.json"));
                assert_eq!(m["eval_id"], eval, "{m:#}");
                assert!(!m["prompt"].as_str().unwrap().is_empty(), "{m:#}");
            }
        }
    }
    // Each run's grading.json beside it, in the same schema's shape.
    let dirs = assay::record::case_run_dirs(&d.path().join("out"));
    assert_eq!(dirs.len(), 12);
    for dir in dirs {
        let g = read_json(&dir.join("grading.json"));
        assert!(g["summary"]["pass_rate"].is_number(), "{g:#}");
    }
}
