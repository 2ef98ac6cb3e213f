//! What the agent changed: the workspace's files before and after a run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Size and modification time of every file and symlink under a root, by relative path.
/// Nothing is followed: a symlink is an entry of its own (its size the length of its target's
/// text), never the file or folder it points at.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    files: BTreeMap<PathBuf, Entry>,
    /// What the walk could not read (a path past the system's longest, a folder without
    /// read permission), said once each, at most [`MAX_UNREAD`].
    unread: Vec<String>,
}

/// The most unread places a snapshot names.
const MAX_UNREAD: usize = 10;

/// Notes a place the walk could not read.
fn note_unread(unread: &mut Vec<String>, root: &Path, e: &ignore::Error) {
    if unread.len() < MAX_UNREAD {
        // A path the agent named: no control character reaches a terminal or a report.
        let text = e.to_string().replace(&format!("{}/", root.display()), "");
        unread.push(crate::text::shorten(&crate::text::printable(&text), 300));
    }
}

/// One file's or symlink's size and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    size: u64,
    time: Option<SystemTime>,
    symlink: bool,
}

impl Entry {
    /// Of an entry's own metadata (a symlink's, never its target's).
    fn of(meta: &std::fs::Metadata) -> Entry {
        Entry {
            size: meta.len(),
            time: meta.modified().ok(),
            symlink: meta.file_type().is_symlink(),
        }
    }
}

pub use crate::record::changes::{Change, ChangeKind};

impl Snapshot {
    pub fn take(root: &Path) -> Snapshot {
        let mut files = BTreeMap::new();
        let mut unread = Vec::new();
        // A workspace swapped for a symlink is empty, never the folder it points at.
        if std::fs::symlink_metadata(root).is_ok_and(|m| m.file_type().is_symlink()) {
            return Snapshot { files, unread };
        }
        let walker = ignore::WalkBuilder::new(root)
            .standard_filters(false)
            .follow_links(false)
            .build();
        for entry in walker {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    note_unread(&mut unread, root, &e);
                    continue;
                }
            };
            let Some(t) = entry.file_type() else { continue };
            if !(t.is_file() || t.is_symlink()) || entry.depth() == 0 {
                continue;
            }
            // Of the entry itself: the walk does not follow links.
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            let rel = entry
                .path()
                .strip_prefix(root)
                .unwrap_or(entry.path())
                .to_path_buf();
            files.insert(rel, Entry::of(&meta));
        }
        Snapshot { files, unread }
    }

    /// This snapshot with an overlay layer applied on top, as overlayfs shows it (see
    /// [`super::layers`]): whiteouts remove, opaque folders hide what was below them, files
    /// and symlinks replace. Reads only the layer: the cost is that of its entries.
    pub fn with_layer(&self, layer: &Path) -> Snapshot {
        let mut files = self.files.clone();
        let mut unread = self.unread.clone();
        let walker = ignore::WalkBuilder::new(layer)
            .standard_filters(false)
            .follow_links(false)
            .build();
        for entry in walker {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    note_unread(&mut unread, layer, &e);
                    continue;
                }
            };
            if entry.depth() == 0 {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            let rel = entry
                .path()
                .strip_prefix(layer)
                .unwrap_or(entry.path())
                .to_path_buf();
            let whiteout = super::layers::is_whiteout(&meta);
            if whiteout || !meta.is_dir() || super::layers::is_opaque(entry.path()) {
                remove_under(&mut files, &rel);
            }
            // A folder hides a file or symlink of its name below.
            files.remove(&rel);
            if !whiteout && (meta.is_file() || meta.file_type().is_symlink()) {
                files.insert(rel, Entry::of(&meta));
            }
        }
        Snapshot { files, unread }
    }

    /// What the walk could not read.
    pub fn unread(&self) -> &[String] {
        &self.unread
    }

    /// Every regular file's path, relative to the root (symlinks are not files).
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files
            .iter()
            .filter(|(_, e)| !e.symlink)
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// Files created, modified (size or time changed) and deleted since `self`.
    pub fn changes(&self, after: &Snapshot) -> Vec<Change> {
        let mut out = Vec::new();
        for (path, e) in &after.files {
            match self.files.get(path) {
                None => out.push(Change {
                    path: path.clone(),
                    kind: ChangeKind::Created,
                    size: e.size,
                    symlink: e.symlink,
                }),
                Some(before) if before != e => out.push(Change {
                    path: path.clone(),
                    kind: ChangeKind::Modified,
                    size: e.size,
                    symlink: e.symlink,
                }),
                _ => {}
            }
        }
        for (path, e) in &self.files {
            if !after.files.contains_key(path) {
                out.push(Change {
                    path: path.clone(),
                    kind: ChangeKind::Deleted,
                    size: e.size,
                    symlink: e.symlink,
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }
}

/// Removes every entry under the folder `rel` (paths order by component, so they follow it).
fn remove_under(files: &mut BTreeMap<PathBuf, Entry>, rel: &Path) {
    let under: Vec<PathBuf> = files
        .range(rel.to_path_buf()..)
        .map(|(p, _)| p)
        .take_while(|p| p.starts_with(rel))
        .filter(|p| p.as_path() != rel)
        .cloned()
        .collect();
    for p in under {
        files.remove(&p);
    }
}

/// The BLAKE3 hash of a file, hex, or `None` when it cannot be read. A symlink at `path` is
/// not followed: its hash is that of its target's text (marked, so it never equals the hash
/// of a file holding that text). Only the last component is guarded: `path`'s folders must be
/// assay's own (see [`super::confined`] for paths an agent controls).
pub fn hash_file(path: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    let mut h = blake3::Hasher::new();
    if std::fs::symlink_metadata(path).ok()?.is_symlink() {
        h.update(b"symlink\0");
        h.update(std::fs::read_link(path).ok()?.as_os_str().as_bytes());
        return Some(h.finalize().to_hex().to_string());
    }
    // Not following a link put here since, nor blocking on a FIFO.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc_flags::NOFOLLOW | libc_flags::NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    h.update_reader(file).ok()?;
    Some(h.finalize().to_hex().to_string())
}

/// `O_NOFOLLOW` and `O_NONBLOCK`, from rustix (no libc dependency here).
mod libc_flags {
    pub const NOFOLLOW: i32 = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    pub const NONBLOCK: i32 = rustix::fs::OFlags::NONBLOCK.bits() as i32;
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

    #[test]
    fn a_layer_applies_as_overlayfs_shows_it() {
        let d = tempfile::tempdir().unwrap();
        let (base, top) = (d.path().join("base"), d.path().join("top"));
        for dir in [
            base.join("a/deep"),
            base.join("b"),
            top.join("b"),
            base.join("f"),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(base.join("a/deep/x"), "x").unwrap();
        std::fs::write(base.join("a-b"), "1").unwrap();
        std::fs::write(base.join("b/old"), "1").unwrap();
        std::fs::write(base.join("f/inner"), "1").unwrap();
        std::fs::write(base.join("keep"), "1").unwrap();
        let before = Snapshot::take(&base);
        super::super::layers::whiteout(&top.join("a")).unwrap();
        super::super::layers::make_opaque(&top.join("b")).unwrap();
        std::fs::write(top.join("b/new"), "22").unwrap();
        std::fs::write(top.join("f"), "a file over a folder").unwrap();
        let after = before.with_layer(&top);
        let listed: Vec<_> = after
            .files
            .keys()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(listed, ["a-b", "b/new", "f", "keep"]);
        let kinds: Vec<_> = before
            .changes(&after)
            .iter()
            .map(|c| (c.path.display().to_string(), c.kind.clone()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("a/deep/x".to_string(), ChangeKind::Deleted),
                ("b/new".into(), ChangeKind::Created),
                ("b/old".into(), ChangeKind::Deleted),
                ("f".into(), ChangeKind::Created),
                ("f/inner".into(), ChangeKind::Deleted),
            ]
        );
    }

    #[test]
    fn symlinks_are_entries_never_followed_and_hashed_by_their_target_text() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(d.path().join("secret"), "SECRET").unwrap();
        std::fs::create_dir_all(d.path().join("outside")).unwrap();
        std::fs::write(d.path().join("outside/f"), "x").unwrap();
        let before = Snapshot::take(&ws);
        std::os::unix::fs::symlink(d.path().join("secret"), ws.join("out.txt")).unwrap();
        std::os::unix::fs::symlink(d.path().join("outside"), ws.join("dir")).unwrap();
        let after = Snapshot::take(&ws);
        // Listed as links, not as their targets, and nothing under the folder link.
        let changes = before.changes(&after);
        let listed: Vec<_> = changes
            .iter()
            .map(|c| (c.path.to_string_lossy().into_owned(), c.symlink))
            .collect();
        assert_eq!(listed, vec![("dir".into(), true), ("out.txt".into(), true)]);
        assert_eq!(
            changes[1].size,
            d.path().join("secret").as_os_str().len() as u64
        );
        assert!(after.paths().is_empty());
        // The hash is of the link, not of the secret.
        let link = hash_file(&ws.join("out.txt")).unwrap();
        std::fs::write(ws.join("copy"), "SECRET").unwrap();
        assert_ne!(link, hash_file(&ws.join("copy")).unwrap());
        assert_ne!(link, hash_file(&d.path().join("secret")).unwrap());
        let mut h = blake3::Hasher::new();
        h.update(b"symlink\0");
        h.update(d.path().join("secret").as_os_str().as_encoded_bytes());
        assert_eq!(link, h.finalize().to_hex().to_string());
    }
}
