//! Plugin check types and formats behind assay's `Check` and format traits.

use std::sync::Arc;

use serde_json::Value;

use super::Provider;
use super::host::CaseRunResource;
use super::loaded::LoadedPlugin;
use crate::assert::builtin::Finding;
use crate::assert::check::Evaluator;
use crate::assert::view::CaseRunView;

/// One check type of one plugin.
pub struct PluginCheck {
    provider: Provider,
    kind: String,
}

impl PluginCheck {
    pub fn new(provider: Provider, kind: String) -> Self {
        PluginCheck { provider, kind }
    }
}

fn log_of(log: String) -> Option<String> {
    let log = log.trim_end().to_string();
    (!log.is_empty()).then(|| LoadedPlugin::cut(log))
}

impl Evaluator for PluginCheck {
    fn provider(&self) -> Option<String> {
        Some(match &self.provider {
            Provider::Wasm(p) => format!("wasm:{}", p.name),
            Provider::Native(p) => format!("native:{} (unsandboxed)", p.name),
        })
    }

    fn evaluate(&self, config: &Value, view: &Arc<CaseRunView>) -> Result<Finding, String> {
        match &self.provider {
            Provider::Wasm(p) => {
                let config = config.to_string();
                let (result, log) = p.call_logged(|store, inst, p| {
                    let run = store.data_mut().table.push(CaseRunResource(view.clone()))?;
                    let rep = run.rep();
                    let r = p.exports().evaluate(store, inst, &self.kind, &config, run);
                    // The case-run belongs to this call only; a reused instance never sees it.
                    let _ = store
                        .data_mut()
                        .table
                        .delete(wasmtime::component::Resource::<CaseRunResource>::new_own(
                            rep,
                        ));
                    r
                });
                let log = log_of(log);
                // Errors quote the end of stderr on one line (a panic message is there).
                let with_log = |e: String| match &log {
                    Some(l) => {
                        let lines: Vec<&str> = l
                            .lines()
                            .filter(|x| {
                                !x.trim().is_empty()
                                    && !x.starts_with("note: run with `RUST_BACKTRACE")
                            })
                            .collect();
                        let tail = lines[lines.len().saturating_sub(2)..].join(" / ");
                        format!("{e}; stderr: {tail}")
                    }
                    None => e,
                };
                match result {
                    Ok(Ok(v)) => Ok(Finding {
                        passed: v.passed,
                        message: LoadedPlugin::cut(v.message),
                        evidence: v.evidence.map(LoadedPlugin::cut),
                        log,
                    }),
                    Ok(Err(e)) => Err(with_log(LoadedPlugin::cut(e))),
                    Err(e) => Err(with_log(e.to_string())),
                }
            }
            Provider::Native(n) => n.evaluate(&self.kind, config, view),
        }
    }
}

/// Load-time validation of a check's configuration.
pub fn validate(provider: &Provider, kind: &str, config: &Value) -> Result<(), String> {
    match provider {
        Provider::Wasm(p) => {
            let config = config.to_string();
            match p.call(|store, inst, p| p.exports().validate(store, inst, kind, &config)) {
                Ok(r) => r.map_err(LoadedPlugin::cut),
                Err(e) => Err(e.to_string()),
            }
        }
        Provider::Native(n) => n.validate(kind, config),
    }
}

pub fn format_matches(provider: &Provider, name: &str, value: &str) -> Result<bool, String> {
    match provider {
        Provider::Wasm(p) => p
            .call(|store, inst, p| p.exports().matches(store, inst, name, value))
            .map_err(|e| e.to_string()),
        Provider::Native(n) => n.format_matches(name, value),
    }
}

pub fn format_find_all(
    provider: &Provider,
    name: &str,
    text: &str,
) -> Result<Vec<(usize, usize)>, String> {
    let spans = match provider {
        Provider::Wasm(p) => p
            .call(|store, inst, p| p.exports().find_all(store, inst, name, text))
            .map_err(|e| e.to_string())?,
        Provider::Native(n) => n.format_find_all(name, text)?,
    };
    // A plugin's ranges are checked, not trusted: in bounds and on character boundaries.
    Ok(spans
        .into_iter()
        .map(|(a, b)| (a as usize, b as usize))
        .filter(|&(a, b)| a <= b && text.get(a..b).is_some())
        .collect())
}
