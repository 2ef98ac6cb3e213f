//! What changed in a case-run's workspace: the agent's files, and the fixtures it touched.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    Created,
    Modified,
    Deleted,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Recorded as [`super::path_text`] says (a name that is not UTF-8, escaped).
    #[serde(with = "super::path_text")]
    pub path: PathBuf,
    pub kind: ChangeKind,
    pub size: u64,
    /// A symlink (listed, never followed: its target's content is not an artifact).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub symlink: bool,
}

/// A fixture the agent changed or removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixtureChange {
    #[serde(with = "super::path_text")]
    pub path: PathBuf,
    /// `modified` or `deleted`.
    pub change: String,
}

/// The files a run created: absent from the workspace before the agent started.
pub fn created_by(changes: &[Change]) -> std::collections::BTreeSet<std::path::PathBuf> {
    changes
        .iter()
        .filter(|c| c.kind == ChangeKind::Created)
        .map(|c| c.path.clone())
        .collect()
}
