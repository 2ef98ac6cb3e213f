//! The run folder: everything a run did, written as it happens.
//!
//! ```text
//! <run>/run.json                          resolved configuration, versions, totals
//! <run>/<suite>/<case>/run-<k>/prompt.txt the prompt (turns separated when several)
//!                              raw.jsonl   the agent's stdout, line by line, as it arrived
//!                              transcript.jsonl  normalized events
//!                              stderr.txt  the bounded stderr tail
//!                              output.txt  what counts as the case's output
//!                              artifacts/  copies of files the agent created or modified
//!                              result.json the case-run's outcome (written last, atomically)
//! ```

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Writes `bytes` to `path` so that a reader never sees a partial file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    // Write then rename: a reader, or a later `assay report`, sees the old file or the new one,
    // never half of one, even if assay is killed mid-write. (No fsync: that guards against
    // power loss, and costs milliseconds per case-run.)
    let mut tmp = tempfile::NamedTempFile::new_in(parent)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

pub fn write_json(path: &Path, value: &impl Serialize) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// A file name made from an id: safe on any filesystem, still readable. Not one-to-one: see
/// [`folder_names`] for the names of a run's folders.
pub fn slug(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_matches('.').to_string();
    if s.is_empty() { "_".into() } else { s }
}

/// The longest folder name made from an id, in bytes, before its hash (filesystems allow 255).
const MAX_NAME: usize = 100;

/// Folder names for `ids`, in order: each id's [`slug`], except that ids whose slugs would be
/// the same folder (`a b`, `a_b` and `a:b`; also `A` and `a`, one folder on a case-insensitive
/// filesystem) each get a short hash of the id added, as do ids too long for a name. Distinct
/// ids never share a folder; the same set of ids always gives the same names.
pub fn folder_names(ids: &[&str]) -> Vec<String> {
    use std::collections::HashMap;
    let slugs: Vec<String> = ids.iter().map(|id| slug(id)).collect();
    let mut owners: HashMap<String, std::collections::BTreeSet<&str>> = HashMap::new();
    for (id, s) in ids.iter().zip(&slugs) {
        owners.entry(s.to_lowercase()).or_default().insert(id);
    }
    ids.iter()
        .zip(slugs)
        .map(|(id, s)| {
            let shared = owners[&s.to_lowercase()].len() > 1;
            if !shared && s.len() <= MAX_NAME {
                return s;
            }
            let mut cut = s.len().min(MAX_NAME);
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            let hash = blake3::hash(id.as_bytes()).to_hex();
            format!("{}-{}", &s[..cut], &hash[..12])
        })
        .collect()
}

/// An append-only JSON Lines file, flushed line by line so a crash loses at most one line.
pub struct Lines {
    out: BufWriter<File>,
    path: PathBuf,
    /// The first write that failed: the file is then incomplete, which the case-run says.
    failed: Option<std::io::Error>,
}

impl Lines {
    pub fn create(path: &Path) -> std::io::Result<Lines> {
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p)?;
        }
        Ok(Lines {
            out: BufWriter::new(File::options().create(true).append(true).open(path)?),
            path: path.to_path_buf(),
            failed: None,
        })
    }

    pub fn raw(&mut self, line: &str) {
        if self.failed.is_some() {
            return;
        }
        if let Err(e) = writeln!(self.out, "{line}").and_then(|()| self.out.flush()) {
            self.failed = Some(e);
        }
    }

    /// Why the file is incomplete, when a write failed.
    pub fn error(&self) -> Option<String> {
        self.failed
            .as_ref()
            .map(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    pub fn json(&mut self, value: &impl Serialize) {
        if let Ok(s) = serde_json::to_string(value) {
            self.raw(&s);
        }
    }
}

/// The folder of one case-run inside a run folder.
/// What stands in for a case-run the run planned (`run.json` `planned`) but never recorded
/// (it crashed, was killed, or stopped first): status `missing`, so no report counts it as
/// passed. One per planned case-run without a `result.json`, with its folder relative to the
/// run folder.
pub fn missing(run_dir: &Path) -> Vec<(PathBuf, serde_json::Value)> {
    let Some(planned) = std::fs::read_to_string(run_dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("planned").and_then(|p| p.as_array().cloned()))
    else {
        return Vec::new();
    };
    planned
        .into_iter()
        .filter_map(|p| {
            let dir = PathBuf::from(p.get("dir")?.as_str()?);
            // Only folders inside the run folder, as planned (never `..` from a forged file).
            if dir.components().any(|c| !matches!(c, std::path::Component::Normal(_)))
                || run_dir.join(&dir).join("result.json").is_file()
            {
                return None;
            }
            Some((
                dir,
                serde_json::json!({
                    "suite": p["suite"], "case": p["case"], "run": p["run"],
                    "variant": p["variant"], "kind": p["kind"],
                    "status": "missing",
                    "reason": "planned but never recorded: the run stopped before this case-run finished",
                }),
            ))
        })
        .collect()
}

/// The `result.json` of every case-run recorded in a run folder, in path order.
pub fn case_run_results(run_dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = ignore::WalkBuilder::new(run_dir)
        .standard_filters(false)
        .max_depth(Some(4))
        .build()
        .flatten()
        .filter(|e| e.file_name() == "result.json")
        .map(|e| e.path().to_path_buf())
        .collect();
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_safe_folder_names() {
        assert_eq!(
            slug("uaaps:@example/text-tools"),
            "uaaps__example_text-tools"
        );
        assert_eq!(slug("security/003"), "security_003");
        assert_eq!(slug(".."), "_");
    }

    #[test]
    fn a_jsonl_file_on_a_full_disk_says_so() {
        // /dev/full answers every write with ENOSPC, as a full disk does.
        let mut l = Lines::create(Path::new("/dev/full")).unwrap();
        assert!(l.error().is_none());
        l.raw("a line");
        let e = l.error().expect("the failed write is reported");
        assert!(e.contains("/dev/full"), "{e}");
    }

    #[test]
    fn atomic_writes_replace_whole_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/result.json");
        write_json(&p, &serde_json::json!({"n": 1})).unwrap();
        write_json(&p, &serde_json::json!({"n": 2})).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["n"], 2);
        assert_eq!(
            std::fs::read_dir(d.path().join("a")).unwrap().count(),
            1,
            "no temp files left"
        );
    }

    #[test]
    fn ids_that_slug_alike_get_folders_of_their_own() {
        let ids = [
            "a b",
            "a_b",
            "a:b",
            "A_B",
            "ok",
            "security/003",
            "security_003",
            "é",
            "ü",
        ];
        let names = folder_names(&ids);
        let unique: std::collections::BTreeSet<String> =
            names.iter().map(|n| n.to_lowercase()).collect();
        assert_eq!(unique.len(), ids.len(), "{names:?}");
        assert_eq!(names[4], "ok", "an id that is its own slug keeps it");
        assert!(names[0].starts_with("a_b-"), "{names:?}");
        // Stable: the same ids give the same names.
        assert_eq!(folder_names(&ids), names);
    }

    #[test]
    fn long_ids_are_cut_below_the_filesystem_limit_and_stay_apart() {
        let a = "x".repeat(300);
        let b = format!("{}y", "x".repeat(299));
        let names = folder_names(&[&a, &b, &"é".repeat(200)]);
        assert!(names.iter().all(|n| n.len() <= MAX_NAME + 13), "{names:?}");
        assert_ne!(names[0], names[1]);
        let d = tempfile::tempdir().unwrap();
        for n in &names {
            std::fs::create_dir(d.path().join(n)).unwrap();
        }
    }
}
