//! YAML text → [`Node`] tree with spans, using saphyr's event parser and the YAML 1.2 core schema.
//!
//! We build the tree ourselves (rather than use a loader) to keep key spans, reject duplicate
//! keys, and bound depth and alias expansion so no input can exhaust memory or the stack.

use std::collections::HashMap;
use std::sync::Arc;

use saphyr_parser::{Event, Parser, ScalarStyle, Span as YSpan};

use super::node::{Key, KeySet, Node, Source, Span, Value};
use crate::diag::Problem;

/// Deeper nesting than this is certainly not an eval file.
const MAX_DEPTH: usize = 128;
/// Total nodes, counting each alias expansion, so `&a [*a, *a, …]` bombs stop early.
const MAX_NODES: usize = 1_000_000;

enum Frame {
    Seq {
        start: usize,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        start: usize,
        anchor: usize,
        entries: Vec<(Key, Node)>,
        keys: KeySet,
        key: Option<Node>,
    },
}

/// Parses a single-document YAML file.
pub fn parse(source: &Arc<Source>) -> (Option<Node>, Vec<Problem>) {
    let mut problems = Vec::new();
    let offsets = CharOffsets::new(&source.text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, (Node, usize)> = HashMap::new();
    let mut root: Option<Node> = None;
    let mut documents = 0;
    let mut budget = MAX_NODES;

    let fail = |problems: &mut Vec<Problem>, at: usize, msg: String| {
        problems.push(Problem::error("syntax", &source.path, msg).at(source, Span::new(at, at)));
    };

    for item in Parser::new_from_str(&source.text) {
        let (event, yspan) = match item {
            Ok(ev) => ev,
            Err(e) => {
                let at = offsets.byte(e.marker().index());
                fail(&mut problems, at, format!("invalid YAML: {}", e.info()));
                return (None, problems);
            }
        };
        let span = span_of(&offsets, &yspan);
        let finished: Option<(Node, usize)> = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    fail(
                        &mut problems,
                        span.start,
                        "the file holds more than one YAML document; an eval file is one document"
                            .into(),
                    );
                    return (None, problems);
                }
                None
            }
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag.map(|t| t.suffix.clone());
                Some((
                    Node {
                        value: resolve_scalar(&text, style, tag.as_deref()),
                        span,
                    },
                    anchor,
                ))
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some((node, size)) => {
                    if *size > budget {
                        fail(
                            &mut problems,
                            span.start,
                            "YAML aliases expand to more than a million values; refusing to load"
                                .into(),
                        );
                        return (None, problems);
                    }
                    budget -= size;
                    Some((node.clone(), 0))
                }
                None => {
                    fail(
                        &mut problems,
                        span.start,
                        "YAML alias refers to an unknown anchor".into(),
                    );
                    return (None, problems);
                }
            },
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    fail(
                        &mut problems,
                        span.start,
                        format!("nesting deeper than {MAX_DEPTH} levels"),
                    );
                    return (None, problems);
                }
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Frame::Seq {
                        start: span.start,
                        anchor,
                        items: Vec::new(),
                    }
                } else {
                    Frame::Map {
                        start: span.start,
                        anchor,
                        entries: Vec::new(),
                        keys: KeySet::default(),
                        key: None,
                    }
                });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq {
                    start,
                    anchor,
                    items,
                }) => Some((
                    Node {
                        value: Value::Seq(items),
                        span: Span::new(start, span.end),
                    },
                    anchor,
                )),
                Some(Frame::Map {
                    start,
                    anchor,
                    entries,
                    ..
                }) => Some((
                    Node {
                        value: Value::Map(entries),
                        span: Span::new(start, span.end),
                    },
                    anchor,
                )),
                None => None,
            },
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => None,
        };

        let Some((node, anchor)) = finished else {
            continue;
        };
        if budget == 0 {
            fail(
                &mut problems,
                span.start,
                "the document holds more than a million values".into(),
            );
            return (None, problems);
        }
        budget -= 1;
        if anchor != 0 {
            let size = count(&node);
            anchors.insert(anchor, (node.clone(), size));
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                entries, key, keys, ..
            }) => match key.take() {
                None => *key = Some(node),
                Some(k) => {
                    let name = match &k.value {
                        Value::Str(s) => s.clone(),
                        Value::Int(i) => i.to_string(),
                        Value::Bool(b) => b.to_string(),
                        Value::Float(f) => f.to_string(),
                        Value::Null => "null".to_string(),
                        Value::Seq(_) | Value::Map(_) => {
                            problems.push(
                                Problem::error(
                                    "syntax",
                                    &source.path,
                                    "a mapping key must be a plain value, not a list or mapping",
                                )
                                .at(source, k.span),
                            );
                            continue;
                        }
                    };
                    if keys.contains(entries, &name) {
                        problems.push(
                            Problem::error(
                                "duplicate-key",
                                &source.path,
                                format!("duplicate key `{name}`"),
                            )
                            .at(source, k.span)
                            .help("YAML forbids repeated keys; keep exactly one"),
                        );
                        continue;
                    }
                    entries.push((Key { name, span: k.span }, node));
                }
            },
        }
    }

    if root.is_none() && problems.is_empty() {
        problems.push(
            Problem::error(
                "syntax",
                &source.path,
                "the file is empty; expected a YAML mapping",
            )
            .at(source, Span::new(0, 0)),
        );
    }
    (root, problems)
}

fn count(node: &Node) -> usize {
    1 + match &node.value {
        Value::Seq(items) => items.iter().map(count).sum(),
        Value::Map(entries) => entries.iter().map(|(_, v)| 1 + count(v)).sum(),
        _ => 0,
    }
}

fn span_of(offsets: &CharOffsets, s: &YSpan) -> Span {
    Span::new(offsets.byte(s.start.index()), offsets.byte(s.end.index()))
}

/// The YAML 1.2 core schema for plain scalars; quoted and block scalars are strings.
fn resolve_scalar(text: &str, style: ScalarStyle, tag: Option<&str>) -> Value {
    match tag {
        Some("str") => return Value::Str(text.to_string()),
        Some("int") => {
            if let Some(v) = parse_int(text) {
                return Value::Int(v);
            }
        }
        Some("float") => {
            if let Some(v) = parse_float(text) {
                return Value::Float(v);
            }
        }
        Some("bool") => match text {
            "true" | "True" | "TRUE" => return Value::Bool(true),
            "false" | "False" | "FALSE" => return Value::Bool(false),
            _ => {}
        },
        Some("null") => return Value::Null,
        _ => {}
    }
    if style != ScalarStyle::Plain || tag.is_some() {
        return Value::Str(text.to_string());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Some(i) = parse_int(text) {
        return Value::Int(i);
    }
    if let Some(f) = parse_float(text) {
        return Value::Float(f);
    }
    Value::Str(text.to_string())
}

fn parse_int(t: &str) -> Option<i64> {
    if let Some(h) = t.strip_prefix("0x") {
        return i64::from_str_radix(h, 16).ok();
    }
    if let Some(o) = t.strip_prefix("0o") {
        return i64::from_str_radix(o, 8).ok();
    }
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

fn parse_float(t: &str) -> Option<f64> {
    match t {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        _ => {}
    }
    let body = t.strip_prefix(['-', '+']).unwrap_or(t);
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mantissa_ok = !mantissa.is_empty()
        && mantissa != "."
        && mantissa.bytes().filter(|&b| b == b'.').count() <= 1
        && mantissa.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let exp_ok = exp.is_none_or(|e| {
        let d = e.strip_prefix(['-', '+']).unwrap_or(e);
        !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
    });
    if mantissa_ok && exp_ok {
        t.parse().ok()
    } else {
        None
    }
}

/// saphyr counts positions in characters; diagnostics need bytes.
struct CharOffsets {
    /// Byte offset of every character, or empty when the text is ASCII (then they are equal).
    bytes: Vec<usize>,
    len: usize,
}

impl CharOffsets {
    fn new(text: &str) -> Self {
        let bytes = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices().map(|(i, _)| i).collect()
        };
        CharOffsets {
            bytes,
            len: text.len(),
        }
    }

    fn byte(&self, char_index: usize) -> usize {
        if self.bytes.is_empty() {
            char_index.min(self.len)
        } else {
            self.bytes.get(char_index).copied().unwrap_or(self.len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> (Option<Node>, Vec<Problem>) {
        parse(&Source::new("t.yaml", text.to_string()))
    }

    #[test]
    fn resolves_core_schema_scalars() {
        let (n, probs) =
            p("a: 1\nb: 1.5\nc: true\nd: ~\ne: '1'\nf: 2025-01-15T10:30:00Z\ng: hello\n");
        assert!(probs.is_empty(), "{probs:?}");
        let n = n.unwrap();
        assert_eq!(n.get("a").unwrap().value, Value::Int(1));
        assert_eq!(n.get("b").unwrap().value, Value::Float(1.5));
        assert_eq!(n.get("c").unwrap().value, Value::Bool(true));
        assert_eq!(n.get("d").unwrap().value, Value::Null);
        assert_eq!(n.get("e").unwrap().value, Value::Str("1".into()));
        assert_eq!(
            n.get("f").unwrap().value,
            Value::Str("2025-01-15T10:30:00Z".into())
        );
        assert_eq!(n.get("g").unwrap().value, Value::Str("hello".into()));
    }

    #[test]
    fn spans_point_at_keys_and_values() {
        let src = Source::new(
            "t.yaml",
            "name: x\nprompt:\n  - hi\n  - é there\n".to_string(),
        );
        let (n, _) = parse(&src);
        let n = n.unwrap();
        let entries = n.as_map().unwrap();
        assert_eq!(src.line_col(entries[1].0.span.start), (2, 1));
        let Value::Seq(items) = &entries[1].1.value else {
            panic!("not a list")
        };
        assert_eq!(src.line_col(items[1].span.start), (4, 5));
        assert_eq!(items[1].value, Value::Str("é there".into()));
    }

    #[test]
    fn rejects_duplicates_multiple_documents_and_bombs() {
        assert_eq!(p("a: 1\na: 2\n").1[0].code, "duplicate-key");
        assert_eq!(p("a: 1\n---\nb: 2\n").1[0].code, "syntax");
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for c in 'b'..='k' {
            bomb.push_str(&format!(
                "{c}: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
            prev = c;
        }
        let (n, probs) = p(&bomb);
        assert!(n.is_none());
        assert!(probs[0].message.contains("million"), "{probs:?}");
        assert!(p(&"[".repeat(10_000)).0.is_none());
        assert!(p("").0.is_none());
        assert!(p("key: [unclosed").0.is_none());
    }
}
