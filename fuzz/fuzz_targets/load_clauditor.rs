//! The clauditor loader: the file below (in a private copy of examples/clauditor) is
//! replaced by the input, then the project is discovered and its problems rendered.
#![no_main]

use std::sync::OnceLock;

use assay_fuzz::Project;
use libfuzzer_sys::fuzz_target;

/// The target files, as in tests/loaders_never_panic.rs.
const FILES: &[&str] = &[".claude/commands/summarize-csv.eval.json"];

static PROJECT: OnceLock<Project> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    PROJECT
        .get_or_init(|| Project::new("clauditor", FILES))
        .run(data);
});
