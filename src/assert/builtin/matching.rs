//! Finding text for the checks: regular expressions with Python's semantics, substring search,
//! match counts, and the excerpt shown as evidence.

use fancy_regex::Regex;

use super::{Finding, finding};

/// Up to 60 characters either side of a byte range, on one line.
pub fn excerpt(text: &str, start: usize, end: usize) -> String {
    let from = text[..start]
        .char_indices()
        .rev()
        .nth(59)
        .map(|(i, _)| i)
        .unwrap_or(0);
    let to = text[end..]
        .char_indices()
        .nth(60)
        .map(|(i, _)| end + i)
        .unwrap_or(text.len());
    let mut s = String::new();
    if from > 0 {
        s.push('…');
    }
    s.push_str(&text[from..to].replace('\n', "⏎"));
    if to < text.len() {
        s.push('…');
    }
    s
}

pub(crate) fn regex(pattern: &str) -> Result<Regex, String> {
    crate::spec::pyregex::compile(pattern).map_err(|e| format!("invalid regular expression: {e}"))
}

/// Non-overlapping matches, as Python's `re.findall` counts them: since Python 3.7 an empty
/// match right after a non-empty one counts too (`[\d,]*$` finds "00" and "" at the end of
/// "14:30:00"), where Rust's iterator skips it. An empty match is never taken twice at one
/// place.
pub(crate) fn find_all(re: &Regex, text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut empty_at = None;
    while pos <= text.len() {
        let Ok(Some(m)) = re.find_from_pos(text, pos) else {
            break;
        };
        if m.start() == m.end() && empty_at == Some(m.start()) {
            match text[pos..].chars().next() {
                Some(c) => pos += c.len_utf8(),
                None => break,
            }
            continue;
        }
        out.push((m.start(), m.end()));
        empty_at = (m.start() == m.end()).then_some(m.end());
        pos = m.end();
    }
    out
}

pub(super) fn find(haystack: &str, needle: &str, ignore_case: bool) -> Option<usize> {
    if ignore_case {
        haystack.to_lowercase().find(&needle.to_lowercase())
    } else {
        haystack.find(needle)
    }
}

/// Whether `pattern` matches at least `wanted` times in `text`, the first five matches as
/// evidence.
pub(super) fn count_check(
    text: &str,
    pattern: &str,
    wanted: i64,
    what: &str,
) -> Result<Finding, String> {
    let matches = find_all(&regex(pattern)?, text);
    let n = matches.len() as i64;
    let evidence = matches
        .iter()
        .take(5)
        .map(|(s, e)| text[*s..*e].to_string())
        .collect::<Vec<_>>()
        .join(" | ");
    finding(
        n >= wanted,
        format!("{n} {what} found, at least {wanted} wanted"),
        (!evidence.is_empty()).then_some(evidence),
    )
}
