//! The UAAPS loader: one of the files below (in a private copy of examples/uaaps) is
//! replaced by the input (its first byte picks the file, the rest is the content), then the
//! project is discovered and its problems rendered.
#![no_main]

use std::sync::OnceLock;

use assay_fuzz::Project;
use libfuzzer_sys::fuzz_target;

/// The target files, as in tests/loaders_never_panic.rs.
const FILES: &[&str] = &[
    "evals/cases/count-words.yaml",
    "evals/eval-config.json",
    "skills/text-tools/tests/cases/counts-stdin.yaml",
];

static PROJECT: OnceLock<Project> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    PROJECT
        .get_or_init(|| Project::new("uaaps", FILES))
        .run(data);
});
