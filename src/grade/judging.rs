//! The judge's part of grading a case-run: extraction (its field checks join the
//! deterministic outcomes), then the expectations, the rubric and the criteria, each asked
//! only while the judge has not failed; what it found is the [`JudgeRecord`], what it decides
//! the [`JudgeVerdict`].

use super::{JUDGE_REPLY, JudgeSlot, transcript_text};
use crate::assert::check::Checks;
use crate::assert::fields;
use crate::assert::verdict::JudgeVerdict;
use crate::assert::view::CaseRunView;
use crate::judge::extract;
use crate::judge::modes::{self, Evidence};
use crate::judge::{Judge, JudgeInfo};
use crate::record::grading::CheckOutcome;
use crate::record::grading::JudgeRecord;
use crate::suite::{Case, JudgeSpec, Suite};

/// What judging a case-run needs besides the case-run itself.
pub(super) struct Judging<'a> {
    pub suite: &'a Suite,
    pub case: &'a Case,
    pub slot: Option<&'a JudgeSlot>,
    pub checks: &'a Checks,
    /// Every output file, as collected (see [`super::GradeInput::outputs`]).
    pub outputs: &'a [(String, Option<String>)],
}

/// Extraction and the judge's modes. Extraction's field checks join `outcomes`.
pub(super) async fn judge_case(
    j: &Judging<'_>,
    completed: bool,
    view: &CaseRunView,
    artifacts: Vec<(String, String)>,
    outcomes: &mut Vec<CheckOutcome>,
) -> (Option<JudgeRecord>, JudgeVerdict) {
    let (case, spec) = (j.case, &j.case.judge);
    let mut verdict = JudgeVerdict {
        items: items(case),
        passed: None,
        reasons: Vec::new(),
    };
    if verdict.items == 0 {
        return (None, verdict);
    }
    let (judge, info) = match ready(j.slot, completed) {
        Ok(ready) => ready,
        Err(why) => {
            verdict.reasons.push(why);
            return (None, verdict);
        }
    };
    let evidence = evidence(j, view, artifacts);
    let mut record = record_for(info);
    if !case.extraction.is_empty() {
        match extract::extract(judge, &view.output, &case.extraction).await {
            Ok(x) => {
                // Field outcomes are deterministic checks: they decide through `outcomes`.
                outcomes.extend(fields::check(&case.extraction, &x, j.checks.formats()));
                record.extraction = Some(x);
            }
            Err(e) => failed(&mut record, "extraction: ", e),
        }
    }
    let mut asked = Asked {
        judge,
        evidence: &evidence,
        record: &mut record,
        reasons: &mut verdict.reasons,
    };
    let all_passed = asked.expectations(spec).await
        & asked.rubric(spec, j.suite).await
        & asked.criteria(spec).await;
    match &record.error {
        Some(e) => verdict.reasons.push(format!("the judge failed: {e}")),
        None => verdict.passed = Some(all_passed),
    }
    (Some(record), verdict)
}

/// How many things the judge is asked of the case: extraction, each expectation and
/// criterion of the rubric, the criteria.
fn items(case: &Case) -> usize {
    let spec = &case.judge;
    usize::from(!case.extraction.is_empty())
        + spec.expectations.len()
        + spec.rubric.len()
        + usize::from(spec.criteria.is_some())
}

/// The judge to ask, or why none is asked.
fn ready(slot: Option<&JudgeSlot>, completed: bool) -> Result<(&Judge, &JudgeInfo), String> {
    if !completed {
        return Err("not judged: the agent did not complete".into());
    }
    match slot {
        Some(JudgeSlot::Ready(j, i)) => Ok((j, i)),
        Some(JudgeSlot::Unavailable(why)) => Err(why.clone()),
        None => Err("no judge was chosen".into()),
    }
}

/// What the judge is shown: the prompt, the expected output, the output (with several
/// output files, each headed by its path), the transcript and the artifacts.
fn evidence(j: &Judging<'_>, view: &CaseRunView, artifacts: Vec<(String, String)>) -> Evidence {
    let output = if j.outputs.len() > 1 {
        j.outputs
            .iter()
            .map(|(p, t)| {
                format!(
                    "--- {p} ---\n{}\n",
                    t.as_deref().unwrap_or("(cannot be read)")
                )
            })
            .collect()
    } else {
        view.output.to_string()
    };
    Evidence {
        turns: j.case.turns.clone(),
        expected_output: j.case.expected_output.clone(),
        output,
        transcript: transcript_text(&view.events),
        artifacts,
    }
}

/// An empty record of what this judge found.
fn record_for(info: &JudgeInfo) -> JudgeRecord {
    JudgeRecord {
        provider: info.provider.clone(),
        model: info.model.clone(),
        chosen_by: info.chosen_by.clone(),
        extraction: None,
        expectations: None,
        rubric: None,
        criteria: None,
        error: None,
        unusable_answers: Vec::new(),
    }
}

/// The judge's modes, asked in turn: each records what it found and the reasons it failed,
/// and says whether it passed (true when not asked).
struct Asked<'a> {
    judge: &'a Judge,
    evidence: &'a Evidence,
    record: &'a mut JudgeRecord,
    reasons: &'a mut Vec<String>,
}

impl Asked<'_> {
    async fn expectations(&mut self, spec: &JudgeSpec) -> bool {
        if spec.expectations.is_empty() || self.record.error.is_some() {
            return true;
        }
        match modes::expectations(self.judge, self.evidence, &spec.expectations).await {
            Ok(g) => {
                for e in g.expectations.iter().filter(|e| !e.passed) {
                    self.reasons
                        .push(format!("expectation failed: {} ({})", e.text, e.evidence));
                }
                let passed = g.summary.failed == 0;
                self.record.expectations = Some(g);
                passed
            }
            Err(e) => {
                failed(self.record, "", e);
                true
            }
        }
    }

    async fn rubric(&mut self, spec: &JudgeSpec, suite: &Suite) -> bool {
        if spec.rubric.is_empty() || self.record.error.is_some() {
            return true;
        }
        // No `grade_thresholds`: the rubric is graded and recorded, and gates nothing.
        let thresholds = suite.defaults.thresholds;
        match voted(self.judge, self.evidence, spec, thresholds).await {
            Ok(g) => {
                if let (false, Some(t)) = (g.passed, g.thresholds) {
                    self.reasons.push(format!(
                        "rubric: pass rate {:.2} (at least {:.2} wanted), mean score {:.2} (at least {:.2} wanted)",
                        g.pass_rate, t.min_pass_rate, g.mean_score, t.min_mean_score
                    ));
                }
                let passed = g.passed;
                self.record.rubric = Some(g);
                passed
            }
            Err(e) => {
                failed(self.record, "", e);
                true
            }
        }
    }

    async fn criteria(&mut self, spec: &JudgeSpec) -> bool {
        let Some(c) = spec.criteria.as_deref() else {
            return true;
        };
        if self.record.error.is_some() {
            return true;
        }
        match modes::criteria(self.judge, self.evidence, c).await {
            Ok(g) => {
                if !g.pass {
                    self.reasons.push(format!("judge: {}", g.reasoning));
                }
                let passed = g.pass;
                self.record.criteria = Some(g);
                passed
            }
            Err(e) => {
                failed(self.record, "", e);
                true
            }
        }
    }
}

/// A judge failure: its message in the record; an answer that could not be used is kept in
/// [`JUDGE_REPLY`], and the message names it.
fn failed(record: &mut JudgeRecord, prefix: &str, e: modes::GradeError) {
    let kept = match &e {
        modes::GradeError::Invalid { answers, .. } => {
            record.unusable_answers = answers.clone();
            format!(" (its answers are in {JUDGE_REPLY})")
        }
        modes::GradeError::Judge(_) => String::new(),
    };
    record.error = Some(format!("{prefix}{e}{kept}"));
}

/// The rubric graded `spec.rubric_votes` times (at least once), one after another; with more
/// than one vote each criterion passes by a majority, its score the votes' mean, its votes
/// recorded. A vote that fails fails the whole.
async fn voted(
    judge: &crate::judge::Judge,
    ev: &modes::Evidence,
    spec: &JudgeSpec,
    thresholds: Option<crate::record::grading::Thresholds>,
) -> Result<crate::record::grading::RubricGrade, modes::GradeError> {
    let n = spec.rubric_votes.max(1);
    let mut first = modes::rubric(judge, ev, &spec.rubric, thresholds).await?;
    if n == 1 {
        return Ok(first);
    }
    let mut all = vec![first.criteria.clone()];
    for _ in 1..n {
        all.push(
            modes::rubric(judge, ev, &spec.rubric, thresholds)
                .await?
                .criteria,
        );
    }
    for (i, c) in first.criteria.iter_mut().enumerate() {
        c.votes = all
            .iter()
            .map(|v| v.get(i).is_some_and(|x| x.passed))
            .collect();
        let yes = c.votes.iter().filter(|v| **v).count();
        c.passed = yes * 2 > n as usize;
        c.score = all
            .iter()
            .filter_map(|v| v.get(i))
            .map(|x| x.score)
            .sum::<f64>()
            / n as f64;
    }
    let k = first.criteria.len().max(1) as f64;
    first.pass_rate = first.criteria.iter().filter(|c| c.passed).count() as f64 / k;
    first.mean_score = first.criteria.iter().map(|c| c.score).sum::<f64>() / k;
    Ok(first)
}
