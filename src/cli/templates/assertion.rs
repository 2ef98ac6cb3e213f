//! {{name}}: an assay check type.
//!
//! In a suite: `{"id": "…", "type": "{{name}}", "word": "hello", "at_least": 2}` (clauditor
//! assertions), or under `x-assay-checks` (BMAD, clauditor, Skillet, UAAPS eval cases) or
//! `checks` (UAAPS tests).

use assay_plugin::{Deserialize, Plugin, Run, TypedAssertion, Value, Verdict, json};

struct WordCount;

/// The check's settings, stated once: assay refuses a suite whose settings do not fit, naming
/// the check, before anything runs.
#[derive(Deserialize)]
#[serde(crate = "assay_plugin::serde", deny_unknown_fields)]
struct Settings {
    /// The word to count.
    word: String,
    /// How many times at least (default 1).
    #[serde(default = "one")]
    at_least: usize,
}

fn one() -> usize {
    1
}

/// The check itself, apart from the plugin plumbing, so it can be tested natively.
fn count_word(text: &str, word: &str) -> usize {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.eq_ignore_ascii_case(word))
        .count()
}

impl TypedAssertion for WordCount {
    type Config = Settings;

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

    fn check(&self, s: &Settings) -> Result<(), String> {
        if s.word.is_empty() {
            return Err("`word` must not be empty: the word to count".into());
        }
        Ok(())
    }

    fn evaluate(&self, s: &Settings, run: &Run) -> Result<Verdict, String> {
        let n = count_word(&run.output(), &s.word);
        Ok(Verdict::new(
            n >= s.at_least,
            format!("{:?} appears {n} times, at least {} wanted", s.word, s.at_least),
        ))
    }
}

fn plugin() -> Plugin {
    Plugin::new().typed_assertion(WordCount)
}

assay_plugin::export!(plugin);

#[cfg(test)]
mod tests {
    use super::*;
    use assay_plugin::Assertion;

    #[test]
    fn counts_whole_words_ignoring_case() {
        assert_eq!(count_word("Hello, hello! Othello.", "hello"), 2);
        let check = assay_plugin::Typed(WordCount);
        assert!(check.validate(&json!({"word": ""})).is_err());
        assert!(check.validate(&json!({"wrod": "hi"})).is_err(), "a typo is an error");
        assert!(check.validate(&json!({"word": "hi"})).is_ok());
    }
}
