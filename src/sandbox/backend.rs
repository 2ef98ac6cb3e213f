//! The sandbox backends, one interface: which work on this machine (probed once per run),
//! which one `--sandbox` takes, and one case-run's sandbox ([`Jail`]) whatever the backend.
//!
//! - `bwrap`: bubblewrap's namespaces (the strongest: [`bwrap`](super::bwrap)).
//! - `landlock`: Landlock, seccomp and a subreaper, nothing to install
//!   ([`landlock`](super::landlock)).
//! - `seatbelt`: macOS's `sandbox-exec` ([`seatbelt`](super::seatbelt)).

use std::path::PathBuf;

use super::SandboxMode;
use super::bwrap::BwrapJail;
use super::bwrap::probe::Bwrap;
use super::landlock::LandlockJail;
use super::landlock::probe::{Landlock, SCOPED_ABI};
use super::limits::Bounds;
use super::seatbelt::{Seatbelt, SeatbeltJail};
use super::spec::JailSpec;
use crate::host::{HostEnv, Unavailable};
use crate::process::Spawn;
use crate::record::case_run::SandboxRecord;

/// A backend that works on this machine.
#[derive(Debug, Clone)]
pub enum Backend {
    Bwrap(Bwrap),
    Landlock(Landlock),
    Seatbelt(Seatbelt),
}

/// What each backend leaves uncontained that bubblewrap contains, for run.json, the reports
/// and `doctor`.
const LANDLOCK_GAPS: &[&str] = &[
    "no private /proc: the agent sees the host's processes and their command lines (their memory, environment and file descriptors stay refused; assay puts no secret in a command line)",
    "no private /tmp or mount namespace: hidden folders are unreadable rather than absent",
    "workspaces are copies, not copy-on-write overlays",
    "TCP connects are limited by port, not by address: the forwarder's loopback ports on any host",
    "Landlock does not see `chmod` or `utime`: the agent may change the times, and the mode (never to set-id or writable by everyone), of host files its user owns (all the system's, when assay runs as root)",
];
const LANDLOCK_UNSCOPED: &str = "signals and abstract Unix sockets are not scoped (Landlock ABI 6, Linux 6.12): the agent can signal assay's processes";
const SEATBELT_GAPS: &[&str] = &[
    "no private /proc or /tmp: macOS's sandbox denies, it does not hide",
    "workspaces are copies, not copy-on-write overlays",
    "processes are ended by process group: a daemon that leaves it outlives the case-run",
];

impl Backend {
    /// `bwrap`, `landlock` or `seatbelt`, as recorded.
    pub fn kind(&self) -> &'static str {
        match self {
            Backend::Bwrap(_) => "bwrap",
            Backend::Landlock(_) => "landlock",
            Backend::Seatbelt(_) => "seatbelt",
        }
    }

    /// What ran, for the record: bubblewrap's version, Landlock's ABI.
    pub fn version(&self) -> String {
        match self {
            Backend::Bwrap(b) => b.version.clone(),
            Backend::Landlock(l) => format!("Landlock ABI {}", l.abi),
            Backend::Seatbelt(_) => "sandbox-exec".into(),
        }
    }

    /// What this backend does not contain that bubblewrap does.
    pub fn gaps(&self) -> Vec<String> {
        let list: Vec<&str> = match self {
            Backend::Bwrap(_) => Vec::new(),
            Backend::Landlock(l) => LANDLOCK_GAPS
                .iter()
                .copied()
                .chain((l.abi < SCOPED_ABI).then_some(LANDLOCK_UNSCOPED))
                .collect(),
            Backend::Seatbelt(_) => SEATBELT_GAPS.to_vec(),
        };
        list.into_iter().map(String::from).collect()
    }

    /// The bubblewrap this is, for what only bubblewrap can do (copy-on-write workspaces).
    pub fn bwrap(&self) -> Option<&Bwrap> {
        match self {
            Backend::Bwrap(b) => Some(b),
            _ => None,
        }
    }

    /// One case-run's sandbox. Must be called within a tokio runtime (the forwarder).
    pub fn jail(&self, spec: JailSpec, endpoints: &[String]) -> std::io::Result<Confined> {
        Ok(match self {
            Backend::Bwrap(b) => Confined::Bwrap(BwrapJail::new(b.clone(), spec, endpoints)?),
            Backend::Landlock(l) => {
                Confined::Landlock(LandlockJail::new(l.clone(), spec, endpoints)?)
            }
            Backend::Seatbelt(s) => {
                Confined::Seatbelt(SeatbeltJail::new(s.clone(), spec, endpoints)?)
            }
        })
    }
}

/// The backends, strongest first.
pub const KINDS: &[SandboxMode] = &[
    SandboxMode::Bwrap,
    SandboxMode::Landlock,
    SandboxMode::Seatbelt,
];

/// The assay program run as the first process inside: `assay-sandbox-init` beside this
/// executable, else assay itself.
pub fn helper() -> Result<PathBuf, Unavailable> {
    let exe = std::env::current_exe().map_err(|e| Unavailable {
        message: format!("cannot find the assay executable to run inside the sandbox: {e}"),
        fix: String::new(),
    })?;
    let small = exe.with_file_name(super::inside::HELPER_BIN);
    Ok(if small.is_file() { small } else { exe })
}

/// Whether `mode`'s backend works here; `None` for `auto` and `none`.
pub fn probe(mode: SandboxMode, host: &HostEnv) -> Result<Backend, Unavailable> {
    match mode {
        SandboxMode::Bwrap => super::bwrap::probe::probe(host, None).map(Backend::Bwrap),
        SandboxMode::Landlock => {
            super::landlock::probe::probe(host, helper()?).map(Backend::Landlock)
        }
        SandboxMode::Seatbelt => super::seatbelt::probe().map(Backend::Seatbelt),
        SandboxMode::Auto | SandboxMode::None => Err(Unavailable {
            message: format!("`{}` is not a backend", mode.as_str()),
            fix: String::new(),
        }),
    }
}

/// Every backend on this machine, strongest first, working or why not (for `doctor`).
pub fn probe_all(host: &HostEnv) -> Vec<(SandboxMode, Result<Backend, Unavailable>)> {
    KINDS.iter().map(|m| (*m, probe(*m, host))).collect()
}

/// The backend `mode` takes: `auto` the strongest that works (or, where none does, why each
/// does not and what would make the strongest work); a named one that one.
pub fn choose(mode: SandboxMode, host: &HostEnv) -> Result<Backend, Unavailable> {
    if mode != SandboxMode::Auto {
        return probe(mode, host);
    }
    let mut why = Vec::new();
    let mut fix = None;
    for m in native() {
        match probe(*m, host) {
            Ok(b) => return Ok(b),
            Err(u) => {
                why.push(format!("{}: {}", m.as_str(), u.message));
                fix.get_or_insert(u.fix);
            }
        }
    }
    Err(Unavailable {
        message: format!("no sandbox works on this machine ({})", why.join("; ")),
        fix: fix.unwrap_or_default(),
    })
}

/// The backends of this operating system, strongest first.
pub fn native() -> &'static [SandboxMode] {
    if cfg!(target_os = "macos") {
        &[SandboxMode::Seatbelt]
    } else {
        &[SandboxMode::Bwrap, SandboxMode::Landlock]
    }
}

/// One case-run's sandbox, ready to wrap each command it runs: its backend's confinement and
/// its limits.
#[derive(Debug)]
pub struct Jail {
    confined: Confined,
    bounds: Option<Bounds>,
}

/// One case-run's confinement by its backend.
#[derive(Debug)]
pub enum Confined {
    Bwrap(BwrapJail),
    Landlock(LandlockJail),
    Seatbelt(SeatbeltJail),
}

impl Jail {
    pub fn new(confined: Confined, bounds: Option<Bounds>) -> Jail {
        Jail { confined, bounds }
    }

    /// What to record of this sandbox in the case-run's result.
    pub fn record(&self) -> SandboxRecord {
        let mut r = match &self.confined {
            Confined::Bwrap(j) => j.record(),
            Confined::Landlock(j) => j.record(),
            Confined::Seatbelt(j) => j.record(),
        };
        r.limits = self.bounds.as_ref().map(|b| b.record());
        r
    }

    /// The environment of everything run in this sandbox: model endpoints as reached from
    /// inside.
    pub fn rewrite_env(&self, env: &mut Vec<(String, String)>) {
        match &self.confined {
            Confined::Bwrap(j) => j.rewrite_env(env),
            Confined::Landlock(j) => j.rewrite_env(env),
            Confined::Seatbelt(j) => j.rewrite_env(env),
        }
    }

    /// Turns `spawn` into the same command run inside the sandbox (its environment already
    /// passed through [`Jail::rewrite_env`]), within the case-run's limits.
    pub fn wrap(&self, spawn: &mut Spawn) {
        match &self.confined {
            Confined::Bwrap(j) => j.wrap(spawn),
            Confined::Landlock(j) => j.wrap(spawn),
            Confined::Seatbelt(j) => j.wrap(spawn),
        }
        if let Some(b) = &self.bounds {
            b.apply(spawn);
        }
    }

    /// Why a memory or process limit stopped the case-run, if one did.
    pub fn limit_hit(&self) -> Option<String> {
        self.bounds.as_ref()?.hit()
    }
}
