//! Is bubblewrap here, and does it work? Checked once per run, before any case starts.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::host::{HostEnv, Unavailable};

/// A bubblewrap that works on this machine, and the assay binary to run inside it.
#[derive(Debug, Clone)]
pub struct Bwrap {
    pub program: PathBuf,
    /// `bwrap --version`, for the record.
    pub version: String,
    /// The assay executable, bound read-only into every sandbox as its first process.
    pub helper: PathBuf,
}

/// Where the helper (assay itself) appears inside a sandbox.
pub const HELPER_INSIDE: &str = "/run/assay/assay";

/// The Debian/Ubuntu package, for the message.
const INSTALL: &str =
    "install bubblewrap 0.8 or newer (`apt-get install bubblewrap`, `dnf install bubblewrap`)";

/// Finds bubblewrap on `host`'s PATH and checks that it can make the namespaces a case-run
/// needs (user, mount, PID, IPC, UTS, network). `helper` is the assay binary (default: this
/// process's executable).
pub fn probe(host: &HostEnv, helper: Option<PathBuf>) -> Result<Bwrap, Unavailable> {
    if !cfg!(target_os = "linux") {
        return Err(Unavailable {
            message: "the sandbox is built on Linux (bubblewrap) only; on this system agents cannot be contained yet".into(),
            fix: "pass --sandbox none to run agents unsandboxed (recorded in run.json and every report)".into(),
        });
    }
    let program = host
        .var("ASSAY_BWRAP")
        .map(PathBuf::from)
        .or_else(|| host.which("bwrap"))
        .ok_or_else(|| Unavailable {
            // Only the fact: whether agents can be contained at all is for the caller to say
            // (Landlock may contain them; `no sandbox works` says when nothing does).
            message: "bubblewrap (`bwrap`) is not installed".into(),
            fix: format!("{INSTALL}, or pass --sandbox none to run agents unsandboxed (recorded in run.json and every report)"),
        })?;
    let helper = match helper {
        Some(h) => h,
        None => helper_beside(std::env::current_exe().map_err(|e| Unavailable {
            message: format!("cannot find the assay executable to run inside the sandbox: {e}"),
            fix: String::new(),
        })?),
    };
    // Every namespace a case-run may use, the network's included.
    let out = Command::new(&program)
        .args(super::mounts::BASE)
        .args(super::mounts::system())
        .args([super::mounts::NO_USERNS, "--unshare-net", "--", "true"])
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Unavailable {
            message: format!("cannot start {}: {e}", program.display()),
            fix: INSTALL.into(),
        })?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(Unavailable {
            message: format!(
                "bubblewrap ({}) cannot make a sandbox here: {why}",
                program.display()
            ),
            fix: fix_for(&why),
        });
    }
    Ok(Bwrap {
        version: version(&program),
        program,
        helper,
    })
}

/// The small `assay-sandbox-init` installed beside assay, else assay itself (which runs the
/// same code as `assay __sandbox-exec`, at the cost of loading all of assay).
fn helper_beside(exe: PathBuf) -> PathBuf {
    let small = exe.with_file_name(crate::sandbox::inside::HELPER_BIN);
    if small.is_file() { small } else { exe }
}

/// The fix for a failing bubblewrap, by what it said.
pub fn fix_for(stderr: &str) -> String {
    let userns = [
        "setting up uid map",
        "RTM_NEWADDR",
        "No permissions to creat",
        "Operation not permitted",
        "user namespace",
    ];
    if userns.iter().any(|s| stderr.contains(s)) {
        "unprivileged user namespaces are restricted on this machine (Ubuntu 23.10 and later, including GitHub's ubuntu-24.04 runners, restrict them through AppArmor). Either give bwrap its own AppArmor profile, /etc/apparmor.d/bwrap with `abi <abi/4.0>, include <tunables/global> profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, }` then `apparmor_parser -r /etc/apparmor.d/bwrap`, or on a throwaway CI machine `sysctl kernel.apparmor_restrict_unprivileged_userns=0`; see docs/running.md. Or pass --sandbox none to run agents unsandboxed".into()
    } else {
        format!("{INSTALL}, or pass --sandbox none to run agents unsandboxed")
    }
}

fn version(program: &Path) -> String {
    Command::new(program)
        .arg("--version")
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_bwrap_names_the_package_and_the_opt_out() {
        let host = HostEnv {
            path: "/nonexistent".into(),
            vars: Vec::new(),
        };
        let e = probe(&host, Some(PathBuf::from("/bin/true"))).unwrap_err();
        assert_eq!(e.message, "bubblewrap (`bwrap`) is not installed");
        assert!(e.fix.contains("apt-get install bubblewrap"), "{}", e.fix);
        assert!(e.fix.contains("--sandbox none"), "{}", e.fix);
    }

    #[test]
    fn a_userns_restriction_gets_the_apparmor_fixes() {
        let f = fix_for("bwrap: setting up uid map: Permission denied");
        assert!(f.contains("apparmor_restrict_unprivileged_userns=0"), "{f}");
        assert!(f.contains("userns"), "{f}");
        let f = fix_for("bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted");
        assert!(f.contains("AppArmor"), "{f}");
    }
}
