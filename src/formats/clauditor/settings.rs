//! A clauditor spec's settings for its run and its grading: the harness, the timeout, the
//! judge's transport, provider and model, the hang heuristic, `sync_tasks`, and the variance
//! and thresholds a run must reach. They become the suite's [`Defaults`].

use super::{GRADING_PROVIDERS, GRADING_TRANSPORTS, HARNESSES, provider_for_model};
use crate::record::grading::Thresholds;
use crate::suite::{Defaults, JudgeConfig, Variance};
use crate::syntax::node::{Node, Value};
use crate::syntax::reader::{Doc, Map};

/// The keys of `variance`.
pub const VARIANCE_KEYS: &[&str] = &["n_runs", "min_stability"];
/// The keys of `grade_thresholds`.
pub const THRESHOLD_KEYS: &[&str] = &["min_pass_rate", "min_mean_score"];

/// The spec's top-level settings (`variance` and `grade_thresholds` are read on their own).
pub(super) struct SpecSettings {
    pub(super) timeout: Option<u64>,
    harness: Option<String>,
    transport: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    allow_hang_heuristic: bool,
    sync_tasks: bool,
}

impl SpecSettings {
    pub(super) fn read(doc: &mut Doc, m: &Map<'_>) -> SpecSettings {
        let allow_hang_heuristic = strict_bool(doc, m, "allow_hang_heuristic").unwrap_or(true);
        let sync_tasks = strict_bool(doc, m, "sync_tasks").unwrap_or(false);
        let timeout = m.positive_int(doc, "timeout");
        let transport = choice(doc, m, "transport", GRADING_TRANSPORTS, false);
        let harness = choice(doc, m, "harness", HARNESSES, false);
        let provider = choice(doc, m, "grading_provider", GRADING_PROVIDERS, true);
        let model = m.text(doc, "grading_model");
        if let (None, Some(model)) = (&provider, &model)
            && provider_for_model(model).is_none()
            && let Some(n) = m.opt("grading_model")
        {
            doc.error(
                "unknown-model",
                n.span,
                "grading_model",
                format!("cannot tell the provider of model `{model}`: claude-* is anthropic, gpt-* and o<digit>* are openai"),
            )
            .help = Some("set grading_provider explicitly, or fix a typo such as gtp- for gpt-".into());
        }
        SpecSettings {
            timeout,
            harness,
            transport,
            provider,
            model,
            allow_hang_heuristic,
            sync_tasks,
        }
    }

    /// The suite's defaults: these settings, with the variance, thresholds and system prompt.
    pub(super) fn into_defaults(
        self,
        variance: Option<Variance>,
        thresholds: Option<Thresholds>,
        system_prompt: Option<String>,
    ) -> Defaults {
        Defaults {
            harness: self.harness,
            timeout_secs: self.timeout,
            judge: JudgeConfig {
                model: self.model,
                provider: self.provider,
                // `auto` is clauditor's default and means something (the CLI when `claude`
                // is on PATH, else the API), so it is kept.
                transport: Some(self.transport.unwrap_or_else(|| "auto".into())),
                family: None,
            },
            thresholds,
            variance,
            system_prompt,
            allow_hang_heuristic: self.allow_hang_heuristic,
            sync_tasks: self.sync_tasks,
            ..Defaults::default()
        }
    }
}

/// `variance`: runs per case (5 unless set) and the stability they must reach (0.8 unless set).
pub(super) fn read_variance(doc: &mut Doc, node: &Node) -> Option<Variance> {
    let v = doc.map(node, "variance")?;
    v.check_keys(doc, "variance", VARIANCE_KEYS);
    let runs = v.positive_int(doc, "n_runs").unwrap_or(5);
    let min_stability = v
        .opt("min_stability")
        .and_then(|n| doc.fraction(n, "variance.min_stability"));
    Some(Variance {
        runs: runs.min(u32::MAX as u64) as u32,
        min_stability: Some(min_stability.unwrap_or(0.8)),
    })
}

/// `grade_thresholds`: each fraction, or assay's default when left out.
pub(super) fn read_thresholds(doc: &mut Doc, node: &Node) -> Option<Thresholds> {
    let t = doc.map(node, "grade_thresholds")?;
    t.check_keys(doc, "grade_thresholds", THRESHOLD_KEYS);
    let d = Thresholds::default();
    Some(Thresholds {
        min_pass_rate: t
            .opt("min_pass_rate")
            .and_then(|n| doc.fraction(n, "grade_thresholds.min_pass_rate"))
            .unwrap_or(d.min_pass_rate),
        min_mean_score: t
            .opt("min_mean_score")
            .and_then(|n| doc.fraction(n, "grade_thresholds.min_mean_score"))
            .unwrap_or(d.min_mean_score),
    })
}

/// A value that must be one of a few words; `null_ok` says whether `null` means "default".
fn choice(
    doc: &mut Doc,
    m: &Map<'_>,
    key: &str,
    allowed: &[&str],
    null_ok: bool,
) -> Option<String> {
    let node = m
        .entries
        .iter()
        .find(|(k, _)| k.name == key)
        .map(|(_, v)| v)?;
    if node.value == Value::Null {
        if !null_ok {
            doc.error(
                "wrong-type",
                node.span,
                key,
                format!("`{key}` must be one of {}, not null", allowed.join(", ")),
            )
            .help = Some("omit the key to use the default `auto`".into());
        }
        return None;
    }
    let s = doc.string(node, key)?;
    if !allowed.contains(&s.as_str()) {
        doc.error(
            "bad-value",
            node.span,
            key,
            format!("`{key}` must be one of {}, found {s:?}", allowed.join(", ")),
        )
        .help = crate::diag::did_you_mean(&s, allowed.iter().copied())
            .map(|a| format!("did you mean `{a}`?"));
        return None;
    }
    (s != "auto").then_some(s)
}

/// A boolean that may be left out but not set to null.
fn strict_bool(doc: &mut Doc, m: &Map<'_>, key: &str) -> Option<bool> {
    let node = m
        .entries
        .iter()
        .find(|(k, _)| k.name == key)
        .map(|(_, v)| v)?;
    doc.bool(node, key)
}
