//! Which item of a judge's reply grades which criterion or expectation.
//!
//! Judges name what they grade in different ways: assay asks for ids, clauditor's grader
//! writes the criterion's text (`{"criterion": "Are venues appropriate…?", …}`) and no id,
//! skill-creator's `grading.json` has each expectation's `text`, and some models just answer
//! in order. So an item is matched by its id, else by its text (trimmed, case and runs of
//! whitespace ignored), else by its position among the items left over when the reply has
//! exactly one item per wanted one. A reply is refused only when something stays unmatched, is graded twice, or an item
//! grades nothing asked for.

use serde_json::Value;

/// One thing the judge was asked to grade.
#[derive(Debug, Clone, Copy)]
pub struct Wanted<'a> {
    /// The criterion's id; expectations have none.
    pub id: Option<&'a str>,
    pub text: &'a str,
}

/// The vocabulary of a kind of item: what it is called in messages and which keys of a
/// reply item may hold its text.
#[derive(Debug, Clone, Copy)]
pub struct ItemKind {
    pub singular: &'static str,
    pub plural: &'static str,
    pub text_keys: &'static [&'static str],
}

pub const CRITERION: ItemKind = ItemKind {
    singular: "criterion",
    plural: "criteria",
    text_keys: &["criterion", "text"],
};

pub const EXPECTATION: ItemKind = ItemKind {
    singular: "expectation",
    plural: "expectations",
    text_keys: &["text", "expectation", "criterion"],
};

/// Text compared without surrounding or repeated whitespace, and without case.
fn normalize(s: &str) -> String {
    s.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

fn id_of(item: &Value) -> Option<&str> {
    item.get("id")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn texts_of(item: &Value, kind: ItemKind) -> Vec<String> {
    kind.text_keys
        .iter()
        .filter_map(|k| item.get(*k).and_then(Value::as_str))
        .map(normalize)
        .filter(|s| !s.is_empty())
        .collect()
}

/// How `w` is named in messages.
fn name(w: &Wanted<'_>, kind: ItemKind) -> String {
    match w.id {
        Some(id) => format!("{} `{id}`", kind.singular),
        None => format!("{} {:?}", kind.singular, w.text),
    }
}

/// The reply item for each wanted item, in the wanted order.
pub fn match_items<'v>(
    items: &'v [Value],
    wanted: &[Wanted<'_>],
    kind: ItemKind,
) -> Result<Vec<&'v Value>, String> {
    let mut chosen: Vec<Option<usize>> = vec![None; wanted.len()];
    let mut used = vec![false; items.len()];

    // By id: an id is exact, so two items with one id are a contradiction.
    for (w, slot) in wanted.iter().zip(chosen.iter_mut()) {
        let Some(id) = w.id else { continue };
        let found: Vec<usize> = (0..items.len())
            .filter(|&i| id_of(&items[i]) == Some(id.trim()))
            .collect();
        match found.as_slice() {
            [] => {}
            [i] => {
                *slot = Some(*i);
                used[*i] = true;
            }
            more => {
                return Err(format!("{} is graded {} times", name(w, kind), more.len()));
            }
        }
    }

    // By text, among the items not taken by id. Wanted items with the same text take the
    // matching items in order.
    let item_texts: Vec<Vec<String>> = items.iter().map(|i| texts_of(i, kind)).collect();
    for (w, slot) in wanted.iter().zip(chosen.iter_mut()) {
        if slot.is_some() {
            continue;
        }
        let text = normalize(w.text);
        if let Some(i) = (0..items.len()).find(|&i| !used[i] && item_texts[i].contains(&text)) {
            *slot = Some(i);
            used[i] = true;
        }
    }

    // By position, only when the reply has one item per wanted item: the items left over
    // grade the wanted items left over, in order.
    if items.len() == wanted.len() {
        let free: Vec<usize> = (0..items.len()).filter(|&i| !used[i]).collect();
        let open = chosen.iter_mut().filter(|c| c.is_none());
        for (slot, i) in open.zip(free) {
            *slot = Some(i);
            used[i] = true;
        }
    }

    if let Some(missing) = wanted.iter().zip(&chosen).find(|(_, c)| c.is_none()) {
        return Err(format!(
            "{} is not graded: no item names it by id or text{}",
            name(missing.0, kind),
            if items.len() == wanted.len() {
                ""
            } else {
                " (and the reply has a different number of items, so position cannot tell)"
            }
        ));
    }
    if let Some(extra) = used.iter().position(|u| !u) {
        let item = &items[extra];
        let said = id_of(item)
            .map(|id| format!("id `{id}`"))
            .or_else(|| texts_of(item, kind).first().map(|t| format!("{t:?}")))
            .unwrap_or_else(|| format!("item {}", extra + 1));
        return Err(format!(
            "{} {} graded, {} given: {said} is graded twice or was not asked for",
            items.len(),
            kind.plural,
            wanted.len()
        ));
    }
    Ok(chosen
        .into_iter()
        .map(|c| &items[c.expect("every wanted item is matched above")])
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn criteria() -> Vec<Wanted<'static>> {
        vec![
            Wanted {
                id: Some("distance_match"),
                text: "Are all venues within the specified distance?",
            },
            Wanted {
                id: Some("age_appropriate"),
                text: "Are venues appropriate for the specified age range?",
            },
        ]
    }

    fn scores(v: &Value, wanted: &[Wanted<'_>]) -> Result<Vec<f64>, String> {
        let items = v.as_array().unwrap();
        Ok(match_items(items, wanted, CRITERION)?
            .into_iter()
            .map(|i| i["score"].as_f64().unwrap())
            .collect())
    }

    #[test]
    fn ids_win_whatever_the_order() {
        let v = json!([
            {"id": "age_appropriate", "score": 0.2},
            {"id": "distance_match", "score": 0.9}
        ]);
        assert_eq!(scores(&v, &criteria()).unwrap(), [0.9, 0.2]);
    }

    #[test]
    fn clauditors_text_named_items_match_by_text_in_any_order_and_case() {
        let v = json!([
            {"criterion": "  are venues appropriate for the specified   AGE range?", "passed": true, "score": 0.3},
            {"criterion": "Are all venues within the specified distance?", "passed": true, "score": 0.9}
        ]);
        assert_eq!(scores(&v, &criteria()).unwrap(), [0.9, 0.3]);
    }

    #[test]
    fn unnamed_or_reworded_items_match_by_position_when_the_counts_agree() {
        let v = json!([{"score": 0.1}, {"criterion": "Age OK?", "score": 0.8}]);
        assert_eq!(scores(&v, &criteria()).unwrap(), [0.1, 0.8]);
        // An id and a text take theirs first; the rest go by position.
        let v = json!([{"criterion": "reworded", "score": 0.5}, {"id": "distance_match", "score": 0.7}]);
        assert_eq!(scores(&v, &criteria()).unwrap(), [0.7, 0.5]);
    }

    #[test]
    fn what_cannot_be_matched_is_refused_with_the_reason() {
        // Too few, unnamed: position cannot tell.
        let err = scores(&json!([{"score": 0.1}]), &criteria()).unwrap_err();
        assert!(err.contains("`distance_match` is not graded"), "{err}");
        assert!(err.contains("different number"), "{err}");
        // One id twice.
        let err = scores(
            &json!([{"id": "distance_match", "score": 0.1}, {"id": "distance_match", "score": 0.2}]),
            &criteria(),
        )
        .unwrap_err();
        assert!(err.contains("graded 2 times"), "{err}");
        // Graded by id and again by text: the text copy is one too many.
        let err = scores(
            &json!([
                {"id": "distance_match", "score": 0.1},
                {"criterion": "Are all venues within the specified distance?", "score": 0.2},
                {"id": "age_appropriate", "score": 0.3}
            ]),
            &criteria(),
        )
        .unwrap_err();
        assert!(err.contains("3 criteria graded, 2 given"), "{err}");
        // An extra criterion nobody asked for.
        let err = scores(
            &json!([
                {"id": "distance_match", "score": 0.1},
                {"id": "age_appropriate", "score": 0.3},
                {"id": "made_up", "score": 1.0}
            ]),
            &criteria(),
        )
        .unwrap_err();
        assert!(err.contains("`made_up`"), "{err}");
    }

    #[test]
    fn expectations_with_the_same_text_take_items_in_order() {
        let wanted = [
            Wanted {
                id: None,
                text: "a",
            },
            Wanted {
                id: None,
                text: "b",
            },
            Wanted {
                id: None,
                text: "a",
            },
        ];
        let items = json!([
            {"text": "B", "n": 1},
            {"text": "a", "n": 2},
            {"expectation": "a", "n": 3}
        ]);
        let got: Vec<i64> = match_items(items.as_array().unwrap(), &wanted, EXPECTATION)
            .unwrap()
            .into_iter()
            .map(|i| i["n"].as_i64().unwrap())
            .collect();
        assert_eq!(got, [2, 1, 3]);
    }
}
