//! The terminal reporter: what `assay run` prints as it runs ([`live`], fed by the runner's
//! events) and at its end ([`summary`], from the run folder as read back).

pub mod live;
pub mod summary;

pub use live::Live;
