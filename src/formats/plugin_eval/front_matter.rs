//! A Markdown file's front matter as Claude Code's plugin-eval loader reads it (`prompt.md`,
//! `graders/*.md`): `---` at the very start, closed by the first `---` after it (even inside a
//! line), YAML in between; the rest is the body.

use std::path::Path;
use std::sync::Arc;

use crate::diag::source::Source;
use crate::syntax::node::{Node, Value};

/// The largest case file Claude Code reads (1 MiB).
pub const MAX_BYTES: u64 = 1 << 20;

/// A Markdown file split into its front matter (a YAML mapping, with spans into the file) and
/// its body.
#[derive(Debug)]
pub struct Md {
    /// The front matter's text at the same lines and columns as in the file, for messages.
    pub source: Arc<Source>,
    /// `None` when the file has no front matter; an empty mapping for `---\n---`.
    pub front: Option<Node>,
    pub body: String,
}

impl Md {
    /// The front matter's entries (none without front matter).
    pub fn entries(&self) -> &[(crate::syntax::node::Key, Node)] {
        self.front.as_ref().and_then(Node::as_map).unwrap_or(&[])
    }
}

/// Reads `path` (shown as `shown`); `Err` is Claude Code's message for the file named `name`.
pub fn read(path: &Path, shown: &Path, name: &str) -> Result<Md, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{name} is unreadable ({e})"))?;
    if !meta.is_file() {
        return Err(format!("{name} is not a regular file"));
    }
    if meta.len() > MAX_BYTES {
        return Err(format!("{name} is {} bytes (cap: {MAX_BYTES})", meta.len()));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{name} is unreadable ({e})"))?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    split(text, shown, name)
}

/// Splits a Markdown text into front matter and body.
pub fn split(text: &str, shown: &Path, name: &str) -> Result<Md, String> {
    let re = regress::Regex::new(r"^---\s*\n([\s\S]*?)---\s*\n?").expect("a fixed pattern");
    let Some(m) = re.find(text) else {
        let opens = regress::Regex::new(r"^---\s*\n").expect("a fixed pattern");
        if opens.find(text).is_some() {
            return Err(format!(
                "{name}: unterminated frontmatter (opening \"---\" with no closing \"---\")"
            ));
        }
        return Ok(Md {
            source: Source::new(shown, String::new()),
            front: None,
            body: text.to_string(),
        });
    };
    let inner = m.group(1).expect("the pattern has one group");
    let body = text[m.end()..].to_string();
    if text[inner.clone()].trim().is_empty() {
        return Ok(Md {
            source: Source::new(shown, String::new()),
            front: Some(empty_map()),
            body,
        });
    }
    // The text before the front matter, blanked, keeps lines and columns as in the file.
    let lead: String = text[..inner.start]
        .chars()
        .map(|c| if c == '\n' { '\n' } else { ' ' })
        .collect();
    let source = Source::new(shown, format!("{lead}{}", &text[inner.clone()]));
    let (node, problems) = crate::syntax::yaml::parse(&source);
    if let Some(p) = problems.iter().find(|p| p.is_error()) {
        return Err(format!("{name}: invalid YAML frontmatter: {}", p.message));
    }
    let front = match node {
        None => empty_map(),
        Some(n) if matches!(n.value, Value::Null) => empty_map(),
        Some(n) if n.as_map().is_some() => n,
        Some(_) => return Err(format!("{name}: frontmatter must be a YAML object")),
    };
    Ok(Md {
        source,
        front: Some(front),
        body,
    })
}

fn empty_map() -> Node {
    Node {
        value: Value::Map(Vec::new()),
        span: crate::diag::source::Span::new(0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(text: &str) -> Result<Md, String> {
        split(text, Path::new("prompt.md"), "prompt.md")
    }

    #[test]
    fn closes_at_the_first_dashes_anywhere() {
        let m = md("---\ndescription: a---b\nmax_turns: 3\n---\nhello").unwrap();
        assert_eq!(m.entries()[0].1.as_str(), Some("a"));
        assert_eq!(m.body, "b\nmax_turns: 3\n---\nhello");
    }

    #[test]
    fn no_front_matter_and_empty_front_matter() {
        let m = md("Say hi.").unwrap();
        assert!(m.front.is_none());
        assert_eq!(m.body, "Say hi.");
        let m = md("---\n---\nbody").unwrap();
        assert!(m.front.is_some() && m.entries().is_empty());
        assert_eq!(m.body, "body");
    }

    #[test]
    fn refusals_in_claude_codes_words() {
        assert_eq!(
            md("---\ntype: x\n").unwrap_err(),
            "prompt.md: unterminated frontmatter (opening \"---\" with no closing \"---\")"
        );
        assert_eq!(
            md("---\n- a\n---\n").unwrap_err(),
            "prompt.md: frontmatter must be a YAML object"
        );
    }

    #[test]
    fn spans_keep_the_files_lines() {
        let m = md("---\nname: x\nmax_turns: 3\n---\nbody").unwrap();
        let n = &m.entries()[1].1;
        assert_eq!(m.source.line_col(n.span.start).0, 3);
    }
}
