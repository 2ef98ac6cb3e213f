//! A source file's text and byte ranges in it: what a diagnostic points at. Parsers (spec)
//! produce them; diagnostics render them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// A byte range in a document's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span {
            start,
            end: end.max(start),
        }
    }

    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// A source file's text, shared between the parsed tree and the diagnostics.
#[derive(Debug)]
pub struct Source {
    /// The path as the user would recognise it (relative to where assay runs when possible).
    pub path: PathBuf,
    pub text: String,
    line_starts: Vec<usize>,
    /// For text that is not all ASCII: the characters before each [`CHUNK`]-byte boundary,
    /// built on the first position asked for. A column then costs at most one chunk's scan,
    /// however long its line is (a minified file is one line of many megabytes).
    chars_before: OnceLock<Option<Vec<usize>>>,
}

/// Bytes between the checkpoints of [`Source::chars_before`].
const CHUNK: usize = 512;

/// Characters that start in `bytes`: every byte that is not a UTF-8 continuation byte.
fn char_starts(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

impl Source {
    pub fn new(path: impl Into<PathBuf>, text: String) -> Arc<Source> {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Arc::new(Source {
            path: path.into(),
            text,
            line_starts,
            chars_before: OnceLock::new(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Characters in `text[..offset]`, in time bounded by [`CHUNK`] once the checkpoints exist.
    fn chars_to(&self, offset: usize) -> usize {
        let table = self.chars_before.get_or_init(|| {
            let bytes = self.text.as_bytes();
            (!bytes.is_ascii()).then(|| {
                let mut acc = 0;
                let mut table = Vec::with_capacity(bytes.len() / CHUNK + 1);
                for chunk in bytes.chunks(CHUNK) {
                    table.push(acc);
                    acc += char_starts(chunk);
                }
                table.push(acc);
                table
            })
        });
        match table {
            None => offset,
            Some(table) => {
                let k = offset / CHUNK;
                table[k] + char_starts(&self.text.as_bytes()[k * CHUNK..offset])
            }
        }
    }

    /// The 0-based line holding a byte offset.
    pub fn line_index(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        self.line_starts.partition_point(|&s| s <= offset) - 1
    }

    /// How many lines the text has (an empty text has one, empty).
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The byte range of a 0-based line, without its newline.
    pub fn line_bounds(&self, line: usize) -> (usize, usize) {
        let start = self.line_starts[line.min(self.line_starts.len() - 1)];
        let end = self
            .line_starts
            .get(line + 1)
            .map_or(self.text.len(), |next| next - 1);
        (start, end)
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let col = self.chars_to(offset) - self.chars_to(start);
        (line + 1, col + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one_and_in_characters() {
        let src = Source::new("x", "ab\ncé\nd".to_string());
        assert_eq!(src.line_col(0), (1, 1));
        assert_eq!(src.line_col(3), (2, 1));
        assert_eq!(src.line_col(6), (2, 3)); // after the two-byte é
        assert_eq!(src.line_col(7), (3, 1));
        assert_eq!(src.line_col(999), (3, 2));
    }

    /// Line and column the slow, obvious way: count from the start of the line.
    fn naive(text: &str, offset: usize) -> (usize, usize) {
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, text[start..offset].chars().count() + 1)
    }

    #[test]
    fn a_column_deep_in_a_long_line_is_exact() {
        // Two lines of several chunks each, with multi-byte characters across chunk edges.
        let line = "aé€😀".repeat(3_000);
        let text = format!("{line}\n{line}x");
        let src = Source::new("x", text.clone());
        let probes = (0..=text.len()).filter(|&i| text.is_char_boundary(i));
        for offset in probes.step_by(97).chain([text.len() - 1, text.len()]) {
            assert_eq!(src.line_col(offset), naive(&text, offset), "at {offset}");
        }
    }

    proptest::proptest! {
        #[test]
        fn line_col_agrees_with_counting_from_the_line_start(
            parts in proptest::collection::vec("[a\n\u{e9}\u{20ac}\u{1f600}]{0,40}", 0..400),
            pick in 0usize..100_000,
        ) {
            let text: String = parts.concat();
            let src = Source::new("x", text.clone());
            let boundaries: Vec<usize> =
                (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
            let offset = boundaries[pick % boundaries.len()];
            proptest::prop_assert_eq!(src.line_col(offset), naive(&text, offset));
        }
    }
}
