//! Trigger sets: both kinds of query present, none asked twice, none asked both ways.

use std::collections::HashMap;

use super::place::{Files, finding};
use crate::diag::Problem;
use crate::diag::Severity::{Error, Warning};
use crate::suite::{Suite, TriggerCase};

/// Every finding in one suite's trigger queries.
pub fn lint(suite: &Suite, files: &mut Files, out: &mut Vec<Problem>) {
    let Some(first) = suite.triggers.first() else {
        return;
    };
    for (should, code, missing, fix) in [
        (
            true,
            "triggers-no-positive",
            "no query that should fire the skill",
            "add queries a user would send when they need the skill, so recall is measured",
        ),
        (
            false,
            "triggers-no-negative",
            "no query that should not fire the skill",
            "add near misses (related requests another skill or no skill should take), so precision is measured",
        ),
    ] {
        if !suite.triggers.iter().any(|t| t.should_trigger == should) {
            out.push(finding(
                Warning,
                code,
                &first.location.file,
                files.at(&first.location),
                format!("suite `{}` has {missing}", suite.id),
                fix,
            ));
        }
    }
    let mut seen: HashMap<String, &TriggerCase> = HashMap::new();
    for t in &suite.triggers {
        let key = normalized(&t.query);
        let Some(prev) = seen.get(&key) else {
            seen.insert(key, t);
            continue;
        };
        let (severity, code, what, fix) = if prev.should_trigger != t.should_trigger {
            (
                Error,
                "conflicting-query",
                "is asked both to fire and not to fire the skill",
                "keep the one that is right and remove the other",
            )
        } else {
            (
                Warning,
                "duplicate-query",
                "is asked twice",
                "remove the repeat, or phrase it another way a user would",
            )
        };
        out.push(finding(
            severity,
            code,
            &t.location.file,
            files.at(&t.location),
            format!("\"{}\" {what} (also trigger `{}`)", t.query.trim(), prev.id),
            fix,
        ));
    }
}

/// A query as compared for repeats: case, spacing and closing punctuation ignored.
fn normalized(q: &str) -> String {
    q.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
        .trim_end_matches(['.', '!', '?'])
        .to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn repeats_ignore_case_spacing_and_closing_punctuation() {
        assert_eq!(
            super::normalized("Write  a brief."),
            super::normalized("write a brief")
        );
        assert_ne!(
            super::normalized("write a brief"),
            super::normalized("write briefs")
        );
    }
}
