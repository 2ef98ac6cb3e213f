//! JUnit XML: one `<testsuite>` per suite, one `<testcase>` per case and per trigger query,
//! with its verdict over its runs. Repeats and the comparison arms (`--baseline`,
//! `--variant-path`) are the testcase's properties (`assay.runs`, `assay.pass_rate`,
//! `assay.baseline.pass_rate`, `assay.delta_pass_rate`, `assay.p_value`, …) and one line per run
//! in its output: a baseline that fails is never a failure. Failures carry the reason as their
//! message and the failed checks in their body; errors are `<error>`, and so is a case-run the
//! judge failed on (or whose output was cut), as `assay run` exits 3 for it; skipped cases,
//! and those not graded for want of a judge, are `<skipped>` (with why), so CI parsers never
//! count them as passed.

use crate::record::case_run::Kind as RunKind;
use std::collections::BTreeMap;

use quick_xml::escape::escape;

use super::aggregate::CaseVerdict;
use super::model::{CaseRun, Report};
use crate::record::case_run::Outcome;

fn secs(ms: u64) -> String {
    format!("{:.3}", ms as f64 / 1000.0)
}

/// Whether XML 1.0 forbids this character (`Char` production), or it is a control character a
/// CI log would pass to a terminal: every C0 and C1 control but tab and newline (carriage
/// returns are newlines by then), every bidirectional formatting character, and the
/// non-characters U+FFFE and U+FFFF. (Surrogates cannot occur in a `str`.)
fn unfit(c: char) -> bool {
    (crate::text::is_hidden(c) && !matches!(c, '\t' | '\n')) || matches!(c, '\u{fffe}' | '\u{ffff}')
}

/// Text fit for XML 1.0: line ends as an XML parser reads them, and each unfit character
/// replaced by a visible `\u{…}` marker.
fn xml_chars(s: &str) -> std::borrow::Cow<'_, str> {
    let s = crate::text::unify_newlines(s);
    if !s.chars().any(unfit) {
        return s;
    }
    s.chars()
        .map(|c| {
            if unfit(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// A text node: fit for XML 1.0, then escaped.
fn text(s: &str) -> String {
    escape(xml_chars(s).as_ref()).into_owned()
}

fn attr(s: &str) -> String {
    // Attribute values: fit for XML 1.0, escaped, and on one line.
    text(&crate::text::unify_newlines(s).replace('\n', " "))
}

fn failed_checks(c: &CaseRun) -> String {
    let mut out = String::new();
    for check in c.checks.iter().filter(|k| !k.passed) {
        out.push_str(&format!(
            "✗ {} ({}): {}\n",
            check.id, check.kind, check.message
        ));
        if let Some(e) = &check.evidence {
            out.push_str(&format!("    evidence: {e}\n"));
        }
    }
    out
}

/// What a testcase counts as in the `<testsuite>` totals.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Passed,
    Failure,
    Error,
    Skipped,
}

/// Each run of a case, the comparison arms' labelled, one line each.
fn run_lines(runs: &[&CaseRun]) -> String {
    runs.iter()
        .map(|o| {
            let arm = if o.variant.is_comparison() {
                format!("[{}] ", o.variant.word())
            } else {
                String::new()
            };
            format!(
                "{arm}run {}: {}{} ({})\n",
                o.run,
                o.outcome.word(),
                o.reason
                    .as_deref()
                    .map(|w| format!(": {w}"))
                    .unwrap_or_default(),
                o.dir.display()
            )
        })
        .collect()
}

/// A trigger query's testcase name and verdict.
fn trigger_verdict(r: &Report, c: &CaseRun, all_errors: bool) -> (String, Kind, String) {
    let t = r
        .statistics
        .triggers
        .iter()
        .find(|t| t.suite == c.suite && t.id == c.case);
    let (kind, message) = match t {
        _ if all_errors => (Kind::Error, "every run ended in error".to_string()),
        Some(t) if !t.passed => (Kind::Failure, t.shortfall()),
        _ => (Kind::Passed, String::new()),
    };
    let query = t
        .map(|t| format!(": {}", crate::text::gist(&t.query, 60)))
        .unwrap_or_default();
    (format!("{} (trigger){query}", c.case), kind, message)
}

/// A case's pass rate over its runs and what it was compared with, as testcase properties:
/// information beside the verdict, never a failure.
fn properties(r: &Report, c: &CaseRun) -> String {
    let mut props: Vec<(String, String)> = Vec::new();
    if let Some(s) = r
        .statistics
        .cases
        .iter()
        .find(|s| s.suite == c.suite && s.case == c.case)
    {
        props.push(("assay.runs".into(), s.runs.to_string()));
        props.push(("assay.passed".into(), s.pass_rate.passed.to_string()));
        props.push(("assay.pass_rate".into(), format!("{:.2}", s.pass_rate.rate)));
    }
    if let Some(b) = r
        .statistics
        .baselines
        .iter()
        .find(|b| b.suite == c.suite && b.case == c.case)
    {
        let arm = format!("assay.{}", b.against);
        let rate = &b.baseline.pass_rate;
        props.push((format!("{arm}.runs"), rate.n.to_string()));
        props.push((format!("{arm}.passed"), rate.passed.to_string()));
        props.push((format!("{arm}.pass_rate"), format!("{:.2}", rate.rate)));
        props.push((format!("{arm}.verdict"), b.baseline_verdict.to_string()));
        props.push((
            "assay.delta_pass_rate".into(),
            format!("{:+.2}", b.delta_pass_rate),
        ));
        props.push(("assay.p_value".into(), format!("{:.3}", b.p_value)));
    }
    if props.is_empty() {
        return String::new();
    }
    let mut x = String::from("      <properties>\n");
    for (name, value) in props {
        x.push_str(&format!(
            "        <property name=\"{}\" value=\"{}\"/>\n",
            attr(&name),
            attr(&value)
        ));
    }
    x.push_str("      </properties>\n");
    x
}

/// Why a case-run is not graded when its grading failed (the judge failed, the output was
/// cut): an error, as the run's exit code says, never a skip.
fn grading_failed(c: &CaseRun) -> Option<String> {
    if c.outcome != Outcome::NotGraded {
        return None;
    }
    let judge = c.judge.as_ref().and_then(|j| j.error.as_ref());
    let cut = c.result.output_truncated || !c.result.workspace_unread.is_empty();
    (judge.is_some() || cut).then(|| {
        format!(
            "not graded: {}",
            c.reason.as_deref().unwrap_or("the grading failed")
        )
    })
}

/// One testcase for a case over its runs (repeats, and the baseline's or variant's runs as
/// properties and output), or for a trigger query over its runs.
fn grouped(r: &Report, runs: &[&CaseRun]) -> (String, Kind) {
    let skill: Vec<&CaseRun> = runs
        .iter()
        .copied()
        .filter(|o| !o.variant.is_comparison())
        .collect();
    let c = skill.first().copied().unwrap_or(runs[0]);
    let time = secs(skill.iter().map(|c| c.duration_ms).sum());
    let all_errors = skill.iter().all(|o| o.outcome == Outcome::Error);
    let (name, kind, message) = if c.kind == RunKind::Trigger {
        trigger_verdict(r, c, all_errors)
    } else {
        let cs = r
            .statistics
            .cases
            .iter()
            .find(|s| s.suite == c.suite && s.case == c.case);
        let broken = skill.iter().find_map(|o| grading_failed(o));
        let (kind, message) = match cs.map(|s| (s.verdict, s.reason.clone())) {
            // The judge failed on a run the verdict would have counted: an error (exit 3).
            Some((CaseVerdict::None | CaseVerdict::Pass, _)) | None if broken.is_some() => {
                (Kind::Error, broken.unwrap_or_default())
            }
            // Nothing graded (all skipped or not graded): never counted as passed.
            Some((CaseVerdict::None, _)) | None => (Kind::Skipped, "no run was graded".to_string()),
            Some((CaseVerdict::Error, _)) => (Kind::Error, "every run ended in error".to_string()),
            Some((CaseVerdict::Fail, why)) => (Kind::Failure, why.unwrap_or_default()),
            Some((CaseVerdict::Pass, _)) => (Kind::Passed, String::new()),
        };
        (c.case.clone(), kind, message)
    };
    let mut x = format!(
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{time}\">\n",
        attr(&name),
        attr(&c.suite)
    );
    x.push_str(&properties(r, c));
    match kind {
        Kind::Passed => {}
        Kind::Skipped => x.push_str(&format!(
            "      <skipped message=\"{}\"/>\n",
            attr(&message)
        )),
        Kind::Error => x.push_str(&format!(
            "      <error message=\"{}\" type=\"error\"/>\n",
            attr(&message)
        )),
        Kind::Failure => {
            let first_failed = skill.iter().find(|o| o.outcome == Outcome::Failed);
            x.push_str(&format!(
                "      <failure message=\"{}\" type=\"failed\">{}</failure>\n",
                attr(&message),
                text(&first_failed.map(|o| failed_checks(o)).unwrap_or_default())
            ))
        }
    }
    x.push_str(&format!(
        "      <system-out>{}</system-out>\n    </testcase>\n",
        text(&run_lines(runs))
    ));
    (x, kind)
}

/// One testcase for a single case-run.
fn single(c: &CaseRun) -> (String, Kind) {
    let mut x = format!(
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
        attr(&c.case),
        attr(&c.suite),
        secs(c.duration_ms)
    );
    let reason = c.reason.clone().unwrap_or_default();
    let (body, kind) = match c.outcome {
        Outcome::Passed => (None, Kind::Passed),
        Outcome::Failed => (
            Some(format!(
                "      <failure message=\"{}\" type=\"failed\">{}</failure>\n",
                attr(&reason),
                text(&failed_checks(c))
            )),
            Kind::Failure,
        ),
        Outcome::Error | Outcome::Missing => (
            Some(format!(
                "      <error message=\"{}\" type=\"error\"/>\n",
                attr(&reason)
            )),
            Kind::Error,
        ),
        Outcome::Skipped => (
            Some(format!("      <skipped message=\"{}\"/>\n", attr(&reason))),
            Kind::Skipped,
        ),
        Outcome::NotGraded => match grading_failed(c) {
            Some(why) => (
                Some(format!(
                    "      <error message=\"{}\" type=\"not-graded\"/>\n",
                    attr(&why)
                )),
                Kind::Error,
            ),
            None => (
                Some(format!(
                    "      <skipped message=\"not graded: {}\"/>\n",
                    attr(&reason)
                )),
                Kind::Skipped,
            ),
        },
    };
    match body {
        None => x.push_str("/>\n"),
        Some(b) => {
            x.push_str(">\n");
            x.push_str(&b);
            x.push_str(&format!(
                "      <system-out>folder: {}</system-out>\n",
                text(&c.dir.display().to_string())
            ));
            x.push_str("    </testcase>\n");
        }
    }
    (x, kind)
}

pub fn render(r: &Report) -> String {
    let mut by_suite: BTreeMap<&str, Vec<&CaseRun>> = BTreeMap::new();
    for c in &r.case_runs {
        by_suite.entry(&c.suite).or_default().push(c);
    }
    let mut suites = Vec::new();
    for (suite, cases) in by_suite {
        let mut testcases: Vec<(String, Kind)> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for c in &cases {
            if !seen.insert(c.case.as_str()) {
                continue;
            }
            // A case is one testcase over its runs: its repeats, its trigger runs and the
            // baseline's or variant's runs (see `aggregate` for the verdict).
            let runs: Vec<&CaseRun> = cases.iter().copied().filter(|o| o.case == c.case).collect();
            if runs.len() > 1 || c.kind == RunKind::Trigger || c.variant.is_comparison() {
                testcases.push(grouped(r, &runs));
            } else {
                testcases.push(single(c));
            }
        }
        let time: u64 = cases.iter().map(|c| c.duration_ms).sum();
        suites.push((suite, testcases, time));
    }
    let count = |k: Kind, t: &[(String, Kind)]| t.iter().filter(|(_, x)| *x == k).count();
    let all: Vec<(String, Kind)> = suites.iter().flat_map(|s| s.1.clone()).collect();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    x.push_str(&format!(
        "<testsuites name=\"assay\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">\n",
        all.len(),
        count(Kind::Failure, &all),
        count(Kind::Error, &all),
        count(Kind::Skipped, &all),
        secs(r.summary.duration_ms)
    ));
    let unsandboxed = super::unsandboxed_notice(&r.summary);
    let contained = super::contained_notice(r);
    let kind = r
        .config
        .sandbox
        .as_ref()
        .map(|s| s.kind.clone())
        .unwrap_or_default();
    for (suite, testcases, time) in suites {
        x.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">\n",
            attr(suite),
            testcases.len(),
            count(Kind::Failure, &testcases),
            count(Kind::Error, &testcases),
            count(Kind::Skipped, &testcases),
            secs(time)
        ));
        if let Some(n) = &unsandboxed {
            x.push_str(&format!(
                "    <properties><property name=\"assay.sandbox\" value=\"none\"/><property name=\"assay.warning\" value=\"{}\"/></properties>\n",
                attr(n)
            ));
        } else if let Some(n) = &contained {
            x.push_str(&format!(
                "    <properties><property name=\"assay.sandbox\" value=\"{}\"/><property name=\"assay.note\" value=\"{}\"/></properties>\n",
                attr(&kind),
                attr(n)
            ));
        }
        for (t, _) in testcases {
            x.push_str(&t);
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An element with `s` as an attribute and as text, read back by a strict XML 1.0 parser.
    fn parsed(s: &str) -> (String, String) {
        let doc = format!("<a v=\"{}\">{}</a>", attr(s), text(s));
        let tree = roxmltree::Document::parse(&doc).unwrap_or_else(|e| panic!("{doc:?}: {e}"));
        let a = tree.root_element();
        (
            a.attribute("v").unwrap_or_default().to_string(),
            a.text().unwrap_or_default().to_string(),
        )
    }

    #[test]
    fn control_characters_become_visible_markers() {
        let (v, t) = parsed("x\u{1b}[31mred\u{0}\u{8}\u{7f}\u{9b}\u{fffe}\u{ffff}\r\ny\rz");
        assert_eq!(
            t,
            "x\\u{1b}[31mred\\u{0}\\u{8}\\u{7f}\\u{9b}\\u{fffe}\\u{ffff}\ny\nz"
        );
        assert_eq!(
            v,
            "x\\u{1b}[31mred\\u{0}\\u{8}\\u{7f}\\u{9b}\\u{fffe}\\u{ffff} y z"
        );
        assert_eq!(parsed("<&\"'>").1, "<&\"'>");
    }

    proptest! {
        #[test]
        fn any_text_makes_well_formed_xml(s in any::<String>()) {
            let (v, t) = parsed(&s);
            prop_assert!(!t.chars().any(unfit) && !v.chars().any(unfit));
        }
    }
}
