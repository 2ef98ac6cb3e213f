//! Small, dependency-free statistics for eval verdicts: how sure a pass rate is, how often a
//! skill passes in k tries, whether a skill beats its baseline, and how well a grader classifies.

pub mod classify;
pub mod fisher;
pub mod interval;
pub mod pass_k;
pub mod summary;

pub use classify::Confusion;
pub use fisher::fisher_exact;
pub use interval::{wilson, wilson_at, z_of};
pub use pass_k::{pass_at_k, pass_hat_k};
pub use summary::{mean_sd, stability};
