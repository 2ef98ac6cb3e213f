//! The proposer: a model (through the judge providers) that rewrites a skill's description
//! from the training queries it got wrong. It never sees the holdout.

use super::score::QueryScore;
use crate::judge::provider::Prompt;

/// The Agent Skills specification's limit on a description.
pub const MAX_DESCRIPTION: usize = 1024;

const SYSTEM: &str = "You improve the description of an agent skill. Agents read only a skill's name and description to decide whether to use it for a request, so the description must say what the skill does and when to use it, naming the requests it is for and not those it is not for. Answer with JSON only.";

/// The most of the skill's body shown to the proposer.
const MAX_BODY: usize = 8000;

/// The proposer's prompt: the skill, its current description, and the training queries it
/// got wrong with what each should have done.
pub fn prompt(
    name: &str,
    description: &str,
    body: &str,
    misses: &[&QueryScore],
    n: usize,
) -> Prompt {
    let body = crate::text::shorten(body.trim(), MAX_BODY);
    let mut wrong = String::new();
    for q in misses {
        wrong.push_str(&format!(
            "- {} (fired in {} of {} runs): {}\n",
            if q.should_trigger {
                "should use the skill, did not"
            } else {
                "should not use the skill, did"
            },
            q.fired,
            q.runs,
            serde_json::to_string(&q.query).unwrap_or_default()
        ));
    }
    if wrong.is_empty() {
        wrong.push_str("- none: make it fire as reliably on these requests with fewer words\n");
    }
    let user = format!(
        "Skill name: {name}\n\nCurrent description:\n{description}\n\nThe skill's instructions (for what it does):\n<skill>\n{body}\n</skill>\n\nRequests the current description got wrong:\n{wrong}\nWrite {n} different rewrites of the description, each at most {MAX_DESCRIPTION} characters, in plain prose on one line. Answer with JSON only: {{\"candidates\": [\"...\"]}}"
    );
    Prompt {
        system: SYSTEM.into(),
        user,
        max_tokens: 2048,
    }
}

/// The candidates in the proposer's answer: one-line, non-empty, within the limit, none the
/// same as the current description or another. Everything else is left out.
pub fn parse(answer: &str, current: &str) -> Result<Vec<String>, String> {
    let start = answer.find('{');
    let end = answer.rfind('}');
    let json = match (start, end) {
        (Some(s), Some(e)) if s < e => &answer[s..=e],
        _ => {
            return Err(format!(
                "the proposer did not answer with JSON: {}",
                crate::text::shorten(answer, 200)
            ));
        }
    };
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| {
        format!(
            "the proposer's JSON does not parse ({e}): {}",
            crate::text::shorten(json, 200)
        )
    })?;
    let list = v
        .get("candidates")
        .and_then(|c| c.as_array())
        .ok_or("the proposer's JSON has no `candidates` list")?;
    let mut out: Vec<String> = Vec::new();
    for c in list.iter().filter_map(|c| c.as_str()) {
        let c = super::description::one_line(c);
        let ok = !c.is_empty()
            && c.chars().count() <= MAX_DESCRIPTION
            && !c.chars().any(char::is_control)
            && c != super::description::one_line(current)
            && !out.contains(&c);
        if ok {
            out.push(c);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_lists_only_the_misses_it_is_given() {
        let miss = QueryScore {
            id: "q1".into(),
            query: "write me a brief".into(),
            should_trigger: true,
            fired: 0,
            runs: 3,
        };
        let p = prompt("brief", "Writes things.", "# Body", &[&miss], 3);
        assert!(p.user.contains(
            "should use the skill, did not (fired in 0 of 3 runs): \"write me a brief\""
        ));
        assert!(p.user.contains("Write 3 different rewrites"));
    }

    #[test]
    fn answers_are_taken_apart_and_filtered() {
        let long = "x".repeat(MAX_DESCRIPTION + 1);
        let answer = format!(
            "Sure:\n```json\n{{\"candidates\": [\"Writes briefs.\\nUse when asked.\", \"Old.\", \"\", \"{long}\", \"Writes briefs. Use when asked.\", 3, \"bad\\u0007\"]}}\n```"
        );
        assert_eq!(
            parse(&answer, "Old.").unwrap(),
            ["Writes briefs. Use when asked."]
        );
        assert!(parse("no json here", "x").is_err());
        assert!(parse("{\"other\": 1}", "x").is_err());
    }
}
