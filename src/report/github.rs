//! GitHub Actions workflow commands: one annotation per case (its runs taken together) and per
//! trigger query that did not pass, at the case's line in its suite file
//! (`::error file=…,line=…,title=…::…`), which GitHub shows on the pull request's diff. The
//! comparison arms (`--baseline`, `--variant-path`) are never annotated: they are what the
//! skill is measured against, not failures of it. Every value is escaped as GitHub's toolkit
//! escapes them, so no text from an agent or a suite can end the command early or start
//! another one (`::set-output`, `::add-mask`, …).

use super::aggregate::{CaseStats, CaseVerdict};
use super::model::{CaseRun, Report};
use super::routing::TriggerStats;
use crate::record::case_run::Outcome;

/// At most this many annotations (GitHub shows ten per step and type; the rest are counted).
const MAX: usize = 50;

pub fn render(r: &Report) -> String {
    let mut found: Vec<String> = r
        .statistics
        .cases
        .iter()
        .filter_map(|c| case(r, c))
        .collect();
    found.extend(r.statistics.triggers.iter().filter_map(|t| trigger(r, t)));
    let mut out = String::new();
    for a in found.iter().take(MAX) {
        out.push_str(a);
        out.push('\n');
    }
    if found.len() > MAX {
        out.push_str(&format!(
            "::warning title=assay::{}\n",
            data(&format!(
                "{} more cases did not pass; see the run's summary",
                found.len() - MAX
            ))
        ));
    }
    if let Some(n) = super::missing_notice(&r.summary) {
        out.push_str(&format!("::error title=assay::{}\n", data(&n)));
    }
    if let Some(n) = super::unsandboxed_notice(&r.summary) {
        out.push_str(&format!("::warning title=assay::{}\n", data(&n)));
    }
    if let Some(n) = super::contained_notice(r) {
        out.push_str(&format!("::notice title=assay::{}\n", data(&n)));
    }
    out
}

/// The skill's runs of one case, the first that did not pass first.
fn runs<'a>(r: &'a Report, suite: &str, case: &str) -> Vec<&'a CaseRun> {
    let mut runs: Vec<&CaseRun> = r
        .case_runs
        .iter()
        .filter(|c| c.suite == suite && c.case == case && !c.variant.is_comparison())
        .collect();
    runs.sort_by_key(|c| (c.outcome == Outcome::Passed, c.run));
    runs
}

/// A case that did not pass over its runs: an error (a warning when it was not graded).
fn case(r: &Report, c: &CaseStats) -> Option<String> {
    let (level, word) = match c.verdict {
        CaseVerdict::Fail => ("error", "failed"),
        CaseVerdict::Error => ("error", "error"),
        CaseVerdict::None => ("warning", "not graded"),
        CaseVerdict::Pass => return None,
    };
    let runs = runs(r, &c.suite, &c.case);
    let first = runs.first()?;
    let of = if runs.len() > 1 {
        format!(" ({} of {} runs passed)", c.pass_rate.passed, runs.len())
    } else {
        String::new()
    };
    let why = c
        .reason
        .clone()
        .or_else(|| first.reason.clone())
        .unwrap_or_else(|| word.to_string());
    Some(annotation(
        level,
        first,
        &format!("assay: case {} {word}{of}", c.case),
        &format!("{}/{}: {why}", c.suite, c.case),
    ))
}

/// A trigger query whose firing rate is on the wrong side of its threshold.
fn trigger(r: &Report, t: &TriggerStats) -> Option<String> {
    if t.passed {
        return None;
    }
    let first = *runs(r, &t.suite, &t.id).first()?;
    let should = if t.should_trigger {
        "should"
    } else {
        "should not"
    };
    Some(annotation(
        "error",
        first,
        &format!(
            "assay: trigger query {} \"{}\" failed",
            t.id,
            crate::text::gist(&t.query, 50)
        ),
        &format!(
            "{}/{}: \"{}\" {should} fire the skill; it fired in {} of {} runs",
            t.suite, t.id, t.query, t.fired, t.runs
        ),
    ))
}

fn annotation(level: &str, c: &CaseRun, title: &str, message: &str) -> String {
    let mut props = Vec::new();
    match &c.result.case_at {
        Some(at) => {
            props.push(format!("file={}", property(&at.file.to_string_lossy())));
            props.push(format!("line={}", at.line));
        }
        None => props.push(format!(
            "file={}",
            property(&c.result.suite_source.to_string_lossy())
        )),
    }
    props.push(format!("title={}", property(title)));
    format!("::{level} {}::{}", props.join(","), data(message))
}

/// A message: `%`, CR and LF escaped (GitHub's `escapeData`), and every other control
/// character and bidirectional formatting character shown escaped (`\u{1b}`, `\u{202e}`), as
/// on a terminal: the file is printed by the runner and `cat` by people.
fn data(s: &str) -> String {
    let shown: String = s
        .chars()
        .map(|c| {
            if crate::text::is_hidden(c) && !matches!(c, '\r' | '\n' | '\t') {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    shown
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value: also `:` and `,` (GitHub's `escapeProperty`).
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_can_end_a_command_or_start_another() {
        let hostile = "done\n::add-mask::secret\r\n::error::fake 100%";
        let d = data(hostile);
        assert!(!d.contains('\n') && !d.contains('\r'));
        assert_eq!(d, "done%0A::add-mask::secret%0D%0A::error::fake 100%25");
        assert_eq!(property("a,b:c\nd"), "a%2Cb%3Ac%0Ad");
    }

    #[test]
    fn escape_sequences_and_bidi_overrides_are_shown_escaped() {
        let hostile = "\u{1b}]0;title\u{7} \u{1b}]52;c;cm0gLXJmIH4=\u{7} \u{9b}2J \u{202e}txt.exe";
        for shown in [data(hostile), property(hostile)] {
            assert!(
                !shown.chars().any(crate::text::is_hidden),
                "{}",
                shown.escape_debug()
            );
            assert!(shown.contains("\\u{1b}]0;title\\u{7}"), "{shown}");
            assert!(shown.contains("\\u{202e}txt.exe"), "{shown}");
        }
    }
}
