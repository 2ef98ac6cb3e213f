//! Turning problems into text for people (miette, with the source line) and JSON for tools.

use std::fmt;
use std::sync::Arc;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError,
    MietteSpanContents, NamedSource, SourceCode, SourceSpan, SpanContents,
};
use serde_json::json;

use super::source::Source;
use super::{Problem, Severity};
use crate::text::printable;

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
        let source = self.problem.source.as_ref()?;
        self.source.as_ref()?;
        let label = printable(self.problem.field.as_deref().unwrap_or("here"));
        let (start, end) = shown_span(source, span.start, span.end);
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            Some(label),
            SourceSpan::new(start.into(), end - start),
        ))))
    }
}

/// A line longer than this (in bytes) is shown as a window around the problem, not whole:
/// one line of a minified file can be 100 MB.
const LONG_LINE: usize = 512;
/// Characters shown on either side of a problem in a long line, and the most of a span
/// underlined there.
const WINDOW: usize = 60;

fn is_long(source: &Source, line: usize) -> bool {
    let (start, end) = source.line_bounds(line);
    end - start > LONG_LINE
}

/// The byte `n` characters after `from`, stopping at `limit`.
fn chars_after(text: &str, from: usize, n: usize, limit: usize) -> usize {
    text[from..limit]
        .char_indices()
        .nth(n)
        .map_or(limit, |(i, _)| from + i)
}

/// The byte `n` characters before `to`, stopping at `limit`.
fn chars_before(text: &str, to: usize, n: usize, limit: usize) -> usize {
    text[limit..to]
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(limit, |(i, _)| limit + i)
}

/// The part of a problem's span that is underlined: all of it, unless it touches a long line,
/// where it is cut to the start of its first line (at most [`WINDOW`] characters).
fn shown_span(source: &Source, start: usize, end: usize) -> (usize, usize) {
    let text = source.text.as_str();
    let start = start.min(text.len());
    let end = end.clamp(start, text.len());
    let (first, last) = (
        source.line_index(start),
        source.line_index(end.saturating_sub(1).max(start)),
    );
    if !(first..=last).any(|l| is_long(source, l)) {
        return (start, end);
    }
    let (_, line_end) = source.line_bounds(first);
    (
        start,
        chars_after(text, start, WINDOW, end.min(line_end).max(start)),
    )
}

/// A source's text, shared rather than copied per diagnostic. Spans are found through the
/// source's line table, so showing a problem costs the same anywhere in a file of any size.
/// The text is copied only when it holds control characters, each then replaced by as many
/// `?` as it has bytes (a carriage return by a space), so every span and the line table still
/// point at the same places.
struct SharedText {
    source: Arc<Source>,
    cleaned: Option<String>,
}

impl SharedText {
    fn of(s: &Arc<Source>) -> Self {
        let unfit = |c: char| c.is_control() && c != '\n' && c != '\t';
        let cleaned = s.text.contains(unfit).then(|| {
            s.text
                .chars()
                .map(|c| match c {
                    // CRLF line ends: the same byte count, nothing shown.
                    '\r' => " ".to_string(),
                    c if unfit(c) => "?".repeat(c.len_utf8()),
                    c => c.to_string(),
                })
                .collect()
        });
        SharedText {
            source: s.clone(),
            cleaned,
        }
    }

    fn text(&self) -> &str {
        self.cleaned.as_deref().unwrap_or(&self.source.text)
    }
}

impl SourceCode for SharedText {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let source = &self.source;
        let text = self.text();
        let start = span.offset();
        let end = start + span.len();
        if end > text.len() || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            return Err(MietteError::OutOfBounds);
        }
        let first = source.line_index(start);
        let last = source.line_index(end.saturating_sub(1).max(start));
        let (first_start, first_end) = source.line_bounds(first);
        let contents = |from: usize, to: usize, line: usize, column: usize| {
            let data = &text[from..to];
            Box::new(MietteSpanContents::new(
                data.as_bytes(),
                (from, to - from).into(),
                line,
                column,
                data.matches('\n').count(),
            )) as Box<dyn SpanContents<'a> + 'a>
        };
        if context_lines_before == 0 && context_lines_after == 0 {
            // Where the span starts, for the header: line and column in characters.
            let column = source.line_col(start).1 - 1;
            return Ok(contents(start, end, first, column));
        }
        if is_long(source, first) {
            // A window of the line around the span (which `shown_span` kept inside it).
            let from = chars_before(text, start, WINDOW, first_start);
            let to = chars_after(text, end.min(first_end), WINDOW, first_end);
            let column = text[first_start..from].chars().count();
            return Ok(contents(from, to, first, column));
        }
        // Whole lines, with the context lines that are not long themselves.
        let mut top = first.saturating_sub(context_lines_before);
        while top < first && is_long(source, top) {
            top += 1;
        }
        let mut bottom = (last + context_lines_after).min(source.line_count() - 1);
        while bottom > last && is_long(source, bottom) {
            bottom -= 1;
        }
        let from = source.line_bounds(top).0;
        let (_, bottom_end) = source.line_bounds(bottom);
        // Lines end with their newline, as miette's own reader gives them.
        let to = if bottom_end < text.len() {
            bottom_end + 1
        } else {
            bottom_end
        };
        Ok(contents(from, to, top, 0))
    }
}
