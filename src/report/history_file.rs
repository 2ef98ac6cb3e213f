//! The history a finished `assay run` appends to, for `assay report trend` and `audit`: whether
//! it appends ([`wanted`]), to which file ([`file`]), and the appending ([`append`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::rows::Row;
use crate::formats::LoadCtx;
use crate::record::layout;
use crate::run::RunReport;
use crate::suite::Suite;

/// Why the history was not written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("{0}")]
    Read(#[from] crate::record::ReadError),
    #[error("{0}")]
    Write(#[from] std::io::Error),
}

/// Whether a finished run appends to the history: not with `--no-history` (`off`), not for an
/// interrupted run (its `--resume` appends the whole run), not for a shard unless `--history`
/// names the file (the shards of one plan, run one after another here, must all cut by the
/// timings they started with).
pub fn wanted(report: &RunReport, sharded: bool, flag: Option<&Path>, off: bool) -> bool {
    !report.interrupted && (!sharded || flag.is_some()) && !off
}

/// Where the run's history goes: `--history` (or `ASSAY_HISTORY`, from `cwd`), else
/// `.assay/history.jsonl` beside the `.assay/runs/` folder the run folder `dir` is in; none for
/// a run folder elsewhere (a project gets no file it did not ask for).
pub fn file(cwd: &Path, flag: Option<&Path>, dir: &Path) -> Option<PathBuf> {
    if let Some(f) = flag {
        return Some(cwd.join(f));
    }
    let runs = dir.parent()?;
    let assay = runs.parent()?;
    (runs.file_name()? == "runs" && assay.file_name()? == ".assay")
        .then(|| assay.join(layout::HISTORY_JSONL))
}

/// Appends one line per case of the run in `dir` (its `rows`) to the history `file`, with each
/// suite's skill and spec hashes.
pub fn append(
    ctx: &LoadCtx,
    suites: &[Suite],
    dir: &Path,
    rows: &[Row],
    file: &Path,
) -> Result<(), HistoryError> {
    let run = crate::record::read_run(dir)?;
    let hashes: BTreeMap<String, String> = suites
        .iter()
        .filter_map(|s| {
            let k = s.skill.as_ref()?;
            let specs = s.spec_paths(&ctx.cwd);
            Some((s.id.clone(), crate::run::cache::skill_hash(k, &specs)))
        })
        .collect();
    // Each suite's own files: its spec (and for a folder format, the folder).
    let suite_hashes: BTreeMap<String, String> = suites
        .iter()
        .map(|s| (s.id.clone(), crate::run::cache::suite_hash(s, &ctx.cwd)))
        .collect();
    let shown = ctx.shown(dir).display().to_string();
    let lines = super::history::lines(rows, &run, &shown, &hashes, &suite_hashes);
    crate::record::history::append(file, &lines)?;
    Ok(())
}
