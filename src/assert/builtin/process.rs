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
