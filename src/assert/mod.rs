//! The grade stage's deterministic checks: the built-in check types and the format registry.
//!
//! At load time only the types' configuration schemas are used, so a wrong key or type in any
//! format's assertions is caught before anything runs.

pub mod formats;
pub mod registry;
