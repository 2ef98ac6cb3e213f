//! A Markdown summary, for `$GITHUB_STEP_SUMMARY` and pull requests: the headline in cases,
//! the skill's case-runs as detail, a table of every case and trigger query (its runs passed,
//! the baseline's or variant's beside them, why not), the statistics, then each failing case
//! with the first of its failing runs, its failed checks and their evidence.

use super::aggregate::CaseVerdict;
use super::cases::CaseGroup;
use super::model::{CaseRun, Report};
use crate::record::case_run::Outcome;
use crate::text::{printable, unify_newlines};

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

fn verdict_icon(v: CaseVerdict) -> &'static str {
    match v {
        CaseVerdict::Pass => "✅",
        CaseVerdict::Fail => "❌",
        CaseVerdict::Error => "⚠️",
        CaseVerdict::None => "⚪",
    }
}

/// The icon of a case's (or trigger query's) verdict, and why it did not pass ("" when it did,
/// or when its statistics do not say).
fn verdict(r: &Report, g: &CaseGroup) -> (&'static str, String) {
    if g.trigger {
        let t = r
            .statistics
            .triggers
            .iter()
            .find(|t| t.suite == g.suite && t.id == g.case);
        match t {
            Some(t) if t.passed => ("✅", String::new()),
            Some(t) => (
                "❌",
                format!(
                    "fired in {}/{} runs; should {}trigger",
                    t.fired,
                    t.runs,
                    if t.should_trigger { "" } else { "not " }
                ),
            ),
            None => ("⚪", String::new()),
        }
    } else {
        let s = r
            .statistics
            .cases
            .iter()
            .find(|s| s.suite == g.suite && s.case == g.case);
        let v = s.map_or(CaseVerdict::None, |s| s.verdict);
        let why = s.and_then(|s| s.reason.clone()).unwrap_or_default();
        (verdict_icon(v), why)
    }
}

/// A case's (or trigger query's) verdict, its runs and why it did not pass; a passing case
/// with runs not graded says why they were not.
fn row(r: &Report, g: &CaseGroup, compared: bool) -> String {
    let skill = g.skill(r);
    let passed = |runs: &[&CaseRun]| {
        let graded: Vec<_> = runs
            .iter()
            .filter(|c| !matches!(c.outcome, Outcome::Skipped | Outcome::NotGraded))
            .collect();
        let ok = graded
            .iter()
            .filter(|c| c.outcome == Outcome::Passed)
            .count();
        if graded.is_empty() {
            "–".to_string()
        } else {
            format!("{ok}/{}", graded.len())
        }
    };
    let (icon, mut why) = verdict(r, g);
    if why.is_empty()
        && let Some(c) = skill.iter().find(|c| c.outcome != Outcome::Passed)
    {
        why = format!(
            "run {}: {}{}",
            c.run,
            c.outcome.word(),
            c.reason
                .as_deref()
                .map(|w| format!(": {w}"))
                .unwrap_or_default()
        );
    }
    let mean_s = skill.iter().map(|c| c.duration_ms).sum::<u64>() as f64
        / skill.len().max(1) as f64
        / 1000.0;
    let mut cells = vec![
        icon.to_string(),
        format!(
            "{}{}{}",
            code(&format!("{}/{}", g.suite, g.case), true),
            text(&super::cases::query(r, g, 60)),
            if skill.iter().any(|c| c.cached) {
                " (cached)"
            } else {
                ""
            }
        ),
        passed(&skill),
    ];
    if compared {
        cells.push(passed(&g.compared(r)));
    }
    cells.push(format!("{mean_s:.1} s"));
    cells.push(text(&why));
    format!("| {} |\n", cells.join(" | "))
}

/// The whole summary: headline and notices, the cases, the statistics, the judge's and the
/// reviewer's feedback, then the failures.
pub fn render(r: &Report) -> String {
    let mut md = head(r);
    md.push_str(&cases_table(r));
    for t in super::tables::tables(&r.statistics) {
        md.push_str(&table(&t));
    }
    md.push_str(&weak_expectations(r));
    md.push_str(&reviewer_feedback(r));
    md.push_str(&failures(r));
    md
}

/// The headline in cases; the case-runs as detail, the comparison arm's apart; the time, the
/// cost, then the warnings and notes.
fn head(r: &Report) -> String {
    let s = &r.summary;
    let mut md = format!(
        "## assay: {}\n\n{}",
        text(&super::headline::headline(&r.statistics)),
        text(&super::cases::detail(r))
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
    md
}

/// A row per case and trigger query, with a column for the comparison arm when there is one.
fn cases_table(r: &Report) -> String {
    let arm = r
        .case_runs
        .iter()
        .find(|c| c.variant.is_comparison())
        .map(|c| c.variant.word());
    let mut md = match arm {
        Some(a) => format!(
            "\n\n| | case | runs passed | {a} | time per run | why not |\n|---|---|---|---|---|---|\n"
        ),
        None => "\n\n| | case | runs passed | time per run | why not |\n|---|---|---|---|---|\n"
            .to_string(),
    };
    for g in super::cases::groups(r) {
        md.push_str(&row(r, &g, arm.is_some()));
    }
    md
}

/// One statistics table, its totals' first cells in bold.
fn table(t: &super::tables::Table) -> String {
    let mut md = format!("\n### {}\n\n", text(&t.title));
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
    md
}

/// The judge's feedback on each case's eval, from its first run with any ("" when none).
fn weak_expectations(r: &Report) -> String {
    let feedback = super::rows::first_feedback_per_case(r.case_runs.iter().map(|c| {
        (
            c.suite.as_str(),
            c.case.as_str(),
            c.variant.is_comparison(),
            super::rows::feedback_of(&c.result),
        )
    }));
    if feedback.is_empty() {
        return String::new();
    }
    let mut md = "\n### Weak expectations\n\nThe judge's review of the evals themselves: expectations that a run doing nothing useful would still pass, or that the evidence cannot show.\n".to_string();
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
    md
}

/// The reviewer's verdicts from the run folder's `feedback.json` ("" when none).
fn reviewer_feedback(r: &Report) -> String {
    let Some(f) = r.feedback.as_ref().filter(|f| !f.items.is_empty()) else {
        return String::new();
    };
    let mut md =
        "\n### Reviewer feedback\n\nFrom the run folder's `feedback.json`.\n\n".to_string();
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
    md
}

/// Each case and trigger query that did not pass, with the first of its runs that did not
/// (its folder, why, its failed checks). The comparison arms' runs are never failures.
fn failures(r: &Report) -> String {
    let mut md = String::new();
    for g in super::cases::groups(r) {
        let failed = if g.trigger {
            r.statistics
                .triggers
                .iter()
                .any(|t| t.suite == g.suite && t.id == g.case && !t.passed)
        } else {
            r.statistics.cases.iter().any(|s| {
                s.suite == g.suite
                    && s.case == g.case
                    && matches!(s.verdict, CaseVerdict::Fail | CaseVerdict::Error)
            })
        };
        let skill = g.skill(r);
        let Some(c) = skill
            .iter()
            .find(|c| matches!(c.outcome, Outcome::Failed | Outcome::Error))
            .filter(|_| failed)
        else {
            continue;
        };
        if md.is_empty() {
            md.push_str("\n### Failures\n");
        }
        let bad = skill
            .iter()
            .filter(|c| matches!(c.outcome, Outcome::Failed | Outcome::Error))
            .count();
        let folder = text(&c.dir.display().to_string());
        md.push_str(&format!(
            "\n**{}**{} ({}): {}\n",
            code(&format!("{}/{}", c.suite, c.case), false),
            text(&super::cases::query(r, &g, 60)),
            if skill.len() == 1 {
                folder
            } else {
                format!(
                    "{bad} of {} runs did not pass; the first: {folder}",
                    skill.len()
                )
            },
            text(c.reason.as_deref().unwrap_or(""))
        ));
        for k in c.checks.iter().filter(|k| !k.passed) {
            md.push_str(&format!(
                "- ✗ {} ({}): {}\n",
                code(&k.id, false),
                text(&k.kind),
                text(&k.message)
            ));
            if let Some(e) = &k.evidence {
                md.push_str(&format!("  - evidence: {}\n", text(e)));
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
