//! Where staging writes a workspace: a plain folder (a copy of the project), or the case-run's
//! stage layer over the project's shared base (see [`super::layers`]).
//!
//! Staging says what the workspace must hold ("copy this tree to here", "remove that") and the
//! writer makes it so: in a folder directly; in the stage layer by adding files and folders,
//! and by whiteouts and opaque folders for what must not show through from the base.

use std::io;
use std::path::{Path, PathBuf};

use super::layers::{self, Tree, remove_any};

#[derive(Debug)]
pub enum Writer {
    /// The workspace is this folder.
    Plain(PathBuf),
    /// The stage layer, over the base.
    Layered { stage: PathBuf, base: PathBuf },
}

impl Writer {
    /// Where `rel` is written.
    pub fn path(&self, rel: &Path) -> PathBuf {
        match self {
            Writer::Plain(root) => root.join(rel),
            Writer::Layered { stage, .. } => stage.join(rel),
        }
    }

    /// The workspace as staged so far.
    fn tree(&self) -> Tree {
        match self {
            Writer::Plain(root) => Tree::dir(root),
            Writer::Layered { stage, base } => Tree::layered(vec![stage.clone(), base.clone()]),
        }
    }

    /// Whether anything is at `rel` (a symlink counts; it is not followed).
    pub fn exists(&self, rel: &Path) -> bool {
        match self {
            Writer::Plain(root) => std::fs::symlink_metadata(root.join(rel)).is_ok(),
            Writer::Layered { .. } => rel.as_os_str().is_empty() || self.tree().kind(rel).is_some(),
        }
    }

    /// Whether a folder is at `rel`.
    pub fn is_dir(&self, rel: &Path) -> bool {
        match self {
            Writer::Plain(root) => root.join(rel).is_dir(),
            Writer::Layered { .. } => {
                rel.as_os_str().is_empty()
                    || self.tree().kind(rel) == Some(super::confined::EntryKind::Dir)
            }
        }
    }

    /// The text of the file at `rel`, when there is one.
    pub fn read_to_string(&self, rel: &Path) -> Option<String> {
        match self {
            Writer::Plain(root) => std::fs::read_to_string(root.join(rel)).ok(),
            Writer::Layered { .. } => self.tree().read_to_string(rel, 64 << 20).ok(),
        }
    }

    /// Removes what is at `rel`, a folder with all it holds; nothing there is fine.
    pub fn remove(&self, rel: &Path) -> io::Result<()> {
        match self {
            Writer::Plain(root) => remove_any(&root.join(rel)),
            Writer::Layered { stage, base } => {
                remove_any(&stage.join(rel))?;
                if std::fs::symlink_metadata(base.join(rel)).is_ok() {
                    layers::whiteout(&stage.join(rel))?;
                }
                Ok(())
            }
        }
    }

    /// Makes `rel` an empty folder, whatever was there (in the base too).
    pub fn fresh_dir(&self, rel: &Path) -> io::Result<PathBuf> {
        let dest = self.path(rel);
        remove_any(&dest)?;
        std::fs::create_dir_all(&dest)?;
        if let Writer::Layered { base, .. } = self
            && std::fs::symlink_metadata(base.join(rel)).is_ok()
        {
            layers::make_opaque(&dest)?;
        }
        Ok(dest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_and_replacing_hide_the_base() {
        let d = tempfile::tempdir().unwrap();
        let (stage, base) = (d.path().join("stage"), d.path().join("base"));
        std::fs::create_dir_all(base.join("skills/s")).unwrap();
        std::fs::create_dir_all(&stage).unwrap();
        std::fs::write(base.join("skills/s/SKILL.md"), "old").unwrap();
        std::fs::write(base.join("keep"), "k").unwrap();
        let w = Writer::Layered {
            stage: stage.clone(),
            base: base.clone(),
        };
        assert!(w.exists(Path::new("keep")) && w.is_dir(Path::new("skills")));
        w.remove(Path::new("keep")).unwrap();
        assert!(!w.exists(Path::new("keep")));
        let dir = w.fresh_dir(Path::new("skills/s")).unwrap();
        std::fs::write(dir.join("NEW.md"), "new").unwrap();
        assert!(!w.exists(Path::new("skills/s/SKILL.md")));
        assert_eq!(
            w.read_to_string(Path::new("skills/s/NEW.md")).unwrap(),
            "new"
        );
        // The base itself is untouched.
        assert!(base.join("keep").exists() && base.join("skills/s/SKILL.md").exists());
    }
}
