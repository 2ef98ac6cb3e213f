//! A clauditor spec's files: `input_files` (relative to the spec's folder, staged flat under
//! `inputs/`) and the output it grades (`output_file`, `output_files` globs, or the final
//! message).

use std::path::{Path, PathBuf};

use crate::diag::source::Span;
use crate::suite::paths;
use crate::suite::{Fixture, OutputSpec};
use crate::syntax::reader::{Doc, Map, index};

/// `input_files`: relative to the spec's folder, inside it, existing, flattened to `inputs/<basename>`.
pub(super) fn read_inputs(
    doc: &mut Doc,
    m: &Map<'_>,
    spec_dir: &Path,
) -> (Vec<Fixture>, Vec<String>) {
    let mut fixtures = Vec::new();
    let mut names: Vec<(String, Span, usize)> = Vec::new();
    let Some(list) = m.strings(doc, "input_files") else {
        return (fixtures, Vec::new());
    };
    for (i, (written, span)) in list.iter().enumerate() {
        let field = index("input_files", i);
        let source = match paths::resolve_inside(spec_dir, written, "the spec's folder", true) {
            Ok(p) => p,
            Err(e) => {
                doc.error("bad-input-file", *span, &field, e.to_string())
                    .help =
                    Some("input_files are relative to the folder holding the .eval.json".into());
                continue;
            }
        };
        // Staged under the name of the file itself (a symlink's target name, as clauditor does).
        let real = source.canonicalize().unwrap_or_else(|_| source.clone());
        let base = real
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some((_, _, j)) = names.iter().find(|(n, _, _)| *n == base) {
            doc.error(
                "input-collision",
                *span,
                &field,
                format!("input_files entries {j} and {i} both stage as inputs/{base}"),
            )
            .help = Some("input files are flattened to their base names; rename one".into());
            continue;
        }
        names.push((base.clone(), *span, i));
        fixtures.push(Fixture {
            source,
            dest: PathBuf::from("inputs").join(&base),
        });
    }
    (fixtures, names.into_iter().map(|(n, _, _)| n).collect())
}

/// The output the case grades; no `output_files` pattern may end in the base name of an
/// input (`inputs`), staged in the same working directory.
pub(super) fn read_outputs(doc: &mut Doc, m: &Map<'_>, inputs: &[String]) -> OutputSpec {
    let file = m.text(doc, "output_file");
    let globs = m.texts(doc, "output_files").unwrap_or_default();
    for (i, (pat, span)) in globs.iter().enumerate() {
        if paths::is_absolute(pat) {
            doc.error(
                "bad-path",
                *span,
                &index("output_files", i),
                "output_files patterns are relative to the skill's working directory",
            );
            continue;
        }
        let last = pat.trim_end_matches('/').rsplit('/').next().unwrap_or(pat);
        if inputs.iter().any(|b| b == last) {
            doc.error(
                "output-collision",
                *span,
                &index("output_files", i),
                format!("output_files pattern `{pat}` collides with the input file `{last}`"),
            )
            .help = Some("declare the output under another name or folder; inputs/ is where input_files are staged".into());
        }
    }
    if let Some(n) = m.opt("output_file")
        && let Some(f) = &file
        && paths::is_absolute(f)
    {
        doc.error(
            "bad-path",
            n.span,
            "output_file",
            "output_file is relative to the skill's working directory",
        );
    }
    match (file, globs.is_empty()) {
        (Some(path), _) => OutputSpec::File { path },
        (None, false) => OutputSpec::Files {
            globs: globs.into_iter().map(|(g, _)| g).collect(),
        },
        (None, true) => OutputSpec::FinalMessage,
    }
}
