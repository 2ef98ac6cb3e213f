//! The bubblewrap command line for one case-run.
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

use std::path::{Path, PathBuf};

use super::endpoint::Plan as NetPlan;
use super::probe::{Bwrap, HELPER_INSIDE};
use super::shown::{self, real_folder_under};
use super::{Network, SandboxRecord};
use crate::process::Spawn;

/// What every sandbox is, before what is shown: its namespaces (the network's is added unless
/// `--network host`), no capabilities and no way to get them back, death with assay, its own
/// `/proc` and a minimal `/dev`.
pub const BASE: &[&str] = &[
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    // Run as root, bubblewrap would keep every capability inside: enough to unmount what
    // hides the host, or remount it writable. None (and no user namespace to get them back
    // in: see [`NO_USERNS`]).
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
];

/// No user namespaces inside. bubblewrap does it by running the command in a second, nested
/// user namespace, where the first process could not mount a copy-on-write workspace; so with
/// one, the first process's seccomp filter refuses them instead (see `inside`), after the mount.
pub const NO_USERNS: &str = "--disable-userns";

/// Where the forwarder's sockets appear inside.
pub const NET_INSIDE: &str = "/run/assay/net";

/// Everything that shapes one case-run's sandbox.
#[derive(Debug, Clone)]
pub struct JailSpec {
    /// The case-run's folder (`work/` and `home/`): writable.
    pub case_dir: PathBuf,
    /// The workspace root (`work/`).
    pub root: PathBuf,
    /// Workspace-relative folders that alone are writable (UAAPS `writable-paths`); empty: all.
    pub writable: Vec<PathBuf>,
    /// Folders (or files) covered by an empty one: projects, run folder, cache, workspaces.
    pub hidden: Vec<PathBuf>,
    /// The user's real HOME, hidden too.
    pub real_home: Option<PathBuf>,
    /// Extra host folders shown read-only (`[run] sandbox_read`).
    pub read_only: Vec<PathBuf>,
    /// Host files covered by an empty one, even inside a folder that is shown.
    pub masked: Vec<PathBuf>,
    pub network: Network,
    /// A copy-on-write workspace: its layers, mounted over `root` inside.
    pub overlay: Option<Layers>,
    /// The size of the sandbox's own `/tmp`, `/dev/shm`, `/run` and `/var/tmp` (the disk
    /// limit); `None`: the kernel's default (half the memory).
    pub tmpfs_size: Option<u64>,
}

/// The layers of a copy-on-write workspace (see `workspace::layers`).
#[derive(Debug, Clone)]
pub struct Layers {
    /// The read-only layers, top first (the case-run's stage, the project's shared copy).
    pub lower: Vec<PathBuf>,
    /// The agent's layer, and overlayfs's work folder beside it (both in `dir`).
    pub upper: PathBuf,
    pub work: PathBuf,
    /// The case-run's folder holding `upper` and `work` (and the stage).
    pub dir: PathBuf,
}

/// What the first process inside may do before it drops them all: mount the overlay, and
/// (as overlayfs does its copying with the mounter's rights) own what it copies up.
const OVERLAY_CAPS: &[&str] = &[
    "CAP_SYS_ADMIN",
    "CAP_DAC_OVERRIDE",
    "CAP_FOWNER",
    "CAP_CHOWN",
    "CAP_SETPCAP",
];

/// Whether overlayfs can take `path` in its mount options (no `:`, `,` or `\\`, UTF-8).
pub fn overlay_safe(path: &Path) -> bool {
    path.to_str().is_some_and(|p| !p.contains([':', ',', '\\']))
}

/// One case-run's bubblewrap sandbox, ready to wrap commands.
#[derive(Debug)]
pub struct BwrapJail {
    bwrap: Bwrap,
    spec: JailSpec,
    net: Option<NetPlan>,
    /// The host side of the network, kept alive as long as the jail.
    forwarder: Option<super::forward::Forwarder>,
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
                let fwd = super::forward::Forwarder::start(&plan.targets())?;
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
        if self.bwrap.helper.file_name().and_then(|n| n.to_str()) != Some(super::inside::HELPER_BIN)
        {
            args.push(super::inside::SUBCOMMAND.into());
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

/// What the kernel shows of itself besides `/proc`: read-only.
const SYS: &str = "/sys";

/// The folders every sandbox has empty and private.
const PRIVATE: &[&str] = &["/tmp", "/var/tmp", "/run", "/dev/shm", "/home", "/root"];

/// What every command of one case-run's sandbox starts with: [`BASE`], its network, the
/// system folders, and an empty folder over every private folder and everything hidden
/// within them; with the folders actually covered.
fn covers(spec: &JailSpec) -> (Vec<String>, Vec<PathBuf>) {
    let mut a: Vec<String> = BASE.iter().map(|x| x.to_string()).collect();
    if spec.overlay.is_none() {
        a.push(NO_USERNS.into());
    }
    a.extend(["--hostname".into(), "assay-sandbox".into()]);
    if spec.network != Network::Host {
        a.push("--unshare-net".into());
    }
    a.extend(system());
    let mut hidden: Vec<PathBuf> = PRIVATE
        .iter()
        .map(PathBuf::from)
        .chain(spec.real_home.clone())
        .chain(spec.hidden.iter().cloned())
        .filter(|p| p.is_absolute() && p.as_os_str().len() > 1)
        .filter(|p| PRIVATE.iter().any(|d| p == Path::new(d)) || in_system(p))
        .collect();
    hidden.sort_by_key(|p| p.components().count());
    let mut covered: Vec<PathBuf> = Vec::new();
    for h in hidden {
        if covered.iter().any(|c| h.starts_with(c)) {
            continue;
        }
        // Only real folders can be covered; a symlink (`/var/run -> /run`) follows its target.
        match std::fs::symlink_metadata(&h) {
            Ok(m) if m.is_dir() => {
                if let Some(n) = spec.tmpfs_size {
                    a.extend(["--size".into(), n.to_string()]);
                }
                a.extend(["--tmpfs".into(), h.display().to_string()]);
                covered.push(h);
            }
            Ok(m) if m.is_file() => mask(&mut a, &h),
            _ => {}
        }
    }
    if std::fs::symlink_metadata("/var/run").is_ok_and(|m| m.file_type().is_symlink()) {
        a.extend(["--symlink".into(), "/run".into(), "/var/run".into()]);
    }
    if spec.network == Network::Host {
        // Name resolution may live under /run (systemd-resolved).
        if let Ok(real) = std::fs::canonicalize("/etc/resolv.conf")
            && (covered.iter().any(|c| real.starts_with(c)) || !in_system(&real))
        {
            ro_bind_at(&mut a, &real, &real);
        }
    }
    (a, covered)
}

/// The system folders, read-only, each where the host has it (a link as a link), and `/sys`:
/// bubblewrap's arguments for all a sandbox shows of the host's tree before its toolchains.
pub fn system() -> Vec<String> {
    let mut a = Vec::new();
    for dir in shown::SYSTEM.iter().chain(&[SYS]) {
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(to) = std::fs::read_link(dir) {
                    a.extend(["--symlink".into(), to.display().to_string(), (*dir).into()]);
                }
            }
            Ok(m) if m.is_dir() => ro_bind_at(&mut a, Path::new(dir), Path::new(dir)),
            _ => {}
        }
    }
    a
}

/// Whether the system folders that every sandbox shows hold `p` (by its path as given, and
/// by its real path).
pub fn in_system(p: &Path) -> bool {
    static REAL: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    let system = REAL.get_or_init(|| {
        let real = shown::SYSTEM
            .iter()
            .filter_map(|d| std::fs::canonicalize(d).ok());
        shown::SYSTEM
            .iter()
            .map(PathBuf::from)
            .chain(real)
            .collect()
    });
    if system.iter().any(|d| p.starts_with(d)) {
        return true;
    }
    std::fs::canonicalize(p).is_ok_and(|r| system.iter().any(|d| r.starts_with(d)))
}

/// `--ro-bind SOURCE DEST`.
fn ro_bind_at(a: &mut Vec<String>, source: &Path, dest: &Path) {
    a.extend([
        "--ro-bind".into(),
        source.display().to_string(),
        dest.display().to_string(),
    ]);
}

/// `--bind PATH PATH`: writable.
fn bind(a: &mut Vec<String>, path: &Path) {
    let p = path.display().to_string();
    a.extend(["--bind".into(), p.clone(), p]);
}

/// An empty, read-only file (or folder) over `path`.
fn mask(a: &mut Vec<String>, path: &Path) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        let p = path.display().to_string();
        a.extend(["--tmpfs".into(), p.clone(), "--remount-ro".into(), p]);
    } else {
        ro_bind_at(a, Path::new("/dev/null"), path);
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
