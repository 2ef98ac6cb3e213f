//! What a harness plugin sends back (events and a turn's summary, as JSON) read into the
//! host's types. An error whose `category` is none of assay's is not refused (that would lose
//! the session id, the cost and the tokens beside it): it is the agent's own kind, counted as
//! the category the plugin declared for it (WIT 0.3.0 `error-kinds`), else as `agent`.

use serde_json::Value;

use super::provides::ErrorKind;
use crate::{
    harness::Event,
    record::agent::{ErrorCategory, TurnSummary},
};

/// A turn's summary, its error's own kind kept.
pub fn summary(json: &str, kinds: &[ErrorKind]) -> Result<TurnSummary, serde_json::Error> {
    let mut v: Value = serde_json::from_str(json)?;
    if let Some(err) = v.get_mut("error").and_then(Value::as_object_mut) {
        // The kind is assay's to set, from the category: never the plugin's own text.
        err.remove("kind");
        if let Some((category, kind)) = err.get("category").and_then(|c| own(c, kinds)) {
            err.insert("category".into(), category);
            err.insert("kind".into(), Value::String(kind));
        }
    }
    serde_json::from_value(v)
}

/// One event; an error event of the agent's own kind says the kind in its message.
pub fn event(json: &str, kinds: &[ErrorKind]) -> Result<Event, serde_json::Error> {
    let mut v: Value = serde_json::from_str(json)?;
    if v.get("type").and_then(Value::as_str) == Some("error")
        && let Some(obj) = v.as_object_mut()
        && let Some((category, kind)) = obj.get("category").and_then(|c| own(c, kinds))
    {
        let message = obj.get("message").and_then(Value::as_str).unwrap_or("");
        let message = format!("{kind}: {message}");
        obj.insert("message".into(), Value::String(message));
        obj.insert("category".into(), category);
    }
    serde_json::from_value(v)
}

/// For a category that is a string naming none of assay's: the category it counts as, and
/// the kind (printable, bounded: it is the plugin's text).
fn own(category: &Value, kinds: &[ErrorKind]) -> Option<(Value, String)> {
    let name = category.as_str()?;
    if ErrorCategory::named(name).is_some() {
        return None;
    }
    let counts = kinds
        .iter()
        .find(|k| k.name == name)
        .map_or(ErrorCategory::Agent, ErrorKind::category);
    let kind = crate::text::shorten(&crate::text::printable(name), 64);
    Some((serde_json::to_value(counts).ok()?, kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota() -> Vec<ErrorKind> {
        vec![ErrorKind {
            name: "quota".into(),
            summary: "the daily quota is spent".into(),
            counts_as: "rate-limit".into(),
        }]
    }

    #[test]
    fn an_own_error_kind_keeps_the_summary_and_counts_as_declared() {
        let json =
            r#"{"session_id":"s-1","cost_usd":0.5,"error":{"category":"quota","message":"spent"}}"#;
        let s = summary(json, &quota()).unwrap();
        assert_eq!(s.session_id.as_deref(), Some("s-1"));
        assert_eq!(s.cost_usd, Some(0.5));
        let err = s.error.unwrap();
        assert_eq!(err.category, ErrorCategory::RateLimit);
        assert_eq!(err.kind.as_deref(), Some("quota"));
        // Undeclared: still kept, counted as the agent's error.
        let s = summary(
            r#"{"session_id":"s-2","error":{"category":"melted","message":"x"}}"#,
            &[],
        )
        .unwrap();
        assert_eq!(s.session_id.as_deref(), Some("s-2"));
        let err = s.error.unwrap();
        assert_eq!(
            (err.category, err.kind.as_deref()),
            (ErrorCategory::Agent, Some("melted"))
        );
        // One of assay's own is as it was; a kind the plugin sets itself is not taken.
        let s = summary(
            r#"{"error":{"category":"crash","message":"x","kind":"\u001b[2Jforged"}}"#,
            &quota(),
        )
        .unwrap();
        assert_eq!(s.error.unwrap().kind, None);
    }

    #[test]
    fn an_error_event_of_an_own_kind_names_it() {
        let e = event(
            r#"{"type":"error","message":"spent","category":"quota"}"#,
            &quota(),
        )
        .unwrap();
        assert_eq!(
            e,
            Event::Error {
                message: "quota: spent".into(),
                category: Some(ErrorCategory::RateLimit)
            }
        );
    }
}
