//! Secrets out of everything assay writes.
//!
//! An agent can print its API key, echo a `--pass-env` variable, cat its login file, or write
//! any of them into a file: whatever it does, the values of every vendor's key variables, of
//! every variable passed with `--pass-env` or `pass_env` (or named by a harness as its login),
//! the tokens in the login files assay knows (`~/.claude/.credentials.json`,
//! `~/.codex/auth.json`, `~/.gemini/oauth_creds.json`: every string under a key naming a
//! token, key, secret or password, and every long word), and the suite's and the project's
//! `env` are replaced by `[redacted:NAME]` in the case-run's folder (and so in the reports and
//! the cache made from it) and on the terminal. A secret of 16 bytes or more is also found
//! base64'd, in the standard and the URL-safe alphabet, wherever it sits in the encoded text
//! (the characters made of its bytes alone, at each of the three offsets), and across line
//! breaks (`base64` wraps at 76 columns). Other transforms (hex, split in two, reversed) are
//! not found: what keeps a login from an agent is that it is never given one not its own.
//! Short values are left alone, since replacing every `1` or `true` would wreck the text
//! around them: a key or `--pass-env` value needs 4 characters, a login file's token and an
//! `env` value 8 (a secret is longer; a flag is not).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine as _;
use serde_json::Value;

use super::RunOptions;
use crate::config::Config;
use crate::host::Login;
use crate::suite::Suite;

/// The shortest value of a key or `--pass-env` variable that is redacted.
pub const MIN_SECRET: usize = 4;
/// The shortest `env` value that is redacted.
pub const MIN_ENV_VALUE: usize = 8;
/// The shortest token of a login file that is redacted.
pub const MIN_FILE_SECRET: usize = 8;
/// The shortest secret (in bytes) also found base64'd and across line breaks.
pub const MIN_ENCODED: usize = 16;
/// The most of a login file read for its tokens.
const MAX_LOGIN_FILE: u64 = 1 << 20;

/// Finds secret values and replaces them with their names.
#[derive(Debug, Default)]
pub struct Redactor {
    finder: Option<AhoCorasick>,
    replacements: Vec<String>,
    /// The long patterns, found in text with its line breaks left out.
    across_lines: Option<AhoCorasick>,
    across_replacements: Vec<String>,
}

/// A finder of `pairs` (pattern, name), longest first, and the replacement of each.
fn finder(pairs: &[(String, String)]) -> (Option<AhoCorasick>, Vec<String>) {
    if pairs.is_empty() {
        return (None, Vec::new());
    }
    let finder = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(pairs.iter().map(|(v, _)| v.as_bytes()))
        .ok();
    let names = pairs
        .iter()
        .map(|(_, n)| format!("[redacted:{n}]"))
        .collect();
    (finder, names)
}

/// Sorts `(pattern, name)` pairs longest first (so a secret is never half-replaced by a
/// shorter one that it contains), one name per pattern.
fn longest_first(pairs: &mut Vec<(String, String)>) {
    pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.cmp(b)));
    pairs.dedup_by(|a, b| a.0 == b.0);
}

fn is_line_break(b: &u8) -> bool {
    matches!(b, b'\n' | b'\r')
}

impl Redactor {
    /// Redacts each `(name, value)`; values below the length given with them are skipped.
    /// A value of [`MIN_ENCODED`] bytes or more is also redacted base64'd, and across line
    /// breaks.
    pub fn new(secrets: impl IntoIterator<Item = (String, String, usize)>) -> Redactor {
        let mut pairs: Vec<(String, String)> = secrets
            .into_iter()
            .filter(|(_, v, min)| v.chars().count() >= *min && !v.trim().is_empty())
            .map(|(n, v, _)| (v, n))
            .collect();
        let encoded: Vec<(String, String)> = pairs
            .iter()
            .filter(|(v, _)| v.len() >= MIN_ENCODED)
            .flat_map(|(v, n)| base64_forms(v).into_iter().map(move |f| (f, n.clone())))
            .collect();
        pairs.extend(encoded);
        longest_first(&mut pairs);
        let mut long: Vec<(String, String)> = pairs
            .iter()
            .filter(|(v, _)| v.len() >= MIN_ENCODED)
            .map(|(v, n)| (v.replace(['\n', '\r'], ""), n.clone()))
            .collect();
        longest_first(&mut long);
        let (finder, replacements) = self::finder(&pairs);
        let (across_lines, across_replacements) = self::finder(&long);
        Redactor {
            finder,
            replacements,
            across_lines,
            across_replacements,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.finder.is_none()
    }

    pub fn text<'a>(&self, s: &'a str) -> Cow<'a, str> {
        match self.bytes(s.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(s),
            // Matches of whole UTF-8 patterns start and end on character boundaries.
            Cow::Owned(b) => Cow::Owned(
                String::from_utf8(b)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            ),
        }
    }

    /// The long secrets that a line break splits (`base64` wraps at 76 columns): found in
    /// `b` with its line breaks left out, each replaced with the line breaks it spanned kept.
    /// None when there is none.
    fn split_by_lines(&self, b: &[u8]) -> Option<Vec<u8>> {
        let finder = self.across_lines.as_ref()?;
        if !b.iter().any(is_line_break) {
            return None;
        }
        let (kept, at): (Vec<u8>, Vec<usize>) = b
            .iter()
            .enumerate()
            .filter(|(_, c)| !is_line_break(c))
            .map(|(i, c)| (*c, i))
            .unzip();
        let mut out = Vec::with_capacity(b.len());
        let mut last = 0;
        for m in finder.find_iter(&kept) {
            let (start, end) = (at[m.start()], at[m.end() - 1] + 1);
            out.extend_from_slice(&b[last..start]);
            out.extend_from_slice(self.across_replacements[m.pattern().as_usize()].as_bytes());
            out.extend(b[start..end].iter().filter(|c| is_line_break(c)));
            last = end;
        }
        if last == 0 {
            return None;
        }
        out.extend_from_slice(&b[last..]);
        Some(out)
    }

    /// [`Redactor::text`] in place.
    pub fn string(&self, s: &mut String) {
        if let Cow::Owned(r) = self.text(s) {
            *s = r;
        }
    }

    pub fn bytes<'a>(&self, b: &'a [u8]) -> Cow<'a, [u8]> {
        let once = match &self.finder {
            Some(f) if f.is_match(b) => Cow::Owned(f.replace_all_bytes(b, &self.replacements)),
            _ => Cow::Borrowed(b),
        };
        match self.split_by_lines(&once) {
            Some(again) => Cow::Owned(again),
            None => once,
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
    /// JSON (its strings decoded, so no escape hides a secret), JSON Lines line by line,
    /// anything else as bytes. Untouched when it holds none.
    pub fn file(&self, path: &Path) -> std::io::Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        let bytes = std::fs::read(path)?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let out: Option<Vec<u8>> = if name.ends_with(".jsonl") {
            self.json_lines(&bytes)?
        } else if name.ends_with(".json")
            && let Ok(v) = serde_json::from_slice::<Value>(&bytes)
        {
            let mut redacted = v.clone();
            self.json(&mut redacted);
            match redacted == v {
                true => None,
                false => {
                    let mut out =
                        serde_json::to_vec_pretty(&redacted).map_err(std::io::Error::other)?;
                    out.push(b'\n');
                    Some(out)
                }
            }
        } else {
            match self.bytes(&bytes) {
                Cow::Owned(out) => Some(out),
                Cow::Borrowed(_) => None,
            }
        };
        match out {
            Some(out) => crate::record::write_atomic(path, &out),
            None => Ok(()),
        }
    }

    /// A JSON Lines file redacted line by line (a line that is no JSON as bytes); None when
    /// no line held a secret.
    fn json_lines(&self, bytes: &[u8]) -> std::io::Result<Option<Vec<u8>>> {
        let mut out = Vec::with_capacity(bytes.len());
        let mut changed = false;
        for line in bytes.split_inclusive(|b| *b == b'\n') {
            let (body, nl) = match line.strip_suffix(b"\n") {
                Some(b) => (b, &b"\n"[..]),
                None => (line, &b""[..]),
            };
            match serde_json::from_slice::<Value>(body) {
                Ok(v) => {
                    let mut redacted = v.clone();
                    self.json(&mut redacted);
                    if redacted == v {
                        out.extend_from_slice(body);
                    } else {
                        changed = true;
                        out.extend(serde_json::to_vec(&redacted).map_err(std::io::Error::other)?);
                    }
                }
                Err(_) => {
                    let r = self.bytes(body);
                    changed |= matches!(r, Cow::Owned(_));
                    out.extend_from_slice(&r);
                }
            }
            out.extend_from_slice(nl);
        }
        Ok(changed.then_some(out))
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

/// How `secret` shows in base64 text wherever it sits in what was encoded: for each of the
/// three offsets, the characters made of its bytes alone (those shared with its neighbours
/// differ with them), in the standard and the URL-safe alphabet.
pub fn base64_forms(secret: &str) -> Vec<String> {
    let mut forms = Vec::with_capacity(6);
    for offset in 0..3usize {
        let mut bytes = vec![0u8; offset];
        bytes.extend_from_slice(secret.as_bytes());
        let encoded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes);
        let (first, end) = (8 * offset, 8 * bytes.len());
        let own: String = encoded
            .chars()
            .enumerate()
            .filter(|(i, _)| 6 * i >= first && 6 * i + 6 <= end)
            .map(|(_, c)| c)
            .collect();
        forms.push(own.replace('+', "-").replace('/', "_"));
        forms.push(own);
    }
    forms.sort();
    forms.dedup();
    forms
}

/// What is redacted from everything the run writes: the values of every vendor's key
/// variables, of every harness's login variables and of every passed-through variable, the
/// tokens of the user's login files (in `real_home`), and the suites' and projects' `env`.
pub(super) fn for_run(
    stage: &crate::workspace::StageOptions,
    opts: &RunOptions,
    suites: &[Suite],
    configs: &BTreeMap<PathBuf, Config>,
    logins: &[Login],
) -> Redactor {
    let (host_env, real_home) = (&stage.host_env, stage.real_home.as_deref());
    let secret_names: BTreeSet<&str> = crate::host::AUTH
        .iter()
        .copied()
        .filter(|n| is_key_name(n))
        .chain([crate::host::JUDGE_KEY])
        .chain(
            logins
                .iter()
                .flat_map(|l| l.keys.iter().map(String::as_str)),
        )
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
    if let Some(home) = real_home {
        secrets.extend(login_file_secrets(home));
    }
    Redactor::new(secrets)
}

/// A vendor's key variable or the judge's (an endpoint is no secret).
fn is_key_name(name: &str) -> bool {
    name == crate::host::JUDGE_KEY
        || (crate::host::AUTH.contains(&name) && !name.ends_with("_BASE_URL"))
}

/// What is redacted from what `assay grade` writes (the judge's unusable answers): the values
/// of every vendor's key variables in `host` (the judge's own among them) and the tokens of
/// the login files under `home`.
pub fn for_host(host: &[(String, String)], home: Option<&Path>) -> Redactor {
    let mut secrets: Vec<(String, String, usize)> = host
        .iter()
        .filter(|(k, _)| is_key_name(k))
        .map(|(k, v)| (k.clone(), v.clone(), MIN_SECRET))
        .collect();
    if let Some(home) = home {
        secrets.extend(login_file_secrets(home));
    }
    Redactor::new(secrets)
}

/// The tokens of the login files assay knows under `home`, each named by its file.
pub fn login_file_secrets(home: &Path) -> Vec<(String, String, usize)> {
    use std::io::Read;
    let mut secrets = Vec::new();
    for f in crate::host::LOGIN_FILES {
        let mut bytes = Vec::new();
        let read = std::fs::File::open(home.join(f))
            .and_then(|file| file.take(MAX_LOGIN_FILE).read_to_end(&mut bytes));
        if read.is_err() {
            continue;
        }
        let mut found = Vec::new();
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(v) => json_secrets(&v, false, &mut found),
            Err(_) => found.extend(
                String::from_utf8_lossy(&bytes)
                    .split_whitespace()
                    .filter(|w| w.len() >= MIN_ENCODED)
                    .map(str::to_string),
            ),
        }
        let name = format!("~/{f}");
        secrets.extend(
            found
                .into_iter()
                .map(|s| (name.clone(), s, MIN_FILE_SECRET)),
        );
    }
    secrets
}

/// The strings of a login file that are secrets: under a key that names one (`accessToken`,
/// `refresh_token`, `OPENAI_API_KEY`, `client_secret`), and any long word (an id, a token
/// under a key assay does not know).
fn json_secrets(v: &Value, named: bool, out: &mut Vec<String>) {
    match v {
        Value::String(s) if named || (s.len() >= 24 && !s.contains(char::is_whitespace)) => {
            out.push(s.clone());
        }
        Value::Array(a) => a.iter().for_each(|x| json_secrets(x, named, out)),
        Value::Object(o) => {
            for (k, x) in o {
                let k = k.to_ascii_lowercase();
                let secret = ["token", "key", "secret", "password", "credential"]
                    .iter()
                    .any(|w| k.contains(w));
                json_secrets(x, secret, out);
            }
        }
        _ => {}
    }
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

    #[test]
    fn a_long_secret_is_found_base64d_anywhere_and_across_line_breaks() {
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        let key = "sk-proj-0123456789abcdef-ghij";
        let r = Redactor::new([("OPENAI_API_KEY".into(), key.into(), MIN_SECRET)]);
        for prefix in ["", "a", "ab", "OPENAI_API_KEY=", "x\ny="] {
            let blob = format!("{prefix}{key} and more");
            for encoded in [STANDARD.encode(&blob), URL_SAFE_NO_PAD.encode(&blob)] {
                let out = r.text(&encoded);
                assert!(
                    out.contains("[redacted:OPENAI_API_KEY]"),
                    "{prefix:?}: {out}"
                );
            }
            // As `base64` prints it: wrapped at 76 columns (here 20, to split it often).
            let wrapped: String = STANDARD
                .encode(format!("{prefix}{key}").repeat(3))
                .as_bytes()
                .chunks(20)
                .map(|c| format!("{}\n", String::from_utf8_lossy(c)))
                .collect();
            let out = r.text(&wrapped);
            for form in base64_forms(key) {
                assert!(!out.replace('\n', "").contains(&form), "{prefix:?}: {out}");
            }
            assert_eq!(out.matches('\n').count(), wrapped.matches('\n').count());
        }
        let split = format!("{}\n{}", &key[..10], &key[10..]);
        assert_eq!(r.text(&split), "[redacted:OPENAI_API_KEY]\n");
    }

    #[test]
    fn a_login_file_s_tokens_are_secrets_and_its_settings_are_not() {
        let home = tempfile::tempdir().unwrap();
        let codex = home.path().join(".codex");
        std::fs::create_dir_all(&codex).unwrap();
        std::fs::write(
            codex.join("auth.json"),
            r#"{"OPENAI_API_KEY":null,"tokens":{"id_token":"eyJ.a.b-idtoken","refresh_token":"rt_0123456789","account_id":"0f1e2d3c-aaaa-4b5a-9687-a1b2c3d4e5f6"},"last_refresh":"2026-11-20T10:00:00Z","token_type":"Bearer"}"#,
        )
        .unwrap();
        let mut found: Vec<String> = login_file_secrets(home.path())
            .into_iter()
            .map(|(n, v, _)| {
                assert_eq!(n, "~/.codex/auth.json");
                v
            })
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                "0f1e2d3c-aaaa-4b5a-9687-a1b2c3d4e5f6",
                "Bearer",
                "eyJ.a.b-idtoken",
                "rt_0123456789",
            ]
        );
        let r = Redactor::new(login_file_secrets(home.path()));
        assert_eq!(
            r.text("Bearer rt_0123456789 at 2026-11-20T10:00:00Z"),
            "Bearer [redacted:~/.codex/auth.json] at 2026-11-20T10:00:00Z",
            "a value under a token key shorter than 8 is left"
        );
    }

    #[test]
    fn a_json_file_with_an_escaped_secret_is_redacted_and_one_without_is_untouched() {
        let r = redactor();
        let d = tempfile::tempdir().unwrap();
        let escaped = d.path().join("a.json");
        std::fs::write(&escaped, r#"{"k": "sk-live-\u0031234"}"#).unwrap();
        let clean = d.path().join("b.json");
        std::fs::write(&clean, r#"{"k":1}"#).unwrap();
        r.folder(d.path()).unwrap();
        let text = std::fs::read_to_string(&escaped).unwrap();
        assert!(text.contains("[redacted:ANTHROPIC_API_KEY]"), "{text}");
        assert_eq!(std::fs::read_to_string(&clean).unwrap(), r#"{"k":1}"#);
    }
}
