//! The format registry: 20 named value formats, with clauditor's patterns.
//!
//! In an extraction field, a `format` that is not a registered name is an inline regex matched
//! against the whole value; `has_format` takes registered names only, as clauditor does.

/// A named format and the regex that recognises one value of it.
#[derive(Debug)]
pub struct NamedFormat {
    pub name: &'static str,
    pub pattern: &'static str,
    pub example: &'static str,
}

/// clauditor's patterns: matched whole for a field's `format`, found anywhere for `has_format`.
pub const REGISTRY: &[NamedFormat] = &[
    NamedFormat {
        name: "currency_eur",
        pattern: r#"€(?=[\d.,]*\d)[\d.,]+"#,
        example: "€12,50",
    },
    NamedFormat {
        name: "currency_usd",
        pattern: r#"\$(?=[\d,]*\d)[\d,]+(?:\.\d{2})?"#,
        example: "$1,234.56",
    },
    NamedFormat {
        name: "date_iso",
        pattern: r#"\d{4}-\d{2}-\d{2}"#,
        example: "2025-01-15",
    },
    NamedFormat {
        name: "date_us",
        pattern: r#"\d{1,2}/\d{1,2}/\d{2,4}"#,
        example: "1/15/2025",
    },
    NamedFormat {
        name: "domain",
        pattern: r#"(?i)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.[a-z]{2,}"#,
        example: "paesanosj.com",
    },
    NamedFormat {
        name: "email",
        pattern: r#"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}"#,
        example: "a@example.com",
    },
    NamedFormat {
        name: "hex_color",
        pattern: r#"#[0-9a-fA-F]{6}"#,
        example: "#ff8800",
    },
    NamedFormat {
        name: "ipv4",
        pattern: r#"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}"#,
        example: "192.168.1.1",
    },
    NamedFormat {
        name: "latitude",
        pattern: r#"-?\d{1,2}\.\d+"#,
        example: "37.3229",
    },
    NamedFormat {
        name: "longitude",
        pattern: r#"-?\d{1,3}\.\d+"#,
        example: "-122.0322",
    },
    NamedFormat {
        name: "percentage",
        pattern: r#"\d+(?:\.\d+)?%"#,
        example: "42.5%",
    },
    NamedFormat {
        name: "phone_intl",
        pattern: r#"\+\d{1,3}[\s.-]?\d{4,14}"#,
        example: "+44 2079460958",
    },
    NamedFormat {
        name: "phone_us",
        pattern: r#"\(?\d{3}\)?[\s.-]?\d{3}[\s.-]?\d{4}"#,
        example: "(408) 555-0123",
    },
    NamedFormat {
        name: "star_rating",
        pattern: r#"\d(?:\.\d)?\s?(?:stars?|★|⭐)"#,
        example: "4.5 stars",
    },
    NamedFormat {
        name: "time_12h",
        pattern: r#"\d{1,2}:\d{2}\s?[AaPp][Mm]"#,
        example: "9:30 AM",
    },
    NamedFormat {
        name: "time_24h",
        pattern: r#"\d{1,2}:\d{2}(?::\d{2})?"#,
        example: "21:30",
    },
    NamedFormat {
        name: "url",
        pattern: r#"https?://[^\s\)\"'>]+"#,
        example: "https://example.com/a",
    },
    NamedFormat {
        name: "uuid",
        pattern: r#"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"#,
        example: "123e4567-e89b-12d3-a456-426614174000",
    },
    NamedFormat {
        name: "zip_uk",
        pattern: r#"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}"#,
        example: "SW1A 1AA",
    },
    NamedFormat {
        name: "zip_us",
        pattern: r#"\d{5}(?:-\d{4})?"#,
        example: "95014",
    },
];

pub fn lookup(name: &str) -> Option<&'static NamedFormat> {
    REGISTRY.iter().find(|f| f.name == name)
}

pub fn names() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|f| f.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_formats_each_matching_its_example_whole() {
        assert_eq!(REGISTRY.len(), 20);
        for f in REGISTRY {
            let re = fancy_regex::Regex::new(&format!("^(?:{})$", f.pattern)).unwrap();
            assert!(
                re.is_match(f.example).unwrap(),
                "{} should match {}",
                f.name,
                f.example
            );
        }
    }
}
