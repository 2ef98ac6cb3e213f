//! One case-run as the runner hands it to [`super::execute`]: what was decided for it
//! ([`CaseRunPlan`]), how a stage ends it early ([`Stop`]), and how each stage notes an end
//! or a file in its record.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::assert::check::Checks;
use crate::grade::JudgeSlot;
use crate::harness::Harness;
use crate::record::case_run::{Arm, TriggerMode};
use crate::record::case_run::{CaseRunRecord, Status};
use crate::suite::{Case, Skill, Suite, TriggerCase};
use crate::workspace::StageOptions;

/// What a trigger case-run needs besides the synthetic case.
#[derive(Debug, Clone)]
pub struct TriggerPlan<'a> {
    pub case: &'a TriggerCase,
    pub mode: TriggerMode,
    pub threshold: f64,
    /// Stop the agent at the decisive event (the skill under test, or a sibling, loaded):
    /// not with `--trigger-full-runs`.
    pub stop_early: bool,
    /// The trigger canary saw the skill's loads work through this harness
    /// ([`super::options::RunOptions::loads_verified`]): its call is its load.
    pub load_verified: bool,
    /// Acting steps with no load before the next decides "not fired" (`--trigger-turns`); 0:
    /// no budget.
    pub turns: u32,
}

/// What the runner decided for this case-run.
pub struct CaseRunPlan<'a> {
    pub suite: &'a Suite,
    pub case: &'a Case,
    pub run: u32,
    pub variant: Arm,
    /// Set for a trigger eval.
    pub trigger: Option<TriggerPlan<'a>>,
    /// The skill to install instead of the suite's (`--baseline-skill`).
    pub skill: Option<Skill>,
    /// Interrupt (Ctrl-C): stop the agent, record the case-run as interrupted.
    pub cancel: Option<tokio::sync::watch::Receiver<bool>>,
    pub harness: &'a dyn Harness,
    pub model: Option<String>,
    pub timeout: Duration,
    pub trust: bool,
    pub keep_workspace: bool,
    pub stage: StageOptions,
    /// How the case-run's processes are contained.
    pub sandbox: crate::sandbox::Setting,
    pub dir: PathBuf,
    /// The run folder `dir` is in (its project listings are kept there once each).
    pub run_dir: PathBuf,
    pub judge: Option<JudgeSlot>,
    pub checks: &'a Checks,
    /// Secrets out of everything recorded (see [`super::redact`]).
    pub redact: &'a super::redact::Redactor,
    /// Where the agent's retries of its model API are told as they happen.
    pub retries: Option<super::retry::Retries>,
    /// Tools granted to cases that gate them (`--allow-tools`).
    pub grants: &'a crate::suite::ToolGrants,
    /// The case also runs in another arm (a baseline, a variant).
    pub two_arms: bool,
    /// `--threshold`.
    pub threshold: Option<f64>,
}

impl CaseRunPlan<'_> {
    /// Whether `text` is the body of the skill installed (a command's or a SKILL.md's).
    pub fn skill_body_is(&self, text: &str) -> bool {
        let skill = self.skill.as_ref().or(self.suite.skill.as_ref());
        skill
            .map(|s| match s.kind {
                crate::suite::SkillKind::Dir => s.path.join("SKILL.md"),
                crate::suite::SkillKind::Command => s.path.clone(),
            })
            .and_then(|file| std::fs::read_to_string(file).ok())
            .and_then(|t| crate::suite::skill::body(&t))
            .is_some_and(|b| b.trim() == text.trim())
    }
}

/// Why a stage ended the case-run early (having recorded why in the result).
pub enum Stop {
    /// It ends here, with what is recorded.
    Finish,
    /// Ctrl-C, SIGTERM or SIGHUP stopped it.
    Interrupted,
}

impl CaseRunRecord {
    /// How the case-run ended, when not as a completed run: its status and why.
    pub(super) fn end(&mut self, status: Status, reason: impl Into<String>) {
        self.status = status;
        self.reason = Some(reason.into());
    }

    /// Writes a file of the case-run's folder, noting a failure.
    pub(super) fn write(&mut self, path: &Path, bytes: &[u8]) {
        if let Err(e) = std::fs::write(path, bytes) {
            self.unrecorded
                .push(format!("cannot write {}: {e}", path.display()));
        }
    }
}

/// The name the skill goes by in the workspace (and in `Skill` tool calls).
pub(super) fn skill_name(suite: &Suite) -> String {
    suite
        .skill
        .as_ref()
        .map(|s| s.name.clone())
        .or_else(|| suite.package.as_ref().and_then(|p| p.name.clone()))
        .unwrap_or_default()
}
