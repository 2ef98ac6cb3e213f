//! {{name}}: an assay check type.
//!
//! In a suite: `{"id": "…", "type": "{{name}}", "word": "hello", "at_least": 2}` (clauditor
//! assertions), or under `x-assay-checks` / `checks` in UAAPS cases.

use assay_plugin::{Assertion, Plugin, Run, Value, Verdict, json};

struct WordCount;

/// The check itself, apart from the plugin plumbing, so it can be tested natively.
fn count_word(text: &str, word: &str) -> usize {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.eq_ignore_ascii_case(word))
        .count()
}

impl Assertion for WordCount {
    fn name(&self) -> &str {
        "{{name}}"
    }

    fn summary(&self) -> &str {
        "the output uses a word at least N times"
    }

    fn config_schema(&self) -> Value {
        json!({
            "type": "object",
            "required": ["word"],
            "properties": {"word": {"type": "string"}, "at_least": {"type": "integer", "minimum": 1}}
        })
    }

    fn validate(&self, config: &Value) -> Result<(), String> {
        match config.get("word").and_then(Value::as_str) {
            Some(w) if !w.is_empty() => Ok(()),
            _ => Err("`word` is required: the word to count".into()),
        }
    }

    fn evaluate(&self, config: &Value, run: &Run) -> Result<Verdict, String> {
        let word = config.get("word").and_then(Value::as_str).unwrap_or_default();
        let wanted = config.get("at_least").and_then(Value::as_u64).unwrap_or(1) as usize;
        let n = count_word(&run.output(), word);
        Ok(Verdict::new(
            n >= wanted,
            format!("{word:?} appears {n} times, at least {wanted} wanted"),
        ))
    }
}

fn plugin() -> Plugin {
    Plugin::new().assertion(WordCount)
}

assay_plugin::export!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_whole_words_ignoring_case() {
        assert_eq!(count_word("Hello, hello! Othello.", "hello"), 2);
        assert!(WordCount.validate(&json!({"word": ""})).is_err());
        assert!(WordCount.validate(&json!({"word": "hi"})).is_ok());
    }
}
