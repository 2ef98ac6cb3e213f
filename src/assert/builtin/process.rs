//! Checks on the agent process itself: its exit code, standard output and standard error.

use serde_json::Value;

use super::matching::{excerpt, find};
use super::{Finding, finding, ignore_case, int_of, str_of};
use crate::assert::view::CaseRunView;

/// `exit_code`: the process exited with `code`.
pub fn exit_code(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let code = int_of(config, "code")?;
    let got = view.exit_code;
    finding(
        got == Some(code as i32),
        format!(
            "exit code {}, {code} wanted",
            got.map(|c| c.to_string()).unwrap_or_else(|| "none".into())
        ),
        None,
    )
}

/// `stdout_equals`: standard output equals `text`, trailing newlines ignored on both.
pub fn stdout_equals(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let text = str_of(config, "text")?;
    let got = view.stdout.trim_end_matches(['\n', '\r']);
    finding(
        got == text.trim_end_matches(['\n', '\r']),
        "standard output compared".to_string(),
        Some(excerpt(got, 0, 0)),
    )
}

/// `stderr_contains`: standard error contains `needle` (with `ignore_case`, in any case, as
/// its `NEEDLE` keys allow).
pub fn stderr_contains(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let needle = str_of(config, "needle")?;
    let at = find(&view.stderr, needle, ignore_case(config));
    finding(
        at.is_some(),
        format!(
            "{needle:?} is {}in standard error",
            if at.is_some() { "" } else { "not " }
        ),
        at.map(|i| excerpt(&view.stderr, i, i + needle.len())),
    )
}

/// `stdio_not_contains`: neither standard output nor standard error contains `needle` (UAAPS
/// tests' `not-contains`, which looks at the combined output).
pub fn stdio_not_contains(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let needle = str_of(config, "needle")?;
    let ic = ignore_case(config);
    let hit = [
        ("standard output", view.stdout.as_str()),
        ("standard error", view.stderr.as_str()),
    ]
    .into_iter()
    .find_map(|(name, text)| find(text, needle, ic).map(|i| (name, text, i)));
    match hit {
        Some((name, text, i)) => finding(
            false,
            format!("{name} contains {needle:?}, which it must not"),
            Some(excerpt(text, i, i + needle.len())),
        ),
        None => finding(
            true,
            format!("{needle:?} is in neither standard output nor standard error"),
            None,
        ),
    }
}

/// `stdout_json`: standard output (surrounding whitespace aside) is one JSON value that holds
/// `json`: every key of an object is there with a matching value (more keys may be), a list
/// has as many items and each matches, numbers compare by value, anything else is equal.
pub fn stdout_json(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let want = config
        .get("json")
        .ok_or_else(|| "the check has no `json`".to_string())?;
    let text = view.stdout.trim();
    let got: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return finding(
                false,
                format!("standard output is not JSON: {e}"),
                Some(excerpt(text, 0, 0)),
            );
        }
    };
    match partial_match(want, &got, "") {
        Ok(()) => finding(true, "standard output holds the JSON wanted", None),
        Err(why) => finding(false, why, Some(excerpt(text, 0, 0))),
    }
}

/// Whether `got` holds `want` (see [`stdout_json`]); the error says where they first differ.
pub fn partial_match(want: &Value, got: &Value, at: &str) -> Result<(), String> {
    let place = if at.is_empty() { "the top" } else { at };
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => w.iter().try_for_each(|(k, wv)| {
            let here = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            match g.get(k) {
                Some(gv) => partial_match(wv, gv, &here),
                None => Err(format!(
                    "`{here}` is missing from the JSON on standard output"
                )),
            }
        }),
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => w
            .iter()
            .zip(g)
            .enumerate()
            .try_for_each(|(i, (wv, gv))| partial_match(wv, gv, &format!("{at}[{i}]"))),
        (Value::Array(w), Value::Array(g)) => Err(format!(
            "at {place}: a list of {} items, {} wanted",
            g.len(),
            w.len()
        )),
        (Value::Number(w), Value::Number(g)) if w.as_f64() == g.as_f64() => Ok(()),
        (w, g) if w == g => Ok(()),
        (w, g) => Err(format!("at {place}: {g}, {w} wanted")),
    }
}
