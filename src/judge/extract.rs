//! clauditor L2 extraction: the judge turns the output into JSON by the spec's sections, tiers
//! and fields; deterministic checks ([`crate::assert::fields`]) then count entries and test
//! fields. The judge only transcribes here — it never decides a verdict.

use std::collections::BTreeMap;

use serde_json::Value;

use super::fence::{FENCE_RULE, bounded, fence};
use super::modes::{GradeError, ask_valid};
use super::provider::{Judge, Prompt};
use crate::suite::Section;

use crate::record::grading::{ExtractedSection, ExtractedTier, Extraction};

const SYSTEM: &str = "You extract structured data from documents, exactly as written. You never invent, complete \
or correct values: a value that is not in the document is null. Reply with JSON only, in exactly the shape asked for.";

fn describe(sections: &[Section]) -> String {
    let mut s = String::new();
    for sec in sections {
        s.push_str(&format!("- section {:?}\n", sec.name));
        for t in &sec.tiers {
            s.push_str(&format!("  - tier {:?}", t.label));
            if let Some(d) = &t.description {
                s.push_str(&format!(": {d}"));
            }
            let names: Vec<String> = t.fields.iter().map(|f| format!("{:?}", f.name)).collect();
            s.push_str(&format!("; fields per entry: {}\n", names.join(", ")));
        }
    }
    s
}

/// Extracts the sections' entries from the output.
pub async fn extract(
    judge: &Judge,
    output: &str,
    sections: &[Section],
) -> Result<Extraction, GradeError> {
    let user = format!(
        "{FENCE_RULE}\n\n## The document\n{}\n\n## What to extract\n{}\n\
Find each section in the document and list its entries (the items it enumerates). When a section has several tiers, \
put each entry in the tier it belongs to. For every entry give each listed field's value verbatim as a string, or \
null when the entry does not state it.\n\nReply with JSON only:\n\
{{\"sections\": {{\"<section name>\": {{\"<tier label>\": [{{\"<field name>\": \"<value>\" | null}}]}}}}}}\n\
with every section and every tier present (an empty list when there are no entries).",
        fence("untrusted-output", &bounded(output, 40_000)),
        describe(sections)
    );
    let prompt = Prompt {
        system: SYSTEM.into(),
        user,
        max_tokens: 8192,
    };
    ask_valid(judge, prompt, |v| parse(v, sections)).await
}

/// Validates the judge's answer strictly: every section and tier exactly as named, entries as
/// objects of strings (numbers and booleans are taken as their text) or nulls.
pub fn parse(v: &Value, sections: &[Section]) -> Result<Extraction, String> {
    let all = v
        .get("sections")
        .unwrap_or(v)
        .as_object()
        .ok_or("no `sections` object")?;
    let mut out = Vec::new();
    for sec in sections {
        let got = all
            .get(&sec.name)
            .ok_or(format!("section {:?} is missing", sec.name))?;
        let mut tiers = Vec::new();
        for t in &sec.tiers {
            // A one-tier section may come back as a bare list.
            let list = match got {
                Value::Array(a) if sec.tiers.len() == 1 => a,
                Value::Object(o) => o.get(&t.label).and_then(Value::as_array).ok_or(format!(
                    "tier {:?} of section {:?} is missing or not a list",
                    t.label, sec.name
                ))?,
                _ => return Err(format!("section {:?} is not an object of tiers", sec.name)),
            };
            let mut entries = Vec::new();
            for (i, e) in list.iter().enumerate() {
                let obj = e.as_object().ok_or(format!(
                    "entry {} of {:?}/{:?} is not an object",
                    i + 1,
                    sec.name,
                    t.label
                ))?;
                let mut entry = BTreeMap::new();
                for f in &t.fields {
                    let value = match obj.get(&f.name) {
                        None | Some(Value::Null) => None,
                        Some(Value::String(s)) => Some(s.clone()),
                        Some(Value::Number(n)) => Some(n.to_string()),
                        Some(Value::Bool(b)) => Some(b.to_string()),
                        Some(_) => {
                            return Err(format!(
                                "field {:?} of entry {} in {:?}/{:?} is not a string",
                                f.name,
                                i + 1,
                                sec.name,
                                t.label
                            ));
                        }
                    };
                    entry.insert(f.name.clone(), value);
                }
                entries.push(entry);
            }
            tiers.push(ExtractedTier {
                label: t.label.clone(),
                entries,
            });
        }
        out.push(ExtractedSection {
            name: sec.name.clone(),
            tiers,
        });
    }
    Ok(Extraction { sections: out })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Field, Tier};
    use serde_json::json;

    fn venues() -> Vec<Section> {
        vec![Section {
            name: "Venues".into(),
            tiers: vec![Tier {
                label: "default".into(),
                description: None,
                min_entries: 1,
                max_entries: None,
                fields: vec![
                    Field {
                        id: "n".into(),
                        name: "name".into(),
                        required: true,
                        format: None,
                    },
                    Field {
                        id: "p".into(),
                        name: "phone".into(),
                        required: false,
                        format: Some("phone_us".into()),
                    },
                ],
            }],
        }]
    }

    #[test]
    fn answers_are_validated_strictly() {
        let ok = json!({"sections": {"Venues": {"default": [{"name": "A", "phone": 4085550123u64}, {"name": "B"}]}}});
        let x = parse(&ok, &venues()).unwrap();
        let e = &x.sections[0].tiers[0].entries;
        assert_eq!(e[0]["phone"].as_deref(), Some("4085550123"));
        assert_eq!(e[1]["phone"], None);
        // A bare list for a one-tier section.
        assert!(parse(&json!({"Venues": [{"name": "A"}]}), &venues()).is_ok());
        assert!(
            parse(&json!({"sections": {}}), &venues())
                .unwrap_err()
                .contains("missing")
        );
        assert!(parse(&json!({"sections": {"Venues": {"other": []}}}), &venues()).is_err());
        assert!(
            parse(
                &json!({"sections": {"Venues": {"default": ["A"]}}}),
                &venues()
            )
            .is_err()
        );
        assert!(
            parse(
                &json!({"sections": {"Venues": {"default": [{"name": {"x": 1}}]}}}),
                &venues()
            )
            .is_err()
        );
    }
}
