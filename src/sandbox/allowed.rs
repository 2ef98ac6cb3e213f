//! The rules of the backends that allow rather than hide (Landlock, Seatbelt): the folders a
//! command may write, and a folder allowed entry by entry around the files masked in it.

use std::path::{Path, PathBuf};

use super::shown::real_folder_under;
use super::spec::JailSpec;

/// The case-run's folders written to: each part of the case-run's folder (workspace, HOME,
/// temp), or with UAAPS `writable-paths`, those folders of the workspace alone (reached
/// without a symlink) and the other parts.
pub fn writable_parts(s: &JailSpec) -> Vec<PathBuf> {
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
pub fn allowed_except(dir: &Path, masked: &[PathBuf]) -> Vec<PathBuf> {
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
