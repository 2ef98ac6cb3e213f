//! What the agent changed: the workspace's files before and after a run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use crate::record::files::{FileList, Listing};

/// Size and modification time of every file and symlink under a root, by relative path.
/// Nothing is followed: a symlink is an entry of its own (its size the length of its target's
/// text), never the file or folder it points at.
///
/// A snapshot is a shared base (the project's files, read once per run) with entries over it:
/// every case-run's workspace starts from the same base, so what a case-run costs to snapshot,
/// compare and record is what it changed, whatever the size of the project.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    base: Arc<Base>,
    /// Entries over the base: an entry replaces the base's; `None` removes it.
    over: BTreeMap<PathBuf, Option<Entry>>,
    /// What the walk could not read (a path past the system's longest, a folder without
    /// read permission), said once each, at most [`MAX_UNREAD`].
    unread: Vec<String>,
}

/// The entries every snapshot over them shares, with their regular files' listing.
#[derive(Debug, Default)]
struct Base {
    entries: BTreeMap<PathBuf, Entry>,
    files: Arc<BTreeSet<PathBuf>>,
    listing: OnceLock<Listing>,
}

impl Base {
    fn new(entries: BTreeMap<PathBuf, Entry>) -> Base {
        let files = entries
            .iter()
            .filter(|(_, e)| !e.symlink)
            .map(|(p, _)| p.clone())
            .collect();
        Base {
            entries,
            files: Arc::new(files),
            listing: OnceLock::new(),
        }
    }
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

use crate::record::changes::{Change, ChangeKind};

/// Calls `f` with every entry under `root` (not `root` itself): its path relative to `root`,
/// its full path and its own metadata (links are not followed). What cannot be read is noted
/// in `unread`.
fn each_entry(
    root: &Path,
    unread: &mut Vec<String>,
    mut f: impl FnMut(PathBuf, &Path, &std::fs::Metadata),
) {
    let walker = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                note_unread(unread, root, &e);
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        f(rel.to_path_buf(), entry.path(), &meta);
    }
}

/// Every file and symlink under `root` (none when `root` itself is a symlink), by relative
/// path, and what could not be read.
fn walk(root: &Path) -> (BTreeMap<PathBuf, Entry>, Vec<String>) {
    let mut files = BTreeMap::new();
    let mut unread = Vec::new();
    // A workspace swapped for a symlink is empty, never the folder it points at.
    if std::fs::symlink_metadata(root).is_ok_and(|m| m.file_type().is_symlink()) {
        return (files, unread);
    }
    each_entry(root, &mut unread, |rel, _, meta| {
        if meta.is_file() || meta.file_type().is_symlink() {
            files.insert(rel, Entry::of(meta));
        }
    });
    (files, unread)
}

impl Snapshot {
    pub fn take(root: &Path) -> Snapshot {
        let (files, unread) = walk(root);
        Snapshot {
            base: Arc::new(Base::new(files)),
            over: BTreeMap::new(),
            unread,
        }
    }

    /// `root` now, over this snapshot's base: what differs from it is all that is kept apart.
    /// (A walk of the whole tree: for a workspace that is a plain copy.)
    pub fn retake(&self, root: &Path) -> Snapshot {
        let (files, unread) = walk(root);
        let mut over: BTreeMap<PathBuf, Option<Entry>> = self
            .base
            .entries
            .keys()
            .filter(|p| !files.contains_key(*p))
            .map(|p| (p.clone(), None))
            .collect();
        for (p, e) in files {
            if self.base.entries.get(&p) != Some(&e) {
                over.insert(p, Some(e));
            }
        }
        Snapshot {
            base: self.base.clone(),
            over,
            unread,
        }
    }

    /// The entry at `rel`, if there is one.
    fn get(&self, rel: &Path) -> Option<&Entry> {
        match self.over.get(rel) {
            Some(over) => over.as_ref(),
            None => self.base.entries.get(rel),
        }
    }

    /// Sets the entry at `rel` (`None`: removes it).
    fn set(&mut self, rel: PathBuf, entry: Option<Entry>) {
        if entry.is_none() && !self.base.entries.contains_key(&rel) {
            self.over.remove(&rel);
        } else {
            self.over.insert(rel, entry);
        }
    }

    /// Removes every entry under the folder `rel` (paths order by component, so they follow
    /// it): the cost is that of what is removed.
    fn remove_under(&mut self, rel: &Path) {
        let under = |p: &&PathBuf| p.as_path() != rel;
        let within = |p: &&PathBuf| p.starts_with(rel);
        let mut gone: Vec<PathBuf> = self
            .base
            .entries
            .range(rel.to_path_buf()..)
            .map(|(p, _)| p)
            .take_while(within)
            .filter(under)
            .cloned()
            .collect();
        gone.extend(
            self.over
                .range(rel.to_path_buf()..)
                .map(|(p, _)| p)
                .take_while(within)
                .filter(under)
                .cloned(),
        );
        for p in gone {
            self.set(p, None);
        }
    }

    /// This snapshot with an overlay layer applied on top, as overlayfs shows it (see
    /// [`super::layers`]): whiteouts remove, opaque folders hide what was below them, files
    /// and symlinks replace. Reads only the layer: the cost is that of its entries.
    pub fn with_layer(&self, layer: &Path) -> Snapshot {
        let mut out = self.clone();
        let mut unread = std::mem::take(&mut out.unread);
        each_entry(layer, &mut unread, |rel, path, meta| {
            let whiteout = super::layers::is_whiteout(meta);
            if whiteout || !meta.is_dir() || super::layers::is_opaque(path) {
                out.remove_under(&rel);
            }
            let kept = !whiteout && (meta.is_file() || meta.file_type().is_symlink());
            // A folder hides a file or symlink of its name below.
            out.set(rel, kept.then(|| Entry::of(meta)));
        });
        out.unread = unread;
        out
    }

    /// What the walk could not read.
    pub fn unread(&self) -> &[String] {
        &self.unread
    }

    /// Every regular file (symlinks are not files), relative to the root: the base's listing,
    /// shared, with this snapshot's own changes.
    pub fn files(&self) -> FileList {
        let is_file = |e: &Option<Entry>| e.is_some_and(|e| !e.symlink);
        let added = self.over.iter().filter(|(_, e)| is_file(e));
        let removed = self.over.iter().filter(|(_, e)| !is_file(e));
        FileList::new(
            self.base.files.clone(),
            added.map(|(p, _)| p.clone()),
            removed.map(|(p, _)| p.clone()),
        )
    }

    /// The base's listing as the run folder keeps it, made once per base.
    pub fn listing(&self) -> &Listing {
        self.base
            .listing
            .get_or_init(|| Listing::of(&self.base.files))
    }

    /// Every entry, in path order.
    fn entries(&self) -> BTreeMap<&PathBuf, &Entry> {
        let base = self
            .base
            .entries
            .iter()
            .filter(|(p, _)| !self.over.contains_key(*p));
        let over = self.over.iter().filter_map(|(p, e)| Some((p, e.as_ref()?)));
        base.chain(over).collect()
    }

    /// Files created, modified (size or time changed) and deleted since `self`. Over the same
    /// base, only the entries either snapshot has over it are compared.
    pub fn changes(&self, after: &Snapshot) -> Vec<Change> {
        let paths: BTreeSet<&PathBuf> = if Arc::ptr_eq(&self.base, &after.base) {
            self.over.keys().chain(after.over.keys()).collect()
        } else {
            let (before, now) = (self.entries(), after.entries());
            before.into_keys().chain(now.into_keys()).collect()
        };
        paths
            .into_iter()
            .filter_map(|p| change(p, self.get(p), after.get(p)))
            .collect()
    }
}

/// What became of `path`, when anything did.
fn change(path: &Path, before: Option<&Entry>, after: Option<&Entry>) -> Option<Change> {
    let (kind, e) = match (before, after) {
        (None, Some(e)) => (ChangeKind::Created, e),
        (Some(b), Some(e)) if b != e => (ChangeKind::Modified, e),
        (Some(b), None) => (ChangeKind::Deleted, b),
        _ => return None,
    };
    Some(Change {
        path: path.to_path_buf(),
        kind,
        size: e.size,
        symlink: e.symlink,
    })
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
        // Over the same base (a copied workspace read again), the same changes, and the
        // files listed are the base's with them.
        let again = before.retake(d.path());
        assert_eq!(before.changes(&again), changes);
        let files: Vec<_> = again
            .files()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(files, ["edit", "keep", "new/file"]);
        assert_eq!(
            again.listing().hash,
            before.listing().hash,
            "one listing, shared"
        );
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
            .entries()
            .into_keys()
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
        assert!(after.files().is_empty());
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
