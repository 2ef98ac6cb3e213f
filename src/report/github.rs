//! GitHub Actions workflow commands: one annotation per case-run that did not pass, at the
//! case's line in its suite file (`::error file=…,line=…,title=…::…`), which GitHub shows on
//! the pull request's diff. Every value is escaped as GitHub's toolkit escapes them, so no
//! text from an agent or a suite can end the command early or start another one
//! (`::set-output`, `::add-mask`, …).

use super::model::{CaseRun, Report};
use crate::record::case_run::{Kind, Outcome};

/// At most this many annotations (GitHub shows ten per step and type; the rest are counted).
const MAX: usize = 50;

pub fn render(r: &Report) -> String {
    let mut out = String::new();
    let mut shown = 0;
    let mut left = 0;
    for c in &r.case_runs {
        let level = match c.outcome {
            Outcome::Failed | Outcome::Error | Outcome::Missing => "error",
            Outcome::NotGraded => "warning",
            Outcome::Passed | Outcome::Skipped => continue,
        };
        if shown == MAX {
            left += 1;
            continue;
        }
        shown += 1;
        out.push_str(&annotation(level, c));
        out.push('\n');
    }
    if left > 0 {
        out.push_str(&format!(
            "::warning title=assay::{}\n",
            data(&format!(
                "{left} more case-runs did not pass; see the run's summary"
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

fn annotation(level: &str, c: &CaseRun) -> String {
    let what = match c.kind {
        Kind::Trigger => "trigger query",
        Kind::Case => "case",
    };
    let title = format!(
        "assay: {what} {} {} (run {}, {})",
        c.case,
        c.outcome.word(),
        c.run,
        c.variant.word()
    );
    let message = format!(
        "{}/{}: {}",
        c.suite,
        c.case,
        c.reason.as_deref().unwrap_or(c.outcome.word())
    );
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
    props.push(format!("title={}", property(&title)));
    format!("::{level} {}::{}", props.join(","), data(&message))
}

/// A message: `%`, CR and LF escaped (GitHub's `escapeData`).
fn data(s: &str) -> String {
    s.replace('%', "%25")
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
}
