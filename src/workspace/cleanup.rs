//! Removing finished workspaces in the background: a case-run's result does not wait for its
//! workspace to be deleted (100,000 files the agent left took longer to remove than the agent
//! took to run), and the run waits for what is left only up to a bound, then names the
//! folders it left.
//!
//! One thread removes, one workspace at a time, so removals never take more than one core
//! from the case-runs still running.

use std::path::PathBuf;
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

static QUEUE: OnceLock<Mutex<Sender<PathBuf>>> = OnceLock::new();

/// The remover's queue, its thread started on first use.
fn queue() -> &'static Mutex<Sender<PathBuf>> {
    QUEUE.get_or_init(|| {
        let (tx, rx) = channel::<PathBuf>();
        std::thread::spawn(move || {
            for dir in rx {
                // A workspace left behind is disk space in a folder of assay's own, never a
                // result: said by `finish` if it is still there at the end.
                let _ = super::remove::tree(&dir);
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

/// Removes `dir` in the background.
pub fn later(dir: PathBuf) {
    PENDING
        .dirs
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(dir.clone());
    let sent = queue()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send(dir.clone());
    if sent.is_err() {
        // No remover: remove it here.
        let _ = super::remove::tree(&dir);
        let mut pending = PENDING.dirs.lock().unwrap_or_else(|p| p.into_inner());
        pending.retain(|d| *d != dir);
    }
}

/// Waits until every workspace given to [`later`] is removed, at most `within`; returns those
/// still there.
pub fn finish(within: Duration) -> Vec<PathBuf> {
    let until = Instant::now() + within;
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
        let d = tempfile::tempdir().unwrap();
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
