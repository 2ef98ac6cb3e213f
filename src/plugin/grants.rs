//! What a plugin may touch. Deny-by-default: no filesystem, no environment, no network, no
//! inherited stdio. Each grant is explicit, per plugin, in `assay.toml`.

use std::collections::BTreeSet;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::sockets::SocketAddrUse;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::host::STDERR_CAP;

pub const DEFAULT_TIMEOUT_MS: u64 = 1_000;
pub const DEFAULT_MEMORY_MIB: u64 = 64;

use crate::config::PluginConfig;

/// The grants and limits in force for one plugin, resolved against the project root.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grants {
    pub read_dirs: Vec<PathBuf>,
    pub env: Vec<String>,
    pub network: Vec<String>,
    #[serde(skip)]
    addrs: BTreeSet<SocketAddr>,
    pub timeout: Duration,
    pub memory_bytes: usize,
}

impl Default for Grants {
    fn default() -> Self {
        Grants {
            read_dirs: Vec::new(),
            env: Vec::new(),
            network: Vec::new(),
            addrs: BTreeSet::new(),
            timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
            memory_bytes: (DEFAULT_MEMORY_MIB as usize) << 20,
        }
    }
}

/// One `read_dirs` entry, resolved (`..` and symbolic links included) to a folder that must lie
/// inside the (resolved) project root: a grant can never reach past the project.
fn read_dir_grant(project: &Path, d: &str) -> Result<PathBuf, String> {
    let p = project.join(d).canonicalize().map_err(|e| {
        format!(
            "read_dirs: `{d}` is not a folder under {}: {e}",
            project.display()
        )
    })?;
    if !p.starts_with(project) {
        return Err(format!(
            "read_dirs: `{d}` resolves to {}, outside the project {}; a plugin may only be granted folders inside it",
            p.display(),
            project.display()
        ));
    }
    if !p.is_dir() {
        return Err(format!(
            "read_dirs: `{d}` is not a folder under {}",
            project.display()
        ));
    }
    Ok(p)
}

impl Grants {
    pub fn from_config(c: &PluginConfig, root: &std::path::Path) -> Result<Self, String> {
        let mut addrs = BTreeSet::new();
        for n in &c.network {
            let found = n
                .to_socket_addrs()
                .map_err(|e| format!("network grant `{n}` is not a reachable host:port: {e}"))?;
            addrs.extend(found);
        }
        let mut read_dirs = Vec::new();
        if !c.read_dirs.is_empty() {
            let project = root
                .canonicalize()
                .map_err(|e| format!("read_dirs: cannot resolve {}: {e}", root.display()))?;
            for d in &c.read_dirs {
                read_dirs.push(read_dir_grant(&project, d)?);
            }
        }
        let mib = c.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB);
        if !(1..=super::engine::MAX_MEMORY_MIB).contains(&mib) {
            return Err(format!(
                "memory_mib must be between 1 and {}, not {mib}",
                super::engine::MAX_MEMORY_MIB
            ));
        }
        Ok(Grants {
            read_dirs,
            env: c.env.clone(),
            network: c.network.clone(),
            addrs,
            timeout: Duration::from_millis(c.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS).max(1)),
            memory_bytes: (c.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB).max(1) as usize) << 20,
        })
    }

    /// A WASI context with exactly these grants; stderr goes to the returned pipe.
    pub fn wasi(&self) -> (WasiCtx, MemoryOutputPipe) {
        let stderr = MemoryOutputPipe::new(STDERR_CAP);
        let mut b = WasiCtxBuilder::new();
        b.stderr(stderr.clone());
        for name in &self.env {
            if let Some(v) = crate::host::HostEnv::process_var(name) {
                b.env(name, v);
            }
        }
        for dir in &self.read_dirs {
            let guest = dir.file_name().map(|n| n.to_string_lossy().into_owned());
            // A folder that vanished since loading is simply not granted.
            let _ = b.preopened_dir(dir, guest.unwrap_or_else(|| ".".into()), FsPerms::ReadOnly);
        }
        b.allow_udp(false);
        b.allow_ip_name_lookup(!self.addrs.is_empty());
        b.allow_tcp(!self.addrs.is_empty());
        let allowed = self.addrs.clone();
        b.socket_addr_check(move |addr, use_| {
            // Connecting binds an ephemeral local port first; that bind is part of the grant.
            let ephemeral_bind = matches!(use_, SocketAddrUse::TcpBind)
                && addr.ip().is_unspecified()
                && addr.port() == 0;
            let ok = !allowed.is_empty() && (ephemeral_bind || allowed.contains(&addr));
            Box::pin(async move { ok })
        });
        (b.build(), stderr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(root: &std::path::Path, dirs: &[&str]) -> Result<Grants, String> {
        let c = PluginConfig {
            path: "x.wasm".into(),
            read_dirs: dirs.iter().map(|d| d.to_string()).collect(),
            ..PluginConfig::default()
        };
        Grants::from_config(&c, root)
    }

    #[test]
    fn read_dirs_resolve_inside_the_project_only() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = d.path().join("p");
        std::fs::create_dir_all(root.join("data/deep")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("away")).unwrap();
        std::os::unix::fs::symlink(root.join("data/deep"), root.join("near")).unwrap();
        let g = grant(&root, &["data", "data/deep/..", "near", "."]).unwrap();
        let canon = root.canonicalize().unwrap();
        assert_eq!(
            g.read_dirs,
            [
                canon.join("data"),
                canon.join("data"),
                canon.join("data/deep"),
                canon.clone()
            ]
        );
        for bad in ["..", "../../../etc", "away", "data/../..", "/etc"] {
            let e = grant(&root, &[bad]).unwrap_err();
            assert!(
                e.starts_with(&format!("read_dirs: `{bad}` resolves to"))
                    && e.contains("outside the project"),
                "{bad}: {e}"
            );
        }
        let e = grant(&root, &["missing"]).unwrap_err();
        assert!(e.contains("is not a folder"), "{e}");
    }
}
