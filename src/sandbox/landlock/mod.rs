//! The `landlock` backend, host side: for machines where bubblewrap is missing or user
//! namespaces are blocked. Nothing to install and no privilege: the first process inside
//! (`inside`) stays outside the command's confinement as its subreaper, and confines the
//! command before `exec` to a Landlock ruleset made here, a seccomp filter, and no
//! capabilities.
//!
//! What the command may do:
//! - read and run the system folders, the toolchains on its PATH and its program's install
//!   folder ([`shown`](super::shown)), `[run] sandbox_read`, and its case-run's folder;
//! - write only its workspace, private HOME and temp folder (`TMPDIR`);
//! - connect over TCP only to the forwarder's loopback ports (Landlock ABI 4, Linux 6.7);
//!   no UDP, raw, netlink or Unix sockets (the filter);
//! - not signal, ptrace or read `/proc/<pid>/environ` of anything outside (Landlock's ptrace
//!   rule; signals and abstract Unix sockets scoped from ABI 6, Linux 6.12).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::forward::LoopbackNet;
use super::jail::JailSpec;
use super::shown::{self, real_folder_under};
use super::{Network, SandboxRecord};
use crate::host::{HostEnv, Unavailable};
use crate::process::Spawn;

/// The Landlock ABI that can limit TCP connects (Linux 6.7).
pub const MIN_ABI: u32 = 4;
/// The ABI that scopes signals and abstract Unix sockets (Linux 6.12).
pub const SCOPED_ABI: u32 = 6;

/// Landlock, working on this machine, and the program that confines commands with it.
#[derive(Debug, Clone)]
pub struct Landlock {
    pub abi: u32,
    pub helper: PathBuf,
}

/// The kernel's Landlock ABI; 0 without Landlock.
pub fn abi() -> u32 {
    #[cfg(target_os = "linux")]
    {
        const VERSION: libc::c_uint = 1; // LANDLOCK_CREATE_RULESET_VERSION
        // SAFETY: the version query takes no attribute.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                VERSION,
            )
        };
        u32::try_from(v).unwrap_or(0)
    }
    #[cfg(not(target_os = "linux"))]
    0
}

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

/// Checks that Landlock can limit the network here (ABI ≥ 4) and that the helper starts.
/// `ASSAY_LANDLOCK_ABI` in `host` lowers the ABI seen (to try the older kernels' paths).
pub fn probe(host: &HostEnv, helper: PathBuf) -> Result<Landlock, Unavailable> {
    if !cfg!(target_os = "linux") {
        return Err(Unavailable {
            message: "Landlock is a Linux feature".into(),
            fix: String::new(),
        });
    }
    let abi = match host.var("ASSAY_LANDLOCK_ABI").and_then(|v| v.parse().ok()) {
        Some(v) => abi().min(v),
        None => abi(),
    };
    if abi == 0 {
        return Err(Unavailable {
            message: "this kernel has no Landlock (Linux 5.13 or later, with `landlock` in the `lsm=` boot list)".into(),
            fix: "install bubblewrap, or boot a kernel with Landlock enabled".into(),
        });
    }
    if abi < MIN_ABI {
        return Err(Unavailable {
            message: format!(
                "this kernel's Landlock (ABI {abi}) cannot limit the network: ABI {MIN_ABI} (Linux 6.7) can"
            ),
            fix: "install bubblewrap, or run a Linux 6.7 or later kernel".into(),
        });
    }
    let out = Command::new(&helper)
        .args(helper_args(&helper))
        .args(["--landlock", "--read", "/", "--", "/bin/true"])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| Unavailable {
            message: format!("cannot start {}: {e}", helper.display()),
            fix: String::new(),
        })?;
    if !out.status.success() {
        return Err(Unavailable {
            message: format!(
                "a Landlock sandbox cannot be made here: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            fix: "install bubblewrap".into(),
        });
    }
    Ok(Landlock { abi, helper })
}

/// The helper's first arguments: the subcommand, when it is assay itself.
fn helper_args(helper: &Path) -> Vec<String> {
    if helper.file_name().and_then(|n| n.to_str()) == Some(super::inside::HELPER_BIN) {
        Vec::new()
    } else {
        vec![super::inside::SUBCOMMAND.into()]
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

/// The case-run's folders written to: each part of the case-run's folder (workspace, HOME,
/// temp), or with UAAPS `writable-paths`, those folders of the workspace alone (reached
/// without a symlink) and the other parts.
pub(super) fn writable_parts(s: &JailSpec) -> Vec<PathBuf> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(&s.case_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| *p != s.root)
        .collect();
    if s.writable.is_empty() {
        parts.push(s.root.clone());
    } else {
        parts.extend(
            s.writable
                .iter()
                .filter(|w| real_folder_under(&s.root, w))
                .map(|w| s.root.join(w)),
        );
    }
    parts
}

/// `dir`, or where a masked file is inside it, each entry of it but the way to that file.
pub(super) fn allowed_except(dir: &Path, masked: &[PathBuf]) -> Vec<PathBuf> {
    if masked.iter().any(|m| m == dir) {
        return Vec::new();
    }
    if !masked.iter().any(|m| m.starts_with(dir)) || !dir.is_dir() {
        return vec![dir.to_path_buf()];
    }
    // A link inside is left out, not followed: allowed, it would grant wherever it leads.
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
        .flat_map(|e| allowed_except(&e.path(), masked))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_masked_file_leaves_its_siblings_readable_and_itself_out() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path();
        std::fs::create_dir_all(t.join("a/b")).unwrap();
        std::fs::write(t.join("a/b/key"), "k").unwrap();
        std::fs::write(t.join("a/b/other"), "o").unwrap();
        std::fs::write(t.join("a/c"), "c").unwrap();
        std::os::unix::fs::symlink("/root", t.join("a/b/link")).unwrap();
        let mut got = allowed_except(t, &[t.join("a/b/key")]);
        got.sort();
        assert_eq!(got, [t.join("a/b/other"), t.join("a/c")]);
        assert_eq!(allowed_except(t, &[]), [t.to_path_buf()]);
    }
}
