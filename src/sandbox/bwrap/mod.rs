//! The `bwrap` backend, bubblewrap's namespaces (the strongest): [`BwrapJail`], the
//! bubblewrap command line for one case-run; [`mounts`], what it shows of the host before what
//! a command needs; [`probe`], whether bubblewrap works here.
//!
//! What the agent sees, in mount order (later mounts cover earlier ones):
//! 1. of the host's tree, the system folders alone ([`shown::SYSTEM`]: `/usr`, `/etc`, the
//!    libraries, …), read-only, with `/sys`, its own `/proc` and a minimal `/dev`: no `/var`,
//!    `/opt`, `/srv`, `/mnt` or other work folders; the files of `/etc` not everyone may read
//!    (`/etc/shadow`, …) masked;
//! 2. private, empty `/tmp`, `/var/tmp`, `/run` and `/dev/shm`; empty `/home` and `/root`;
//!    empty folders over every project, the run folder, the cache and the workspaces' parent
//!    that lie within what (1) shows ("hidden");
//! 3. read-only: the agent program's install folder and the toolchains on PATH that (1) does not
//!    show or (2) hid (`~/.cargo`, `~/.pyenv`, … but never `~/.ssh`, `~/.aws`, `~/.config`, …),
//!    and the folders `[run] sandbox_read` names: the same as the Landlock backend allows;
//! 4. assay itself at `/run/assay/assay` (the first process inside), and the network sockets
//!    at `/run/assay/net`;
//! 5. writable: the case-run's folder (workspace and private HOME), at the same path as
//!    outside, so every path a harness computed stays true; with UAAPS `writable-paths`, the
//!    workspace read-only except those folders.

pub mod mounts;
pub mod probe;

use std::path::{Path, PathBuf};

use self::mounts::{bind, covers, in_system, mask, ro_bind_at};
use self::probe::{Bwrap, HELPER_INSIDE};
use crate::process::Spawn;
use crate::sandbox::endpoint::EndpointPlan as NetPlan;
use crate::sandbox::forward::Forwarder;
use crate::sandbox::inside::{HELPER_BIN, SUBCOMMAND};
use crate::sandbox::shown::{self, real_folder_under};
use crate::sandbox::spec::{JailSpec, NET_INSIDE};
use crate::{record::case_run::SandboxRecord, sandbox::Network};

/// What the first process inside may do before it drops them all: mount the overlay, and
/// (as overlayfs does its copying with the mounter's rights) own what it copies up.
const OVERLAY_CAPS: &[&str] = &[
    "CAP_SYS_ADMIN",
    "CAP_DAC_OVERRIDE",
    "CAP_FOWNER",
    "CAP_CHOWN",
    "CAP_SETPCAP",
];

/// One case-run's bubblewrap sandbox, ready to wrap commands.
#[derive(Debug)]
pub struct BwrapJail {
    bwrap: Bwrap,
    spec: JailSpec,
    net: Option<NetPlan>,
    /// The host side of the network, kept alive as long as the jail.
    forwarder: Option<Forwarder>,
    /// The start of every command line: see [`covers`]. Worked out once per case-run.
    covers: Vec<String>,
    /// The folders those cover.
    covered: Vec<PathBuf>,
}

impl BwrapJail {
    /// Prepares the sandbox; with `network = model`, starts the forwarder to `endpoints`.
    /// Must be called within a tokio runtime.
    pub fn new(bwrap: Bwrap, spec: JailSpec, endpoints: &[String]) -> std::io::Result<BwrapJail> {
        let (net, forwarder) = match spec.network {
            Network::Model => {
                let plan = NetPlan::new(endpoints);
                let fwd = Forwarder::start(&plan.targets())?;
                (Some(plan), Some(fwd))
            }
            Network::None | Network::Host => (None, None),
        };
        // Writable paths must exist to be bound.
        for w in &spec.writable {
            std::fs::create_dir_all(spec.root.join(w))?;
        }
        let (covers, covered) = covers(&spec);
        Ok(BwrapJail {
            bwrap,
            spec,
            net,
            forwarder,
            covers,
            covered,
        })
    }

    /// What to record of this sandbox in the case-run's result.
    pub fn record(&self) -> SandboxRecord {
        SandboxRecord {
            kind: "bwrap".into(),
            network: Some(self.spec.network.as_str().into()),
            endpoints: self.net.as_ref().map(|n| n.describe()).unwrap_or_default(),
            limits: None,
        }
    }

    /// The environment of everything run in this sandbox: model endpoints as reached from
    /// inside (see [`NetPlan::rewrite_env`]).
    pub fn rewrite_env(&self, env: &mut Vec<(String, String)>) {
        if let Some(net) = &self.net {
            net.rewrite_env(env);
        }
    }

    /// Turns `spawn` into the same command run inside the sandbox (its environment already
    /// passed through [`Jail::rewrite_env`]).
    pub fn wrap(&self, spawn: &mut Spawn) {
        let path_var = shown::path_of(spawn);
        let mut args = self.mounts(&spawn.programs(), &path_var);
        // With an overlay, the working folder may exist only once it is mounted.
        let cwd = spawn.cwd.display().to_string();
        if self.spec.overlay.is_none() {
            args.extend(["--chdir".into(), cwd.clone()]);
        } else {
            // bubblewrap itself starts in a folder the host has.
            spawn.cwd = self.spec.root.clone();
        }
        args.push("--".into());
        args.push(HELPER_INSIDE.into());
        if self.bwrap.helper.file_name().and_then(|n| n.to_str()) != Some(HELPER_BIN) {
            args.push(SUBCOMMAND.into());
        }
        if let Some(o) = &self.spec.overlay {
            let path = |p: &Path| p.display().to_string();
            args.extend(["--overlay-at".into(), path(&self.spec.root)]);
            for l in &o.lower {
                args.extend(["--overlay-lower".into(), path(l)]);
            }
            args.extend(["--overlay-upper".into(), path(&o.upper)]);
            args.extend(["--overlay-work".into(), path(&o.work)]);
            args.extend(["--hide".into(), path(&o.dir)]);
            for l in o.lower.iter().filter(|l| !l.starts_with(&o.dir)) {
                args.extend(["--hide".into(), path(l)]);
            }
            args.extend(["--cwd".into(), cwd]);
        }
        if let Some(net) = &self.net {
            args.extend(net.inside_args());
        }
        args.push("--".into());
        args.push(std::mem::take(&mut spawn.program));
        args.append(&mut spawn.args);
        spawn.program = self.bwrap.program.display().to_string();
        spawn.args = args;
        spawn.launcher = true;
    }

    fn mounts(&self, programs: &[String], path_var: &str) -> Vec<String> {
        let s = &self.spec;
        let mut a = self.covers.clone();
        self.show(&mut a, programs, path_var);
        ro_bind_at(&mut a, &self.bwrap.helper, Path::new(HELPER_INSIDE));
        if let Some(dir) = self.forwarder.as_ref().and_then(|f| f.dir()) {
            ro_bind_at(&mut a, dir, Path::new(NET_INSIDE));
        }
        // The case-run's folder read-only, and each of its parts (workspace, HOME, temp)
        // writable as a mount of its own: a mount point cannot be renamed or replaced, so the
        // agent cannot swap `work/` for a symlink that assay would follow afterwards.
        ro_bind_at(&mut a, &s.case_dir, &s.case_dir);
        let mut parts = vec![s.root.clone()];
        if let Ok(entries) = std::fs::read_dir(&s.case_dir) {
            parts.extend(
                entries
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path())
                    .filter(|p| *p != s.root),
            );
        }
        for p in parts {
            bind(&mut a, &p);
        }
        if let Some(o) = &s.overlay {
            // The layers outside the case-run's folder (the project's shared copy), for the
            // first process inside to mount and then take away.
            for l in o.lower.iter().filter(|l| !l.starts_with(&s.case_dir)) {
                ro_bind_at(&mut a, l, l);
            }
            for cap in OVERLAY_CAPS {
                a.extend(["--cap-add".into(), (*cap).into()]);
            }
        }
        if !s.writable.is_empty() {
            ro_bind_at(&mut a, &s.root, &s.root);
            for w in &s.writable {
                // bubblewrap resolves a bind's source on the host: a symlink anywhere on the
                // way (an earlier process of the case-run could have made one) would make a
                // host folder writable. Such a path stays read-only.
                if real_folder_under(&s.root, w) {
                    bind(&mut a, &s.root.join(w));
                }
            }
        }
        a
    }

    /// Shows again, read-only, what a command needs that the covers hid (see
    /// [`shown::folders`]), then masks the files never to be read (the cache's key, registry
    /// tokens) wherever a shown folder would show them.
    fn show(&self, a: &mut Vec<String>, programs: &[String], path_var: &str) {
        let s = &self.spec;
        let hidden_here = |p: &Path| self.covered.iter().any(|c| p.starts_with(c)) || !in_system(p);
        let shown = shown::folders(s, programs, path_var, hidden_here);
        for t in &shown {
            ro_bind_at(a, t, t);
        }
        for m in shown::masked(s, &shown) {
            // Only where it would be seen: in the system, or inside a folder shown again.
            if !hidden_here(&m) || shown.iter().any(|d| m.starts_with(d)) {
                mask(a, &m);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A sandbox with no network, hiding and showing nothing, for the case-run folder `ws`.
    pub(crate) fn spec(ws: &Path) -> JailSpec {
        JailSpec {
            case_dir: ws.to_path_buf(),
            root: ws.join("work"),
            writable: Vec::new(),
            hidden: Vec::new(),
            real_home: None,
            read_only: Vec::new(),
            masked: Vec::new(),
            network: Network::None,
            overlay: None,
            tmpfs_size: None,
        }
    }

    fn bwrap() -> Bwrap {
        Bwrap {
            program: "/usr/bin/bwrap".into(),
            version: String::new(),
            helper: "/bin/true".into(),
        }
    }

    /// The sources of every `flag SOURCE DEST` in a bubblewrap command line.
    fn sources<'a>(args: &'a [String], flag: &str) -> Vec<&'a String> {
        args.windows(2)
            .filter(|w| w[0] == flag)
            .map(|w| &w[1])
            .collect()
    }

    #[test]
    fn a_folder_shown_read_only_cannot_reach_a_secret_by_dot_dot() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join(".cargo")).unwrap();
        let project = d.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        let jail = BwrapJail::new(
            bwrap(),
            JailSpec {
                hidden: vec![project.clone()],
                real_home: Some(home.clone()),
                read_only: vec![
                    project.join("../home/.ssh"),
                    project.join("../home/.cargo"),
                    project.join(".."),
                ],
                ..spec(&d.path().join("ws"))
            },
            &[],
        )
        .unwrap();
        let args = jail.mounts(&["true".to_string()], "/usr/bin");
        let shown = sources(&args, "--ro-bind");
        let cargo = std::fs::canonicalize(home.join(".cargo")).unwrap();
        assert!(shown.iter().any(|p| Path::new(p) == cargo), "{args:?}");
        assert!(!shown.iter().any(|p| p.contains(".ssh")), "{args:?}");
        let parent = std::fs::canonicalize(d.path()).unwrap();
        assert!(!shown.iter().any(|p| Path::new(p) == parent), "{args:?}");
    }

    #[test]
    fn a_writable_path_through_a_symlink_stays_read_only() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("ws/work");
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::fs::create_dir_all(d.path().join("host-etc")).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        let jail = BwrapJail::new(
            bwrap(),
            JailSpec {
                writable: vec!["real".into(), "out".into()],
                ..spec(&d.path().join("ws"))
            },
            &[],
        )
        .unwrap();
        // After the jail made `out`, something in the case-run swapped it for a link.
        std::fs::remove_dir(root.join("out")).unwrap();
        std::os::unix::fs::symlink(d.path().join("host-etc"), root.join("out")).unwrap();
        let args = jail.mounts(&["true".to_string()], "/usr/bin");
        let bound = sources(&args, "--bind");
        assert!(bound.iter().any(|p| p.ends_with("work/real")), "{args:?}");
        assert!(!bound.iter().any(|p| p.ends_with("work/out")), "{args:?}");
    }
}
