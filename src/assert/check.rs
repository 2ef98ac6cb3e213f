//! The one extension point for assertions: an [`Evaluator`] evaluates a configured check against a
//! case-run. Built-in types and WASM plugin types implement it side by side, and a
//! [`Checks`] registry maps type names to implementations.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::builtin::urls::{UrlPolicy, UrlsReachable};
use super::builtin::{self, EvalFn, Evaluation, Finding};
use super::formats::{ExtraFormats, Formats};
use super::view::CaseRunView;
use crate::record::grading::CheckOutcome;
use crate::suite;

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

impl Evaluator for UrlsReachable {
    fn evaluate(&self, config: &Value, view: &Arc<CaseRunView>) -> Result<Finding, String> {
        UrlsReachable::evaluate(self, config, view)
    }
}

/// `has_format`: at least `count` values of a format, built in or a plugin's.
struct HasFormat(Formats);

impl Evaluator for HasFormat {
    fn evaluate(&self, config: &Value, view: &Arc<CaseRunView>) -> Result<Finding, String> {
        let name = config.get("format").and_then(Value::as_str).unwrap_or("");
        let format = self
            .0
            .get(name)
            .ok_or_else(|| format!("`{name}` is not a registered format"))?;
        let wanted = config.get("count").and_then(Value::as_i64).unwrap_or(1);
        let out = &view.output;
        let found = format.find_all(out)?;
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
}

/// The check types known to a run, by name.
#[derive(Clone)]
pub struct Checks {
    by_kind: HashMap<String, Arc<dyn Evaluator>>,
    formats: Formats,
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
                    Evaluation::HasFormat => Arc::new(HasFormat(Formats::default())),
                };
                (name.to_string(), check)
            })
            .collect();
        Checks {
            by_kind,
            formats: Formats::default(),
        }
    }

    /// Makes plugin formats usable in `has_format` and extraction field formats.
    pub fn set_formats(&mut self, extra: Arc<dyn ExtraFormats>) {
        self.formats = Formats::with_plugins(extra);
        self.by_kind.insert(
            "has_format".into(),
            Arc::new(HasFormat(self.formats.clone())),
        );
    }

    /// The formats the run knows (built in and from plugins).
    pub fn formats(&self) -> &Formats {
        &self.formats
    }

    /// Evaluates one check of a type, if the type is known.
    pub fn evaluate(
        &self,
        kind: &str,
        config: &Value,
        view: &Arc<CaseRunView>,
    ) -> Option<Result<Finding, String>> {
        self.by_kind.get(kind).map(|c| c.evaluate(config, view))
    }

    /// Adds (or replaces) a type.
    pub fn register(&mut self, kind: impl Into<String>, check: Arc<dyn Evaluator>) {
        self.by_kind.insert(kind.into(), check);
    }

    /// Runs every check of a case-run, applying negation and weights.
    pub fn run(&self, checks: &[suite::Check], view: &Arc<CaseRunView>) -> Vec<CheckOutcome> {
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
