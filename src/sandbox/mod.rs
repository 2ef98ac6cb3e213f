//! Containment: the agent under evaluation is untrusted, so every agent process, setup and
//! teardown script and deterministic test command of a case-run runs in an OS sandbox, by one
//! of three backends ([`backend`]): bubblewrap, Landlock (Linux, nothing to install) or
//! Seatbelt (macOS).
//!
//! With bubblewrap: new user, mount, PID, IPC and UTS namespaces; the host
//! read-only with the user's HOME, the projects, the run folder, the cache and the other
//! workspaces out of view; only the case-run's workspace and private HOME writable; its own
//! `/proc`; and everything inside killed when the case-run ends. The network is the harness's
//! model endpoints only (through [`forward`]), none, or the host's on request.
//!
//! - [`spec`]: what shapes one case-run's sandbox, whatever the backend ([`JailSpec`]).
//! - [`backend`]: the backends, which work here, which `--sandbox` takes; [`Jail`].
//! - [`bwrap`]: the bubblewrap backend: the command line for one case-run, what it shows of
//!   the host ([`bwrap::mounts`]), whether it works here ([`bwrap::probe`]: the exit-3
//!   message and its fixes).
//! - [`landlock`]: the Landlock backend's host side (the rules; confining is done inside).
//! - [`seatbelt`]: the Seatbelt backend and its profile.
//! - [`shown`]: what of the host a command may read besides the system (every backend).
//! - [`allowed`]: the Landlock and Seatbelt rules for what a command may write, and reading
//!   around masked files.
//! - [`endpoint`]: the model endpoints a harness talks to, and how they are reached inside.
//! - [`forward`]: the host side of the network: a Unix socket per allowed endpoint.
//! - [`inside`]: `assay-sandbox-init` (or `assay __sandbox-exec`), the first process inside
//!   bubblewrap's and Landlock's sandboxes: the overlay, loopback listeners that lead to those
//!   sockets, the command's confinement (`confine`) and, under Landlock, its reaping (`reap`).
//! - [`limits`]: the case-run's limits ([`cgroup`] for memory and processes, [`disk`]).

pub mod allowed;
pub mod backend;
pub mod bwrap;
pub mod cgroup;
pub mod disk;
pub mod endpoint;
pub mod forward;
pub mod inside;
pub mod landlock;
pub mod limits;
pub mod seatbelt;
pub mod shown;
pub mod spec;

use serde::{Deserialize, Serialize};

use crate::record::case_run::SandboxRecord;

pub use backend::{Backend, Jail};
pub use bwrap::probe::Bwrap;
pub use spec::{JailSpec, Layers};

/// `--sandbox`: how agents are contained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// The strongest backend that works here (bubblewrap, then Landlock; Seatbelt on macOS);
    /// where none does, refuse to start an agent (exit 3).
    #[default]
    Auto,
    /// bubblewrap, or refuse to start (exit 3).
    Bwrap,
    /// Landlock and seccomp (Linux 6.7 or later, nothing to install), or refuse to start.
    Landlock,
    /// macOS's `sandbox-exec`, or refuse to start.
    Seatbelt,
    /// No sandbox: the agent runs as you, with your files and network (recorded as such).
    None,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Auto => "auto",
            SandboxMode::Bwrap => "bwrap",
            SandboxMode::Landlock => "landlock",
            SandboxMode::Seatbelt => "seatbelt",
            SandboxMode::None => "none",
        }
    }
}

/// `--network`: what an agent may reach from its sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// Only the harness's model endpoint(s), through a forwarder.
    #[default]
    Model,
    /// No network at all.
    None,
    /// The host's network (an explicit opt-in).
    Host,
}

impl Network {
    pub fn as_str(self) -> &'static str {
        match self {
            Network::Model => "model",
            Network::None => "none",
            Network::Host => "host",
        }
    }
}

/// Why a sandboxed command did not start, when it did not: the first process inside says
/// "started" on the launcher's status pipe, which the command never holds, so what the agent
/// prints or how it exits cannot pass its own failure off as the sandbox's.
pub fn failed_to_start(exited: &crate::process::Exited) -> Option<String> {
    (exited.started == Some(false) && !exited.timed_out && !exited.interrupted).then(|| {
        let tail = exited.stderr_tail.trim();
        format!(
            "the sandbox could not start the command: {}",
            tail.lines().last().unwrap_or("the sandbox said nothing")
        )
    })
}

impl SandboxRecord {
    /// What the sandbox let through, for an agent that could not reach its model.
    pub fn why_unreachable(&self) -> Option<String> {
        match self.network.as_deref()? {
            "none" => Some("the sandbox has no network: --network none".into()),
            "host" => None,
            n => Some(format!(
                "the sandbox's network is `{n}`: it reaches {}",
                if self.endpoints.is_empty() {
                    "nothing".to_string()
                } else {
                    self.endpoints.join(", ")
                }
            )),
        }
    }

    pub fn unsandboxed() -> SandboxRecord {
        SandboxRecord {
            kind: "none".into(),
            network: None,
            endpoints: Vec::new(),
            limits: None,
        }
    }
}

/// How one case-run is to be contained, decided when the run is planned.
#[derive(Debug, Clone, Default)]
pub struct Setting {
    /// The backend, or `None` to run unsandboxed (`--sandbox none`).
    pub backend: Option<Backend>,
    pub network: Network,
    /// Folders covered inside: the projects, the current folder, the run folder, the
    /// workspaces' parent.
    pub hidden: Vec<std::path::PathBuf>,
    /// The user's HOME, covered too.
    pub real_home: Option<std::path::PathBuf>,
    /// Host folders shown read-only besides the system (`[run] sandbox_read`).
    pub read_only: Vec<std::path::PathBuf>,
    /// Host files never readable inside, even within a folder that is shown (the cache's key).
    pub masked: Vec<std::path::PathBuf>,
    /// Workspace folders that alone are writable (UAAPS `writable-paths`); empty: all.
    pub writable: Vec<std::path::PathBuf>,
    /// The case-run's limits, and where this machine lets assay enforce them.
    pub limits: limits::Limits,
    pub enforcement: limits::Enforcement,
}

impl Setting {
    /// The sandbox of one case-run whose folder (workspace and HOME) is `case_dir`, or `None`
    /// when unsandboxed. Starts the network forwarder to `endpoints` (within a tokio runtime).
    pub fn jail(
        &self,
        case_dir: &std::path::Path,
        root: &std::path::Path,
        overlay: Option<Layers>,
        endpoints: &[String],
    ) -> std::io::Result<Option<Jail>> {
        let Some(backend) = &self.backend else {
            return Ok(None);
        };
        let confined = backend.jail(
            JailSpec {
                case_dir: case_dir.to_path_buf(),
                root: root.to_path_buf(),
                writable: self.writable.clone(),
                hidden: self.hidden.clone(),
                real_home: self.real_home.clone(),
                read_only: self.read_only.clone(),
                masked: self.masked.clone(),
                network: self.network,
                overlay,
                tmpfs_size: self.limits.disk,
            },
            endpoints,
        )?;
        let bounds = self.enforcement.bounds(self.limits, case_dir)?;
        Ok(Some(Jail::new(confined, Some(bounds))))
    }
}
