//! Regular expressions with Python's meaning, for the patterns clauditor users write.
//!
//! assay compiles patterns with `fancy-regex`, whose syntax is Python's for what skill authors
//! write (lookaround, backreferences, `(?i)`), but two classes differ: Python's `\s` also holds
//! the information separators U+001C–U+001F (`str.isspace()`), and Python's `\w` is letters,
//! numbers and `_` (`str.isalnum()`), not Rust's wider and narrower set. Found by the
//! differential test against clauditor's own engine (tests/clauditor_differential.rs), so
//! `\s`, `\w`, `\b` and their negations are rewritten before compiling, in and out of
//! character classes.

/// Python's word characters (`str.isalnum()` or `_`): letters and numbers of every kind.
/// Rust's `\w` differs: it adds combining marks, connector punctuation and other alphabetic
/// symbols (`Ⓐ`), and leaves out numbers like `²` and `½`.
const WORD: &str = r"\p{L}\p{N}_";

/// `pattern` with `\s`, `\w`, `\b` and their negations given Python's meaning.
pub fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    // Nesting depth of character classes (Rust's syntax allows `[a[b]]`).
    let mut class = 0usize;
    // Just after `[` or `[^`, where `]` is a literal.
    let mut class_start = false;
    while let Some(c) = chars.next() {
        let at_start = std::mem::take(&mut class_start);
        match c {
            '\\' => match chars.next() {
                Some('s') if class > 0 => out.push_str(r"\s\x1C-\x1F"),
                Some('S') if class > 0 => out.push_str(r"[\S&&[^\x1C-\x1F]]"),
                Some('s') => out.push_str(r"[\s\x1C-\x1F]"),
                Some('S') => out.push_str(r"[^\s\x1C-\x1F]"),
                Some('w') if class > 0 => out.push_str(WORD),
                Some('W') if class > 0 => out.push_str(&format!("[^{WORD}]")),
                Some('w') => out.push_str(&format!("[{WORD}]")),
                Some('W') => out.push_str(&format!("[^{WORD}]")),
                Some('b') if class == 0 => out.push_str(&format!(
                    "(?:(?<=[{WORD}])(?![{WORD}])|(?<![{WORD}])(?=[{WORD}]))"
                )),
                // Python's `\B` never matches in an empty text.
                Some('B') if class == 0 => out.push_str(&format!(
                    r"(?:(?<=[{WORD}])(?=[{WORD}])|(?<![{WORD}])(?![{WORD}])(?:(?<=[\s\S])|(?=[\s\S])))"
                )),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            },
            '[' => {
                class += 1;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().expect("peeked"));
                }
                class_start = true;
            }
            ']' if class > 0 && !at_start => {
                class -= 1;
                out.push(']');
            }
            c => out.push(c),
        }
    }
    out
}

/// Compiles `pattern` with Python's meaning.
pub fn compile(pattern: &str) -> Result<fancy_regex::Regex, fancy_regex::Error> {
    fancy_regex::Regex::new(&translate(pattern))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finds(pattern: &str, text: &str) -> bool {
        compile(pattern).unwrap().is_match(text).unwrap()
    }

    #[test]
    fn whitespace_is_pythons_in_and_out_of_classes() {
        assert!(finds(r"a\sb", "a\u{1c}b"));
        assert!(!finds(r"a\Sb", "a\u{1f}b"));
        assert!(finds(r"a\Sb", "a-b"));
        assert!(finds(r"a[\s,]b", "a\u{1d}b"));
        assert!(!finds(r"a[^\s]b", "a\u{1e}b"));
        assert!(!finds(r"a[\S]b", "a\u{1e}b"));
        assert!(finds(r"a[\S]b", "axb"));
        assert!(!finds(r"https?://[^\s)]+x", "http://a\u{1c}x"));
    }

    #[test]
    fn word_characters_and_boundaries_are_pythons() {
        assert!(
            !finds(r"^\w+$", "e\u{301}"),
            "a combining mark is not a word character"
        );
        assert!(!finds(r"\w", "Ⓐ‿"));
        assert!(finds(r"^\w+$", "x²½_é٣"));
        assert!(finds(r"^[\w.-]+$", "a.b-²"));
        assert!(finds(r"^\W$", "Ⓐ"));
        assert!(finds(r"e\b", "e\u{301}"), "a boundary before a mark");
        assert!(!finds(r"x\B", "x!"));
        assert!(finds(r"x\B²", "x²"));
        assert!(
            !finds(r"\B", ""),
            "Python's \\B never matches an empty text"
        );
        assert!(finds(r"^\B", "!"));
    }

    #[test]
    fn everything_else_is_left_alone() {
        assert_eq!(translate(r"\\s"), r"\\s");
        assert_eq!(translate(r"[]\s]"), r"[]\s\x1C-\x1F]");
        assert_eq!(translate(r"[^]a]\d"), r"[^]a]\d");
        assert_eq!(translate(r"(?i)é+\d"), r"(?i)é+\d");
        assert_eq!(translate("\\"), "\\");
    }
}
