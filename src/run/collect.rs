//! After the turns: the workspace as the agent left it (its changes, copies of what it made),
//! the case's output, and the view of the case-run the checks grade. File-system work is done
//! off the async executor, so other case-runs' agents keep being read meanwhile.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::case_run::{CaseRunPlan, Stop};
use super::turns::Driven;
use crate::assert::shared_text::SharedText;
use crate::assert::view::CaseRunView;
use crate::record;
use crate::record::case_run::{CaseRunRecord, Status};
use crate::record::changes::FixtureChange;
use crate::record::files::FileList;
use crate::record::layout;
use crate::suite::{Case, OutputSpec};
use crate::workspace::Staged;
use crate::workspace::layers::Tree;
use crate::{
    record::changes::{Change, ChangeKind},
    workspace::snapshot::Snapshot,
};

/// Artifacts copied into the run folder, at most.
const MAX_ARTIFACT_BYTES: u64 = 16 << 20;
const MAX_ARTIFACTS: usize = 500;

/// What grading needs of a finished case-run.
pub struct Collected {
    pub view: CaseRunView,
    /// Up to ten created or modified files with their text, for the judge.
    pub artifacts: Vec<(String, String)>,
    /// The output files (clauditor `output_files`), each with its text when it could be read.
    pub outputs: Vec<(String, Option<String>)>,
}

/// The most of a plain program's final message `result.json` keeps when its stdout is kept
/// whole in `output.txt` (`stdout_in`).
const FINAL_MESSAGE_KEPT: usize = 64 << 10;

/// Collects the workspace and the output into `r` (artifacts, fixture changes, output files,
/// `output.txt`, `stderr.txt`, `workspace.json`) and builds the view the checks see. Hands the
/// workspace back for teardown.
pub async fn collect(
    r: &mut CaseRunRecord,
    plan: &CaseRunPlan<'_>,
    staged: Staged,
    driven: Driven,
    started: Instant,
) -> Result<(Staged, Collected), Stop> {
    let (staged, after, changes, fixture_changes) =
        match left(staged, plan.dir.join("artifacts")).await {
            Ok(collected) => collected,
            Err(e) => {
                r.end(
                    Status::Error,
                    format!("collecting the workspace failed: {e}"),
                );
                return Err(Stop::Finish);
            }
        };
    let cwd_rel = staged
        .cwd
        .strip_prefix(&staged.root)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut outputs: Vec<(String, Option<String>)> = Vec::new();
    let (final_message, stdout) = texts(r, driven.stdout_text);
    let output = collect_output(
        plan.case,
        &staged.tree,
        &cwd_rel,
        &after,
        (&final_message, &stdout),
        &mut outputs,
    );
    // Recorded: the output files that could be read, with their text.
    r.output_files = outputs
        .iter()
        .filter_map(|(p, t)| Some((p.clone(), t.clone()?)))
        .collect();
    let output = output.unwrap_or_default();
    r.write(&plan.dir.join(layout::OUTPUT_TXT), output.as_bytes());
    let stderr_tail = r.stderr_tail.clone();
    r.write(&plan.dir.join(layout::STDERR_TXT), stderr_tail.as_bytes());
    r.artifacts = changes;
    r.fixture_changes = fixture_changes;
    r.workspace_unread = after.unread().to_vec();
    let files = after.files();
    record_files(r, plan, &after, &files);

    // The deterministic checks run against the live workspace.
    let view = CaseRunView {
        output,
        final_message,
        stdout,
        stderr: r.stderr_tail.clone(),
        exit_code: r.exit_code,
        events: driven.events,
        files,
        created: crate::record::changes::created_by(&r.artifacts),
        file_root: Some(staged.tree.clone()),
        cwd: cwd_rel,
        changed_fixtures: r.fixture_changes.iter().map(|f| f.path.clone()).collect(),
        num_turns: r
            .turns
            .iter()
            .filter_map(|t| t.num_turns)
            .reduce(|a, b| a + b),
        cost_usd: r.cost_usd,
        duration_ms: started.elapsed().as_millis() as u64,
        permission_denials: r.turns.iter().map(|t| t.permission_denials.len()).sum(),
        harness: r.harness.clone(),
        mock_calls: r.mocks.as_ref().map(|m| m.calls_text()),
    };
    let artifacts = for_the_judge(&r.artifacts, &staged.tree);
    Ok((
        staged,
        Collected {
            view,
            artifacts,
            outputs,
        },
    ))
}

/// The workspace as the agent left it, off the executor: its files now, what changed (the
/// created and modified files copied to `artifacts_dir`), the fixtures changed.
async fn left(
    staged: Staged,
    artifacts_dir: PathBuf,
) -> Result<(Staged, Snapshot, Vec<Change>, Vec<FixtureChange>), tokio::task::JoinError> {
    tokio::task::spawn_blocking(move || {
        let after = staged.snapshot_now();
        let changes = staged.before.changes(&after);
        copy_artifacts(&staged.tree, &changes, &artifacts_dir);
        let fixture_changes = staged.fixture_changes();
        (staged, after, changes, fixture_changes)
    })
    .await
}

/// Up to ten created or modified files with their text, for the judge.
fn for_the_judge(changes: &[Change], tree: &Tree) -> Vec<(String, String)> {
    changes
        .iter()
        .filter(|c| c.kind != ChangeKind::Deleted)
        .take(10)
        .filter_map(|c| {
            // Never through a symlink: the agent may point one anywhere.
            let text = tree.read_to_string(&c.path, MAX_ARTIFACT_BYTES).ok()?;
            Some((record::path_text::encode(&c.path).into_owned(), text))
        })
        .collect()
}

/// Writes `workspace.json` (the case-run's changes over its project's listing) and the
/// listing, once per run folder.
fn record_files(r: &mut CaseRunRecord, plan: &CaseRunPlan<'_>, after: &Snapshot, files: &FileList) {
    let listing = after.listing();
    if let Err(e) = listing.keep(&plan.run_dir) {
        let path = record::files::listing_path(&plan.run_dir, &listing.hash);
        r.unrecorded
            .push(format!("cannot write {}: {e}", path.display()));
    }
    let recorded = files.record(&listing.hash);
    if let Err(e) = record::write_json(&plan.dir.join(layout::WORKSPACE_JSON), &recorded) {
        r.unrecorded
            .push(format!("cannot write workspace.json: {e}"));
    }
}

/// The final message and stdout as checks see them. A plain program's stdout kept once
/// (`stdout_in`) is both, shared; `result.json` keeps the start of it.
fn texts(r: &mut CaseRunRecord, stdout: String) -> (SharedText, SharedText) {
    let last = r.turns.last_mut().and_then(|t| t.final_message.as_mut());
    if r.stdout_in.is_none() {
        let final_message = last.map(|m| m.as_str()).unwrap_or_default().into();
        return (final_message, stdout.into());
    }
    let Some(m) = last else {
        return Default::default();
    };
    let end = (0..=FINAL_MESSAGE_KEPT.min(m.len()))
        .rev()
        .find(|i| m.is_char_boundary(*i))
        .unwrap_or(0);
    let kept = m[..end].to_string();
    let whole = SharedText::from(std::mem::replace(m, kept));
    (whole.clone(), whole)
}

/// What counts as the output: the final message, stdout, one file, or files by glob (the
/// first match is the output, as in clauditor). Files are read under the workspace `root`
/// without following any symlink (the agent may point one at any file of the host): an output
/// that is, or lies through, a symlink counts as missing.
fn collect_output(
    case: &Case,
    tree: &Tree,
    cwd_rel: &Path,
    files_now: &Snapshot,
    (final_message, stdout): (&SharedText, &SharedText),
    outputs: &mut Vec<(String, Option<String>)>,
) -> Option<SharedText> {
    // As much as captured stdout may hold.
    const MAX_OUTPUT_FILE_BYTES: u64 = 64 << 20;
    // Folded lexically: nothing on the way is a symlink, so this is where it really is.
    let read = |p: &Path| {
        let rel = crate::suite::paths::normalize(&cwd_rel.join(p))?;
        tree.read_to_string(&rel, MAX_OUTPUT_FILE_BYTES).ok()
    };
    match &case.output {
        OutputSpec::FinalMessage => Some(final_message.clone()),
        OutputSpec::Stdout => Some(stdout.clone()),
        OutputSpec::File { path } => {
            let text = read(Path::new(path))?;
            outputs.push((path.clone(), Some(text.clone())));
            Some(text.into())
        }
        OutputSpec::Files { globs } => {
            let mut set = globset::GlobSetBuilder::new();
            for g in globs {
                if let Ok(g) = globset::Glob::new(g) {
                    set.add(g);
                }
            }
            let set = set.build().ok()?;
            // The regular files under the working folder (never through a symlink).
            let mut found: Vec<PathBuf> = files_now
                .files()
                .iter()
                .filter_map(|p| p.strip_prefix(cwd_rel).ok().map(Path::to_path_buf))
                .filter(|p| set.is_match(p))
                .collect();
            found.sort();
            // Bounded however many files the agent made: at most MAX_OUTPUT_FILES, and
            // MAX_OUTPUT_FILE_BYTES in all; a file past either is recorded unreadable, so the
            // output checks fail on it rather than pass without seeing it.
            let mut budget = MAX_OUTPUT_FILE_BYTES;
            let many = found.len() > MAX_OUTPUT_FILES;
            for p in found.iter().take(MAX_OUTPUT_FILES) {
                let key = p.to_string_lossy().replace('\\', "/");
                let text = crate::suite::paths::normalize(&cwd_rel.join(p))
                    .and_then(|rel| tree.read_to_string(&rel, budget).ok());
                if let Some(t) = &text {
                    budget -= t.len() as u64;
                }
                outputs.push((key, text));
            }
            if many {
                outputs.push((
                    format!(
                        "({} more files past the first {MAX_OUTPUT_FILES})",
                        found.len() - MAX_OUTPUT_FILES
                    ),
                    None,
                ));
            }
            outputs
                .first()
                .and_then(|(_, t)| Some(t.as_deref()?.into()))
        }
    }
}

/// Output files (clauditor `output_files`) read and checked at most.
const MAX_OUTPUT_FILES: usize = 200;

/// Copies created and modified files into the run folder, within a size budget. Nothing is
/// read through a symlink: a link the agent made stays listed in the artifacts, and neither it
/// nor what it points at is copied.
fn copy_artifacts(tree: &Tree, changes: &[Change], to: &Path) {
    let mut budget = MAX_ARTIFACT_BYTES;
    for c in changes
        .iter()
        .filter(|c| c.kind != ChangeKind::Deleted && !c.symlink)
        .take(MAX_ARTIFACTS)
    {
        if c.size > budget {
            continue;
        }
        if let Ok(n) = tree.copy_out_max(&c.path, &to.join(&c.path), budget) {
            budget -= n;
        }
    }
}
