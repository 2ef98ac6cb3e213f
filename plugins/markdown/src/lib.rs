//! Markdown check types: required headings (and their order), section word counts, table
//! rows, front matter keys. Each reads the output, or a workspace file with `file`.
//!
//! ```json
//! {"type": "md-headings", "headings": ["Summary", "Risks"], "ordered": true}
//! {"type": "md-section-words", "heading": "Summary", "min": 50, "max": 200}
//! {"type": "md-table-rows", "min": 3, "columns": ["Product", "Revenue"]}
//! {"type": "md-front-matter", "keys": ["title", "date"], "file": "post.md"}
//! ```

use assay_plugin::{Assertion, Plugin, Run, Value, Verdict, json};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

#[derive(Debug, Clone, PartialEq)]
pub struct Heading {
    pub level: u8,
    pub text: String,
    /// Words under this heading before the next heading of any level.
    pub own_words: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: usize,
    /// The heading it sits under, if any.
    pub under: Option<usize>,
}

#[derive(Debug, Default)]
pub struct Doc {
    pub headings: Vec<Heading>,
    pub tables: Vec<Table>,
    /// Words before the first heading.
    pub preamble_words: usize,
}

fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

/// Headings compare without case, surrounding space or trailing punctuation.
pub fn same_heading(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        s.trim()
            .trim_end_matches([':', '.', '!', '?'])
            .trim()
            .to_lowercase()
    };
    norm(a) == norm(b)
}

pub fn parse(text: &str) -> Doc {
    let mut doc = Doc::default();
    let opts = Options::ENABLE_TABLES | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let mut in_heading: Option<(u8, String)> = None;
    let mut in_meta = false;
    let mut table: Option<Table> = None;
    let mut cell = String::new();
    let mut in_head_row = false;
    for event in Parser::new_ext(text, opts) {
        match event {
            Event::Start(Tag::MetadataBlock(_)) => in_meta = true,
            Event::End(TagEnd::MetadataBlock(_)) => in_meta = false,
            Event::Start(Tag::Heading { level, .. }) => {
                in_heading = Some((level as u8, String::new()))
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, text)) = in_heading.take() {
                    doc.headings.push(Heading {
                        level,
                        text: text.trim().to_string(),
                        own_words: 0,
                    });
                }
            }
            Event::Start(Tag::Table(_)) => {
                table = Some(Table {
                    header: Vec::new(),
                    rows: 0,
                    under: doc.headings.len().checked_sub(1),
                })
            }
            Event::End(TagEnd::Table) => doc.tables.extend(table.take()),
            Event::Start(Tag::TableHead) => in_head_row = true,
            Event::End(TagEnd::TableHead) => in_head_row = false,
            Event::End(TagEnd::TableRow) => {
                if let Some(t) = table.as_mut() {
                    t.rows += 1;
                }
            }
            Event::Start(Tag::TableCell) => cell.clear(),
            Event::End(TagEnd::TableCell) => {
                if in_head_row && let Some(t) = table.as_mut() {
                    t.header.push(cell.trim().to_string());
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if in_meta {
                    continue;
                }
                if let Some((_, h)) = in_heading.as_mut() {
                    h.push_str(&t);
                    continue;
                }
                if table.is_some() {
                    cell.push_str(&t);
                }
                match doc.headings.last_mut() {
                    Some(h) => h.own_words += words(&t),
                    None => doc.preamble_words += words(&t),
                }
            }
            _ => {}
        }
    }
    doc
}

impl Doc {
    /// Words in a heading's section: its own and its subsections'.
    pub fn section_words(&self, i: usize) -> usize {
        let level = self.headings[i].level;
        let mut n = self.headings[i].own_words;
        for h in &self.headings[i + 1..] {
            if h.level <= level {
                break;
            }
            n += h.own_words;
        }
        n
    }

    pub fn find(&self, heading: &str) -> Option<usize> {
        self.headings
            .iter()
            .position(|h| same_heading(&h.text, heading))
    }
}

/// The keys of a YAML front matter block (`---` … `---` at the very top).
pub fn front_matter_keys(text: &str) -> Option<Vec<String>> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let end = rest
        .lines()
        .position(|l| l.trim_end() == "---" || l.trim_end() == "...")?;
    Some(
        rest.lines()
            .take(end)
            .filter(|l| !l.starts_with([' ', '\t', '-', '#']))
            .filter_map(|l| l.split_once(':').map(|(k, _)| k.trim().to_string()))
            .filter(|k| !k.is_empty())
            .collect(),
    )
}

fn strings(config: &Value, key: &str) -> Result<Vec<String>, String> {
    match config.get(key) {
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|v| {
                v.as_str()
                    .filter(|s| !s.trim().is_empty())
                    .map(str::to_string)
                    .ok_or_else(|| format!("`{key}` must list non-empty strings"))
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be a non-empty list of strings")),
        None => Err(format!("`{key}` is required")),
    }
}

fn count(config: &Value, key: &str) -> Result<Option<u64>, String> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("`{key}` must be a whole number ≥ 0")),
    }
}

fn only_keys(config: &Value, known: &[&str]) -> Result<(), String> {
    for k in config.as_object().into_iter().flat_map(|o| o.keys()) {
        if !known.contains(&k.as_str()) && k != "file" {
            return Err(format!(
                "unknown key `{k}` (known: {}, file)",
                known.join(", ")
            ));
        }
    }
    Ok(())
}

/// The text a check reads: the output, or `file` from the workspace.
fn text_of(config: &Value, run: &Run) -> Result<(String, String), Verdict> {
    match config.get("file").and_then(Value::as_str) {
        Some(f) => run
            .file_text(f)
            .map(|t| (t, f.to_string()))
            .ok_or_else(|| Verdict::new(false, format!("{f} is not in the workspace"))),
        None => Ok((run.output(), "the output".into())),
    }
}

struct Headings;
struct SectionWords;
struct TableRows;
struct FrontMatter;

/// The check logic on text, apart from the plugin plumbing.
pub fn headings(config: &Value, text: &str) -> Result<Verdict, String> {
    let wanted = strings(config, "headings")?;
    let ordered = config
        .get("ordered")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let doc = parse(text);
    let found: Vec<Option<usize>> = wanted.iter().map(|w| doc.find(w)).collect();
    let missing: Vec<&str> = wanted
        .iter()
        .zip(&found)
        .filter(|(_, f)| f.is_none())
        .map(|(w, _)| w.as_str())
        .collect();
    let present: Vec<String> = doc.headings.iter().map(|h| h.text.clone()).collect();
    if !missing.is_empty() {
        return Ok(
            Verdict::new(false, format!("missing heading(s): {}", missing.join(", ")))
                .with_evidence(format!("headings: {}", present.join(" | "))),
        );
    }
    let positions: Vec<usize> = found.into_iter().flatten().collect();
    if ordered && positions.windows(2).any(|w| w[0] > w[1]) {
        return Ok(Verdict::new(
            false,
            format!(
                "the headings are out of order; wanted {}",
                wanted.join(" → ")
            ),
        )
        .with_evidence(format!("headings: {}", present.join(" | "))));
    }
    Ok(Verdict::new(
        true,
        format!(
            "all {} heading(s) present{}",
            wanted.len(),
            if ordered { ", in order" } else { "" }
        ),
    ))
}

pub fn section_words(config: &Value, text: &str) -> Result<Verdict, String> {
    let heading = config
        .get("heading")
        .and_then(Value::as_str)
        .ok_or("`heading` is required")?;
    let (min, max) = (count(config, "min")?, count(config, "max")?);
    let doc = parse(text);
    let Some(i) = doc.find(heading) else {
        return Ok(Verdict::new(false, format!("no heading {heading:?}")));
    };
    let n = doc.section_words(i) as u64;
    let ok = min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m);
    let range = match (min, max) {
        (Some(a), Some(b)) => format!("{a}–{b}"),
        (Some(a), None) => format!("at least {a}"),
        (None, Some(b)) => format!("at most {b}"),
        (None, None) => "any number".into(),
    };
    Ok(Verdict::new(
        ok,
        format!("section {heading:?} has {n} words, {range} wanted"),
    ))
}

pub fn table_rows(config: &Value, text: &str) -> Result<Verdict, String> {
    let min = count(config, "min")?.unwrap_or(1);
    let max = count(config, "max")?;
    let columns = match config.get("columns") {
        Some(_) => strings(config, "columns")?,
        None => Vec::new(),
    };
    let under = config.get("heading").and_then(Value::as_str);
    let doc = parse(text);
    let section = under.map(|h| doc.find(h));
    if let Some(None) = section {
        return Ok(Verdict::new(
            false,
            format!("no heading {:?}", under.unwrap_or_default()),
        ));
    }
    let candidates: Vec<&Table> = doc
        .tables
        .iter()
        .filter(|t| match section.flatten() {
            Some(i) => t.under == Some(i),
            None => true,
        })
        .filter(|t| {
            columns
                .iter()
                .all(|c| t.header.iter().any(|h| same_heading(h, c)))
        })
        .collect();
    let ok = candidates
        .iter()
        .any(|t| t.rows as u64 >= min && max.is_none_or(|m| t.rows as u64 <= m));
    let seen = doc
        .tables
        .iter()
        .map(|t| format!("[{}] {} rows", t.header.join(", "), t.rows))
        .collect::<Vec<_>>()
        .join("; ");
    let msg = if ok {
        format!(
            "a table has {min}{} rows as wanted",
            max.map(|m| format!("–{m}")).unwrap_or_else(|| "+".into())
        )
    } else if candidates.is_empty() {
        format!(
            "no table{}{}",
            if columns.is_empty() {
                String::new()
            } else {
                format!(" with columns {}", columns.join(", "))
            },
            under.map(|h| format!(" under {h:?}")).unwrap_or_default()
        )
    } else {
        format!(
            "no table has {min}{} rows",
            max.map(|m| format!("–{m}"))
                .unwrap_or_else(|| " or more".into())
        )
    };
    let v = Verdict::new(ok, msg);
    Ok(if seen.is_empty() {
        v
    } else {
        v.with_evidence(seen)
    })
}

pub fn front_matter(config: &Value, text: &str) -> Result<Verdict, String> {
    let wanted = strings(config, "keys")?;
    let Some(keys) = front_matter_keys(text) else {
        return Ok(Verdict::new(
            false,
            "no front matter (a --- block at the top)",
        ));
    };
    let missing: Vec<&str> = wanted
        .iter()
        .filter(|w| !keys.iter().any(|k| k == *w))
        .map(String::as_str)
        .collect();
    Ok(if missing.is_empty() {
        Verdict::new(true, format!("front matter has {}", wanted.join(", ")))
    } else {
        Verdict::new(false, format!("front matter lacks {}", missing.join(", ")))
            .with_evidence(format!("keys: {}", keys.join(", ")))
    })
}

macro_rules! check_type {
    ($ty:ident, $name:literal, $summary:literal, $keys:expr, $f:path, $schema:expr) => {
        impl Assertion for $ty {
            fn name(&self) -> &str {
                $name
            }
            fn summary(&self) -> &str {
                $summary
            }
            fn config_schema(&self) -> Value {
                $schema
            }
            fn validate(&self, config: &Value) -> Result<(), String> {
                only_keys(config, $keys)?;
                // Run the check on an empty document: configuration errors surface now.
                $f(config, "").map(|_| ())
            }
            fn evaluate(&self, config: &Value, run: &Run) -> Result<Verdict, String> {
                match text_of(config, run) {
                    Ok((text, _)) => $f(config, &text),
                    Err(v) => Ok(v),
                }
            }
        }
    };
}

check_type!(
    Headings,
    "md-headings",
    "required Markdown headings, in order unless `ordered: false`",
    &["headings", "ordered"],
    headings,
    json!({"type": "object", "required": ["headings"], "properties": {"headings": {"type": "array", "items": {"type": "string"}}, "ordered": {"type": "boolean"}, "file": {"type": "string"}}})
);
check_type!(
    SectionWords,
    "md-section-words",
    "a section's word count is within `min`–`max`",
    &["heading", "min", "max"],
    section_words,
    json!({"type": "object", "required": ["heading"], "properties": {"heading": {"type": "string"}, "min": {"type": "integer"}, "max": {"type": "integer"}, "file": {"type": "string"}}})
);
check_type!(
    TableRows,
    "md-table-rows",
    "a table (optionally with these columns, under a heading) has `min`–`max` body rows",
    &["min", "max", "columns", "heading"],
    table_rows,
    json!({"type": "object", "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}, "columns": {"type": "array", "items": {"type": "string"}}, "heading": {"type": "string"}, "file": {"type": "string"}}})
);
check_type!(
    FrontMatter,
    "md-front-matter",
    "the YAML front matter has these keys",
    &["keys"],
    front_matter,
    json!({"type": "object", "required": ["keys"], "properties": {"keys": {"type": "array", "items": {"type": "string"}}, "file": {"type": "string"}}})
);

fn plugin() -> Plugin {
    Plugin::new()
        .assertion(Headings)
        .assertion(SectionWords)
        .assertion(TableRows)
        .assertion(FrontMatter)
}

assay_plugin::export!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "---\ntitle: Q3\ndate: 2026-10-01\n---\n# Report\n\nIntro words here.\n\n## Summary\n\nRevenue grew by ten percent this quarter.\n\n### Detail\n\nTwo more.\n\n## Products\n\n| Product | Revenue |\n|---|---|\n| Widget | $1 |\n| Gadget | $2 |\n\n## Risks\n\nNone.\n";

    #[test]
    fn headings_present_and_ordered() {
        assert!(
            headings(&json!({"headings": ["summary", "Risks:"]}), DOC)
                .unwrap()
                .passed
        );
        let v = headings(&json!({"headings": ["Risks", "Summary"]}), DOC).unwrap();
        assert!(!v.passed && v.message.contains("out of order"));
        assert!(
            headings(
                &json!({"headings": ["Risks", "Summary"], "ordered": false}),
                DOC
            )
            .unwrap()
            .passed
        );
        let v = headings(&json!({"headings": ["Costs"]}), DOC).unwrap();
        assert!(!v.passed && v.message.contains("Costs"));
        assert!(headings(&json!({}), DOC).is_err());
    }

    #[test]
    fn sections_count_their_subsections_words() {
        let v = section_words(&json!({"heading": "Summary", "min": 9}), DOC).unwrap();
        assert!(v.passed, "{}", v.message);
        assert!(v.message.contains("has 9 words"), "{}", v.message);
        assert!(
            !section_words(&json!({"heading": "Summary", "max": 5}), DOC)
                .unwrap()
                .passed
        );
    }

    #[test]
    fn tables_and_front_matter() {
        assert!(
            table_rows(&json!({"min": 2, "columns": ["product"]}), DOC)
                .unwrap()
                .passed
        );
        assert!(!table_rows(&json!({"min": 3}), DOC).unwrap().passed);
        assert!(
            table_rows(&json!({"heading": "Products"}), DOC)
                .unwrap()
                .passed
        );
        assert!(
            !table_rows(&json!({"heading": "Risks"}), DOC)
                .unwrap()
                .passed
        );
        assert!(
            front_matter(&json!({"keys": ["title", "date"]}), DOC)
                .unwrap()
                .passed
        );
        let v = front_matter(&json!({"keys": ["author"]}), DOC).unwrap();
        assert!(!v.passed && v.message.contains("author"));
        assert!(
            !front_matter(&json!({"keys": ["title"]}), "# No front matter")
                .unwrap()
                .passed
        );
    }
}
