//! The run stage: executing case-runs through harnesses, under process control.

pub mod process;
