//! File names as the run folder records them. A name on Linux is any bytes but `/` and NUL,
//! and an agent makes whatever it likes; JSON holds text. One rule, one-to-one, so every name
//! is recorded and read back as the same name:
//!
//! - A path that is valid UTF-8 and does not start with `"` is recorded as it is.
//! - Any other is recorded quoted: `"`, its bytes, `"`. Inside the quotes a byte that is not
//!   part of valid UTF-8 is written `\xHH` (two lowercase hex digits), a backslash `\\`, and
//!   everything else as it is. So `bad-` followed by the bytes 0xFF 0xFE is recorded as
//!   `"bad-\xff\xfe"` (with the quotes), and a name that starts with a quote, `"a`, as
//!   `""a"` (a quote inside the quotes is kept as it is).
//!
//! Reading back: a text that starts and ends with `"` (two characters at least) is a quoted
//! path, its escapes undone; any other text is the path itself. (A text starting with `"` that
//! is not a well-formed quoted path, which this rule never writes, is read as it is.)

use std::borrow::Cow;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// `path` as recorded (see the module's rule).
pub fn encode(path: &Path) -> Cow<'_, str> {
    let bytes = path.as_os_str().as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.starts_with('"') => Cow::Borrowed(text),
        _ => Cow::Owned(quoted(bytes)),
    }
}

/// `bytes` quoted and escaped.
fn quoted(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    while !bytes.is_empty() {
        let (valid, rest) = match std::str::from_utf8(bytes) {
            Ok(all) => (all, &[][..]),
            Err(e) => {
                let (ok, rest) = bytes.split_at(e.valid_up_to());
                // `valid_up_to` is where valid UTF-8 ends: the prefix is text.
                (std::str::from_utf8(ok).unwrap_or_default(), rest)
            }
        };
        out.push_str(&valid.replace('\\', "\\\\"));
        if let Some((bad, after)) = rest.split_first() {
            out.push_str(&format!("\\x{bad:02x}"));
            bytes = after;
        } else {
            bytes = rest;
        }
    }
    out.push('"');
    out
}

/// The path a recorded text stands for (see the module's rule).
pub fn decode(text: &str) -> PathBuf {
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .filter(|_| text.len() >= 2);
    match inner.and_then(unescape) {
        Some(bytes) => PathBuf::from(OsString::from_vec(bytes)),
        None => PathBuf::from(text),
    }
}

/// The bytes a quoted path's inside stands for, or `None` when an escape is malformed.
fn unescape(inner: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(inner.len());
    let mut rest = inner.as_bytes();
    while let Some((&b, after)) = rest.split_first() {
        rest = after;
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match rest {
            [b'\\', after @ ..] => {
                out.push(b'\\');
                rest = after;
            }
            [b'x', h, l, after @ ..] => {
                let hex = [*h, *l];
                let hex = std::str::from_utf8(&hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                rest = after;
            }
            _ => return None,
        }
    }
    Some(out)
}

/// `#[serde(with = "path_text")]` for a `PathBuf` field.
pub fn serialize<S: serde::Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&encode(path))
}

/// `#[serde(with = "path_text")]` for a `PathBuf` field.
pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    let text: Cow<'de, str> = serde::Deserialize::deserialize(d)?;
    Ok(decode(&text))
}

/// `#[serde(with = "path_text::many")]` for a list (`Vec`, `BTreeSet`) of paths.
pub mod many {
    use std::path::PathBuf;

    pub fn serialize<'a, S, I>(paths: I, s: S) -> Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
        I: IntoIterator<Item = &'a PathBuf>,
    {
        s.collect_seq(paths.into_iter().map(|p| super::encode(p)))
    }

    pub fn deserialize<'de, D, C>(d: D) -> Result<C, D::Error>
    where
        D: serde::Deserializer<'de>,
        C: FromIterator<PathBuf>,
    {
        let texts: Vec<String> = serde::Deserialize::deserialize(d)?;
        Ok(texts.iter().map(|t| super::decode(t)).collect())
    }
}

/// `#[serde(with = "path_text::option")]` for an `Option<PathBuf>` field.
pub mod option {
    use std::path::PathBuf;

    pub fn serialize<S: serde::Serializer>(
        path: &Option<PathBuf>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match path {
            Some(p) => s.serialize_some(&super::encode(p)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Option<PathBuf>, D::Error> {
        let text: Option<String> = serde::Deserialize::deserialize(d)?;
        Ok(text.map(|t| super::decode(&t)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(bytes: &[u8]) -> PathBuf {
        PathBuf::from(OsString::from_vec(bytes.to_vec()))
    }

    #[test]
    fn utf8_names_are_recorded_as_they_are_and_others_quoted() {
        assert_eq!(encode(Path::new("a/b c.txt")), "a/b c.txt");
        assert_eq!(encode(Path::new("back\\slash")), "back\\slash");
        assert_eq!(encode(&raw(b"bad-\xff\xfe")), "\"bad-\\xff\\xfe\"");
        assert_eq!(encode(&raw(b"d/\\\x80")), "\"d/\\\\\\x80\"");
        assert_eq!(encode(Path::new("\"q\"")), "\"\"q\"\"");
        assert_eq!(encode(Path::new("é\u{1b}[2J")), "é\u{1b}[2J");
    }

    #[test]
    fn every_name_reads_back_as_itself() {
        let names: [&[u8]; 10] = [
            b"plain",
            b"bad-\xff\xfe",
            b"\"",
            b"\"\"",
            b"\"x\\xff\"",
            b"a\\xff",
            b"\\",
            b"\xc3",
            b"\xc3\xa9\xe2\x82",
            b"dir/\x01\xfe/\"end\"",
        ];
        for n in names {
            let p = raw(n);
            let text = encode(&p);
            assert_eq!(decode(&text), p, "{text}");
            let json = serde_json::to_string(&text).unwrap();
            let back: String = serde_json::from_str(&json).unwrap();
            assert_eq!(decode(&back), p);
        }
    }

    #[test]
    fn any_text_reads_as_some_path_without_panicking() {
        for t in [
            "\"",
            "\"\\",
            "\"\\x\"",
            "\"\\xzz\"",
            "\"\\q\"",
            "\"é\\x",
            "",
        ] {
            let _ = decode(t);
        }
        assert_eq!(decode("\"\\xzz\""), PathBuf::from("\"\\xzz\""));
    }

    #[test]
    fn serde_fields_use_the_rule() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct R {
            #[serde(with = "super")]
            one: PathBuf,
            #[serde(with = "super::many")]
            all: Vec<PathBuf>,
        }
        let r = R {
            one: raw(b"x\xff"),
            all: vec![raw(b"ok"), raw(b"\xfe")],
        };
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json, r#"{"one":"\"x\\xff\"","all":["ok","\"\\xfe\""]}"#);
        assert_eq!(serde_json::from_str::<R>(&json).unwrap(), r);
    }
}
