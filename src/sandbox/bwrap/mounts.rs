//! What a bubblewrap sandbox shows of the host before what a command needs: its namespaces
//! ([`BASE`]), the system folders ([`system`]), an empty folder over every private or hidden
//! folder ([`covers`]), and the arguments that bind and mask.

use std::path::{Path, PathBuf};

use crate::sandbox::Network;
use crate::sandbox::shown;
use crate::sandbox::spec::JailSpec;

/// What every sandbox is, before what is shown: its namespaces (the network's is added unless
/// `--network host`), no capabilities and no way to get them back, death with assay, its own
/// `/proc` and a minimal `/dev`.
pub const BASE: &[&str] = &[
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    // Run as root, bubblewrap would keep every capability inside: enough to unmount what
    // hides the host, or remount it writable. None (and no user namespace to get them back
    // in: see [`NO_USERNS`]).
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
];

/// No user namespaces inside. bubblewrap does it by running the command in a second, nested
/// user namespace, where the first process could not mount a copy-on-write workspace; so with
/// one, the first process's seccomp filter refuses them instead (see `inside`), after the mount.
pub const NO_USERNS: &str = "--disable-userns";

/// What the kernel shows of itself besides `/proc`: read-only.
const SYS: &str = "/sys";

/// The folders every sandbox has empty and private.
const PRIVATE: &[&str] = &["/tmp", "/var/tmp", "/run", "/dev/shm", "/home", "/root"];

/// What every command of one case-run's sandbox starts with: [`BASE`], its network, the
/// system folders, and an empty folder over every private folder and everything hidden
/// within them; with the folders actually covered.
pub(super) fn covers(spec: &JailSpec) -> (Vec<String>, Vec<PathBuf>) {
    let mut a: Vec<String> = BASE.iter().map(|x| x.to_string()).collect();
    if spec.overlay.is_none() {
        a.push(NO_USERNS.into());
    }
    a.extend(["--hostname".into(), "assay-sandbox".into()]);
    if spec.network != Network::Host {
        a.push("--unshare-net".into());
    }
    a.extend(system());
    let mut hidden: Vec<PathBuf> = PRIVATE
        .iter()
        .map(PathBuf::from)
        .chain(spec.real_home.clone())
        .chain(spec.hidden.iter().cloned())
        .filter(|p| p.is_absolute() && p.as_os_str().len() > 1)
        .filter(|p| PRIVATE.iter().any(|d| p == Path::new(d)) || in_system(p))
        .collect();
    hidden.sort_by_key(|p| p.components().count());
    let mut covered: Vec<PathBuf> = Vec::new();
    for h in hidden {
        if covered.iter().any(|c| h.starts_with(c)) {
            continue;
        }
        // Only real folders can be covered; a symlink (`/var/run -> /run`) follows its target.
        match std::fs::symlink_metadata(&h) {
            Ok(m) if m.is_dir() => {
                if let Some(n) = spec.tmpfs_size {
                    a.extend(["--size".into(), n.to_string()]);
                }
                a.extend(["--tmpfs".into(), h.display().to_string()]);
                covered.push(h);
            }
            Ok(m) if m.is_file() => mask(&mut a, &h),
            _ => {}
        }
    }
    if std::fs::symlink_metadata("/var/run").is_ok_and(|m| m.file_type().is_symlink()) {
        a.extend(["--symlink".into(), "/run".into(), "/var/run".into()]);
    }
    if spec.network == Network::Host {
        // Name resolution may live under /run (systemd-resolved).
        if let Ok(real) = std::fs::canonicalize("/etc/resolv.conf")
            && (covered.iter().any(|c| real.starts_with(c)) || !in_system(&real))
        {
            ro_bind_at(&mut a, &real, &real);
        }
    }
    (a, covered)
}

/// The system folders, read-only, each where the host has it (a link as a link), and `/sys`:
/// bubblewrap's arguments for all a sandbox shows of the host's tree before its toolchains.
pub fn system() -> Vec<String> {
    let mut a = Vec::new();
    for dir in shown::SYSTEM.iter().chain(&[SYS]) {
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(to) = std::fs::read_link(dir) {
                    a.extend(["--symlink".into(), to.display().to_string(), (*dir).into()]);
                }
            }
            Ok(m) if m.is_dir() => ro_bind_at(&mut a, Path::new(dir), Path::new(dir)),
            _ => {}
        }
    }
    a
}

/// Whether the system folders that every sandbox shows hold `p` (by its path as given, and
/// by its real path).
pub fn in_system(p: &Path) -> bool {
    static REAL: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    let system = REAL.get_or_init(|| {
        let real = shown::SYSTEM
            .iter()
            .filter_map(|d| std::fs::canonicalize(d).ok());
        shown::SYSTEM
            .iter()
            .map(PathBuf::from)
            .chain(real)
            .collect()
    });
    if system.iter().any(|d| p.starts_with(d)) {
        return true;
    }
    std::fs::canonicalize(p).is_ok_and(|r| system.iter().any(|d| r.starts_with(d)))
}

/// `--ro-bind SOURCE DEST`.
pub(super) fn ro_bind_at(a: &mut Vec<String>, source: &Path, dest: &Path) {
    a.extend([
        "--ro-bind".into(),
        source.display().to_string(),
        dest.display().to_string(),
    ]);
}

/// `--bind PATH PATH`: writable.
pub(super) fn bind(a: &mut Vec<String>, path: &Path) {
    let p = path.display().to_string();
    a.extend(["--bind".into(), p.clone(), p]);
}

/// An empty, read-only file (or folder) over `path`.
pub(super) fn mask(a: &mut Vec<String>, path: &Path) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        let p = path.display().to_string();
        a.extend(["--tmpfs".into(), p.clone(), "--remount-ro".into(), p]);
    } else {
        ro_bind_at(a, Path::new("/dev/null"), path);
    }
}
