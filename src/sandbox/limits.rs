//! Per case-run limits on memory, processes and disk: what a runaway or hostile agent may take
//! of the machine. The defaults protect a 2-core, 8 GiB CI machine running two case-runs at
//! once; `--limit-memory`, `--limit-pids`, `--limit-disk` and `[run.limits]` change them.
//!
//! How each holds depends on the machine ([`Enforcement`], said by `doctor` and run.json):
//! - memory and processes: a control group per case-run ([`super::cgroup`]) where assay may
//!   make one (root, or a delegated subtree); else a bound per process (`RLIMIT_DATA`,
//!   `RLIMIT_NPROC`, which root is exempt from).
//! - disk: what the case-run takes ([`super::disk`]: its folder, the deleted files its
//!   processes hold open, the sandbox's own filesystems; every inode 4 KiB besides its
//!   blocks) measured while any of its processes runs, every 100 ms and sooner near the
//!   bound, and once more after they end; past the bound its processes are killed at once,
//!   with no grace period. No file larger than it (`RLIMIT_FSIZE`); with bubblewrap, the
//!   sandbox's own `/tmp`, `/dev/shm`, `/run` and `/var/tmp` are that size.
//!
//! A case-run past a limit ends as an error naming the limit and the figure.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::cgroup::{self, Cgroup, Controller, Parent};
use super::disk::{self, Pace};
use crate::process::{Look, Spawn, Watch};
use crate::record::run::LimitHeld;

pub const DEFAULT_MEMORY: u64 = 3 << 30;
pub const DEFAULT_PIDS: u64 = 1024;
pub const DEFAULT_DISK: u64 = 4 << 30;

/// A limit as given: a figure, or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    At(u64),
    Unlimited,
}

impl Cap {
    fn figure(self) -> Option<u64> {
        match self {
            Cap::At(n) => Some(n),
            Cap::Unlimited => None,
        }
    }
}

/// `4GiB`, `512 MiB`, `2G`, `1000000` (bytes), or `none`.
pub fn size(s: &str) -> Result<Cap, String> {
    if s.trim().eq_ignore_ascii_case("none") {
        return Ok(Cap::Unlimited);
    }
    let b: bytesize::ByteSize = s
        .trim()
        .parse()
        .map_err(|e| format!("`{s}` is not a size (say 4GiB, 512MiB, or none): {e}"))?;
    match b.as_u64() {
        0 => Err("a limit of 0 would stop everything: give a size, or none".into()),
        n => Ok(Cap::At(n)),
    }
}

/// A number of processes, or `none`.
pub fn count(s: &str) -> Result<Cap, String> {
    if s.trim().eq_ignore_ascii_case("none") {
        return Ok(Cap::Unlimited);
    }
    match s.trim().parse::<u64>() {
        Ok(0) | Err(_) => Err(format!(
            "`{s}` is not a number of processes (say 512, or none)"
        )),
        Ok(n) => Ok(Cap::At(n)),
    }
}

/// `[run.limits]` of assay.toml: `memory = "4GiB"`, `pids = 512`, `disk = "none"` (a size in
/// bytes may be a number too).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsConfig {
    #[serde(default, deserialize_with = "de_size")]
    pub memory: Option<Cap>,
    #[serde(default, deserialize_with = "de_count")]
    pub pids: Option<Cap>,
    #[serde(default, deserialize_with = "de_size")]
    pub disk: Option<Cap>,
}

/// A setting written as a number or a word.
#[derive(Deserialize)]
#[serde(untagged)]
enum Given {
    Number(u64),
    Word(String),
}

impl Given {
    fn text(self) -> String {
        match self {
            Given::Number(n) => n.to_string(),
            Given::Word(w) => w,
        }
    }
}

fn de_size<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Cap>, D::Error> {
    size(&Given::deserialize(d)?.text())
        .map(Some)
        .map_err(serde::de::Error::custom)
}

fn de_count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Cap>, D::Error> {
    count(&Given::deserialize(d)?.text())
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// The limits a run's case-runs get, resolved: `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub memory: Option<u64>,
    pub pids: Option<u64>,
    pub disk: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory: Some(DEFAULT_MEMORY),
            pids: Some(DEFAULT_PIDS),
            disk: Some(DEFAULT_DISK),
        }
    }
}

impl Limits {
    /// The flags (memory, pids, disk) over `[run.limits]` over the defaults.
    pub fn resolve(flags: [Option<Cap>; 3], config: &LimitsConfig) -> Limits {
        let pick = |flag: Option<Cap>, set: Option<Cap>, default: u64| {
            flag.or(set).map_or(Some(default), Cap::figure)
        };
        Limits {
            memory: pick(flags[0], config.memory, DEFAULT_MEMORY),
            pids: pick(flags[1], config.pids, DEFAULT_PIDS),
            disk: pick(flags[2], config.disk, DEFAULT_DISK),
        }
    }
}

/// How each limit holds on this machine, worked out once per run.
#[derive(Debug, Clone, Default)]
pub struct Enforcement {
    memory: Option<Parent>,
    pids: Option<Parent>,
}

impl Enforcement {
    /// Finds where this machine lets assay put case-runs' control groups.
    pub fn probe() -> Enforcement {
        let linux = cfg!(target_os = "linux");
        Enforcement {
            memory: linux
                .then(|| cgroup::parent_for(Controller::Memory))
                .flatten(),
            pids: linux
                .then(|| cgroup::parent_for(Controller::Pids))
                .flatten(),
        }
    }

    /// Each limit, its figure and how it holds here (`memory`, `pids`, `disk`).
    pub fn describe(&self, l: Limits) -> Vec<(&'static str, LimitHeld)> {
        let by_group = |p: &Option<Parent>, c: &str, fallback: &str| match p {
            Some(p) => format!(
                "a control group per case-run (cgroup {}, {c} controller, under {})",
                if p.version == cgroup::Version::V1 {
                    "v1"
                } else {
                    "v2"
                },
                p.dir.display()
            ),
            None => fallback.to_string(),
        };
        vec![
            ("memory", LimitHeld {
                limit: l.memory,
                how: by_group(&self.memory, "memory", "per process only (RLIMIT_DATA): assay may not make a control group here (run as root, or in a delegated cgroup v2 subtree)"),
            }),
            ("pids", LimitHeld {
                limit: l.pids,
                how: by_group(&self.pids, "pids", "per user only (RLIMIT_NPROC, which does not bind root): assay may not make a control group here"),
            }),
            ("disk", LimitHeld {
                limit: l.disk,
                how: "the case-run's folder, the deleted files its processes hold open and the sandbox's own filesystems (each inode 4 KiB besides its blocks), measured every 100 ms or sooner while it runs and once after, its processes killed at once past the limit; no file larger (RLIMIT_FSIZE); bubblewrap's /tmp, /dev/shm, /run, /var/tmp that size".into(),
            }),
        ]
    }

    /// One case-run's bounds, its folder `case_dir` measured as it starts.
    pub fn bounds(&self, l: Limits, case_dir: &Path) -> std::io::Result<Bounds> {
        let mut groups = Vec::new();
        if let (Some(p), Some(n)) = (&self.memory, l.memory) {
            groups.push((Controller::Memory, p, n));
        }
        if let (Some(p), Some(n)) = (&self.pids, l.pids) {
            groups.push((Controller::Pids, p, n));
        }
        let group = (!groups.is_empty())
            .then(|| Cgroup::make(&groups))
            .transpose()?;
        let members = group.as_ref().and_then(Cgroup::members);
        let disk = l.disk.map(|limit| Disk {
            dir: case_dir.to_path_buf(),
            base: disk::folder(case_dir),
            limit,
            members,
            host: std::sync::Arc::new(disk::host_devices()),
        });
        Ok(Bounds {
            limits: l,
            group,
            disk,
        })
    }
}

/// The bytes allocated under `dir` (a sparse file's holes take none), links not followed: what
/// a folder's files hold. (The disk limit counts more: see [`super::disk`].)
pub fn usage(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(m) = e.metadata() else { continue };
            total = total.saturating_add(m.blocks().saturating_mul(512));
            if m.is_dir() {
                stack.push(e.path());
            }
        }
    }
    total
}

/// The disk bound of one case-run.
#[derive(Debug, Clone)]
struct Disk {
    /// The case-run's folder, and what it held as the case-run started.
    dir: PathBuf,
    base: u64,
    limit: u64,
    /// The `cgroup.procs` of the case-run's control group, if it has one.
    members: Option<PathBuf>,
    /// The devices of assay's own mount namespace.
    host: std::sync::Arc<std::collections::HashSet<u64>>,
}

impl Disk {
    /// A watch of one process of the case-run (`root`, while it runs; `None` once it
    /// ended): past the limit, its processes are killed and the reason given.
    fn watch(self) -> Watch {
        let pace = std::sync::Mutex::new(Pace::default());
        Watch::new(move |root| {
            let started = std::time::Instant::now();
            let members = self.members.as_deref();
            let count = disk::measure(&self.dir, self.base, root, members, &self.host);
            let used = count.total();
            if used > self.limit {
                if let Some(root) = root {
                    disk::kill(root, members);
                }
                return Look {
                    stop: Some(past(self.limit, count)),
                    next: Pace::LATEST,
                };
            }
            let next = match pace.lock() {
                Ok(mut p) => p.next(used, self.limit, started.elapsed()),
                Err(_) => Pace::EVERY,
            };
            Look { stop: None, next }
        })
    }
}

/// `the case-run went past its disk limit (64 MiB): 80.2 MiB written (50 MiB in deleted files
/// held open)`: the parts besides the folder said where they come to a MiB.
fn past(limit: u64, c: disk::Count) -> String {
    let parts: Vec<String> = [
        (c.held, "in deleted files held open"),
        (c.own, "in the sandbox's own /tmp and the like"),
    ]
    .iter()
    .filter(|(n, _)| *n >= 1 << 20)
    .map(|(n, what)| format!("{} {what}", rounded(*n)))
    .collect();
    let detail = match parts.is_empty() {
        true => String::new(),
        false => format!(" ({})", parts.join(", ")),
    };
    format!(
        "the case-run went past its disk limit ({}): {} written{detail}",
        shown(limit),
        rounded(c.total())
    )
}

/// `80.2 MiB`: a measured figure, to a tenth of its unit.
fn rounded(n: u64) -> String {
    bytesize::ByteSize::b(n).display().iec().to_string()
}

/// One case-run's bounds: its control group (if any) and its disk bound, put on every process
/// the case-run's sandbox runs.
#[derive(Debug)]
pub struct Bounds {
    limits: Limits,
    group: Option<Cgroup>,
    disk: Option<Disk>,
}

impl Bounds {
    /// Puts `spawn` in the case-run's group, with the per-process limits where there is no
    /// group, and its folder watched.
    pub fn apply(&self, spawn: &mut Spawn) {
        let l = self.limits;
        let grouped = |c| self.group.as_ref().is_some_and(|g| g.has(c));
        if let Some(g) = &self.group {
            spawn.join = g.procs();
        }
        if let Some(n) = l.memory.filter(|_| !grouped(Controller::Memory)) {
            spawn.rlimits.push((libc::RLIMIT_DATA as i32, n));
        }
        if let Some(n) = l.pids.filter(|_| !grouped(Controller::Pids)) {
            spawn.rlimits.push((libc::RLIMIT_NPROC as i32, n));
        }
        if let Some(d) = self.disk.clone() {
            spawn.rlimits.push((libc::RLIMIT_FSIZE as i32, d.limit));
            spawn.watch = Some(d.watch());
        }
    }

    /// The limits, as the case-run's result records them.
    pub fn record(&self) -> crate::record::case_run::LimitsRecord {
        let l = self.limits;
        crate::record::case_run::LimitsRecord {
            memory: l.memory,
            pids: l.pids,
            disk: l.disk,
        }
    }

    /// Why the case-run was stopped by a memory or process limit, if it was.
    pub fn hit(&self) -> Option<String> {
        let g = self.group.as_ref()?;
        let l = self.limits;
        let killed = g.hits(Controller::Memory);
        if killed > 0 {
            return Some(format!(
                "the case-run went past its memory limit ({}): the kernel killed {killed} process{}",
                shown(l.memory.unwrap_or(0)),
                if killed == 1 { "" } else { "es" }
            ));
        }
        let refused = g.hits(Controller::Pids);
        (refused > 0).then(|| {
            format!(
                "the case-run went past its process limit ({}): {refused} fork{} refused",
                l.pids.unwrap_or(0),
                if refused == 1 { "" } else { "s" }
            )
        })
    }
}

/// `4 GiB`, `256 MiB`, `1.5 GiB`: whole units where the figure is one.
pub fn shown(n: u64) -> String {
    for (unit, name) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if n >= unit && n.is_multiple_of(unit) {
            return format!("{} {name}", n / unit);
        }
    }
    bytesize::ByteSize::b(n).display().iec().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_counts_parse_or_say_why() {
        assert_eq!(size("4GiB"), Ok(Cap::At(4 << 30)));
        assert_eq!(size("512 MiB"), Ok(Cap::At(512 << 20)));
        assert_eq!(size("none"), Ok(Cap::Unlimited));
        assert!(size("0").is_err());
        assert!(size("lots").unwrap_err().contains("`lots` is not a size"));
        assert_eq!(count("512"), Ok(Cap::At(512)));
        assert_eq!(shown(256 << 20), "256 MiB");
        assert_eq!(shown(3 << 30), "3 GiB");
        assert_eq!(shown((3 << 30) / 2), "1536 MiB");
        assert_eq!(shown(1000), "1000 B");
        assert!(count("-1").is_err());
    }

    #[test]
    fn flags_win_over_the_config_which_wins_over_the_defaults() {
        let c: LimitsConfig =
            toml::from_str("memory = \"1GiB\"\npids = 64\ndisk = \"none\"\n").unwrap();
        let l = Limits::resolve([None, Some(Cap::At(10)), None], &c);
        assert_eq!(l.memory, Some(1 << 30));
        assert_eq!(l.pids, Some(10));
        assert_eq!(l.disk, None);
        let none = LimitsConfig::default();
        assert_eq!(Limits::resolve([None; 3], &none), Limits::default());
        let bad = toml::from_str::<LimitsConfig>("memory = \"much\"\n").unwrap_err();
        assert!(bad.to_string().contains("`much` is not a size"), "{bad}");
        assert!(toml::from_str::<LimitsConfig>("cpu = 2\n").is_err());
    }
}
