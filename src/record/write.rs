//! Writing the run folder: private to the user running assay, whole files that a reader never
//! sees half-written, and JSON Lines files flushed line by line. Every write says when it
//! failed.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The mode of the folders assay keeps what agents did in (the run folder, `.assay/`, the
/// workspaces' folder): their owner's alone, whatever the umask. What an agent printed or
/// copied there is no other local user's to read.
pub const PRIVATE_DIR: u32 = 0o700;

/// Creates `dir` and whichever of its parents are missing, each made [`PRIVATE_DIR`]; a
/// folder already there is left as it is.
pub fn create_missing_private(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let missing: Vec<&Path> = dir.ancestors().take_while(|p| !p.exists()).collect();
    for p in missing.into_iter().rev() {
        match std::fs::DirBuilder::new().mode(PRIVATE_DIR).create(p) {
            Ok(()) => std::fs::set_permissions(p, std::fs::Permissions::from_mode(PRIVATE_DIR))?,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && p.is_dir() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Creates a run folder (and its missing parents, `.assay/runs/` say) private to the user
/// running assay: [`PRIVATE_DIR`], also when it was there (`--resume`, `--output-dir`).
pub fn create_run_folder(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    create_missing_private(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(PRIVATE_DIR))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_folders_and_their_new_parents_are_private_whatever_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let run = d.path().join(".assay/runs/1");
        create_run_folder(&run).unwrap();
        assert_eq!(mode(&run), 0o700);
        assert_eq!(mode(&d.path().join(".assay")), 0o700);
        assert_eq!(
            mode(d.path()),
            0o755,
            "a folder already there is left as it is"
        );
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o777)).unwrap();
        create_run_folder(&run).unwrap();
        assert_eq!(mode(&run), 0o700, "a run folder given is made private");
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
}
