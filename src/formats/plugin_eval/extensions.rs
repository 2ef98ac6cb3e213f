//! assay's own keys in a plugin-eval `case.yaml`, which Claude Code ignores (it ignores every
//! unknown top-level key): `x-assay-threshold`, the mean score this case must reach (over
//! `--threshold`: its users ask for a threshold per case), and `x-assay-turns`, the user's
//! next messages after the prompt, each a turn of the same session. Any other `x-assay-…` key
//! is an error, as in every format.

use super::issues::{Issues, received, strings};
use super::merged::{At, MergedCase};
use crate::syntax::node::Value;

/// The keys read here.
pub const KEYS: &[&str] = &["x-assay-threshold", "x-assay-turns"];

/// What the extensions say of a case.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extensions {
    pub threshold: Option<f64>,
    pub more_turns: Vec<String>,
}

/// Reads the extensions of a merged case, reporting a wrong one.
pub fn read(is: &mut Issues, m: &MergedCase<'_>) -> Extensions {
    let mut out = Extensions::default();
    for (key, v) in &m.top {
        match *key {
            "x-assay-threshold" => out.threshold = threshold(is, *v),
            "x-assay-turns" => out.more_turns = strings(is, *v, key).unwrap_or_default(),
            k if crate::formats::is_assay_key(k) => {
                is.at(
                    *v,
                    k,
                    format!(
                        "`{k}` is not an assay key here (known: {})",
                        KEYS.join(", ")
                    ),
                );
            }
            _ => {}
        }
    }
    out
}

fn threshold(is: &mut Issues, v: At<'_>) -> Option<f64> {
    let t = match v.node.value {
        Value::Int(n) => n as f64,
        Value::Float(f) => f,
        ref other => {
            is.at(
                v,
                "x-assay-threshold",
                format!("Expected number, received {}", received(other)),
            );
            return None;
        }
    };
    if !(0.0..=1.0).contains(&t) {
        is.at(v, "x-assay-threshold", "must be a number from 0 to 1");
        return None;
    }
    Some(t)
}
