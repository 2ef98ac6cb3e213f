//! Finding Skillet evals: YAML files whose top-level keys look like Skillet's (any YAML the user
//! names), never under `.github/` nor a case of a format before it in the list (a UAAPS
//! package's); and, when no path is given, those in `~/.skillet/evals/`.

use std::path::{Path, PathBuf};

use crate::formats::LoadCtx;
use crate::formats::find::{EvalFormat, File, Found, Job, Scan, Walk};
use crate::host::HostEnv;
use crate::suite::paths;
use crate::suite::root::project_root;

/// YAML files the walk found: Skillet's when they look like it.
const YAML: &str = "skillet:yaml";
/// YAML files the user named: Skillet evals, whatever their keys look like.
const NAMED: &str = "skillet:named";

/// Skillet's evals, as discovery finds them.
pub struct Skillet;

impl EvalFormat for Skillet {
    fn dialects(&self) -> &'static [&'static dyn crate::formats::write::Dialect] {
        &[&super::write::SkilletDialect]
    }

    fn reads(&self) -> &'static str {
        "Skillet *.yaml"
    }

    fn claim(&self, file: &File, found: &mut Found) -> bool {
        let n = &file.name;
        if file.named && (n.ends_with(".yaml") || n.ends_with(".yml")) {
            found.add(NAMED, file.path.to_path_buf());
        } else if n.ends_with(".yaml") {
            found.add(YAML, file.path.to_path_buf());
        } else {
            return false;
        }
        true
    }

    fn plan(&self, _ctx: &LoadCtx, scan: &mut Scan) -> Vec<Job> {
        let files: Vec<PathBuf> = scan
            .found
            .get(YAML)
            .iter()
            .filter(|p| !scan.taken_earlier(p))
            .filter(|p| !p.components().any(|c| c.as_os_str() == ".github"))
            .filter(|p| looks_like_skillet(p))
            .chain(scan.found.get(NAMED))
            .cloned()
            .collect();
        if files.is_empty() {
            return Vec::new();
        }
        let scan_root = scan.root.to_path_buf();
        vec![Box::new(move |ctx: &LoadCtx| {
            super::load(ctx, &files, &scan_root, &|dir: &Path| {
                project_root(dir, &scan_root)
            })
        })]
    }

    /// Skillet's default folder, `~/.skillet/evals/`, when it exists: searched (for Skillet
    /// evals only) besides the project when no path is given, as Skillet looks there by
    /// default. Its evals run in the project, as Skillet runs them where it is started. Left
    /// out when the working folder is inside it or holds it (the walk of the project already
    /// covers it).
    fn home(&self, ctx: &LoadCtx, walk: Walk) -> Vec<Job> {
        let Some(home) = HostEnv::process_home().filter(|h| !h.as_os_str().is_empty()) else {
            return Vec::new();
        };
        let dir = paths::normalize_abs(&home.join(".skillet/evals"));
        if !dir.is_dir() || dir.starts_with(&ctx.cwd) || ctx.cwd.starts_with(&dir) {
            return Vec::new();
        }
        let files: Vec<PathBuf> = walk(&dir)
            .into_iter()
            .filter(|p| p.to_string_lossy().ends_with(".yaml") && looks_like_skillet(p))
            .collect();
        if files.is_empty() {
            return Vec::new();
        }
        let project = project_root(&ctx.cwd, &ctx.cwd);
        vec![Box::new(move |ctx: &LoadCtx| {
            super::load(ctx, &files, &dir, &|_: &Path| project.clone())
        })]
    }
}

/// Whether a YAML file looks like a Skillet eval.
fn looks_like_skillet(file: &Path) -> bool {
    std::fs::read(file).is_ok_and(|bytes| sniff(&bytes))
}

/// Whether a YAML file's bytes look like a Skillet eval. Text that is not UTF-8 is sniffed
/// through a lossy (or, with a byte-order mark, UTF-16) decoding, so a Skillet file saved in
/// another encoding is loaded and refused with a "not UTF-8" error, never skipped in silence.
fn sniff(bytes: &[u8]) -> bool {
    let utf16 = |be: bool| {
        let units: Vec<u16> = bytes[2..]
            .chunks_exact(2)
            .map(|c| {
                let pair = [c[0], c[1]];
                if be {
                    u16::from_be_bytes(pair)
                } else {
                    u16::from_le_bytes(pair)
                }
            })
            .collect();
        String::from_utf16_lossy(&units)
    };
    let text = match bytes {
        [0xff, 0xfe, ..] => utf16(false),
        [0xfe, 0xff, ..] => utf16(true),
        _ => String::from_utf8_lossy(bytes).into_owned(),
    };
    super::looks_like_skillet(&text)
}
