//! Grading a captured output (clauditor's captured-output mode, `assay grade <spec> --output
//! FILE`): no agent ran, so only the checks on the output apply (the others are listed as
//! skipped); the judge grades as it would a run, and `--against` adds a blind A/B comparison.

use crate::assert::check::Checks;
use crate::assert::view::CaseRunView;
use crate::judge::compare::{self, Comparison};
use crate::spec::{Case, Check, CheckTarget, Suite};

use super::{GradeInput, Graded, JudgeSlot};

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

/// What the judge is told the outputs answer: the blind-compare prompt, else the case's turns.
fn request(case: &Case) -> String {
    case.judge
        .blind_compare_prompt
        .clone()
        .unwrap_or_else(|| case.turns.join("\n\n"))
}

/// `a` against `b`, blind, by the judge in `slot`.
pub async fn compare_with(
    slot: Option<&JudgeSlot>,
    case: &Case,
    a: &str,
    b: &str,
) -> Result<Comparison, String> {
    match slot {
        Some(JudgeSlot::Ready(judge, _)) => compare::compare(judge, &request(case), a, b)
            .await
            .map_err(|e| e.to_string()),
        Some(JudgeSlot::Unavailable(why)) => Err(format!("not compared: {why}")),
        None => Err("not compared: no judge was chosen".into()),
    }
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
