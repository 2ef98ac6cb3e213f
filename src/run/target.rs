//! Whether a case-run exercised what its case evaluates (UAAPS `target`): the skill fired,
//! the sub-agent ran, the hook ran. Read from the normalized transcript only.

use crate::harness::Event;
use crate::suite::{Target, TargetKind};

/// Whether `events` show `target` at work.
pub fn exercised(target: &Target, events: &[Event]) -> bool {
    events.iter().any(|e| match (target.kind, e) {
        (TargetKind::Skill, Event::SkillInvoked { name, .. }) => *name == target.name,
        (TargetKind::Agent, Event::AgentStarted { name }) => *name == target.name,
        (TargetKind::Hook, Event::HookRan { event, .. }) => same_event(event, &target.name),
        _ => false,
    })
}

/// `pre-tool-use` (UAAPS) and `PreToolUse` (Claude Code) name the same event.
fn same_event(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect::<String>()
    };
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(kind: TargetKind, name: &str) -> Target {
        Target {
            kind,
            name: name.into(),
        }
    }

    #[test]
    fn each_kind_reads_its_own_evidence() {
        let events = vec![
            Event::SkillInvoked {
                name: "pdf".into(),
                call: None,
            },
            Event::AgentStarted { name: "rev".into() },
            Event::HookRan {
                event: "PreToolUse".into(),
                exit_code: Some(2),
                outcome: "error".into(),
            },
        ];
        assert!(exercised(&t(TargetKind::Skill, "pdf"), &events));
        assert!(!exercised(&t(TargetKind::Skill, "rev"), &events));
        assert!(exercised(&t(TargetKind::Agent, "rev"), &events));
        assert!(!exercised(&t(TargetKind::Agent, "pdf"), &events));
        assert!(exercised(&t(TargetKind::Hook, "pre-tool-use"), &events));
        assert!(!exercised(&t(TargetKind::Hook, "post-tool-use"), &events));
        assert!(!exercised(&t(TargetKind::Hook, "pre-tool-use"), &[]));
    }
}
