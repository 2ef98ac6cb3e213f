//! With the `landlock` backend there is no PID namespace to end a case-run's processes with
//! it, so the first process inside is their subreaper: every process the command starts and
//! leaves behind (a double fork, a `setsid` daemon) becomes its child, and it kills them all
//! when the command ends, when assay stops it (SIGTERM, then after most of the grace period),
//! or when assay itself dies. It stays outside the command's Landlock domain: with Landlock
//! ABI 6 the command cannot signal it.

use std::time::{Duration, Instant};

/// The signals this process waits for instead of handling.
fn waited() -> libc::sigset_t {
    // SAFETY: a zeroed set, filled by sigemptyset and sigaddset.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Makes this process the subreaper of all it starts, dying with assay (as SIGHUP), with the
/// signals it waits for blocked until it waits. Call before starting the command.
pub fn prepare() -> std::io::Result<()> {
    let parent = std::os::unix::process::parent_id();
    let set = waited();
    // SAFETY: prctl and sigprocmask with plain values and a set that outlives the calls.
    unsafe {
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0
            || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGHUP, 0, 0, 0) != 0
            || libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    if std::os::unix::process::parent_id() != parent {
        // assay died before the death signal was set.
        return Err(std::io::Error::other("assay is gone"));
    }
    Ok(())
}

/// In the child, before `exec`: the signal mask back to empty (`exec` keeps it).
pub fn unblock() -> std::io::Result<()> {
    // SAFETY: an empty set, set as the mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        if libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Waits for `command` to end, reaping every orphan on the way, then kills all that is left;
/// returns the command's wait status. `grace`: how long after SIGTERM the command and its
/// processes may take before they are killed (a little less than assay's, which then kills
/// this process's group).
pub fn supervise(command: libc::pid_t, grace: Duration) -> libc::c_int {
    let set = waited();
    let mut stopping: Option<Instant> = None;
    loop {
        if let Some(status) = reap(command) {
            kill_descendants(command);
            return status;
        }
        let wait = match stopping {
            Some(t) => grace.saturating_sub(t.elapsed()),
            None => Duration::from_secs(3600),
        };
        if stopping.is_some() && wait.is_zero() {
            if let Some(status) = kill_descendants(command) {
                return status;
            }
            stopping = Some(Instant::now() + Duration::from_secs(3600));
            continue;
        }
        let timeout = libc::timespec {
            tv_sec: wait.as_secs() as libc::time_t,
            tv_nsec: wait.subsec_nanos() as libc::c_long,
        };
        // SAFETY: the set and timeout outlive the call; no siginfo is asked for.
        let sig = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &timeout) };
        match sig {
            libc::SIGTERM | libc::SIGINT => {
                stopping.get_or_insert_with(Instant::now);
            }
            // assay died: nothing is waiting for the command any more.
            libc::SIGHUP => {
                if let Some(status) = kill_descendants(command) {
                    return status;
                }
            }
            _ => {}
        }
    }
}

/// Reaps every child that ended; the command's status once it has.
fn reap(command: libc::pid_t) -> Option<libc::c_int> {
    let mut found = None;
    loop {
        let mut status = 0;
        // SAFETY: waitpid with a status it fills.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return found;
        }
        if pid == command {
            found = Some(status);
        }
    }
}

/// Kills every descendant: each child, then the orphans that become children as their
/// parents die, until none is left (bounded, for a fork bomb that outpaces it). Returns
/// `command`'s wait status if it was among them.
pub fn kill_descendants(command: libc::pid_t) -> Option<libc::c_int> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut found = None;
    while Instant::now() < deadline {
        let children = children();
        if children.is_empty() {
            break;
        }
        for pid in &children {
            // SAFETY: a signal to a child of this process (not yet reaped, so not reused).
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
        for pid in &children {
            let mut status = 0;
            // SAFETY: waitpid on a child that was just killed.
            if unsafe { libc::waitpid(*pid, &mut status, 0) } == command {
                found = Some(status);
            }
        }
        // Orphans of the killed reparent to this process: reap any that ended meanwhile.
        found = reap(command).or(found);
    }
    found
}

/// This process's children: `/proc/self/task/<pid>/children`, or a walk of `/proc`.
fn children() -> Vec<libc::pid_t> {
    let me = std::process::id();
    if let Ok(list) = std::fs::read_to_string(format!("/proc/self/task/{me}/children")) {
        return list
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    let (_, rest) = s.rsplit_once(") ")?;
                    rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(me)
        })
        .collect()
}
