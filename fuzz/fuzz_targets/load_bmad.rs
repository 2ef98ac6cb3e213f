//! The BMAD loader: one of the files below (in a private copy of examples/bmad) is
//! replaced by the input (its first byte picks the file, the rest is the content), then the
//! project is discovered and its problems rendered.
#![no_main]

use std::sync::OnceLock;

use assay_fuzz::Project;
use libfuzzer_sys::fuzz_target;

/// The target files, as in tests/loaders_never_panic.rs.
const FILES: &[&str] = &[
    "evals/product-brief/evals.json",
    "evals/product-brief/triggers.json",
];

static PROJECT: OnceLock<Project> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    PROJECT
        .get_or_init(|| Project::new("bmad", FILES))
        .run(data);
});
