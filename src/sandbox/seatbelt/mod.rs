//! The `seatbelt` backend (macOS): each command under `sandbox-exec` with a profile made
//! for its case-run. Deny by default; read the system, the toolchains on PATH and the
//! program's install ([`shown`](super::shown)) and the case-run's folder; write only the
//! workspace, the private HOME and its temp folder; connect only to the forwarder's loopback
//! ports; signal only within the sandbox. The process group is killed at the end, as for
//! every command.
//!
//! It cannot run on Linux: the profile is unit-tested here, and `.github/workflows/macos.yml`
//! runs the sandbox attack tests on a macOS runner.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::forward::LoopbackNet;
use super::jail::JailSpec;
use super::landlocked::{allowed_except, writable_parts};
use super::{Network, SandboxRecord, shown};
use crate::host::Unavailable;
use crate::process::Spawn;

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

/// What one command may reach, in the profile's terms.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reach {
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    /// Files never read, even within what is readable.
    pub masked: Vec<PathBuf>,
    /// Loopback ports it may connect to; with `host_network`, anything.
    pub connect: Vec<u16>,
    pub host_network: bool,
}

/// A string literal of the profile language.
fn quoted(p: &Path) -> String {
    let mut s = String::from("\"");
    for c in p.to_string_lossy().chars() {
        match c {
            '"' | '\\' => {
                s.push('\\');
                s.push(c);
            }
            c if c.is_control() => {
                let _ = write!(s, "\\x{:02x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// The profile: deny by default, then what `reach` allows (later rules win).
pub fn profile(reach: &Reach) -> String {
    let mut p = String::from(
        "(version 1)\n(deny default)\n(allow process-exec process-fork)\n(allow signal (target same-sandbox))\n(allow sysctl-read)\n(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\") (global-name \"com.apple.trustd.agent\") (global-name \"com.apple.SecurityServer\"))\n(allow ipc-posix-shm-read-data ipc-posix-shm-write-data)\n(allow file-read-metadata)\n(allow file-read* (literal \"/\"))\n",
    );
    let list = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|d| format!(" (subpath {})", quoted(d)))
            .collect::<String>()
    };
    if !reach.read.is_empty() {
        let _ = writeln!(p, "(allow file-read*{})", list(&reach.read));
    }
    if !reach.write.is_empty() {
        let _ = writeln!(p, "(allow file-read* file-write*{})", list(&reach.write));
    }
    p.push_str("(allow file-write-data (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\"))\n");
    for m in &reach.masked {
        let _ = writeln!(p, "(deny file-read* (literal {}))", quoted(m));
    }
    if reach.host_network {
        p.push_str("(allow network*)\n");
    } else {
        for port in &reach.connect {
            let _ = writeln!(
                p,
                "(allow network-outbound (remote tcp \"localhost:{port}\"))"
            );
        }
    }
    p
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn reach() -> Reach {
        Reach {
            read: vec!["/usr".into(), "/Users/ada/.nvm".into()],
            write: vec!["/private/tmp/ws/001/work".into()],
            masked: vec!["/Users/ada/.nvm/credentials".into()],
            connect: vec![40123],
            host_network: false,
        }
    }

    #[test]
    fn the_profile_denies_by_default_and_allows_only_what_it_lists() {
        let p = profile(&reach());
        assert!(p.starts_with("(version 1)\n(deny default)\n"), "{p}");
        assert!(
            p.contains("(allow file-read* file-write* (subpath \"/private/tmp/ws/001/work\"))"),
            "{p}"
        );
        assert!(
            p.contains("(allow file-read* (subpath \"/usr\") (subpath \"/Users/ada/.nvm\"))"),
            "{p}"
        );
        assert!(
            p.contains("(deny file-read* (literal \"/Users/ada/.nvm/credentials\"))"),
            "{p}"
        );
        assert!(
            p.contains("(allow network-outbound (remote tcp \"localhost:40123\"))"),
            "{p}"
        );
        assert!(!p.contains("(allow network*)"), "{p}");
        // Nothing else is written: the only file-write rules are the workspace's and devices'.
        assert_eq!(p.matches("file-write*").count(), 1, "{p}");
        let masked_after_allow =
            p.find("(deny file-read*").unwrap() > p.find("/Users/ada/.nvm\"))").unwrap();
        assert!(
            masked_after_allow,
            "a mask must come after the allow it narrows: {p}"
        );
    }

    #[test]
    fn a_path_cannot_break_out_of_its_string() {
        let p = profile(&Reach {
            write: vec![PathBuf::from("/tmp/x\") (allow default) (\"")],
            ..Reach::default()
        });
        assert!(!p.contains("\n(allow default)"), "{p}");
        assert!(p.contains("\"/tmp/x\\\") (allow default) (\\\"\""), "{p}");
    }

    #[test]
    fn host_network_allows_the_network_and_model_only_the_ports() {
        let p = profile(&Reach {
            host_network: true,
            ..reach()
        });
        assert!(p.contains("(allow network*)"), "{p}");
        let p = profile(&Reach {
            connect: Vec::new(),
            ..reach()
        });
        assert!(!p.contains("network"), "{p}");
    }
}
