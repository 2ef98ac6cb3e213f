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

/// Where in `text` a `needle` that is not there comes closest, as an excerpt: the first place
/// of the longest prefix of it that is there (at least 3 characters; found by halving, so a
/// long needle costs a few searches), else the text's start.
pub(super) fn nearest(text: &str, needle: &str, ignore_case: bool) -> String {
    let ends: Vec<usize> = needle
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(needle.len()))
        .collect();
    let at = |n: usize| {
        let prefix = &needle[..ends[n]];
        find(text, prefix, ignore_case)
            .filter(|i| text.is_char_boundary(*i) && text.is_char_boundary(i + prefix.len()))
            .filter(|i| i + prefix.len() <= text.len())
            .map(|i| (i, i + prefix.len()))
    };
    // The longest prefix found lies in [lo, hi): found at lo, not at hi.
    let (mut lo, mut hi) = (3, ends.len().saturating_sub(1));
    if lo >= hi || at(lo).is_none() {
        return excerpt(text, 0, 0);
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if at(mid).is_some() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (from, to) = at(lo).unwrap_or((0, 0));
    excerpt(text, from, to)
}

pub(crate) fn regex(pattern: &str) -> Result<Regex, String> {
    crate::syntax::pyregex::compile(pattern).map_err(|e| format!("invalid regular expression: {e}"))
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

#[cfg(test)]
mod nearest_tests {
    use super::nearest;

    #[test]
    fn a_missing_needle_is_quoted_where_it_comes_closest() {
        let text = format!(
            "{}\nVersion 2.3.1 fixes the login bug.\n{}",
            "a".repeat(300),
            "z".repeat(300)
        );
        let near = nearest(&text, "Version 2.4.0", false);
        assert!(near.contains("Version 2.3.1 fixes"), "{near}");
        assert!(near.starts_with('…') && near.ends_with('…'), "{near}");
        // Nothing of it there: the start of the file.
        let start = nearest(&text, "Changelog", false);
        assert!(
            start.starts_with("aaaa") && !start.contains("Version"),
            "{start}"
        );
        assert_eq!(nearest("", "Version", false), "");
        // Case-insensitive, past characters of other widths.
        let near = nearest("ÀÉÎ version 2", "VERSION 3", true);
        assert!(near.contains("version 2"), "{near}");
    }
}
