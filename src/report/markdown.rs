//! A Markdown summary, for `$GITHUB_STEP_SUMMARY` and pull requests: the totals, a table of
//! every case-run, then the failures with their reasons and failed checks.

use super::model::{Outcome, Report};
use crate::record::case_run::Kind;
use crate::text::{printable, unify_newlines};

fn icon(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "✅",
        Outcome::Failed => "❌",
        Outcome::NotGraded => "⚪",
        Outcome::Error => "⚠️",
        Outcome::Skipped => "⏭️",
        Outcome::Missing => "❓",
    }
}

/// Text from a suite, an agent or a script as inline Markdown that shows exactly that text:
/// on one line (a table row or list item stays whole), control characters shown escaped,
/// `<`, `>` and `&` as entities (no raw HTML passes through), and every character that
/// could start inline markup backslash-escaped (emphasis, code, links, images, strikethrough,
/// math, mentions, table cells).
pub(super) fn text(s: &str) -> String {
    let s = printable(&unify_newlines(s));
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '$' | '@' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Text as an inline code span (shown verbatim, so nothing in it is markup or HTML): on one
/// line, control characters shown escaped, fenced by more backticks than it holds in a row.
/// In a table cell a `|` is escaped, which GitHub's tables read as a pipe even in code.
fn code(s: &str, in_table: bool) -> String {
    let mut body: String = printable(&unify_newlines(s))
        .chars()
        .map(|c| if matches!(c, '\n' | '\t') { ' ' } else { c })
        .collect();
    if in_table {
        body = body.replace('|', "\\|");
    }
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // A space each side keeps a backtick at either end out of the fence (and is not shown).
    let pad = if body.starts_with(['`', ' ']) || body.ends_with(['`', ' ']) || body.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

/// What sets a case-run apart in a list: its run, trigger, baseline, cache.
pub(super) fn tags(c: &super::model::CaseRun) -> String {
    let mut t = String::new();
    if c.run > 1 || c.variant.is_comparison() {
        t.push_str(&format!(" #{}", c.run));
    }
    if c.kind == Kind::Trigger {
        t.push_str(" (trigger)");
    }
    if c.variant.is_comparison() {
        t.push_str(&format!(" ({})", c.variant.word()));
    }
    if c.cached {
        t.push_str(" (cached)");
    }
    if c.result.target_exercised == Some(false) {
        t.push_str(" (target not exercised)");
    }
    t
}

pub fn render(r: &Report) -> String {
    let s = &r.summary;
    let mut parts = vec![format!("{} passed", s.passed)];
    for (n, w) in [
        (s.failed, "failed"),
        (s.not_graded, "not graded"),
        (s.errors, if s.errors == 1 { "error" } else { "errors" }),
        (s.skipped, "skipped"),
        (s.missing, "missing"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {w}"));
        }
    }
    // The headline in cases; the case-runs (every arm) as detail.
    let mut md = format!(
        "## assay: {}\n\n{} of {} case-runs passed ({:.0}%): {}",
        text(&super::headline::headline(&r.statistics)),
        s.passed,
        s.total,
        s.pass_rate * 100.0,
        parts.join(" · ")
    );
    md.push_str(&format!(" · {:.1} s", s.duration_ms as f64 / 1000.0));
    if let Some(c) = s.cost_usd {
        md.push_str(&format!(" · ${c:.4}"));
    }
    for n in super::missing_notice(s)
        .into_iter()
        .chain(super::unsandboxed_notice(s))
    {
        md.push_str(&format!("\n\n> **Warning:** {}", text(&n)));
    }
    for w in &r.warnings {
        md.push_str(&format!("\n\n> **Warning:** {}", text(w)));
    }
    if let Some(n) = super::contained_notice(r) {
        md.push_str(&format!("\n\n> **Note:** {}", text(&n)));
    }
    md.push_str("\n\n| | case-run | checks | time | why not |\n|---|---|---|---|---|\n");
    for c in &r.case_runs {
        let passed = c.checks.iter().filter(|k| k.passed).count();
        md.push_str(&format!(
            "| {} | {}{} | {}/{} | {:.1} s | {} |\n",
            icon(c.outcome),
            code(&format!("{}/{}", c.suite, c.case), true),
            tags(c),
            passed,
            c.checks.len(),
            c.duration_ms as f64 / 1000.0,
            text(c.reason.as_deref().unwrap_or(""))
        ));
    }
    for t in super::tables::tables(&r.statistics) {
        md.push_str(&format!("\n### {}\n\n", text(&t.title)));
        if let Some(n) = &t.note {
            md.push_str(&format!("{}\n\n", text(n)));
        }
        md.push_str(&format!("| {} |\n", t.header.join(" | ")));
        md.push_str(&format!("|{}\n", "---|".repeat(t.header.len())));
        for (i, row) in t.rows.iter().enumerate() {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(j, c)| {
                    if j == 0 && t.is_total(i) {
                        format!("**{}**", text(c))
                    } else {
                        text(c)
                    }
                })
                .collect();
            md.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
    }
    // The judge's feedback on each case's eval, from its first run with any.
    let feedback = super::aggregate::first_feedback_per_case(r.case_runs.iter().map(|c| {
        (
            c.suite.as_str(),
            c.case.as_str(),
            c.variant.is_comparison(),
            super::aggregate::feedback_of(&c.result),
        )
    }));
    if !feedback.is_empty() {
        md.push_str("\n### Weak expectations\n\nThe judge's review of the evals themselves: expectations that a run doing nothing useful would still pass, or that the evidence cannot show.\n");
        for (suite, case, f) in feedback {
            md.push_str(&format!(
                "\n**{}**{}\n",
                code(&format!("{suite}/{case}"), false),
                if f.overall.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", text(&f.overall))
                }
            ));
            for s in &f.suggestions {
                md.push_str(&format!("- {}: {}\n", text(&s.assertion), text(&s.reason)));
            }
        }
    }
    if let Some(f) = r.feedback.as_ref().filter(|f| !f.items.is_empty()) {
        md.push_str("\n### Reviewer feedback\n\nFrom the run folder's `feedback.json`.\n\n");
        for i in &f.items {
            md.push_str(&format!(
                "- {} {} (run {}, {}): **{}**{}\n",
                if i.verdict == crate::record::feedback::Review::Good {
                    "👍"
                } else {
                    "👎"
                },
                code(&format!("{}/{}", i.suite, i.case), false),
                i.run,
                i.variant.word(),
                i.verdict.word(),
                if i.note.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", text(&i.note))
                }
            ));
        }
    }
    let failures: Vec<_> = r
        .case_runs
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Failed | Outcome::Error))
        .collect();
    if !failures.is_empty() {
        md.push_str("\n### Failures\n");
        for c in failures {
            md.push_str(&format!(
                "\n**{}** ({}): {}\n",
                code(&format!("{}/{}", c.suite, c.case), false),
                text(&c.dir.display().to_string()),
                text(c.reason.as_deref().unwrap_or(""))
            ));
            for k in c.checks.iter().filter(|k| !k.passed) {
                md.push_str(&format!(
                    "- ✗ {} ({}): {}\n",
                    code(&k.id, false),
                    text(&k.kind),
                    text(&k.message)
                ));
            }
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Characters that would start markup, HTML or a new cell if not escaped.
    const MARKUP: &str = "\\`*_[]|~$@!";

    /// Whether every markup character in `md` is backslash-escaped, and nothing breaks the line.
    fn inert(md: &str) -> bool {
        let mut chars = md.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(n) if MARKUP.contains(n) => {}
                    _ => return false,
                },
                '<' | '>' | '\n' | '\r' => return false,
                c if c.is_control() => return false,
                c if MARKUP.contains(c) => return false,
                _ => {}
            }
        }
        true
    }

    #[test]
    fn html_and_markup_from_an_agent_stay_text() {
        let t = text(
            "<img src=x onerror=alert(1)> **bold** [l](https://e.x) a|b\n# h\r\n`c` &amp; @team \u{1b}[2K",
        );
        assert_eq!(
            t,
            "&lt;img src=x onerror=alert(1)&gt; \\*\\*bold\\*\\* \\[l\\](https://e.x) a\\|b # h \\`c\\` &amp;amp; \\@team \\\\u{1b}\\[2K"
        );
        assert!(inert(&t));
    }

    #[test]
    fn code_spans_hold_any_backticks_and_pipes() {
        assert_eq!(code("a/b", true), "`a/b`");
        assert_eq!(code("a`b|c", true), "``a`b\\|c``");
        assert_eq!(code("`x``", false), "``` `x`` ```");
        assert_eq!(code("a\nb\u{1b}", false), "`a b\\u{1b}`");
    }

    proptest! {
        #[test]
        fn any_text_is_inert(s in any::<String>()) {
            prop_assert!(inert(&text(&s)), "{:?}", text(&s));
        }

        #[test]
        fn any_code_span_is_closed_only_by_its_fence(s in "[a-z`| \n\u{1b}<]{0,12}") {
            let c = code(&s, true);
            let fence = c.chars().take_while(|&ch| ch == '`').count();
            let body = &c[fence..c.len() - fence];
            prop_assert!(c.ends_with(&"`".repeat(fence)));
            prop_assert!(!body.contains(&"`".repeat(fence)), "{c:?}");
            prop_assert!(!body.contains(['\n', '\r', '\u{1b}']), "{c:?}");
            prop_assert!(!body.replace("\\|", "").contains('|'), "{c:?}");
        }
    }
}
