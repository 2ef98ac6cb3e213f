//! The `seatbelt` backend (macOS): each command under `sandbox-exec` with a profile made
//! for its case-run. Deny by default; read the system, the toolchains on PATH and the
//! program's install ([`shown`](crate::sandbox::shown)) and the case-run's folder; write only the
//! workspace, the private HOME and its temp folder; connect only to the forwarder's loopback
//! ports; signal only within the sandbox. The process group is killed at the end, as for
//! every command.
//!
//! It cannot run on Linux: the profile ([`profile`]) is unit-tested, and
//! `.github/workflows/macos.yml` runs the sandbox attack tests on a macOS runner.

pub mod profile;

use std::path::PathBuf;

use self::profile::{Reach, profile};
use crate::host::Unavailable;
use crate::process::Spawn;
use crate::sandbox::allowed::{allowed_except, writable_parts};
use crate::sandbox::forward::LoopbackNet;
use crate::sandbox::spec::JailSpec;
use crate::{
    record::case_run::SandboxRecord,
    sandbox::{Network, shown},
};

/// `sandbox-exec`, where it is.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// macOS's sandbox, working here.
#[derive(Debug, Clone)]
pub struct Seatbelt {
    pub program: PathBuf,
}

/// Checks that `sandbox-exec` runs a command under a deny-by-default profile.
pub fn probe() -> Result<Seatbelt, Unavailable> {
    if !cfg!(target_os = "macos") {
        return Err(Unavailable {
            message: "Seatbelt (`sandbox-exec`) is macOS's".into(),
            fix: String::new(),
        });
    }
    let out = std::process::Command::new(SANDBOX_EXEC)
        .args([
            "-p",
            "(version 1)(deny default)(allow process-exec)(allow process-fork)(allow file-read*)",
            "/usr/bin/true",
        ])
        .env_clear()
        .output()
        .map_err(|e| Unavailable {
            message: format!("cannot start {SANDBOX_EXEC}: {e}"),
            fix: String::new(),
        })?;
    if !out.status.success() {
        return Err(Unavailable {
            message: format!(
                "sandbox-exec cannot make a sandbox here: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            fix: String::new(),
        });
    }
    Ok(Seatbelt {
        program: SANDBOX_EXEC.into(),
    })
}

/// The system folders every command may read and run on macOS.
const SYSTEM: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var/db/timezone",
    "/dev",
    "/opt/homebrew",
    "/usr/local",
];

/// One case-run's Seatbelt sandbox.
#[derive(Debug)]
pub struct SeatbeltJail {
    seatbelt: Seatbelt,
    spec: JailSpec,
    /// The model network (`--network model`), kept alive as long as the jail.
    net: Option<LoopbackNet>,
}

impl SeatbeltJail {
    /// Prepares the sandbox; with `network = model`, starts the forwarder to `endpoints`.
    pub fn new(
        seatbelt: Seatbelt,
        spec: JailSpec,
        endpoints: &[String],
    ) -> std::io::Result<SeatbeltJail> {
        let net = LoopbackNet::start(spec.network, endpoints)?;
        for w in &spec.writable {
            std::fs::create_dir_all(spec.root.join(w))?;
        }
        Ok(SeatbeltJail {
            seatbelt,
            spec,
            net,
        })
    }

    pub fn record(&self) -> SandboxRecord {
        LoopbackNet::record(self.net.as_ref(), "seatbelt", self.spec.network)
    }

    pub fn rewrite_env(&self, env: &mut Vec<(String, String)>) {
        if let Some(net) = &self.net {
            net.rewrite_env(env);
        }
    }

    /// What `program` may reach in this case-run.
    pub fn reach(&self, programs: &[String], path_var: &str) -> Reach {
        let s = &self.spec;
        let shown = shown::folders(s, programs, path_var, |_| true);
        let mut read: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
        read.extend(shown.iter().flat_map(|d| allowed_except(d, &[])));
        read.push(s.case_dir.clone());
        Reach {
            read,
            write: writable_parts(s),
            masked: shown::masked(s, &shown),
            connect: self
                .net
                .as_ref()
                .map(LoopbackNet::ports)
                .unwrap_or_default(),
            host_network: s.network == Network::Host,
        }
    }

    pub fn wrap(&self, spawn: &mut Spawn) {
        let path_var = shown::path_of(spawn);
        let reach = self.reach(&spawn.programs(), &path_var);
        let mut args = vec!["-p".to_string(), profile(&reach)];
        args.push(std::mem::take(&mut spawn.program));
        args.append(&mut spawn.args);
        spawn.program = self.seatbelt.program.display().to_string();
        spawn.args = args;
    }
}
