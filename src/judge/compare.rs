//! Blind A/B comparison (clauditor `user_prompt`): which of two outputs serves the user's
//! request better? Asked twice with the positions swapped, so a judge's preference for
//! whichever comes first cancels out: when both rounds agree that is the preference (at their
//! mean confidence); when they disagree it is a tie at the lower confidence.

use serde::Serialize;
use serde_json::Value;

use super::fence::{FENCE_RULE, bounded, fence};
use super::modes::{GradeError, ask_valid, str_field};
use super::provider::{Judge, Prompt};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Preference {
    A,
    B,
    Tie,
}

/// One round: which output was shown first, and what the judge said (mapped back to A/B).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Round {
    pub shown_first: Preference,
    pub preferred: Preference,
    pub confidence: f64,
    pub reasoning: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub preferred: Preference,
    pub confidence: f64,
    /// Whether the two rounds agreed.
    pub consistent: bool,
    pub rounds: Vec<Round>,
}

const SYSTEM: &str = "You compare two responses to the same request, blind: you do not know what produced them. \
Judge which one better serves the user's request — correctness, completeness, usefulness — not length or style. \
Reply with JSON only, in exactly the shape asked for.";

async fn round(
    judge: &Judge,
    request: &str,
    first: &str,
    second: &str,
) -> Result<(u8, f64, String), GradeError> {
    let user = format!(
        "{FENCE_RULE}\n\n## The user's request\n{}\n\n## Response 1\n{}\n\n## Response 2\n{}\n\n\
Which response better serves the request? Reply with JSON only: \
{{\"preferred\": \"1\" | \"2\" | \"tie\", \"confidence\": 0.0-1.0, \"reasoning\": \"<one or two sentences>\"}}",
        fence("untrusted-request", &bounded(request, 8_000)),
        fence("untrusted-response", &bounded(first, 30_000)),
        fence("untrusted-response", &bounded(second, 30_000)),
    );
    let prompt = Prompt {
        system: SYSTEM.into(),
        user,
        max_tokens: 1024,
    };
    ask_valid(judge, prompt, |v| {
        let preferred = match v.get("preferred") {
            Some(Value::String(s)) => s.trim().to_ascii_lowercase(),
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err("no `preferred`".into()),
        };
        let p = match preferred.as_str() {
            "1" | "response 1" => 1,
            "2" | "response 2" => 2,
            "tie" => 0,
            other => {
                return Err(format!(
                    "`preferred` is {other:?}, not \"1\", \"2\" or \"tie\""
                ));
            }
        };
        let confidence = v
            .get("confidence")
            .and_then(Value::as_f64)
            .ok_or("no numeric `confidence`")?;
        if !(0.0..=1.0).contains(&confidence) {
            return Err(format!("confidence {confidence} is outside 0–1"));
        }
        Ok((p, confidence, str_field(v, "reasoning")))
    })
    .await
}

/// Compares outputs `a` and `b` for `request`, blind and position-swapped.
pub async fn compare(
    judge: &Judge,
    request: &str,
    a: &str,
    b: &str,
) -> Result<Comparison, GradeError> {
    let (r1, r2) =
        futures::future::join(round(judge, request, a, b), round(judge, request, b, a)).await;
    let map = |shown_first: Preference, (p, confidence, reasoning): (u8, f64, String)| Round {
        shown_first,
        preferred: match (p, shown_first) {
            (0, _) => Preference::Tie,
            (1, first) => first,
            (_, Preference::A) => Preference::B,
            (_, _) => Preference::A,
        },
        confidence,
        reasoning,
    };
    let rounds = vec![map(Preference::A, r1?), map(Preference::B, r2?)];
    Ok(combine(rounds))
}

/// Agreement gives the preference at the mean confidence; disagreement a tie at the lower.
pub fn combine(rounds: Vec<Round>) -> Comparison {
    let consistent = rounds[0].preferred == rounds[1].preferred;
    let (preferred, confidence) = if consistent {
        (
            rounds[0].preferred,
            (rounds[0].confidence + rounds[1].confidence) / 2.0,
        )
    } else {
        (
            Preference::Tie,
            rounds[0].confidence.min(rounds[1].confidence),
        )
    };
    Comparison {
        preferred,
        confidence,
        consistent,
        rounds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(p: Preference, c: f64) -> Round {
        Round {
            shown_first: Preference::A,
            preferred: p,
            confidence: c,
            reasoning: String::new(),
        }
    }

    #[test]
    fn agreement_prefers_and_disagreement_ties_low() {
        let c = combine(vec![r(Preference::B, 0.8), r(Preference::B, 0.6)]);
        assert_eq!(c.preferred, Preference::B);
        assert!((c.confidence - 0.7).abs() < 1e-9 && c.consistent);
        let c = combine(vec![r(Preference::A, 0.9), r(Preference::B, 0.6)]);
        assert_eq!(c.preferred, Preference::Tie);
        assert!((c.confidence - 0.6).abs() < 1e-9 && !c.consistent);
    }
}
