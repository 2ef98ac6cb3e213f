//! Checks on the case's output text: clauditor's L1 types and Skillet's text checks.

use serde_json::Value;

use super::matching::{self, count_check, excerpt, find};
use super::{Finding, finding, ignore_case, int_of, str_of};
use crate::assert::view::CaseRunView;

/// clauditor's URL pattern (also its `url` format).
pub const URL_PATTERN: &str = r#"https?://[^\s\)"'>]+"#;
/// clauditor's numbered-entry pattern: `**1. Name**`.
pub const ENTRY_PATTERN: &str = r"\*\*\d+\.\s+";

/// `contains` (`wanted`) and `not_contains`: whether `needle` is in the output, case-sensitive
/// unless `ignore_case`; the place found as evidence.
pub fn contains(config: &Value, view: &CaseRunView, wanted: bool) -> Result<Finding, String> {
    let out = view.output.as_str();
    let needle = str_of(config, "needle")?;
    let at = find(out, needle, ignore_case(config));
    let found = at.map(|i| excerpt(out, i, (i + needle.len()).min(out.len())));
    let message = match (&found, wanted) {
        (Some(_), true) => format!("the output contains {needle:?}"),
        (None, true) => format!(
            "{needle:?} is not in the output ({} characters)",
            out.chars().count()
        ),
        (Some(_), false) => format!("the output contains {needle:?}, which it must not"),
        (None, false) => format!("{needle:?} is not in the output"),
    };
    finding(wanted == found.is_some(), message, found)
}

/// `regex`: `pattern` matches somewhere in the output, with Python's `$`.
pub fn regex(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let out = view.output.as_str();
    let pattern = str_of(config, "pattern")?;
    let re = matching::regex(pattern)?;
    // Python's `$` also matches just before a final newline; Rust's does not.
    let m = match re.find(out).map_err(|e| e.to_string())? {
        Some(m) => Some(m),
        None => match out.strip_suffix('\n') {
            Some(trimmed) => re.find(trimmed).map_err(|e| e.to_string())?,
            None => None,
        },
    };
    match m {
        Some(m) => finding(
            true,
            format!("/{pattern}/ matches"),
            Some(excerpt(out, m.start(), m.end())),
        ),
        None => finding(
            false,
            format!("/{pattern}/ matches nowhere in the output"),
            None,
        ),
    }
}

/// `min_count`: `pattern` matches at least `count` times.
pub fn min_count(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    count_check(
        &view.output,
        str_of(config, "pattern")?,
        int_of(config, "count")?,
        "matches",
    )
}

/// `min_length` (`at_least`) and `max_length`: the output's length in characters against
/// `length`.
pub fn length(config: &Value, view: &CaseRunView, at_least: bool) -> Result<Finding, String> {
    let wanted = int_of(config, "length")?;
    let n = view.output.chars().count() as i64;
    let passed = if at_least { n >= wanted } else { n <= wanted };
    let bound = if at_least { "at least" } else { "at most" };
    finding(
        passed,
        format!("the output is {n} characters, {bound} {wanted} wanted"),
        None,
    )
}

/// `has_urls`: at least `count` URLs (clauditor's pattern; duplicates count).
pub fn has_urls(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    count_check(&view.output, URL_PATTERN, int_of(config, "count")?, "URLs")
}

/// `has_entries`: at least `count` numbered entries (`**1. Name**`).
pub fn has_entries(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    count_check(
        &view.output,
        ENTRY_PATTERN,
        int_of(config, "count")?,
        "numbered entries",
    )
}

/// `starts_with`: the output begins with `prefix` (no whitespace stripped); its head as
/// evidence.
pub fn starts_with(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let out = view.output.as_str();
    let prefix = str_of(config, "prefix")?;
    let passed = if ignore_case(config) {
        out.to_lowercase().starts_with(&prefix.to_lowercase())
    } else {
        out.starts_with(prefix)
    };
    let head: String = out.chars().take(prefix.chars().count().max(20)).collect();
    finding(
        passed,
        format!("the output starts with {head:?}"),
        Some(head),
    )
}

/// `ends_with`: the output, trailing whitespace ignored, ends with `suffix`; its tail as
/// evidence.
pub fn ends_with(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let suffix = str_of(config, "suffix")?;
    let trimmed = view.output.trim_end();
    let passed = if ignore_case(config) {
        trimmed.to_lowercase().ends_with(&suffix.to_lowercase())
    } else {
        trimmed.ends_with(suffix)
    };
    let n = trimmed.chars().count();
    let tail: String = trimmed
        .chars()
        .skip(n.saturating_sub(suffix.chars().count().max(20)))
        .collect();
    finding(passed, format!("the output ends with {tail:?}"), Some(tail))
}
