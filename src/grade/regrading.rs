//! `assay grade <run-dir>`'s loop: every case-run of a past run folder graded again against
//! its spec as it is now (or skipped, and why), the new grading recorded in its folder, and
//! with `--against` compared blind with the same case-run of the other run ([`super::ab`]).
//! What `--json` prints is [`RegradedJson`].

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::ab::{self, ComparisonJson};
use super::captured::needs_judge;
use super::regrade::Recorded;
use super::{Graded, JudgeSlot};
use crate::assert::check::Checks;
use crate::judge::compare::Comparison;
use crate::record::Status;
use crate::record::case_run::Kind;
use crate::suite::{Case, Suite};

/// What a run folder is graded again with.
pub struct Regrading<'a> {
    /// The specs as they are now.
    pub suites: &'a [Suite],
    /// The other run's case-runs (`--against`), when given.
    pub others: Option<&'a [Recorded]>,
    pub checks: &'a Checks,
}

/// One case-run, graded again or not.
pub struct CaseRunRegraded {
    /// `suite/case run N`.
    pub label: String,
    pub suite: String,
    pub case: String,
    pub run: u32,
    pub regrade: Regrade,
}

/// What became of a case-run.
pub enum Regrade {
    /// Not graded again: what is said, and what the JSON says.
    Skipped {
        said: String,
        why: String,
    },
    Graded(Box<GradedAgain>),
}

/// A case-run graded again.
pub struct GradedAgain {
    pub dir: PathBuf,
    pub graded: Graded,
    /// Why the new grading is not recorded in its folder, when it is not.
    pub unrecorded: Option<std::io::Error>,
    /// The blind comparison with the other run's case-run (`--against`).
    pub comparison: Option<Result<Comparison, String>>,
}

impl CaseRunRegraded {
    /// The case-run graded again, if it was.
    pub fn regraded(&self) -> Option<&GradedAgain> {
        match &self.regrade {
            Regrade::Graded(g) => Some(g),
            Regrade::Skipped { .. } => None,
        }
    }
}

/// `assay grade <run-dir> --json`.
#[derive(Serialize)]
pub struct RegradedJson<'a> {
    pub run: &'a Path,
    pub case_runs: Vec<CaseRunJson<'a>>,
}

/// One case-run in [`RegradedJson`].
#[derive(Serialize)]
pub struct CaseRunJson<'a> {
    pub suite: &'a str,
    pub case: &'a str,
    pub run: u32,
    #[serde(flatten)]
    pub regrade: RegradeJson<'a>,
}

/// A case-run's grading, or why it has none.
#[derive(Serialize)]
#[serde(untagged)]
pub enum RegradeJson<'a> {
    Skipped {
        skipped: &'a str,
    },
    Graded {
        dir: &'a Path,
        grading: serde_json::Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        comparison: Option<ComparisonJson<'a>>,
    },
}

/// The JSON of a run folder graded again.
pub fn json<'a>(dir: &'a Path, case_runs: &'a [CaseRunRegraded]) -> RegradedJson<'a> {
    RegradedJson {
        run: dir,
        case_runs: case_runs.iter().map(CaseRunRegraded::json).collect(),
    }
}

impl CaseRunRegraded {
    fn json(&self) -> CaseRunJson<'_> {
        let outcome = match &self.regrade {
            Regrade::Skipped { why, .. } => RegradeJson::Skipped { skipped: why },
            Regrade::Graded(r) => RegradeJson::Graded {
                dir: &r.dir,
                grading: r.graded.grading_json(),
                comparison: r.comparison.as_ref().map(ComparisonJson::of),
            },
        };
        CaseRunJson {
            suite: &self.suite,
            case: &self.case,
            run: self.run,
            regrade: outcome,
        }
    }
}

/// The suite and case a recorded case-run is of now, if it is still in the spec (a trigger
/// eval has none to grade again).
pub fn case_of<'s>(r: &Recorded, suites: &'s [Suite]) -> Option<(&'s Suite, &'s Case)> {
    if r.result.kind == Kind::Trigger {
        return None;
    }
    let s = suites.iter().find(|s| s.id == r.result.suite)?;
    Some((s, s.cases.iter().find(|c| c.id == r.result.case)?))
}

/// Grades every case-run again, in folder order, handing each to `each` as it is done:
/// `judge` gives a suite's judge (asked once per case-run that needs one, before any is
/// graded), `redact` redacts a file the judge wrote into a case-run's folder.
pub async fn regrade_all(
    recorded: &mut [Recorded],
    with: &Regrading<'_>,
    judge: &mut dyn FnMut(&Suite) -> JudgeSlot,
    redact: &dyn Fn(&Path) -> std::io::Result<()>,
    each: &mut dyn FnMut(&CaseRunRegraded),
) -> Vec<CaseRunRegraded> {
    let slots: Vec<Option<JudgeSlot>> = recorded
        .iter()
        .map(|r| {
            let (s, c) = case_of(r, with.suites)?;
            (needs_judge(c) || with.others.is_some()).then(|| judge(s))
        })
        .collect();
    let mut done = Vec::new();
    for (r, slot) in recorded.iter_mut().zip(&slots) {
        let found = case_of(r, with.suites);
        let outcome = match (not_regraded(r, found.is_some()), found) {
            (Some((said, why)), _) => Regrade::Skipped { said, why },
            (None, Some(of)) => Regrade::Graded(Box::new(regrade(r, of, with, slot, redact).await)),
            (None, None) => continue,
        };
        let one = CaseRunRegraded {
            label: format!("{}/{} run {}", r.result.suite, r.result.case, r.result.run),
            suite: r.result.suite.clone(),
            case: r.result.case.clone(),
            run: r.result.run,
            regrade: outcome,
        };
        each(&one);
        done.push(one);
    }
    done
}

/// One case-run graded again, its grading recorded, compared when asked.
async fn regrade(
    r: &mut Recorded,
    (suite, case): (&Suite, &Case),
    with: &Regrading<'_>,
    slot: &Option<JudgeSlot>,
    redact: &dyn Fn(&Path) -> std::io::Result<()>,
) -> GradedAgain {
    let slot = slot.as_ref();
    // The arms as the suite's format runs them (an `--ablation none` run is not told apart).
    let two_arms =
        suite.policies.compare_without && (suite.package.is_some() || !case.plugins.is_empty());
    let (case, unscored) = super::weighted::for_arm(case, r.result.variant, two_arms);
    let mut input = r.input(&case);
    input.unscored = unscored;
    let graded = super::grade(suite, &case, input, with.checks, slot).await;
    let unrecorded = r
        .write(&graded)
        .and_then(|()| redact(&r.dir.join(super::JUDGE_REPLY)).or_else(absent))
        .err();
    let comparison = match with.others {
        Some(others) => Some(ab::compare_with_other(others, r, slot, &case, &graded).await),
        None => None,
    };
    GradedAgain {
        dir: r.dir.clone(),
        graded,
        unrecorded,
        comparison,
    }
}

/// Why a recorded case-run is not graded again (what is said, what the JSON says), if it is
/// not: a trigger eval, a case gone from its spec (`found` false), one that did not run.
fn not_regraded(r: &Recorded, found: bool) -> Option<(String, String)> {
    if r.result.kind == Kind::Trigger {
        let why = "a trigger eval";
        return Some((
            "a trigger eval has nothing to grade again".into(),
            why.into(),
        ));
    }
    if !found {
        let said = format!(
            "the case is no longer in {}",
            r.result.suite_source.display()
        );
        return Some((said, "the case is no longer in the spec".into()));
    }
    let status = crate::record::run::word(&r.result.status);
    if matches!(r.result.status, Status::Completed | Status::Failed) {
        return None;
    }
    let said = format!(
        "it did not run ({})",
        r.result.reason.as_deref().unwrap_or(&status)
    );
    Some((said, format!("status {status}")))
}

/// A file that is not there is nothing to redact.
fn absent(e: std::io::Error) -> std::io::Result<()> {
    match e.kind() {
        std::io::ErrorKind::NotFound => Ok(()),
        _ => Err(e),
    }
}
