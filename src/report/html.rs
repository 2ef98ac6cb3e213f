//! One self-contained HTML file: inline styles, no scripts, nothing fetched. The summary and
//! statistics, then per case-run its prompt, transcript (tool calls folded), checks, the
//! judge's evidence and the files the agent wrote.

use quick_xml::escape::escape;

use super::model::{CaseRun, Outcome, Report};
use crate::record::grading::JudgeRecord;
use crate::text::{printable, unify_newlines};

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#1d1d1f}\
h1{font-size:1.5em}table{border-collapse:collapse;width:100%;margin:1em 0}td,th{border-bottom:1px solid #ddd;padding:.35em .5em;text-align:left;vertical-align:top}\
.passed{color:#137333}.failed,.error{color:#b3261e}.not-graded,.skipped{color:#6b6b6b}\
.badge{font-weight:600;text-transform:uppercase;font-size:.8em}section.case{border:1px solid #ddd;border-radius:6px;padding:.5em 1em;margin:1em 0}\
pre{background:#f6f6f6;padding:.6em;overflow:auto;white-space:pre-wrap;max-height:30em}details{margin:.3em 0}summary{cursor:pointer}\
.stats td:first-child{font-weight:600;width:14em}.unsandboxed{background:#fff4e5;border:1px solid #f0b429;padding:.5em 1em;border-radius:6px}";

/// Text as HTML: escaped, with line ends as an HTML parser reads them and control characters
/// shown escaped (so the file prints the same on a terminal as it reads in a browser).
fn e(s: &str) -> String {
    escape(printable(&unify_newlines(s)).as_str()).into_owned()
}

fn class(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "passed",
        Outcome::Failed => "failed",
        Outcome::NotGraded => "not-graded",
        Outcome::Error => "error",
        Outcome::Skipped => "skipped",
        Outcome::Missing => "missing",
    }
}

fn transcript(c: &CaseRun) -> String {
    let mut h = String::new();
    for ev in &c.transcript {
        let s = |k: &str| ev[k].as_str().unwrap_or("").to_string();
        match ev["type"].as_str() {
            Some("message") => h.push_str(&format!("<p><b>agent:</b> {}</p>", e(&s("text")))),
            Some("tool_call") => h.push_str(&format!(
                "<details><summary>tool call <code>{}</code></summary><pre>{}</pre></details>",
                e(&s("name")),
                e(&serde_json::to_string_pretty(&ev["input"]).unwrap_or_default())
            )),
            Some("tool_result") => h.push_str(&format!(
                "<details><summary>tool result{}</summary><pre>{}</pre></details>",
                if ev["is_error"] == true {
                    " (error)"
                } else {
                    ""
                },
                e(&s("output"))
            )),
            Some("skill_invoked") => {
                h.push_str(&format!("<p><b>skill invoked:</b> {}</p>", e(&s("name"))))
            }
            Some("output") => h.push_str(&format!("<pre>{}</pre>", e(&s("text")))),
            Some("error") => h.push_str(&format!(
                "<p class=\"error\">error: {}</p>",
                e(&s("message"))
            )),
            _ => {}
        }
    }
    if h.is_empty() {
        "<p>(no transcript)</p>".into()
    } else {
        h
    }
}

fn checks(c: &CaseRun) -> String {
    if c.checks.is_empty() {
        return String::new();
    }
    let mut h =
        String::from("<table><tr><th></th><th>check</th><th>result</th><th>evidence</th></tr>");
    for k in &c.checks {
        let passed = k.passed;
        h.push_str(&format!(
            "<tr><td class=\"{}\">{}</td><td><code>{}</code> ({})</td><td>{}</td><td>{}</td></tr>",
            if passed { "passed" } else { "failed" },
            if passed { "✓" } else { "✗" },
            e(&k.id),
            e(&k.kind),
            e(&k.message),
            e(k.evidence.as_deref().unwrap_or(""))
        ));
    }
    h.push_str("</table>");
    h
}

fn judge(j: &Option<JudgeRecord>) -> String {
    let Some(j) = j else {
        return String::new();
    };
    let mut h = format!("<h4>Judge: {} {}</h4>", e(&j.provider), e(&j.model));
    let mut rows: Vec<(bool, &str, &str)> = Vec::new();
    for x in j.expectations.iter().flat_map(|g| &g.expectations) {
        rows.push((x.passed, &x.text, &x.evidence));
    }
    for x in j.rubric.iter().flat_map(|g| &g.criteria) {
        rows.push((x.passed, &x.criterion, &x.evidence));
    }
    if let Some(c) = &j.criteria {
        rows.push((c.pass, "criteria", &c.reasoning));
    }
    if !rows.is_empty() {
        h.push_str("<table><tr><th></th><th>item</th><th>evidence</th></tr>");
        for (passed, what, ev) in rows {
            h.push_str(&format!(
                "<tr><td class=\"{}\">{}</td><td>{}</td><td>{}</td></tr>",
                if passed { "passed" } else { "failed" },
                if passed { "✓" } else { "✗" },
                e(what),
                e(ev)
            ));
        }
        h.push_str("</table>");
    }
    if let Some(f) = j
        .expectations
        .as_ref()
        .map(|g| &g.eval_feedback)
        .filter(|f| !f.suggestions.is_empty() || !f.overall.trim().is_empty())
    {
        h.push_str("<h4>Weak expectations</h4>");
        if !f.suggestions.is_empty() {
            h.push_str("<ul class=\"feedback\">");
            for s in &f.suggestions {
                h.push_str(&format!(
                    "<li><q>{}</q>: {}</li>",
                    e(&s.assertion),
                    e(&s.reason)
                ));
            }
            h.push_str("</ul>");
        }
        if !f.overall.trim().is_empty() {
            h.push_str(&format!("<p class=\"feedback\">{}</p>", e(&f.overall)));
        }
    }
    if let Some(err) = &j.error {
        h.push_str(&format!(
            "<p class=\"error\">the judge failed: {}</p>",
            e(err)
        ));
    }
    h
}

pub fn render(r: &Report) -> String {
    let s = &r.summary;
    let mut h = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>assay report</title><style>{STYLE}</style></head><body>\
<h1>assay: {} of {} case-runs passed ({:.0}%)</h1>",
        s.passed,
        s.total,
        s.pass_rate * 100.0
    );
    for n in super::missing_notice(s)
        .into_iter()
        .chain(super::unsandboxed_notice(s))
    {
        h.push_str(&format!(
            "<p class=\"unsandboxed\"><strong>Warning:</strong> {}</p>",
            e(&n)
        ));
    }
    h.push_str("<table class=\"stats\">");
    for (k, v) in [
        ("passed", s.passed.to_string()),
        ("failed", s.failed.to_string()),
        ("not graded", s.not_graded.to_string()),
        ("errors", s.errors.to_string()),
        ("skipped", s.skipped.to_string()),
        (
            "time (sum of case-runs)",
            format!("{:.1} s", s.duration_ms as f64 / 1000.0),
        ),
        (
            "tokens in / out",
            format!("{} / {}", s.input_tokens, s.output_tokens),
        ),
        (
            "cost",
            s.cost_usd.map_or("unknown".into(), |c| format!("${c:.4}")),
        ),
        ("started", r.started.clone().unwrap_or_default()),
        ("run folder", r.dir.display().to_string()),
    ] {
        h.push_str(&format!("<tr><td>{}</td><td>{}</td></tr>", e(k), e(&v)));
    }
    h.push_str("</table><table><tr><th>outcome</th><th>case-run</th><th>checks</th><th>time</th><th>why not</th></tr>");
    for (i, c) in r.case_runs.iter().enumerate() {
        let passed = c.checks.iter().filter(|k| k.passed).count();
        h.push_str(&format!(
            "<tr><td class=\"badge {}\">{}</td><td><a href=\"#c{i}\">{}/{}</a>{}</td><td>{passed}/{}</td><td>{:.1} s</td><td>{}</td></tr>",
            class(c.outcome),
            c.outcome.word(),
            e(&c.suite),
            e(&c.case),
            e(&super::markdown::tags(c)),
            c.checks.len(),
            c.duration_ms as f64 / 1000.0,
            e(c.reason.as_deref().unwrap_or(""))
        ));
    }
    h.push_str("</table>");
    for t in super::tables::tables(&r.statistics) {
        h.push_str(&format!("<h2>{}</h2>", e(&t.title)));
        if let Some(n) = &t.note {
            h.push_str(&format!("<p>{}</p>", e(n)));
        }
        h.push_str("<table><tr>");
        for col in &t.header {
            h.push_str(&format!("<th>{}</th>", e(col)));
        }
        h.push_str("</tr>");
        for row in &t.rows {
            h.push_str("<tr>");
            for c in row {
                h.push_str(&format!("<td>{}</td>", e(c)));
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
    }
    for (i, c) in r.case_runs.iter().enumerate() {
        h.push_str(&format!(
            "<section class=\"case\" id=\"c{i}\"><h2><span class=\"badge {}\">{}</span> {}/{}{}</h2>",
            class(c.outcome),
            c.outcome.word(),
            e(&c.suite),
            e(&c.case),
            if c.run > 1 { format!(" (run {})", c.run) } else { String::new() }
        ));
        if let Some(why) = &c.reason {
            h.push_str(&format!("<p class=\"{}\">{}</p>", class(c.outcome), e(why)));
        }
        h.push_str(&format!(
            "<p>{} · {:.1} s · folder <code>{}</code></p><h3>Prompt</h3><pre>{}</pre>",
            e(&c.harness),
            c.duration_ms as f64 / 1000.0,
            e(&c.dir.display().to_string()),
            e(&c.prompt)
        ));
        h.push_str("<h3>Transcript</h3>");
        h.push_str(&transcript(c));
        h.push_str("<h3>Output</h3>");
        h.push_str(&format!("<pre>{}</pre>", e(&c.output_snippet)));
        if !c.checks.is_empty() {
            h.push_str("<h3>Checks</h3>");
            h.push_str(&checks(c));
        }
        h.push_str(&judge(&c.judge));
        if !c.artifacts.is_empty() {
            h.push_str("<h3>Files the agent wrote</h3>");
            for (path, text) in &c.artifacts {
                match text {
                    Some(t) => h.push_str(&format!(
                        "<details><summary><code>{}</code></summary><pre>{}</pre></details>",
                        e(path),
                        e(t)
                    )),
                    None => h.push_str(&format!(
                        "<p><code>{}</code> (binary or large: see the folder)</p>",
                        e(path)
                    )),
                }
            }
        }
        h.push_str("</section>");
    }
    h.push_str("</body></html>\n");
    h
}
