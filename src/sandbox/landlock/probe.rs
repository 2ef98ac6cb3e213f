//! Whether the `landlock` backend works here: the kernel's Landlock ABI (4, Linux 6.7, to
//! limit TCP connects), and a helper that starts confined.

use std::path::PathBuf;
use std::process::Command;

use super::helper_args;
use crate::host::{HostEnv, Unavailable};

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
