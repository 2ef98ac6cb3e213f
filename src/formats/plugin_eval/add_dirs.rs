//! `context.add_dirs`: folders a case lets the agent read. Claude Code grants reading them
//! where they are; assay's agent sees only its workspace, so their files are staged into it
//! under each folder's name (`resources/change.diff`), never a case's own `case.yaml`,
//! `prompt.md` or graders. A folder outside the plugin is refused at load (Claude Code
//! refuses it when the case runs).

use std::path::{Component, Path, PathBuf};

use crate::suite::Fixture;

/// The most files staged from a case's folders.
const MAX_FILES: usize = 2_000;

/// Why an `add_dirs` entry cannot be used, if it cannot: it leaves the plugin (`root`).
pub fn refusal(case_dir: &Path, root: &Path, entry: &str) -> Option<String> {
    let p = Path::new(entry);
    let mut at = case_dir.to_path_buf();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                at.pop();
            }
            Component::Normal(n) => at.push(n),
            Component::CurDir => {}
            _ => {
                return Some(format!(
                    "context.add_dirs entry \"{entry}\" must be a path relative to the case"
                ));
            }
        }
    }
    (!at.starts_with(root)).then(|| {
        format!(
            "context.add_dirs entry \"{entry}\" resolves outside the plugin ({})",
            root.display()
        )
    })
}

/// The case's `context.history_file`, resolved against its folder: a file inside the plugin,
/// else why not.
pub fn history(case_dir: &Path, root: &Path, entry: &str) -> Result<PathBuf, String> {
    let path = case_dir.join(entry);
    let outside = || {
        format!(
            "context.history_file \"{entry}\" resolves outside the plugin ({})",
            root.display()
        )
    };
    if Path::new(entry).is_absolute() {
        return Err(outside());
    }
    let Ok(real) = path
        .canonicalize()
        .and_then(|p| std::fs::metadata(&p).map(|m| (p, m)))
    else {
        return Err(format!(
            "context.history_file \"{entry}\" does not exist (a session transcript, .jsonl, relative to the case)"
        ));
    };
    if !root.canonicalize().is_ok_and(|r| real.0.starts_with(r)) {
        return Err(outside());
    }
    if !real.1.is_file() {
        return Err(format!("context.history_file \"{entry}\" is not a file"));
    }
    Ok(path)
}

/// The files of a case's `add_dirs`, as fixtures under each folder's name.
pub fn fixtures(case_dir: &Path, entries: &[String]) -> Vec<Fixture> {
    let mut out = Vec::new();
    for entry in entries {
        let dir = case_dir.join(entry);
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from(entry));
        let walk = ignore::WalkBuilder::new(&dir)
            .standard_filters(false)
            .follow_links(false)
            .build();
        for e in walk.filter_map(Result::ok) {
            if !e.file_type().is_some_and(|t| t.is_file()) || out.len() >= MAX_FILES {
                continue;
            }
            let Ok(rel) = e.path().strip_prefix(&dir) else {
                continue;
            };
            if own_file(case_dir, e.path()) {
                continue;
            }
            out.push(Fixture {
                source: e.path().to_path_buf(),
                dest: name.join(rel),
            });
        }
    }
    out
}

/// A case's own definition: its `case.yaml`, `prompt.md` or a grader.
fn own_file(case_dir: &Path, file: &Path) -> bool {
    file == case_dir.join("case.yaml")
        || file == case_dir.join("prompt.md")
        || file.starts_with(case_dir.join("graders"))
}
