//! clauditor L2's deterministic half: after the judge has extracted entries
//! ([`crate::judge::extract`]), count them per tier (`count_min`, and `count_max` when
//! `max_entries` is set) and test every entry's fields: required ones present and non-empty,
//! and a present value fully matching the field's `format` (a registered name, or an inline
//! regex). Field checks run over all entries even when a count fails, so both show.

use fancy_regex::Regex;

use super::formats::{Formats, ValueFormat, full_match};
use crate::record::grading::CheckOutcome;
use crate::record::grading::Extraction;
use crate::suite::{Field, Section, Tier};

fn outcome(
    id: String,
    kind: &str,
    passed: bool,
    message: String,
    evidence: Option<String>,
) -> CheckOutcome {
    CheckOutcome {
        id,
        kind: kind.to_string(),
        passed,
        message,
        evidence,
        weight: 1.0,
        negated: false,
        error: None,
        log: None,
        provider: None,
    }
}

/// How a field format matches a value: a named format (built in or a plugin's), or the text
/// taken as a regex of its own.
enum Matcher<'a> {
    Named(Box<dyn ValueFormat + 'a>),
    Regex(Regex),
}

impl Matcher<'_> {
    fn matches(&self, value: &str) -> bool {
        match self {
            Matcher::Named(f) => f.matches(value).unwrap_or(false),
            Matcher::Regex(re) => re.is_match(value).unwrap_or(false),
        }
    }
}

/// Every L2 outcome for an extraction, in spec order, field formats from `formats`.
pub fn check(
    sections: &[Section],
    extraction: &Extraction,
    formats: &Formats,
) -> Vec<CheckOutcome> {
    let mut out = Vec::new();
    for (sec, got) in sections.iter().zip(&extraction.sections) {
        for (tier, got) in sec.tiers.iter().zip(&got.tiers) {
            let place = format!("{}/{}", sec.name, tier.label);
            out.extend(counts(tier, got.entries.len() as u64, &place));
            for field in &tier.fields {
                let values: Vec<Option<&str>> = got
                    .entries
                    .iter()
                    .map(|e| e.get(&field.name).and_then(|v| v.as_deref()))
                    .collect();
                if field.required {
                    out.push(required(field, &values, &place));
                }
                if let Some(format) = &field.format {
                    out.push(formatted(field, format, &values, &place, formats));
                }
            }
        }
    }
    out
}

/// A tier's entry count against its `min_entries` (and `max_entries`, when set).
fn counts(tier: &Tier, n: u64, place: &str) -> Vec<CheckOutcome> {
    let mut out = vec![outcome(
        format!("{place}:count_min"),
        "count_min",
        n >= tier.min_entries,
        format!(
            "{n} entries extracted from {place}, at least {} wanted",
            tier.min_entries
        ),
        None,
    )];
    if let Some(max) = tier.max_entries {
        out.push(outcome(
            format!("{place}:count_max"),
            "count_max",
            n <= max,
            format!("{n} entries extracted from {place}, at most {max} wanted"),
            None,
        ));
    }
    out
}

/// A required field: present and not blank in every entry (`values`, one per entry).
fn required(field: &Field, values: &[Option<&str>], place: &str) -> CheckOutcome {
    let n = values.len();
    let missing: Vec<String> = values
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_none_or(|s| s.trim().is_empty()))
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    outcome(
        format!("{}:required", field.id),
        "field_required",
        missing.is_empty(),
        if missing.is_empty() {
            format!("`{}` is present in all {n} entries of {place}", field.name)
        } else {
            format!(
                "`{}` is missing from entr{} {} of {place}",
                field.name,
                if missing.len() == 1 { "y" } else { "ies" },
                missing.join(", ")
            )
        },
        None,
    )
}

/// A field with a `format`: every present value matches it fully.
fn formatted(
    field: &Field,
    format: &str,
    values: &[Option<&str>],
    place: &str,
    formats: &Formats,
) -> CheckOutcome {
    let re = match formats.get(format) {
        Some(f) => Ok(Matcher::Named(f)),
        None => full_match(format).map(Matcher::Regex),
    };
    let re = match re {
        Ok(re) => re,
        Err(e) => {
            let mut o = outcome(
                format!("{}:format", field.id),
                "field_format",
                false,
                format!("not evaluated: {e}"),
                None,
            );
            o.error = Some(e);
            return o;
        }
    };
    let bad: Vec<String> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let v = (*v)?;
            (!re.matches(v)).then(|| format!("entry {}: {v:?}", i + 1))
        })
        .collect();
    let checked = values.iter().flatten().count();
    outcome(
        format!("{}:format", field.id),
        "field_format",
        bad.is_empty(),
        if bad.is_empty() {
            format!(
                "all {checked} `{}` values of {place} are {format}",
                field.name
            )
        } else {
            format!(
                "{} of {checked} `{}` values of {place} are not {format}",
                bad.len(),
                field.name
            )
        },
        (!bad.is_empty()).then(|| bad.join("; ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::extract::parse;
    use crate::suite::{Field, Tier};
    use serde_json::json;

    fn field(id: &str, required: bool, format: Option<&str>) -> Field {
        Field {
            id: id.into(),
            name: id.into(),
            required,
            format: format.map(Into::into),
        }
    }

    fn restaurants() -> Vec<Section> {
        vec![Section {
            name: "Restaurants".into(),
            tiers: vec![Tier {
                label: "default".into(),
                description: None,
                min_entries: 1,
                max_entries: Some(3),
                fields: vec![
                    field("name", true, None),
                    field("phone", true, Some("phone_us")),
                    field("website", true, Some("domain")),
                    field("zip", false, Some(r"^\d{5}$")),
                ],
            }],
        }]
    }

    fn run(entries: serde_json::Value) -> Vec<CheckOutcome> {
        let s = restaurants();
        let x = parse(&json!({"Restaurants": {"default": entries}}), &s).unwrap();
        check(&s, &x, &Formats::default())
    }

    fn by_id<'a>(o: &'a [CheckOutcome], id: &str) -> &'a CheckOutcome {
        o.iter()
            .find(|c| c.id == id)
            .unwrap_or_else(|| panic!("{id} in {o:#?}"))
    }

    #[test]
    fn counts_required_fields_and_formats() {
        let good = json!([{"name": "Paesano", "phone": "(408) 555-0123", "website": "paesanosj.com", "zip": "95112"}]);
        let o = run(good);
        assert!(o.iter().all(|c| c.passed), "{o:#?}");
        assert_eq!(
            o.len(),
            2 + 3 + 3,
            "count_min, count_max, 3 required, 3 formats"
        );

        let many = json!([
            {"name": "A", "phone": "(408) 555-0123", "website": "a.com"},
            {"name": "", "phone": "call us", "website": "https://b.com/", "zip": "9511"},
            {"name": "C", "phone": "(408) 555-0199", "website": "c.com"},
            {"name": "D", "phone": "(408) 555-0100", "website": "d.com"}
        ]);
        let o = run(many);
        assert!(!by_id(&o, "Restaurants/default:count_max").passed);
        assert!(by_id(&o, "Restaurants/default:count_min").passed);
        let name = by_id(&o, "name:required");
        assert!(!name.passed && name.message.contains("entry 2"), "{name:?}");
        let phone = by_id(&o, "phone:format");
        assert!(!phone.passed && phone.evidence.as_deref() == Some("entry 2: \"call us\""));
        assert!(
            !by_id(&o, "website:format").passed,
            "a URL is not a bare domain"
        );
        // Optional, absent values are not format-checked; a present one must match in full.
        assert!(!by_id(&o, "zip:format").passed);

        let none = run(json!([]));
        assert!(!by_id(&none, "Restaurants/default:count_min").passed);
        assert!(
            by_id(&none, "name:required").passed,
            "no entries, nothing missing"
        );
    }

    #[test]
    fn formats_match_in_full() {
        let formats = Formats::default();
        let zip = formats.get("zip_us").unwrap();
        assert!(zip.matches("95112").unwrap());
        assert!(!zip.matches("95112 CA").unwrap());
        let inline = full_match(r"\d{3}").unwrap();
        assert!(!inline.is_match("1234").unwrap() && inline.is_match("123").unwrap());
    }
}
