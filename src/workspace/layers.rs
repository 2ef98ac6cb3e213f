//! A workspace as overlay layers: read on the host as the agent saw it, and written at staging.
//!
//! In the sandbox a workspace is an overlayfs mount: the project's filtered copy, shared by
//! every case-run of the run, as the bottom layer; the case-run's own staged files (overlays,
//! the skill, fixtures) above it; and on top the layer the agent writes, which ends up holding
//! exactly its changes. The mount exists only inside the sandbox, so the host reads the layers
//! the way overlayfs does (Linux's `Documentation/filesystems/overlayfs.rst`):
//! - a name is looked up from the top layer down; the first layer that has it decides;
//! - a whiteout (a character device 0:0) says the name was removed: nothing below counts;
//! - folders merge with the folders of the same name below, unless one is *opaque* (the
//!   `user.overlay.opaque` attribute is `y`), which hides everything below it;
//! - any other kind of entry hides everything below it.
//!
//! Nothing here follows a symlink: one in the merged view is refused as [`super::confined`]
//! refuses it, and each file is finally opened through [`super::confined`] in its layer.

use std::io;
use std::path::{Path, PathBuf};

use super::confined::{self, EntryKind};

/// The attribute overlayfs (mounted with `userxattr`) marks an opaque folder with.
pub const OPAQUE_XATTR: &str = "user.overlay.opaque";

/// A workspace on the host: one folder, or overlay layers, top first.
#[derive(Debug, Clone)]
pub struct Tree {
    layers: Vec<PathBuf>,
    /// A plain copy of the merged view, once one is asked for (see [`Tree::folder`]).
    merged: std::sync::Arc<std::sync::OnceLock<Option<PathBuf>>>,
}

impl PartialEq for Tree {
    fn eq(&self, other: &Tree) -> bool {
        self.layers == other.layers
    }
}

impl Tree {
    /// A workspace that is a plain folder.
    pub fn dir(root: impl Into<PathBuf>) -> Tree {
        Tree {
            layers: vec![root.into()],
            merged: Default::default(),
        }
    }

    /// A workspace of overlay layers, the top one first.
    pub fn layered(layers: Vec<PathBuf>) -> Tree {
        debug_assert!(!layers.is_empty());
        Tree {
            layers,
            merged: Default::default(),
        }
    }

    /// The folder when the workspace is one.
    pub fn as_dir(&self) -> Option<&Path> {
        match self.layers.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

    /// A folder holding the workspace, for what needs one (a native plugin is given a path):
    /// the folder itself, or for layers a plain copy of the merged view made once, beside the
    /// top layer. `None` when that copy cannot be made.
    pub fn folder(&self) -> Option<PathBuf> {
        if let Some(dir) = self.as_dir() {
            return Some(dir.to_path_buf());
        }
        self.merged
            .get_or_init(|| {
                let to = self.layers[0].with_file_name("merged");
                self.materialize(&to)
                    .inspect_err(|e| {
                        eprintln!(
                            "warning: cannot copy the workspace to {}: {e}",
                            to.display()
                        )
                    })
                    .ok()
                    .map(|()| to)
            })
            .clone()
    }

    /// The layers, top first (one for a plain folder).
    pub fn layers(&self) -> &[PathBuf] {
        &self.layers
    }

    /// Which layer holds `rel` in the merged view, and what it is there. A symlink anywhere
    /// on the way answers `EntryKind::Symlink` (with the layer of that symlink).
    fn resolve(&self, rel: &Path) -> io::Result<(usize, EntryKind)> {
        let names = confined::names(rel)?;
        let mut candidates: Vec<usize> = (0..self.layers.len()).collect();
        let mut prefix = PathBuf::new();
        for (k, name) in names.iter().enumerate() {
            prefix.push(name);
            let last = k + 1 == names.len();
            let mut top: Option<(usize, std::fs::Metadata)> = None;
            let mut below: Vec<usize> = Vec::new();
            for &i in &candidates {
                let at = self.layers[i].join(&prefix);
                let meta = match std::fs::symlink_metadata(&at) {
                    Ok(m) => m,
                    Err(e) if is_absent(&e) => continue,
                    Err(e) => return Err(e),
                };
                if is_whiteout(&meta) {
                    break;
                }
                let dir = meta.is_dir();
                if top.is_none() {
                    top = Some((i, meta));
                } else if !dir {
                    break;
                }
                if !dir || last {
                    break;
                }
                below.push(i);
                if is_opaque(&at) {
                    break;
                }
            }
            let Some((i, meta)) = top else {
                return Err(io::ErrorKind::NotFound.into());
            };
            let kind = kind_of(&meta);
            if kind == EntryKind::Symlink || last {
                return Ok((i, kind));
            }
            if kind != EntryKind::Dir {
                return Err(io::ErrorKind::NotADirectory.into());
            }
            candidates = below;
        }
        Err(io::ErrorKind::NotFound.into())
    }

    /// The layer that holds the regular file at `rel`, refusing a symlink on the way.
    fn layer_of(&self, rel: &Path) -> io::Result<&Path> {
        if let Some(dir) = self.as_dir() {
            return Ok(dir);
        }
        match self.resolve(rel)? {
            (_, EntryKind::Symlink) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                confined::Refused::Symlink(rel.to_path_buf()),
            )),
            (i, _) => Ok(&self.layers[i]),
        }
    }

    /// [`confined::open`] in the merged view.
    pub fn open(&self, rel: &Path) -> io::Result<std::fs::File> {
        confined::open(self.layer_of(rel)?, rel)
    }

    /// [`confined::read`] in the merged view.
    pub fn read(&self, rel: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
        confined::read(self.layer_of(rel)?, rel, max_bytes)
    }

    /// [`confined::read_to_string`] in the merged view.
    pub fn read_to_string(&self, rel: &Path, max_bytes: u64) -> io::Result<String> {
        confined::read_to_string(self.layer_of(rel)?, rel, max_bytes)
    }

    /// [`confined::copy_out_max`] from the merged view.
    pub fn copy_out_max(&self, rel: &Path, dest: &Path, max_bytes: u64) -> io::Result<u64> {
        confined::copy_out_max(self.layer_of(rel)?, rel, dest, max_bytes)
    }

    /// [`confined::kind`] in the merged view.
    pub fn kind(&self, rel: &Path) -> Option<EntryKind> {
        if let Some(dir) = self.as_dir() {
            return confined::kind(dir, rel);
        }
        self.resolve(rel).ok().map(|(_, k)| k)
    }

    /// Makes `to` (an empty or missing folder of assay's own) a plain copy of the merged view:
    /// the bottom layer copied, then each layer above applied to it. For a workspace kept for
    /// the user to look at; nothing of a layer is followed.
    pub fn materialize(&self, to: &Path) -> io::Result<()> {
        let mut layers = self.layers.iter().rev();
        if let Some(bottom) = layers.next() {
            super::copy::copy_tree(bottom, to, false)?;
        }
        for layer in layers {
            apply_layer(layer, to)?;
        }
        Ok(())
    }
}

fn is_absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

fn kind_of(meta: &std::fs::Metadata) -> EntryKind {
    let t = meta.file_type();
    if t.is_symlink() {
        EntryKind::Symlink
    } else if t.is_dir() {
        EntryKind::Dir
    } else if t.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    }
}

/// Whether an entry is an overlayfs whiteout: a character device numbered 0:0.
pub fn is_whiteout(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    meta.file_type().is_char_device() && meta.rdev() == 0
}

/// Whether the folder at `path` (a path of assay's own) is marked opaque.
pub fn is_opaque(path: &Path) -> bool {
    let mut value = [0u8; 2];
    matches!(
        rustix::fs::lgetxattr(path, OPAQUE_XATTR, &mut value),
        Ok(1) if value[0] == b'y'
    )
}

/// Puts a whiteout at `path` (replacing what is there): in a layer, it hides the name below.
pub fn whiteout(path: &Path) -> io::Result<()> {
    remove_any(path)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // Overlay layers exist only with bubblewrap, on Linux.
    #[cfg(target_os = "linux")]
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::empty(),
        0,
    )?;
    Ok(())
}

/// Marks the folder at `path` opaque: in a layer, it hides the folder of that name below.
pub fn make_opaque(path: &Path) -> io::Result<()> {
    rustix::fs::lsetxattr(path, OPAQUE_XATTR, b"y", rustix::fs::XattrFlags::empty())?;
    Ok(())
}

/// Removes whatever is at `path` (a folder with all it holds); nothing there is fine.
pub(crate) fn remove_any(path: &Path) -> io::Result<()> {
    let r = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => super::remove::tree(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if is_absent(&e) => Ok(()),
        Err(e) => Err(e),
    };
    match r {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Applies one layer onto the plain folder `to`, as overlayfs would show it on top: whiteouts
/// remove, opaque folders replace, other folders merge, files and symlinks replace.
fn apply_layer(layer: &Path, to: &Path) -> io::Result<()> {
    let walker = ignore::WalkBuilder::new(layer)
        .standard_filters(false)
        .follow_links(false)
        .build();
    for entry in walker {
        let entry = entry.map_err(io::Error::other)?;
        if entry.depth() == 0 {
            continue;
        }
        let rel = entry.path().strip_prefix(layer).unwrap_or(entry.path());
        let dest = to.join(rel);
        let meta = std::fs::symlink_metadata(entry.path())?;
        if is_whiteout(&meta) {
            remove_any(&dest)?;
        } else if meta.is_dir() {
            let keep = std::fs::symlink_metadata(&dest).is_ok_and(|m| m.is_dir());
            if !keep || is_opaque(entry.path()) {
                remove_any(&dest)?;
                std::fs::create_dir(&dest)?;
            }
        } else if meta.file_type().is_symlink() {
            remove_any(&dest)?;
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &dest)?;
        } else if meta.is_file() {
            remove_any(&dest)?;
            super::sparse::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// base: `a/x`, `a/y`, `b/z`, `gone`, `link -> a`; stage: `a/y` changed, `gone` whited
    /// out, `b/` opaque with `b/new`; top: `a/x` whited out, `c` new.
    fn layers() -> (tempfile::TempDir, Tree) {
        let d = tempfile::tempdir().unwrap();
        let (top, stage, base) = (
            d.path().join("top"),
            d.path().join("stage"),
            d.path().join("base"),
        );
        for dir in [
            base.join("a"),
            base.join("b"),
            stage.join("a"),
            stage.join("b"),
            top.join("a"),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(base.join("a/x"), "x").unwrap();
        std::fs::write(base.join("a/y"), "y").unwrap();
        std::fs::write(base.join("b/z"), "z").unwrap();
        std::fs::write(base.join("gone"), "g").unwrap();
        std::os::unix::fs::symlink("a", base.join("link")).unwrap();
        std::fs::write(stage.join("a/y"), "y2").unwrap();
        whiteout(&stage.join("gone")).unwrap();
        make_opaque(&stage.join("b")).unwrap();
        std::fs::write(stage.join("b/new"), "n").unwrap();
        whiteout(&top.join("a/x")).unwrap();
        std::fs::write(top.join("c"), "c").unwrap();
        (d, Tree::layered(vec![top, stage, base]))
    }

    #[test]
    fn reads_the_merged_view() {
        let (_d, t) = layers();
        let s = |p: &str| t.read_to_string(Path::new(p), 100).ok();
        assert_eq!(s("a/y").as_deref(), Some("y2"));
        assert_eq!(s("c").as_deref(), Some("c"));
        assert_eq!(s("b/new").as_deref(), Some("n"));
        assert_eq!(s("a/x"), None, "whited out above");
        assert_eq!(s("gone"), None, "whited out in the middle");
        assert_eq!(s("b/z"), None, "hidden by an opaque folder");
        assert_eq!(t.kind(Path::new("a")), Some(EntryKind::Dir));
        assert_eq!(t.kind(Path::new("link")), Some(EntryKind::Symlink));
        assert_eq!(t.kind(Path::new("link/y")), Some(EntryKind::Symlink));
        let e = t.read(Path::new("link/y"), 100).unwrap_err();
        assert!(confined::is_symlink_error(&e), "{e}");
        assert!(t.read(Path::new("../x"), 100).is_err());
    }

    #[test]
    fn materializes_what_overlayfs_would_show() {
        let (d, t) = layers();
        let to = d.path().join("merged");
        t.materialize(&to).unwrap();
        let mut seen: Vec<String> = ignore::WalkBuilder::new(&to)
            .standard_filters(false)
            .build()
            .flatten()
            .filter(|e| e.depth() > 0 && !e.file_type().is_some_and(|t| t.is_dir()))
            .map(|e| e.path().strip_prefix(&to).unwrap().display().to_string())
            .collect();
        seen.sort();
        assert_eq!(seen, ["a/y", "b/new", "c", "link"]);
        assert_eq!(std::fs::read_to_string(to.join("a/y")).unwrap(), "y2");
    }
}
