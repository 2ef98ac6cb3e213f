//! Copying trees fast: walk once, create folders, then copy files in parallel (reflinks where
//! the filesystem has them).

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::record::layout;
use crate::suite::paths::is_skipped_dir;

/// Copies `from` into `to`, merging into what is there (later copies win, as `rsync -a`).
/// With `project` set, skips vendored and build folders and what `.gitignore` excludes.
/// Symlinks are never followed: see [`copy_tree_reporting`].
pub fn copy_tree(from: &Path, to: &Path, project: bool) -> std::io::Result<u64> {
    copy_tree_except(from, to, project, &[])
}

/// [`copy_tree`], never entering the folders in `except` (assay's own run and workspace
/// folders when they sit inside the project). Files that vanish during the copy are skipped.
pub fn copy_tree_except(
    from: &Path,
    to: &Path,
    project: bool,
    except: &[PathBuf],
) -> std::io::Result<u64> {
    copy_tree_reporting(from, to, project, except).map(|c| c.bytes)
}

/// What [`copy_tree_reporting`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Copied {
    /// Bytes of file content copied.
    pub bytes: u64,
    /// Symlinks not recreated because they point outside the tree being copied (absolute, or
    /// relative and climbing out of it), relative to the tree's root, in walk order.
    pub skipped_links: Vec<PathBuf>,
}

/// [`copy_tree_except`], telling which symlinks were skipped.
///
/// A symlink is never followed. One whose target, resolved lexically from the link's folder
/// (the target itself is never looked at), stays inside the tree is recreated as the
/// equivalent relative link in normal form (`..` only leading, then names), so no `..` ever
/// applies to another link and the copy cannot reach out of `to`. An absolute symlink or one
/// that leaves the tree is skipped and listed: a copied project must give the agent under
/// evaluation no path out of its workspace.
pub fn copy_tree_reporting(
    from: &Path,
    to: &Path,
    project: bool,
    except: &[PathBuf],
) -> std::io::Result<Copied> {
    copy_walk(from, to, walker(from, Filter::whole(project), except))
}

/// What of a skill's own folder is never installed with it: its eval specs (`evals/`, where
/// skill-creator and the Agent Skills layouts keep them, fixtures included; `assay.toml`).
pub const SKILL_SPECS: &[&str] = &["evals", "assay.toml"];

/// Copies the skill folder `from` into `to`: the skill's files alone, as it ships. Never
/// `.assay/` or a version-control folder ([`NEVER_SHIPPED`]), an assay run folder, what the
/// skill's own `.gitignore` files exclude, its eval specs ([`SKILL_SPECS`]), nor `except`
/// (every suite's spec files). A `dist/` or `node_modules/` it ships (not ignored) is the
/// skill's.
pub fn copy_skill(from: &Path, to: &Path, except: &[PathBuf]) -> std::io::Result<u64> {
    copy_walk(from, to, skill_walk(from, except)).map(|c| c.bytes)
}

/// A walk of the skill folder `from` over what [`copy_skill`] installs (the cache keys a
/// skill by the same files).
pub fn skill_walk(from: &Path, except: &[PathBuf]) -> ignore::Walk {
    let mut except = except.to_vec();
    except.extend(SKILL_SPECS.iter().map(|n| from.join(n)));
    walker(from, Filter::SKILL, &except)
}

/// Folders that are never part of what a skill ships: assay's own and version control's.
pub const NEVER_SHIPPED: &[&str] = &[".assay", ".git", ".hg", ".svn"];

fn never_shipped(name: &str) -> bool {
    NEVER_SHIPPED.contains(&name)
}

/// What a walk leaves out besides `except`.
#[derive(Debug, Clone, Copy)]
struct Filter {
    /// The folders left out by name, at any depth (with assay's run folders); `None`: none.
    skipped_dirs: Option<fn(&str) -> bool>,
    /// What `.gitignore` and `.ignore` files in the tree exclude.
    ignore_files: bool,
    /// And those of the folders above the tree.
    parents: bool,
}

impl Filter {
    /// A skill's folder: its own ignore files only (a project's `.gitignore` naming
    /// `.claude/` must not empty a skill kept there).
    const SKILL: Filter = Filter {
        skipped_dirs: Some(never_shipped),
        ignore_files: true,
        parents: false,
    };

    fn whole(project: bool) -> Filter {
        Filter {
            skipped_dirs: project.then_some(is_skipped_dir as fn(&str) -> bool),
            ignore_files: project,
            parents: project,
        }
    }
}

fn walker(from: &Path, filter: Filter, except: &[PathBuf]) -> ignore::Walk {
    let except = except.to_vec();
    ignore::WalkBuilder::new(from)
        .hidden(false)
        .git_ignore(filter.ignore_files)
        .git_exclude(filter.ignore_files)
        .git_global(false)
        .ignore(filter.ignore_files)
        .parents(filter.parents)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| {
            let dir = e.depth() > 0 && e.file_type().is_some_and(|t| t.is_dir());
            let skipped = dir
                && filter.skipped_dirs.is_some_and(|by_name| {
                    by_name(&e.file_name().to_string_lossy()) || is_run_folder(e.path())
                });
            // Files too: a suite's spec file is never copied.
            !(skipped || (e.depth() > 0 && except.iter().any(|x| x == e.path())))
        })
        .build()
}

/// Whether `dir` is an assay run folder (`--output-dir` inside the project): an earlier run's
/// results and grading are never shown to an agent.
fn is_run_folder(dir: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(dir.join(layout::RUN_JSON)) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(4096).read_to_end(&mut head).is_err() {
        return false;
    }
    let schema = crate::record::run::SCHEMA.trim_end_matches(char::is_alphanumeric);
    String::from_utf8_lossy(&head).contains(schema)
}

/// Copies what `walker` walks of `from` into `to`.
fn copy_walk(from: &Path, to: &Path, walker: ignore::Walk) -> std::io::Result<Copied> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut links: Vec<(PathBuf, PathBuf)> = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e)
                if e.io_error()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound) =>
            {
                continue;
            }
            Err(e) => return Err(std::io::Error::other(e)),
        };
        let rel = entry.path().strip_prefix(from).unwrap_or(entry.path());
        let dest = to.join(rel);
        match entry.file_type() {
            Some(t) if t.is_dir() => dirs.push(dest),
            Some(t) if t.is_symlink() => links.push((entry.path().to_path_buf(), dest)),
            Some(t) if t.is_file() => files.push((entry.path().to_path_buf(), dest)),
            _ => {}
        }
    }
    for d in &dirs {
        std::fs::create_dir_all(d)?;
    }
    let mut skipped_links = Vec::new();
    for (src, dest) in &links {
        let target = match std::fs::read_link(src) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let rel = src.strip_prefix(from).unwrap_or(src);
        if rel.as_os_str().is_empty() {
            continue;
        }
        let Some(inside) = link_inside(rel, &target) else {
            skipped_links.push(rel.to_path_buf());
            continue;
        };
        remove_existing(dest)?;
        std::os::unix::fs::symlink(inside, dest)?;
    }
    // Copying is I/O-bound: more threads than cores keep the disk busy.
    static REFLINKS: ReflinkProbe = ReflinkProbe {
        failures: std::sync::atomic::AtomicUsize::new(0),
    };
    let reflinks = &REFLINKS;
    let one = |(src, dest): &(PathBuf, PathBuf)| match copy_into_existing_dir(src, dest, reflinks) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !src.exists() => Ok(0),
        other => other,
    };
    // A few files are copied here and now: waking a thread pool costs more than it saves.
    let bytes = if files.len() < 64 {
        files.iter().map(one).sum::<std::io::Result<u64>>()?
    } else {
        let copy_all = || {
            files
                .par_iter()
                .map(one)
                .collect::<std::io::Result<Vec<u64>>>()
                .map(|sizes| sizes.iter().sum())
        };
        match io_pool() {
            Some(pool) => pool.install(copy_all)?,
            None => copy_all()?,
        }
    };
    Ok(Copied {
        bytes,
        skipped_links,
    })
}

/// The target to give a copy of the symlink at `link` (relative to the tree's root) whose
/// target is `target`, or `None` when the target is absolute or, resolved lexically from the
/// link's folder, leaves the tree. The answer is relative, in normal form: `..` only at the
/// start (climbing real folders, never past the root), then names.
fn link_inside(link: &Path, target: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let dir: Vec<&std::ffi::OsStr> = link
        .parent()
        .into_iter()
        .flat_map(Path::components)
        .map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let mut resolved = dir.clone();
    for c in target.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                resolved.pop()?;
            }
            Component::Normal(n) => resolved.push(n),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    let common = dir
        .iter()
        .zip(&resolved)
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in common..dir.len() {
        out.push("..");
    }
    for n in &resolved[common..] {
        out.push(n);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    Some(out)
}

fn io_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(8)
            .thread_name(|i| format!("assay-copy-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Copies one file whose folder exists: straight over an existing file (fewest system calls),
/// making room first only when something else is in the way.
fn copy_into_existing_dir(
    src: &Path,
    dest: &Path,
    reflinks: &ReflinkProbe,
) -> std::io::Result<u64> {
    let copied = if reflinks.worth_trying() {
        match reflink_copy::reflink(src, dest) {
            Ok(()) => return Ok(std::fs::metadata(dest)?.len()),
            Err(_) => {
                reflinks.failed();
                super::sparse::copy(src, dest)
            }
        }
    } else {
        super::sparse::copy(src, dest)
    };
    match copied {
        Ok(n) => Ok(n),
        Err(_) => copy_file(src, dest),
    }
}

/// Whether reflinks work here: tried on the first files, then given up (ext4 has none, and a
/// failed clone costs a system call per file).
struct ReflinkProbe {
    failures: std::sync::atomic::AtomicUsize,
}

impl ReflinkProbe {
    fn worth_trying(&self) -> bool {
        self.failures.load(std::sync::atomic::Ordering::Relaxed) < 4
    }

    fn failed(&self) {
        self.failures
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Copies one file over whatever is at `dest`, keeping its permissions.
pub fn copy_file(src: &Path, dest: &Path) -> std::io::Result<u64> {
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent)?;
    }
    remove_existing(dest)?;
    match reflink_copy::reflink(src, dest) {
        Ok(()) => Ok(std::fs::metadata(dest)?.len()),
        Err(_) => super::sparse::copy(src, dest),
    }
}

/// Makes room at `path` (a file or symlink; a folder in the way is removed whole).
fn remove_existing(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => super::remove::tree(path),
        Ok(_) => std::fs::remove_file(path),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_merge_and_skip_what_a_project_skips() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("src");
        for (p, t) in [
            ("a.txt", "a"),
            ("sub/b.txt", "b"),
            (".gitignore", "ignored.log\n"),
            ("ignored.log", "x"),
            ("node_modules/m/index.js", "x"),
            (".git/HEAD", "x"),
            (".claude/skills/s/SKILL.md", "skill"),
        ] {
            std::fs::create_dir_all(src.join(p).parent().unwrap()).unwrap();
            std::fs::write(src.join(p), t).unwrap();
        }
        std::os::unix::fs::symlink("a.txt", src.join("link")).unwrap();
        let dst = d.path().join("dst");
        std::fs::create_dir_all(dst.join("sub")).unwrap();
        std::fs::write(dst.join("sub/b.txt"), "old").unwrap();
        std::fs::write(dst.join("keep.txt"), "kept").unwrap();
        copy_tree(&src, &dst, true).unwrap();
        assert_eq!(std::fs::read_to_string(dst.join("sub/b.txt")).unwrap(), "b");
        assert_eq!(
            std::fs::read_to_string(dst.join("keep.txt")).unwrap(),
            "kept"
        );
        assert_eq!(
            std::fs::read_to_string(dst.join(".claude/skills/s/SKILL.md")).unwrap(),
            "skill"
        );
        assert_eq!(
            std::fs::read_link(dst.join("link")).unwrap(),
            PathBuf::from("a.txt")
        );
        assert!(!dst.join("ignored.log").exists());
        assert!(!dst.join("node_modules").exists());
        assert!(!dst.join(".git").exists());
    }

    #[test]
    fn never_copies_assays_own_folders_inside_the_project() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("proj");
        std::fs::create_dir_all(src.join("ws/assay-ws-1/work")).unwrap();
        std::fs::create_dir_all(src.join("runs/r1")).unwrap();
        std::fs::write(src.join("keep.txt"), "k").unwrap();
        let dst = d.path().join("dst");
        copy_tree_except(&src, &dst, true, &[src.join("ws"), src.join("runs")]).unwrap();
        assert!(dst.join("keep.txt").exists());
        assert!(!dst.join("ws").exists());
        assert!(!dst.join("runs").exists());
    }

    #[test]
    fn links_leaving_the_tree_are_skipped_and_links_inside_are_kept_relative() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "s").unwrap();
        let src = d.path().join("proj");
        std::fs::create_dir_all(src.join("a/b")).unwrap();
        std::fs::write(src.join("a/file.txt"), "f").unwrap();
        // Absolute, relative leaving the tree (from a/b: up two is the tree's root, up three
        // is outside), and relative staying inside.
        std::os::unix::fs::symlink(&outside, src.join("abs")).unwrap();
        std::os::unix::fs::symlink("../../../outside", src.join("a/b/escape")).unwrap();
        std::os::unix::fs::symlink("../../a/./b/../file.txt", src.join("a/b/inside")).unwrap();
        // Lexically inside, but through a link to the tree's root `..` climbs out of it.
        std::os::unix::fs::symlink("..", src.join("a/up")).unwrap();
        std::os::unix::fs::symlink("a/up/../outside", src.join("esc")).unwrap();
        let dst = d.path().join("dst");
        copy_tree(&src, &dst, true).unwrap();
        assert!(std::fs::symlink_metadata(dst.join("abs")).is_err());
        assert!(std::fs::symlink_metadata(dst.join("a/b/escape")).is_err());
        let kept = std::fs::read_link(dst.join("a/b/inside")).unwrap();
        assert!(kept.is_relative(), "{}", kept.display());
        assert_eq!(
            std::fs::read_to_string(dst.join("a/b/inside")).unwrap(),
            "f"
        );
        assert!(!dst.join("esc/secret.txt").exists());
        assert!(std::fs::symlink_metadata(d.path().join("dst/esc")).is_ok());
    }

    #[test]
    fn the_skipped_links_are_reported() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("proj");
        std::fs::create_dir_all(src.join("sub")).unwrap();
        std::fs::write(src.join("sub/x"), "x").unwrap();
        std::os::unix::fs::symlink("/etc", src.join("etc")).unwrap();
        std::os::unix::fs::symlink("../../elsewhere", src.join("sub/up")).unwrap();
        std::os::unix::fs::symlink("..", src.join("sub/root")).unwrap();
        std::os::unix::fs::symlink("..", src.join("parent")).unwrap();
        std::os::unix::fs::symlink("x", src.join("sub/same")).unwrap();
        let dst = d.path().join("dst");
        let copied = copy_tree_reporting(&src, &dst, false, &[]).unwrap();
        let mut skipped = copied.skipped_links.clone();
        skipped.sort();
        assert_eq!(
            skipped,
            vec![
                PathBuf::from("etc"),
                PathBuf::from("parent"),
                PathBuf::from("sub/up")
            ]
        );
        // `sub/root -> ..` is the tree's own root: inside.
        assert_eq!(
            std::fs::read_link(dst.join("sub/root")).unwrap(),
            PathBuf::from("..")
        );
        assert_eq!(
            std::fs::read_link(dst.join("sub/same")).unwrap(),
            PathBuf::from("x")
        );
    }

    #[test]
    fn a_skill_is_copied_as_it_ships_without_its_specs_runs_or_vcs() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("skill");
        for p in [
            "SKILL.md",
            "scripts/run.sh",
            "references/evals/notes.md",
            "assay.toml",
            "evals/evals.json",
            "evals/files/in.txt",
            ".assay/runs/r/grading.json",
            ".git/HEAD",
            "dist/bundle.js",
            "out/run.json",
            "out/case/result.json",
            ".gitignore",
            "local.log",
        ] {
            std::fs::create_dir_all(src.join(p).parent().unwrap()).unwrap();
            std::fs::write(src.join(p), "x").unwrap();
        }
        std::fs::write(src.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(src.join("out/run.json"), r#"{"schema": "assay.run/v1"}"#).unwrap();
        std::fs::write(src.join("spec.eval.json"), "{}").unwrap();
        let dst = d.path().join("dst");
        copy_skill(&src, &dst, &[src.join("spec.eval.json")]).unwrap();
        let mut got: Vec<String> = ignore::WalkBuilder::new(&dst)
            .standard_filters(false)
            .build()
            .flatten()
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| e.path().strip_prefix(&dst).unwrap().display().to_string())
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                ".gitignore",
                "SKILL.md",
                "dist/bundle.js",
                "references/evals/notes.md",
                "scripts/run.sh"
            ]
        );
    }
}
