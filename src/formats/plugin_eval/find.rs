//! Finding plugin-eval cases as Claude Code does: a folder holding `case.yaml` or `prompt.md`
//! inside the plugin's eval folder (any folder named `evals`, or exactly the one the
//! manifest's `experimental.evals` names), never inside `node_modules`, `.claude`,
//! `results`, `mocks` or `.git`, never inside another case, at most 16 folders deep; the
//! cases of one plugin are one suite, in JavaScript's sort order of their paths.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::plugin;
use crate::formats::LoadCtx;
use crate::formats::find::{EvalFormat, File, Found, Job, Scan};

/// Case folders.
const CASES: &str = "plugin-eval:cases";
/// The plugin (or suite) roots planned.
const ROOTS: &str = "plugin-eval:roots";

/// How deep below its root a case may sit.
const MAX_DEPTH: usize = 16;

/// Claude Code plugin evals, as discovery finds them.
pub struct ClaudePluginEval;

impl EvalFormat for ClaudePluginEval {
    fn dialects(&self) -> &'static [&'static dyn crate::formats::write::Dialect] {
        &[&super::write::ClaudePluginEvalDialect]
    }

    fn reads(&self) -> &'static str {
        "evals/<case>/{case.yaml,prompt.md} (claude plugin eval)"
    }

    fn claim(&self, file: &File, found: &mut Found) -> bool {
        if !matches!(file.name.as_str(), "case.yaml" | "prompt.md") || file.path.is_dir() {
            return false;
        }
        match case_root(file.dir) {
            Some(_) => {
                found.add(CASES, file.dir.to_path_buf());
                true
            }
            None => false,
        }
    }

    fn plan(&self, _ctx: &LoadCtx, scan: &mut Scan) -> Vec<Job> {
        let dirs: Vec<PathBuf> = scan.found.get(CASES).iter().cloned().collect();
        let mut by_root: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
        for dir in &dirs {
            // Claude Code never looks inside a case for more cases.
            if dirs.iter().any(|d| d != dir && dir.starts_with(d)) {
                continue;
            }
            if let Some(root) = case_root(dir) {
                by_root.entry(root).or_default().push(dir.clone());
            }
        }
        let mut jobs: Vec<Job> = Vec::new();
        for (root, mut cases) in by_root {
            scan.found.add(ROOTS, root.clone());
            cases.sort_by(|a, b| {
                let key = |p: &Path| p.to_string_lossy().encode_utf16().collect::<Vec<u16>>();
                key(a).cmp(&key(b))
            });
            jobs.push(Box::new(move |ctx: &LoadCtx| {
                super::load(ctx, &root, &cases)
            }));
        }
        jobs
    }

    /// Every file under a planned plugin's eval folders is the suite's (a fixture's YAML is
    /// not a Skillet suite).
    fn owns(&self, file: &Path, scan: &Scan) -> bool {
        scan.found.get(ROOTS).iter().any(|r| {
            file.strip_prefix(r)
                .is_ok_and(|rel| rel.components().any(|c| c.as_os_str() == "evals"))
        })
    }
}

/// The root of the suite a case folder belongs to (its plugin, or the folder above its eval
/// folder), when it is a case as Claude Code finds them.
pub fn case_root(dir: &Path) -> Option<PathBuf> {
    let plugin = plugin::plugin_above(dir, Path::new("/"));
    let root = match &plugin {
        Some(p) => p.clone(),
        None => dir
            .ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == "evals"))?
            .parent()?
            .to_path_buf(),
    };
    let rel = dir.strip_prefix(&root).ok()?;
    let names: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if names.len() > MAX_DEPTH || names.iter().any(|n| plugin::skipped(n)) {
        return None;
    }
    let in_suite = match plugin.as_deref().and_then(plugin::configured_eval_dir) {
        Some(evals) => rel.starts_with(&evals),
        None => {
            names.iter().any(|n| n == "evals") || root.file_name().is_some_and(|n| n == "evals")
        }
    };
    in_suite.then_some(root)
}
