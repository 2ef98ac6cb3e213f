//! The built-in deterministic checks, with the semantics of the formats they come from.
//!
//! clauditor's L1 types search the output (case-sensitive; lengths in code points; counts are
//! non-overlapping matches); Skillet's text checks ignore case, `ends_with` ignores trailing
//! whitespace, and tool checks match tool names exactly across every turn.
//!
//! Each type (or family of close types) is one function in a file per family; [`EVALUATORS`]
//! names them all, one entry per type of [`crate::suite::check_types::BUILTIN`].

mod budget;
mod files;
pub(crate) mod matching;
pub mod plugin_eval;
mod process;
mod text;
mod transcript;
pub mod urls;

use serde_json::Value;

use super::view::CaseRunView;
use crate::suite::Check;

use crate::record::grading::CheckOutcome;
pub use matching::excerpt;
pub use text::{ENTRY_PATTERN, URL_PATTERN};
pub use transcript::agent_blocked;

/// What a check type found, before negation: passed or not, why, and the evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub passed: bool,
    pub message: String,
    pub evidence: Option<String>,
    /// What the check wrote to stderr (plugins).
    pub log: Option<String>,
}

/// A built-in type's evaluation from its configuration and the case-run. `Err` means it could
/// not be evaluated.
pub type EvalFn = fn(&Value, &CaseRunView) -> Result<Finding, String>;

/// How a built-in type is evaluated.
#[derive(Clone, Copy)]
pub enum Evaluation {
    /// By a function of the check's configuration and the case-run alone.
    Pure(EvalFn),
    /// By [`urls::UrlsReachable`], which needs the run's URL policy.
    UrlsReachable,
    /// By `has_format` over the run's [`super::formats::Formats`] (built in and plugins').
    HasFormat,
}

use Evaluation::Pure;

/// Every built-in type's evaluation, by name: one entry per type in
/// [`crate::suite::check_types::BUILTIN`], in its order.
pub const EVALUATORS: &[(&str, Evaluation)] = &[
    ("contains", Pure(|c, v| text::contains(c, v, true))),
    ("not_contains", Pure(|c, v| text::contains(c, v, false))),
    ("regex", Pure(text::regex)),
    ("min_count", Pure(text::min_count)),
    ("min_length", Pure(|c, v| text::length(c, v, true))),
    ("max_length", Pure(|c, v| text::length(c, v, false))),
    ("has_urls", Pure(text::has_urls)),
    ("has_entries", Pure(text::has_entries)),
    ("urls_reachable", Evaluation::UrlsReachable),
    ("has_format", Evaluation::HasFormat),
    ("starts_with", Pure(text::starts_with)),
    ("ends_with", Pure(text::ends_with)),
    (
        "tool_called",
        Pure(|c, v| transcript::tool_called(c, v, true)),
    ),
    (
        "tool_not_called",
        Pure(|c, v| transcript::tool_called(c, v, false)),
    ),
    ("file_exists", Pure(files::file_exists)),
    ("file_created", Pure(files::file_created)),
    ("agent_blocked", Pure(transcript::blocked)),
    ("file_contains", Pure(files::file_contains)),
    ("file_matches", Pure(files::file_matches)),
    ("fixture_unchanged", Pure(files::fixture_unchanged)),
    ("skill_invoked", Pure(transcript::skill_invoked)),
    ("must_fire", Pure(|c, v| transcript::fires(c, v, true))),
    ("must_not_fire", Pure(|c, v| transcript::fires(c, v, false))),
    ("no_other_skill", Pure(transcript::no_other_skill)),
    ("tool_sequence", Pure(transcript::tool_sequence)),
    ("max_turns", Pure(budget::max_turns)),
    ("max_cost", Pure(budget::max_cost)),
    ("max_duration", Pure(budget::max_duration)),
    ("exit_code", Pure(process::exit_code)),
    ("stdout_equals", Pure(process::stdout_equals)),
    ("stderr_contains", Pure(process::stderr_contains)),
    ("stdio_not_contains", Pure(process::stdio_not_contains)),
    ("js_regex", Pure(plugin_eval::js_regex)),
    ("tool_used", Pure(plugin_eval::tool_used)),
    ("tool_order", Pure(plugin_eval::tool_order)),
    ("created_glob", Pure(plugin_eval::created_glob)),
    ("stdout_json", Pure(process::stdout_json)),
];

fn finding(
    passed: bool,
    message: impl Into<String>,
    evidence: Option<String>,
) -> Result<Finding, String> {
    Ok(Finding {
        passed,
        message: message.into(),
        evidence,
        log: None,
    })
}

fn str_of<'a>(config: &'a Value, key: &str) -> Result<&'a str, String> {
    config
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("the check has no `{key}`"))
}

fn int_of(config: &Value, key: &str) -> Result<i64, String> {
    config
        .get(key)
        .and_then(Value::as_i64)
        .ok_or_else(|| format!("the check has no `{key}`"))
}

/// The optional `ignore_case` key (false when left out).
fn ignore_case(config: &Value) -> bool {
    config
        .get("ignore_case")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// A check's outcome from its type's verdict, with negation applied.
pub fn outcome(c: &Check, result: Result<Finding, String>) -> CheckOutcome {
    match result {
        Ok(v) => CheckOutcome {
            id: c.id.clone(),
            kind: c.kind.clone(),
            passed: v.passed != c.negate,
            message: if c.negate {
                format!("negated: {}", v.message)
            } else {
                v.message
            },
            evidence: v.evidence,
            weight: c.weight,
            negated: c.negate,
            error: None,
            log: v.log,
            provider: None,
        },
        Err(e) => CheckOutcome {
            id: c.id.clone(),
            kind: c.kind.clone(),
            passed: false,
            message: format!("not evaluated: {e}"),
            evidence: None,
            weight: c.weight,
            negated: c.negate,
            error: Some(e),
            log: None,
            provider: None,
        },
    }
}

#[cfg(test)]
mod tests;
