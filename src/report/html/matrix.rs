//! The report's matrix: a row per case and per trigger query, a column per arm (with the
//! skill, the baseline or variant, `--against` an older run), each cell the pass rate over the
//! arm's runs with its interval and a mark per run linking to that case-run. Each case opens
//! (its name is a link) to its group: the verdicts, the files each arm wrote diffed, then its
//! case-runs.

use super::{class, e};
use crate::record::case_run::Arm;
use crate::report::aggregate::{CaseVerdict, Rate};
use crate::report::cases::CaseGroup;
use crate::report::cases::groups;
use crate::{
    record::case_run::Outcome,
    report::model::{CaseRun, Report},
};

/// The arms the run has beside the skill (the baseline or the variant), in order.
fn comparison(r: &Report) -> Option<Arm> {
    r.case_runs
        .iter()
        .map(|c| c.variant)
        .find(|v| v.is_comparison())
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// One run's mark: ✓ passed, ✗ failed, ! error, – not graded or skipped.
fn mark(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "✓",
        Outcome::Failed => "✗",
        Outcome::Error | Outcome::Missing => "!",
        Outcome::NotGraded | Outcome::Skipped => "–",
    }
}

/// The marks of an arm's runs; `link` makes each a link to its case-run section.
fn marks(runs: &[(usize, &CaseRun)], link: bool) -> String {
    let mut h = String::from("<span class=\"marks\">");
    for (i, c) in runs {
        let title = format!("run {}: {}", c.run, c.outcome.word());
        if link {
            h.push_str(&format!(
                "<a href=\"#c{i}\" class=\"mark {}\" title=\"{}\">{}</a>",
                class(c.outcome),
                e(&title),
                mark(c.outcome)
            ));
        } else {
            h.push_str(&format!(
                "<span class=\"mark {}\" title=\"{}\">{}</span>",
                class(c.outcome),
                e(&title),
                mark(c.outcome)
            ));
        }
    }
    h.push_str("</span>");
    h
}

/// A cell: the rate over the graded runs with its 95% interval, then a mark per run.
fn cell(verdict: &str, rate: Option<&Rate>, runs: &[(usize, &CaseRun)], link: bool) -> String {
    if runs.is_empty() {
        return "<td class=\"cell\">—</td>".into();
    }
    let said = match rate {
        Some(p) if p.n > 0 => format!(
            "{}/{} · {} <small>({}–{})</small>",
            p.passed,
            p.n,
            pct(p.rate),
            pct(p.low),
            pct(p.high)
        ),
        _ => "not graded".into(),
    };
    format!(
        "<td class=\"cell {verdict}\" data-verdict=\"{verdict}\">{said} {}</td>",
        marks(runs, link)
    )
}

fn verdict_class(v: CaseVerdict) -> &'static str {
    match v {
        CaseVerdict::Pass => "passed",
        CaseVerdict::Fail => "failed",
        CaseVerdict::Error => "error",
        CaseVerdict::None => "not-graded",
    }
}

/// The verdict, rate and marks of a case's runs of one arm, in this report or an older one.
fn case_cell(r: &Report, g: &CaseGroup, variant: Arm, link: bool) -> String {
    let runs: Vec<(usize, &CaseRun)> = r
        .case_runs
        .iter()
        .enumerate()
        .filter(|(_, c)| c.suite == g.suite && c.case == g.case && c.variant == variant)
        .collect();
    // An arm that never ran this case or query (trigger queries run with the skill alone) has
    // no cell of its own: never the skill's figures again.
    if runs.is_empty() {
        return cell("", None, &runs, link);
    }
    if g.trigger {
        let t = r
            .statistics
            .triggers
            .iter()
            .find(|t| t.suite == g.suite && t.id == g.case);
        let Some(t) = t else {
            return cell("not-graded", None, &runs, link);
        };
        let fired = match t.undecided() {
            true => format!("could not tell ({} run(s) ended in error)", t.untold),
            false => format!("fired {}/{}", t.fired, t.runs),
        };
        let should = if t.should_trigger { "fire" } else { "not fire" };
        let said = format!("{fired} · should {should}");
        let v = match (t.undecided(), t.passed) {
            (true, _) => "error",
            (false, true) => "passed",
            (false, false) => "failed",
        };
        return format!(
            "<td class=\"cell {v}\" data-verdict=\"{v}\">{said} {}</td>",
            marks(&runs, link)
        );
    }
    let st = &r.statistics;
    let (verdict, rate) = if variant.is_comparison() {
        let b = st
            .baselines
            .iter()
            .find(|b| b.suite == g.suite && b.case == g.case);
        (
            b.map_or(CaseVerdict::None, |b| b.baseline_verdict),
            b.map(|b| &b.baseline.pass_rate),
        )
    } else {
        let c = st
            .cases
            .iter()
            .find(|c| c.suite == g.suite && c.case == g.case);
        (
            c.map_or(CaseVerdict::None, |c| c.verdict),
            c.map(|c| &c.pass_rate),
        )
    };
    cell(verdict_class(verdict), rate, &runs, link)
}

/// The change in pass rate against the comparison arm, with Fisher's p.
fn delta(r: &Report, g: &CaseGroup) -> String {
    match r
        .statistics
        .baselines
        .iter()
        .find(|b| b.suite == g.suite && b.case == g.case)
    {
        Some(b) => format!(
            "<td>{:+.0} points <small>(p = {:.3})</small></td>",
            b.delta_pass_rate * 100.0,
            b.p_value
        ),
        None => "<td></td>".into(),
    }
}

/// A row's name: the case (with its author's name for it, when it has one), or the trigger
/// query's id and its text on one line.
pub fn name(r: &Report, g: &CaseGroup) -> String {
    let named = r
        .case_runs
        .iter()
        .find(|c| c.suite == g.suite && c.case == g.case)
        .and_then(|c| c.name.as_deref())
        .map(|n| format!(" ({})", crate::text::gist(n, 70)))
        .unwrap_or_default();
    format!(
        "{}/{}{named}{}",
        g.suite,
        g.case,
        crate::report::cases::query(r, g, 70)
    )
}

/// The matrix table.
pub fn table(r: &Report, older: Option<&Report>) -> String {
    let arm = comparison(r);
    let mut h = String::from(
        "<h2>Cases</h2><table class=\"matrix\"><tr><th>case</th><th>with the skill</th>",
    );
    if let Some(v) = arm {
        h.push_str(&format!("<th>{}</th><th>Δ</th>", v.word()));
    }
    if older.is_some() {
        h.push_str("<th>the older run</th>");
    }
    h.push_str("</tr>");
    for (n, g) in groups(r).iter().enumerate() {
        let runs: Vec<String> = g.runs.iter().map(usize::to_string).collect();
        h.push_str(&format!(
            "<tr id=\"m{n}\" data-runs=\"{}\"><td><a href=\"#k{n}\">{}</a></td>{}",
            runs.join(" "),
            e(&name(r, g)),
            case_cell(r, g, Arm::Skill, true)
        ));
        if let Some(v) = arm {
            h.push_str(&case_cell(r, g, v, true));
            h.push_str(&delta(r, g));
        }
        if let Some(o) = older {
            h.push_str(&case_cell(o, g, Arm::Skill, false));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    h
}

/// A file as one arm wrote it: its text, or why it is not shown.
fn file_text<'a>(c: &'a CaseRun, path: &str) -> Option<Option<&'a str>> {
    c.artifacts
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, t)| t.as_deref())
}

/// The files two case-runs wrote, each diffed: `left` is what the skill is compared with (the
/// baseline, the variant, the older run), `right` the skill's.
pub fn files_diff(left: (&str, &CaseRun), right: (&str, &CaseRun)) -> String {
    let mut paths: Vec<&str> = left
        .1
        .artifacts
        .iter()
        .chain(&right.1.artifacts)
        .map(|(p, _)| p.as_str())
        .collect();
    paths.sort();
    paths.dedup();
    if paths.is_empty() {
        return format!(
            "<p>Neither {} nor {} wrote a file.</p>",
            e(left.0),
            e(right.0)
        );
    }
    let mut h = String::new();
    for path in paths {
        let said = match (file_text(left.1, path), file_text(right.1, path)) {
            (Some(Some(a)), Some(Some(b))) if a == b => "<p>the same in both</p>".into(),
            (Some(Some(a)), Some(Some(b))) => diff(a, b),
            (None, Some(Some(b))) => format!(
                "<p>only {} wrote it:</p><pre class=\"diff\">{}</pre>",
                e(right.0),
                added(b)
            ),
            (Some(Some(a)), None) => format!(
                "<p>only {} wrote it:</p><pre class=\"diff\">{}</pre>",
                e(left.0),
                removed(a)
            ),
            _ => "<p>binary or large: see the case-runs' folders</p>".into(),
        };
        h.push_str(&format!(
            "<details class=\"file\" open><summary><code>{}</code></summary>{said}</details>",
            e(path)
        ));
    }
    h
}

fn lines_as(text: &str, class: &str, sign: char) -> String {
    text.lines()
        .map(|l| format!("<span class=\"{class}\">{sign}{}</span>\n", e(l)))
        .collect()
}

fn added(text: &str) -> String {
    lines_as(text, "add", '+')
}

fn removed(text: &str) -> String {
    lines_as(text, "del", '-')
}

/// A line diff of two texts, three lines of context around each change.
fn diff(a: &str, b: &str) -> String {
    let d = similar::TextDiff::from_lines(a, b);
    let mut h = String::from("<pre class=\"diff\">");
    for (i, group) in d.grouped_ops(3).iter().enumerate() {
        if i > 0 {
            h.push_str("<span class=\"hunk\">…</span>\n");
        }
        for op in group {
            for change in d.iter_changes(op) {
                let (class, sign) = match change.tag() {
                    similar::ChangeTag::Delete => ("del", '-'),
                    similar::ChangeTag::Insert => ("add", '+'),
                    similar::ChangeTag::Equal => ("same", ' '),
                };
                let line = change.value();
                h.push_str(&format!(
                    "<span class=\"{class}\">{sign}{}</span>\n",
                    e(line.strip_suffix('\n').unwrap_or(line))
                ));
            }
        }
    }
    h.push_str("</pre>");
    h
}

/// The head of a case's group: its verdicts and the files each arm wrote, diffed (the first
/// run of each arm; of this run and the older one's with `--against`).
pub fn group_head(r: &Report, g: &CaseGroup, n: usize, older: Option<&Report>) -> String {
    let mut h = format!(
        "<section class=\"group\" id=\"k{n}\" data-runs=\"{}\"><h2>{}</h2>",
        g.runs
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" "),
        e(&name(r, g))
    );
    let first = |rep: &'_ Report, v: Arm| -> Option<usize> {
        rep.case_runs
            .iter()
            .position(|c| c.suite == g.suite && c.case == g.case && c.variant == v)
    };
    let skill = first(r, Arm::Skill).map(|i| &r.case_runs[i]);
    let other = comparison(r)
        .and_then(|v| first(r, v))
        .map(|i| &r.case_runs[i]);
    if let (Some(s), Some(o)) = (skill, other) {
        h.push_str(&format!(
            "<h3>Files: the {} against the skill (run 1)</h3>",
            o.variant.word()
        ));
        h.push_str(&files_diff((o.variant.word(), o), ("the skill", s)));
    }
    if let (Some(s), Some(o)) = (
        skill,
        older.and_then(|o| first(o, Arm::Skill).map(|i| &o.case_runs[i])),
    ) {
        h.push_str("<h3>Files: the older run against this one (run 1)</h3>");
        h.push_str(&files_diff(("the older run", o), ("this run", s)));
    }
    h
}
