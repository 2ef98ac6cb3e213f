//! Which recorded case-run `assay init --from-run` makes a new case of: a run folder's
//! case-runs of artifact cases with the skill (not triggers, not baselines), the one it takes
//! for a case (the first a reviewer judged in feedback.json, else the first), and the
//! [`RunSeed`] made of it with the case's own prompt from its suite as it is now.

use std::path::{Path, PathBuf};

use super::write::RunSeed;
use crate::record::CaseRunRecord;
use crate::record::case_run::{Arm, Kind};
use crate::record::feedback::{FeedbackFile, FeedbackItem, Review};
use crate::suite::Suite;

/// The most of a reviewer's note written into a case (characters).
const MAX_NOTE: usize = 2000;

/// A recorded case-run with the skill, and its folder.
pub struct SkillRun {
    pub dir: PathBuf,
    pub record: CaseRunRecord,
}

/// A run folder's case-runs of artifact cases with the skill, by suite, case and run.
pub fn skill_case_runs(run_dir: &Path) -> Vec<SkillRun> {
    let mut found: Vec<SkillRun> = crate::record::folder::case_run_dirs(run_dir)
        .into_iter()
        .filter_map(|dir| {
            let record = crate::record::read_case_run(&dir).ok()?;
            Some(SkillRun { dir, record })
        })
        .filter(|r| r.record.kind == Kind::Case && r.record.variant == Arm::Skill)
        .collect();
    found.sort_by(|a, b| {
        let (a, b) = (&a.record, &b.record);
        (&a.suite, &a.case, a.run).cmp(&(&b.suite, &b.case, b.run))
    });
    found
}

impl SkillRun {
    /// What a reviewer said of it in feedback.json, if anything.
    pub fn review<'f>(&self, feedback: Option<&'f FeedbackFile>) -> Option<&'f FeedbackItem> {
        let r = &self.record;
        feedback?.find(&r.suite, &r.case, r.run, Arm::Skill)
    }

    /// The reviewer's verdict and note (cut at [`MAX_NOTE`]), as a new case carries them.
    pub fn verdict(&self, feedback: Option<&FeedbackFile>) -> Option<(Review, String)> {
        self.review(feedback)
            .map(|i| (i.verdict, crate::text::shorten(i.note.trim(), MAX_NOTE)))
    }
}

/// The case-run of `case` a new case is made of: the first one reviewed, else the first.
pub fn pick(run_dir: &Path, case: &str, feedback: Option<&FeedbackFile>) -> Option<SkillRun> {
    let found: Vec<SkillRun> = skill_case_runs(run_dir)
        .into_iter()
        .filter(|r| r.record.case == case)
        .collect();
    let at = found
        .iter()
        .position(|r| r.review(feedback).is_some())
        .unwrap_or(0);
    found.into_iter().nth(at)
}

/// The suite the case-run's case is in now and the case's own first prompt (not the
/// expanded one that was sent), if it still has that case.
pub fn suite_and_prompt<'s>(suites: &'s [Suite], r: &CaseRunRecord) -> Option<(&'s Suite, String)> {
    let s = suites.iter().find(|s| s.id == r.suite)?;
    let c = s.cases.iter().find(|c| c.id == r.case)?;
    Some((s, c.turns.first()?.clone()))
}

/// The new case of `suite`'s file at `source` made of `seed`: the file to write and its
/// whole new text.
pub fn case_from_run(
    suite: &Suite,
    source: &Path,
    seed: &RunSeed,
) -> Result<(PathBuf, String), String> {
    match super::write::for_suite(suite) {
        Some(dialect) => dialect.case_from_run(source, seed),
        None => Err(format!("assay writes no case into {}", source.display())),
    }
}
