//! A case-run's `timing.json`: what it cost in tokens and time, as agentskills.io's
//! "Evaluating skills" guide records each run (`total_tokens`, `duration_ms`), with
//! skill-creator's `total_duration_seconds` beside them (its SKILL.md writes the three, and its
//! `aggregate_benchmark.py` reads `total_duration_seconds` and `total_tokens` from it).

use serde::{Deserialize, Serialize};

use super::agent::Usage;

/// `timing.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// The agent's input and output tokens, as `benchmark.json`'s `tokens` counts them.
    pub total_tokens: u64,
    /// The case-run's wall-clock time, as `result.json`'s `duration_ms`.
    pub duration_ms: u64,
    /// The same time in seconds.
    pub total_duration_seconds: f64,
}

impl Timing {
    /// The timing of a case-run that used `usage` and took `duration_ms`.
    pub fn of(usage: &Usage, duration_ms: u64) -> Timing {
        Timing {
            total_tokens: usage.input_tokens.saturating_add(usage.output_tokens),
            duration_ms,
            total_duration_seconds: duration_ms as f64 / 1000.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_input_and_output_and_seconds_the_milliseconds() {
        let usage = Usage {
            input_tokens: 80_000,
            output_tokens: 4_852,
            cache_read_tokens: 7,
            cache_write_tokens: 9,
        };
        let t = Timing::of(&usage, 23_332);
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            serde_json::json!({"total_tokens": 84_852, "duration_ms": 23_332, "total_duration_seconds": 23.332})
        );
        // The agent's word, saturated: never a panic.
        let huge = Usage {
            input_tokens: u64::MAX,
            output_tokens: 1,
            ..Usage::default()
        };
        assert_eq!(Timing::of(&huge, 0).total_tokens, u64::MAX);
    }
}
