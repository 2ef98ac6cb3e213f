//! One loader per eval format, each turning files into [`Suite`](crate::suite::Suite)s, behind one
//! trait ([`find::EvalFormat`]) and listed once in [`FORMATS`].

pub mod bmad;
pub mod checks;
pub mod clauditor;
pub mod find;
pub mod from_run;
pub mod plugin_eval;
pub mod skillet;
pub mod starter;
pub mod uaaps;
pub mod write;

use std::path::{Path, PathBuf};

use crate::diag::source::Span;
use crate::suite::Location;
use crate::syntax::reader::Doc;
use find::EvalFormat;

/// Every format discovery finds, in the order files are offered to them and formats are
/// planned: UAAPS and Claude Code's plugin evals before Skillet, so a package's case YAML, or
/// a plugin-eval case's `case.yaml`, is never taken for Skillet's.
pub const FORMATS: &[&dyn EvalFormat] = &[
    &bmad::find::Bmad,
    &clauditor::find::Clauditor,
    &uaaps::find::Uaaps,
    &plugin_eval::find::ClaudePluginEval,
    &skillet::find::Skillet,
];

/// assay's own extension keys (`x-assay-checks`, …): in a format whose runner ignores unknown
/// keys, a typo there would still drop checks in silence, so they stay errors.
pub fn is_assay_key(key: &str) -> bool {
    key.starts_with("x-assay")
}

/// What every loader needs to know about the invocation.
#[derive(Debug, Clone)]
pub struct LoadCtx {
    /// Where assay runs; paths in messages are shown relative to it.
    pub cwd: PathBuf,
    /// Check types and formats from plugins.
    pub extra: Option<std::sync::Arc<dyn crate::syntax::extra::ExtraTypes>>,
}

impl LoadCtx {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        LoadCtx {
            cwd: cwd.into(),
            extra: None,
        }
    }

    /// Parses a suite file into a document that knows the plugins' types.
    pub fn parse(
        &self,
        path: &Path,
        shown: &Path,
    ) -> Result<(crate::syntax::reader::Doc, crate::syntax::node::Node), Vec<crate::diag::Problem>>
    {
        let (mut doc, node) = crate::syntax::parse_file(path, shown)?;
        doc.extra = self.extra.clone();
        Ok((doc, node))
    }

    /// A path as the user would write it: relative to the working directory when inside it.
    pub fn shown(&self, p: &Path) -> PathBuf {
        p.strip_prefix(&self.cwd)
            .map(|r| {
                if r.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    r.to_path_buf()
                }
            })
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// A model location for a span of a document.
pub fn location(doc: &Doc, span: Span) -> Location {
    let (line, column) = doc.source.line_col(span.start);
    Location {
        file: doc.source.path.clone(),
        line,
        column,
    }
}

/// Reports ids that occur more than once.
pub fn check_unique<'a>(
    doc: &mut Doc,
    what: &str,
    ids: impl IntoIterator<Item = (&'a str, Span, String)>,
) {
    // A map, not a list: a suite may hold 100,000 ids.
    let mut seen: std::collections::HashMap<&str, Span> = std::collections::HashMap::new();
    for (id, span, field) in ids {
        if let Some(first) = seen.get(id) {
            let (line, _) = doc.source.line_col(first.start);
            doc.error(
                "duplicate-id",
                span,
                &field,
                format!("duplicate {what} `{id}`"),
            )
            .help = Some(format!("first used on line {line}; ids must be unique"));
        } else {
            seen.insert(id, span);
        }
    }
}
