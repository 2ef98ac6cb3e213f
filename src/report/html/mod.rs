//! The review viewer: one self-contained HTML file, nothing fetched (a Content-Security-Policy
//! forbids it), with inline styles and one small inline script (filtering, keyboard
//! navigation, the reviewer's feedback). The summary, plots (inline SVG), statistics, then per
//! case-run its prompt, outputs side by side (with the skill and the baseline; this run and
//! an older one), its trajectory as a timeline, checks, the judge's evidence, the files the
//! agent wrote and the reviewer's verdict.
//!
//! Every text from a suite or an agent is escaped as HTML text or attribute; the data the
//! script reads is JSON in a `<script type="application/json">` with `<`, `>`, `&` and the
//! line separators escaped, so nothing in it can end the element.

pub mod csp;
mod matrix;
pub mod plots;
mod timeline;

use std::collections::HashMap;

use quick_xml::escape::escape;

use super::model::{CaseRun, Report};
use crate::record::case_run::Arm;
use crate::record::case_run::Outcome;
use crate::record::feedback::Review;
use crate::record::grading::JudgeRecord;
use crate::text::{printable, unify_newlines};

/// The page's one script. It reads its data from `#assay-data`, never from the page's text.
pub const SCRIPT: &str = include_str!("script.js");

pub(crate) const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#1d1d1f}\
h1{font-size:1.5em}table{border-collapse:collapse;width:100%;margin:1em 0}td,th{border-bottom:1px solid #ddd;padding:.35em .5em;text-align:left;vertical-align:top}\
.passed{color:#137333}.failed,.error{color:#b3261e}.not-graded,.skipped{color:#6b6b6b}\
.badge{font-weight:600;text-transform:uppercase;font-size:.8em}section.case{border:1px solid #ddd;border-radius:6px;padding:.5em 1em;margin:1em 0}\
pre{background:#f6f6f6;padding:.6em;overflow:auto;white-space:pre-wrap;max-height:30em}details{margin:.3em 0}summary{cursor:pointer}\
.stats td:first-child{font-weight:600;width:14em}.unsandboxed{background:#fff4e5;border:1px solid #f0b429;padding:.5em 1em;border-radius:6px}\
[hidden]{display:none!important}.toolbar{position:sticky;top:0;background:#fff;border-bottom:1px solid #ddd;padding:.5em 0;display:flex;gap:.6em;flex-wrap:wrap;align-items:center;z-index:1}\
.toolbar input[type=search]{flex:1;min-width:12em}.keys{color:#6b6b6b;font-size:.85em}section.case.current{outline:3px solid #1a73e8}\
.sbs{display:grid;grid-template-columns:1fr 1fr;gap:1em}.sbs>div{min-width:0}.changed{color:#8a4b00;font-weight:600}\
ol.timeline{list-style:none;padding-left:0;border-left:3px solid #ddd;margin-left:.4em}ol.timeline li{margin:.3em 0;padding-left:.8em;position:relative}\
ol.timeline li::before{content:'';position:absolute;left:-.5em;top:.55em;width:.6em;height:.6em;border-radius:50%;background:#999}\
ol.timeline li.skill::before{background:#1a73e8}ol.timeline li.error::before{background:#b3261e}ol.timeline li.tool::before{background:#137333}\
.result.error b,li.error b{color:#b3261e}fieldset.review{border:1px solid #ddd;border-radius:6px}fieldset.review textarea{width:100%;box-sizing:border-box}\
figure{margin:1em 0}figcaption{font-weight:600}svg.plot{max-width:100%;height:auto;font-size:12px}svg.plot text{fill:#1d1d1f}svg.plot rect{fill:#8aa4c8}svg.plot .good rect{fill:#7bb77e}svg.plot .bad rect{fill:#e08b84}\
svg.plot .interval,svg.plot .axis line{stroke:#1d1d1f;fill:none}svg.plot .marker{stroke:#b3261e;stroke-width:2}\
table.matrix td.cell{white-space:nowrap}.marks{margin-left:.4em;letter-spacing:.15em}.mark{text-decoration:none;font-weight:700}\
section.group{border-top:3px solid #1d1d1f;margin:2em 0 1em}pre.diff .add{background:#e6ffec;display:block}pre.diff .del{background:#ffebe9;display:block}pre.diff .hunk{color:#6b6b6b}";

/// Text as HTML: escaped, with line ends as an HTML parser reads them and control characters
/// shown escaped (so the file prints the same on a terminal as it reads in a browser).
pub(crate) fn e(s: &str) -> String {
    escape(printable(&unify_newlines(s)).as_str()).into_owned()
}

pub(crate) fn class(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "passed",
        Outcome::Failed => "failed",
        Outcome::NotGraded => "not-graded",
        Outcome::Error => "error",
        Outcome::Skipped => "skipped",
        Outcome::Missing => "missing",
    }
}

/// Data for the script, as JSON fit to sit inside a `<script>` element: `<`, `>` and `&` (so
/// nothing ends the element or opens a comment), U+2028/2029, and the C1 controls and
/// bidirectional formatting characters (so the file shows none raw) escaped.
pub fn json_in_script(v: &serde_json::Value) -> String {
    crate::text::printable_json(&serde_json::to_string(v).unwrap_or_default())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// A case-run's identity: suite, case, run, and whether it is the baseline.
type Key<'a> = (&'a str, &'a str, u32, bool);

fn key(c: &CaseRun) -> Key<'_> {
    (&c.suite, &c.case, c.run, c.variant.is_comparison())
}

/// Two outputs next to each other, each under its heading.
fn side_by_side(left: (&str, &CaseRun), right: (&str, &CaseRun)) -> String {
    let mut h = String::from("<div class=\"sbs\">");
    for (title, c) in [left, right] {
        h.push_str(&format!(
            "<div><h4>{} · <span class=\"badge {}\">{}</span></h4><pre>{}</pre></div>",
            title,
            class(c.outcome),
            c.outcome.word(),
            e(&c.output_snippet)
        ));
    }
    h.push_str("</div>");
    h
}

/// The reviewer's form, filled in from `feedback.json` when it has this case-run.
fn review(r: &Report, c: &CaseRun, i: usize) -> String {
    let item = r.review(c);
    let checked = |v: Review| {
        if item.is_some_and(|x| x.verdict == v) {
            " checked"
        } else {
            ""
        }
    };
    format!(
        "<fieldset class=\"review\" data-at=\"{}\"><legend>Review</legend>\
<label><input type=\"radio\" name=\"verdict-{i}\" value=\"good\"{}> good</label> \
<label><input type=\"radio\" name=\"verdict-{i}\" value=\"bad\"{}> bad</label>\
<textarea name=\"note-{i}\" rows=\"2\" aria-label=\"note\" placeholder=\"note\">{}</textarea></fieldset>",
        e(item.map_or("", |x| x.at.as_str())),
        checked(Review::Good),
        checked(Review::Bad),
        e(item.map_or("", |x| x.note.as_str()))
    )
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

/// What each case-run's section is made from: the report, the older one with `--against`
/// (its case-runs by key) and every case-run's place by key (for its comparison twin).
struct Page<'a> {
    r: &'a Report,
    older: Option<&'a Report>,
    before: &'a HashMap<Key<'a>, &'a CaseRun>,
    index: HashMap<Key<'a>, usize>,
}

impl Page<'_> {
    fn changed(&self, c: &CaseRun) -> bool {
        self.before
            .get(&key(c))
            .is_some_and(|b| b.outcome != c.outcome)
    }

    /// A case-run's section: what it was asked, what it did, how it was graded, the review.
    fn case_run(&self, i: usize) -> String {
        let c = &self.r.case_runs[i];
        let mut h = format!(
            "<section class=\"case\" id=\"c{i}\" tabindex=\"-1\" data-i=\"{i}\" data-outcome=\"{}\" data-suite=\"{}\"{}><h3><span class=\"badge {}\">{}</span> {}/{} ({}run {})</h3>",
            class(c.outcome),
            e(&c.suite),
            if self.changed(c) {
                " data-changed=\"yes\""
            } else {
                ""
            },
            class(c.outcome),
            c.outcome.word(),
            e(&c.suite),
            e(&c.case),
            if c.variant.is_comparison() {
                format!("{}, ", c.variant.word())
            } else {
                String::new()
            },
            c.run,
        );
        if let Some(why) = &c.reason {
            h.push_str(&format!("<p class=\"{}\">{}</p>", class(c.outcome), e(why)));
        }
        h.push_str(&format!(
            "<p>{} · {:.1} s · folder <code>{}</code></p><h4>Prompt</h4><pre>{}</pre>",
            e(&c.harness),
            c.duration_ms as f64 / 1000.0,
            e(&c.dir.display().to_string()),
            e(&c.prompt)
        ));
        h.push_str(&self.twin(i, c));
        h.push_str(&self.against(c));
        h.push_str("<h4>Trajectory</h4>");
        h.push_str(&timeline::timeline(c));
        h.push_str("<h4>Output</h4>");
        h.push_str(&format!("<pre>{}</pre>", e(&c.output_snippet)));
        if !c.checks.is_empty() {
            h.push_str("<h4>Checks</h4>");
            h.push_str(&checks(c));
        }
        h.push_str(&judge(&c.judge));
        h.push_str(&artifacts(c));
        h.push_str(&review(self.r, c, i));
        h.push_str("</section>");
        h
    }

    /// The skill's case-run beside its comparison twin (same case and run).
    fn twin(&self, i: usize, c: &CaseRun) -> String {
        let (su, ca, ru, base) = key(c);
        let Some(&j) = self.index.get(&(su, ca, ru, !base)) else {
            return String::new();
        };
        let other = &self.r.case_runs[j];
        let (skill, base) = match c.variant {
            Arm::Skill => ((i, c), (j, other)),
            Arm::Baseline | Arm::Variant => ((j, other), (i, c)),
        };
        format!(
            "<h4>Side by side: with the skill and the {}</h4>{}",
            base.1.variant.word(),
            side_by_side(
                (
                    &format!("<a href=\"#c{}\">with the skill</a>", skill.0),
                    skill.1,
                ),
                (
                    &format!("<a href=\"#c{}\">{}</a>", base.0, base.1.variant.word()),
                    base.1,
                ),
            )
        )
    }

    /// The case-run beside its own in the older run, with `--against`.
    fn against(&self, c: &CaseRun) -> String {
        if self.older.is_none() {
            return String::new();
        }
        let mut h = String::from("<h4>Against the older run</h4>");
        match self.before.get(&key(c)) {
            Some(b) => {
                if b.outcome != c.outcome {
                    h.push_str(&format!(
                        "<p class=\"changed\">changed: {} → {}</p>",
                        b.outcome.word(),
                        c.outcome.word()
                    ));
                } else {
                    h.push_str(&format!("<p>unchanged: {}</p>", c.outcome.word()));
                }
                h.push_str(&side_by_side(("the older run", b), ("this run", c)));
                h.push_str(&matrix::files_diff(("the older run", b), ("this run", c)));
            }
            None => h.push_str("<p>not in the older run</p>"),
        }
        h
    }
}

/// The files a case-run wrote, each folded.
fn artifacts(c: &CaseRun) -> String {
    if c.artifacts.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h4>Files the agent wrote</h4>");
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
    h
}

pub fn render(r: &Report) -> String {
    render_against(r, None)
}

/// The case-runs' keys, for the script (the feedback it writes names each case-run by them).
fn data(r: &Report) -> String {
    let keys: Vec<serde_json::Value> = r
        .case_runs
        .iter()
        .map(|c| {
            serde_json::json!({"suite": c.suite, "case": c.case, "run": c.run, "variant": c.variant})
        })
        .collect();
    json_in_script(&serde_json::json!({
        "schema": crate::record::feedback::SCHEMA,
        "run": r.dir.display().to_string(),
        "case_runs": keys,
    }))
}

/// The report, each case-run beside its own in `older` when given (`assay report --against`).
/// The warnings (case-runs missing, unsandboxed, a feedback file left out) and the sandbox's
/// note.
fn notices(r: &Report) -> String {
    let s = &r.summary;
    let mut h = String::new();
    for n in super::missing_notice(s)
        .into_iter()
        .chain(super::unsandboxed_notice(s))
        .chain(r.warnings.iter().cloned())
    {
        h.push_str(&format!(
            "<p class=\"unsandboxed\"><strong>Warning:</strong> {}</p>",
            e(&n)
        ));
    }
    if let Some(n) = super::contained_notice(r) {
        h.push_str(&format!(
            "<p class=\"unsandboxed\"><strong>Note:</strong> {}</p>",
            e(&n)
        ));
    }
    h
}

/// The run's figures: the skill's case-runs by outcome, time, tokens, cost, start, folder.
fn stats(r: &Report) -> String {
    let s = &r.summary;
    let mut h = String::new();
    h.push_str("<table class=\"stats\">");
    // The skill's case-runs (the comparison arm's are counted in the line above).
    let skill = |o: Outcome| {
        r.case_runs
            .iter()
            .filter(|c| !c.variant.is_comparison() && c.outcome == o)
            .count()
            .to_string()
    };
    for (k, v) in [
        ("passed", skill(Outcome::Passed)),
        ("failed", skill(Outcome::Failed)),
        ("not graded", skill(Outcome::NotGraded)),
        ("errors", skill(Outcome::Error)),
        ("skipped", skill(Outcome::Skipped)),
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
    h.push_str("</table>");

    h
}

/// The toolbar the script drives: search, outcome and suite, the feedback download.
fn toolbar(r: &Report, against: bool) -> String {
    let mut h = String::new();
    let mut suites: Vec<&str> = r.case_runs.iter().map(|c| c.suite.as_str()).collect();
    suites.sort();
    suites.dedup();
    h.push_str("<div class=\"toolbar\" role=\"search\"><input id=\"q\" type=\"search\" placeholder=\"search (/)\" aria-label=\"search the case-runs\">\
<select id=\"outcome\" aria-label=\"outcome\"><option value=\"\">every outcome</option>");
    for o in [
        Outcome::Passed,
        Outcome::Failed,
        Outcome::NotGraded,
        Outcome::Error,
        Outcome::Skipped,
        Outcome::Missing,
    ] {
        h.push_str(&format!(
            "<option value=\"{}\">{}</option>",
            class(o),
            o.word()
        ));
    }
    if against {
        h.push_str("<option value=\"changed\">changed since the older run</option>");
    }
    h.push_str("</select><select id=\"suite\" aria-label=\"suite\"><option value=\"\">every suite</option>");
    for su in suites {
        h.push_str(&format!("<option value=\"{}\">{}</option>", e(su), e(su)));
    }
    h.push_str("</select><span id=\"shown\" aria-live=\"polite\"></span>\
<button id=\"download\" type=\"button\">Download feedback.json</button>\
<span class=\"keys\">keys: <kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> next and previous case-run, <kbd>/</kbd> search</span></div>\
<pre id=\"feedback-out\" hidden></pre>");

    h
}

/// The plots (inline SVG) and the statistics' tables.
fn plots_and_tables(r: &Report) -> String {
    let mut h = String::new();
    let plots: Vec<plots::Plot> = plots::pass_rates(&r.statistics)
        .into_iter()
        .chain(plots::trigger_rates(&r.statistics))
        .chain(plots::costs(&r.case_runs))
        .chain(plots::deltas(&r.statistics))
        .collect();
    if !plots.is_empty() {
        h.push_str("<h2>Plots</h2>");
        for p in plots {
            h.push_str(&format!(
                "<figure><figcaption>{}</figcaption>{}</figure>",
                e(p.title),
                p.svg
            ));
        }
    }

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

    h
}

pub fn render_against(r: &Report, older: Option<&Report>) -> String {
    let mut h = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"{}\"><title>assay report</title><style>{STYLE}</style></head><body>\
<h1>assay: {}</h1><p>{}</p>",
        csp::policy(SCRIPT),
        e(&super::headline::headline(&r.statistics)),
        e(&super::cases::detail(r))
    );
    h.push_str(&notices(r));
    h.push_str(&stats(r));

    // Older case-runs by key, and which changed outcome.
    let before: HashMap<Key, &CaseRun> = older
        .map(|o| o.case_runs.iter().map(|c| (key(c), c)).collect())
        .unwrap_or_default();
    let changed = |c: &CaseRun| before.get(&key(c)).is_some_and(|b| b.outcome != c.outcome);
    if let Some(o) = older {
        let n = r.case_runs.iter().filter(|c| changed(c)).count();
        h.push_str(&format!(
            "<p>Against the older run <code>{}</code>: {n} case-run(s) changed outcome, {} not in it.</p>",
            e(&o.dir.display().to_string()),
            r.case_runs
                .iter()
                .filter(|c| !before.contains_key(&key(c)))
                .count()
        ));
    }

    h.push_str(&toolbar(r, older.is_some()));

    h.push_str(&matrix::table(r, older));

    h.push_str(&plots_and_tables(r));

    // Each case's group: its head (verdicts, the files diffed), then its case-runs.
    let page = Page {
        r,
        older,
        before: &before,
        index: r
            .case_runs
            .iter()
            .enumerate()
            .map(|(i, c)| (key(c), i))
            .collect(),
    };
    for (n, g) in crate::report::cases::groups(r).iter().enumerate() {
        h.push_str(&matrix::group_head(r, g, n, older));
        for &i in &g.runs {
            h.push_str(&page.case_run(i));
        }
        h.push_str("</section>");
    }
    h.push_str(&format!(
        "<script type=\"application/json\" id=\"assay-data\">{}</script><script>{SCRIPT}</script></body></html>\n",
        data(r)
    ));
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_for_the_script_cannot_end_its_element() {
        let v = serde_json::json!({"s": "</script><!-- <script>&amp; \u{2028}\u{2029}", "n": 1});
        let t = json_in_script(&v);
        assert!(!t.contains(['<', '>', '&', '\u{2028}', '\u{2029}']), "{t}");
        let back: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn the_policy_names_the_scripts_own_hash() {
        let p = csp::policy(SCRIPT);
        assert!(p.starts_with(
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-"
        ));
        assert!(!SCRIPT.contains("http") && !STYLE.contains("http") && !STYLE.contains("url("));
        assert!(!SCRIPT.contains("</script"));
    }
}
