//! A Markdown summary, for `$GITHUB_STEP_SUMMARY` and pull requests: the totals, a table of
//! every case-run, then the failures with their reasons and failed checks.

use super::model::{Outcome, Report};

fn icon(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "✅",
        Outcome::Failed => "❌",
        Outcome::NotGraded => "⚪",
        Outcome::Error => "⚠️",
        Outcome::Skipped => "⏭️",
    }
}

/// Table cells: one line, pipes escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// What sets a case-run apart in a list: its run, trigger, baseline, cache.
pub(super) fn tags(c: &super::model::CaseRun) -> String {
    let mut t = String::new();
    if c.run > 1 || c.variant == "baseline" {
        t.push_str(&format!(" #{}", c.run));
    }
    if c.kind == "trigger" {
        t.push_str(" (trigger)");
    }
    if c.variant == "baseline" {
        t.push_str(" (baseline)");
    }
    if c.cached {
        t.push_str(" (cached)");
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
    ] {
        if n > 0 {
            parts.push(format!("{n} {w}"));
        }
    }
    let mut md = format!(
        "## assay: {} of {} case-runs passed ({:.0}%)\n\n{}",
        s.passed,
        s.total,
        s.pass_rate * 100.0,
        parts.join(" · ")
    );
    md.push_str(&format!(" · {:.1} s", s.duration_ms as f64 / 1000.0));
    if let Some(c) = s.cost_usd {
        md.push_str(&format!(" · ${c:.4}"));
    }
    if let Some(n) = super::unsandboxed_notice(s) {
        md.push_str(&format!("\n\n> **Warning:** {n}"));
    }
    md.push_str("\n\n| | case-run | checks | time | why not |\n|---|---|---|---|---|\n");
    for c in &r.case_runs {
        let passed = c.checks.iter().filter(|k| k["passed"] == true).count();
        md.push_str(&format!(
            "| {} | `{}/{}`{} | {}/{} | {:.1} s | {} |\n",
            icon(c.outcome),
            cell(&c.suite),
            cell(&c.case),
            tags(c),
            passed,
            c.checks.len(),
            c.duration_ms as f64 / 1000.0,
            cell(c.reason.as_deref().unwrap_or(""))
        ));
    }
    for t in super::tables::tables(&r.statistics) {
        md.push_str(&format!("\n### {}\n\n", t.title));
        if let Some(n) = &t.note {
            md.push_str(&format!("{n}\n\n"));
        }
        md.push_str(&format!("| {} |\n", t.header.join(" | ")));
        md.push_str(&format!("|{}\n", "---|".repeat(t.header.len())));
        for row in &t.rows {
            let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
            md.push_str(&format!("| {} |\n", cells.join(" | ")));
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
                "\n**`{}/{}`** ({}): {}\n",
                c.suite,
                c.case,
                c.dir.display(),
                c.reason.as_deref().unwrap_or("")
            ));
            for k in c.checks.iter().filter(|k| k["passed"] == false) {
                md.push_str(&format!(
                    "- ✗ `{}` ({}): {}\n",
                    k["id"].as_str().unwrap_or(""),
                    k["kind"].as_str().unwrap_or(""),
                    cell(k["message"].as_str().unwrap_or(""))
                ));
            }
        }
    }
    md
}
