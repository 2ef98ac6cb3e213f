//! The BMAD runner's discovery order: from a skill to its eval folder.

use std::path::{Path, PathBuf};

/// Whether a folder holds BMAD eval files.
pub fn has_eval_files(dir: &Path) -> bool {
    dir.join("evals.json").is_file() || dir.join("triggers.json").is_file()
}

/// Whether a JSON file given to `--evals` is in the shape of `triggers.json` (a list of
/// objects with `query`) rather than `evals.json` (an object with `evals`, or a bare list of
/// evals). A file that does not parse is taken for evals, so the loader reports its error.
pub fn is_triggers_shape(file: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return false;
    };
    let Ok(serde_json::Value::Array(items)) = serde_json::from_str::<serde_json::Value>(&text)
    else {
        return false;
    };
    items
        .first()
        .and_then(|v| v.as_object())
        .is_some_and(|o| o.contains_key("query") || o.contains_key("should_trigger"))
}

/// Where a skill's evals are, by the BMAD order (after `--evals`): `<skill>/evals/`,
/// `<skill>/../../evals/<name>/`, `<root>/evals/<name>/`, then any `<root>/evals/**/<name>/`.
/// The fuzzy step takes the first match in sorted order and also returns the others.
///
/// `known` lists eval folders a walk already found; without it the fuzzy step walks
/// `<root>/evals/` itself.
pub fn evals_dir_for(
    skill: &Path,
    name: &str,
    root: &Path,
    known: Option<&std::collections::BTreeSet<PathBuf>>,
) -> Option<(PathBuf, Vec<PathBuf>)> {
    let ordered = [
        skill.join("evals"),
        skill.join("../../evals").join(name),
        root.join("evals").join(name),
    ];
    if let Some(d) = ordered.iter().find(|d| has_eval_files(d)) {
        return Some((crate::spec::paths::normalize_abs(d), Vec::new()));
    }
    let evals_root = root.join("evals");
    let named = |d: &PathBuf| d.file_name().is_some_and(|n| n == name);
    let mut found: Vec<PathBuf> = match known {
        Some(known) => known
            .iter()
            .filter(|d| named(d) && d.starts_with(&evals_root))
            .cloned()
            .collect(),
        None => walkdir(&evals_root, 12)
            .into_iter()
            .filter(|d| named(d) && has_eval_files(d))
            .collect(),
    };
    found.sort();
    if found.is_empty() {
        return None;
    }
    let first = found.remove(0);
    Some((first, found))
}

/// Folders under `dir`, to a bounded depth, skipping the usual heavy ones.
fn walkdir(dir: &Path, depth: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, level)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir())
                && !super::is_skipped_dir(&e.file_name().to_string_lossy())
            {
                out.push(p.clone());
                if level + 1 < depth {
                    stack.push((p, level + 1));
                }
            }
        }
    }
    out
}
