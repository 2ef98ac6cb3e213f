//! What a case-run takes of the disk, as its disk limit counts it, and stopping it at once
//! past the limit. Three parts, added:
//! - its folder (workspace, HOME, temp), walked: every file, folder and link counts the
//!   blocks it holds (a sparse file's holes count nothing) **plus 4 KiB for its inode**, so
//!   empty files count too; a file linked twice counts once.
//! - files its processes hold open, or have mapped, that are deleted (no link left): they
//!   take the disk until the last descriptor closes, and no walk finds them. Shared memory
//!   (`memfd`, System V, anonymous shared mappings) is memory, not disk: the memory limit's.
//! - the sandbox's own filesystems (bubblewrap's `/tmp`, `/dev/shm`, `/run`, …: every
//!   writable tmpfs in its mount namespace that the host does not have): what each holds, as
//!   the filesystem says (used blocks, plus 4 KiB per used inode).
//!
//! The case-run's processes are the launched process and its descendants (bubblewrap's
//! PID namespace is under it; with Landlock the first process inside is the subreaper of all
//! the command starts), and the members of its control group where assay made one.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What each inode counts on top of its blocks.
pub const INODE: u64 = 4 << 10;

/// The parts of one measurement, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    /// The case-run's folder.
    pub folder: u64,
    /// Deleted files its processes hold open or mapped.
    pub held: u64,
    /// The sandbox's own filesystems.
    pub own: u64,
}

/// The case-run's folder: blocks held plus [`INODE`] per entry, links not followed, a file
/// with several links counted once.
pub fn folder(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut linked = HashSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else if m.nlink() > 1 && !linked.insert((m.dev(), m.ino())) {
                continue;
            }
            total = total.saturating_add(taken(m.blocks()));
        }
    }
    total
}

/// What an inode holding `blocks` (of 512 bytes) counts.
fn taken(blocks: u64) -> u64 {
    blocks.saturating_mul(512).saturating_add(INODE)
}

/// The case-run's processes: `root` and its descendants, with the members of its control
/// group (`members`: a `cgroup.procs` file).
pub fn processes(root: u32, members: Option<&Path>) -> Vec<u32> {
    let mut stack = vec![root];
    if let Some(m) = members {
        stack.extend(pids_in(&std::fs::read_to_string(m).unwrap_or_default()));
    }
    let scanned = (!children_listed()).then(parents);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    while let Some(pid) = stack.pop() {
        if !seen.insert(pid) {
            continue;
        }
        out.push(pid);
        match &scanned {
            Some(all) => stack.extend(all.iter().filter(|(_, pp)| *pp == pid).map(|(p, _)| *p)),
            None => stack.extend(children(pid)),
        }
    }
    out
}

fn pids_in(text: &str) -> impl Iterator<Item = u32> + '_ {
    text.split_whitespace().filter_map(|p| p.parse().ok())
}

/// Whether this kernel lists a task's children (`/proc/<pid>/task/<tid>/children`).
fn children_listed() -> bool {
    static LISTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LISTED.get_or_init(|| {
        let me = std::process::id();
        Path::new(&format!("/proc/{me}/task/{me}/children")).exists()
    })
}

/// The children of every thread of `pid`.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let list = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        out.extend(pids_in(&list));
    }
    out
}

/// Every process and its parent, from a walk of `/proc`.
fn parents() -> Vec<(u32, u32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (_, rest) = stat.rsplit_once(") ")?;
            Some((pid, rest.split_whitespace().nth(1)?.parse().ok()?))
        })
        .collect()
}

/// The devices mounted in assay's own mount namespace: a filesystem the sandbox has and
/// these do not is the sandbox's own.
pub fn host_devices() -> HashSet<u64> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    info.lines()
        .filter_map(|l| device(l.split_whitespace().nth(2)?))
        .collect()
}

/// `major:minor` as a device number.
fn device(field: &str) -> Option<u64> {
    let (major, minor) = field.split_once(':')?;
    Some(libc::makedev(major.parse().ok()?, minor.parse().ok()?))
}

/// The writable tmpfs mounts of a `mountinfo`: (device, mount point).
fn writable_tmpfs(info: &str) -> Vec<(u64, &str)> {
    info.lines()
        .filter_map(|l| {
            let (before, after) = l.split_once(" - ")?;
            let f: Vec<&str> = before.split_whitespace().collect();
            let writable = f.get(5)?.split(',').any(|o| o == "rw");
            let tmpfs = after.split_whitespace().next()? == "tmpfs";
            // A mount point with an escaped character is none of bubblewrap's.
            (writable && tmpfs && !f.get(4)?.contains('\\')).then_some((device(f[2])?, f[4]))
        })
        .collect()
}

/// What the sandbox's own filesystems hold (seen through `pids`' mount namespaces), and
/// their devices.
fn own_filesystems(pids: &[u32], host: &HashSet<u64>) -> (u64, HashSet<u64>) {
    let ours = std::fs::read_link("/proc/self/ns/mnt").ok();
    let (mut namespaces, mut devices, mut bytes) = (HashSet::new(), HashSet::new(), 0u64);
    for pid in pids {
        let Ok(ns) = std::fs::read_link(format!("/proc/{pid}/ns/mnt")) else {
            continue;
        };
        if Some(&ns) == ours.as_ref() || !namespaces.insert(ns) {
            continue;
        }
        let info = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap_or_default();
        for (dev, point) in writable_tmpfs(&info) {
            if host.contains(&dev) || devices.contains(&dev) {
                continue;
            }
            let path = format!("/proc/{pid}/root{point}");
            // The mount on top there, not one it covers.
            if std::fs::metadata(&path).ok().map(|m| m.dev()) != Some(dev) {
                continue;
            }
            if let Ok(s) = rustix::fs::statvfs(path.as_str()) {
                let blocks = s.f_blocks.saturating_sub(s.f_bfree);
                let inodes = s.f_files.saturating_sub(s.f_ffree);
                bytes = bytes
                    .saturating_add(blocks.saturating_mul(s.f_frsize))
                    .saturating_add(inodes.saturating_mul(INODE));
                devices.insert(dev);
            }
        }
    }
    (bytes, devices)
}

/// What the deleted files `pids` hold open or mapped take, each counted once, those on
/// `skip` (already counted) left out.
fn held(pids: &[u32], skip: &HashSet<u64>) -> u64 {
    let mut seen = HashSet::new();
    let mut total = 0u64;
    let mut count = |path: &Path| {
        let Ok(m) = std::fs::metadata(path) else {
            return;
        };
        if m.is_file()
            && m.nlink() == 0
            && !skip.contains(&m.dev())
            && seen.insert((m.dev(), m.ino()))
        {
            total = total.saturating_add(taken(m.blocks()));
        }
    };
    for pid in pids {
        for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if std::fs::read_link(fd.path()).is_ok_and(|t| deleted_file(&t)) {
                count(&fd.path());
            }
        }
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
        for range in deleted_mappings(&maps) {
            count(&PathBuf::from(format!("/proc/{pid}/map_files/{range}")));
        }
    }
    total
}

/// Whether a descriptor's or mapping's target names a deleted file on a filesystem, not
/// shared memory.
fn deleted_file(target: &Path) -> bool {
    let t = target.to_string_lossy();
    t.starts_with('/')
        && t.ends_with(" (deleted)")
        && !["/memfd:", "/SYSV", "/dev/zero", "/dev/shm/"]
            .iter()
            .any(|p| t.starts_with(p))
}

/// The address ranges (`start-end`) of a `maps` whose file is deleted.
fn deleted_mappings(maps: &str) -> Vec<&str> {
    maps.lines()
        .filter_map(|l| {
            let mut f = l.splitn(6, ' ');
            let range = f.next()?;
            let path = f.nth(4)?.trim_start();
            deleted_file(Path::new(path)).then_some(range)
        })
        .collect()
}

/// Stops every process of the case-run at once: each is stopped (SIGSTOP) as it is found,
/// until a pass finds none new (what a process forks meanwhile is found on the next), then
/// all are killed. A cgroup v2 group is killed whole besides.
pub fn kill(root: u32, members: Option<&Path>) {
    if let Some(kill) = members
        .and_then(Path::parent)
        .map(|g| g.join("cgroup.kill"))
        && kill.exists()
    {
        let _ = std::fs::write(kill, "1");
    }
    let mut stopped = HashSet::new();
    for _ in 0..50 {
        let new: Vec<u32> = processes(root, members)
            .into_iter()
            .filter(|p| !stopped.contains(p))
            .collect();
        if new.is_empty() {
            break;
        }
        for pid in new {
            signal(pid, libc::SIGSTOP);
            stopped.insert(pid);
        }
    }
    for pid in stopped {
        signal(pid, libc::SIGKILL);
    }
}

fn signal(pid: u32, sig: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: a signal to a process of the case-run; one that is gone is no matter.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// Measures the whole case-run: its folder (less `base`, what it held as it started), and,
/// while it runs (`root`, the launched process), its processes' deleted files and the
/// sandbox's own filesystems.
pub fn measure(
    dir: &Path,
    base: u64,
    root: Option<u32>,
    members: Option<&Path>,
    host: &HashSet<u64>,
) -> Count {
    let folder = folder(dir).saturating_sub(base);
    let Some(root) = root else {
        return Count {
            folder,
            ..Count::default()
        };
    };
    let pids = processes(root, members);
    let (own, devices) = own_filesystems(&pids, host);
    Count {
        folder,
        held: held(&pids, &devices),
        own,
    }
}

impl Count {
    pub fn total(&self) -> u64 {
        self.folder
            .saturating_add(self.held)
            .saturating_add(self.own)
    }
}

/// How often a case-run is measured: every [`Pace::EVERY`]; sooner as the limit nears, as
/// often as a writer at [`Pace::FAST`] would need to reach it, or half the time the growth
/// seen since the last look would take, down to [`Pace::SOONEST`]; never sooner than ten
/// times what a measurement takes (a tenth of a core), or twice within the last
/// [`Pace::EVERY`] of a fast writer before the limit; and at least once a second.
#[derive(Debug, Default)]
pub struct Pace {
    last: Option<(Instant, u64)>,
}

impl Pace {
    pub const EVERY: Duration = Duration::from_millis(100);
    pub const SOONEST: Duration = Duration::from_millis(5);
    pub const LATEST: Duration = Duration::from_secs(1);
    /// A fast writer, in bytes a second: a process writing 1 MiB files into the page cache
    /// (2–4 GiB a second measured on an idle 2-core machine, 2026-11-28; 1 GiB a second was
    /// assumed before, and a writer three times as fast got 60–110 MiB past a 64 MiB limit
    /// before the second look).
    pub const FAST: f64 = (8u64 << 30) as f64;

    /// When to measure next, after a measurement of `used` against `limit` that took `cost`.
    pub fn next(&mut self, used: u64, limit: u64, cost: Duration) -> Duration {
        let now = Instant::now();
        let left = limit.saturating_sub(used) as f64;
        let mut wait = Self::EVERY.min(Duration::from_secs_f64(left / Self::FAST));
        if let Some((then, before)) = self.last
            && used > before
        {
            let rate = (used - before) as f64 / now.duration_since(then).as_secs_f64().max(1e-6);
            wait = wait.min(Duration::from_secs_f64(left / rate / 2.0));
        }
        self.last = Some((now, used));
        let near = left < Self::FAST * Self::EVERY.as_secs_f64();
        wait.max(Self::SOONEST)
            .max(cost.saturating_mul(if near { 2 } else { 10 }))
            .min(Self::LATEST)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_files_and_folders_count_their_inodes_and_links_count_once() {
        let d = tempfile::tempdir().unwrap();
        let empty = folder(d.path());
        assert_eq!(empty, 0);
        std::fs::create_dir(d.path().join("sub")).unwrap();
        for i in 0..10 {
            std::fs::write(d.path().join(format!("sub/{i}")), "").unwrap();
        }
        let ten = folder(d.path());
        assert!(ten >= 11 * INODE, "{ten}");
        std::fs::write(d.path().join("sub/big"), vec![1u8; 1 << 20]).unwrap();
        std::fs::hard_link(d.path().join("sub/big"), d.path().join("twice")).unwrap();
        let linked = folder(d.path());
        assert!(linked >= ten + (1 << 20) + INODE, "{linked}");
        assert!(
            linked < ten + (1 << 20) + 3 * INODE,
            "counted twice: {linked}"
        );
    }

    #[test]
    fn a_deleted_file_held_open_counts_and_shared_memory_does_not() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("held");
        let f = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(&mut &f, &vec![1u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let me = [std::process::id()];
        let before = held(&me, &HashSet::new());
        std::fs::remove_file(&path).unwrap();
        let after = held(&me, &HashSet::new());
        assert!(after >= before + (1 << 20), "{before} → {after}");
        drop(f);
        assert!(deleted_file(Path::new("/work/a (deleted)")));
        assert!(!deleted_file(Path::new("/memfd:x (deleted)")));
        assert!(!deleted_file(Path::new("/work/a")));
        let maps = "7f00-7f10 r--p 00000000 08:01 12 /work/lib.so (deleted)\n\
                    7f10-7f20 rw-s 00000000 00:01 9 /dev/zero (deleted)\n";
        assert_eq!(deleted_mappings(maps), ["7f00-7f10"]);
    }

    #[test]
    fn the_sandboxs_writable_tmpfs_mounts_are_read_from_its_mountinfo() {
        let info = "\
1 0 253:1 / / ro,nosuid - ext4 /dev/vda rw
2 1 0:61 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw,size=65536k
3 1 0:62 / /dev rw,nosuid - tmpfs tmpfs rw
4 1 0:63 / /run ro,nosuid - tmpfs tmpfs rw
";
        let found: Vec<&str> = writable_tmpfs(info).into_iter().map(|(_, p)| p).collect();
        assert_eq!(found, ["/tmp", "/dev"]);
        assert_eq!(device("0:61"), Some(libc::makedev(0, 61)));
    }

    #[test]
    fn the_pace_quickens_near_the_limit_within_its_bounds() {
        let ms = Duration::from_millis;
        let far = 1 << 40;
        assert_eq!(Pace::default().next(0, far, ms(0)), Pace::EVERY);
        // 64 MiB left: a fast writer's 7.8 ms.
        assert_eq!(Pace::default().next(0, 64 << 20, ms(0)), ms(125) / 16);
        let mut p = Pace::default();
        p.next(0, 100 << 20, ms(0));
        std::thread::sleep(ms(10));
        // 90 MiB in ~10 ms: the limit is a millisecond or two away.
        assert_eq!(p.next(90 << 20, 100 << 20, ms(0)), Pace::SOONEST);
        // A slow measurement is not repeated sooner than ten times its cost, or twice near
        // the limit.
        assert_eq!(Pace::default().next(0, far, ms(30)), ms(300));
        assert_eq!(p.next(90 << 20, 100 << 20, ms(30)), ms(60));
        assert_eq!(Pace::default().next(0, far, ms(500)), Pace::LATEST);
    }

    #[test]
    fn the_processes_are_the_root_and_its_descendants() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & wait"])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let found = processes(child.id(), None);
        assert_eq!(found[0], child.id());
        assert!(found.len() >= 2, "{found:?}");
        kill(child.id(), None);
        child.wait().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(processes(child.id(), None), [child.id()]);
    }
}
