//! Finding a project's root: what is copied into each workspace (discovery and `assay init` use it).

use std::path::{Path, PathBuf};

/// The nearest ancestor of `start` that marks a project: `assay.toml` first (so a project can
/// say so explicitly), then `.git` or `_bmad/` (as the BMAD runner looks), then `.claude/`
/// (as clauditor looks, but never the one in the user's home). Otherwise `fallback`.
pub fn project_root(start: &Path, fallback: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let marked = |markers: &[&str]| {
        start.ancestors().find(|dir| {
            markers.iter().any(|m| {
                let p = dir.join(m);
                p.exists() && !(*m == ".claude" && home.as_deref() == Some(*dir))
            })
        })
    };
    marked(&["assay.toml"])
        .or_else(|| marked(&[".git", "_bmad"]))
        .or_else(|| marked(&[".claude"]))
        .map(Path::to_path_buf)
        .unwrap_or_else(|| fallback.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assay_toml_wins_over_git() {
        let d = tempfile::tempdir().unwrap();
        let proj = d.path().join("repo/examples/one");
        std::fs::create_dir_all(proj.join("evals/x")).unwrap();
        std::fs::create_dir_all(d.path().join("repo/.git")).unwrap();
        assert_eq!(
            project_root(&proj.join("evals/x"), d.path()),
            d.path().join("repo")
        );
        std::fs::write(proj.join("assay.toml"), "").unwrap();
        assert_eq!(project_root(&proj.join("evals/x"), d.path()), proj);
        let lone = tempfile::tempdir().unwrap();
        assert_eq!(
            project_root(lone.path(), Path::new("/fallback")),
            PathBuf::from("/fallback")
        );
    }
}
