//! assay: one runner for AI-agent skill evals.
//!
//! Data flows one way: spec → discover → plan → stage → execute → collect → grade → record →
//! report. The modules below are declared in that order: each uses only modules above it
//! (`.ci/architecture` checks it).
//! This crate holds the host; ARCHITECTURE.md is the map.

/// `eprintln!` that never panics: every module's lines to stderr go through
/// [`host::output::emit`], so a closed stderr (`assay run 2>&1 | head`) ends them quietly.
/// (`cli` redefines the print macros the same way for stdout too.)
macro_rules! eprintln {
    () => {
        $crate::host::output::emit($crate::host::output::Stream::Stderr, "\n")
    };
    ($($arg:tt)*) => {
        $crate::host::output::emit(
            $crate::host::output::Stream::Stderr,
            &format!("{}\n", format_args!($($arg)*)),
        )
    };
}

// Leaves, using nothing of assay's: escaping untrusted text on its way out;
pub mod text;
// the machine: its PATH and variables;
pub mod host;
// the process supervisor;
pub mod process;
// exit codes, one meaning each;
pub mod exit;
// the run folder's typed records and its layout;
pub mod record;
// problems in the user's input (uses `text`);
pub mod diag;
// statistics for verdicts.
pub mod stats;
// The spec stage: JSON and YAML into spanned trees, read strictly;
pub mod syntax;
// the normalized model;
pub mod suite;
// each eval format's reader into the model, its discovery and its dialects.
pub mod formats;
// Which files are suites.
pub mod discover;
// The stage stage: the case-run's container;
pub mod sandbox;
// `assay.toml`;
pub mod config;
// the case-run's workspace.
pub mod workspace;
// The execute and collect stages: the agent CLIs, normalized;
pub mod harness;
// the LLM judge;
pub mod judge;
// deterministic checks;
pub mod assert;
// WebAssembly plugins: checks, value formats, harnesses.
pub mod plugin;
// Static checks of skills and suites, with no agent.
pub mod lint;
// The grade stage: a case-run becomes a verdict.
pub mod grade;
// The run: settings resolved once, plan, execute, cache, resume.
pub mod run;
// The report stage, read back from the run folder.
pub mod report;
// Runs of runs: a description improved against its trigger queries.
pub mod optimize;
// The command line: parses, calls the library, prints.
pub mod cli;
