//! Where a finding points: files read once, and places in them found from a recorded
//! [`Location`] or from the text a finding is about.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::source::{Source, Span};
use crate::diag::{Problem, Severity};
use crate::suite::Location;

/// The most of a file lint reads (a SKILL.md or suite file larger than this is not linted
/// past it).
const MAX_BYTES: u64 = 8 << 20;

/// Files by the path findings show, read on first use.
#[derive(Default)]
pub struct Files {
    cwd: PathBuf,
    read: HashMap<PathBuf, Option<Arc<Source>>>,
}

impl Files {
    pub fn new(cwd: &Path) -> Self {
        Files {
            cwd: cwd.to_path_buf(),
            read: HashMap::new(),
        }
    }

    /// A file's text, by the path shown (relative to where assay runs, or absolute).
    pub fn source(&mut self, shown: &Path) -> Option<Arc<Source>> {
        let cwd = self.cwd.clone();
        self.read
            .entry(shown.to_path_buf())
            .or_insert_with(|| read_text(&cwd.join(shown)).map(|t| Source::new(shown, t)))
            .clone()
    }

    /// The place a loader recorded.
    pub fn at(&mut self, loc: &Location) -> Option<(Arc<Source>, Span)> {
        let src = self.source(&loc.file)?;
        let offset = offset_of(&src, loc.line, loc.column);
        Some((src, Span::new(offset, offset)))
    }

    /// Where `text` is written in a file, searched from a recorded place on (as written, or
    /// as a JSON string literal), else that place itself.
    pub fn find(&mut self, loc: &Location, text: &str) -> Option<(Arc<Source>, Span)> {
        let (src, from) = self.at(loc)?;
        let first_line = text.lines().next().unwrap_or("").trim();
        let json = serde_json::to_string(text).unwrap_or_default();
        let rest = &src.text[from.start..];
        let hit = [json.as_str(), first_line]
            .into_iter()
            .filter(|t| !t.is_empty())
            .find_map(|t| rest.find(t).map(|i| (from.start + i, t.len())));
        match hit {
            Some((start, len)) => Some((src, Span::new(start, start + len))),
            None => Some((src, from)),
        }
    }
}

/// A file's text (up to [`MAX_BYTES`], cut at a character boundary), when it is a regular file
/// of UTF-8. A FIFO, a device or a folder is never read: the open does not block (a FIFO with
/// no writer would hang lint) and anything but a regular file, link followed, gives `None`.
pub fn read_text(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES).read_to_end(&mut bytes).ok()?;
    match String::from_utf8(bytes) {
        Ok(t) => Some(t.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(t)),
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            // Only a cut at the end (the size limit) is forgiven.
            (e.utf8_error().error_len().is_none()).then(|| {
                let mut b = e.into_bytes();
                b.truncate(valid);
                String::from_utf8(b).unwrap_or_default()
            })
        }
    }
}

/// The byte offset of a 1-based line and column (in characters), or the line's end.
///
/// A binary search over [`Source::line_col`] (logarithmic), not a walk along the line: a suite
/// written on one line with thousands of findings made that walk quadratic (20,000 trigger
/// queries took minutes).
pub fn offset_of(src: &Source, line: usize, column: usize) -> usize {
    let (start, end) = src.line_bounds(line.saturating_sub(1));
    let want = column.saturating_sub(1);
    let floor = |mut o: usize| {
        while !src.text.is_char_boundary(o) {
            o -= 1;
        }
        o
    };
    let chars_in = |o: usize| src.line_col(floor(o)).1 - 1;
    let (mut lo, mut hi) = (start, end);
    if chars_in(end) < want {
        return end;
    }
    // The first offset `want` characters into the line: always a character boundary.
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if chars_in(mid) >= want {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    floor(lo)
}

/// A finding: severity, code, where, what, and the fix.
pub fn finding(
    severity: Severity,
    code: &'static str,
    file: &Path,
    place: Option<(Arc<Source>, Span)>,
    message: impl Into<String>,
    fix: impl Into<String>,
) -> Problem {
    let p = match severity {
        Severity::Error => Problem::error(code, file, message),
        Severity::Warning => Problem::warning(code, file, message),
    };
    let p = match place {
        Some((src, span)) => p.at(&src, span),
        None => p,
    };
    p.help(fix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_text_after_a_place_as_written_or_as_json() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("e.json"),
            "{\"a\": \"is good\",\n \"b\": [\"say \\\"hi\\\"\", \"is good\"]}\n",
        )
        .unwrap();
        let mut files = Files::new(d.path());
        let loc = Location {
            file: "e.json".into(),
            line: 2,
            column: 1,
        };
        let (src, span) = files.find(&loc, "is good").unwrap();
        assert_eq!(src.line_col(span.start), (2, 22));
        let (src, span) = files.find(&loc, "say \"hi\"").unwrap();
        assert_eq!(src.line_col(span.start), (2, 8));
        let (src, span) = files.find(&loc, "absent").unwrap();
        assert_eq!(src.line_col(span.start), (2, 1));
    }

    #[test]
    fn reads_only_regular_files_and_never_blocks_on_a_fifo() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(read_text(&fifo)).unwrap());
        let got = rx.recv_timeout(std::time::Duration::from_secs(5));
        assert_eq!(got, Ok(None), "a FIFO blocked or was read");
        assert_eq!(read_text(Path::new("/dev/zero")), None);
        assert_eq!(read_text(d.path()), None);
        std::fs::write(d.path().join("t"), "\u{feff}hé").unwrap();
        assert_eq!(read_text(&d.path().join("t")).as_deref(), Some("hé"));
    }

    #[test]
    fn offsets_count_characters() {
        let src = Source::new("x", "é\nab".to_string());
        assert_eq!(offset_of(&src, 2, 2), 4);
        assert_eq!(offset_of(&src, 1, 9), 2);
        // Against walking the line, on mixed widths, a long line and out-of-range places.
        let text = format!("ab\n{}\r\nx€😀\n", "é€a😀".repeat(5000));
        let src = Source::new("x", text.clone());
        let naive = |line: usize, column: usize| {
            let (start, end) = src.line_bounds(line.saturating_sub(1));
            text[start..end]
                .char_indices()
                .nth(column.saturating_sub(1))
                .map_or(end, |(i, _)| start + i)
        };
        for line in 0..6 {
            for column in (0..20_010)
                .step_by(7)
                .chain([1, 2, 3, 4, 19_999, 20_000, 20_001])
            {
                assert_eq!(
                    offset_of(&src, line, column),
                    naive(line, column),
                    "{line}:{column}"
                );
            }
        }
    }
}
