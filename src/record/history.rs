//! `.assay/history.jsonl`: one line per case (and trigger query, and baseline) per run,
//! appended when `assay run` ends, for trends across runs. Lines are independent JSON objects,
//! so a line cut by a crash spoils only itself: readers skip lines that do not parse and
//! count them.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The version of a history line.
pub const SCHEMA: &str = "assay.history/v1";

/// One case's result in one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HistoryLine {
    pub schema: String,
    /// The run folder, as `assay run` printed it.
    pub run: String,
    /// When the run started (UTC, RFC 3339).
    pub at: String,
    pub suite: String,
    pub case: String,
    /// `case` or `trigger`.
    pub kind: String,
    /// `skill` or `baseline`.
    pub variant: String,
    /// Graded runs, and how many passed.
    pub runs: u64,
    pub passed: u64,
    pub pass_rate: Option<f64>,
    /// Summed over the runs, as the agents reported it.
    pub cost_usd: Option<f64>,
    pub tokens: u64,
    pub duration_ms_mean: Option<f64>,
    pub harness: String,
    pub model: Option<String>,
    /// The harness CLI's version, as it printed it.
    pub agent_version: Option<String>,
    /// BLAKE3 of the skill's files (the first 16 hex digits), when the suite has a skill.
    pub skill_hash: Option<String>,
    /// BLAKE3 of the suite's own files, its eval specs (the first 16 hex digits): an edit of
    /// the eval breaks comparability (absent in lines written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_hash: Option<String>,
}

/// Appends lines to the history file (made with its folder when missing), one `write` per
/// line so concurrent runs interleave whole lines.
pub fn append(file: &Path, lines: &[HistoryLine]) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(file)?;
    // A line cut by a crash is ended first, so it spoils only itself.
    let len = f.metadata()?.len();
    if len > 0 {
        let mut last = [0u8];
        std::os::unix::fs::FileExt::read_at(&f, &mut last, len - 1)?;
        if last[0] != b'\n' {
            f.write_all(b"\n")?;
        }
    }
    for l in lines {
        let mut text = serde_json::to_string(l).map_err(std::io::Error::other)?;
        text.push('\n');
        f.write_all(text.as_bytes())?;
    }
    f.sync_data()
}

/// The lines of a history file that parse and carry this schema, and how many did not.
pub fn read(file: &Path) -> std::io::Result<(Vec<HistoryLine>, usize)> {
    let text = match std::fs::read(file) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<HistoryLine>(line) {
            Ok(l) if l.schema == SCHEMA => out.push(l),
            _ => bad += 1,
        }
    }
    Ok((out, bad))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_and_reads_back_skipping_a_cut_line() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join(".assay/history.jsonl");
        let line = HistoryLine {
            schema: SCHEMA.into(),
            run: ".assay/runs/1".into(),
            suite: "s".into(),
            case: "c".into(),
            runs: 2,
            passed: 1,
            pass_rate: Some(0.5),
            ..HistoryLine::default()
        };
        append(&file, std::slice::from_ref(&line)).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap()
            .write_all(b"{\"schema\": \"assay.history/v1\", \"ru")
            .unwrap();
        append(&file, std::slice::from_ref(&line)).unwrap();
        let (lines, bad) = read(&file).unwrap();
        // The cut line is ended before the next is written: it alone is lost.
        assert_eq!((lines.len(), bad), (2, 1));
        assert_eq!(lines[0], line);
        assert_eq!(read(&d.path().join("none")).unwrap(), (Vec::new(), 0));
    }
}
