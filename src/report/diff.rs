//! Comparing two runs (the UAAPS `eval diff`): case-runs are paired by suite, case, variant
//! and run number; each pair's outcome change is a regression (it passed before and does not
//! now), a fix, or unchanged; case-runs only in one run are new or removed. A new case-run that
//! does not pass counts as a regression too: CI should not go green by adding a failing case.
//! The comparison arms (baseline, variant) are what the skill is measured against: their
//! changes are listed apart and never regress the run. Each case whose runs passed changed
//! count (2/3 → 3/3) says so at the case level.

use serde::Serialize;

use super::model::Report;
use crate::record::case_run::Arm;
use crate::record::case_run::Outcome;

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
    pub variant: Arm,
    pub outcome: Outcome,
    pub score: Option<f64>,
    pub reason: Option<String>,
}

impl From<&Report> for Side {
    fn from(r: &Report) -> Side {
        let case_runs: Vec<Entry> = r
            .case_runs
            .iter()
            .map(|c| Entry {
                suite: c.suite.clone(),
                case: c.case.clone(),
                run: c.run,
                variant: c.variant,
                outcome: c.outcome,
                score: c.score,
                reason: c.reason.clone(),
            })
            .collect();
        Side {
            name: r.dir.display().to_string(),
            pass_rate: skill_pass_rate(&case_runs),
            case_runs,
        }
    }
}

/// The skill's pass rate over its graded case-runs (the comparison arms and skipped ones left
/// out).
fn skill_pass_rate(entries: &[Entry]) -> f64 {
    let counted: Vec<&Entry> = entries
        .iter()
        .filter(|e| !e.variant.is_comparison() && e.outcome != Outcome::Skipped)
        .collect();
    let passed = counted
        .iter()
        .filter(|e| e.outcome == Outcome::Passed)
        .count();
    if counted.is_empty() {
        0.0
    } else {
        passed as f64 / counted.len() as f64
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct VerdictChange {
    pub suite: String,
    pub case: String,
    pub run: u32,
    /// `skill`, or the comparison arm: `baseline`, `variant`.
    pub variant: Arm,
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
    pub regressed: Vec<VerdictChange>,
    pub fixed: Vec<VerdictChange>,
    pub new: Vec<VerdictChange>,
    pub removed: Vec<VerdictChange>,
    /// Same outcome in both, with any score change.
    pub unchanged: Vec<VerdictChange>,
    /// The comparison arms' case-runs whose outcome changed, appeared or went: never a
    /// regression of the skill.
    pub comparisons: Vec<VerdictChange>,
    /// Cases of the skill whose count of passing runs changed.
    pub cases: Vec<CaseChange>,
}

/// A case whose runs passed changed: `2/3 → 3/3`.
#[derive(Debug, Clone, Serialize)]
pub struct CaseChange {
    pub suite: String,
    pub case: String,
    pub passed_before: usize,
    pub runs_before: usize,
    pub passed_after: usize,
    pub runs_after: usize,
}

impl Diff {
    pub fn has_regressions(&self) -> bool {
        !self.regressed.is_empty()
    }
}

fn key(c: &Entry) -> (&str, &str, Arm, u32) {
    (&c.suite, &c.case, c.variant, c.run)
}

pub fn diff(a: &Side, b: &Side) -> Diff {
    let change = |x: Option<&Entry>, y: Option<&Entry>| {
        let any = y.or(x).expect("one side exists");
        VerdictChange {
            suite: any.suite.clone(),
            case: any.case.clone(),
            run: any.run,
            variant: any.variant,
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
        comparisons: Vec::new(),
        cases: cases(a, b),
    };
    for y in &b.case_runs {
        let x = a.case_runs.iter().find(|x| key(x) == key(y));
        let c = change(x, Some(y));
        let passes = y.outcome == Outcome::Passed;
        if y.variant.is_comparison() {
            if x.map(|x| x.outcome) != Some(y.outcome) {
                d.comparisons.push(c);
            }
            continue;
        }
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
            let c = change(Some(x), None);
            match x.variant.is_comparison() {
                true => d.comparisons.push(c),
                false => d.removed.push(c),
            }
        }
    }
    d
}

/// The skill's cases whose passing runs changed in count (or in runs made).
fn cases(a: &Side, b: &Side) -> Vec<CaseChange> {
    let count = |s: &Side, suite: &str, case: &str| {
        let runs: Vec<&Entry> = s
            .case_runs
            .iter()
            .filter(|e| e.suite == suite && e.case == case && !e.variant.is_comparison())
            .filter(|e| e.outcome != Outcome::Skipped)
            .collect();
        let passed = runs.iter().filter(|e| e.outcome == Outcome::Passed).count();
        (passed, runs.len())
    };
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let mut out = Vec::new();
    for e in b.case_runs.iter().filter(|e| !e.variant.is_comparison()) {
        let k = (e.suite.as_str(), e.case.as_str());
        if seen.contains(&k) {
            continue;
        }
        seen.push(k);
        let ((pb, rb), (pa, ra)) = (count(a, k.0, k.1), count(b, k.0, k.1));
        if rb > 0 && (pb, rb) != (pa, ra) && (rb > 1 || ra > 1) {
            out.push(CaseChange {
                suite: k.0.to_string(),
                case: k.1.to_string(),
                passed_before: pb,
                runs_before: rb,
                passed_after: pa,
                runs_after: ra,
            });
        }
    }
    out
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
    let mut section = |title: &str, mark: &str, list: &[VerdictChange]| {
        if list.is_empty() {
            return;
        }
        s.push_str(&format!("{title} ({}):\n", list.len()));
        for c in list {
            s.push_str(&format!(
                "  {mark} {}/{}{}: {} → {}",
                c.suite,
                c.case,
                label(c),
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
    section(
        "the comparison arms (not the skill's: never a regression)",
        "~",
        &d.comparisons,
    );
    if !d.cases.is_empty() {
        s.push_str(&format!(
            "cases whose runs passed changed ({}):\n",
            d.cases.len()
        ));
        for c in &d.cases {
            s.push_str(&format!(
                "  {}/{}: {}/{} → {}/{} runs passed\n",
                c.suite, c.case, c.passed_before, c.runs_before, c.passed_after, c.runs_after
            ));
        }
    }
    s.push_str(&format!("unchanged: {}\n", d.unchanged.len()));
    s
}

/// ` [baseline, run 2]`, ` run 2`, or nothing for the skill's first run.
fn label(c: &VerdictChange) -> String {
    match (c.variant.is_comparison(), c.run > 1) {
        (true, true) => format!(" [{}, run {}]", c.variant.word(), c.run),
        (true, false) => format!(" [{}]", c.variant.word()),
        (false, true) => format!(" run {}", c.run),
        (false, false) => String::new(),
    }
}
