//! The end of a run on the terminal: the failures (each case once, with why and where to
//! look), the statistics over repeated runs, trigger evals, routing and baselines, then the
//! headline in cases and the case-runs as detail, the comparison arms apart.

use std::path::Path;

use crate::record::run::AdaptiveRecord;
use crate::report::aggregate::{self, CaseVerdict};
use crate::report::rows::{self, Row};
use crate::report::tables::{interval, num, pct, signed};

/// What the end of a run says, from the run folder as read back.
pub struct End<'a> {
    pub rows: &'a [Row],
    pub agg: &'a aggregate::Aggregates,
    /// What adaptive repeats did (`--runs auto`), as `run.json` recorded it.
    pub adaptive: Option<&'a AdaptiveRecord>,
    /// Case-runs kept from earlier rounds are adaptive repeats' (else the resumed run's).
    pub kept_in_rounds: bool,
    /// How many case-runs were reused `from` the `cache` or the `resume`d run.
    pub reused: &'a dyn Fn(&str) -> usize,
    /// A case-run's folder as the user reaches it.
    pub shown: &'a dyn Fn(&Path) -> String,
    /// The run folder as the user reaches it.
    pub folder: String,
}

impl End<'_> {
    /// The failures and statistics, the headline in cases, the case-runs as detail (the
    /// comparison arms apart), what adaptive repeats did, and the run folder.
    pub fn lines(&self) -> Vec<String> {
        let mut out = summary(self.rows, self.agg, self.shown);
        out.push(crate::report::headline::headline(self.agg));
        out.push(case_runs_line(self.rows, self.kept_in_rounds, self.reused));
        if let Some(a) = self.adaptive {
            out.extend(adaptive_lines(a));
        }
        out.push(format!("run folder: {}", self.folder));
        out
    }
}

/// The end-of-run summary: failures first (each with why and where to look), then the
/// statistics over repeated runs, trigger evals and baselines, when there are any.
pub fn summary(
    rows: &[Row],
    agg: &aggregate::Aggregates,
    shown: impl Fn(&Path) -> String,
) -> Vec<String> {
    let mut out = Vec::new();
    for section in [
        failures(rows, agg, &shown),
        weak_expectations(rows),
        over_runs(agg),
        triggers(agg),
        routing(agg),
        baselines(agg),
    ] {
        out.extend(section);
    }
    if !out.is_empty() {
        out.push(String::new());
    }
    out
}

/// Failing cases (by their verdict over runs) and failing trigger queries, each once, with
/// why and where to look.
fn failures(
    rows: &[Row],
    agg: &aggregate::Aggregates,
    shown: &dyn Fn(&Path) -> String,
) -> Vec<String> {
    let mut out = Vec::new();
    // Failures: failing cases (by their verdict over runs), failing trigger queries, errors.
    let mut failing: Vec<String> = Vec::new();
    for c in agg.cases.iter().filter(|c| c.verdict != CaseVerdict::Pass) {
        if c.verdict == CaseVerdict::None {
            continue;
        }
        let r = rows.iter().find(|r| {
            r.suite == c.suite
                && r.case == c.case
                && !r.baseline
                && !r.trigger
                && r.outcome.word() != "passed"
        });
        let why = c
            .reason
            .clone()
            .or_else(|| r.and_then(|r| r.reason.clone()))
            .unwrap_or_default();
        failing.push(format!(
            "  {}/{}: {}\n    {}",
            c.suite,
            c.case,
            why.lines().next().unwrap_or(""),
            r.map(|r| shown(&r.dir)).unwrap_or_default()
        ));
    }
    for t in agg.triggers.iter().filter(|t| !t.passed) {
        let r = rows.iter().find(|r| r.suite == t.suite && r.case == t.id);
        failing.push(format!(
            "  {}/{}: \"{}\" {} (should {}trigger, threshold {})\n    {}",
            t.suite,
            t.id,
            crate::text::gist(&t.query, 60),
            t.fired_in(),
            if t.should_trigger { "" } else { "not " },
            t.threshold,
            r.map(|r| shown(&r.dir)).unwrap_or_default()
        ));
        for b in crate::report::routing::broken(t) {
            failing.push(format!("    routing: {b}"));
        }
    }
    if !failing.is_empty() {
        out.push(String::new());
        out.push(format!("failures ({}):", failing.len()));
        out.extend(failing);
    }
    out
}

/// The expectations grader's review of the evals themselves: expectations a run doing
/// nothing useful would pass.
fn weak_expectations(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    // The expectations grader's review of the evals themselves: expectations a run doing
    // nothing useful would pass. A model wrote it: one line per item, printed escaped.
    let feedback = rows::feedback_by_case(rows);
    if !feedback.is_empty() {
        let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(String::new());
        out.push(format!(
            "weak expectations flagged by the judge ({} case{}):",
            feedback.len(),
            if feedback.len() == 1 { "" } else { "s" }
        ));
        for (suite, case, f) in feedback {
            out.push(format!("  {suite}/{case}:"));
            for s in &f.suggestions {
                out.push(format!(
                    "    - \"{}\": {}",
                    one_line(&s.assertion),
                    one_line(&s.reason)
                ));
            }
            if !f.overall.trim().is_empty() {
                out.push(format!("    overall: {}", one_line(&f.overall)));
            }
        }
    }
    out
}

/// The k the cases' pass@k used: `--pass-k` capped at each case's graded runs, so the one
/// value they share (`k = 2` for `--runs 2`), else the cap and the range.
fn k_used(agg: &aggregate::Aggregates) -> String {
    let ks: std::collections::BTreeSet<u32> = agg
        .cases
        .iter()
        .filter(|c| c.runs > 0)
        .map(|c| c.k)
        .collect();
    match (ks.first(), ks.last()) {
        (Some(a), Some(b)) if a == b => format!("k = {a}"),
        (Some(a), Some(b)) => format!(
            "k = {} capped at each case's graded runs: {a} to {b}",
            agg.settings.pass_k
        ),
        _ => format!("k = {}", agg.settings.pass_k),
    }
}

/// The score of a case's checks over its runs, named as such, and only when it has checks:
/// the judge's items are not in it, so "0/3 passed … score 1.00" is never said.
fn check_score(c: &aggregate::CaseStats) -> String {
    match c.score_mean {
        Some(_) => format!(", check score {} ± {}", num(c.score_mean), num(c.score_sd)),
        None => String::new(),
    }
}

/// Each case's statistics over its runs, and each suite's, when a case ran more than once.
fn over_runs(agg: &aggregate::Aggregates) -> Vec<String> {
    let mut out = Vec::new();
    if agg.cases.iter().any(|c| c.runs > 1) {
        out.push(String::new());
        out.push(format!(
            "statistics over runs (pass@k and pass^k with {}):",
            k_used(agg)
        ));
        for c in agg.cases.iter().filter(|c| c.runs > 0) {
            out.push(format!(
                "  {}/{}: {}/{} passed, {}, pass@{} {}, pass^{} {}{}, stability {}{}",
                c.suite,
                c.case,
                c.pass_rate.passed,
                c.runs,
                interval(&c.pass_rate),
                c.k,
                num(c.pass_at_k),
                c.k,
                num(c.pass_hat_k),
                check_score(c),
                num(Some(c.stability)),
                if c.flaky { " · flaky" } else { "" }
            ));
        }
        for t in agg.suites.iter().chain(std::iter::once(&agg.total)) {
            out.push(format!(
                "  {}: {}/{} cases passed; case-runs {}/{} passed, {}{}",
                if t.suite == "*" {
                    "all suites"
                } else {
                    &t.suite
                },
                t.cases_passed,
                t.cases,
                t.pass_rate.passed,
                t.pass_rate.n,
                interval(&t.pass_rate),
                if t.flaky.is_empty() {
                    String::new()
                } else {
                    format!("; flaky: {}", t.flaky.join(", "))
                }
            ));
        }
    }
    out
}

/// Each suite's trigger evals: precision, recall, accuracy, and each query with its text.
fn triggers(agg: &aggregate::Aggregates) -> Vec<String> {
    let mut out = Vec::new();
    if !agg.triggers.is_empty() {
        out.push(String::new());
        for s in &agg.trigger_suites {
            out.push(format!(
                "triggers of {} ({}): {}/{} queries passed, precision {}, recall {}, accuracy {}",
                s.suite,
                if s.mode == "judge" {
                    "estimated by the judge from the name and description, not run"
                } else {
                    "observed through the agent"
                },
                s.passed,
                s.queries,
                num(s.precision),
                num(s.recall),
                num(s.accuracy),
            ));
            if let Some(w) = &s.warning {
                out.push(format!("  warning: {w}"));
            }
            let routed = agg.shows_routing();
            for t in agg.triggers.iter().filter(|t| t.suite == s.suite) {
                out.push(format!(
                    "  {} {} \"{}\": {}, should {}trigger{}",
                    match (t.passed, t.undecided()) {
                        (true, _) => "PASS",
                        (false, true) => "ERROR",
                        (false, false) => "FAIL",
                    },
                    t.id,
                    crate::text::gist(&t.query, 50),
                    match t.undecided() {
                        true => t.fired_in(),
                        false => format!("fired {}/{} ({})", t.fired, t.runs, pct(t.trigger_rate)),
                    },
                    if t.should_trigger { "" } else { "not " },
                    if routed && t.mode != "judge" {
                        format!("; reached: {}", crate::report::routing::reached(t))
                    } else {
                        String::new()
                    }
                ));
                for b in crate::report::routing::broken(t) {
                    out.push(format!("    routing: {b}"));
                }
            }
            if let Some(note) = agg
                .triggers
                .iter()
                .find(|t| t.suite == s.suite)
                .and_then(|t| t.note.clone())
            {
                out.push(format!("  note: {note}"));
            }
        }
    }
    out
}

/// Routing across skills, when more than one skill is in play.
fn routing(agg: &aggregate::Aggregates) -> Vec<String> {
    let mut out = Vec::new();
    if !agg.routing.is_empty() {
        out.push(String::new());
        out.push(
            "routing across skills (each over the queries that say whether it should fire):".into(),
        );
        for s in &agg.routing {
            out.push(format!(
                "  {}: precision {}, recall {} over {} queries (tp {}, fp {}, tn {}, fn {}){}",
                crate::text::one_line(&s.skill),
                num(s.precision),
                num(s.recall),
                s.queries,
                s.true_positives,
                s.false_positives,
                s.true_negatives,
                s.false_negatives,
                if s.unlabelled_firings.is_empty() {
                    String::new()
                } else {
                    format!("; also fired on {}", s.unlabelled_firings.join(", "))
                }
            ));
        }
    }
    out
}

/// With the skill against the baseline or variant, per case and over all.
fn baselines(agg: &aggregate::Aggregates) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(first) = agg.baselines.first() {
        out.push(String::new());
        out.push(format!(
            "with the skill against the {} (Fisher's exact test on pass counts):",
            first.against
        ));
        for b in agg.baselines.iter().chain(agg.baseline_total.iter()) {
            out.push(format!(
                "  {}: {}/{} vs {}/{} passed ({:+.0} points), duration {}, tokens {}, cost {}, p = {:.4}",
                if b.case == "*" { "all cases".to_string() } else { format!("{}/{}", b.suite, b.case) },
                b.skill.pass_rate.passed,
                b.skill.pass_rate.n,
                b.baseline.pass_rate.passed,
                b.baseline.pass_rate.n,
                b.delta_pass_rate * 100.0,
                signed(b.delta_duration_ms, 1000.0, " s"),
                signed(b.delta_tokens, 1.0, ""),
                b.delta_cost_usd.map(|c| format!("{c:+.4} USD")).unwrap_or_else(|| "–".into()),
                b.p_value
            ));
        }
    }
    out
}

/// The case-runs as detail under the headline: the skill's and trigger queries' outcomes,
/// those reused, then the comparison arms' apart (`12 case-runs: 6 passed · baseline runs: 6
/// failed`).
pub fn case_runs_line(rows: &[Row], adaptive: bool, reused_from: impl Fn(&str) -> usize) -> String {
    let tally_of = |compared: bool| {
        let mut t: std::collections::BTreeMap<&str, usize> = Default::default();
        for r in rows.iter().filter(|r| r.baseline == compared) {
            *t.entry(r.outcome.word()).or_default() += 1;
        }
        t.iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
    };
    let mut parts = tally_of(false);
    let kept = if adaptive {
        "kept from earlier rounds"
    } else {
        "kept from the resumed run"
    };
    for (from, what) in [("cache", "from the cache"), ("resume", kept)] {
        let n = reused_from(from);
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    let compared = tally_of(true);
    let mut arms: Vec<&str> = Vec::new();
    for w in rows.iter().filter(|r| r.baseline).map(|r| r.variant.word()) {
        if !arms.contains(&w) {
            arms.push(w);
        }
    }
    let arms_said = if compared.is_empty() {
        String::new()
    } else {
        format!(" · {} runs: {}", arms.join(" and "), compared.join(", "))
    };
    format!(
        "{} case-run{}: {}{arms_said}",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        parts.join(", ")
    )
}

/// What adaptive repeats did: the runs they took against `--runs <max>`, and each case.
pub fn adaptive_lines(a: &AdaptiveRecord) -> Vec<String> {
    let settled = a
        .cases
        .iter()
        .filter(|c| c.settled == "pass" || c.settled == "fail")
        .count();
    let mut out = vec![format!(
        "adaptive runs: {} case-runs for {} case(s) in {} round(s), against {} with --runs {} (saved {}); settled {} by {} (threshold {}), {} at the maximum",
        a.runs_used,
        a.cases.len(),
        a.rounds,
        a.runs_fixed,
        a.max_runs,
        a.runs_fixed.saturating_sub(a.runs_used),
        settled,
        a.rule,
        a.threshold,
        a.cases.iter().filter(|c| c.settled == "max-runs").count()
    )];
    for c in &a.cases {
        out.push(format!(
            "  {}/{}: {} run(s), {} passed: {}",
            c.suite, c.case, c.runs, c.passed, c.settled
        ));
    }
    out
}

/// The error naming the case-runs the judge failed on (the first three) and why.
pub fn judge_failed_line(failures: &[String]) -> String {
    if failures.is_empty() {
        return "error: the judge failed on some case-runs; their judge items are not graded"
            .into();
    }
    let shown: Vec<&str> = failures.iter().take(3).map(String::as_str).collect();
    let more = failures.len().saturating_sub(shown.len());
    format!(
        "error: the judge failed on {} case-run(s), whose judge items are not graded: {}{}",
        failures.len(),
        crate::text::printable(&shown.join("; ")),
        if more > 0 {
            format!("; and {more} more (each result.json has its cause)")
        } else {
            String::new()
        }
    )
}
