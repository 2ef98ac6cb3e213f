//! The run's statistics as titled tables (repeated runs, trigger evals, baselines), rendered by
//! the Markdown and HTML reports alike so they always show the same figures.

use super::aggregate::{Aggregates, BaselineStats, CaseStats, Totals, TriggerTotals};

pub struct Table {
    pub title: String,
    pub note: Option<String>,
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
    /// Rows from this index on are totals, their first cell shown in bold by each renderer
    /// (the cells themselves hold plain text only).
    pub totals_from: usize,
}

impl Table {
    pub fn is_total(&self, row: usize) -> bool {
        row >= self.totals_from
    }
}

pub fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// "60% [23%–88%]": a pass rate with its Wilson interval.
pub fn interval(r: &super::aggregate::Rate) -> String {
    format!("{} [{}–{}]", pct(r.rate), pct(r.low), pct(r.high))
}

pub fn num(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "–".into())
}

pub fn signed(x: Option<f64>, scale: f64, unit: &str) -> String {
    x.map(|v| format!("{:+.1}{unit}", v / scale))
        .unwrap_or_else(|| "–".into())
}

/// Every table the run's statistics call for, in the reports' order.
pub fn tables(a: &Aggregates) -> Vec<Table> {
    let mut out = Vec::new();
    if a.cases.iter().any(|c| c.runs > 1) {
        out.push(runs_table(a));
    }
    out.extend(a.trigger_suites.iter().map(|s| trigger_table(a, s)));
    if a.shows_routing() {
        out.extend(routing_tables(a));
    }
    if !a.baselines.is_empty() {
        out.push(baseline_table(a));
    }
    out
}

/// Repeated runs: each case's pass rate, pass@k, pass^k, score and stability, then each
/// suite's totals and all suites'.
fn runs_table(a: &Aggregates) -> Table {
    let k = a.settings.pass_k;
    let mut rows: Vec<Vec<String>> = a
        .cases
        .iter()
        .filter(|c| c.runs > 0)
        .map(case_row)
        .collect();
    let totals_from = rows.len();
    rows.extend(
        a.suites
            .iter()
            .chain(std::iter::once(&a.total))
            .map(totals_row),
    );
    Table {
        title: "Statistics over runs".into(),
        note: Some(format!(
            "Pass rate with its Wilson 95% interval; pass@{k} (at least one of {k} runs passes) and pass^{k} (all {k} pass), estimated without bias from the runs; stability is the share of runs agreeing with the majority. A case passes at a pass rate of {} or more, or by its suite's min_stability.",
            pct(a.settings.min_pass_rate)
        )),
        header: vec![
            "case",
            "verdict",
            "passed",
            "pass rate",
            "pass@k",
            "pass^k",
            "score",
            "stability",
            "",
        ],
        rows,
        totals_from,
    }
}

fn case_row(c: &CaseStats) -> Vec<String> {
    vec![
        format!("{}/{}", c.suite, c.case),
        c.verdict.to_string(),
        format!("{}/{}", c.pass_rate.passed, c.runs),
        interval(&c.pass_rate),
        num(c.pass_at_k),
        num(c.pass_hat_k),
        format!("{} ± {}", num(c.score_mean), num(c.score_sd)),
        format!(
            "{}{}",
            num(Some(c.stability)),
            c.min_stability
                .map(|m| format!(" (needs {m:.2})"))
                .unwrap_or_default()
        ),
        if c.flaky {
            "flaky".into()
        } else {
            String::new()
        },
    ]
}

fn totals_row(t: &Totals) -> Vec<String> {
    vec![
        if t.suite == "*" {
            "all suites".into()
        } else {
            t.suite.clone()
        },
        format!("{}/{} cases", t.cases_passed, t.cases),
        format!("{}/{}", t.pass_rate.passed, t.pass_rate.n),
        interval(&t.pass_rate),
        num(t.pass_at_k),
        num(t.pass_hat_k),
        format!("{} ± {}", num(t.score_mean), num(t.score_sd)),
        num(t.stability),
        format!("{} flaky", t.flaky.len()),
    ]
}

/// One trigger suite: each query's firing rate against its threshold.
fn trigger_table(a: &Aggregates, s: &TriggerTotals) -> Table {
    let how = if s.mode == "judge" {
        "Estimated by the judge from the skill's name and description (--trigger-mode judge), not observed"
    } else {
        "Observed: the real agent ran each query with the skill installed"
    };
    let note = a
        .triggers
        .iter()
        .find(|t| t.suite == s.suite)
        .and_then(|t| t.note.clone())
        .map(|n| format!(" Note: {n}."))
        .unwrap_or_default();
    let warning = s
        .warning
        .as_ref()
        .map(|w| format!(" Warning: {w}."))
        .unwrap_or_default();
    Table {
        title: format!("Triggers: {}", s.suite),
        note: Some(format!(
            "{how}. {}/{} queries passed; precision {}, recall {}, accuracy {}.{note}{warning}",
            s.passed,
            s.queries,
            num(s.precision),
            num(s.recall),
            num(s.accuracy),
        )),
        header: vec!["query", "should trigger", "fired", "rate", "verdict"],
        rows: a
            .triggers
            .iter()
            .filter(|t| t.suite == s.suite)
            .map(|t| {
                vec![
                    t.query.clone(),
                    if t.should_trigger { "yes" } else { "no" }.into(),
                    format!("{}/{}", t.fired, t.runs),
                    format!("{} (threshold {})", pct(t.trigger_rate), pct(t.threshold)),
                    if t.passed { "pass" } else { "fail" }.into(),
                ]
            })
            .collect(),
        totals_from: usize::MAX,
    }
}

/// With the skill against without: each case's pass rates and differences, then all cases'.
fn baseline_table(a: &Aggregates) -> Table {
    Table {
        title: "With the skill against the baseline".into(),
        note: Some(
            "Differences are the skill's minus the baseline's means; p is Fisher's exact test (two-sided) on the pass and fail counts.".into(),
        ),
        header: vec![
            "case",
            "with skill",
            "baseline",
            "Δ pass rate",
            "Δ duration",
            "Δ tokens",
            "Δ cost",
            "p",
        ],
        rows: a
            .baselines
            .iter()
            .chain(a.baseline_total.iter())
            .map(baseline_row)
            .collect(),
        totals_from: a.baselines.len(),
    }
}

fn baseline_row(b: &BaselineStats) -> Vec<String> {
    let passed = |r: &super::aggregate::Rate| format!("{}/{} ({})", r.passed, r.n, pct(r.rate));
    vec![
        if b.case == "*" {
            "all cases".into()
        } else {
            format!("{}/{}", b.suite, b.case)
        },
        passed(&b.skill.pass_rate),
        passed(&b.baseline.pass_rate),
        format!("{:+.0} points", b.delta_pass_rate * 100.0),
        signed(b.delta_duration_ms, 1000.0, " s"),
        signed(b.delta_tokens, 1.0, ""),
        b.delta_cost_usd
            .map(|c| format!("{c:+.4} USD"))
            .unwrap_or_else(|| "–".into()),
        format!("{:.4}", b.p_value),
    ]
}

/// Routing across sibling skills: each observed query's skills reached against what it
/// expects, then each skill's precision and recall.
fn routing_tables(a: &Aggregates) -> Vec<Table> {
    use super::routing::{broken, expects, reached};
    let mut out = vec![Table {
        title: "Routing".into(),
        note: Some(
            "Which skills each query reached over its runs, observed through the agent with the other skills installed beside the one under test.".into(),
        ),
        header: vec!["query", "expects", "reached", "verdict"],
        rows: a
            .triggers
            .iter()
            .filter(|t| t.mode != "judge")
            .map(|t| {
                let mut verdict = if t.passed { "pass" } else { "fail" }.to_string();
                for b in broken(t) {
                    verdict.push_str(&format!("; {b}"));
                }
                vec![
                    format!("{}/{}: {}", t.suite, t.id, t.query),
                    expects(t),
                    reached(t),
                    verdict,
                ]
            })
            .collect(),
        totals_from: usize::MAX,
    }];
    if !a.routing.is_empty() {
        out.push(Table {
            title: "Routing per skill".into(),
            note: Some(
                "Each skill over the queries that say whether it should fire: its own suite's, any query that should trigger another skill (a negative), and any that names it in must_fire, must_not_fire or no_other_skill. Fires means a rate at or over the threshold.".into(),
            ),
            header: vec![
                "skill",
                "queries",
                "precision",
                "recall",
                "tp / fp / tn / fn",
                "fired on unlabelled queries",
            ],
            rows: a
                .routing
                .iter()
                .map(|s| {
                    vec![
                        s.skill.clone(),
                        s.queries.to_string(),
                        num(s.precision),
                        num(s.recall),
                        format!(
                            "{} / {} / {} / {}",
                            s.true_positives, s.false_positives, s.true_negatives, s.false_negatives
                        ),
                        if s.unlabelled_firings.is_empty() {
                            "–".into()
                        } else {
                            s.unlabelled_firings.join(", ")
                        },
                    ]
                })
                .collect(),
            totals_from: usize::MAX,
        });
    }
    out
}
