//! `files`: the fixtures a case stages, found where either runner looks for them and staged at
//! the path as written. A folder stands for every file under it (skill-creator's suites name
//! folders).

use std::path::{Path, PathBuf};

use super::Input;
use crate::diag::source::Span;
use crate::suite::Fixture;
use crate::suite::paths::{self, PathError};
use crate::syntax::reader::{Doc, index};

/// Files a folder fixture may stand for: past this, it is an error (a fixture is an input,
/// not a project).
const MAX_FOLDER_FILES: usize = 10_000;

/// Where a written path is looked for, in order: the project root (BMAD), the skill's folder
/// (skill-creator: "relative to skill root"), the eval folder (later BMAD runners).
fn bases(input: &Input) -> Vec<(PathBuf, &'static str)> {
    let mut out = vec![(input.project_root.clone(), "the project root")];
    if let Some(skill) = input.skill.as_ref().filter(|s| s.path.is_dir()) {
        out.push((skill.path.clone(), "the skill's folder"));
    }
    out.push((input.dir.clone(), "the eval folder"));
    out
}

/// What a fixture that is not there does: an error of the file (`evals.json`), or a warning
/// and the case failing when it runs, as the current runner fails the case (`cases.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Missing {
    FailsTheFile,
    FailsTheCase,
}

/// The fixtures, and, when one is missing and that fails the case, why the case cannot run.
pub(super) fn read(
    doc: &mut Doc,
    files: &[(String, Span)],
    field: &str,
    input: &Input,
    missing: Missing,
) -> (Vec<Fixture>, Option<String>) {
    let bases = bases(input);
    let mut out = Vec::new();
    let mut unrunnable = None;
    for (i, (written, span)) in files.iter().enumerate() {
        let e = match resolve(&bases, written).and_then(|source| expand(&source, written)) {
            Ok(mut found) => {
                out.append(&mut found);
                continue;
            }
            Err(e) => e,
        };
        let help =
            "fixture paths are relative to the project root, the skill's folder or the eval folder";
        if missing == Missing::FailsTheCase && matches!(e, PathError::Missing { .. }) {
            let why = format!("fixture not found: {e}");
            doc.warning(
                "missing-fixture",
                *span,
                &index(field, i),
                format!("{e}; the case fails when it runs, as the runner fails it"),
            )
            .help = Some(help.into());
            unrunnable.get_or_insert(why);
        } else {
            doc.error("bad-fixture", *span, &index(field, i), e.to_string())
                .help = Some(help.into());
        }
    }
    (out, unrunnable)
}

/// The first base where `written` exists (a file or a folder), inside that base. An error that
/// is not "missing" (an escape, an absolute path) is reported at once.
fn resolve(bases: &[(PathBuf, &'static str)], written: &str) -> Result<PathBuf, PathError> {
    for (base, label) in bases {
        match paths::resolve_inside(base, written, label, false) {
            Ok(p) if p.exists() => return Ok(p),
            Ok(_) | Err(PathError::Missing { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let labels: Vec<&str> = bases.iter().map(|(_, l)| *l).collect();
    Err(PathError::Missing {
        path: written.to_string(),
        base: match labels.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => "the project".into(),
        },
    })
}

/// A file is itself; a folder is every file under it, each checked to stay inside the folder.
fn expand(source: &Path, written: &str) -> Result<Vec<Fixture>, PathError> {
    let dest = paths::normalize(Path::new(written)).unwrap_or_else(|| PathBuf::from(written));
    if !source.is_dir() {
        if !source.is_file() {
            return Err(PathError::NotAFile {
                path: written.to_string(),
            });
        }
        return Ok(vec![Fixture {
            source: source.to_path_buf(),
            dest,
        }]);
    }
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(source.join(&rel)) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let rel = rel.join(e.file_name());
            let shown = Path::new(written).join(&rel).display().to_string();
            let found = paths::resolve_inside(
                source,
                &rel.to_string_lossy(),
                &format!("`{written}`"),
                false,
            )
            .map_err(|_| PathError::Escapes {
                path: shown.clone(),
                base: format!("`{written}`"),
            })?;
            let kind = e.file_type().map_err(|_| PathError::NotAFile {
                path: shown.clone(),
            })?;
            if kind.is_dir() {
                stack.push(rel);
            } else if found.is_file() {
                out.push(Fixture {
                    source: found,
                    dest: dest.join(&rel),
                });
            }
            if out.len() > MAX_FOLDER_FILES {
                return Err(PathError::TooMany {
                    path: written.to_string(),
                    max: MAX_FOLDER_FILES,
                });
            }
        }
    }
    out.sort_by(|a, b| a.dest.cmp(&b.dest));
    Ok(out)
}
