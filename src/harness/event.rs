//! The normalized transcript: what any agent did, in one vocabulary.

use serde::{Deserialize, Serialize};

/// One thing that happened in a case-run, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The agent session began.
    SessionStarted {
        session_id: String,
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tools: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skills: Vec<String>,
    },
    /// Text the agent wrote to the user.
    Message { text: String },
    /// The agent's visible reasoning, where the harness shows it.
    Reasoning { text: String },
    /// The agent called a tool.
    ToolCall {
        id: String,
        name: String,
        input: serde_json::Value,
    },
    /// A tool's answer.
    ToolResult {
        id: String,
        output: String,
        is_error: bool,
    },
    /// The agent used a skill (a `Skill` tool call, or a read of a SKILL.md) and the load did
    /// not fail ([`crate::harness::skill_loads`]).
    SkillInvoked {
        name: String,
        /// The tool call that loads it, where it is not the call just before this event (an
        /// ACP agent names the skill in a later update); never written.
        #[serde(skip)]
        call: Option<String>,
    },
    /// The agent tried to load a skill and the load failed (an unknown skill, no skill
    /// tool): no use of the skill.
    SkillFailed { name: String, error: String },
    /// A sub-agent ran: Claude Code's `Agent` tool started it, or the session ran as it
    /// (`--agent`, for a UAAPS `target: agent:<name>`).
    AgentStarted { name: String },
    /// A hook ran (Claude Code's `hook_response`): its event (`PreToolUse`, …), exit code
    /// and outcome as the agent reports them.
    HookRan {
        event: String,
        exit_code: Option<i64>,
        outcome: String,
    },
    /// A file the agent changed, as the harness reports it.
    FileChange { path: String, kind: String },
    /// A line a plain program printed (the `command` harness).
    Output { text: String },
    /// The agent's CLI asks its model API again after a failed request (Claude Code's
    /// `api_retry`): shown live while it waits, so a run held up by an outage says so.
    Retrying {
        attempt: u64,
        max_retries: u64,
        /// The HTTP status of the failed request, when there was one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u64>,
    },
    /// The harness reported an error.
    Error {
        message: String,
        category: Option<ErrorCategory>,
    },
}

use crate::record::agent::ErrorCategory;
