//! Checks on the workspace after the run. A `path` is relative to the workspace root, else to
//! the agent's folder; no check follows a symlink.

use std::path::Path;

use serde_json::Value;

use super::matching::{self, excerpt, find};
use super::{Finding, finding, ignore_case, str_of};
use crate::assert::view::CaseRunView;

/// `file_exists`: the workspace holds `path` after the run.
pub fn file_exists(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let path = str_of(config, "path")?;
    let exists = view.has_file(Path::new(path)) || view.has_file(&view.cwd.join(path));
    let link = !exists && symlink_at(view, path);
    finding(
        exists,
        format!(
            "{path} {}",
            if exists {
                "exists"
            } else if link {
                "is a symlink, not a file (assay does not follow links)"
            } else {
                "does not exist"
            }
        ),
        None,
    )
}

/// `file_created`: the run created `path` (absent before the agent started, there after).
pub fn file_created(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let path = str_of(config, "path")?;
    let rel = |p: &Path| [p.to_path_buf(), view.cwd.join(p)];
    let created = rel(Path::new(path))
        .iter()
        .any(|p| view.created.contains(p));
    let exists = rel(Path::new(path)).iter().any(|p| view.has_file(p));
    finding(
        created,
        format!(
            "{path} {}",
            if created {
                "was created by the run"
            } else if exists {
                "existed before the run: the agent did not create it"
            } else {
                "does not exist"
            }
        ),
        None,
    )
}

/// `file_contains`: the file at `path` contains `needle` (case-sensitive unless
/// `ignore_case`).
pub fn file_contains(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let (path, text) = file_text(config, view)?;
    let Some(text) = text else {
        return unreadable(view, path);
    };
    let needle = str_of(config, "needle")?;
    let at = find(&text, needle, ignore_case(config));
    // Not there: what the file holds where the needle comes closest (or its start).
    let evidence = match at {
        Some(i) => excerpt(&text, i, (i + needle.len()).min(text.len())),
        None => matching::nearest(&text, needle, ignore_case(config)),
    };
    finding(
        at.is_some(),
        format!(
            "{path} {} {needle:?}{}",
            if at.is_some() {
                "contains"
            } else {
                "does not contain"
            },
            if at.is_some() {
                String::new()
            } else {
                format!(" ({} bytes; quoted where it comes closest)", text.len())
            }
        ),
        Some(evidence),
    )
}

/// `file_matches`: `pattern` matches somewhere in the file at `path`.
pub fn file_matches(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let (path, text) = file_text(config, view)?;
    let Some(text) = text else {
        return unreadable(view, path);
    };
    let pattern = str_of(config, "pattern")?;
    let m = matching::regex(pattern)?
        .find(&text)
        .map_err(|e| e.to_string())?;
    finding(
        m.is_some(),
        format!(
            "/{pattern}/ {} in {path}",
            if m.is_some() {
                "matches"
            } else {
                "matches nowhere"
            }
        ),
        m.map(|m| excerpt(&text, m.start(), m.end())),
    )
}

/// `fixture_unchanged`: no staged fixture was changed or deleted.
pub fn fixture_unchanged(_config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let changed: Vec<String> = view
        .changed_fixtures
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    finding(
        changed.is_empty(),
        if changed.is_empty() {
            "every fixture is as staged".to_string()
        } else {
            format!("changed fixtures: {}", changed.join(", "))
        },
        None,
    )
}

/// The `path` a file check names, and the file's text when it can be read.
fn file_text<'a>(
    config: &'a Value,
    view: &CaseRunView,
) -> Result<(&'a str, Option<String>), String> {
    let path = str_of(config, "path")?;
    let p = if view.has_file(Path::new(path)) {
        Path::new(path).to_path_buf()
    } else {
        view.cwd.join(path)
    };
    Ok((path, view.read_file(&p)))
}

/// The failed finding for a file check's `path` that cannot be read, saying why.
fn unreadable(view: &CaseRunView, path: &str) -> Result<Finding, String> {
    let why = if symlink_at(view, path) {
        "is a symlink, which assay does not follow"
    } else {
        "does not exist or is not text"
    };
    finding(false, format!("{path} {why}"), None)
}

/// Whether a file check's `path` (relative to the root, else to the agent's folder) is a
/// symlink in the workspace, or lies through one.
fn symlink_at(view: &CaseRunView, path: &str) -> bool {
    view.is_symlink(Path::new(path)) || view.is_symlink(&view.cwd.join(path))
}
