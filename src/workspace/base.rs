//! The bottom layer of copy-on-write workspaces: one filtered copy of a project per run.
//!
//! Every case-run of a project shares it, read-only, as the lowest overlay layer (see
//! [`super::layers`]), so staging a case-run costs its own files only, whatever the size of
//! the project. It is made the first time a case-run of that project is staged and removed
//! when the run ends.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::snapshot::Snapshot;

/// One project's copy, with what the copy left out.
#[derive(Debug)]
pub struct Base {
    pub dir: PathBuf,
    /// Its files as copied: every case-run's "before" starts from it.
    pub snapshot: Snapshot,
    /// The project's symlinks left out because they point outside it.
    pub skipped_links: Vec<PathBuf>,
}

/// A project, and what is kept out of its copy.
type Key = (PathBuf, Vec<PathBuf>);

/// The bases of a run, by project and by what is kept out of them.
#[derive(Debug)]
pub struct Bases {
    parent: PathBuf,
    made: Mutex<HashMap<Key, Arc<Base>>>,
}

impl Bases {
    /// Bases are made in `parent` (the workspaces' parent, hidden from every sandbox).
    pub fn new(parent: PathBuf) -> Bases {
        Bases {
            parent,
            made: Mutex::new(HashMap::new()),
        }
    }

    /// The copy of `project` without `exclude`, made now if it is the first asked for.
    pub fn get(&self, project: &Path, exclude: &[PathBuf]) -> std::io::Result<Arc<Base>> {
        let key = (project.to_path_buf(), exclude.to_vec());
        // Held while copying: other case-runs of the project wait for the one copy.
        let mut made = self.made.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = made.get(&key) {
            return Ok(b.clone());
        }
        crate::record::write::create_missing_private(&self.parent)?;
        let dir = tempfile::Builder::new()
            .prefix("assay-base-")
            .tempdir_in(&self.parent)?
            .keep();
        let copied = match super::copy::copy_tree_reporting(project, &dir, true, exclude) {
            Ok(c) => c,
            Err(e) => {
                remove(&dir);
                return Err(e);
            }
        };
        let base = Arc::new(Base {
            snapshot: Snapshot::take(&dir),
            dir,
            skipped_links: copied.skipped_links,
        });
        made.insert(key, base.clone());
        Ok(base)
    }
}

impl Drop for Bases {
    fn drop(&mut self) {
        let made = self.made.get_mut().unwrap_or_else(|p| p.into_inner());
        for base in made.values() {
            remove(&base.dir);
        }
    }
}

/// Removes a base; one left behind is only disk space, in a folder of assay's own.
fn remove(dir: &Path) {
    if let Err(e) = super::remove::tree(dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        eprintln!("warning: cannot remove {}: {e}", dir.display());
    }
}
