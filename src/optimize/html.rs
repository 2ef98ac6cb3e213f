//! The optimisation's HTML view, `report.html` beside `optimize.json`: one self-contained
//! page, redrawn after every step (and by `assay report <folder> --format html`). The
//! settings and the test, the starting description, each iteration's candidates with their
//! train and holdout rates (Wilson intervals, as inline SVG too), Fisher's p-value and why each
//! was accepted or not, the verdict and the winner's front matter diff.
//!
//! It follows the run report's rules (`report::html`): a Content-Security-Policy under which
//! nothing is fetched and no script runs (the page has none), and every text a proposer, an
//! agent, a reviewer or a suite wrote escaped as HTML text.

use super::score::{CandidateVerdict, Score};
use super::{Candidate, Iteration, Measured, Record};
use crate::record::layout;
use crate::report::html::plots::{Bar, bars};
use crate::report::html::{STYLE, csp, e};

/// The page's name in the optimisation folder.
pub const FILE: &str = layout::REPORT_HTML;

const MORE_STYLE: &str = ".desc{white-space:pre-wrap;background:#f6f6f6;padding:.5em .7em;border-radius:4px;margin:.2em 0;overflow-wrap:anywhere}\
.verdict{font-size:1.1em;font-weight:600;padding:.5em 1em;border-radius:6px;border:1px solid #ddd}.verdict.improved{background:#e6f4ea}.verdict.stays{background:#f6f6f6}\
tr.accepted td{background:#e6f4ea}.diff .del{color:#b3261e}.diff .add{color:#137333}section.iteration{border:1px solid #ddd;border-radius:6px;padding:.5em 1em;margin:1em 0}";

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// A rate with its Wilson interval and counts: `75% [47–91%] (9 of 12 runs)`.
fn rate(s: &Score) -> String {
    let (lo, hi) = s.interval();
    let failed = if s.failed > 0 {
        format!(", {} failed", s.failed)
    } else {
        String::new()
    };
    format!(
        "{:.0}% [{:.0}–{:.0}%] ({} of {} runs{failed})",
        s.accuracy() * 100.0,
        lo * 100.0,
        hi * 100.0,
        s.correct,
        s.runs
    )
}

fn p(c: &CandidateVerdict) -> String {
    format!("p = {:.4} (level {:.4})", c.p_value, c.level)
}

/// The description an iteration started from, with its scores: the start's, or an earlier
/// iteration's accepted candidate's.
fn current_at(rec: &Record, it: &Iteration) -> Option<Measured> {
    let earlier = rec
        .iterations
        .iter()
        .filter(|i| i.number < it.number)
        .filter_map(|i| i.candidates.get(i.accepted?))
        .rfind(|c| c.description == it.from)
        .map(|c| Measured {
            description: c.description.clone(),
            train: c.train.clone().unwrap_or_default(),
            holdout: c.holdout.clone(),
        });
    earlier.or_else(|| rec.start.clone().filter(|s| s.description == it.from))
}

/// Whether a candidate was accepted, and why (or why not), from what is recorded.
fn decision(rec: &Record, it: &Iteration, k: usize, c: &Candidate) -> (bool, String) {
    if it.accepted == Some(k) {
        let why = c
            .comparison
            .as_ref()
            .map(|t| format!("higher on holdout, and {} is under the level", p(t)))
            .unwrap_or_default();
        return (true, format!("accepted: {why}"));
    }
    let current = current_at(rec, it);
    let Some(train) = &c.train else {
        return (
            false,
            "not measured: the optimisation stopped before its train measurement".into(),
        );
    };
    if let Some(cur) = &current
        && train.accuracy() <= cur.train.accuracy()
    {
        return (
            false,
            format!(
                "rejected: train accuracy {} is not above the current description's {}",
                pct(train.accuracy()),
                pct(cur.train.accuracy())
            ),
        );
    }
    match (&c.holdout, &c.comparison) {
        (None, _) => {
            let top = rec
                .planned
                .map(|pl| format!(" {}", pl.holdout_top))
                .unwrap_or_default();
            (
                false,
                format!(
                    "rejected: better on train, but not among the best{top} on train, which go to holdout"
                ),
            )
        }
        (Some(_), None) => (
            false,
            "not decided: measured on holdout, not yet compared".into(),
        ),
        (Some(_), Some(t)) if !t.better => (
            false,
            "rejected: its holdout accuracy is not higher than the current description's".into(),
        ),
        (Some(_), Some(t)) if !t.significant => (
            false,
            format!(
                "rejected: higher on holdout, but {} is not under the level: the gain may be noise",
                p(t)
            ),
        ),
        (Some(_), Some(t)) => (
            false,
            format!(
                "rejected: significant ({}), but another candidate did better on holdout",
                p(t)
            ),
        ),
    }
}

/// The winner's front matter diff (`-`/`+` lines), when the description improved. From the
/// skill's file as it is now (`skill_text`) when it still holds the starting description, or
/// already the winner (`--write`); else from the two descriptions alone.
pub fn winner_diff(rec: &Record, skill_text: Option<&str>) -> Option<String> {
    if !rec.improved {
        return None;
    }
    let (start, best) = (rec.start.as_ref()?, rec.best.as_ref()?);
    let one = super::description::one_line;
    let field =
        |t: &str| crate::suite::skill::front_matter_field(t, "description").map(|d| one(&d));
    let replace = super::description::replace;
    match skill_text {
        Some(t) if field(t) == Some(one(&start.description)) => {
            Some(super::diff(t, &replace(t, &best.description)))
        }
        Some(t) if field(t) == Some(one(&best.description)) => {
            Some(super::diff(&replace(t, &start.description), t))
        }
        _ => Some(format!(
            "-description: {}\n+description: {}\n",
            one(&start.description),
            serde_json::to_string(&one(&best.description)).unwrap_or_default()
        )),
    }
}

/// A bar for a score, labelled.
fn bar(label: String, s: &Score, class: &'static str) -> Bar {
    let (lo, hi) = s.interval();
    Bar {
        label,
        value: s.accuracy(),
        interval: Some((lo, hi)),
        marker: None,
        class,
        said: rate(s),
    }
}

/// The per-query table of a score.
fn queries(s: &Score, threshold: f64) -> String {
    let mut h =
        String::from("<table><tr><th></th><th>query</th><th>should fire</th><th>fired</th></tr>");
    for q in &s.queries {
        let ok = q.passes(threshold);
        h.push_str(&format!(
            "<tr><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{} of {}</td></tr>",
            if ok { "passed" } else { "failed" },
            if ok { "✓" } else { "✗" },
            e(&q.query),
            if q.should_trigger { "yes" } else { "no" },
            q.fired,
            q.runs
        ));
    }
    h.push_str("</table>");
    h
}

fn settings(rec: &Record) -> String {
    let kinds = |qs: &[super::Query]| {
        let pos = qs.iter().filter(|q| q.should_trigger).count();
        format!(
            "{} ({pos} should fire, {} should not)",
            qs.len(),
            qs.len() - pos
        )
    };
    let planned = rec.planned;
    let comparisons = if rec.level > 0.0 {
        (rec.alpha / rec.level).round()
    } else {
        0.0
    };
    let rows: Vec<(&str, String)> = vec![
        ("skill", rec.skill.clone()),
        ("file", rec.file.display().to_string()),
        ("proposer", rec.proposer.clone()),
        ("train queries", kinds(&rec.train)),
        ("holdout queries", kinds(&rec.holdout)),
        ("split", split(rec)),
        (
            "trigger runs",
            format!(
                "{} per query; a query fires at a rate ≥ {}",
                rec.trigger_runs,
                pct(rec.threshold)
            ),
        ),
        (
            "iterations",
            planned.map_or("not recorded".into(), |p| p.iterations.to_string()),
        ),
        (
            "candidates per iteration",
            planned.map_or("not recorded".into(), |p| p.candidates.to_string()),
        ),
        (
            "to holdout per iteration",
            planned.map_or("not recorded".into(), |p| {
                format!("the best {} on train that beat the current one", p.holdout_top)
            }),
        ),
        (
            "test",
            "Fisher's exact test, two-sided, on the holdout's correct and wrong runs (candidate against the current description)".into(),
        ),
        (
            "acceptance",
            format!(
                "higher holdout accuracy and p < {:.4}: alpha {} over {comparisons:.0} holdout comparison(s) (Bonferroni)",
                rec.level, rec.alpha
            ),
        ),
        ("intervals", "Wilson 95%".into()),
        (
            "cost",
            format!("${:.4} (what the agents reported; the proposer not counted)", rec.cost_usd),
        ),
    ];
    let mut h = String::from("<h2>Settings</h2><table class=\"stats\">");
    for (k, v) in rows {
        h.push_str(&format!("<tr><td>{}</td><td>{}</td></tr>", e(k), e(&v)));
    }
    h.push_str("</table>");
    h
}

fn feedback(rec: &Record) -> String {
    if rec.feedback.is_empty() {
        return String::new();
    }
    let mut h = String::from(
        "<h2>Reviewer feedback</h2><p>Notes on trigger case-runs (<code>--feedback</code>): those on train queries were shown to the proposer; a note on a holdout query never is.</p>\
<table><tr><th>from</th><th>case-run</th><th>query</th><th>verdict</th><th>note</th><th>given to the proposer</th></tr>",
    );
    for n in &rec.feedback {
        h.push_str(&format!(
            "<tr><td><code>{}</code></td><td>{}/{} run {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            e(&n.source),
            e(&n.suite),
            e(&n.case),
            n.run,
            e(&n.query),
            n.verdict.word(),
            e(&n.note),
            if n.used {
                "yes".to_string()
            } else {
                e(&format!(
                    "no: {}",
                    n.left_out.as_deref().unwrap_or("left out")
                ))
            }
        ));
    }
    h.push_str("</table>");
    h
}

/// The page. `skill_text` is the skill's file as it is now, for the winner's diff.
pub fn render(rec: &Record, skill_text: Option<&str>) -> String {
    let mut h = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"{}\"><title>assay optimize: {}</title><style>{STYLE}{MORE_STYLE}</style></head><body>\
<h1>assay optimize description: <code>{}</code></h1>",
        csp::no_script(),
        e(&rec.skill),
        e(&rec.skill)
    );
    h.push_str(&head_verdict(rec));
    h.push_str(&settings(rec));
    h.push_str(&rates(rec));
    h.push_str(&start(rec));
    for it in &rec.iterations {
        h.push_str(&iteration(rec, it));
    }
    h.push_str(&feedback(rec));
    h.push_str(&end(rec, skill_text));
    h.push_str(&format!(
        "<p>Everything here is in <code>optimize.json</code> (<code>{}</code>); each measurement's run folder is in <code>runs/</code>.</p></body></html>\n",
        e(&rec.schema)
    ));
    h
}

/// The verdict, or where the optimisation is without one; why it stopped early.
fn head_verdict(rec: &Record) -> String {
    let mut h = String::new();
    if !rec.verdict.is_empty() {
        h.push_str(&format!(
            "<p class=\"verdict {}\">{}</p>",
            if rec.improved { "improved" } else { "stays" },
            e(&rec.verdict)
        ));
    } else if rec.stopped.is_some() {
        h.push_str("<p class=\"verdict stays\">stopped: no verdict (what was measured is below; <code>assay optimize description --resume</code> goes on)</p>");
    } else {
        h.push_str("<p class=\"verdict stays\">in progress: no verdict yet (this page is redrawn after every step)</p>");
    }
    if let Some(why) = &rec.stopped {
        h.push_str(&format!(
            "<p class=\"unsandboxed\"><strong>Stopped early</strong> by {}</p>",
            e(why)
        ));
    }
    h
}

/// The plot: every measured description's train and holdout rates with their intervals.
fn rates(rec: &Record) -> String {
    let mut rows = Vec::new();
    if let Some(s) = &rec.start {
        rows.push(bar("start: train".into(), &s.train, ""));
        if let Some(ho) = &s.holdout {
            rows.push(bar("start: holdout".into(), ho, ""));
        }
    }
    for it in &rec.iterations {
        for (k, c) in it.candidates.iter().enumerate() {
            let class = if it.accepted == Some(k) { "good" } else { "" };
            let name = format!("{}.{}", it.number, k + 1);
            if let Some(t) = &c.train {
                rows.push(bar(format!("candidate {name}: train"), t, class));
            }
            if let Some(ho) = &c.holdout {
                rows.push(bar(format!("candidate {name}: holdout"), ho, class));
            }
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h2>Rates</h2><figure><figcaption>Trigger accuracy on train and holdout</figcaption>{}</figure>",
        bars(
            "Trigger accuracy on train and holdout",
            "Each description's share of correct trigger runs, with its 95% Wilson interval as an error bar; accepted candidates in green.",
            &rows,
            (0.0, 1.0),
            pct
        )
    )
}

/// The starting description, its rates and each query's.
fn start(rec: &Record) -> String {
    let mut h = String::from("<h2>The starting description</h2>");
    let Some(s) = &rec.start else {
        h.push_str("<p>not measured yet</p>");
        return h;
    };
    h.push_str(&format!(
        "<p class=\"desc\">{}</p><table class=\"stats\"><tr><td>train</td><td>{}</td></tr><tr><td>holdout</td><td>{}</td></tr></table>",
        e(&s.description),
        e(&rate(&s.train)),
        e(&s.holdout.as_ref().map_or("not measured".into(), rate))
    ));
    h.push_str(&format!(
        "<details><summary>per train query</summary>{}</details>",
        queries(&s.train, rec.threshold)
    ));
    if let Some(ho) = &s.holdout {
        h.push_str(&format!(
            "<details><summary>per holdout query</summary>{}</details>",
            queries(ho, rec.threshold)
        ));
    }
    h
}

/// One iteration: where it started from, its note, its candidates and what was decided.
fn iteration(rec: &Record, it: &Iteration) -> String {
    let mut h = format!(
        "<section class=\"iteration\" id=\"iteration-{0}\"><h2>Iteration {0}</h2>",
        it.number
    );
    if rec.start.as_ref().is_none_or(|s| s.description != it.from) {
        h.push_str(&format!(
            "<p>From the description accepted before:</p><p class=\"desc\">{}</p>",
            e(&it.from)
        ));
    }
    if let Some(n) = &it.note {
        h.push_str(&format!("<p>{}</p>", e(n)));
    }
    if !it.candidates.is_empty() {
        h.push_str("<table><tr><th>candidate</th><th>description</th><th>train</th><th>holdout</th><th>Fisher's exact test</th><th>decision</th></tr>");
        for (k, c) in it.candidates.iter().enumerate() {
            h.push_str(&candidate_row(rec, it, k, c));
        }
        h.push_str("</table>");
    }
    h.push_str("</section>");
    h
}

fn candidate_row(rec: &Record, it: &Iteration, k: usize, c: &Candidate) -> String {
    let (accepted, why) = decision(rec, it, k, c);
    format!(
        "<tr class=\"{}\" id=\"candidate-{}-{}\"><td>{}.{}</td><td><div class=\"desc\">{}</div></td><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>",
        if accepted { "accepted" } else { "rejected" },
        it.number,
        k + 1,
        it.number,
        k + 1,
        e(&c.description),
        e(&c.train.as_ref().map_or("not measured".into(), rate)),
        e(&c.holdout.as_ref().map_or("not measured".into(), rate)),
        e(&c.comparison.as_ref().map_or("-".into(), p)),
        if accepted { "passed" } else { "failed" },
        e(&why)
    )
}

/// The description at the end, the verdict and the winner's diff.
fn end(rec: &Record, skill_text: Option<&str>) -> String {
    let mut h = String::from("<h2>The end</h2>");
    if let Some(b) = &rec.best {
        h.push_str(&format!(
            "<p>The description at the end:</p><p class=\"desc\">{}</p><table class=\"stats\"><tr><td>train</td><td>{}</td></tr><tr><td>holdout</td><td>{}</td></tr></table>",
            e(&b.description),
            e(&rate(&b.train)),
            e(&b.holdout.as_ref().map_or("not measured".into(), rate))
        ));
    }
    if !rec.verdict.is_empty() {
        h.push_str(&format!("<p>{}</p>", e(&rec.verdict)));
    }
    if let Some(d) = winner_diff(rec, skill_text) {
        h.push_str("<h3>The front matter's diff</h3><pre class=\"diff\">");
        for l in d.lines() {
            let class = if l.starts_with('+') { "add" } else { "del" };
            h.push_str(&format!("<span class=\"{class}\">{}</span>\n", e(l)));
        }
        h.push_str("</pre>");
    }
    h
}

/// How train and holdout came to be: split by the seed, or the holdout as the suites gave it.
fn split(rec: &Record) -> String {
    if rec.holdout_from.is_empty() {
        format!(
            "stratified, train fraction {}, seed {}",
            rec.train_fraction, rec.seed
        )
    } else {
        format!(
            "as given: the holdout is the validation set of {}",
            rec.holdout_from.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::score::{QueryScore, compare};
    use super::super::{PlannedBudget, Query};
    use super::*;

    const EVIL: &str =
        "Writes briefs.</script><script>alert(1)</script><img src=x onerror=alert(2)> & \"q\"";

    fn score(correct: u64, runs: u64) -> Score {
        // One should-fire query holding every run.
        Score::from_queries(
            vec![QueryScore {
                id: "q1".into(),
                query: "<b>draft</b> a brief".into(),
                should_trigger: true,
                fired: correct,
                runs,
            }],
            0,
            0.0,
        )
    }

    /// A finished optimisation: iteration 1 accepts 1.1 (significant), rejects 1.2 (noise),
    /// 1.3 (not better on train); iteration 2 proposes nothing.
    pub(crate) fn record() -> Record {
        let start_h = score(6, 12);
        let good_h = score(12, 12);
        let noise_h = score(8, 12);
        let q = |id: &str, s: bool| Query {
            id: id.into(),
            query: format!("query {id}"),
            should_trigger: s,
        };
        Record {
            schema: super::super::SCHEMA.into(),
            skill: "brief<i>".into(),
            file: "/p/.claude/skills/brief/SKILL.md".into(),
            seed: 7,
            train_fraction: 0.6,
            trigger_runs: 3,
            threshold: 0.5,
            alpha: 0.05,
            level: 0.025,
            proposer: "anthropic claude-proposer".into(),
            train: vec![q("q1", true), q("q2", false)],
            holdout: vec![q("q3", true), q("q4", false)],
            holdout_from: Vec::new(),
            start: Some(Measured {
                description: "Writes documents.".into(),
                train: score(9, 18),
                holdout: Some(start_h.clone()),
            }),
            iterations: vec![
                Iteration {
                    number: 1,
                    from: "Writes documents.".into(),
                    candidates: vec![
                        Candidate {
                            description: EVIL.into(),
                            train: Some(score(18, 18)),
                            holdout: Some(good_h.clone()),
                            comparison: Some(compare(&good_h, &start_h, 0.025)),
                        },
                        Candidate {
                            description: "Writes documents (quokka).".into(),
                            train: Some(score(12, 18)),
                            holdout: Some(noise_h.clone()),
                            comparison: Some(compare(&noise_h, &start_h, 0.025)),
                        },
                        Candidate {
                            description: "Does things.".into(),
                            train: Some(score(9, 18)),
                            holdout: None,
                            comparison: None,
                        },
                    ],
                    accepted: Some(0),
                    note: None,
                },
                Iteration {
                    number: 2,
                    from: EVIL.into(),
                    candidates: vec![],
                    accepted: None,
                    note: Some("the current description passes every training query".into()),
                },
            ],
            best: Some(Measured {
                description: EVIL.into(),
                train: score(18, 18),
                holdout: Some(good_h),
            }),
            improved: true,
            verdict: "improved: holdout accuracy 50% [25–75%] → 100% [76–100%]".into(),
            cost_usd: 0.125,
            stopped: None,
            feedback: vec![super::super::feedback::Note {
                source: "runs/r1".into(),
                suite: "bmad:brief".into(),
                case: "t1".into(),
                run: 1,
                verdict: crate::record::feedback::Review::Bad,
                note: "<img src=x onerror=alert(3)> never fires".into(),
                query: "query q3".into(),
                should_trigger: true,
                fired: Some(false),
                used: false,
                left_out: Some("its query is a holdout query".into()),
            }],
            planned: Some(PlannedBudget {
                iterations: 2,
                candidates: 3,
                holdout_top: 2,
            }),
        }
    }

    #[test]
    fn a_holdout_the_suites_gave_is_named_as_the_split() {
        let mut rec = record();
        rec.holdout_from = vec!["evals/validation_queries.json".into()];
        let page = render(&rec, None);
        assert!(
            page.contains(
                "as given: the holdout is the validation set of evals/validation_queries.json"
            ),
            "{page}"
        );
        assert!(!page.contains("stratified"));
    }

    #[test]
    fn the_page_shows_every_step_and_why_and_escapes_every_description() {
        let skill = "---\nname: brief\ndescription: Writes documents.\n---\nBody\n";
        let page = render(&record(), Some(skill));
        // No script can run and nothing is fetched.
        assert!(page.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'none';"));
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("<b>draft"), "{page}");
        assert!(!page.contains("<i>"), "{page}");
        assert!(page.contains(
            "Writes briefs.&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; &amp; &quot;q&quot;"
        ));
        for banned in [" src=", "<link", "@import", "url(", "http://", "https://"] {
            for (i, _) in page.match_indices(banned) {
                let before = &page[..i];
                assert!(
                    before.rfind('<') < before.rfind('>'),
                    "{banned} in a tag at {i}"
                );
            }
        }
        // The settings and the test.
        for s in [
            "stratified, train fraction 0.6, seed 7",
            "<td>iterations</td><td>2</td>",
            "<td>candidates per iteration</td><td>3</td>",
            "the best 2 on train",
            "Fisher&apos;s exact test, two-sided",
            "p &lt; 0.0250: alpha 0.05 over 2 holdout comparison(s) (Bonferroni)",
            "Wilson 95%",
        ] {
            assert!(page.contains(s), "{s}: {page}");
        }
        // The start with its rates and intervals.
        assert!(page.contains("<p class=\"desc\">Writes documents.</p>"));
        assert!(page.contains("50% [29–71%] (9 of 18 runs)"), "{page}");
        assert!(page.contains("50% [25–75%] (6 of 12 runs)"), "{page}");
        // Each candidate, its decision and why.
        assert!(page.contains("<tr class=\"accepted\" id=\"candidate-1-1\">"));
        assert!(
            page.contains(
                "accepted: higher on holdout, and p = 0.0137 (level 0.0250) is under the level"
            ),
            "{page}"
        );
        assert!(
            page.contains("rejected: higher on holdout, but p = "),
            "{page}"
        );
        assert!(page.contains("the gain may be noise"));
        assert!(page.contains(
            "rejected: train accuracy 50% is not above the current description&apos;s 50%"
        ));
        assert!(page.contains("the current description passes every training query"));
        // The plot: an SVG bar per measurement, with interval bars.
        assert_eq!(page.matches("<g class=\"bar").count(), 2 + 2 + 2 + 1);
        assert!(page.contains("<path class=\"interval\""));
        // The verdict and the front matter's diff.
        assert!(page.contains("<p class=\"verdict improved\">improved: holdout accuracy"));
        assert!(page.contains("<span class=\"del\">-description: Writes documents.</span>"));
        assert!(
            page.contains("<span class=\"add\">+description: &quot;Writes briefs.&lt;/script&gt;")
        );
        // Feedback left out, escaped.
        assert!(page.contains("&lt;img src=x onerror=alert(3)&gt; never fires"));
        assert!(page.contains("no: its query is a holdout query"));
    }

    #[test]
    fn the_diff_holds_after_write_and_without_the_file_and_an_unfinished_page_says_so() {
        let rec = record();
        let written = crate::optimize::description::replace(
            "---\nname: brief\ndescription: Writes documents.\n---\nBody\n",
            EVIL,
        );
        let after = winner_diff(&rec, Some(&written)).unwrap();
        assert!(
            after
                .starts_with("-description: \"Writes documents.\"\n+description: \"Writes briefs."),
            "{after}"
        );
        let none = winner_diff(&rec, None).unwrap();
        assert!(
            none.starts_with("-description: Writes documents.\n+description: \"Writes briefs."),
            "{none}"
        );
        let mut fresh = rec.clone();
        fresh.improved = false;
        fresh.verdict.clear();
        fresh.iterations.clear();
        fresh.best = None;
        fresh.planned = None;
        fresh.stopped = Some("the budget".into());
        let page = render(&fresh, None);
        assert!(page.contains("stopped: no verdict"));
        assert!(page.contains("<strong>Stopped early</strong> by the budget"));
        assert!(page.contains("<td>iterations</td><td>not recorded</td>"));
        assert!(!page.contains("front matter"));
        let mut empty = fresh;
        empty.start = None;
        assert!(render(&empty, None).contains("not measured yet"));
    }
}
