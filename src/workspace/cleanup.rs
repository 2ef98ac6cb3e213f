//! Removing finished workspaces in the background: a case-run's result does not wait for its
//! workspace to be deleted (100,000 files the agent left took longer to remove than the agent
//! took to run), and the run waits for what is left only up to a bound, then names the
//! folders it left.
//!
//! One thread removes, one workspace at a time, so removals never take more than one core
//! from the case-runs still running.
//!
//! A workspace's own folders (the workspace, `work/`, `home/`, `tmp/`) are emptied rather than
//! removed, and the next workspace made in the same parent takes them ([`spare`]); what is
//! left is removed at the end ([`finish`]). On ext4 without a journal a new inode is slow to
//! find among those freed in the last seconds (the kernel skips each one, a lookup per inode
//! skipped), and freeing a folder's block is a discard: making and removing four folders per
//! case-run made every later file and folder of the run slower, the more the longer the run
//! (issue 46). A spare is emptied only once the case-run's processes are gone (the sandbox
//! ends them all), and its folders get back the modes they were made with.

use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The folders waiting to be removed (the one being removed included).
struct Pending {
    dirs: Mutex<Vec<PathBuf>>,
    done: Condvar,
}

static PENDING: Pending = Pending {
    dirs: Mutex::new(Vec::new()),
    done: Condvar::new(),
};

/// Emptied workspaces, by their parent, for the next workspace made there.
static SPARES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// At most this many emptied workspaces are kept (more than any run's jobs need: one is kept
/// when a case-run ends and taken when the next one starts).
const MAX_SPARES: usize = 64;

/// The folders a workspace is made with, kept in a spare.
const OWN: [&str; 3] = ["work", "home", "tmp"];

/// The mode a new workspace's folders are made with (the umask applied), noted by [`made`].
static MODE: OnceLock<u32> = OnceLock::new();

/// Notes the mode of `folder`, one of a new workspace's own folders as just made.
pub fn made(folder: &Path) {
    if MODE.get().is_none()
        && let Ok(meta) = std::fs::metadata(folder)
    {
        MODE.get_or_init(|| meta.permissions().mode() & 0o7777);
    }
}

/// An emptied workspace in `parent` to use instead of making one, if there is one.
pub fn spare(parent: &Path) -> Option<PathBuf> {
    let mut spares = SPARES.lock().unwrap_or_else(|p| p.into_inner());
    let i = spares.iter().position(|d| d.parent() == Some(parent))?;
    Some(spares.swap_remove(i))
}

/// A folder to remove, and whether whole (else kept as a spare where it can be).
type Job = (PathBuf, bool);

static QUEUE: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();

/// The remover's queue, its thread started on first use.
fn queue() -> &'static Mutex<Sender<Job>> {
    QUEUE.get_or_init(|| {
        let (tx, rx) = channel::<Job>();
        std::thread::spawn(move || {
            for (dir, whole) in rx {
                remove(&dir, whole);
                let mut pending = PENDING.dirs.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(i) = pending.iter().position(|d| *d == dir) {
                    pending.swap_remove(i);
                }
                PENDING.done.notify_all();
            }
        });
        Mutex::new(tx)
    })
}

/// Removes `dir`: whole, or emptied and kept as a spare where it can be.
fn remove(dir: &Path, whole: bool) {
    if !whole && keep_spare(dir) {
        return;
    }
    // A workspace left behind is disk space in a folder of assay's own, never a result: said
    // by `finish` if it is still there at the end.
    let _ = super::remove::tree(dir);
}

/// Empties `dir` down to its own folders, empty, with the modes they were made with, and keeps
/// it as a spare; false where it cannot (it is then removed whole).
fn keep_spare(dir: &Path) -> bool {
    let Some(&mode) = MODE.get() else {
        return false;
    };
    if SPARES.lock().unwrap_or_else(|p| p.into_inner()).len() >= MAX_SPARES
        || super::remove::children(dir).is_err()
    {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    for entry in entries {
        let Ok(entry) = entry else { return false };
        let name = entry.file_name();
        let reset = match OWN.iter().any(|o| name == *o) {
            true => std::fs::set_permissions(entry.path(), Permissions::from_mode(mode)),
            // Another folder (an overlay's layers): removed, so a spare is as a new workspace.
            false => super::remove::tree(&entry.path()),
        };
        if reset.is_err() {
            return false;
        }
    }
    let private = Permissions::from_mode(super::set_id::PRIVATE);
    if std::fs::set_permissions(dir, private).is_err() {
        return false;
    }
    SPARES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(dir.to_path_buf());
    true
}

/// Removes `dir` in the background.
pub fn later(dir: PathBuf) {
    send(dir, false);
}

fn send(dir: PathBuf, whole: bool) {
    PENDING
        .dirs
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(dir.clone());
    let sent = queue()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send((dir.clone(), whole));
    if sent.is_err() {
        // No remover: remove it here.
        let _ = super::remove::tree(&dir);
        let mut pending = PENDING.dirs.lock().unwrap_or_else(|p| p.into_inner());
        pending.retain(|d| *d != dir);
    }
}

/// Waits until every workspace given to [`later`] is removed, the spares too, at most
/// `within`; returns those still there.
pub fn finish(within: Duration) -> Vec<PathBuf> {
    let until = Instant::now() + within;
    wait(until);
    let spares = std::mem::take(&mut *SPARES.lock().unwrap_or_else(|p| p.into_inner()));
    for dir in spares {
        send(dir, true);
    }
    wait(until)
}

/// Waits until nothing is pending, at most until `until`; returns what still is.
fn wait(until: Instant) -> Vec<PathBuf> {
    let mut pending = PENDING.dirs.lock().unwrap_or_else(|p| p.into_inner());
    while !pending.is_empty() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        pending = PENDING
            .done
            .wait_timeout(pending, left)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
    pending.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspaces_go_in_the_background_and_finish_waits_for_them() {
        // An emptied workspace is the next one made in its parent, its folders as made.
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("assay-ws-1");
        for own in OWN {
            std::fs::create_dir_all(ws.join(own)).unwrap();
        }
        made(&ws.join("work"));
        let mode = std::fs::metadata(ws.join("work"))
            .unwrap()
            .permissions()
            .mode();
        std::fs::create_dir_all(ws.join("work/a/b")).unwrap();
        std::fs::create_dir_all(ws.join("layers/upper")).unwrap();
        std::fs::write(ws.join("home/.rc"), "x").unwrap();
        std::fs::set_permissions(ws.join("tmp"), Permissions::from_mode(0o500)).unwrap();
        later(ws.clone());
        assert!(wait(Instant::now() + Duration::from_secs(30)).is_empty());
        assert_eq!(spare(d.path()), Some(ws.clone()));
        let mut left: Vec<_> = std::fs::read_dir(&ws)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        let mut own: Vec<_> = OWN.map(std::ffi::OsString::from).into();
        own.sort();
        assert_eq!(left, own);
        for own in OWN {
            let meta = std::fs::metadata(ws.join(own)).unwrap();
            assert_eq!(meta.permissions().mode(), mode, "{own}");
            assert_eq!(std::fs::read_dir(ws.join(own)).unwrap().count(), 0, "{own}");
        }
        assert_eq!(spare(d.path()), None);
        later(ws.clone());
        assert!(finish(Duration::from_secs(30)).is_empty());
        assert!(!ws.exists());

        let dirs: Vec<PathBuf> = (0..3).map(|i| d.path().join(format!("ws{i}"))).collect();
        for w in &dirs {
            std::fs::create_dir_all(w.join("a/b")).unwrap();
            std::fs::write(w.join("a/b/f"), "x").unwrap();
            later(w.clone());
        }
        assert!(finish(Duration::from_secs(30)).is_empty());
        assert!(dirs.iter().all(|w| !w.exists()));
    }
}
