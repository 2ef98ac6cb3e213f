//! What discovery needs to know of a BMAD JSON file before it is loaded: which shape it has
//! and the skill it names. Read without building the document (the keys that matter are kept,
//! everything else skipped), since the loader parses it again in full: a cases file of 100,000
//! cases is not built three times over to learn its shape.

use std::path::Path;

use serde::Deserialize;
use serde::de::{IgnoredAny, SeqAccess, Visitor};

/// The top of a BMAD JSON file.
#[derive(Debug, Default, PartialEq)]
pub struct Sniff {
    /// An object, with these keys.
    pub object: Option<TopKeys>,
    /// A list, with these keys on its first item (`None` when it is empty or not an object).
    pub first_item: Option<ItemKeys>,
}

#[derive(Debug, Default, PartialEq, Deserialize)]
pub struct TopKeys {
    #[serde(default)]
    cases: Option<IgnoredAny>,
    #[serde(default)]
    evals: Option<IgnoredAny>,
    #[serde(default)]
    queries: Option<IgnoredAny>,
    #[serde(default)]
    skill_name: Option<serde_json::Value>,
}

#[derive(Debug, Default, PartialEq, Deserialize)]
pub struct ItemKeys {
    #[serde(default)]
    input: Option<IgnoredAny>,
    #[serde(default)]
    query: Option<IgnoredAny>,
    #[serde(default)]
    should_trigger: Option<IgnoredAny>,
}

impl Sniff {
    /// The file's top, or `None` when it cannot be read or is neither an object nor a list.
    pub fn of(file: &Path) -> Option<Sniff> {
        let text = std::fs::read_to_string(file).ok()?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        match text.trim_start().as_bytes().first()? {
            b'{' => Some(Sniff {
                object: Some(top_keys(text)?),
                first_item: None,
            }),
            b'[' => {
                let FirstItem(first) = serde_json::from_str(text).ok()?;
                Some(Sniff {
                    object: None,
                    first_item: first,
                })
            }
            _ => None,
        }
    }

    /// A list of trigger queries (its first item has `query` or `should_trigger`), or an
    /// object holding them under `queries` (and no `evals` or `cases`).
    pub fn is_triggers(&self) -> bool {
        let list = self
            .first_item
            .as_ref()
            .is_some_and(|i| i.query.is_some() || i.should_trigger.is_some());
        let object = self
            .object
            .as_ref()
            .is_some_and(|o| o.queries.is_some() && o.evals.is_none() && o.cases.is_none());
        list || object
    }

    /// The current runner's cases: an object with `cases` (and no `evals`), or a list whose
    /// first item has `input`.
    pub fn is_cases(&self) -> bool {
        match (&self.object, &self.first_item) {
            (Some(o), _) => o.cases.is_some() && o.evals.is_none(),
            (None, Some(i)) => i.input.is_some(),
            (None, None) => false,
        }
    }

    /// BenchFlow's `evals.json`: an object with `cases` (each a `question`, `ground_truth`,
    /// `expected_behavior`) and no `evals`; a benchmark of another runner, not
    /// skill-creator's file of the same name.
    pub fn is_benchflow(&self) -> bool {
        self.object
            .as_ref()
            .is_some_and(|o| o.cases.is_some() && o.evals.is_none())
    }

    /// The `skill_name` the file gives, when it is a string.
    pub fn skill_name(&self) -> Option<&str> {
        self.object.as_ref()?.skill_name.as_ref()?.as_str()
    }
}

/// An object's keys that matter. A key written twice (which the loader reports) makes the
/// quick read fail; the whole document then says, as the last of each key wins.
fn top_keys(text: &str) -> Option<TopKeys> {
    serde_json::from_str(text).ok().or_else(|| {
        let v: serde_json::Value = serde_json::from_str(text).ok()?;
        let has = |k: &str| v.get(k).map(|_| IgnoredAny);
        Some(TopKeys {
            cases: has("cases"),
            evals: has("evals"),
            queries: has("queries"),
            skill_name: v.get("skill_name").cloned(),
        })
    })
}

/// A list's first item's keys, the rest skipped.
struct FirstItem(Option<ItemKeys>);

impl<'de> Deserialize<'de> for FirstItem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct First;
        impl<'de> Visitor<'de> for First {
            type Value = FirstItem;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FirstItem, A::Error> {
                // The first item as an object's keys; anything else counts as no keys.
                let first = seq
                    .next_element::<serde_json::Value>()?
                    .and_then(|v| serde_json::from_value::<ItemKeys>(v).ok());
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstItem(first))
            }
        }
        d.deserialize_seq(First)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniff(text: &str) -> Option<Sniff> {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("x.json");
        std::fs::write(&f, text).unwrap();
        Sniff::of(&f)
    }

    #[test]
    fn shapes_and_the_skill_name_are_told_without_building_the_document() {
        let cases = sniff(r#"{"skill_name": "brief", "cases": [{"id": 1}]}"#).unwrap();
        assert!(cases.is_cases() && !cases.is_triggers());
        assert_eq!(cases.skill_name(), Some("brief"));
        assert!(!sniff(r#"{"cases": [], "evals": []}"#).unwrap().is_cases());
        assert!(sniff(r#"[{"input": "i"}, 5, "x"]"#).unwrap().is_cases());
        let triggers = sniff(r#"[{"query": "q", "should_trigger": true}]"#).unwrap();
        assert!(triggers.is_triggers() && !triggers.is_cases());
        let object = sniff(r#"{"skill_name": "b", "queries": [{"query": "q"}]}"#).unwrap();
        assert!(object.is_triggers() && !object.is_cases());
        assert!(
            !sniff(r#"{"evals": [], "queries": []}"#)
                .unwrap()
                .is_triggers()
        );
        assert!(!sniff("[5, {\"input\": 1}]").unwrap().is_cases());
        assert_eq!(sniff(r#"{"skill_name": 3}"#).unwrap().skill_name(), None);
        assert_eq!(
            sniff("\u{feff}{\"skill_name\": \"b\"}")
                .unwrap()
                .skill_name(),
            Some("b")
        );
        assert!(sniff("{not json").is_none());
        assert!(sniff("\"text\"").is_none());
        // A key written twice: still told, so the loader can report it.
        assert!(sniff(r#"{"cases": [], "cases": []}"#).unwrap().is_cases());
    }
}
