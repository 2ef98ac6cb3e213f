//! What a case-run's command may read of the host besides the system: the toolchains on its
//! PATH, its program's install folder and `[run] sandbox_read`; never a secret of the user's,
//! nor (by showing a parent) a folder the sandbox hides. Both backends show the same:
//! bubblewrap by binding these folders again over what it covered, Landlock by allowing them.

use std::path::{Path, PathBuf};

use super::spec::JailSpec;

/// Top-level folders of a HOME never shown to an agent, even when a PATH entry is inside.
pub const SECRET_HOME_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config",
    ".docker",
    ".kube",
    ".azure",
    ".claude",
    ".codex",
    ".gemini",
    ".copilot",
    ".qwen",
    ".netrc",
    ".password-store",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
];

/// Files masked inside a toolchain folder that is shown (registry tokens).
pub const SECRET_FILES: &[&str] = &["credentials", "credentials.toml", ".credentials.toml"];

/// The system folders every command may read and run, under both Linux backends: bubblewrap
/// shows these alone of the host's tree (with what [`folders`] adds), Landlock allows these.
pub const SYSTEM: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/nix/store",
];

/// The system folder never read whole: its files that not everyone may read are masked.
const PRIVATE_IN: &str = "/etc";

/// How deep [`private_system_files`] looks.
const PRIVATE_DEPTH: usize = 8;

/// The files and folders of `/etc` that not every user may read (`/etc/shadow`, `/etc/gshadow`,
/// host keys, `/etc/ssl/private`) but the user running assay may (root: all of them; the agent
/// runs as that user and would read them), masked. Found once per process (a walk of `/etc`, iterative and bounded).
pub fn private_system_files() -> &'static [PathBuf] {
    static FOUND: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| not_world_readable(Path::new(PRIVATE_IN)))
}

/// Everything under `root` (links not followed) without the world's read bit; a folder so
/// found is not entered.
fn not_world_readable(root: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(m) = e.path().symlink_metadata() else {
                continue;
            };
            if m.file_type().is_symlink() {
                continue;
            }
            if m.permissions().mode() & 0o004 == 0 {
                // What the user running assay (and so the agent) may not read anyway needs no mask.
                if readable(&e.path()) {
                    out.push(e.path());
                }
            } else if m.is_dir() && depth < PRIVATE_DEPTH {
                stack.push((e.path(), depth + 1));
            }
        }
    }
    out.sort();
    out
}

/// Whether this process may read `path` (root may read everything).
fn readable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: access with a NUL-terminated path that outlives the call.
    unsafe { libc::access(c.as_ptr(), libc::R_OK) == 0 }
}

/// The `PATH` a command will run with (its environment's), for what its tools need.
pub fn path_of(spawn: &crate::process::Spawn) -> String {
    spawn
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

/// The folders shown read-only, real paths: the toolchains on `path_var` and the install
/// folder of `program` that `hidden` says the sandbox would otherwise hide, and `[run]
/// sandbox_read`; without any secret of the user's or any parent of a hidden folder.
pub fn folders(
    s: &JailSpec,
    programs: &[String],
    path_var: &str,
    hidden: impl Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    let mut shown: Vec<PathBuf> = std::env::split_paths(path_var)
        .filter_map(|dir| toolchain_root(&dir, s.real_home.as_deref()))
        .filter(|t| hidden(t))
        .collect();
    for p in programs
        .iter()
        .filter_map(|p| resolve(p, path_var))
        .filter(|p| hidden(p))
    {
        shown.push(install_root(&p));
    }
    shown.extend(s.read_only.iter().cloned());
    let mut real: Vec<PathBuf> = shown
        .iter()
        // The real path: `..` or a symlink must not walk a shown folder into a hidden one.
        .filter_map(|t| std::fs::canonicalize(t).ok())
        .filter(|t| {
            !secret(t, s.real_home.as_deref()) && !s.hidden.iter().any(|h| h.starts_with(t))
        })
        .collect();
    real.sort();
    real.dedup();
    real
}

/// The files (and folders) never to be read, even inside a folder that is shown: the spec's
/// (the cache's key), the registry tokens in each shown folder, and the system's private files
/// ([`private_system_files`]).
pub fn masked(s: &JailSpec, shown: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = shown
        .iter()
        .flat_map(|t| SECRET_FILES.iter().map(move |f| t.join(f)))
        .filter(|f| f.is_file())
        .collect();
    out.extend(private_system_files().iter().cloned());
    out.extend(
        s.masked
            .iter()
            .filter(|m| m.is_absolute() && m.is_file())
            .cloned(),
    );
    out
}

/// Whether `root/rel` is a folder reached without any symlink (and without `..`).
pub fn real_folder_under(root: &Path, rel: &Path) -> bool {
    let mut at = root.to_path_buf();
    for c in rel.components() {
        let std::path::Component::Normal(name) = c else {
            if c == std::path::Component::CurDir {
                continue;
            }
            return false;
        };
        at.push(name);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            _ => return false,
        }
    }
    true
}

/// For a PATH folder, what to show so the tools in it work: under the user's HOME, its
/// top-level folder there (`~/.pyenv/shims` → `~/.pyenv`); a `node_modules/.bin`, its
/// `node_modules` (the links there lead into it); elsewhere the folder itself.
pub fn toolchain_root(dir: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if !dir.is_absolute() {
        return None;
    }
    if let Some(home) = home
        && let Ok(rel) = dir.strip_prefix(home)
    {
        let first = rel.components().next()?;
        return Some(home.join(first));
    }
    Some(install_root(&dir.join("_")))
}

pub fn secret(p: &Path, home: Option<&Path>) -> bool {
    let Some(home) = home else { return false };
    if p == home || home.starts_with(p) {
        return true;
    }
    p.strip_prefix(home)
        .ok()
        .and_then(|rel| rel.components().next())
        .is_some_and(|c| SECRET_HOME_DIRS.iter().any(|s| c.as_os_str() == *s))
}

/// The program's real path, found on `path_var` as the harnesses' preflight finds it.
fn resolve(program: &str, path_var: &str) -> Option<PathBuf> {
    let path = crate::host::HostEnv {
        path: path_var.to_string(),
        vars: Vec::new(),
    };
    std::fs::canonicalize(path.which(program)?).ok()
}

/// The folder the sandbox shows for `program` found on `path_var` (its [`install_root`]).
pub fn program_root(program: &str, path_var: &str) -> Option<PathBuf> {
    resolve(program, path_var).map(|p| install_root(&p))
}

/// The folder a program is installed in: the `node_modules` it is part of (a CLI from npm
/// needs its dependencies beside it), else its own folder.
pub fn install_root(program: &Path) -> PathBuf {
    program
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .unwrap_or_else(|| program.parent().unwrap_or(program))
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolchains_under_home_show_their_top_folder_but_never_secrets() {
        let home = Path::new("/home/ada");
        assert_eq!(
            toolchain_root(Path::new("/home/ada/.pyenv/shims"), Some(home)),
            Some(PathBuf::from("/home/ada/.pyenv"))
        );
        assert_eq!(
            toolchain_root(Path::new("/usr/bin"), Some(home)),
            Some(PathBuf::from("/usr/bin"))
        );
        assert_eq!(
            toolchain_root(Path::new("/p/tests/agents/node_modules/.bin"), Some(home)),
            Some(PathBuf::from("/p/tests/agents/node_modules"))
        );
        assert!(secret(Path::new("/home/ada/.ssh"), Some(home)));
        assert!(secret(Path::new("/home/ada/.config"), Some(home)));
        assert!(secret(Path::new("/home/ada"), Some(home)));
        assert!(secret(Path::new("/home"), Some(home)));
        assert!(!secret(Path::new("/home/ada/.cargo"), Some(home)));
    }

    #[test]
    fn files_the_world_may_not_read_are_found_and_their_folders_not_entered() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let t = d.path();
        std::fs::create_dir_all(t.join("ssl/private")).unwrap();
        std::fs::write(t.join("ssl/private/key"), "k").unwrap();
        std::fs::write(t.join("shadow"), "s").unwrap();
        std::fs::write(t.join("passwd"), "p").unwrap();
        let mode = |p: &str, m| {
            std::fs::set_permissions(t.join(p), std::fs::Permissions::from_mode(m)).unwrap()
        };
        mode("shadow", 0o640);
        mode("ssl/private", 0o700);
        std::os::unix::fs::symlink(t.join("shadow"), t.join("link")).unwrap();
        assert_eq!(
            not_world_readable(t),
            [t.join("shadow"), t.join("ssl/private")]
        );
    }

    #[test]
    fn an_npm_cli_brings_its_node_modules() {
        assert_eq!(
            install_root(Path::new(
                "/p/tests/agents/node_modules/@anthropic-ai/claude-code/cli.js"
            )),
            PathBuf::from("/p/tests/agents/node_modules")
        );
        assert_eq!(
            install_root(Path::new("/opt/agent/bin/agent")),
            PathBuf::from("/opt/agent/bin")
        );
    }
}
