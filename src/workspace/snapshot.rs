//! What the agent changed: the workspace's files before and after a run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

/// Size and modification time of every file under a root, by relative path.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    files: BTreeMap<PathBuf, (u64, Option<SystemTime>)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    Created,
    Modified,
    Deleted,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub path: PathBuf,
    pub kind: ChangeKind,
    pub size: u64,
}

impl Snapshot {
    pub fn take(root: &Path) -> Snapshot {
        let mut files = BTreeMap::new();
        let walker = ignore::WalkBuilder::new(root)
            .standard_filters(false)
            .follow_links(false)
            .build();
        for entry in walker.flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            let rel = entry
                .path()
                .strip_prefix(root)
                .unwrap_or(entry.path())
                .to_path_buf();
            files.insert(rel, (meta.len(), meta.modified().ok()));
        }
        Snapshot { files }
    }

    /// Every file's path, relative to the root.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files.keys().cloned().collect()
    }

    /// Files created, modified (size or time changed) and deleted since `self`.
    pub fn changes(&self, after: &Snapshot) -> Vec<Change> {
        let mut out = Vec::new();
        for (path, (size, time)) in &after.files {
            match self.files.get(path) {
                None => out.push(Change {
                    path: path.clone(),
                    kind: ChangeKind::Created,
                    size: *size,
                }),
                Some(before) if before != &(*size, *time) => out.push(Change {
                    path: path.clone(),
                    kind: ChangeKind::Modified,
                    size: *size,
                }),
                _ => {}
            }
        }
        for (path, (size, _)) in &self.files {
            if !after.files.contains_key(path) {
                out.push(Change {
                    path: path.clone(),
                    kind: ChangeKind::Deleted,
                    size: *size,
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }
}

/// The BLAKE3 hash of a file, hex, or `None` when it cannot be read.
pub fn hash_file(path: &Path) -> Option<String> {
    let mut h = blake3::Hasher::new();
    h.update_reader(std::fs::File::open(path).ok()?).ok()?;
    Some(h.finalize().to_hex().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_created_modified_and_deleted_files() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("keep"), "1").unwrap();
        std::fs::write(d.path().join("edit"), "1").unwrap();
        std::fs::write(d.path().join("gone"), "1").unwrap();
        let before = Snapshot::take(d.path());
        std::fs::write(d.path().join("edit"), "22").unwrap();
        std::fs::remove_file(d.path().join("gone")).unwrap();
        std::fs::create_dir(d.path().join("new")).unwrap();
        std::fs::write(d.path().join("new/file"), "333").unwrap();
        let changes = before.changes(&Snapshot::take(d.path()));
        let kinds: Vec<_> = changes
            .iter()
            .map(|c| (c.path.to_string_lossy().into_owned(), c.kind.clone()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("edit".into(), ChangeKind::Modified),
                ("gone".into(), ChangeKind::Deleted),
                ("new/file".into(), ChangeKind::Created),
            ]
        );
        assert_eq!(hash_file(&d.path().join("keep")).unwrap().len(), 64);
    }
}
