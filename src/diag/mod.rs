//! Problems found in the user's input: what, where (file, line, column, field) and how to fix it.
//!
//! Loaders never stop at the first problem: they collect every one they can find, so a
//! person fixes a whole file in one pass.

mod render;

pub use render::{RenderOptions, render_json, render_text};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

pub mod source;

use source::{Source, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem with the input.
#[derive(Debug, Clone)]
pub struct Problem {
    pub severity: Severity,
    /// A stable kebab-case name for the kind of problem (`unknown-key`, `path-escape`, …).
    pub code: &'static str,
    pub file: PathBuf,
    pub source: Option<Arc<Source>>,
    pub span: Option<Span>,
    /// Where in the document, as a path: `evals[2].timeout`.
    pub field: Option<String>,
    pub message: String,
    pub help: Option<String>,
}

impl Problem {
    pub fn error(code: &'static str, file: &Path, message: impl Into<String>) -> Self {
        Problem {
            severity: Severity::Error,
            code,
            file: file.to_path_buf(),
            source: None,
            span: None,
            field: None,
            message: message.into(),
            help: None,
        }
    }

    pub fn warning(code: &'static str, file: &Path, message: impl Into<String>) -> Self {
        Problem {
            severity: Severity::Warning,
            ..Problem::error(code, file, message)
        }
    }

    /// Points the problem at a place in a parsed source.
    pub fn at(mut self, source: &Arc<Source>, span: Span) -> Self {
        self.file = source.path.clone();
        self.source = Some(source.clone());
        self.span = Some(span);
        self
    }

    pub fn field(mut self, field: impl Into<String>) -> Self {
        let f = field.into();
        self.field = (!f.is_empty()).then_some(f);
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn help_opt(mut self, help: Option<String>) -> Self {
        self.help = help;
        self
    }

    /// 1-based line and column, when the problem points into a file's text.
    pub fn line_col(&self) -> Option<(usize, usize)> {
        Some(self.source.as_ref()?.line_col(self.span?.start))
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `file:line:col` (or just `file`), the way editors and CI annotate.
    pub fn location(&self) -> String {
        match self.line_col() {
            Some((l, c)) => format!("{}:{l}:{c}", self.file.display()),
            None => self.file.display().to_string(),
        }
    }
}

/// Sorts problems by file, then position, so output is stable whatever order loaders ran in.
pub fn sort(problems: &mut [Problem]) {
    problems.sort_by(|a, b| {
        (&a.file, a.span.map(|s| s.start), a.severity, &a.message).cmp(&(
            &b.file,
            b.span.map(|s| s.start),
            b.severity,
            &b.message,
        ))
    });
}

/// The closest of `candidates` to `word`, if one is close enough to be a likely typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let word_l = word.to_ascii_lowercase().replace('-', "_");
    candidates
        .into_iter()
        .map(|c| {
            let cand_l = c.to_ascii_lowercase().replace('-', "_");
            (strsim::jaro_winkler(&word_l, &cand_l), c)
        })
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_finds_typos_and_ignores_strangers() {
        let keys = ["needle", "pattern", "count", "length"];
        assert_eq!(did_you_mean("neddle", keys), Some("needle"));
        assert_eq!(did_you_mean("patern", keys), Some("pattern"));
        assert_eq!(did_you_mean("zzz", keys), None);
        assert_eq!(
            did_you_mean("expected-output", ["expected_output"]),
            Some("expected_output")
        );
    }
}
