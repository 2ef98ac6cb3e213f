//! The plugin a suite belongs to, found as Claude Code finds it: walking up from a folder to
//! the first one with a manifest (`plugin.json`, or `.claude-plugin/plugin.json`), or else the
//! nearest skill folder (a `SKILL.md` with no case file beside it); and its eval folder,
//! `evals/` unless the manifest's `experimental.evals` names another.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// How far up Claude Code looks for a plugin.
const MAX_UP: usize = 32;

/// The folder names case discovery never enters.
pub const SKIPPED: &[&str] = &["node_modules", ".claude", "results", "mocks"];

/// Whether a folder is skipped by the walk (`.git` in any case, and [`SKIPPED`]).
pub fn skipped(name: &str) -> bool {
    SKIPPED.contains(&name) || name.eq_ignore_ascii_case(".git")
}

/// Whether `dir` holds a plugin manifest.
pub fn has_manifest(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join("plugin.json")).is_ok()
        || dir.join(".claude-plugin").join("plugin.json").exists()
}

/// Whether `dir` is a skill folder that is not itself a case.
fn is_skill_folder(dir: &Path) -> bool {
    dir.join("SKILL.md").is_file()
        && !dir.join("case.yaml").exists()
        && !dir.join("prompt.md").exists()
}

/// The plugin above `start` (inclusive), up to `bound` (inclusive): the nearest manifest
/// folder, else the nearest skill folder met on the way.
pub fn plugin_above(start: &Path, bound: &Path) -> Option<PathBuf> {
    let mut skill = None;
    for dir in start.ancestors().take(MAX_UP) {
        if has_manifest(dir) {
            return Some(dir.to_path_buf());
        }
        if skill.is_none() && is_skill_folder(dir) {
            skill = Some(dir.to_path_buf());
        }
        if dir == bound {
            break;
        }
    }
    skill
}

/// A plugin's manifest, as the first of `.claude-plugin/plugin.json` and `plugin.json` that
/// exists; `None` when neither does or it is not JSON.
pub fn manifest(root: &Path) -> Option<Value> {
    [
        root.join(".claude-plugin/plugin.json"),
        root.join("plugin.json"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .and_then(|p| std::fs::read_to_string(p).ok())
    .and_then(|t| serde_json::from_str(&t).ok())
}

/// The plugin's name and version as Claude Code shows them: from `.claude-plugin/plugin.json`
/// only, else the folder's name and no version.
pub fn identity(root: &Path) -> (String, Option<String>) {
    let folder = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let read = std::fs::read_to_string(root.join(".claude-plugin/plugin.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    let field = |k: &str| {
        read.as_ref()
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    (field("name").unwrap_or(folder), field("version"))
}

/// A case's own `plugins:` entries, resolved against its folder, each a plugin to load: it
/// must exist and lie under the suite's `root`. `Err` is Claude Code's refusal.
pub fn of_case(
    dir: &Path,
    root: &Path,
    case: &str,
    entries: &[String],
) -> Result<Vec<crate::suite::Package>, String> {
    let mut out = Vec::new();
    for entry in entries {
        let Ok(at) = dir.join(entry).canonicalize() else {
            return Err(format!(
                "case \"{case}\": plugins entry \"{entry}\" does not exist"
            ));
        };
        let top = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        if !at.starts_with(&top) {
            return Err(format!(
                "case \"{case}\": plugins entry \"{entry}\" resolves to {}, outside the containment root {} (the enclosing plugin for a target inside one you control, else the directory you ran 'claude plugin eval' against). Only plugins under it can be loaded from case.yaml.",
                at.display(),
                top.display()
            ));
        }
        let (name, version) = identity(&at);
        out.push(crate::suite::Package {
            name: Some(name),
            version,
            root: at,
            parts: Default::default(),
            claude_plugin: true,
        });
    }
    Ok(out)
}

/// The eval folder the manifest names (`experimental.evals`, a string or the first of a
/// list), when it is a plain relative folder; `None` for the default, `evals` found anywhere.
pub fn configured_eval_dir(root: &Path) -> Option<PathBuf> {
    let m = manifest(root)?;
    let v = m.get("experimental")?.get("evals")?;
    let s = match v {
        Value::String(s) => s.trim().to_string(),
        Value::Array(a) => a.first()?.as_str()?.trim().to_string(),
        _ => return None,
    };
    plain_relative(&s).then(|| PathBuf::from(s))
}

/// A path Claude Code accepts as an eval folder: relative, plain folder names, no `..`.
fn plain_relative(s: &str) -> bool {
    let segs: Vec<&str> = s
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    !s.is_empty()
        && !s.starts_with('/')
        && !segs.is_empty()
        && segs.len() <= 8
        && segs.iter().all(|seg| {
            let mut c = seg.chars();
            c.next().is_some_and(|f| f.is_ascii_alphanumeric())
                && c.all(|ch| ch.is_ascii_alphanumeric() || "._@+-".contains(ch))
                && !skipped(seg)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_beats_a_skill_folder_further_up() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("p");
        std::fs::create_dir_all(p.join(".claude-plugin")).unwrap();
        std::fs::write(
            p.join(".claude-plugin/plugin.json"),
            r#"{"name":"x","version":"1"}"#,
        )
        .unwrap();
        std::fs::create_dir_all(p.join("evals/c")).unwrap();
        assert_eq!(plugin_above(&p.join("evals/c"), t.path()), Some(p.clone()));
        assert_eq!(identity(&p), ("x".to_string(), Some("1".to_string())));
        let s = t.path().join("skill");
        std::fs::create_dir_all(s.join("evals/c")).unwrap();
        std::fs::write(s.join("SKILL.md"), "---\nname: s\n---\n").unwrap();
        assert_eq!(plugin_above(&s.join("evals/c"), t.path()), Some(s.clone()));
        assert_eq!(identity(&s), ("skill".to_string(), None));
    }

    #[test]
    fn eval_dir_from_the_manifest() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(
            t.path().join("plugin.json"),
            r#"{"experimental":{"evals":["quality/evals","x"]}}"#,
        )
        .unwrap();
        assert_eq!(
            configured_eval_dir(t.path()),
            Some(PathBuf::from("quality/evals"))
        );
        std::fs::write(
            t.path().join("plugin.json"),
            r#"{"experimental":{"evals":"../up"}}"#,
        )
        .unwrap();
        assert_eq!(configured_eval_dir(t.path()), None);
    }
}
