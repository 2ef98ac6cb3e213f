//! assay: one runner for AI-agent skill evals.
//!
//! Data flows one way: spec → plan → stage → execute → collect → grade → record → report.
//! This crate holds the host; ARCHITECTURE.md is the map.

pub mod assert;
pub mod cli;
pub mod config;
pub mod diag;
pub mod discover;
pub mod exit;
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
pub mod spec;
pub mod stats;
pub mod text;
pub mod workspace;
