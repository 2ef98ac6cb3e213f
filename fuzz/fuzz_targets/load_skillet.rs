//! The Skillet loader: the file below (in a private copy of examples/skillet) is
//! replaced by the input, then the project is discovered and its problems rendered.
#![no_main]

use std::sync::OnceLock;

use assay_fuzz::Project;
use libfuzzer_sys::fuzz_target;

/// The target files, as in tests/loaders_never_panic.rs.
const FILES: &[&str] = &["evals/conventional-comments/001.yaml"];

static PROJECT: OnceLock<Project> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    PROJECT
        .get_or_init(|| Project::new("skillet", FILES))
        .run(data);
});
