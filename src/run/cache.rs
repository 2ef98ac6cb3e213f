//! The case-run cache: a case-run whose inputs have not changed is reused instead of run again.
//!
//! The key is a BLAKE3 hash of everything that decides what a case-run does: the case as loaded
//! (prompt, checks, judge items, …), the suite's defaults, the skill's files (or the baseline's),
//! fixtures and overlays by content, the harness with its version and command, the model, the
//! judge, the plugins, the trigger settings, how the agent is contained (the sandbox's
//! backend and its version, the network, the limits and how they hold: a pass unsandboxed is
//! no pass in a sandbox) and the run's index (so `--runs 5` keeps five samples). Other
//! project files are not in the key. Only case-runs that completed and were
//! fully graded are stored; failures of the agent or the judge are always run again.
//!
//! Entries are authenticated: each holds a MAC of its files keyed with a secret kept outside
//! the project (see [`super::cache_key`]), and an entry that does not match it (edited, made
//! with another secret, holding a symlink) is a miss, so its case-run runs again.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::record::CaseRunRecord;
use crate::record::case_run::Cached;
use crate::record::layout;
use crate::suite::{Case, Skill, Suite};

/// Everything that goes into one key besides files.
pub struct KeyInput<'a> {
    pub suite: &'a Suite,
    pub case: &'a Case,
    /// The trigger eval's settings, when it is one (query, expectation, mode).
    pub trigger: Option<Value>,
    pub variant: &'a str,
    /// The skill installed (the suite's, a baseline version, or none).
    pub skill: Option<&'a Skill>,
    /// The skills installed beside it (`--with-skills`).
    pub siblings: &'a [Skill],
    pub run: u32,
    /// Harness name, its version and its command line.
    pub harness: String,
    pub model: Option<&'a str>,
    pub timeout_secs: u64,
    pub judge: Option<String>,
    pub plugins: &'a Value,
    /// What the agent's environment says about its model API: see [`env_key`].
    pub env: &'a str,
    /// How the agent is contained: see [`sandbox_key`].
    pub sandbox: String,
    /// What the run grants the agent beyond the case: tools (`--allow-tools`), and how MCP
    /// servers are stood in for (`--mocks`, `--allow-real-servers`).
    pub grants: String,
}

/// How a suite's case-runs are contained, for the key: `none` unsandboxed; else the backend
/// and its version, the network, the folders shown read-only and alone writable, and each
/// limit with how it holds on this machine.
pub fn sandbox_key(s: &crate::sandbox::Setting) -> String {
    let Some(b) = &s.backend else {
        return "none".to_string();
    };
    serde_json::json!({
        "kind": b.kind(),
        "backend": b.version(),
        "network": crate::record::run::word(&s.network),
        "read_only": s.read_only,
        "writable": s.writable,
        "limits": s.limits,
        "held": s.enforcement.describe(s.limits),
    })
    .to_string()
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
            candidates = crate::host::HostEnv::process_var("PATH")
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
    skills: std::collections::HashMap<PathBuf, blake3::Hash>,
    programs: std::collections::HashMap<(String, PathBuf), String>,
    /// Never part of a skill: every suite's spec files (what staging keeps out of the
    /// installed skill).
    specs: Vec<PathBuf>,
}

impl Digests {
    /// Digests for a run whose suites' spec files are `specs`.
    pub fn new(specs: Vec<PathBuf>) -> Digests {
        Digests {
            specs,
            ..Digests::default()
        }
    }

    fn tree(&mut self, path: &Path) -> blake3::Hash {
        *self
            .trees
            .entry(path.to_path_buf())
            .or_insert_with(|| hash_tree(path))
    }

    /// A package by what is installed of it: a Claude Code plugin as it is staged, without
    /// its `evals/` and `results/` (the cases are keyed by their text), nor a run folder of
    /// assay's in it (`--output-dir` inside the plugin).
    fn package(&mut self, pkg: &crate::suite::Package) -> blake3::Hash {
        if !pkg.claude_plugin {
            return self.tree(&pkg.root);
        }
        let specs = self.specs.clone();
        *self.trees.entry(pkg.root.clone()).or_insert_with(move || {
            let files: Vec<PathBuf> = ignore::WalkBuilder::new(&pkg.root)
                .standard_filters(false)
                .filter_entry(move |e| {
                    let name = e.file_name().to_string_lossy();
                    let folder = e.file_type().is_some_and(|t| t.is_dir());
                    let run_folder = || e.path().join(crate::record::layout::RUN_JSON).is_file();
                    !(folder && (matches!(name.as_ref(), "evals" | "results") || run_folder()))
                        && !crate::suite::paths::is_skipped_dir(&name)
                        && !specs.iter().any(|s| s == e.path())
                })
                .build()
                .flatten()
                .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
                .map(|e| e.path().to_path_buf())
                .collect();
            hash_files(&pkg.root, files)
        })
    }

    /// A skill by what is installed of it ([`crate::workspace::copy::copy_skill`]): its eval
    /// specs, `.assay/` and the rest left out, so editing a case is no change of the skill.
    fn skill(&mut self, skill: &Skill) -> blake3::Hash {
        if skill.kind == crate::suite::SkillKind::Command {
            return self.tree(&skill.path);
        }
        let specs = &self.specs;
        *self
            .skills
            .entry(skill.path.clone())
            .or_insert_with(|| hash_skill(&skill.path, specs))
    }

    /// The digest of what a `command` harness runs (its `command:` key), and of the program of
    /// a harness that has no version to key the cache by (a plugin's without a version flag:
    /// a changed agent is a miss); empty for others.
    pub fn program(
        &mut self,
        harness: (&str, &dyn crate::harness::Harness),
        project: &Path,
    ) -> String {
        let (harness_key, h) = harness;
        // The generic acp harness: its whole command line (`python3 agent.py`), as a
        // command harness's.
        if let Some(argv) = harness_key
            .strip_prefix("acp:")
            .and_then(|k| k.split('\u{1}').nth(1))
            .filter(|a| !a.is_empty())
        {
            return self
                .programs
                .entry((format!("acp\u{0}{argv}"), project.to_path_buf()))
                .or_insert_with(|| {
                    program_digest(&argv.split('\u{0}').collect::<Vec<_>>(), project)
                })
                .clone();
        }
        if let Some(crate::harness::VersionCommand {
            program,
            args: None,
        }) = h.version_command()
        {
            return self
                .programs
                .entry((program.clone(), project.to_path_buf()))
                .or_insert_with(|| program_digest(&[&program], project))
                .clone();
        }
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
    field("case", &rel(case_text(k.case)));
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
    field("sandbox", &rel(k.sandbox.clone()));
    field("grants", &k.grants);
    for s in k.siblings {
        field("sibling", &s.name);
    }
    if let Some(s) = k.skill {
        h.update(b"skill");
        h.update(digests.skill(s).as_bytes());
    }
    for pkg in k.suite.package.iter().chain(&k.case.plugins) {
        h.update(b"package");
        h.update(digests.package(pkg).as_bytes());
    }
    let mut trees: Vec<(&str, &Path)> = Vec::new();
    if let Some(o) = &k.suite.base_overlay {
        trees.push(("base-overlay", o));
    }
    if let Some(o) = &k.case.overlay {
        trees.push(("overlay", o));
    }
    for f in &k.case.fixtures {
        trees.push(("fixture", &f.source));
    }
    if let Some(h) = &k.case.history {
        trees.push(("history", h));
    }
    for (label, path) in trees {
        h.update(label.as_bytes());
        h.update(digests.tree(path).as_bytes());
    }
    for s in k.siblings {
        h.update(b"sibling");
        h.update(digests.skill(s).as_bytes());
    }
    h.finalize().to_hex().to_string()
}

/// A short content hash of a skill (its folder's files, or its command file): the first 16
/// hex digits of [`hash_tree`], for history lines.
pub fn content_hash(path: &Path) -> String {
    hash_tree(path).to_hex()[..16].to_string()
}

/// A short content hash of a skill as installed (without its eval specs or `specs`, the
/// suite's spec files): an edit of a case is no change of the skill.
pub fn skill_hash(skill: &Skill, specs: &[PathBuf]) -> String {
    let hash = match skill.kind {
        crate::suite::SkillKind::Dir => hash_skill(&skill.path, specs),
        crate::suite::SkillKind::Command => hash_tree(&skill.path),
    };
    hash.to_hex()[..16].to_string()
}

/// A short content hash of a suite's own files, its eval specs (and for a folder format, the
/// folder): an edit of the eval changes it.
pub fn suite_hash(suite: &crate::suite::Suite, cwd: &Path) -> String {
    let parts: String = suite
        .spec_paths(cwd)
        .iter()
        .map(|p| content_hash(p))
        .collect();
    blake3::hash(parts.as_bytes()).to_hex()[..16].to_string()
}

/// The case as loaded, for the key: what it asks and checks, never where in its file it is
/// (an edit of another case, or a blank line, moves it without changing it).
fn case_text(case: &Case) -> String {
    let mut v = serde_json::to_value(case).unwrap_or_default();
    without_positions(&mut v);
    v.to_string()
}

/// Drops the line and column of every `location` in `v`.
fn without_positions(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(at)) = map.get_mut("location") {
                at.remove("line");
                at.remove("column");
            }
            map.values_mut().for_each(without_positions);
        }
        Value::Array(items) => items.iter_mut().for_each(without_positions),
        _ => {}
    }
}

/// Every file under `path` (or the file itself): relative path and content, in sorted order.
fn hash_tree(path: &Path) -> blake3::Hash {
    let files: Vec<PathBuf> = ignore::WalkBuilder::new(path)
        .standard_filters(false)
        .filter_entry(|e| !crate::suite::paths::is_skipped_dir(&e.file_name().to_string_lossy()))
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.path().to_path_buf())
        .collect();
    hash_files(path, files)
}

/// The files of the skill folder `path` that are installed, without `specs`.
fn hash_skill(path: &Path, specs: &[PathBuf]) -> blake3::Hash {
    let files: Vec<PathBuf> = crate::workspace::copy::skill_walk(path, specs)
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.path().to_path_buf())
        .collect();
    hash_files(path, files)
}

/// `files` under `path`: each relative path and content, in sorted order.
fn hash_files(path: &Path, mut files: Vec<PathBuf>) -> blake3::Hash {
    let mut h = blake3::Hasher::new();
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

/// The file beside an entry's files that holds their MAC (see [`mac`]).
pub const MAC_FILE: &str = ".assay-mac";

/// The MAC of a cache entry: a BLAKE3 hash keyed with the secret (see [`super::cache_key`]) of
/// the cache key and of every file of the entry but the MAC file itself, in sorted
/// relative-path order, each as path length, path, content length and content. A symlink, or
/// anything else that is neither a file nor a folder, is an error: entries hold none.
pub fn mac(entry: &Path, key: &str, secret: &[u8; 32]) -> std::io::Result<blake3::Hash> {
    let mut files = Vec::new();
    entry_files(entry, Path::new(""), &mut files)?;
    files.retain(|rel| rel.as_os_str() != MAC_FILE);
    files.sort_by(|a, b| {
        a.as_os_str()
            .as_encoded_bytes()
            .cmp(b.as_os_str().as_encoded_bytes())
    });
    let mut h = blake3::Hasher::new_keyed(secret);
    h.update(b"assay case-run cache entry v1\0");
    h.update(&(key.len() as u64).to_le_bytes());
    h.update(key.as_bytes());
    for rel in files {
        let path = rel.as_os_str().as_encoded_bytes();
        h.update(&(path.len() as u64).to_le_bytes());
        h.update(path);
        let mut file = std::fs::File::open(entry.join(&rel))?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(not_a_file(&entry.join(&rel)));
        }
        h.update(&meta.len().to_le_bytes());
        let read = std::io::copy(&mut file, &mut h)?;
        if read != meta.len() {
            return Err(std::io::Error::other(format!(
                "{} changed while it was read",
                entry.join(&rel).display()
            )));
        }
    }
    Ok(h.finalize())
}

fn not_a_file(path: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!(
            "{} is a symlink or special file: cache entries hold only files and folders",
            path.display()
        ),
    )
}

/// The relative paths of the regular files under `root.join(rel)`, refusing anything else
/// (symlinks are not followed). Iterative: a deep tree takes no stack.
fn entry_files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut folders = vec![rel.to_path_buf()];
    while let Some(rel) = folders.pop() {
        for e in std::fs::read_dir(root.join(&rel))? {
            let e = e?;
            let child = rel.join(e.file_name());
            let t = e.file_type()?;
            if t.is_dir() {
                folders.push(child);
            } else if t.is_file() {
                out.push(child);
            } else {
                return Err(not_a_file(&root.join(child)));
            }
        }
    }
    Ok(())
}

/// The MAC an entry was stored with, when it is there, well-formed and right for its files.
fn verified(entry: &Path, key: &str, secret: &[u8; 32]) -> Option<blake3::Hash> {
    let mac_path = entry.join(MAC_FILE);
    if !std::fs::symlink_metadata(&mac_path).ok()?.is_file() {
        return None;
    }
    let text = std::fs::read(&mac_path).ok()?;
    let stored = blake3::Hash::from_hex(&text).ok()?;
    // `blake3::Hash`'s `==` is constant-time.
    (mac(entry, key, secret).ok()? == stored).then_some(stored)
}

/// Copies a cached case-run into `dest` and marks its `result.json` as reused; returns the
/// result, or `None` when nothing usable is cached. An entry whose MAC is missing, malformed
/// or wrong (edited, or made with another secret), or that holds a symlink, is a miss: nothing
/// is copied and the case-run runs again. The copy is checked again before it becomes `dest`,
/// so an entry changed while it is copied is a miss too.
pub fn restore(
    cache: &Path,
    key: &str,
    dest: &Path,
    run_dir: &Path,
    secret: &[u8; 32],
) -> Option<CaseRunRecord> {
    let from = cache.join(key);
    let expected = verified(&from, key, secret)?;
    let parent = dest.parent()?;
    std::fs::create_dir_all(parent).ok()?;
    let tmp = tempfile::Builder::new()
        .prefix(".restore-")
        .tempdir_in(parent)
        .ok()?;
    crate::workspace::copy::copy_tree(&from, tmp.path(), false).ok()?;
    if mac(tmp.path(), key, secret).ok()? != expected {
        return None;
    }
    std::fs::remove_file(tmp.path().join(MAC_FILE)).ok()?;
    carry_listing(tmp.path(), cache, run_dir).ok()?;
    let mut result = crate::record::read_case_run(tmp.path()).ok()?;
    result.cached = Some(Cached {
        key: key.to_string(),
        from: std::mem::replace(&mut result.dir, dest.to_path_buf()),
    });
    result.workspace = None;
    crate::record::write_json(&tmp.path().join(layout::RESULT_JSON), &result).ok()?;
    let tmp = tmp.keep();
    if std::fs::rename(&tmp, dest).is_err() {
        let _ = crate::workspace::remove::tree(&tmp);
        return None;
    }
    Some(result)
}

/// Copies the project listing the case-run in `case_run` names (see
/// [`crate::record::files`]) from the folder `from` to the folder `to` (the run folder and the
/// cache, either way), unless `to` has it. A listing that is missing, or whose content is not
/// what its name says, is an error: the case-run's file listing would be incomplete.
fn carry_listing(case_run: &Path, from: &Path, to: &Path) -> std::io::Result<()> {
    use crate::record::files;
    let Some(hash) = files::project_of(case_run) else {
        return Ok(());
    };
    if files::read_listing(to, &hash).is_some() {
        return Ok(());
    }
    let bytes = files::read_listing(from, &hash).ok_or_else(|| {
        std::io::Error::other(format!(
            "the project listing {} is missing or altered",
            files::listing_path(from, &hash).display()
        ))
    })?;
    crate::record::write_atomic(&files::listing_path(to, &hash), &bytes)
}

/// Stores a finished case-run's folder under its key (replacing any older entry whole), with
/// its MAC written last into the temporary folder that is then moved into place, so no entry
/// is ever seen half-written. A case-run holding a symlink is not stored.
pub fn store(
    cache: &Path,
    key: &str,
    case_run: &Path,
    run_dir: &Path,
    secret: &[u8; 32],
) -> std::io::Result<()> {
    // Refused before anything is copied (copying would keep or drop a symlink, not refuse it).
    entry_files(case_run, Path::new(""), &mut Vec::new())?;
    // Private, as the run folder it is copied from.
    crate::record::write::create_missing_private(cache)?;
    carry_listing(case_run, run_dir, cache)?;
    let tmp = tempfile::Builder::new().prefix(".tmp-").tempdir_in(cache)?;
    crate::workspace::copy::copy_tree(case_run, tmp.path(), false)?;
    let sum = mac(tmp.path(), key, secret)?;
    std::fs::write(tmp.path().join(MAC_FILE), sum.to_hex().as_bytes())?;
    let dest = cache.join(key);
    match crate::workspace::remove::tree(&dest) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let tmp = tmp.keep();
    if let Err(e) = std::fs::rename(&tmp, &dest) {
        let _ = crate::workspace::remove::tree(&tmp);
        // Another assay stored the same case-run first: its entry is as good.
        if !dest.is_dir() {
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: [u8; 32] = [7; 32];

    /// A finished case-run folder, stored under `k1`: (temp dir, the run folder, the cache).
    fn stored() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join("run/s/c/run-1");
        std::fs::create_dir_all(run.join("outputs")).unwrap();
        std::fs::write(run.join("output.txt"), "hi").unwrap();
        std::fs::write(run.join("outputs/notes.md"), "notes").unwrap();
        crate::record::write_json(
            &run.join("result.json"),
            &serde_json::json!({"suite": "s", "case": "c", "status": "completed", "grade": {"verdict": "fail"}, "dir": run}),
        )
        .unwrap();
        let listing = crate::record::files::Listing::of(&["a.md".into()].into());
        listing.keep(&d.path().join("run")).unwrap();
        let files: crate::record::files::FileList = [PathBuf::from("a.md")].into_iter().collect();
        crate::record::write_json(&run.join("workspace.json"), &files.record(&listing.hash))
            .unwrap();
        let cache = d.path().join("cache");
        store(&cache, "k1", &run, &d.path().join("run"), &SECRET).unwrap();
        (d, run, cache)
    }

    fn restore_into(d: &tempfile::TempDir, cache: &Path) -> (PathBuf, Option<CaseRunRecord>) {
        let dest = d.path().join("run2/s/c/run-1");
        let r = restore(cache, "k1", &dest, &d.path().join("run2"), &SECRET);
        (dest.clone(), r)
    }

    /// A miss copies nothing into the run folder.
    fn assert_miss(d: &tempfile::TempDir, cache: &Path) {
        let (dest, r) = restore_into(d, cache);
        assert!(r.is_none(), "{r:?}");
        assert!(!dest.exists());
        let left: Vec<_> = std::fs::read_dir(dest.parent().unwrap())
            .map(|rd| rd.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn stored_case_runs_come_back_marked_as_cached() {
        let (d, run, cache) = stored();
        assert!(cache.join("k1").join(MAC_FILE).is_file());
        let (dest, r) = restore_into(&d, &cache);
        let r = r.unwrap();
        let cached = r.cached.as_ref().unwrap();
        assert_eq!(cached.key, "k1");
        assert_eq!(cached.from, run);
        assert_eq!(
            r.grade.as_ref().unwrap().verdict,
            crate::record::grading::Verdict::Fail
        );
        assert_eq!(r.dir, dest);
        assert_eq!(
            std::fs::read_to_string(dest.join("output.txt")).unwrap(),
            "hi"
        );
        assert_eq!(
            std::fs::read_to_string(dest.join("outputs/notes.md")).unwrap(),
            "notes"
        );
        // The project listing its workspace.json names comes with it.
        let files = crate::record::files::read(
            &dest,
            &crate::record::files::Listings::new(&d.path().join("run2")),
        )
        .unwrap();
        assert!(files.contains(Path::new("a.md")), "{files:?}");
        assert!(!dest.join(MAC_FILE).exists(), "the MAC stays in the cache");
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(dest.join("result.json")).unwrap())
                .unwrap();
        assert_eq!(written["cached"]["key"], "k1");
        // Nothing is left beside the restored folder; the entry can be restored again.
        let names: Vec<_> = std::fs::read_dir(dest.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["run-1"]);
        assert!(
            restore(
                &cache,
                "k1",
                &d.path().join("run3/run-1"),
                &d.path().join("run3"),
                &SECRET
            )
            .is_some()
        );
        assert!(
            restore(
                &cache,
                "k2",
                &d.path().join("x/run-1"),
                &d.path().join("x"),
                &SECRET
            )
            .is_none()
        );
        // Storing again replaces the entry whole.
        store(&cache, "k1", &run, &d.path().join("run"), &SECRET).unwrap();
        let mut entries: Vec<_> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        entries.sort();
        assert_eq!(entries, ["k1", crate::record::files::LISTINGS]);
    }

    #[test]
    fn an_entry_whose_project_listing_is_gone_or_altered_is_a_miss() {
        let (d, _, cache) = stored();
        let listings = cache.join(crate::record::files::LISTINGS);
        let path = std::fs::read_dir(&listings)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        std::fs::write(&path, r#"["a.md","forged.md"]"#).unwrap();
        assert_miss(&d, &cache);
        std::fs::remove_file(&path).unwrap();
        assert_miss(&d, &cache);
    }

    #[test]
    fn a_tampered_result_is_a_miss() {
        let (d, _, cache) = stored();
        let path = cache.join("k1/result.json");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\"fail\"", "\"pass\"")).unwrap();
        assert_miss(&d, &cache);
    }

    #[test]
    fn a_tampered_file_of_a_subfolder_is_a_miss() {
        let (d, _, cache) = stored();
        std::fs::write(cache.join("k1/outputs/notes.md"), "NOTES").unwrap();
        assert_miss(&d, &cache);
    }

    #[test]
    fn a_missing_or_malformed_mac_is_a_miss() {
        let (d, _, cache) = stored();
        let mac_path = cache.join("k1").join(MAC_FILE);
        let good = std::fs::read_to_string(&mac_path).unwrap();
        assert_eq!(good.len(), 64);
        for bad in ["", "zz", &good[..63], &format!("{good}\n"), &"0".repeat(64)] {
            std::fs::write(&mac_path, bad).unwrap();
            assert_miss(&d, &cache);
        }
        std::fs::remove_file(&mac_path).unwrap();
        assert_miss(&d, &cache);
        std::fs::write(&mac_path, &good).unwrap();
        assert!(restore_into(&d, &cache).1.is_some());
    }

    #[test]
    fn an_added_removed_or_renamed_file_is_a_miss() {
        let (d, _, cache) = stored();
        let entry = cache.join("k1");
        std::fs::write(entry.join("extra.txt"), "x").unwrap();
        assert_miss(&d, &cache);
        std::fs::remove_file(entry.join("extra.txt")).unwrap();
        std::fs::rename(entry.join("output.txt"), entry.join("output2.txt")).unwrap();
        assert_miss(&d, &cache);
        std::fs::remove_file(entry.join("output2.txt")).unwrap();
        assert_miss(&d, &cache);
    }

    #[test]
    fn an_entry_made_with_another_secret_or_for_another_key_is_a_miss() {
        let (d, run, cache) = stored();
        store(&cache, "k1", &run, &d.path().join("run"), &[8; 32]).unwrap();
        assert_miss(&d, &cache);
        // An entry moved from another key.
        std::fs::remove_dir_all(cache.join("k1")).unwrap();
        store(&cache, "k0", &run, &d.path().join("run"), &SECRET).unwrap();
        std::fs::rename(cache.join("k0"), cache.join("k1")).unwrap();
        assert_miss(&d, &cache);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_in_an_entry_is_a_miss_and_is_never_stored() {
        let (d, run, cache) = stored();
        let secret_file = d.path().join("secret.txt");
        std::fs::write(&secret_file, "secret").unwrap();
        // Planted in the cache: even with a MAC made over everything else, a miss.
        let entry = cache.join("k1");
        std::os::unix::fs::symlink(&secret_file, entry.join("leak.txt")).unwrap();
        assert_miss(&d, &cache);
        std::fs::remove_file(entry.join("leak.txt")).unwrap();
        // A file swapped for a symlink to the same content: followed, the MAC would match.
        let same = d.path().join("same.txt");
        std::fs::write(&same, "hi").unwrap();
        std::os::unix::fs::symlink(&same, entry.join("output.txt.tmp")).unwrap();
        std::fs::remove_file(entry.join("output.txt")).unwrap();
        std::fs::rename(entry.join("output.txt.tmp"), entry.join("output.txt")).unwrap();
        assert_miss(&d, &cache);
        // A MAC file that is a symlink to a right MAC.
        std::fs::remove_dir_all(&entry).unwrap();
        store(&cache, "k1", &run, &d.path().join("run"), &SECRET).unwrap();
        std::fs::rename(entry.join(MAC_FILE), d.path().join("mac")).unwrap();
        std::os::unix::fs::symlink(d.path().join("mac"), entry.join(MAC_FILE)).unwrap();
        assert_miss(&d, &cache);
        // A case-run holding a symlink is refused.
        std::os::unix::fs::symlink(&secret_file, run.join("link")).unwrap();
        let e = store(&cache, "k2", &run, &d.path().join("run"), &SECRET).unwrap_err();
        assert!(e.to_string().contains("symlink"), "{e}");
        assert!(!cache.join("k2").exists());
        let mut left: Vec<_> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(
            left,
            ["k1", crate::record::files::LISTINGS],
            "no temporary folder is left"
        );
    }

    #[test]
    fn store_errors_are_returned() {
        let d = tempfile::tempdir().unwrap();
        // The cache folder cannot be made: a file is where it should be.
        std::fs::write(d.path().join("cache"), "").unwrap();
        let run = d.path().join("run");
        std::fs::create_dir_all(&run).unwrap();
        assert!(store(&d.path().join("cache"), "k1", &run, &run, &SECRET).is_err());
    }
}
