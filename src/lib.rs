//! assay: one runner for AI-agent skill evals.
//!
//! Data flows one way: spec → plan → stage → execute → collect → grade → record → report.
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

pub mod assert;
pub mod cli;
pub mod config;
pub mod diag;
pub mod discover;
pub mod exit;
pub mod formats;
pub mod grade;
pub mod harness;
pub mod host;
pub mod judge;
pub mod lint;
pub mod optimize;
pub mod plugin;
pub mod process;
pub mod record;
pub mod report;
pub mod run;
pub mod sandbox;
pub mod stats;
pub mod suite;
pub mod syntax;
pub mod text;
pub mod workspace;
