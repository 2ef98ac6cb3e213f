//! The grade stage's deterministic checks: the built-in check types, the format registry, and
//! what checks see of a case-run.
//!
//! At load time only the types' configuration schemas are used (`registry`), so a wrong key or
//! type in any format's assertions is caught before anything runs; after a run, `builtin`
//! evaluates them against a [`view::CaseRunView`].

pub mod builtin;
pub mod check;
pub mod fields;
pub mod formats;
pub mod shared_text;
pub mod verdict;
pub mod view;
