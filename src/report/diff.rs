//! Comparing two runs (the UAAPS `eval diff`): case-runs are paired by suite, case and run
//! number; each pair's outcome change is a regression (it passed before and does not now), a
//! fix, or unchanged; case-runs only in one run are new or removed. A new case-run that does
//! not pass counts as a regression too: CI should not go green by adding a failing case.

use serde::Serialize;

use super::model::{Outcome, Report};

/// One side of a diff: a run folder's report, or a UAAPS report file
/// ([`super::uaaps::read`]).
#[derive(Debug, Clone)]
pub struct Side {
    pub name: String,
    pub pass_rate: f64,
    pub case_runs: Vec<Entry>,
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub suite: String,
    pub case: String,
    pub run: u32,
    pub outcome: Outcome,
    pub score: Option<f64>,
    pub reason: Option<String>,
}

impl From<&Report> for Side {
    fn from(r: &Report) -> Side {
        Side {
            name: r.dir.display().to_string(),
            pass_rate: r.summary.pass_rate,
            case_runs: r
                .case_runs
                .iter()
                .map(|c| Entry {
                    suite: c.suite.clone(),
                    case: c.case.clone(),
                    run: c.run,
                    outcome: c.outcome,
                    score: c.score,
                    reason: c.reason.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub suite: String,
    pub case: String,
    pub run: u32,
    pub before: Option<Outcome>,
    pub after: Option<Outcome>,
    pub score_before: Option<f64>,
    pub score_after: Option<f64>,
    /// Why it does not pass now, when it does not.
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub before: String,
    pub after: String,
    pub pass_rate_before: f64,
    pub pass_rate_after: f64,
    pub regressed: Vec<Change>,
    pub fixed: Vec<Change>,
    pub new: Vec<Change>,
    pub removed: Vec<Change>,
    /// Same outcome in both, with any score change.
    pub unchanged: Vec<Change>,
}

impl Diff {
    pub fn has_regressions(&self) -> bool {
        !self.regressed.is_empty()
    }
}

fn key(c: &Entry) -> (&str, &str, u32) {
    (&c.suite, &c.case, c.run)
}

pub fn diff(a: &Side, b: &Side) -> Diff {
    let change = |x: Option<&Entry>, y: Option<&Entry>| {
        let any = y.or(x).expect("one side exists");
        Change {
            suite: any.suite.clone(),
            case: any.case.clone(),
            run: any.run,
            before: x.map(|c| c.outcome),
            after: y.map(|c| c.outcome),
            score_before: x.and_then(|c| c.score),
            score_after: y.and_then(|c| c.score),
            reason: y.and_then(|c| c.reason.clone()),
        }
    };
    let mut d = Diff {
        before: a.name.clone(),
        after: b.name.clone(),
        pass_rate_before: a.pass_rate,
        pass_rate_after: b.pass_rate,
        regressed: Vec::new(),
        fixed: Vec::new(),
        new: Vec::new(),
        removed: Vec::new(),
        unchanged: Vec::new(),
    };
    for y in &b.case_runs {
        let x = a.case_runs.iter().find(|x| key(x) == key(y));
        let c = change(x, Some(y));
        let passes = y.outcome == Outcome::Passed;
        match x.map(|x| x.outcome == Outcome::Passed) {
            None if !passes && y.outcome != Outcome::Skipped => d.regressed.push(c),
            None => d.new.push(c),
            Some(true) if !passes => d.regressed.push(c),
            Some(false) if passes => d.fixed.push(c),
            Some(_) => d.unchanged.push(c),
        }
    }
    for x in &a.case_runs {
        if !b.case_runs.iter().any(|y| key(x) == key(y)) {
            d.removed.push(change(Some(x), None));
        }
    }
    d
}

fn word(o: Option<Outcome>) -> &'static str {
    o.map_or("absent", Outcome::word)
}

pub fn render_text(d: &Diff) -> String {
    let mut s = format!(
        "{} → {}\npass rate {:.0}% → {:.0}% ({:+.0} points)\n",
        d.before,
        d.after,
        d.pass_rate_before * 100.0,
        d.pass_rate_after * 100.0,
        (d.pass_rate_after - d.pass_rate_before) * 100.0
    );
    let mut section = |title: &str, mark: &str, list: &[Change]| {
        if list.is_empty() {
            return;
        }
        s.push_str(&format!("{title} ({}):\n", list.len()));
        for c in list {
            s.push_str(&format!(
                "  {mark} {}/{}{}: {} → {}",
                c.suite,
                c.case,
                if c.run > 1 {
                    format!(" run {}", c.run)
                } else {
                    String::new()
                },
                word(c.before),
                word(c.after)
            ));
            if let (Some(a), Some(b)) = (c.score_before, c.score_after)
                && (a - b).abs() > 1e-9
            {
                // `+ 0.0` turns a negative zero into zero.
                s.push_str(&format!(" (score {:.2} → {:.2})", a + 0.0, b + 0.0));
            }
            if let Some(r) = &c.reason
                && c.after != Some(Outcome::Passed)
            {
                s.push_str(&format!(": {}", r.lines().next().unwrap_or("")));
            }
            s.push('\n');
        }
    };
    section("regressed", "✗", &d.regressed);
    section("fixed", "✓", &d.fixed);
    section("new", "+", &d.new);
    section("removed", "-", &d.removed);
    s.push_str(&format!("unchanged: {}\n", d.unchanged.len()));
    s
}
