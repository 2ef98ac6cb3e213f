//! YAML text → [`Node`] tree with spans, using saphyr's event parser and the YAML 1.2 core schema.
//!
//! We build the tree ourselves (rather than use a loader) to keep key spans, reject duplicate
//! keys, and bound depth and alias expansion so no input can exhaust memory or the stack.

use std::collections::HashMap;
use std::sync::Arc;

use saphyr_parser::{Event, Parser, ScalarStyle, Span as YSpan};

use super::node::{Key, KeySet, Node, Value};
use crate::diag::Problem;
use crate::diag::source::{Source, Span};

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
    let mut tree = Tree::new(source);
    for item in Parser::new_from_str(&source.text) {
        let step = match item {
            Ok((event, yspan)) => {
                let span = span_of(&tree.offsets, &yspan);
                tree.event(event, span)
            }
            Err(e) => {
                let at = tree.offsets.byte(e.marker().index());
                Err(tree.fail(at, format!("invalid YAML: {}", e.info())))
            }
        };
        if let Err(Stop) = step {
            return (None, tree.problems);
        }
    }
    tree.finish()
}

/// Parsing stopped: the error is among the problems.
struct Stop;

/// The tree built from the parser's events: the collections still open, the anchors seen,
/// and what is left of the node budget.
struct Tree<'s> {
    source: &'s Arc<Source>,
    offsets: CharOffsets,
    stack: Vec<Frame>,
    /// Each anchor's node and its size in nodes, counted against the budget when an alias
    /// repeats it.
    anchors: HashMap<usize, (Node, usize)>,
    root: Option<Node>,
    documents: usize,
    budget: usize,
    problems: Vec<Problem>,
}

impl<'s> Tree<'s> {
    fn new(source: &'s Arc<Source>) -> Self {
        Tree {
            source,
            offsets: CharOffsets::new(&source.text),
            stack: Vec::new(),
            anchors: HashMap::new(),
            root: None,
            documents: 0,
            budget: MAX_NODES,
            problems: Vec::new(),
        }
    }

    /// A syntax error at `at`, which stops the parse.
    fn fail(&mut self, at: usize, msg: impl Into<String>) -> Stop {
        let problem = Problem::error("syntax", &self.source.path, msg.into());
        self.problems
            .push(problem.at(self.source, Span::new(at, at)));
        Stop
    }

    fn event(&mut self, event: Event<'_>, span: Span) -> Result<(), Stop> {
        let finished = match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    let msg =
                        "the file holds more than one YAML document; an eval file is one document";
                    return Err(self.fail(span.start, msg));
                }
                None
            }
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag.map(|t| t.suffix.clone());
                let value = resolve_scalar(&text, style, tag.as_deref());
                Some((Node { value, span }, anchor))
            }
            Event::Alias(id) => Some((self.alias(id, span)?, 0)),
            Event::SequenceStart(anchor, _) => {
                self.open(
                    span,
                    Frame::Seq {
                        start: span.start,
                        anchor,
                        items: Vec::new(),
                    },
                )?;
                None
            }
            Event::MappingStart(anchor, _) => {
                let frame = Frame::Map {
                    start: span.start,
                    anchor,
                    entries: Vec::new(),
                    keys: KeySet::default(),
                    key: None,
                };
                self.open(span, frame)?;
                None
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(span),
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => None,
        };
        match finished {
            Some((node, anchor)) => self.add(node, anchor, span),
            None => Ok(()),
        }
    }

    /// The anchored node an alias repeats, its size taken from the budget.
    fn alias(&mut self, id: usize, span: Span) -> Result<Node, Stop> {
        let Some((node, size)) = self.anchors.get(&id) else {
            return Err(self.fail(span.start, "YAML alias refers to an unknown anchor"));
        };
        if *size > self.budget {
            let msg = "YAML aliases expand to more than a million values; refusing to load";
            return Err(self.fail(span.start, msg));
        }
        self.budget -= size;
        Ok(node.clone())
    }

    fn open(&mut self, span: Span, frame: Frame) -> Result<(), Stop> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(self.fail(
                span.start,
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        self.stack.push(frame);
        Ok(())
    }

    /// The collection that ends at `span`, with its anchor.
    fn close(&mut self, span: Span) -> Option<(Node, usize)> {
        let (start, anchor, value) = match self.stack.pop()? {
            Frame::Seq {
                start,
                anchor,
                items,
            } => (start, anchor, Value::Seq(items)),
            Frame::Map {
                start,
                anchor,
                entries,
                ..
            } => (start, anchor, Value::Map(entries)),
        };
        let span = Span::new(start, span.end);
        Some((Node { value, span }, anchor))
    }

    /// A finished node: counted, remembered under its anchor, and put in its parent.
    fn add(&mut self, node: Node, anchor: usize, span: Span) -> Result<(), Stop> {
        if self.budget == 0 {
            return Err(self.fail(span.start, "the document holds more than a million values"));
        }
        self.budget -= 1;
        if anchor != 0 {
            let size = count(&node);
            self.anchors.insert(anchor, (node.clone(), size));
        }
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                entries, key, keys, ..
            }) => match key.take() {
                None => *key = Some(node),
                Some(k) => {
                    if let Some(problem) = entry(self.source, entries, keys, k, node) {
                        self.problems.push(problem);
                    }
                }
            },
        }
        Ok(())
    }

    fn finish(mut self) -> (Option<Node>, Vec<Problem>) {
        if self.root.is_none() && self.problems.is_empty() {
            self.problems.push(
                Problem::error(
                    "syntax",
                    &self.source.path,
                    "the file is empty; expected a YAML mapping",
                )
                .at(self.source, Span::new(0, 0)),
            );
        }
        (self.root, self.problems)
    }
}

/// Adds the entry `k: node` to a mapping, or says why not: a key that is a collection, or one
/// the mapping already has.
fn entry(
    source: &Arc<Source>,
    entries: &mut Vec<(Key, Node)>,
    keys: &mut KeySet,
    k: Node,
    node: Node,
) -> Option<Problem> {
    let name = match &k.value {
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Null => "null".to_string(),
        Value::Seq(_) | Value::Map(_) => {
            let msg = "a mapping key must be a plain value, not a list or mapping";
            return Some(Problem::error("syntax", &source.path, msg).at(source, k.span));
        }
    };
    if keys.contains(entries, &name) {
        let msg = format!("duplicate key `{name}`");
        return Some(
            Problem::error("duplicate-key", &source.path, msg)
                .at(source, k.span)
                .help("YAML forbids repeated keys; keep exactly one"),
        );
    }
    entries.push((Key { name, span: k.span }, node));
    None
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
