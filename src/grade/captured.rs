//! Grading a captured output (clauditor's captured-output mode, `assay grade <spec> --output
//! FILE`): the case it answers ([`pick_case`]); no agent ran, so only the checks on the output
//! apply (the others are listed as skipped); the judge grades as it would a run, and
//! `--against` adds a blind A/B comparison ([`super::ab`]). What `--json` prints is
//! [`CapturedJson`].

use std::path::Path;

use serde::Serialize;

use super::ab::{ComparisonJson, compare_with};
use super::{GradeInput, Graded, JudgeSlot};
use crate::assert::check::Checks;
use crate::assert::view::CaseRunView;
use crate::judge::compare::Comparison;
use crate::suite::{Case, Check, CheckTarget, Suite};

/// A captured output, graded.
pub struct Captured {
    pub graded: Graded,
    /// The case's checks that need a run (a transcript, a workspace, a process).
    pub skipped: Vec<Check>,
    /// The blind comparison with the other output, when one was given.
    pub comparison: Option<Result<Comparison, String>>,
}

/// Whether grading the case asks a judge (its judge items or extraction).
pub fn needs_judge(case: &Case) -> bool {
    !case.judge.is_empty() || !case.extraction.is_empty()
}

/// Grades `output` as the case's answer, and compares it with `against` when given.
pub async fn grade(
    suite: &Suite,
    case: &Case,
    output: String,
    against: Option<&str>,
    checks: &Checks,
    slot: Option<&JudgeSlot>,
) -> Captured {
    // A captured output has no transcript, workspace or process: only output checks apply.
    let mut graded_case = case.clone();
    let (kept, skipped): (Vec<_>, Vec<_>) = case
        .checks
        .iter()
        .cloned()
        .partition(|c| c.target == CheckTarget::Output);
    graded_case.checks = kept;
    let output: crate::assert::shared_text::SharedText = output.into();
    let view = CaseRunView {
        final_message: output.clone(),
        stdout: output.clone(),
        output,
        ..CaseRunView::default()
    };
    let input = GradeInput {
        completed: true,
        reason: None,
        view,
        artifacts: Vec::new(),
        outputs: Vec::new(),
        output_cut: None,
        unscored: Vec::new(),
    };
    let graded = super::grade(suite, &graded_case, input, checks, slot).await;
    let comparison = match against {
        Some(b) => Some(compare_with(slot, case, &graded.view.output, b).await),
        None => None,
    };
    Captured {
        graded,
        skipped,
        comparison,
    }
}

/// The case to grade: the only one, or the one `--case` names (`case` or `suite/case`).
pub fn pick_case<'a>(
    suites: &'a [Suite],
    wanted: Option<&str>,
) -> Result<(&'a Suite, &'a Case), String> {
    let all: Vec<(&Suite, &Case)> = suites
        .iter()
        .flat_map(|s| s.cases.iter().map(move |c| (s, c)))
        .collect();
    let names = || {
        all.iter()
            .map(|(s, c)| format!("{}/{}", s.id, c.id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match wanted {
        Some(w) => {
            let found: Vec<_> = all
                .iter()
                .filter(|(s, c)| c.id == w || format!("{}/{}", s.id, c.id) == w)
                .collect();
            match found.as_slice() {
                [one] => Ok(**one),
                [] => Err(format!("no case `{w}`; the cases are: {}", names())),
                _ => Err(format!(
                    "`{w}` names several cases; use suite/case: {}",
                    names()
                )),
            }
        }
        None => match all.as_slice() {
            [one] => Ok(*one),
            [] => Err("no cases found to grade".into()),
            _ => Err(format!(
                "the spec has {} cases; choose one with --case: {}",
                all.len(),
                names()
            )),
        },
    }
}

/// `assay grade <spec> --output <file> --json`.
#[derive(Serialize)]
pub struct CapturedJson<'a> {
    pub suite: &'a str,
    pub case: &'a str,
    /// The captured output's file, as given.
    pub output: &'a Path,
    pub grading: serde_json::Value,
    pub skipped_checks: Vec<SkippedCheckJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<ComparisonJson<'a>>,
}

/// A check a captured output cannot be graded by.
#[derive(Serialize)]
pub struct SkippedCheckJson<'a> {
    pub id: &'a str,
    pub kind: &'a str,
    pub reason: &'static str,
}

impl Captured {
    /// The JSON of the case's captured output (`output`) graded.
    pub fn json<'a>(
        &'a self,
        suite: &'a Suite,
        case: &'a Case,
        output: &'a Path,
    ) -> CapturedJson<'a> {
        CapturedJson {
            suite: &suite.id,
            case: &case.id,
            output,
            grading: self.graded.grading_json(),
            skipped_checks: self
                .skipped
                .iter()
                .map(|c| SkippedCheckJson {
                    id: &c.id,
                    kind: &c.kind,
                    reason: "needs a run (transcript, workspace or process), not a captured output",
                })
                .collect(),
            comparison: self.comparison.as_ref().map(ComparisonJson::of),
        }
    }
}
