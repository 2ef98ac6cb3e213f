//! The `landlock` backend, host side: for machines where bubblewrap is missing or user
//! namespaces are blocked. Nothing to install and no privilege: the first process inside
//! (`inside`) stays outside the command's confinement as its subreaper, and confines the
//! command before `exec` to a Landlock ruleset made here, a seccomp filter, and no
//! capabilities.
//!
//! What the command may do:
//! - read and run the system folders, the toolchains on its PATH and its program's install
//!   folder ([`shown`](crate::sandbox::shown)), `[run] sandbox_read`, and its case-run's folder;
//! - write only its workspace, private HOME and temp folder (`TMPDIR`);
//! - connect over TCP only to the forwarder's loopback ports (Landlock ABI 4, Linux 6.7);
//!   no UDP, raw, netlink or Unix sockets (the filter);
//! - not signal, ptrace or read `/proc/<pid>/environ` of anything outside (Landlock's ptrace
//!   rule; signals and abstract Unix sockets scoped from ABI 6, Linux 6.12).
//!
//! [`probe`] says whether it works here; [`LandlockJail`] makes one case-run's rules.

pub mod probe;

use std::path::{Path, PathBuf};

use self::probe::Landlock;
use crate::process::Spawn;
use crate::sandbox::allowed::{allowed_except, writable_parts};
use crate::sandbox::forward::LoopbackNet;
use crate::sandbox::inside::{HELPER_BIN, SUBCOMMAND};
use crate::sandbox::shown;
use crate::sandbox::spec::JailSpec;
use crate::{record::case_run::SandboxRecord, sandbox::Network};

/// What the kernel shows of itself: read, never written. `/dev` is not here: only
/// [`DEVICES`] are reachable (no terminal, console screen or disk of the host's).
const KERNEL: &[&str] = &["/proc", "/sys"];

/// Devices every command may read and write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The helper's first arguments: the subcommand, when it is assay itself.
fn helper_args(helper: &Path) -> Vec<String> {
    if helper.file_name().and_then(|n| n.to_str()) == Some(HELPER_BIN) {
        Vec::new()
    } else {
        vec![SUBCOMMAND.into()]
    }
}

/// One case-run's Landlock sandbox, ready to wrap commands.
#[derive(Debug)]
pub struct LandlockJail {
    landlock: Landlock,
    spec: JailSpec,
    /// The model network (`--network model`), kept alive as long as the jail.
    net: Option<LoopbackNet>,
}

impl LandlockJail {
    /// Prepares the sandbox; with `network = model`, starts the forwarder to `endpoints`.
    /// Must be called within a tokio runtime.
    pub fn new(
        landlock: Landlock,
        spec: JailSpec,
        endpoints: &[String],
    ) -> std::io::Result<LandlockJail> {
        let net = LoopbackNet::start(spec.network, endpoints)?;
        for w in &spec.writable {
            std::fs::create_dir_all(spec.root.join(w))?;
        }
        Ok(LandlockJail {
            landlock,
            spec,
            net,
        })
    }

    pub fn record(&self) -> SandboxRecord {
        LoopbackNet::record(self.net.as_ref(), "landlock", self.spec.network)
    }

    /// The environment inside: model endpoints at the forwarder's loopback ports.
    pub fn rewrite_env(&self, env: &mut Vec<(String, String)>) {
        if let Some(net) = &self.net {
            net.rewrite_env(env);
        }
    }

    /// Turns `spawn` into the same command run by the helper, confined.
    pub fn wrap(&self, spawn: &mut Spawn) {
        let path_var = shown::path_of(spawn);
        let mut args = helper_args(&self.landlock.helper);
        args.push("--landlock".into());
        args.extend(self.rules(&spawn.programs(), &path_var));
        // The helper kills what is left a little before assay kills it.
        let grace = spawn.grace.saturating_sub(spawn.grace / 5);
        args.extend(["--grace-ms".into(), grace.as_millis().to_string()]);
        args.push("--".into());
        args.push(std::mem::take(&mut spawn.program));
        args.append(&mut spawn.args);
        spawn.program = self.landlock.helper.display().to_string();
        spawn.args = args;
        spawn.launcher = true;
    }

    /// The helper's `--read`, `--write`, `--device`, `--connect` and `--host-network`.
    fn rules(&self, programs: &[String], path_var: &str) -> Vec<String> {
        let s = &self.spec;
        let mut a = Vec::new();
        let mut add = |flag: &str, p: &Path| {
            a.push(flag.to_string());
            a.push(p.display().to_string());
        };
        let shown = shown::folders(s, programs, path_var, |_| true);
        let masked = shown::masked(s, &shown);
        let system = shown::SYSTEM.iter().map(Path::new).filter(|p| p.exists());
        for dir in system.chain(shown.iter().map(PathBuf::as_path)) {
            for p in allowed_except(dir, &masked) {
                add("--read", &p);
            }
        }
        for p in KERNEL.iter().map(Path::new).filter(|p| p.exists()) {
            add("--read", p);
        }
        if s.network == Network::Host
            && let Some(dir) = std::fs::canonicalize("/etc/resolv.conf")
                .ok()
                .and_then(|r| r.parent().map(Path::to_path_buf))
        {
            add("--read", &dir); // name resolution may live under /run
        }
        add("--read", &s.case_dir);
        for p in writable_parts(s) {
            add("--write", &p);
        }
        for d in DEVICES.iter().map(Path::new).filter(|p| p.exists()) {
            add("--device", d);
        }
        match (s.network, &self.net) {
            (Network::Host, _) => a.push("--host-network".into()),
            (_, Some(net)) => {
                for port in net.ports() {
                    a.extend(["--connect".into(), port.to_string()]);
                }
            }
            _ => {}
        }
        a
    }
}
