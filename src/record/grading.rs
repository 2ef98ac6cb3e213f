//! How a case-run was graded: each check's outcome, what the judge said, and the verdict.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The result of one check on one case-run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckOutcome {
    pub id: String,
    pub kind: String,
    pub passed: bool,
    pub message: String,
    /// The matching excerpt, or why nothing matched.
    pub evidence: Option<String>,
    pub weight: f64,
    pub negated: bool,
    /// The check could not be evaluated (it then counts as failed).
    pub error: Option<String>,
    /// What a plugin check wrote to stderr.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// The plugin that provides the type (`wasm:<name>`, or `native:<name> (unsandboxed)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

impl CheckOutcome {
    /// The check as one of skill-creator's graded expectations: `id (kind)`, and its evidence
    /// (else its message).
    pub fn as_expectation(&self) -> ExpectationResult {
        ExpectationResult {
            text: format!("{} ({})", self.id, self.kind),
            passed: self.passed,
            evidence: self
                .evidence
                .clone()
                .unwrap_or_else(|| self.message.clone()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Pass,
    Fail,
    /// Some judge items could not be graded (no judge, or the judge failed): never a pass.
    NotGraded,
}

/// The grading of one case-run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grade {
    pub verdict: Verdict,
    #[serde(default)]
    pub checks_passed: usize,
    #[serde(default)]
    pub checks_total: usize,
    /// Weighted share of checks passed, 0–1 (1 with no checks).
    #[serde(default)]
    pub score: f64,
    /// Why it is not a pass.
    #[serde(default)]
    pub reasons: Vec<String>,
}

/// The judge's grading of one case-run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JudgeRecord {
    pub provider: String,
    pub model: String,
    pub chosen_by: String,
    pub extraction: Option<Extraction>,
    pub expectations: Option<ExpectationsGrade>,
    pub rubric: Option<RubricGrade>,
    pub criteria: Option<CriteriaGrade>,
    /// Why some items could not be graded (the judge failed): they are then not graded.
    pub error: Option<String>,
    /// The judge's answers it could not use (the answer and the one to the repair request),
    /// kept in the case-run's `judge-reply.txt` beside `grading.json`, never in the records.
    #[serde(skip)]
    pub unusable_answers: Vec<String>,
}

/// What the judge extracted, in the spec's order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Extraction {
    pub sections: Vec<ExtractedSection>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractedSection {
    pub name: String,
    pub tiers: Vec<ExtractedTier>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractedTier {
    pub label: String,
    /// One map per entry: field name → value (`None`: absent from the output).
    pub entries: Vec<BTreeMap<String, Option<String>>>,
}

/// skill-creator's `grading.json` shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectationsGrade {
    pub expectations: Vec<ExpectationResult>,
    pub summary: ExpectationsSummary,
    pub eval_feedback: Feedback,
}

/// One graded expectation: skill-creator's `expectations[]` entry, and agentskills.io's
/// `assertion_results[]` entry ("Evaluating skills"), which has the same three fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectationResult {
    pub text: String,
    pub passed: bool,
    pub evidence: String,
}

/// A grading's `summary`, as skill-creator and agentskills.io both define it: counts of the
/// graded expectations and the share passed (0 when there are none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectationsSummary {
    pub passed: usize,
    pub failed: usize,
    pub total: usize,
    pub pass_rate: f64,
}

impl ExpectationsSummary {
    /// The summary of `results`.
    pub fn of(results: &[ExpectationResult]) -> Self {
        let passed = results.iter().filter(|e| e.passed).count();
        let total = results.len();
        ExpectationsSummary {
            passed,
            failed: total - passed,
            total,
            pass_rate: if total == 0 {
                0.0
            } else {
                passed as f64 / total as f64
            },
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Feedback {
    #[serde(default)]
    pub suggestions: Vec<Suggestion>,
    #[serde(default)]
    pub overall: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    pub assertion: String,
    pub reason: String,
}

/// clauditor's rubric result, one per criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionResult {
    pub id: String,
    pub criterion: String,
    pub passed: bool,
    pub score: f64,
    pub evidence: String,
    pub reasoning: String,
    /// Each vote, when the judge graded the rubric more than once (the majority decides).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub votes: Vec<bool>,
}

/// clauditor `grade_thresholds`: the rubric gates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    pub min_pass_rate: f64,
    pub min_mean_score: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RubricGrade {
    pub criteria: Vec<CriterionResult>,
    pub pass_rate: f64,
    pub mean_score: f64,
    /// The gates, when the suite sets any (clauditor `grade_thresholds`); without them the
    /// rubric is graded and recorded but gates nothing (`passed` is then true).
    #[serde(default)]
    pub thresholds: Option<Thresholds>,
    pub passed: bool,
}

/// Skillet's and UAAPS's single verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriteriaGrade {
    pub pass: bool,
    pub reasoning: String,
}
