//! What the agent reported of itself: its usage, each turn's summary and why it failed.

use serde::{Deserialize, Serialize};

/// Why a case-run failed, when it did not just give a wrong answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCategory {
    /// Missing or rejected credentials.
    Auth,
    /// The model API said 429.
    RateLimit,
    /// The model API failed (5xx, overloaded).
    Server,
    /// The model API could not be reached at all (connection refused, no route, DNS; in a
    /// sandbox, `--network none`).
    Network,
    /// assay's timeout stopped the run.
    Timeout,
    /// A limit of the case-run (memory, processes, disk) stopped it.
    Limit,
    /// The agent stopped to ask the user something (one turn ending in a question).
    InteractiveHang,
    /// Background tasks were launched and not awaited.
    BackgroundTasks,
    /// The agent process failed without a reason it reported.
    Crash,
    /// The harness plugin reading the agent failed (trapped, ran past its time or memory):
    /// assay's side, not the agent's.
    Plugin,
    /// The agent reported an error of another kind.
    Agent,
}

impl ErrorCategory {
    /// Every category's name, as records and plugins spell them.
    pub const NAMES: [&'static str; 11] = [
        "auth",
        "rate-limit",
        "server",
        "network",
        "timeout",
        "limit",
        "interactive-hang",
        "background-tasks",
        "crash",
        "plugin",
        "agent",
    ];

    /// Whether it is the infrastructure's failure, not the agent's nor the skill's: the model
    /// API refused the login, limited the rate, failed, or could not be reached. Such a
    /// case-run is an error (exit 3): never a failure of the skill, never cached, run again by
    /// `--resume`, and a trigger query's run that could not tell.
    pub fn is_infrastructure(self) -> bool {
        matches!(
            self,
            ErrorCategory::Auth
                | ErrorCategory::RateLimit
                | ErrorCategory::Server
                | ErrorCategory::Network
        )
    }

    /// The category of this name, if it is one.
    pub fn named(name: &str) -> Option<ErrorCategory> {
        serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
    }
}

/// Tokens, as the model API counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Adds another's tokens, saturating: the counts are the agent's word, and an agent may
    /// say anything.
    pub fn add(&mut self, o: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(o.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(o.output_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(o.cache_read_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(o.cache_write_tokens);
    }
}

/// What a harness concluded about one invocation (one turn).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TurnSummary {
    pub session_id: Option<String>,
    pub model: Option<String>,
    /// The agent's last message to the user (for `command`, all of stdout).
    pub final_message: Option<String>,
    pub error: Option<AgentError>,
    pub num_turns: Option<u64>,
    pub cost_usd: Option<f64>,
    /// Why the agent's claimed cost was not believed (not a finite amount from 0 to the
    /// bound, `harness::MAX_TURN_COST_USD`): `cost_usd` is then unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_note: Option<String>,
    pub usage: Usage,
    /// As the agent measured it.
    pub duration_ms: Option<u64>,
    /// Tool calls the agent's permission system refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permission_denials: Vec<serde_json::Value>,
    /// The agent's name and version as it reported them (an ACP agent's `initialize` answer,
    /// `agentInfo`: "Copilot 1.0.102").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentError {
    pub category: ErrorCategory,
    pub message: String,
    /// The agent's own name for the error, when it is none of assay's categories (a harness
    /// plugin's error kind): `category` is what it counts as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::ErrorCategory;

    /// Every variant, by a match the compiler holds complete: a new category must be named.
    fn each(c: ErrorCategory) -> usize {
        use ErrorCategory::*;
        match c {
            Auth | RateLimit | Server | Network | Timeout | Limit | InteractiveHang
            | BackgroundTasks | Crash | Plugin | Agent => 1,
        }
    }

    #[test]
    fn token_counts_an_agent_inflates_add_up_without_overflow() {
        let huge = super::Usage {
            input_tokens: u64::MAX,
            output_tokens: u64::MAX - 1,
            ..Default::default()
        };
        let mut total = huge;
        total.add(&huge);
        assert_eq!(
            (total.input_tokens, total.output_tokens),
            (u64::MAX, u64::MAX)
        );
    }

    #[test]
    fn every_category_is_named_as_it_is_written() {
        let named: usize = ErrorCategory::NAMES
            .iter()
            .filter_map(|n| ErrorCategory::named(n))
            .map(each)
            .sum();
        assert_eq!(named, 11, "NAMES lists every category once");
        for name in ErrorCategory::NAMES {
            let c = ErrorCategory::named(name).unwrap();
            assert_eq!(serde_json::to_value(c).unwrap(), name);
        }
        assert_eq!(ErrorCategory::named("quota"), None);
    }

    #[test]
    fn the_model_api_s_failures_are_the_infrastructure_s() {
        let infra: Vec<&str> = ErrorCategory::NAMES
            .iter()
            .copied()
            .filter(|n| ErrorCategory::named(n).is_some_and(ErrorCategory::is_infrastructure))
            .collect();
        assert_eq!(infra, ["auth", "rate-limit", "server", "network"]);
    }
}
