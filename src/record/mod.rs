//! The run folder, typed: what `assay run` writes and what every later command reads
//! (`assay report`, `assay grade`, `--resume`, the cache). One type per file, used both
//! ways, so what is written is what is read; each carries a `schema` version, so a later
//! assay reads older folders and refuses newer ones rather than misreading them.
//!
//! ```text
//! <run>/run.json                          RunRecord: options, versions, the plan, totals
//! <run>/project-files/<blake3>.json       a project's files, once per run (see [`files`])
//! <run>/<suite>/<case>/run-<k>/prompt.txt the prompt (turns separated when several)
//!                              raw.jsonl   the agent's stdout, line by line, as it arrived
//!                              transcript.jsonl  normalized events
//!                              stderr.txt  the bounded stderr tail
//!                              output.txt  what counts as the case's output
//!                              artifacts/  copies of files the agent created or modified
//!                              workspace.json  the files after the run: a project listing and changes
//!                              grading.json, timing.json  the grading and the cost (agentskills.io's, skill-creator's)
//!                              result.json CaseRunRecord (written last, atomically)
//! ```
//!
//! A leaf: it depends on no other module of assay; the stages that produce these records
//! (harness, workspace, assert, judge, sandbox) use its types.

pub mod agent;
pub mod case_run;
pub mod changes;
pub mod feedback;
pub mod files;
pub mod folder;
pub mod grading;
pub mod history;
pub mod layout;
pub mod mocks;
pub mod names;
pub mod path_text;
pub mod run;
pub mod timing;
pub mod write;

pub use case_run::{CaseRunRecord, Outcome, Status};
pub use folder::{
    ReadError, case_run_dirs, each_case_run, missing, read_case_run, read_case_runs, read_run,
};
pub use names::{folder_names, slug};
pub use run::RunRecord;
pub use write::{Lines, write_atomic, write_json};

/// Reads one record of kind `what` (`a run record`) from `text`: a JSON object that
/// deserializes as `T` and whose `schema` (given by `schema_of`) is `current` or empty (older
/// than the field). Parsed once; a syntax error, a value of another shape, and a newer version
/// each say so.
fn parse_versioned<T: serde::de::DeserializeOwned>(
    text: &str,
    what: &str,
    current: &str,
    schema_of: impl Fn(&T) -> &str,
) -> Result<T, String> {
    // Serde would also read a struct from an array of its fields.
    if !text.trim_start().starts_with('{') {
        return Err(format!("not {what}: not a JSON object"));
    }
    let r: T = serde_json::from_str(text).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => format!("not {what}: {e}"),
        _ => format!("not valid JSON: {e}"),
    })?;
    match schema_of(&r) {
        "" => Ok(r),
        s if s == current => Ok(r),
        s => Err(format!(
            "written by another version of assay (`schema: {s}`; this one reads {current})"
        )),
    }
}
