//! The case-run cache: a case-run whose inputs have not changed is reused instead of run again.
//!
//! The key is a BLAKE3 hash of everything that decides what a case-run does: the case as loaded
//! (prompt, checks, judge items, …), the suite's defaults, the skill's files (or the baseline's),
//! fixtures and overlays by content, the harness with its version and command, the model, the
//! judge, the plugins, the trigger settings and the run's index (so `--runs 5` keeps five
//! samples). Other project files are not in the key. Only case-runs that completed and were
//! fully graded are stored; failures of the agent or the judge are always run again.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::spec::{Case, Skill, Suite};

/// Everything that goes into one key besides files.
pub struct KeyInput<'a> {
    pub suite: &'a Suite,
    pub case: &'a Case,
    /// The trigger eval's settings, when it is one (query, expectation, mode).
    pub trigger: Option<Value>,
    pub variant: &'a str,
    /// The skill installed (the suite's, a baseline version, or none).
    pub skill: Option<&'a Skill>,
    pub run: u32,
    /// Harness name, its version and its command line.
    pub harness: String,
    pub model: Option<&'a str>,
    pub timeout_secs: u64,
    pub judge: Option<String>,
    pub plugins: &'a Value,
    /// What the agent's environment says about its model API: see [`env_key`].
    pub env: &'a str,
}

/// The host variables that choose the agent's model endpoint, model and account (`*_BASE_URL`,
/// `*_MODEL`, `*_API_KEY`, `CLAUDE_CODE_*`) and those passed with `--pass-env`: a run against
/// another endpoint or account is another case-run. (The key is a hash; no value is stored.)
pub fn env_key(host: &[(String, String)], pass_env: &[String]) -> String {
    let mut vars: Vec<&(String, String)> = host
        .iter()
        .filter(|(k, _)| {
            k.ends_with("_BASE_URL")
                || k.ends_with("_MODEL")
                || k.ends_with("_API_KEY")
                || k.starts_with("CLAUDE_CODE_")
                || pass_env.contains(k)
        })
        .collect();
    vars.sort();
    vars.iter().map(|(k, v)| format!("{k}={v}\u{0}")).collect()
}

/// The content of what a command harness runs: its program (found in the project or on PATH)
/// and every argument that names a file in the project (`sh agent.sh`), so editing an agent
/// script is a change like editing the skill.
fn program_digest(argv: &[&str], project: &Path) -> String {
    let mut h = blake3::Hasher::new();
    for (i, arg) in argv.iter().enumerate() {
        let mut candidates = vec![project.join(arg)];
        if i == 0 && !arg.contains('/') {
            candidates = std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).map(|d| d.join(arg)).collect())
                .unwrap_or_default();
        }
        if let Some(bytes) = candidates
            .iter()
            .filter(|p| p.is_file())
            .find_map(|p| std::fs::read(p).ok())
        {
            h.update(arg.as_bytes());
            h.update(blake3::hash(&bytes).as_bytes());
        }
    }
    h.finalize().to_hex().to_string()
}

/// The cache folder of a project.
pub fn root(project: &Path) -> PathBuf {
    project.join(".assay/cache/case-runs")
}

/// File digests already taken in this run: a suite's skill, overlays and agent script are the
/// same for all its case-runs, so each is read once, not once per case-run.
#[derive(Default)]
pub struct Digests {
    trees: std::collections::HashMap<PathBuf, blake3::Hash>,
    programs: std::collections::HashMap<(String, PathBuf), String>,
}

impl Digests {
    fn tree(&mut self, path: &Path) -> blake3::Hash {
        *self
            .trees
            .entry(path.to_path_buf())
            .or_insert_with(|| hash_tree(path))
    }

    /// The digest of what a `command` harness runs (its `command:` key), empty for others.
    pub fn program(&mut self, harness_key: &str, project: &Path) -> String {
        let Some(argv) = harness_key.strip_prefix("command:") else {
            return String::new();
        };
        let argv = argv.split('\u{1}').next().unwrap_or("");
        self.programs
            .entry((argv.to_string(), project.to_path_buf()))
            .or_insert_with(|| program_digest(&argv.split('\u{0}').collect::<Vec<_>>(), project))
            .clone()
    }
}

pub fn key(k: &KeyInput<'_>, digests: &mut Digests) -> String {
    let mut h = blake3::Hasher::new();
    let project = k.suite.project_root.to_string_lossy().to_string();
    let mut field = |name: &str, text: &str| {
        h.update(name.as_bytes());
        h.update(&(text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    };
    // Absolute paths are made project-relative, so a checkout elsewhere hits the same keys.
    let rel = |v: String| v.replace(&project, "<project>");
    field("assay", env!("CARGO_PKG_VERSION"));
    field("format", k.suite.format.name());
    field(
        "case",
        &rel(serde_json::to_string(k.case).unwrap_or_default()),
    );
    field(
        "defaults",
        &rel(serde_json::to_string(&k.suite.defaults).unwrap_or_default()),
    );
    field(
        "trigger",
        &k.trigger.clone().unwrap_or_default().to_string(),
    );
    field("variant", k.variant);
    field("run", &k.run.to_string());
    field("harness", &k.harness);
    field("model", k.model.unwrap_or(""));
    field("timeout", &k.timeout_secs.to_string());
    field("judge", k.judge.as_deref().unwrap_or(""));
    field("plugins", &k.plugins.to_string());
    field("env", k.env);
    let mut trees: Vec<(&str, &Path)> = Vec::new();
    if let Some(s) = k.skill {
        trees.push(("skill", &s.path));
    }
    if let Some(o) = &k.suite.base_overlay {
        trees.push(("base-overlay", o));
    }
    if let Some(o) = &k.case.overlay {
        trees.push(("overlay", o));
    }
    for f in &k.case.fixtures {
        trees.push(("fixture", &f.source));
    }
    if let Some(pkg) = &k.suite.package {
        trees.push(("package", &pkg.root));
    }
    for (label, path) in trees {
        h.update(label.as_bytes());
        h.update(digests.tree(path).as_bytes());
    }
    h.finalize().to_hex().to_string()
}

/// Every file under `path` (or the file itself): relative path and content, in sorted order.
fn hash_tree(path: &Path) -> blake3::Hash {
    let mut h = blake3::Hasher::new();
    let mut files: Vec<PathBuf> = ignore::WalkBuilder::new(path)
        .standard_filters(false)
        .filter_entry(|e| !crate::discover::is_skipped_dir(&e.file_name().to_string_lossy()))
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.path().to_path_buf())
        .collect();
    files.sort();
    for f in files {
        let rel = f.strip_prefix(path).unwrap_or(&f);
        h.update(rel.to_string_lossy().as_bytes());
        h.update(&[0]);
        match std::fs::read(&f) {
            Ok(bytes) => {
                h.update(&(bytes.len() as u64).to_le_bytes());
                h.update(&bytes);
            }
            Err(_) => {
                h.update(b"<unreadable>");
            }
        }
    }
    if !path.exists() {
        h.update(b"<missing>");
    }
    h.finalize()
}

/// Copies a cached case-run into `dest` and marks its `result.json` as reused; returns the
/// result, or `None` when nothing usable is cached.
pub fn restore(cache: &Path, key: &str, dest: &Path) -> Option<Value> {
    let from = cache.join(key);
    let text = std::fs::read_to_string(from.join("result.json")).ok()?;
    let mut result: Value = serde_json::from_str(&text).ok()?;
    if crate::workspace::copy::copy_tree(&from, dest, false).is_err() {
        return None;
    }
    result["cached"] = serde_json::json!({
        "key": key,
        "from": result["dir"].clone(),
    });
    result["dir"] = Value::String(dest.display().to_string());
    result["workspace"] = Value::Null;
    super::record::write_json(&dest.join("result.json"), &result).ok()?;
    Some(result)
}

/// Stores a finished case-run's folder under its key (replacing any older entry whole).
pub fn store(cache: &Path, key: &str, case_run: &Path) {
    let _ = std::fs::create_dir_all(cache);
    let Ok(tmp) = tempfile::Builder::new().prefix(".tmp-").tempdir_in(cache) else {
        return;
    };
    if crate::workspace::copy::copy_tree(case_run, tmp.path(), false).is_err() {
        return;
    }
    let dest = cache.join(key);
    let _ = std::fs::remove_dir_all(&dest);
    let tmp = tmp.keep();
    if std::fs::rename(&tmp, &dest).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_case_runs_come_back_marked_as_cached() {
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join("run/s/c/run-1");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("output.txt"), "hi").unwrap();
        super::super::record::write_json(
            &run.join("result.json"),
            &serde_json::json!({"status": "completed", "dir": run}),
        )
        .unwrap();
        let cache = d.path().join("cache");
        store(&cache, "k1", &run);
        let dest = d.path().join("run2/s/c/run-1");
        let r = restore(&cache, "k1", &dest).unwrap();
        assert_eq!(r["cached"]["key"], "k1");
        assert_eq!(
            std::fs::read_to_string(dest.join("output.txt")).unwrap(),
            "hi"
        );
        assert!(restore(&cache, "k2", &d.path().join("x")).is_none());
    }
}
