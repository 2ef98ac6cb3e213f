//! The grade stage: a collected case-run becomes a verdict, the same way for `assay run` and
//! `assay grade` (which re-grades a run folder through [`regrading`], reading it back through
//! [`regrade`], and grades a captured output through [`captured`]): deterministic
//! checks first, then extraction (clauditor L2), then the judge's modes; the verdict and
//! score come from the checks and the thresholds.

pub mod ab;
pub mod captured;
mod judging;
pub mod regrade;
pub mod regrading;
pub mod trigger;
pub mod weighted;

use std::path::Path;
use std::sync::Arc;

use crate::assert::check::Checks;
use crate::assert::view::CaseRunView;
use crate::harness::Event;
use crate::judge::{Judge, JudgeInfo};
use crate::record;
use crate::record::grading::CheckOutcome;
use crate::suite::{Case, Suite};
use crate::{assert::verdict, record::grading::Grade};

/// The judge a case-run may use, or why it has none.
#[derive(Debug, Clone)]
pub enum JudgeSlot {
    Ready(Arc<Judge>, JudgeInfo),
    Unavailable(String),
}

impl JudgeSlot {
    /// The judge as run.json's `judges` lists it.
    pub fn entry(&self) -> crate::record::run::JudgeEntry {
        match self {
            JudgeSlot::Ready(_, info) => crate::record::run::JudgeEntry {
                provider: Some(info.provider.clone()),
                model: Some(info.model.clone()),
                chosen_by: Some(info.chosen_by.clone()),
                unavailable: None,
            },
            JudgeSlot::Unavailable(why) => crate::record::run::JudgeEntry {
                unavailable: Some(why.clone()),
                ..Default::default()
            },
        }
    }
}

use crate::record::grading::JudgeRecord;
use crate::record::layout;

/// What grading needs of a finished case-run.
pub struct GradeInput {
    /// The agent ran to its end; otherwise nothing is judged.
    pub completed: bool,
    /// Why it did not complete.
    pub reason: Option<String>,
    pub view: CaseRunView,
    /// Created or changed files with their text, for the judge.
    pub artifacts: Vec<(String, String)>,
    /// Every output file (clauditor `output_files`, or `output_file`), as collected, path and
    /// text (`None`: it could not be read); the first is the case's output.
    pub outputs: Vec<(String, Option<String>)>,
    /// Why the checks saw only part of the output (it was cut at assay's bound), when it was:
    /// such a case-run is never a pass.
    pub output_cut: Option<String>,
    /// Checks and judge items shown but not scored (with-only ones beside a baseline arm).
    pub unscored: Vec<String>,
}

/// Why a recorded case-run's checks saw only part of its output, when they did.
pub fn output_cut(r: &record::CaseRunRecord) -> Option<String> {
    if let Some(first) = r.workspace_unread.first() {
        return Some(format!(
            "the workspace could not be read whole ({first}{}): the checks saw only part of it, so it is not graded as a pass",
            match r.workspace_unread.len() {
                1 => String::new(),
                n => format!(", and {} more", n - 1),
            }
        ));
    }
    r.output_truncated.then(|| {
        format!(
            "the agent's output was cut ({} bytes written, {} MiB kept at most, and no line over {} MiB): the checks saw only part of it, so it is not graded as a pass",
            r.stdout_bytes,
            crate::process::MAX_STDOUT >> 20,
            crate::process::MAX_LINE >> 20
        )
    })
}

/// A graded case-run.
#[derive(Debug, Clone)]
pub struct Graded {
    /// Deterministic outcomes: the case's checks, then extraction's field checks.
    pub checks: Vec<CheckOutcome>,
    pub judge: Option<JudgeRecord>,
    pub grade: Grade,
    pub view: CaseRunView,
    /// The checks saw only part of the output (see [`GradeInput::output_cut`]): the result is
    /// not fully delivered (exit 3), whatever the verdict.
    pub output_cut: bool,
}

impl Graded {
    /// Its grading as JSON (see [`grading_json`]).
    pub fn grading_json(&self) -> serde_json::Value {
        grading_json(&self.checks, self.judge.as_ref(), Some(&self.grade))
    }
}

/// Grades one case-run.
pub async fn grade(
    suite: &Suite,
    case: &Case,
    input: GradeInput,
    checks: &Checks,
    judge: Option<&JudgeSlot>,
) -> Graded {
    // Checks may block (network, plugins): off the executor.
    let (list, registry, view) = (case.checks.clone(), checks.clone(), input.view);
    let outputs = input.outputs;
    let (mut outcomes, view, outputs) = match tokio::task::spawn_blocking(move || {
        let view = Arc::new(view);
        let mut o = registry.run(&list, &view);
        // Several output files: each is checked, not only the first.
        if outputs.len() > 1 {
            each_output_file(&registry, &list, &view, &outputs, &mut o);
        }
        // Plugins drop their handles when their call ends, so this is the only one left.
        let view = Arc::try_unwrap(view).unwrap_or_else(|v| (*v).clone());
        (o, view, outputs)
    })
    .await
    {
        Ok(r) => r,
        Err(e) => {
            let view = CaseRunView::default();
            let failed = case
                .checks
                .iter()
                .map(|c| crate::assert::builtin::outcome(c, Err(format!("the check failed: {e}"))))
                .collect();
            (failed, view, Vec::new())
        }
    };
    let judging = judging::Judging {
        suite,
        case,
        slot: judge,
        checks,
        outputs: &outputs,
    };
    let (record, judged) = judging::judge_case(
        &judging,
        input.completed,
        &view,
        input.artifacts,
        &mut outcomes,
    )
    .await;
    let mut grade = verdict::grade(input.completed, input.reason.as_deref(), &outcomes, &judged);
    if suite.policies.pass_threshold.is_some() {
        grade = weighted::grade(
            case,
            &outcomes,
            record.as_ref(),
            &input.unscored,
            input.completed,
            grade,
        );
    }
    let output_cut = input.output_cut.is_some();
    if let Some(why) = input.output_cut
        && grade.verdict == crate::record::grading::Verdict::Pass
    {
        // What was cut could have made a check fail (a `not_contains`, a length limit).
        grade.verdict = crate::record::grading::Verdict::NotGraded;
        grade.reasons.insert(0, why);
    }
    Graded {
        output_cut,
        checks: outcomes,
        judge: record,
        grade,
        view,
    }
}

/// Evaluates the output checks on every output file (the first was the output already): a
/// check passes when it passes on each, and otherwise says on which it failed first.
fn each_output_file(
    registry: &Checks,
    list: &[crate::suite::Check],
    view: &Arc<CaseRunView>,
    outputs: &[(String, Option<String>)],
    outcomes: &mut [CheckOutcome],
) {
    let on_output: Vec<usize> = (0..list.len())
        .filter(|&i| list[i].target == crate::suite::CheckTarget::Output)
        .collect();
    if on_output.is_empty() {
        return;
    }
    let checks: Vec<crate::suite::Check> = on_output.iter().map(|&i| list[i].clone()).collect();
    // Per check: the first failing file's outcome, or the first file's when all pass.
    let mut merged: Vec<Option<CheckOutcome>> = vec![None; checks.len()];
    // One copy of the view, its output swapped per file (a copy per file would cost the
    // whole transcript each time).
    let mut per_file = Arc::new((**view).clone());
    for (path, text) in outputs {
        let results: Vec<CheckOutcome> = match text {
            Some(text) => {
                Arc::make_mut(&mut per_file).output = text.as_str().into();
                registry.run(&checks, &per_file)
            }
            None => checks
                .iter()
                .map(|c| {
                    let why = "the output file cannot be read (a symlink, not UTF-8, too large, or past the output budget)";
                    crate::assert::builtin::outcome(c, Err(why.into()))
                })
                .collect(),
        };
        for (slot, mut r) in merged.iter_mut().zip(results) {
            if slot.as_ref().is_some_and(|s| !s.passed) {
                continue;
            }
            if !r.passed {
                r.message = format!("{path}: {}", r.message);
                *slot = Some(r);
            } else if slot.is_none() {
                *slot = Some(r);
            }
        }
    }
    for (k, &i) in on_output.iter().enumerate() {
        if let Some(mut r) = merged[k].take() {
            if r.passed {
                r.message = format!("{} (in each of {} output files)", r.message, outputs.len());
            }
            r.provider = outcomes[i].provider.clone();
            outcomes[i] = r;
        }
    }
}

/// A compact, bounded account of the transcript for the judge.
pub fn transcript_text(events: &[Event]) -> String {
    let cut = crate::text::shorten;
    let mut out = String::new();
    for e in events {
        let line = match e {
            Event::Message { text } => format!("assistant: {}", cut(text, 2000)),
            Event::ToolCall { name, input, .. } => {
                format!("tool call {name}: {}", cut(&input.to_string(), 500))
            }
            Event::ToolResult {
                output, is_error, ..
            } => {
                format!(
                    "tool result{}: {}",
                    if *is_error { " (error)" } else { "" },
                    cut(output, 500)
                )
            }
            Event::SkillInvoked { name, .. } => format!("skill invoked: {name}"),
            Event::SkillFailed { name, error } => {
                format!("skill load failed: {name}: {}", cut(error, 500))
            }
            Event::AgentStarted { name } => format!("sub-agent started: {name}"),
            Event::HookRan {
                event, exit_code, ..
            } => format!(
                "hook ran: {event} (exit {})",
                exit_code.map_or("?".to_string(), |c| c.to_string())
            ),
            Event::FileChange { path, kind } => format!("file {kind}: {path}"),
            Event::Output { text } => format!("stdout: {}", cut(text, 500)),
            Event::Error { message, .. } => format!("error: {}", cut(message, 500)),
            Event::SessionStarted { .. } | Event::Reasoning { .. } | Event::Retrying { .. } => {
                continue;
            }
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The grading as JSON: skill-creator's `grading.json` shape (`expectations`: the judge's,
/// then every check as one; `summary` over them all; `eval_feedback`) and agentskills.io's
/// ("Evaluating skills": `assertion_results`, the same list of `text`, `passed`, `evidence`
/// under the name its guide gives it; its `summary` is skill-creator's, field for field), plus
/// the checks, extraction, the rubric, the criteria verdict and the grade.
pub fn grading_json(
    checks: &[CheckOutcome],
    judge: Option<&JudgeRecord>,
    grade: Option<&Grade>,
) -> serde_json::Value {
    let exp = judge.and_then(|j| j.expectations.as_ref());
    let mut expectations: Vec<record::grading::ExpectationResult> =
        exp.map(|e| e.expectations.clone()).unwrap_or_default();
    expectations.extend(checks.iter().map(CheckOutcome::as_expectation));
    let summary = record::grading::ExpectationsSummary::of(&expectations);
    serde_json::json!({
        "expectations": expectations,
        "assertion_results": expectations,
        "summary": summary,
        "eval_feedback": exp.map(|e| &e.eval_feedback),
        "checks": checks,
        "extraction": judge.and_then(|j| j.extraction.as_ref()),
        "rubric": judge.and_then(|j| j.rubric.as_ref()),
        "criteria": judge.and_then(|j| j.criteria.as_ref()),
        "judge": judge.map(|j| serde_json::json!({"provider": j.provider, "model": j.model, "error": j.error})),
        "grade": grade,
    })
}

/// Writes `grading.json` into a case-run folder.
pub fn write_grading(
    dir: &Path,
    checks: &[CheckOutcome],
    judge: Option<&JudgeRecord>,
    grade: Option<&Grade>,
) -> std::io::Result<()> {
    record::write_json(
        &dir.join(layout::GRADING_JSON),
        &grading_json(checks, judge, grade),
    )?;
    match judge.filter(|j| !j.unusable_answers.is_empty()) {
        Some(j) => record::write_atomic(
            &dir.join(JUDGE_REPLY),
            unusable_answers(&j.unusable_answers).as_bytes(),
        ),
        // A later grading that used the judge's answer leaves no stale one behind.
        None => match std::fs::remove_file(dir.join(JUDGE_REPLY)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
    }
}

/// Where a case-run keeps the judge's answers that could not be used (redacted with the rest
/// of its folder, each cut at [`MAX_ANSWER`] bytes).
pub const JUDGE_REPLY: &str = layout::JUDGE_REPLY_TXT;

/// The most of one unusable answer kept.
const MAX_ANSWER: usize = 64 << 10;

/// The unusable answers as `judge-reply.txt` holds them.
fn unusable_answers(answers: &[String]) -> String {
    let heads = ["the judge's answer", "its answer to the repair request"];
    let mut out = String::new();
    for (i, a) in answers.iter().enumerate() {
        let head = heads.get(i).copied().unwrap_or("another answer");
        let cut = crate::text::cut_bytes(a.clone(), MAX_ANSWER);
        out.push_str(&format!("--- {head} ({} bytes) ---\n{cut}\n", a.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(id: &str, passed: bool) -> CheckOutcome {
        CheckOutcome {
            id: id.into(),
            kind: "contains".into(),
            passed,
            message: format!("{id} message"),
            evidence: Some(format!("{id} evidence")),
            weight: 1.0,
            negated: false,
            error: None,
            log: None,
            provider: None,
        }
    }

    #[test]
    fn grading_json_is_skill_creators_and_agentskills_at_once() {
        let g = grading_json(&[check("a", true), check("b", false)], None, None);
        assert_eq!(g["assertion_results"], g["expectations"]);
        assert_eq!(
            g["assertion_results"][1],
            serde_json::json!({"text": "b (contains)", "passed": false, "evidence": "b evidence"})
        );
        assert_eq!(
            g["summary"],
            serde_json::json!({"passed": 1, "failed": 1, "total": 2, "pass_rate": 0.5})
        );
        // Nothing graded: an empty list and a pass rate of 0, as both guides' readers expect.
        let g = grading_json(&[], None, None);
        assert_eq!(g["assertion_results"], serde_json::json!([]));
        assert_eq!(g["summary"]["pass_rate"], 0.0);
    }
}
