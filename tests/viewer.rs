//! The HTML report's review viewer, in real headless Chromium: the page's script filters,
//! shows outputs side by side, builds feedback.json; hostile text stays text; nothing is
//! fetched.

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::*;

const FIXTURE: &str = "tests/fixtures/run-basic";

/// The DOM after the page's script ran, with `fragment` in the URL.
fn dom(file: &Path, fragment: &str) -> String {
    dump_dom(&format!("file://{}{fragment}", file.display())).0
}

/// `assay report <run> --format html -o <run>/report.html [extra]`, the file.
fn html(run: &Path, extra: &[&str]) -> std::path::PathBuf {
    let file = run.join("viewer.html");
    let mut args = vec![
        "report",
        run.to_str().unwrap(),
        "--format",
        "html",
        "-o",
        file.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = assay(&repo(), &args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    file
}

/// Each case-run section's opening tag, in order.
fn sections(dom: &str) -> Vec<&str> {
    dom.match_indices("<section class=\"case\"")
        .map(|(i, _)| &dom[i..i + dom[i..].find('>').unwrap()])
        .collect()
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// Adds to a copy of the fixture a baseline twin of `skillet:hello/001` with its own output.
fn with_baseline(run: &Path) {
    let from = run.join("skillet_hello/001/run-1");
    let to = run.join("skillet_hello/001/baseline-run-1");
    std::fs::create_dir_all(&to).unwrap();
    for f in ["prompt.txt", "transcript.jsonl"] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
    let mut r: Value = read_json(&from.join("result.json"));
    r["variant"] = json!("baseline");
    r["grade"]["verdict"] = json!("fail");
    std::fs::write(to.join("result.json"), r.to_string()).unwrap();
    std::fs::write(to.join("output.txt"), "Without the skill: hi").unwrap();
}

#[test]
fn the_viewer_is_one_file_under_a_strict_policy_that_fetches_nothing() {
    let d = copy_example(FIXTURE);
    let file = html(d.path(), &[]);
    let text = std::fs::read_to_string(&file).unwrap();
    // One data block and one script; nothing to fetch.
    assert_eq!(text.matches("<script").count(), 2);
    assert!(text.contains("<script type=\"application/json\" id=\"assay-data\">"));
    for banned in [" src=", "<link", "@import", "url(", " on"] {
        let hits: Vec<_> = text.match_indices(banned).collect();
        // ` on` may appear in text, never as an attribute inside a tag.
        for (i, _) in hits {
            let before = &text[..i];
            let in_tag = before.rfind('<') > before.rfind('>');
            assert!(!in_tag, "{banned} in a tag at {i}");
        }
    }
    assert!(
        text.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-"),
        "{}",
        &text[..600]
    );
    // Every URL is in text (an agent's output), never in a tag, a style or the script.
    for scheme in ["http://", "https://"] {
        for (i, _) in text.match_indices(scheme) {
            let before = &text[..i];
            assert!(
                before.rfind('<') < before.rfind('>'),
                "a URL in a tag at {i}"
            );
            let last_open = before.rfind("<script").unwrap_or(0);
            let last_close = before.rfind("</script>").unwrap_or(0);
            assert!(last_open <= last_close, "a URL in the script at {i}");
            assert!(
                before.rfind("<style") <= before.rfind("</style>"),
                "a URL in the style at {i}"
            );
        }
    }
    // The script runs under the policy (its hash matches): it counted the case-runs.
    let page = dom(&file, "");
    assert!(
        page.contains(">4 of 4 case-runs shown</span>"),
        "the script ran: {page}"
    );
    assert!(page.contains("<h2>Plots</h2>"), "{page}");
    assert!(page.contains("<figcaption>Pass rate per case</figcaption>"));
    // The trajectory: the turn's own time (the events carry none), then each event.
    assert!(
        page.contains("<h4>Trajectory</h4><p class=\"turns\">turn 1: 5 ms</p><ol class=\"timeline\"><li class=\"ev output\"><pre>Hello, Ada! See https://example.com</pre></li></ol>"),
        "{page}"
    );

    // A screenshot: a real PNG.
    let png = d.path().join("shot.png");
    let out = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1200,1600",
        ])
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", file.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.len() > 1000, "{} bytes", bytes.len());
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
}

#[test]
fn filters_from_the_url_hide_the_case_runs_that_do_not_match() {
    let d = copy_example(FIXTURE);
    let file = html(d.path(), &[]);
    let page = dom(&file, "#filter=failed");
    let s = sections(&page);
    assert_eq!(s.len(), 4);
    for tag in &s {
        let failed = tag.contains("data-outcome=\"failed\"");
        assert_eq!(!tag.contains("hidden"), failed, "{tag}");
    }
    assert!(page.contains(">1 of 4 case-runs shown<"), "{page}");
    // Their rows in the matrix and their cases' groups too.
    assert!(
        page.contains("<tr id=\"m1\" data-runs=\"1\">")
            && page.contains("<tr id=\"m0\" data-runs=\"0\" hidden=\"\">"),
        "{page}"
    );
    assert!(page.contains("<section class=\"group\" id=\"k0\" data-runs=\"0\" hidden=\"\">"));

    // By suite, and by free text.
    let page = dom(&file, "#suite=skillet%3Ahello");
    let shown: Vec<_> = sections(&page)
        .into_iter()
        .filter(|t| !t.contains("hidden"))
        .collect();
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(
        shown
            .iter()
            .all(|t| t.contains("data-suite=\"skillet:hello\""))
    );
    let page = dom(&file, "#q=setup%20script");
    let shown: Vec<_> = sections(&page)
        .into_iter()
        .filter(|t| !t.contains("hidden"))
        .collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].contains("data-outcome=\"error\""));
    // j and k move between the case-runs shown.
    let page = dom(&file, "#suite=skillet%3Ahello&keys=jj");
    assert!(
        page.contains("<section class=\"case current\" id=\"c3\""),
        "{page}"
    );
    assert_eq!(page.matches("class=\"case current\"").count(), 1);
    let page = dom(&file, "#keys=jjjk");
    assert!(
        page.contains("<section class=\"case current\" id=\"c1\""),
        "{page}"
    );
    // Not the reviewer's form, which every case-run has.
    let page = dom(&file, "#q=good");
    assert!(page.contains(">0 of 4 case-runs shown<"), "{page}");
}

#[test]
fn a_case_with_a_baseline_shows_both_outputs_side_by_side() {
    let d = copy_example(FIXTURE);
    with_baseline(d.path());
    let page = dom(&html(d.path(), &[]), "");
    let at = page
        .find("<h4>Side by side: with the skill and the baseline</h4>")
        .expect("a side-by-side view");
    let view = &page[at..at + page[at..].find("<h4>Trajectory").unwrap()];
    let skill = view.find("Hello, Ada! See https://example.com").unwrap();
    let base = view.find("Without the skill: hi").unwrap();
    assert!(
        skill < base,
        "the skill's output left, the baseline's right: {view}"
    );
    assert!(view.contains("with the skill</a> · <span class=\"badge passed\">passed</span>"));
    assert!(view.contains("baseline</a> · <span class=\"badge failed\">failed</span>"));
    // The baseline is plotted against the skill.
    assert!(page.contains("<figcaption>Pass rate with the skill minus the baseline</figcaption>"));
}

#[test]
fn against_an_older_run_each_case_run_shows_the_older_output_and_what_changed() {
    let old = copy_example(FIXTURE);
    let r = old.path().join("clauditor_greeting/greeting/run-1");
    let mut rec: Value = read_json(&r.join("result.json"));
    rec["grade"]["verdict"] = json!("pass");
    std::fs::write(r.join("result.json"), rec.to_string()).unwrap();
    std::fs::write(r.join("output.txt"), "Hello, Ada! (older)").unwrap();
    let new = copy_example(FIXTURE);
    let file = html(new.path(), &["--against", old.path().to_str().unwrap()]);
    let page = dom(&file, "");
    assert!(
        page.contains("1 case-run(s) changed outcome, 0 not in it."),
        "{page}"
    );
    let s = sections(&page);
    assert!(s[1].contains("data-changed=\"yes\"") && !s[0].contains("data-changed"));
    let at = page
        .find("<p class=\"changed\">changed: passed → failed</p>")
        .unwrap();
    let view = &page[at..at + page[at..].find("<h4>Trajectory").unwrap()];
    assert!(
        view.find("Hello, Ada! (older)").unwrap() < view.find("Hello, Ada! See https").unwrap()
    );
    assert_eq!(page.matches("<p>unchanged: ").count(), 3);
    // The changed ones alone.
    let page = dom(&file, "#filter=changed");
    assert_eq!(
        sections(&page)
            .iter()
            .filter(|t| !t.contains("hidden"))
            .count(),
        1
    );
    // Only the HTML report compares so.
    let out = assay(
        &repo(),
        &["report", FIXTURE, "--against", old.path().to_str().unwrap()],
    );
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--format html"), "{}", stderr(&out));
}

#[test]
fn feedback_in_the_run_folder_fills_the_viewer_and_every_report_and_the_page_builds_it_back() {
    let d = copy_example(FIXTURE);
    let note = "wrong </script><b>name</b> & \u{2028}tone";
    let feedback = json!({"schema": "assay.feedback/v1", "run": "r", "items": [
        {"suite": "skillet:hello", "case": "001", "run": 1, "variant": "skill",
         "verdict": "bad", "note": note, "at": "2026-11-24T10:00:00Z"}]});
    std::fs::write(d.path().join("feedback.json"), feedback.to_string()).unwrap();
    let file = html(d.path(), &[]);
    let page = dom(&file, "#feedback-test");
    // Pre-filled on its case-run.
    let s = page.find("data-outcome=\"passed\"").unwrap();
    let form = &page[s..s + page[s..].find("</fieldset>").unwrap()];
    assert!(form.contains("value=\"bad\" checked=\"\""), "{form}");
    assert!(
        form.contains("wrong &lt;/script&gt;&lt;b&gt;name&lt;/b&gt; &amp;"),
        "{form}"
    );
    // What the download button would save, written into the page by `#feedback-test`.
    let at =
        page.find("<pre id=\"feedback-out\">").expect("built") + "<pre id=\"feedback-out\">".len();
    let built = unescape(&page[at..at + page[at..].find("</pre>").unwrap()]);
    let back = assay::record::feedback::FeedbackFile::parse(&built)
        .unwrap_or_else(|e| panic!("{e}: {built}"));
    assert_eq!(back.items.len(), 1);
    assert_eq!(back.items[0].note, note);
    assert_eq!(back.items[0].at, "2026-11-24T10:00:00Z");
    assert_eq!(back.run, d.path().display().to_string());

    // Markdown and JSON show it.
    let out = assay(
        &repo(),
        &["report", d.path().to_str().unwrap(), "--format", "markdown"],
    );
    let md = stdout(&out);
    assert!(md.contains("### Reviewer feedback"), "{md}");
    assert!(md.contains("👎 `skillet:hello/001` (run 1, skill): **bad**: wrong &lt;/script&gt;&lt;b&gt;name&lt;/b&gt; &amp;"), "{md}");
    let out = assay(
        &repo(),
        &["report", d.path().to_str().unwrap(), "--format", "json"],
    );
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["schema"], "assay.report/v1");
    assert_eq!(v["feedback"]["items"][0]["verdict"], "bad");
    assert!(v.get("warnings").is_none());

    // A malformed file is a warning, never a broken report.
    std::fs::write(
        d.path().join("feedback.json"),
        r#"{"schema": "assay.feedback/v1", "items": [{"verdict": "meh"}]}"#,
    )
    .unwrap();
    let out = assay(
        &repo(),
        &["report", d.path().to_str().unwrap(), "--format", "json"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: feedback left out:"),
        "{}",
        stderr(&out)
    );
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(v.get("feedback").is_none());
    assert!(v["warnings"][0].as_str().unwrap().contains("feedback.json"));
    let page = dom(&html(d.path(), &[]), "");
    assert!(
        page.contains("<strong>Warning:</strong> feedback left out:"),
        "{page}"
    );
    assert!(page.contains(">4 of 4 case-runs shown<"));
}

#[test]
fn hostile_text_from_an_agent_or_a_suite_stays_inert_text() {
    let d = copy_example(FIXTURE);
    let evil = "</script><script>alert(1)</script><img src=x onerror=alert(2)> <a href=\"javascript:alert(3)\">x</a> <!-- \u{2028} ]]> http://evil.example/";
    let from = d.path().join("skillet_hello/001/run-1");
    let to = d.path().join("evil/c/run-1");
    std::fs::create_dir_all(&to).unwrap();
    let mut r: Value = read_json(&from.join("result.json"));
    r["suite"] = json!(format!("s{evil}"));
    r["case"] = json!(format!("c\"><img src=x onerror=alert(4)>"));
    std::fs::write(to.join("result.json"), r.to_string()).unwrap();
    std::fs::write(to.join("output.txt"), evil).unwrap();
    std::fs::write(to.join("prompt.txt"), evil).unwrap();
    let events = [
        json!({"type": "tool_call", "id": "t1", "name": evil, "input": {"cmd": evil}}),
        json!({"type": "tool_result", "id": "t1", "output": evil, "is_error": true}),
        json!({"type": "skill_invoked", "name": evil}),
        json!({"type": "error", "message": evil}),
    ];
    let lines: Vec<String> = events.iter().map(Value::to_string).collect();
    std::fs::write(to.join("transcript.jsonl"), lines.join("\n")).unwrap();
    let file = html(d.path(), &[]);
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        text.matches("<script").count(),
        2,
        "no script from the data"
    );
    assert!(!text.contains("<img") && !text.contains("<a href=\"javascript"));
    let page = dom(&file, "");
    assert_eq!(page.matches("<script").count(), 2, "{page}");
    assert!(!page.contains("<img"), "no injected element: {page}");
    assert!(!page.contains("<a href=\"javascript"), "{page}");
    assert!(
        page.contains("&lt;img src=x onerror=alert(2)&gt;"),
        "shown as text"
    );
    // The data block still parses: the script ran over all five case-runs.
    assert!(page.contains(">5 of 5 case-runs shown<"), "{page}");
    // The hostile suite is an option whose value filters to it.
    let page = dom(&file, "#outcome=passed");
    assert_eq!(
        sections(&page)
            .iter()
            .filter(|t| !t.contains("hidden"))
            .count(),
        2
    );
}

/// The row of the matrix whose case link says `name`.
fn matrix_row<'a>(page: &'a str, name: &str) -> &'a str {
    let at = page
        .find(&format!("\">{name}</a></td>"))
        .unwrap_or_else(|| panic!("no row for {name}: {page}"));
    let start = page[..at].rfind("<tr ").unwrap();
    &page[start..at + page[at..].find("</tr>").unwrap()]
}

/// The group of a case: from its `<section class="group"` to the next group (or the data).
fn group<'a>(page: &'a str, id: &str) -> &'a str {
    let at = page
        .find(&format!("<section class=\"group\" id=\"{id}\""))
        .unwrap_or_else(|| panic!("no group {id}"));
    let rest = &page[at + 1..];
    let end = rest
        .find("<section class=\"group\"")
        .or_else(|| rest.find("<script"))
        .unwrap();
    &page[at..at + 1 + end]
}

#[test]
fn the_matrix_has_a_row_per_case_a_column_per_arm_and_each_case_opens_to_its_files_diffed() {
    let d = copy_example(FIXTURE);
    with_baseline(d.path());
    // Without the skill, the agent wrote another greeting.
    let base = d.path().join("skillet_hello/001/baseline-run-1");
    std::fs::create_dir_all(base.join("artifacts")).unwrap();
    std::fs::write(
        base.join("artifacts/greeting.txt"),
        "Hi Ada.\nSee https://example.com\n",
    )
    .unwrap();
    let file = html(d.path(), &[]);
    let page = dom(&file, "");
    assert!(
        page.contains("<table class=\"matrix\"><tbody><tr><th>case</th><th>with the skill</th><th>baseline</th><th>Δ</th></tr>"),
        "{page}"
    );
    // A row per case (four, the baseline's run in its case's row), each cell a rate, its
    // interval and a mark per run linking to the run.
    assert_eq!(page.matches("<tr id=\"m").count(), 4, "{page}");
    let row = matrix_row(&page, "skillet:hello/001");
    assert!(
        row.contains(
            "<td class=\"cell passed\" data-verdict=\"passed\">1/1 · 100% <small>(21%–100%)</small>"
        ),
        "{row}"
    );
    assert!(
        row.contains(
            "<td class=\"cell failed\" data-verdict=\"failed\">0/1 · 0% <small>(0%–79%)</small>"
        ),
        "{row}"
    );
    assert!(row.contains("title=\"run 1: passed\">✓</a>"), "{row}");
    assert!(row.contains("title=\"run 1: failed\">✗</a>"), "{row}");
    assert!(
        row.contains("<td>+100 points <small>(p = 1.000)</small></td>"),
        "{row}"
    );
    // The case opens (its name links to its group): the files each arm wrote, diffed, then
    // both of its case-runs.
    let target = &row[row.find("<a href=\"#k").unwrap() + 10..];
    let id = &target[..target.find('"').unwrap()];
    let g = group(&page, id);
    assert!(
        g.contains("<h3>Files: the baseline against the skill (run 1)</h3>"),
        "{g}"
    );
    assert!(
        g.contains("<pre class=\"diff\"><span class=\"del\">-Hi Ada.</span>\n<span class=\"del\">-See https://example.com</span>\n<span class=\"add\">+Hello, Ada! See https://example.com</span>\n</pre>"),
        "{g}"
    );
    assert_eq!(g.matches("<section class=\"case\"").count(), 2, "{g}");
    // Filters hide a row whose runs are all hidden.
    let page = dom(&file, "#filter=passed");
    assert!(
        !matrix_row(&page, "skillet:hello/001").contains("hidden"),
        "its skill run passed"
    );
    assert!(matrix_row(&page, "clauditor:greeting/greeting").contains("hidden=\"\""));

    // Against an older run: a column of its own, and the files diffed against it.
    let old = copy_example(FIXTURE);
    let page = dom(
        &html(d.path(), &["--against", old.path().to_str().unwrap()]),
        "",
    );
    assert!(page.contains("<th>the older run</th></tr>"), "{page}");
    let row = matrix_row(&page, "clauditor:greeting/greeting");
    assert!(
        row.ends_with("<span class=\"mark failed\" title=\"run 1: failed\">✗</span></span></td>"),
        "the older run's marks are not links (its runs are not on this page): {row}"
    );
    assert!(page.contains("<h3>Files: the older run against this one (run 1)</h3><details class=\"file\" open=\"\"><summary><code>greeting.txt</code></summary><p>the same in both</p></details>"), "{page}");
}
