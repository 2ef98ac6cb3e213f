//! Checks on what the agent did, from its transcript: tools, skills, and what blocked it.

use serde_json::Value;

use super::{Finding, finding, str_of};
use crate::assert::view::CaseRunView;

/// `tool_called` (`wanted`) and `tool_not_called`: whether a tool named exactly `tool` was
/// called in any turn; the tools called as evidence.
pub fn tool_called(config: &Value, view: &CaseRunView, wanted: bool) -> Result<Finding, String> {
    let tool = str_of(config, "tool")?;
    let names: Vec<&str> = view.tool_calls().map(|(n, _)| n).collect();
    let called = names.contains(&tool);
    let listed = if names.is_empty() {
        "no tools".to_string()
    } else {
        names.join(", ")
    };
    finding(
        wanted == called,
        format!("`{tool}` was {}called", if called { "" } else { "not " }),
        Some(format!("tools called: {listed}")),
    )
}

/// `tool_sequence`: the `tools` were called in this order, others possibly between them.
pub fn tool_sequence(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let wanted: Vec<&str> = config
        .get("tools")
        .and_then(Value::as_array)
        .ok_or("the check has no `tools`")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let called: Vec<&str> = view.tool_calls().map(|(n, _)| n).collect();
    let mut next = wanted.iter().peekable();
    for name in &called {
        if next.peek().is_some_and(|w| *w == name) {
            next.next();
        }
    }
    let missing: Vec<&&str> = next.collect();
    finding(
        missing.is_empty(),
        if missing.is_empty() {
            "the tools were called in order".to_string()
        } else {
            format!("not called in order from `{}` on", missing[0])
        },
        Some(format!("tools called: {}", called.join(" → "))),
    )
}

/// `skill_invoked`: the agent used the skill `skill`.
pub fn skill_invoked(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let skill = str_of(config, "skill")?;
    let used = view.skills_invoked();
    let listed = if used.is_empty() {
        "no skills".to_string()
    } else {
        used.join(", ")
    };
    finding(
        used.contains(&skill),
        format!("skills used: {listed}"),
        None,
    )
}

/// The skills that fired, for evidence.
fn listed(used: &[&str]) -> String {
    if used.is_empty() {
        "no skills fired".to_string()
    } else {
        format!("skills fired: {}", used.join(", "))
    }
}

/// `must_fire` (`wanted`) and `must_not_fire`: whether the skill `skill` fired.
pub fn fires(config: &Value, view: &CaseRunView, wanted: bool) -> Result<Finding, String> {
    let skill = str_of(config, "skill")?;
    let used = view.skills_invoked();
    let fired = used.contains(&skill);
    finding(
        fired == wanted,
        format!("`{skill}` {}", if fired { "fired" } else { "did not fire" }),
        Some(listed(&used)),
    )
}

/// `no_other_skill`: no skill fired outside `allow` (which loading fills with the skill under
/// test and the case's `must_fire` skills).
pub fn no_other_skill(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let allowed: Vec<&str> = config
        .get("allow")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let used = view.skills_invoked();
    let others: Vec<&str> = used
        .iter()
        .copied()
        .filter(|s| !allowed.contains(s))
        .collect();
    finding(
        others.is_empty(),
        if others.is_empty() {
            "no other skill fired".to_string()
        } else {
            format!("other skills fired: {}", others.join(", "))
        },
        Some(listed(&used)),
    )
}

/// `agent_blocked`: a hook or a permission denial stopped the agent (see [`agent_blocked`]).
pub fn blocked(_config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let blocked = agent_blocked(view);
    finding(
        blocked.is_some(),
        if blocked.is_some() {
            "the agent was blocked"
        } else {
            "nothing blocked the agent"
        }
        .to_string(),
        blocked,
    )
}

/// Why the agent counts as blocked: Claude Code's permission system refused a tool call
/// (`permission_denials` in its result), or a hook denied one — Claude Code reports a hook that
/// exits 2 as an error tool result reading `<Event>:<Tool> hook error: [command]: <message>`.
pub fn agent_blocked(view: &CaseRunView) -> Option<String> {
    let by_hook = view.events.iter().find_map(|e| match e {
        crate::harness::Event::ToolResult {
            output,
            is_error: true,
            ..
        } => {
            let text = output.trim_start_matches("Error: ");
            let hook = text
                .split_once(" hook error:")
                .is_some_and(|(head, _)| head.contains(':') && !head.contains(' '))
                || text.to_lowercase().contains("blocked by hook");
            hook.then(|| text.chars().take(200).collect())
        }
        // A hook the agent reports as having blocked a call (Codex's log).
        crate::harness::Event::HookRan { event, outcome, .. } if outcome.starts_with("blocked") => {
            Some(
                format!("{event} hook {outcome}")
                    .chars()
                    .take(200)
                    .collect(),
            )
        }
        _ => None,
    });
    by_hook.or_else(|| {
        (view.permission_denials > 0).then(|| {
            format!(
                "{} tool call(s) denied by permissions",
                view.permission_denials
            )
        })
    })
}
