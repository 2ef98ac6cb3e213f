//! Checks on what the run spent: turns, cost and time.

use serde_json::Value;

use super::{Finding, finding, int_of};
use crate::assert::view::CaseRunView;

/// `max_turns`: the agent took at most `turns` turns (an error when the harness does not say).
pub fn max_turns(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let max = int_of(config, "turns")?;
    let turns = view.num_turns.ok_or("the harness does not report turns")?;
    finding(
        turns as i64 <= max,
        format!("{turns} turns, at most {max} allowed"),
        None,
    )
}

/// `max_cost`: the run cost at most `usd` dollars (an error when the harness does not say).
pub fn max_cost(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let max = config
        .get("usd")
        .and_then(Value::as_f64)
        .ok_or("the check has no `usd`")?;
    let cost = view.cost_usd.ok_or("the harness does not report cost")?;
    finding(
        cost <= max,
        format!("cost ${cost:.4}, at most ${max} allowed"),
        None,
    )
}

/// `max_duration`: the run took at most `seconds` seconds.
pub fn max_duration(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let max = config
        .get("seconds")
        .and_then(Value::as_f64)
        .ok_or("the check has no `seconds`")?;
    let took = view.duration_ms as f64 / 1000.0;
    finding(
        took <= max,
        format!("took {took:.1} s, at most {max} s allowed"),
        None,
    )
}
