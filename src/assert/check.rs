//! The one extension point for assertions: an [`Evaluator`] evaluates a configured check against a
//! case-run. Built-in types and WASM plugin types implement it side by side, and a
//! [`Checks`] registry maps type names to implementations.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::builtin::{self, CheckOutcome, EvalFn, Evaluation, Finding};
use super::urls::{UrlPolicy, UrlsReachable};
use super::view::CaseRunView;
use crate::spec;

/// One check type's evaluation. `Err` means the check could not be evaluated; it then counts as failed.
///
/// Implementations may block (network, a plugin call): callers run checks off the async
/// executor.
pub trait Evaluator: Send + Sync {
    fn evaluate(&self, config: &Value, view: &Arc<CaseRunView>) -> Result<Finding, String>;
    /// Who provides the type when it is not built in (recorded with each outcome).
    fn provider(&self) -> Option<String> {
        None
    }
}

/// A built-in type evaluated by its function in [`builtin::EVALUATORS`].
struct Builtin(EvalFn);

impl Evaluator for Builtin {
    fn evaluate(&self, config: &Value, view: &Arc<CaseRunView>) -> Result<Finding, String> {
        (self.0)(config, view)
    }
}

/// Formats beyond the built-in registry (from plugins).
pub trait ExtraFormats: Send + Sync {
    fn has(&self, name: &str) -> bool;
    /// Whether the whole value is of the format.
    fn matches(&self, name: &str, value: &str) -> Result<bool, String>;
    /// Non-overlapping occurrences, as byte ranges.
    fn find_all(&self, name: &str, text: &str) -> Result<Vec<(usize, usize)>, String>;
}

/// `has_format`, reaching plugin formats too.
struct HasFormat(Option<Arc<dyn ExtraFormats>>);

impl Evaluator for HasFormat {
    fn evaluate(&self, config: &Value, view: &Arc<CaseRunView>) -> Result<Finding, String> {
        let name = config.get("format").and_then(Value::as_str).unwrap_or("");
        match &self.0 {
            Some(extra)
                if crate::spec::value_formats::lookup(name).is_none() && extra.has(name) =>
            {
                let wanted = config.get("count").and_then(Value::as_i64).unwrap_or(1);
                let out = &view.output;
                let found = extra.find_all(name, out)?;
                let evidence = found
                    .iter()
                    .take(5)
                    .filter_map(|&(a, b)| out.get(a..b))
                    .collect::<Vec<_>>()
                    .join(" | ");
                Ok(Finding {
                    passed: found.len() as i64 >= wanted,
                    message: format!(
                        "{} {name} values found, at least {wanted} wanted",
                        found.len()
                    ),
                    evidence: (!evidence.is_empty()).then_some(evidence),
                    log: None,
                })
            }
            _ => builtin::has_format(config, view),
        }
    }
}

/// The check types known to a run, by name.
#[derive(Clone)]
pub struct Checks {
    by_kind: HashMap<String, Arc<dyn Evaluator>>,
    formats: Option<Arc<dyn ExtraFormats>>,
}

impl std::fmt::Debug for Checks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<_> = self.by_kind.keys().collect();
        names.sort();
        f.debug_struct("Checks").field("kinds", &names).finish()
    }
}

impl Checks {
    /// Every built-in type; `urls_reachable` reaches the network under `urls`.
    pub fn builtin(urls: UrlPolicy) -> Self {
        let by_kind = builtin::EVALUATORS
            .iter()
            .map(|&(name, how)| {
                let check: Arc<dyn Evaluator> = match how {
                    Evaluation::Pure(f) => Arc::new(Builtin(f)),
                    Evaluation::UrlsReachable => Arc::new(UrlsReachable::new(urls)),
                };
                (name.to_string(), check)
            })
            .collect();
        Checks {
            by_kind,
            formats: None,
        }
    }

    /// Makes plugin formats usable in `has_format` and extraction field formats.
    pub fn set_formats(&mut self, formats: Arc<dyn ExtraFormats>) {
        self.by_kind.insert(
            "has_format".into(),
            Arc::new(HasFormat(Some(formats.clone()))),
        );
        self.formats = Some(formats);
    }

    /// Plugin formats, when any.
    pub fn formats(&self) -> Option<&dyn ExtraFormats> {
        self.formats.as_deref()
    }

    /// Adds (or replaces) a type.
    pub fn register(&mut self, kind: impl Into<String>, check: Arc<dyn Evaluator>) {
        self.by_kind.insert(kind.into(), check);
    }

    /// Runs every check of a case-run, applying negation and weights.
    pub fn run(&self, checks: &[spec::Check], view: &Arc<CaseRunView>) -> Vec<CheckOutcome> {
        checks
            .iter()
            .map(|c| {
                let check = self.by_kind.get(&c.kind);
                let result = match check {
                    Some(check) => check.evaluate(&c.config, view),
                    None => Err(format!("no check type `{}` is available", c.kind)),
                };
                let mut outcome = builtin::outcome(c, result);
                outcome.provider = check.and_then(|c| c.provider());
                outcome
            })
            .collect()
    }
}
