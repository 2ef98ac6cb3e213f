//! What a case-run's command may read of the host besides the system: the toolchains on its
//! PATH, its program's install folder and `[run] sandbox_read`; never a secret of the user's,
//! nor (by showing a parent) a folder the sandbox hides. Both backends show the same:
//! bubblewrap by binding these folders again over what it covered, Landlock by allowing them.

use std::path::{Path, PathBuf};

use super::jail::JailSpec;

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

/// The files never to be read, even inside a folder that is shown: the spec's (the cache's
/// key) and the registry tokens in each shown folder.
pub fn masked(s: &JailSpec, shown: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = shown
        .iter()
        .flat_map(|t| SECRET_FILES.iter().map(move |f| t.join(f)))
        .filter(|f| f.is_file())
        .collect();
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
