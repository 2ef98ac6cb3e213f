//! Finding a project's root: what is copied into each workspace (discovery and `assay init` use it).

use std::path::{Path, PathBuf};

/// The nearest ancestor of `start` that marks a project: `assay.toml` first (so a project can
/// say so explicitly), then `.git` or `_bmad/` (as the BMAD runner looks), then `.claude/`
/// (as clauditor looks, but never the one in the user's home). Otherwise `fallback`.
pub fn project_root(start: &Path, fallback: &Path) -> PathBuf {
    let home = crate::host::HostEnv::process_home();
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

/// The project of the skill in `skill_dir`, found under `given` (the folder the user named, or
/// the working folder): its nearest marked ancestor ([`project_root`]). With no marker, the
/// skill's grandparent when that is inside `given` (`<project>/skills/<name>/`), else `given`
/// when it holds the skill, else the skill's own folder: never a folder above the one given
/// (a skill folder run as `assay run .` is its own project, not its parent's parent).
pub fn skill_project_root(skill_dir: &Path, given: &Path) -> PathBuf {
    let grandparent = skill_dir.parent().and_then(Path::parent);
    let fallback = match grandparent {
        Some(g) if g.starts_with(given) => g,
        _ if skill_dir.starts_with(given) => given,
        _ => skill_dir,
    };
    project_root(skill_dir, fallback)
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

    #[test]
    fn a_skill_with_no_marker_is_never_given_a_project_above_the_folder_named() {
        let d = tempfile::tempdir().unwrap();
        let given = d.path().join("x/skill");
        std::fs::create_dir_all(&given).unwrap();
        // The folder named is the skill: it is its own project.
        assert_eq!(skill_project_root(&given, &given), given);
        // A skill under `skills/` of the folder named: the folder named.
        let repo = d.path().join("repo");
        let skill = repo.join("skills/greeter");
        std::fs::create_dir_all(&skill).unwrap();
        assert_eq!(skill_project_root(&skill, &repo), repo);
        // Deeper: the skill's grandparent, inside the folder named (a plugin's).
        let deep = repo.join("plugins/p/skills/greeter");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(skill_project_root(&deep, &repo), repo.join("plugins/p"));
        // A skill outside the folder named: its own folder.
        assert_eq!(skill_project_root(&given, &repo), given);
        // A marker still wins.
        std::fs::write(d.path().join("x/assay.toml"), "").unwrap();
        assert_eq!(skill_project_root(&given, &given), d.path().join("x"));
    }
}
