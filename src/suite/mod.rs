//! The suite: the one normalized model every eval format loads into (`model.rs`),
//! the check types and value formats it names, and finding the skill and the project.

pub mod check_types;
pub mod mocks;
pub mod paths;
pub mod root;
pub mod routing;
pub mod skill;
pub mod value_formats;

mod model;
pub use model::*;

use crate::diag::Problem;

/// Suites loaded from some files, and every problem found on the way.
#[derive(Debug, Default)]
pub struct Loaded {
    pub suites: Vec<Suite>,
    pub problems: Vec<Problem>,
}

impl Loaded {
    pub fn extend(&mut self, other: Loaded) {
        self.suites.extend(other.suites);
        self.problems.extend(other.problems);
    }
}
