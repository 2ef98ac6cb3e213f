//! What `assay init` writes, and how it writes it: the project's only skill when none is
//! named, a dialect's starter suite under the root its runner looks in (with an `assay.toml`
//! when the project has none), the paths to load back to validate it; and writing a suite's
//! files safely — never through a symbolic link, and undone (files created removed, files
//! replaced put back) when what was written does not validate.

use std::path::{Path, PathBuf};

use super::write::Dialect;
use crate::suite::Skill;

/// The `assay.toml` a starter adds when the project has none.
const ASSAY_TOML: &str = "# assay's settings for this project (see docs/running.md). The harness: claude-code,\n# codex, command or a plugin's.\n[run]\nharness = \"claude-code\"\n";

/// The project's only skill or command, where agents look for them.
pub fn only_skill(root: &Path) -> Result<PathBuf, String> {
    let entries = |dir: &str| {
        std::fs::read_dir(root.join(dir))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
    };
    let mut found = Vec::new();
    for dir in [".claude/skills", ".agents/skills", "skills"] {
        found.extend(entries(dir).filter(|p| p.join("SKILL.md").is_file()));
    }
    found.extend(
        entries(".claude/commands")
            .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file()),
    );
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err("no skill or slash command here: pass its path (a folder with SKILL.md, or .claude/commands/<name>.md)".into()),
        n => Err(format!(
            "{n} skills and commands here: pass the one to write evals for ({})",
            found
                .iter()
                .filter_map(|p| p.strip_prefix(root).ok())
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A starter suite, planned: where it goes and each file with its text.
pub struct Starter {
    /// The project it is written into.
    pub root: PathBuf,
    pub files: Vec<(PathBuf, String)>,
}

/// The dialect's starter for the skill at `path`. A skill named on the command line (`named`)
/// gets its own project (the format's own root, else its nearest assay.toml, .git, _bmad or
/// .claude, where that project's runner looks); the project's only skill gets `cwd`.
pub fn starter(
    dialect: &dyn Dialect,
    cwd: &Path,
    path: &Path,
    named: bool,
    skill: &Skill,
) -> Result<Starter, String> {
    let root = match (named, dialect.own_root(path)) {
        (true, Some(own)) => own,
        (true, None) => crate::suite::root::project_root(path.parent().unwrap_or(cwd), cwd),
        (false, _) => cwd.to_path_buf(),
    };
    let mut files = dialect.starter(&root, skill)?;
    if !root.join("assay.toml").exists() {
        files.push((root.join("assay.toml"), ASSAY_TOML.into()));
    }
    Ok(Starter { root, files })
}

impl Starter {
    /// The suite files that already exist (an existing `assay.toml` is never one: it is
    /// only written when there is none).
    pub fn existing(&self) -> Vec<&PathBuf> {
        self.files
            .iter()
            .map(|(p, _)| p)
            .filter(|p| p.exists() && !p.ends_with("assay.toml"))
            .collect()
    }

    /// What to load to validate what was written, one path per suite: a BMAD suite is its
    /// folder's evals.json (with triggers.json), a Skillet suite its folder of cases.
    pub fn suite_paths(&self, dialect: &dyn Dialect) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self
            .files
            .iter()
            .map(|(p, _)| p)
            .filter(|p| !p.ends_with("assay.toml") && !p.ends_with("package.agent.json"))
            .filter(|p| {
                !p.file_name()
                    .is_some_and(|n| super::bmad::triggers::TRIGGER_FILES.iter().any(|t| n == *t))
            })
            .map(|p| dialect.suite_path(p))
            .collect();
        paths.dedup();
        paths
    }
}

/// Why a suite's files were not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The file, or a folder on its way, is a symbolic link.
    #[error("{} is a symbolic link: assay init writes no file through one", .0.display())]
    Link(PathBuf),
    #[error("cannot write {path}: {1}", path = .0.display())]
    Write(PathBuf, std::io::Error),
}

/// Files written, and what undoes them.
#[must_use]
pub struct Written {
    /// Files that were not there before.
    created: Vec<PathBuf>,
    /// Files replaced, with what they held.
    replaced: Vec<(PathBuf, Vec<u8>)>,
}

/// What could not be undone: a file created that could not be removed, or one replaced that
/// could not be put back.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error("cannot remove {path}: {1}", path = .0.display())]
    Remove(PathBuf, std::io::Error),
    #[error("cannot restore {path}: {1}", path = .0.display())]
    Restore(PathBuf, std::io::Error),
}

impl UndoError {
    pub fn path(&self) -> &Path {
        match self {
            UndoError::Remove(p, _) | UndoError::Restore(p, _) => p,
        }
    }

    pub fn io(&self) -> &std::io::Error {
        match self {
            UndoError::Remove(_, e) | UndoError::Restore(_, e) => e,
        }
    }
}

/// Writes `files` under `root` (their folders made), telling `wrote` of each as it is
/// written; nothing is written when any of them, or a folder on its way below `root`, is a
/// symbolic link (a repository can ship one pointing anywhere).
pub fn write_files(
    root: &Path,
    files: &[(PathBuf, String)],
    wrote: &mut dyn FnMut(&Path),
) -> Result<Written, WriteError> {
    if let Some(link) = files.iter().find_map(|(p, _)| link_on_the_way(root, p)) {
        return Err(WriteError::Link(link));
    }
    let written = Written {
        replaced: files
            .iter()
            .filter_map(|(p, _)| Some((p.clone(), std::fs::read(p).ok()?)))
            .collect(),
        created: files
            .iter()
            .map(|(p, _)| p.clone())
            .filter(|p| !p.exists())
            .collect(),
    };
    for (p, text) in files {
        p.parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(p, text))
            .map_err(|e| WriteError::Write(p.clone(), e))?;
        wrote(p);
    }
    Ok(written)
}

impl Written {
    /// Removes the files created and puts back the ones replaced; what could not be.
    pub fn undo(self) -> Vec<UndoError> {
        let mut failed = Vec::new();
        for p in self.created {
            if let Err(e) = std::fs::remove_file(&p) {
                failed.push(UndoError::Remove(p, e));
            }
        }
        for (p, bytes) in self.replaced {
            if let Err(e) = std::fs::write(&p, bytes) {
                failed.push(UndoError::Restore(p, e));
            }
        }
        failed
    }
}

/// The first symbolic link on the way from `root` to `path` (the file itself included), if
/// any; a path outside `root` counts as its own first step.
pub fn link_on_the_way(root: &Path, path: &Path) -> Option<PathBuf> {
    let rel = path.strip_prefix(root).ok()?;
    let mut at = root.to_path_buf();
    for c in rel.components() {
        at.push(c);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Some(at);
        }
    }
    None
}
