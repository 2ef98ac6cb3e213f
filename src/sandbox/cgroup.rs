//! A control group per case-run, where assay may make one: the kernel then bounds the memory
//! and the number of processes of everything in the sandbox together, and says afterwards
//! whether a bound was hit.
//!
//! cgroup v2 (one hierarchy): a child of assay's own cgroup when that subtree is delegated with
//! the `memory` and `pids` controllers on, else (as root) a child of the hierarchy's root.
//! cgroup v1 (a hierarchy per controller, as on older hosts and hybrid setups): a child of
//! assay's own cgroup in the `memory` and the `pids` hierarchy, where it may write there
//! (root). Elsewhere, none: see [`super::limits`] for what holds then.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The two controllers assay sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Controller {
    Memory,
    Pids,
}

impl Controller {
    fn name(self) -> &'static str {
        match self {
            Controller::Memory => "memory",
            Controller::Pids => "pids",
        }
    }
}

/// Which cgroup version a group is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// Where case-run groups can be made for one controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parent {
    pub dir: PathBuf,
    pub version: Version,
}

/// Where case-run groups for `c` can be made on this machine, if anywhere: found from
/// `/proc/self/cgroup` and `/proc/self/mountinfo`, and tried by making (and removing) a group.
pub fn parent_for(c: Controller) -> Option<Parent> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let parent = candidates(c, &cgroups, &mounts)
        .into_iter()
        .find(|p| try_make(p, c))?;
    remove_stale(&parent.dir);
    Some(parent)
}

/// Removes the empty groups earlier runs left in `dir` (an assay that ended before its last
/// group's processes had): `assay-<pid>-<n>` of a process that is gone.
fn remove_stale(dir: &Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("assay-"))
            .and_then(|n| n.split('-').next())
        else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// The folders a group for `c` could go in, best first.
fn candidates(c: Controller, cgroups: &str, mounts: &str) -> Vec<Parent> {
    let mut out = Vec::new();
    for line in cgroups.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(ctrls), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let rel = path.trim_start_matches('/');
        if ctrls.is_empty() {
            if let Some(root) = mount_of(mounts, "cgroup2", None) {
                let own = root.join(rel);
                let delegated = std::fs::read_to_string(own.join("cgroup.subtree_control"))
                    .is_ok_and(|s| s.split_whitespace().any(|w| w == c.name()));
                if delegated {
                    out.push(Parent {
                        dir: own,
                        version: Version::V2,
                    });
                }
                out.push(Parent {
                    dir: root,
                    version: Version::V2,
                });
            }
        } else if ctrls.split(',').any(|w| w == c.name())
            && let Some(root) = mount_of(mounts, "cgroup", Some(c.name()))
        {
            out.push(Parent {
                dir: root.join(rel),
                version: Version::V1,
            });
        }
    }
    // v1 first where a controller is bound there: it is not in v2 then.
    out.sort_by_key(|p| p.version == Version::V2);
    out
}

/// The mount point of a `fstype` filesystem (with `option` among its super options).
fn mount_of(mounts: &str, fstype: &str, option: Option<&str>) -> Option<PathBuf> {
    mounts.lines().find_map(|l| {
        let (before, after) = l.split_once(" - ")?;
        let mut a = after.split_whitespace();
        let (ty, _src, opts) = (a.next()?, a.next()?, a.next().unwrap_or(""));
        let fits = ty == fstype && option.is_none_or(|o| opts.split(',').any(|x| x == o));
        fits.then(|| PathBuf::from(before.split_whitespace().nth(4).unwrap_or("/")))
    })
}

/// Whether a group with `c`'s limit file can be made in `p` (made and removed again).
fn try_make(p: &Parent, c: Controller) -> bool {
    let probe = p.dir.join(format!("assay-probe-{}", std::process::id()));
    let ok = std::fs::create_dir(&probe).is_ok() && probe.join(limit_file(p.version, c)).exists();
    let _ = std::fs::remove_dir(&probe);
    ok
}

fn limit_file(v: Version, c: Controller) -> &'static str {
    match (v, c) {
        (Version::V2, Controller::Memory) => "memory.max",
        (Version::V1, Controller::Memory) => "memory.limit_in_bytes",
        (_, Controller::Pids) => "pids.max",
    }
}

/// One case-run's groups (one per controller with v1; one with v2), removed when dropped.
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<(PathBuf, Version, Vec<Controller>)>,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

impl Cgroup {
    /// Makes the groups and writes the limits: `(controller, parent, limit)`. A parent shared
    /// by two controllers (v2) gets one group.
    pub fn make(limits: &[(Controller, &Parent, u64)]) -> std::io::Result<Cgroup> {
        let name = format!(
            "assay-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut g = Cgroup { dirs: Vec::new() };
        for (c, parent, limit) in limits {
            let dir = parent.dir.join(&name);
            if !g.dirs.iter().any(|(d, _, _)| *d == dir) {
                std::fs::create_dir(&dir)?;
                g.dirs.push((dir.clone(), parent.version, Vec::new()));
            }
            let entry = g.dirs.iter_mut().find(|(d, _, _)| *d == dir).expect("made");
            entry.2.push(*c);
            std::fs::write(dir.join(limit_file(parent.version, *c)), limit.to_string())?;
            if parent.version == Version::V2 && *c == Controller::Memory {
                // No swap to spill into past the limit.
                let _ = std::fs::write(dir.join("memory.swap.max"), "0");
            }
        }
        Ok(g)
    }

    /// Whether `c` is bounded by these groups.
    pub fn has(&self, c: Controller) -> bool {
        self.dirs.iter().any(|(_, _, cs)| cs.contains(&c))
    }

    /// The files a process writes `0` into to join (see `process::Spawn`), between fork and
    /// exec, single-threaded. Under cgroup v1 that is `tasks`: moving the current thread is
    /// done without the kernel's global threadgroup lock, whose taking waits for an RCU grace
    /// period (up to 10 ms here) where moving a whole process through `cgroup.procs` would.
    pub fn procs(&self) -> Vec<PathBuf> {
        self.dirs
            .iter()
            .map(|(d, v, _)| {
                d.join(match v {
                    Version::V1 => "tasks",
                    Version::V2 => "cgroup.procs",
                })
            })
            .collect()
    }

    /// The file listing every process in the case-run's group (`cgroup.procs`, under cgroup
    /// v1 and v2 alike): none escapes it, whatever it forks or however it detaches.
    pub fn members(&self) -> Option<PathBuf> {
        self.dirs.first().map(|(d, _, _)| d.join("cgroup.procs"))
    }

    /// How many times the kernel enforced `c`'s limit: processes killed for memory (the OOM
    /// killer), forks refused for processes.
    pub fn hits(&self, c: Controller) -> u64 {
        let Some((dir, v, _)) = self.dirs.iter().find(|(_, _, cs)| cs.contains(&c)) else {
            return 0;
        };
        let (file, key) = match (v, c) {
            (Version::V2, Controller::Memory) => ("memory.events", "oom_kill"),
            (Version::V1, Controller::Memory) => ("memory.oom_control", "oom_kill"),
            (_, Controller::Pids) => ("pids.events", "max"),
        };
        count(&dir.join(file), key)
    }
}

/// The number after `key` on its line of a flat-keyed cgroup file.
fn count(file: &Path, key: &str) -> u64 {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == key).then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0)
}

impl Drop for Cgroup {
    /// Removes the groups once their processes are gone (the sandbox ended them; v2 kills any
    /// left first). A group whose last processes are still exiting is removed by a thread of
    /// its own, so the case-run does not wait.
    fn drop(&mut self) {
        let mut busy = Vec::new();
        for (dir, v, _) in self.dirs.drain(..) {
            if v == Version::V2 {
                let _ = std::fs::write(dir.join("cgroup.kill"), "1");
            }
            if std::fs::remove_dir(&dir).is_err() && dir.exists() {
                busy.push(dir);
            }
        }
        if !busy.is_empty() {
            std::thread::spawn(move || {
                for _ in 0..500 {
                    busy.retain(|d| std::fs::remove_dir(d).is_err() && d.exists());
                    if busy.is_empty() {
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "\
35 25 0:30 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755
40 35 0:35 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
44 35 0:39 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
46 35 0:41 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn a_hybrid_host_takes_v1_for_each_controller_at_assays_own_group() {
        let cgroups = "8:pids:/\n4:memory:/ci/job-7\n0::/\n";
        let p = candidates(Controller::Memory, cgroups, MOUNTS);
        assert_eq!(
            p[0],
            Parent {
                dir: "/sys/fs/cgroup/memory/ci/job-7".into(),
                version: Version::V1
            }
        );
        let p = candidates(Controller::Pids, cgroups, MOUNTS);
        assert_eq!(p[0].dir, PathBuf::from("/sys/fs/cgroup/pids/"));
        assert_eq!(p.last().unwrap().version, Version::V2);
    }

    #[test]
    fn v2_alone_offers_the_hierarchys_root() {
        let mounts = "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let p = candidates(
            Controller::Pids,
            "0::/system.slice/runner.service\n",
            mounts,
        );
        assert_eq!(
            p,
            [Parent {
                dir: "/sys/fs/cgroup".into(),
                version: Version::V2
            }]
        );
    }

    #[test]
    fn counts_read_from_flat_keyed_files() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("memory.events");
        std::fs::write(&f, "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n").unwrap();
        assert_eq!(count(&f, "oom_kill"), 1);
        assert_eq!(count(&f, "max"), 12);
        assert_eq!(count(&f, "absent"), 0);
    }
}
