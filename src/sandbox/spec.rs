//! What shapes one case-run's sandbox, whatever the backend ([`JailSpec`]): its folders, what
//! it hides and shows, its network, a copy-on-write workspace's layers; and where the
//! network's sockets appear inside.

use std::path::{Path, PathBuf};

use super::Network;

/// Where the forwarder's sockets appear inside.
pub const NET_INSIDE: &str = "/run/assay/net";

/// Everything that shapes one case-run's sandbox.
#[derive(Debug, Clone)]
pub struct JailSpec {
    /// The case-run's folder (`work/` and `home/`): writable.
    pub case_dir: PathBuf,
    /// The workspace root (`work/`).
    pub root: PathBuf,
    /// Workspace-relative folders that alone are writable (UAAPS `writable-paths`); empty: all.
    pub writable: Vec<PathBuf>,
    /// Folders (or files) covered by an empty one: projects, run folder, cache, workspaces.
    pub hidden: Vec<PathBuf>,
    /// The user's real HOME, hidden too.
    pub real_home: Option<PathBuf>,
    /// Extra host folders shown read-only (`[run] sandbox_read`).
    pub read_only: Vec<PathBuf>,
    /// Host files covered by an empty one, even inside a folder that is shown.
    pub masked: Vec<PathBuf>,
    pub network: Network,
    /// A copy-on-write workspace: its layers, mounted over `root` inside.
    pub overlay: Option<Layers>,
    /// The size of the sandbox's own `/tmp`, `/dev/shm`, `/run` and `/var/tmp` (the disk
    /// limit); `None`: the kernel's default (half the memory).
    pub tmpfs_size: Option<u64>,
}

/// The layers of a copy-on-write workspace (see `workspace::layers`).
#[derive(Debug, Clone)]
pub struct Layers {
    /// The read-only layers, top first (the case-run's stage, the project's shared copy).
    pub lower: Vec<PathBuf>,
    /// The agent's layer, and overlayfs's work folder beside it (both in `dir`).
    pub upper: PathBuf,
    pub work: PathBuf,
    /// The case-run's folder holding `upper` and `work` (and the stage).
    pub dir: PathBuf,
}

/// Whether overlayfs can take `path` in its mount options (no `:`, `,` or `\\`, UTF-8).
pub fn overlay_safe(path: &Path) -> bool {
    path.to_str().is_some_and(|p| !p.contains([':', ',', '\\']))
}
