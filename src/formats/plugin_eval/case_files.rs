//! The files of one case folder, read as Claude Code reads them: `case.yaml` (absent when
//! empty or a null document), `prompt.md`, and the `graders/*.md` that have front matter, in
//! JavaScript's sort order of their names. A file that cannot be read or parsed refuses the
//! case with Claude Code's message.

use std::path::{Path, PathBuf};

use super::front_matter::{self, Md};
use crate::formats::LoadCtx;
use crate::syntax::node::{Node, Value};
use crate::syntax::reader::Doc;

/// The most grader files a case may have.
const MAX_GRADER_FILES: usize = 256;

/// One case folder's files.
pub struct CaseFiles {
    pub dir: PathBuf,
    /// `case.yaml`, when it holds something.
    pub yaml: Option<(Doc, Node)>,
    pub prompt: Option<Md>,
    /// Grader files with front matter: file name and contents.
    pub graders: Vec<(String, Md)>,
}

impl CaseFiles {
    /// Whether the Markdown side says anything: a prompt body, front matter, or a grader file.
    pub fn has_markdown(&self) -> bool {
        let prompt = self
            .prompt
            .as_ref()
            .is_some_and(|p| !p.body.trim().is_empty() || !p.entries().is_empty());
        prompt || !self.graders.is_empty()
    }

    /// Claude Code's `source`: `prose` (Markdown only), `case_yaml`, or `mixed`.
    pub fn source(&self) -> &'static str {
        match (self.yaml.is_some(), self.has_markdown()) {
            (true, true) => "mixed",
            (false, _) => "prose",
            (true, false) => "case_yaml",
        }
    }
}

/// Reads a case folder; `Err` is the refusal, for the folder (or for `case.yaml`).
pub fn read(ctx: &LoadCtx, dir: &Path) -> Result<CaseFiles, (PathBuf, String)> {
    let at_dir = |m: String| (dir.to_path_buf(), m);
    let yaml = read_yaml(ctx, &dir.join("case.yaml"))?;
    let prompt_path = dir.join("prompt.md");
    let prompt = if prompt_path.exists() {
        Some(
            front_matter::read(&prompt_path, &ctx.shown(&prompt_path), "prompt.md")
                .map_err(at_dir)?,
        )
    } else {
        None
    };
    let graders = read_graders(ctx, &dir.join("graders")).map_err(at_dir)?;
    Ok(CaseFiles {
        dir: dir.to_path_buf(),
        yaml,
        prompt,
        graders,
    })
}

/// `case.yaml`: `None` when absent, empty, only comments, or a null document.
fn read_yaml(ctx: &LoadCtx, path: &Path) -> Result<Option<(Doc, Node)>, (PathBuf, String)> {
    let dir = path.parent().unwrap_or(path).to_path_buf();
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Err((dir, "case.yaml is not a regular file".to_string()));
    }
    if meta.len() > front_matter::MAX_BYTES {
        let cap = front_matter::MAX_BYTES;
        return Err((
            dir,
            format!("case.yaml is {} bytes (cap: {cap})", meta.len()),
        ));
    }
    let (doc, node) = match ctx.parse(path, &ctx.shown(path)) {
        Ok(parsed) => parsed,
        Err(problems) if is_blank(path) => {
            drop(problems);
            return Ok(None);
        }
        Err(problems) => {
            let why = problems
                .first()
                .map_or("", |p| p.message.as_str())
                .to_string();
            return Err((dir, format!("YAML parse failed: {why}")));
        }
    };
    match node.value {
        Value::Null => Ok(None),
        Value::Map(_) => Ok(Some((doc, node))),
        _ => Err((dir, "case.yaml must be a YAML object".to_string())),
    }
}

/// Whether a file holds only blank lines and comments.
fn is_blank(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| {
        t.lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    })
}

/// The `.md` files of `graders/` that have front matter, in JavaScript's sort order.
fn read_graders(ctx: &LoadCtx, dir: &Path) -> Result<Vec<(String, Md)>, String> {
    if !dir.exists() {
        return Ok(Vec::new());
    }
    if !dir.is_dir() {
        return Err("graders is not a directory".to_string());
    }
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("graders is unreadable ({e})"))?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect();
    if names.len() > MAX_GRADER_FILES {
        return Err(format!(
            "graders/ has {} .md entries (cap: {MAX_GRADER_FILES})",
            names.len()
        ));
    }
    names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    let mut out = Vec::new();
    for name in names {
        let path = dir.join(&name);
        let md = front_matter::read(&path, &ctx.shown(&path), &name)?;
        if md.front.is_some() {
            out.push((name, md));
        }
    }
    Ok(out)
}
