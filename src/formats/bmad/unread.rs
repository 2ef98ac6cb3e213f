//! The trigger files of an eval folder that are not read, each named with why: a folder's
//! trigger set is one file, found by name ([`TRIGGER_FILES`], the first present), so a second
//! set, or one under a name no runner gives it, would otherwise be left out in silence.

use std::path::{Path, PathBuf};

use super::Input;
use super::sniff::Sniff;
use super::triggers::{TRAIN_FILE, TRIGGER_FILES, VALIDATION_FILE};
use crate::diag::Problem;
use crate::formats::LoadCtx;

/// What a trigger set holds, as the messages say it.
pub const SHAPE: &str = "a trigger set is a list of {\"query\": …, \"should_trigger\": true|false}, or an object whose `queries` holds that list (skill-creator's {\"skill_name\", \"queries\"})";

/// The largest file looked into for its shape.
const MAX_SNIFF: u64 = 1 << 20;

/// A warning for each JSON file beside the ones read that looks like a trigger set: by its
/// name (`trigger` in it) or by its shape.
pub(super) fn warn(ctx: &LoadCtx, input: &Input, problems: &mut Vec<Problem>) {
    for file in candidates(input) {
        let name = file_name(&file);
        let why = match &input.triggers_file {
            _ if name == VALIDATION_FILE => format!(
                "not read: a validation set is read only as the holdout of {TRAIN_FILE}, when that is the folder's trigger set"
            ),
            Some(read) => format!("not read: {} is read instead", file_name(read)),
            None if TRIGGER_FILES.contains(&name.as_str()) => {
                "not read: --evals named another file".to_string()
            }
            None => "not read: not a trigger file name assay looks for".to_string(),
        };
        problems.push(
            Problem::warning(
                "unread-triggers",
                &ctx.shown(&file),
                format!("trigger file {why}"),
            )
            .help(format!(
                "an eval folder's trigger set is one file, the first of {}; {SHAPE}; to run this one, pass --evals {}",
                TRIGGER_FILES.join(", "),
                ctx.shown(&file).display()
            )),
        );
    }
}

/// The folder's JSON files, other than those read, that look like a trigger set.
fn candidates(input: &Input) -> Vec<PathBuf> {
    let read = [
        &input.evals_file,
        &input.cases_file,
        &input.triggers_file,
        &input.validation_file,
    ];
    let is_read = |p: &Path| read.iter().any(|r| r.as_deref() == Some(p));
    let mut out: Vec<PathBuf> = std::fs::read_dir(&input.dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| !is_read(p))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file() && m.len() <= MAX_SNIFF))
        .filter(|p| looks_like_triggers(p))
        .collect();
    out.sort();
    out
}

fn looks_like_triggers(p: &Path) -> bool {
    let name = file_name(p).to_lowercase();
    name.ends_with(".json")
        && (name.contains("trigger") || Sniff::of(p).is_some_and(|s| s.is_triggers()))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
