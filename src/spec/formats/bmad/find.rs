//! The BMAD runner's discovery order: from a skill to its eval folder.

use std::path::{Path, PathBuf};

use super::TRIGGER_FILES;

/// The eval files of one folder, by the names the BMAD runner and skill-creator give them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EvalFiles {
    pub evals: Option<PathBuf>,
    pub cases: Option<PathBuf>,
    pub triggers: Option<PathBuf>,
}

impl EvalFiles {
    /// The eval files in `dir`: `evals.json`, a `cases.json` in the runner's cases shape, and
    /// the first trigger file by [`TRIGGER_FILES`]' order.
    pub fn in_dir(dir: &Path) -> Self {
        let file = |n: &str| Some(dir.join(n)).filter(|p| p.is_file());
        EvalFiles {
            evals: file("evals.json"),
            cases: file("cases.json").filter(|p| is_cases_shape(p)),
            triggers: TRIGGER_FILES.iter().find_map(|n| file(n)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.evals.is_none() && self.cases.is_none() && self.triggers.is_none()
    }
}

/// Whether a folder holds BMAD (or skill-creator) eval files.
pub fn has_eval_files(dir: &Path) -> bool {
    !EvalFiles::in_dir(dir).is_empty()
}

/// Whether a file name is one of a skill's eval files (a `cases.json` still needs its shape).
pub fn is_eval_file_name(name: &str) -> bool {
    name == "evals.json" || name == "cases.json" || TRIGGER_FILES.contains(&name)
}

fn read_json(file: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(file).ok()?;
    serde_json::from_str(&text).ok()
}

/// Whether a JSON file given to `--evals` is in the shape of `triggers.json` (a list of
/// objects with `query`) rather than `evals.json` (an object with `evals`, or a bare list of
/// evals). A file that does not parse is taken for evals, so the loader reports its error.
pub fn is_triggers_shape(file: &Path) -> bool {
    let Some(serde_json::Value::Array(items)) = read_json(file) else {
        return false;
    };
    items
        .first()
        .and_then(|v| v.as_object())
        .is_some_and(|o| o.contains_key("query") || o.contains_key("should_trigger"))
}

/// Whether a file is in the current BMAD runner's cases shape: an object with `cases`, or a
/// list whose first object has `input` (a `cases.json` of any other shape is not BMAD's and is
/// left alone).
pub fn is_cases_shape(file: &Path) -> bool {
    match read_json(file) {
        Some(serde_json::Value::Object(o)) => o.contains_key("cases") && !o.contains_key("evals"),
        Some(serde_json::Value::Array(items)) => items
            .first()
            .and_then(|v| v.as_object())
            .is_some_and(|o| o.contains_key("input")),
        _ => false,
    }
}

/// The skill an evals or cases file says it is for (`skill_name`), when it says one.
pub fn declared_skill_name(files: &EvalFiles) -> Option<String> {
    [&files.evals, &files.cases]
        .into_iter()
        .flatten()
        .find_map(|f| {
            read_json(f)?
                .get("skill_name")?
                .as_str()
                .map(str::to_string)
        })
        .filter(|n| {
            !n.trim().is_empty()
                && !n.contains(['/', '\\'])
                && !n.chars().any(char::is_control)
                && n != "."
                && n != ".."
        })
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
                && !crate::spec::paths::is_skipped_dir(&e.file_name().to_string_lossy())
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
