//! Turning problems into text for people (miette, with the source line) and JSON for tools.

use std::fmt;
use std::sync::Arc;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, NamedSource,
    SourceCode, SourceSpan, SpanContents,
};
use serde_json::json;

use super::{Problem, Severity};
use crate::report::tables::printable;
use crate::spec::node::Source;

/// How to draw problems as text.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    pub color: bool,
    pub width: usize,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            color: false,
            width: 100,
        }
    }
}

/// Renders every problem, each with its source line where there is one. File names, messages
/// and the quoted source may come from anyone (a file named with an escape sequence, a YAML
/// line holding one): their control characters are shown escaped, so only the theme's own
/// colours reach the terminal.
pub fn render_text(problems: &[Problem], opts: RenderOptions) -> String {
    let theme = if opts.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(opts.width)
        .with_context_lines(1)
        .with_links(false);
    let mut out = String::new();
    for p in problems {
        let shown = Shown::new(p);
        if handler.render_report(&mut out, &shown).is_err() {
            // Rendering into a String cannot fail in practice; keep a plain line regardless.
            out.push_str(&printable(&format!("{}: {}\n", p.location(), p.message)));
        }
        out.push('\n');
    }
    out
}

/// The problems as JSON objects with file, line, column, field, code, message and help.
pub fn render_json(problems: &[Problem]) -> serde_json::Value {
    problems
        .iter()
        .map(|p| {
            let (line, column) = p.line_col().unzip();
            json!({
                "severity": p.severity,
                "code": p.code,
                "file": p.file.display().to_string(),
                "line": line,
                "column": column,
                "field": p.field,
                "message": p.message,
                "help": p.help,
            })
        })
        .collect()
}

/// A problem dressed as a miette diagnostic.
struct Shown<'a> {
    problem: &'a Problem,
    message: String,
    source: Option<NamedSource<SharedText>>,
}

impl<'a> Shown<'a> {
    fn new(problem: &'a Problem) -> Self {
        let field = problem
            .field
            .as_deref()
            .map(|f| format!(" ({f})"))
            .unwrap_or_default();
        let message = printable(&match (&problem.source, problem.line_col()) {
            (Some(_), Some((l, c))) => format!(
                "{}:{l}:{c}: {}{field}",
                problem.file.display(),
                problem.message
            ),
            _ => format!("{}: {}{field}", problem.file.display(), problem.message),
        });
        let source = problem.source.as_ref().map(|s| {
            NamedSource::new(printable(&s.path.display().to_string()), SharedText::of(s))
                .with_language("")
        });
        Shown {
            problem,
            message,
            source,
        }
    }
}

impl fmt::Debug for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Shown<'_> {}

impl Diagnostic for Shown<'_> {
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.problem.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.problem
            .help
            .as_ref()
            .map(|h| Box::new(printable(h)) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let span = self.problem.span?;
        self.source.as_ref()?;
        let label = printable(self.problem.field.as_deref().unwrap_or("here"));
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            Some(label),
            SourceSpan::new(span.start.into(), span.len()),
        ))))
    }
}

/// A source's text, shared rather than copied per diagnostic; copied only when it holds
/// control characters, each then replaced by as many `?` as it has bytes (a carriage return
/// by a space), so every span still points at the same place.
enum SharedText {
    Shared(Arc<Source>),
    Cleaned(String),
}

impl SharedText {
    fn of(s: &Arc<Source>) -> Self {
        let unfit = |c: char| c.is_control() && c != '\n' && c != '\t';
        if !s.text.contains(unfit) {
            return SharedText::Shared(s.clone());
        }
        SharedText::Cleaned(
            s.text
                .chars()
                .map(|c| match c {
                    // CRLF line ends: the same byte count, nothing shown.
                    '\r' => " ".to_string(),
                    c if unfit(c) => "?".repeat(c.len_utf8()),
                    c => c.to_string(),
                })
                .collect(),
        )
    }

    fn text(&self) -> &str {
        match self {
            SharedText::Shared(s) => &s.text,
            SharedText::Cleaned(t) => t,
        }
    }
}

impl SourceCode for SharedText {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        self.text()
            .read_span(span, context_lines_before, context_lines_after)
    }
}
