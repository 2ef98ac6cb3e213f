//! Resolving paths written in spec files, without letting them escape where they belong.

use std::path::{Component, Path, PathBuf};

/// Folders of a project that are not its content (version control, dependencies, build output,
/// assay's own): discovery never enters them, and workspaces and cache keys leave them out.
pub const SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    "dist",
    "build",
    ".next",
    ".cache",
    ".assay",
];

pub fn is_skipped_dir(name: &str) -> bool {
    SKIPPED_DIRS.contains(&name)
}

/// Why a path written in a spec cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path is empty")]
    Empty,
    #[error("absolute paths are not allowed; write a path relative to {base}")]
    Absolute { base: String },
    #[error("`{path}` escapes {base}")]
    Escapes { path: String, base: String },
    #[error("`{path}` does not exist in {base}")]
    Missing { path: String, base: String },
    #[error("`{path}` is not a file")]
    NotAFile { path: String },
    #[error("`{path}` holds more than {max} files")]
    TooMany { path: String, max: usize },
}

/// Whether a written path is absolute on any platform a spec may come from.
pub fn is_absolute(p: &str) -> bool {
    let b = p.as_bytes();
    p.starts_with('/')
        || p.starts_with('\\')
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
}

/// A walk of `dir` that enters hidden folders (`.claude`) but never `.git` nor the folders
/// discovery skips ([`is_skipped_dir`]).
pub fn walk(dir: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(dir)
        .hidden(false)
        .filter_entry(|e| {
            !e.file_name()
                .to_str()
                .is_some_and(|n| is_skipped_dir(n) || n == ".git")
        })
        .build()
}

/// Removes `.` and folds `..` lexically. Returns `None` when `..` climbs above the start.
pub fn normalize(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(s) => out.push(s),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Folds `.` and `..` in an absolute path without touching the filesystem.
pub fn normalize_abs(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if out.parent().is_some() {
                    out.pop();
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Resolves `written` (relative) under `base` and checks it stays inside `base`, through `..`
/// and through symlinks. With `must_exist`, the target must be an existing file.
pub fn resolve_inside(
    base: &Path,
    written: &str,
    base_label: &str,
    must_exist: bool,
) -> Result<PathBuf, PathError> {
    if written.trim().is_empty() {
        return Err(PathError::Empty);
    }
    if is_absolute(written) {
        return Err(PathError::Absolute {
            base: base_label.to_string(),
        });
    }
    let escapes = || PathError::Escapes {
        path: written.to_string(),
        base: base_label.to_string(),
    };
    let rel = normalize(Path::new(written)).ok_or_else(escapes)?;
    let joined = base.join(&rel);
    match joined.canonicalize() {
        Ok(real) => {
            let real_base = base.canonicalize().unwrap_or_else(|_| base.to_path_buf());
            if !real.starts_with(&real_base) {
                return Err(escapes());
            }
            if must_exist && !real.is_file() {
                return Err(PathError::NotAFile {
                    path: written.to_string(),
                });
            }
            Ok(joined)
        }
        Err(_) if must_exist => Err(PathError::Missing {
            path: written.to_string(),
            base: base_label.to_string(),
        }),
        Err(_) => Ok(joined),
    }
}

/// Checks a path that will be created inside a workspace: relative, and not climbing out.
pub fn workspace_relative(written: &str) -> Result<PathBuf, PathError> {
    if written.trim().is_empty() {
        return Err(PathError::Empty);
    }
    if is_absolute(written) {
        return Err(PathError::Absolute {
            base: "the workspace".into(),
        });
    }
    match normalize(Path::new(written)) {
        Some(p) if !p.as_os_str().is_empty() => Ok(p),
        _ => Err(PathError::Escapes {
            path: written.to_string(),
            base: "the workspace".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_holds_through_dotdot_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("spec");
        std::fs::create_dir_all(base.join("fixtures")).unwrap();
        std::fs::write(base.join("fixtures/a.csv"), "x").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), base.join("link.txt")).unwrap();

        assert!(resolve_inside(&base, "fixtures/a.csv", "the spec folder", true).is_ok());
        assert!(resolve_inside(&base, "fixtures/../fixtures/a.csv", "x", true).is_ok());
        assert!(matches!(
            resolve_inside(&base, "../secret.txt", "x", true),
            Err(PathError::Escapes { .. })
        ));
        #[cfg(unix)]
        assert!(matches!(
            resolve_inside(&base, "link.txt", "x", true),
            Err(PathError::Escapes { .. })
        ));
        assert!(matches!(
            resolve_inside(&base, "/etc/passwd", "x", true),
            Err(PathError::Absolute { .. })
        ));
        assert!(matches!(
            resolve_inside(&base, "nope.csv", "x", true),
            Err(PathError::Missing { .. })
        ));
        assert!(matches!(
            resolve_inside(&base, "fixtures", "x", true),
            Err(PathError::NotAFile { .. })
        ));
    }

    #[test]
    fn workspace_paths_stay_inside() {
        assert_eq!(
            workspace_relative("src/./a.ts").unwrap(),
            PathBuf::from("src/a.ts")
        );
        assert!(workspace_relative("../a").is_err());
        assert!(workspace_relative("C:\\a").is_err());
        assert!(workspace_relative(".").is_err());
    }
}
