//! Reading a past run folder back for `assay grade <run-dir>`: each case-run's output,
//! transcript, file listing and artifacts become the [`CaseRunView`] its checks saw, so checks
//! and the judge can grade again without re-running any agent.
//!
//! What a run folder keeps is what re-grading can see: file checks read the artifacts (files
//! the agent created or changed); the contents of files it left untouched are not kept, so a
//! check reading one is "not evaluated" on re-grade.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::assert::shared_text::SharedText;
use crate::assert::view::CaseRunView;
use crate::grade::{self, Graded};
use crate::harness::Event;
use crate::record::changes::ChangeKind;
use crate::record::{self, CaseRunRecord};
use crate::suite::Case;

/// The most of one artifact's text the judge is given again (what a run copies, at most).
const MAX_ARTIFACT_TEXT: u64 = 16 << 20;

/// One recorded case-run.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub dir: PathBuf,
    /// The project listings of the run folder it is in (shared by its case-runs).
    pub listings: Arc<record::files::Listings>,
    /// `result.json` as recorded.
    pub result: CaseRunRecord,
}

use crate::record::folder::ReadError;
use crate::record::layout;

/// Every case-run recorded in a run folder, in folder order.
pub fn read_run(dir: &Path) -> Result<Vec<Recorded>, ReadError> {
    record::read_run(dir)?;
    let listings = Arc::new(record::files::Listings::new(dir));
    record::case_run_dirs(dir)
        .into_iter()
        .map(|dir| {
            Ok(Recorded {
                result: record::read_case_run(&dir)?,
                dir,
                listings: listings.clone(),
            })
        })
        .collect()
}

/// Where the suites of these case-runs were read from, each once, sorted.
pub fn suite_sources(recorded: &[Recorded]) -> Vec<PathBuf> {
    let mut sources: Vec<PathBuf> = recorded
        .iter()
        .map(|r| r.result.suite_source.clone())
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    sources.sort();
    sources.dedup();
    sources
}

impl Recorded {
    /// What the grade stage is given to grade it again: the view rebuilt, the artifacts, the
    /// output files as recorded, and whether its output was cut (a cut output stays cut:
    /// re-grading never makes it a pass).
    pub fn input(&self, case: &Case) -> grade::GradeInput {
        let r = &self.result;
        let (view, unlisted) = self.view_of(case);
        grade::GradeInput {
            completed: r.status == record::Status::Completed,
            reason: r.reason.clone(),
            view,
            artifacts: self.artifacts(),
            outputs: r
                .output_files
                .iter()
                .map(|(p, t)| (p.clone(), Some(t.clone())))
                .collect(),
            output_cut: grade::output_cut(r).or(unlisted),
            unscored: Vec::new(),
        }
    }

    /// The view checks saw, rebuilt from the folder.
    pub fn view(&self, case: &Case) -> CaseRunView {
        self.view_of(case).0
    }

    /// The view, and why its file list lacks the project's files when it does (a case-run so
    /// seen is never graded as a pass).
    fn view_of(&self, case: &Case) -> (CaseRunView, Option<String>) {
        let r = &self.result;
        let read = |name: &str| std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        let events: Vec<Event> = read(layout::TRANSCRIPT_JSONL)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let output = SharedText::from(read(layout::OUTPUT_TXT));
        // A plain program's stdout kept once, as its output (and its final message).
        let kept_once = r.stdout_in.is_some();
        let stdout = match kept_once {
            true => output.clone(),
            false => events
                .iter()
                .filter_map(|e| match e {
                    Event::Output { text } => Some(format!("{text}\n")),
                    _ => None,
                })
                .collect::<String>()
                .into(),
        };
        let turns = &r.turns;
        let (files, unlisted) = match record::files::read(&self.dir, &self.listings) {
            Ok(files) => (files, None),
            Err(e) => (
                Default::default(),
                Some(format!(
                    "the workspace's files cannot be listed again ({e}): the checks saw only part of them, so it is not graded as a pass"
                )),
            ),
        };
        let view = CaseRunView {
            final_message: match kept_once {
                true => output.clone(),
                false => turns
                    .last()
                    .and_then(|t| t.final_message.as_deref())
                    .unwrap_or_default()
                    .into(),
            },
            output,
            stdout,
            stderr: read(layout::STDERR_TXT),
            exit_code: r.exit_code,
            events,
            files,
            created: crate::record::changes::created_by(&r.artifacts),
            file_root: Some(crate::workspace::layers::Tree::dir(
                self.dir.join("artifacts"),
            )),
            cwd: crate::workspace::agent_dir(case),
            changed_fixtures: r.fixture_changes.iter().map(|f| f.path.clone()).collect(),
            num_turns: turns
                .iter()
                .filter_map(|t| t.num_turns)
                .reduce(|a, b| a + b),
            cost_usd: r.cost_usd,
            duration_ms: r.duration_ms,
            permission_denials: turns.iter().map(|t| t.permission_denials.len()).sum(),
            harness: r.harness.clone(),
            mock_calls: r.mocks.as_ref().map(|m| m.calls_text()),
        };
        (view, unlisted)
    }

    /// Created or changed files and their text, from the artifacts, for the judge.
    pub fn artifacts(&self) -> Vec<(String, String)> {
        self.result
            .artifacts
            .iter()
            .filter(|c| c.kind != ChangeKind::Deleted)
            .take(10)
            .filter_map(|c| {
                // Only inside `artifacts/`, never through a link: the list is as the folder
                // says, which may come from anywhere.
                let text = crate::workspace::confined::read_to_string(
                    &self.dir.join("artifacts"),
                    &c.path,
                    MAX_ARTIFACT_TEXT,
                )
                .ok()?;
                Some((record::path_text::encode(&c.path).into_owned(), text))
            })
            .collect()
    }

    /// Records the new grading: `grading.json` is replaced, and `result.json` gets the new
    /// checks, judge record and grade (the rest of it is left as recorded).
    pub fn write(&mut self, graded: &Graded) -> std::io::Result<()> {
        grade::write_grading(
            &self.dir,
            &graded.checks,
            graded.judge.as_ref(),
            Some(&graded.grade),
        )?;
        self.result.checks = graded.checks.clone();
        self.result.judge = graded.judge.clone();
        self.result.grade = Some(graded.grade.clone());
        self.result.regraded = Some(jiff::Timestamp::now().to_string());
        record::write_json(&self.dir.join(layout::RESULT_JSON), &self.result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_judge_is_never_given_a_file_outside_the_artifacts() {
        let d = tempfile::tempdir().unwrap();
        let secret = d.path().join("secret.txt");
        std::fs::write(&secret, "TOP-SECRET").unwrap();
        let dir = d.path().join("run/s/c/run-1");
        std::fs::create_dir_all(dir.join("artifacts")).unwrap();
        std::fs::write(dir.join("artifacts/ok.md"), "fine").unwrap();
        std::os::unix::fs::symlink(&secret, dir.join("artifacts/link.md")).unwrap();
        let change = |p: &Path| crate::record::changes::Change {
            path: p.to_path_buf(),
            kind: ChangeKind::Created,
            size: 4,
            symlink: false,
        };
        let r = Recorded {
            result: CaseRunRecord {
                artifacts: vec![
                    change(Path::new("../../../../secret.txt")),
                    change(&secret),
                    change(Path::new("link.md")),
                    change(Path::new("ok.md")),
                ],
                ..CaseRunRecord::default()
            },
            listings: Arc::new(record::files::Listings::new(&d.path().join("run"))),
            dir,
        };
        assert_eq!(r.artifacts(), [("ok.md".to_string(), "fine".to_string())]);
    }
}
