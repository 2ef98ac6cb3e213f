//! A fixed responder's body filled in for one call, as Claude Code fills it: `{{input.a.b}}`
//! is the call's field (a string as written, anything else as JSON, nothing when missing);
//! `{{file:path}}` is a file below the mock's folder, `{input.a}` in its path filled with a
//! plain file-name segment.

use std::path::{Component, Path};

use serde_json::Value;

/// The most of a file `{{file:…}}` reads.
const MAX_FILE: u64 = 1 << 20;

/// The body with its placeholders filled; `Err` says which one could not be.
pub fn fill(body: &str, input: &Value, base_dir: &Path) -> Result<String, String> {
    let re = regress::Regex::new(
        r"\{\{\s*(input\.[A-Za-z0-9_.-]+|file:(?:[^{}]|\{input\.[A-Za-z0-9_.-]+\})+?)\s*\}\}",
    )
    .expect("a fixed pattern");
    let mut out = String::new();
    let mut last = 0;
    for m in re.find_iter(body) {
        out.push_str(&body[last..m.start()]);
        last = m.end();
        let Some(inner) = m.group(1).map(|g| &body[g]) else {
            continue;
        };
        match inner.strip_prefix("input.") {
            Some(path) => out.push_str(&field_text(input, path)),
            None => out.push_str(&file(inner["file:".len()..].trim(), input, base_dir)?),
        }
    }
    out.push_str(&body[last..]);
    Ok(out)
}

fn field_text(input: &Value, path: &str) -> String {
    match field(input, path) {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

fn field<'a>(input: &'a Value, path: &str) -> Option<&'a Value> {
    let mut at = input;
    for seg in path.split('.') {
        at = match at {
            Value::Object(o) => o.get(seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// `{{file:…}}`: the path filled, kept below `base_dir`, read.
fn file(spec: &str, input: &Value, base_dir: &Path) -> Result<String, String> {
    let re = regress::Regex::new(r"\{input\.([A-Za-z0-9_.-]+)\}").expect("a fixed pattern");
    let mut rel = String::new();
    let mut last = 0;
    for m in re.find_iter(spec) {
        rel.push_str(&spec[last..m.start()]);
        last = m.end();
        let key = m.group(1).map(|g| &spec[g]).unwrap_or_default();
        let v = field(input, key);
        let text = match v {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
        };
        if !plain_segment(&text) {
            let shown = v.map_or("(missing)".to_string(), Value::to_string);
            return Err(format!(
                "{{input.{key}}} = {shown} is not a plain file-name segment"
            ));
        }
        rel.push_str(&text);
    }
    rel.push_str(&spec[last..]);
    let inside = Path::new(&rel)
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if rel.is_empty() || !inside {
        return Err(format!(
            "{{{{file:{spec}}}}} names a path outside the mock's directory"
        ));
    }
    let path = base_dir.join(&rel);
    let read = || -> std::io::Result<String> {
        let canon = path.canonicalize()?;
        if !canon.starts_with(base_dir.canonicalize()?) {
            return Err(std::io::Error::other(
                "it leads outside the mock's directory",
            ));
        }
        let meta = std::fs::metadata(&canon)?;
        if !meta.is_file() || meta.len() > MAX_FILE {
            return Err(std::io::Error::other(format!(
                "not a regular file of at most {MAX_FILE} bytes"
            )));
        }
        Ok(String::from_utf8_lossy(&std::fs::read(&canon)?).into_owned())
    };
    read().map_err(|e| format!("{{{{file:{spec}}}}}: {e}"))
}

/// A file name with no folder in it: letters, digits, `.`, `_`, `-`; never `.` or `..`.
fn plain_segment(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_and_files_fill_in() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("app.txt"), "APP").unwrap();
        let input = json!({"name": "demo", "opts": {"n": 2}, "kind": "app"});
        let got = fill(
            "Created {{input.name}} ({{ input.opts }}) {{input.none}}|{{file:{input.kind}.txt}}",
            &input,
            t.path(),
        )
        .unwrap();
        assert_eq!(got, "Created demo ({\"n\":2}) |APP");
    }

    #[test]
    fn a_file_outside_the_mock_or_a_path_in_a_field_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let why = fill("{{file:../secret}}", &json!({}), t.path()).unwrap_err();
        assert!(why.contains("outside the mock's directory"), "{why}");
        let why = fill(
            "{{file:{input.p}}}",
            &json!({"p": "../../etc/passwd"}),
            t.path(),
        )
        .unwrap_err();
        assert!(why.contains("is not a plain file-name segment"), "{why}");
    }
}
