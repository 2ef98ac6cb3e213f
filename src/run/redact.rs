//! Secrets out of everything assay writes.
//!
//! An agent can print its API key, echo a `--pass-env` variable, or write either into a file:
//! whatever it does, the values of the harnesses' key variables, of every variable passed with
//! `--pass-env` or `pass_env`, and of the suite's and the project's `env` are replaced by
//! `[redacted:NAME]` in the case-run's folder (and so in the reports and the cache made from
//! it) and on the terminal. Only values themselves are found: a secret the agent transforms
//! (base64, split in two) is not. Short values are left alone, since replacing every `1` or
//! `true` would wreck the text around them: a key or `--pass-env` value needs 4 characters, an
//! `env` value 8 (a secret is longer; a flag is not).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;

use super::RunOptions;
use crate::config::Config;
use crate::spec::Suite;

/// The shortest value of a key or `--pass-env` variable that is redacted.
pub const MIN_SECRET: usize = 4;
/// The shortest `env` value that is redacted.
pub const MIN_ENV_VALUE: usize = 8;

/// Finds secret values and replaces them with their names.
#[derive(Debug, Default)]
pub struct Redactor {
    finder: Option<AhoCorasick>,
    replacements: Vec<String>,
}

impl Redactor {
    /// Redacts each `(name, value)`; values below the length given with them are skipped.
    pub fn new(secrets: impl IntoIterator<Item = (String, String, usize)>) -> Redactor {
        let mut pairs: Vec<(String, String)> = secrets
            .into_iter()
            .filter(|(_, v, min)| v.chars().count() >= *min && !v.trim().is_empty())
            .map(|(n, v, _)| (v, n))
            .collect();
        // One name per value; the longest values first, so a secret is never half-replaced
        // by a shorter one that it contains.
        pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.cmp(b)));
        pairs.dedup_by(|a, b| a.0 == b.0);
        if pairs.is_empty() {
            return Redactor::default();
        }
        let finder = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(pairs.iter().map(|(v, _)| v.as_bytes()))
            .ok();
        Redactor {
            finder,
            replacements: pairs
                .into_iter()
                .map(|(_, n)| format!("[redacted:{n}]"))
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.finder.is_none()
    }

    pub fn text<'a>(&self, s: &'a str) -> Cow<'a, str> {
        match &self.finder {
            Some(f) if f.is_match(s) => Cow::Owned(f.replace_all(s, &self.replacements)),
            _ => Cow::Borrowed(s),
        }
    }

    /// [`Redactor::text`] in place.
    pub fn string(&self, s: &mut String) {
        if let Cow::Owned(r) = self.text(s) {
            *s = r;
        }
    }

    pub fn bytes<'a>(&self, b: &'a [u8]) -> Cow<'a, [u8]> {
        match &self.finder {
            Some(f) if f.is_match(b) => Cow::Owned(f.replace_all_bytes(b, &self.replacements)),
            _ => Cow::Borrowed(b),
        }
    }

    /// Every string (and key) of a JSON value; numbers and booleans are left as they are, so
    /// the document stays valid.
    pub fn json(&self, v: &mut Value) {
        if self.is_empty() {
            return;
        }
        match v {
            Value::String(s) => self.string(s),
            Value::Array(a) => a.iter_mut().for_each(|x| self.json(x)),
            Value::Object(o) => {
                let old = std::mem::take(o);
                for (k, mut x) in old {
                    self.json(&mut x);
                    o.insert(self.text(&k).into_owned(), x);
                }
            }
            _ => {}
        }
    }

    /// Rewrites the file at `path` (a file of assay's own) with its secrets redacted: JSON as
    /// JSON, JSON Lines line by line, anything else as bytes. Untouched when it holds none.
    pub fn file(&self, path: &Path) -> std::io::Result<()> {
        let Some(finder) = &self.finder else {
            return Ok(());
        };
        let bytes = std::fs::read(path)?;
        if !finder.is_match(&bytes) {
            return Ok(());
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let out: Vec<u8> = if name.ends_with(".jsonl") {
            let mut out = Vec::with_capacity(bytes.len());
            for line in bytes.split_inclusive(|b| *b == b'\n') {
                let (body, nl) = match line.strip_suffix(b"\n") {
                    Some(b) => (b, &b"\n"[..]),
                    None => (line, &b""[..]),
                };
                match serde_json::from_slice::<Value>(body) {
                    Ok(mut v) => {
                        self.json(&mut v);
                        out.extend(serde_json::to_vec(&v).map_err(std::io::Error::other)?);
                    }
                    Err(_) => out.extend_from_slice(&self.bytes(body)),
                }
                out.extend_from_slice(nl);
            }
            out
        } else if name.ends_with(".json")
            && let Ok(mut v) = serde_json::from_slice::<Value>(&bytes)
        {
            self.json(&mut v);
            let mut out = serde_json::to_vec_pretty(&v).map_err(std::io::Error::other)?;
            out.push(b'\n');
            out
        } else {
            self.bytes(&bytes).into_owned()
        };
        crate::record::write_atomic(path, &out)
    }

    /// [`Redactor::file`] for every file under `dir`; symlinks are not followed. Iterative: a
    /// deep tree takes no stack.
    pub fn folder(&self, dir: &Path) -> std::io::Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        let mut folders = vec![dir.to_path_buf()];
        while let Some(dir) = folders.pop() {
            for entry in std::fs::read_dir(&dir)? {
                let entry = entry?;
                let t = entry.file_type()?;
                if t.is_dir() {
                    folders.push(entry.path());
                } else if t.is_file() {
                    self.file(&entry.path())?;
                }
            }
        }
        Ok(())
    }
}

/// What is redacted from everything the run writes: the values of the harnesses' key
/// variables and of every passed-through variable, and the suites' and projects' `env`.
pub(super) fn for_run(
    host_env: &[(String, String)],
    opts: &RunOptions,
    suites: &[Suite],
    configs: &BTreeMap<PathBuf, Config>,
) -> Redactor {
    let secret_names: BTreeSet<&str> = crate::workspace::env::AUTH
        .iter()
        .copied()
        .filter(|n| !n.ends_with("_BASE_URL"))
        .chain(opts.settings.pass_env.iter().map(String::as_str))
        .chain(
            configs
                .values()
                .flat_map(|c| c.run.pass_env.iter().map(String::as_str)),
        )
        .collect();
    let mut secrets: Vec<(String, String, usize)> = host_env
        .iter()
        .filter(|(k, _)| secret_names.contains(k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone(), MIN_SECRET))
        .collect();
    let envs = suites
        .iter()
        .flat_map(|s| {
            s.defaults.env.iter().chain(
                s.cases
                    .iter()
                    .filter_map(|c| c.command.as_ref())
                    .flat_map(|c| c.env.iter()),
            )
        })
        .chain(configs.values().flat_map(|c| c.run.env.iter()));
    secrets.extend(envs.map(|(k, v)| (k.clone(), v.clone(), MIN_ENV_VALUE)));
    Redactor::new(secrets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        Redactor::new([
            (
                "ANTHROPIC_API_KEY".into(),
                "sk-live-1234".into(),
                MIN_SECRET,
            ),
            ("TOKEN".into(), "sk-live-1234-longer".into(), MIN_SECRET),
            ("DEBUG".into(), "true".into(), MIN_ENV_VALUE),
            ("EMPTY".into(), "".into(), MIN_SECRET),
        ])
    }

    #[test]
    fn values_become_their_names_longest_first() {
        let r = redactor();
        assert_eq!(
            r.text("a sk-live-1234-longer b sk-live-1234 c true"),
            "a [redacted:TOKEN] b [redacted:ANTHROPIC_API_KEY] c true"
        );
        assert!(matches!(r.text("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_stays_json() {
        let r = redactor();
        let mut v = serde_json::json!({"ok": true, "said": ["sk-live-1234"], "sk-live-1234": 1});
        r.json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"ok": true, "said": ["[redacted:ANTHROPIC_API_KEY]"], "[redacted:ANTHROPIC_API_KEY]": 1})
        );
    }

    #[test]
    fn files_in_a_folder_are_rewritten_by_kind() {
        let r = redactor();
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("artifacts")).unwrap();
        std::fs::write(
            d.path().join("raw.jsonl"),
            "{\"t\":\"sk-live-1234\"}\nnot json sk-live-1234\n",
        )
        .unwrap();
        std::fs::write(d.path().join("artifacts/key.txt"), "sk-live-1234").unwrap();
        std::fs::write(
            d.path().join("x.json"),
            "{\"a\": \"sk-live-1234\", \"b\": true}",
        )
        .unwrap();
        r.folder(d.path()).unwrap();
        let all: String = ["raw.jsonl", "artifacts/key.txt", "x.json"]
            .iter()
            .map(|f| std::fs::read_to_string(d.path().join(f)).unwrap())
            .collect();
        assert!(!all.contains("sk-live-1234"), "{all}");
        assert_eq!(
            all.matches("[redacted:ANTHROPIC_API_KEY]").count(),
            4,
            "{all}"
        );
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(d.path().join("x.json")).unwrap())
                .unwrap();
        assert_eq!(v["b"], true);
    }
}
