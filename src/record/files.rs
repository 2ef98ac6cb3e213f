//! The workspace's files after a case-run. A project's listing is the same for every case-run
//! of it, so the run folder keeps it once, named by its hash (`project-files/<blake3>.json`),
//! and each case-run's `workspace.json` says which listing it starts from and what the case-run
//! added to it and removed from it: the record grows with what changed, not with the project.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::record::layout;
use serde::{Deserialize, Serialize};

/// The run folder's folder of project listings.
pub const LISTINGS: &str = "project-files";

/// `workspace.json`'s schema.
pub const SCHEMA: &str = "assay.workspace/v1";

/// Regular files in a workspace, relative to its root: a shared listing with a case-run's own
/// additions and removals on top.
#[derive(Debug, Clone, Default)]
pub struct FileList {
    base: Arc<BTreeSet<PathBuf>>,
    added: BTreeSet<PathBuf>,
    removed: BTreeSet<PathBuf>,
}

impl FileList {
    /// `base` with `added` and without `removed` (each kept only where it changes the list).
    pub fn new(
        base: Arc<BTreeSet<PathBuf>>,
        added: impl IntoIterator<Item = PathBuf>,
        removed: impl IntoIterator<Item = PathBuf>,
    ) -> FileList {
        let added = added.into_iter().filter(|p| !base.contains(p)).collect();
        let removed = removed.into_iter().filter(|p| base.contains(p)).collect();
        FileList {
            base,
            added,
            removed,
        }
    }

    pub fn contains(&self, path: &Path) -> bool {
        self.added.contains(path) || (self.base.contains(path) && !self.removed.contains(path))
    }

    /// Every file, in path order.
    pub fn iter(&self) -> impl Iterator<Item = &PathBuf> {
        let mut kept = self
            .base
            .iter()
            .filter(|p| !self.removed.contains(*p))
            .peekable();
        let mut added = self.added.iter().peekable();
        std::iter::from_fn(move || match (kept.peek(), added.peek()) {
            (Some(k), Some(a)) if a < k => added.next(),
            (Some(_), _) => kept.next(),
            (None, _) => added.next(),
        })
    }

    pub fn len(&self) -> usize {
        self.base.len() - self.removed.len() + self.added.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What `workspace.json` records of it, given the hash of its base's listing.
    pub fn record(&self, project: &str) -> WorkspaceRecord {
        WorkspaceRecord {
            schema: SCHEMA.into(),
            project: project.into(),
            added: self.added.iter().cloned().collect(),
            removed: self.removed.iter().cloned().collect(),
        }
    }
}

impl FromIterator<PathBuf> for FileList {
    fn from_iter<I: IntoIterator<Item = PathBuf>>(iter: I) -> FileList {
        FileList {
            base: Arc::new(iter.into_iter().collect()),
            ..FileList::default()
        }
    }
}

impl Serialize for FileList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        super::path_text::many::serialize(self.iter(), s)
    }
}

/// `workspace.json`: the project listing a case-run's workspace started from, and its changes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WorkspaceRecord {
    pub schema: String,
    /// The BLAKE3 hash of the listing in `project-files/`; empty: none (an empty project).
    #[serde(default)]
    pub project: String,
    /// Each path recorded as [`super::path_text`] says.
    #[serde(default, with = "super::path_text::many")]
    pub added: Vec<PathBuf>,
    #[serde(default, with = "super::path_text::many")]
    pub removed: Vec<PathBuf>,
}

/// A project's listing as the run folder keeps it: its JSON and that JSON's hash.
#[derive(Debug, Clone)]
pub struct Listing {
    pub hash: String,
    bytes: Vec<u8>,
}

impl Listing {
    pub fn of(files: &BTreeSet<PathBuf>) -> Listing {
        let bytes = listing_json(files);
        Listing {
            hash: blake3::hash(&bytes).to_hex().to_string(),
            bytes,
        }
    }

    /// Writes it into the run folder `run_dir` unless it is there already (its name is its
    /// hash: a file of that name holds the same listing).
    pub fn keep(&self, run_dir: &Path) -> std::io::Result<()> {
        let path = listing_path(run_dir, &self.hash);
        if path.is_file() {
            return Ok(());
        }
        super::write_atomic(&path, &self.bytes)
    }
}

/// A listing's JSON: every path recorded as [`super::path_text`] says (so none can fail).
fn listing_json(files: &BTreeSet<PathBuf>) -> Vec<u8> {
    let texts: Vec<_> = files.iter().map(|p| super::path_text::encode(p)).collect();
    // A list of strings always serializes.
    serde_json::to_vec(&texts).unwrap_or_default()
}

/// Paths from a listing's JSON (a list of recorded paths), or `None` when it is not one.
fn parse_paths<C: FromIterator<PathBuf>>(bytes: &[u8]) -> Option<C> {
    let texts: Vec<String> = serde_json::from_slice(bytes).ok()?;
    Some(texts.iter().map(|t| super::path_text::decode(t)).collect())
}

/// Where the listing of hash `hash` is kept under `dir` (a run folder, or the cache).
pub fn listing_path(dir: &Path, hash: &str) -> PathBuf {
    dir.join(LISTINGS).join(format!("{hash}.json"))
}

/// The listing of hash `hash` under `dir`, when it is there and its content has that hash
/// (nothing else is read as it).
pub fn read_listing(dir: &Path, hash: &str) -> Option<Vec<u8>> {
    let is_hash = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    if !is_hash {
        return None;
    }
    let bytes = std::fs::read(listing_path(dir, hash)).ok()?;
    (blake3::hash(&bytes).to_hex().as_str() == hash).then_some(bytes)
}

/// A run folder's project listings, each read, checked and parsed once however many
/// case-runs name it.
#[derive(Debug)]
pub struct Listings {
    run_dir: PathBuf,
    read: std::sync::Mutex<HashMap<String, Read>>,
}

/// A listing as read: its files, or why it cannot be used.
type Read = Result<Arc<BTreeSet<PathBuf>>, String>;

impl Listings {
    pub fn new(run_dir: &Path) -> Listings {
        Listings {
            run_dir: run_dir.to_path_buf(),
            read: Default::default(),
        }
    }

    /// The listing of hash `hash`; an error when it is missing or not what its name says.
    fn get(&self, hash: &str) -> Result<Arc<BTreeSet<PathBuf>>, String> {
        let mut read = self.read.lock().unwrap_or_else(|p| p.into_inner());
        read.entry(hash.to_string())
            .or_insert_with(|| {
                read_listing(&self.run_dir, hash)
                    .and_then(|b| parse_paths(&b))
                    .map(Arc::new)
                    .ok_or_else(|| {
                        format!(
                            "the project's file listing {} is missing or altered",
                            listing_path(&self.run_dir, hash).display()
                        )
                    })
            })
            .clone()
    }
}

/// The files recorded for the case-run in `case_dir`: its `workspace.json` (this shape, or the
/// list of every file older versions wrote) over its project's listing from `listings`. A
/// listing that is missing, or not what its name says, is an error: the list would lack the
/// project's files (and a check that a file is gone would pass on it).
pub fn read(case_dir: &Path, listings: &Listings) -> Result<FileList, String> {
    // None when the case-run ended before its workspace was read.
    let Ok(text) = std::fs::read_to_string(case_dir.join(layout::WORKSPACE_JSON)) else {
        return Ok(FileList::default());
    };
    if text.trim_start().starts_with('[') {
        return Ok(parse_paths(text.as_bytes()).unwrap_or_default());
    }
    let Ok(r) = serde_json::from_str::<WorkspaceRecord>(&text) else {
        return Err("its workspace.json is not a file listing".into());
    };
    let base = match r.project.as_str() {
        "" => Arc::default(),
        hash => listings.get(hash)?,
    };
    Ok(FileList::new(base, r.added, r.removed))
}

/// The listing hash a case-run's `workspace.json` names, if any.
pub fn project_of(case_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(case_dir.join(layout::WORKSPACE_JSON)).ok()?;
    serde_json::from_str::<WorkspaceRecord>(&text)
        .ok()
        .map(|r| r.project)
        .filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(paths: &[&str]) -> BTreeSet<PathBuf> {
        paths.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn a_list_is_its_base_with_its_changes_in_path_order() {
        let base = Arc::new(set(&["a", "b/c", "d"]));
        let l = FileList::new(base, set(&["a", "b/a", "e"]), set(&["d", "x"]));
        let all: Vec<_> = l.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(all, ["a", "b/a", "b/c", "e"]);
        assert_eq!(l.len(), 4);
        assert!(l.contains(Path::new("b/a")) && !l.contains(Path::new("d")));
        let r = l.record("h");
        assert_eq!(
            (r.added, r.removed),
            (vec!["b/a".into(), "e".into()], vec!["d".into()])
        );
        assert_eq!(
            serde_json::to_string(&l).unwrap(),
            r#"["a","b/a","b/c","e"]"#
        );
    }

    #[test]
    fn a_recorded_list_reads_back_through_its_listing_and_old_folders_still_read() {
        let d = tempfile::tempdir().unwrap();
        let (run, case) = (d.path(), d.path().join("s/c/run-1"));
        std::fs::create_dir_all(&case).unwrap();
        let listing = Listing::of(&set(&["a", "b"]));
        listing.keep(run).unwrap();
        let l = FileList::new(Arc::new(set(&["a", "b"])), set(&["n"]), set(&["a"]));
        super::super::write_json(&case.join("workspace.json"), &l.record(&listing.hash)).unwrap();
        let back: Vec<_> = read(&case, &Listings::new(run))
            .unwrap()
            .iter()
            .cloned()
            .collect();
        assert_eq!(back, [PathBuf::from("b"), "n".into()]);
        assert_eq!(project_of(&case), Some(listing.hash.clone()));
        // A listing edited after the fact is not read as the project's.
        std::fs::write(listing_path(run, &listing.hash), r#"["a","b","forged"]"#).unwrap();
        let e = read(&case, &Listings::new(run)).unwrap_err();
        assert!(e.contains("missing or altered"), "{e}");
        std::fs::write(case.join("workspace.json"), r#"["x", "y"]"#).unwrap();
        assert_eq!(read(&case, &Listings::new(run)).unwrap().len(), 2);
    }
}
