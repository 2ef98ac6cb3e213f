//! Strict, error-collecting reading of a [`Node`] tree into typed values.
//!
//! Every loader reads through this, so every format reports wrong types, missing fields and
//! unknown keys the same way: with the file, the line and column, the field path and a
//! "did you mean" where a near key exists.

use std::sync::Arc;

use super::node::{Key, Node, Value};
use crate::diag::source::{Source, Span};
use crate::diag::{Problem, did_you_mean};

/// One document being read, and the problems found in it so far.
pub struct Doc {
    pub source: Arc<Source>,
    pub problems: Vec<Problem>,
    /// Check types and formats from plugins, beside the built-in ones.
    pub extra: Option<Arc<dyn super::extra::ExtraTypes>>,
}

/// `parent.child` field paths, as shown in messages.
pub fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

pub fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

impl Doc {
    pub fn new(source: Arc<Source>) -> Self {
        Doc {
            source,
            problems: Vec::new(),
            extra: None,
        }
    }

    /// Records an error at `span` and returns it for adding help.
    pub fn error(
        &mut self,
        code: &'static str,
        span: Span,
        field: &str,
        msg: impl Into<String>,
    ) -> &mut Problem {
        self.problems.push(
            Problem::error(code, &self.source.path, msg)
                .at(&self.source, span)
                .field(field),
        );
        self.problems.last_mut().expect("just pushed")
    }

    pub fn warning(
        &mut self,
        code: &'static str,
        span: Span,
        field: &str,
        msg: impl Into<String>,
    ) -> &mut Problem {
        self.problems.push(
            Problem::warning(code, &self.source.path, msg)
                .at(&self.source, span)
                .field(field),
        );
        self.problems.last_mut().expect("just pushed")
    }

    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(Problem::is_error)
    }

    fn wrong_type(&mut self, node: &Node, field: &str, expected: &str) {
        let found = match &node.value {
            Value::Str(s) if s.len() <= 40 => format!("the string {s:?}"),
            other => other.kind_name().to_string(),
        };
        self.error(
            "wrong-type",
            node.span,
            field,
            format!("expected {expected}, found {found}"),
        );
    }

    pub fn map<'n>(&mut self, node: &'n Node, field: &str) -> Option<Map<'n>> {
        match &node.value {
            Value::Map(entries) => Some(Map {
                entries,
                span: node.span,
                field: field.to_string(),
            }),
            _ => {
                self.wrong_type(node, field, "an object");
                None
            }
        }
    }

    pub fn seq<'n>(&mut self, node: &'n Node, field: &str) -> Option<&'n [Node]> {
        match &node.value {
            Value::Seq(items) => Some(items),
            Value::Str(s) => {
                self.wrong_type(node, field, "a list");
                let fix = format!("wrap it in a list: [{s:?}]");
                self.problems.last_mut().expect("just pushed").help = Some(fix);
                None
            }
            _ => {
                self.wrong_type(node, field, "a list");
                None
            }
        }
    }

    pub fn string(&mut self, node: &Node, field: &str) -> Option<String> {
        match &node.value {
            Value::Str(s) => Some(s.clone()),
            _ => {
                self.wrong_type(node, field, "a string");
                None
            }
        }
    }

    /// A string with something other than whitespace in it.
    pub fn text(&mut self, node: &Node, field: &str) -> Option<String> {
        let s = self.string(node, field)?;
        if s.trim().is_empty() {
            self.error(
                "empty",
                node.span,
                field,
                "must not be empty or only whitespace",
            );
            return None;
        }
        Some(s)
    }

    /// A string to search for: only the empty string is refused, since it is found in every
    /// text; whitespace is something to find.
    pub fn needle(&mut self, node: &Node, field: &str) -> Option<String> {
        let s = self.string(node, field)?;
        if s.is_empty() {
            self.error("empty", node.span, field, "must not be empty")
                .help = Some("the empty string is in every text, so it checks nothing".into());
            return None;
        }
        Some(s)
    }

    pub fn bool(&mut self, node: &Node, field: &str) -> Option<bool> {
        match &node.value {
            Value::Bool(b) => Some(*b),
            _ => {
                self.wrong_type(node, field, "true or false");
                None
            }
        }
    }

    /// A native integer: not a string of digits, not `500.0`, not a boolean.
    pub fn int(&mut self, node: &Node, field: &str) -> Option<i64> {
        match &node.value {
            Value::Int(i) => Some(*i),
            Value::Str(s) if s.trim().parse::<i64>().is_ok() => {
                self.wrong_type(node, field, "an integer");
                let fix = format!("write {} without quotes", s.trim());
                self.problems.last_mut().expect("just pushed").help = Some(fix);
                None
            }
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => {
                self.wrong_type(node, field, "an integer");
                let fix = format!("write {} without the fraction", *f as i64);
                self.problems.last_mut().expect("just pushed").help = Some(fix);
                None
            }
            _ => {
                self.wrong_type(node, field, "an integer");
                None
            }
        }
    }

    pub fn non_negative_int(&mut self, node: &Node, field: &str) -> Option<u64> {
        let i = self.int(node, field)?;
        if i < 0 {
            self.error(
                "out-of-range",
                node.span,
                field,
                format!("must be 0 or more, found {i}"),
            );
            return None;
        }
        Some(i as u64)
    }

    pub fn positive_int(&mut self, node: &Node, field: &str) -> Option<u64> {
        let i = self.int(node, field)?;
        if i <= 0 {
            self.error(
                "out-of-range",
                node.span,
                field,
                format!("must be a positive integer, found {i}"),
            );
            return None;
        }
        Some(i as u64)
    }

    /// Any finite number, integer or not.
    pub fn number(&mut self, node: &Node, field: &str) -> Option<f64> {
        match &node.value {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) if f.is_finite() => Some(*f),
            _ => {
                self.wrong_type(node, field, "a number");
                None
            }
        }
    }

    /// A finite number, 0 or more.
    pub fn non_negative_number(&mut self, node: &Node, field: &str) -> Option<f64> {
        let n = self.number(node, field)?;
        if n < 0.0 {
            self.error(
                "out-of-range",
                node.span,
                field,
                format!("must be 0 or more, found {n}"),
            );
            return None;
        }
        Some(n)
    }

    /// A number in [0, 1].
    pub fn fraction(&mut self, node: &Node, field: &str) -> Option<f64> {
        let f = self.number(node, field)?;
        if !(0.0..=1.0).contains(&f) {
            self.error(
                "out-of-range",
                node.span,
                field,
                format!("must be between 0.0 and 1.0, found {f}"),
            );
            return None;
        }
        Some(f)
    }

    /// A list of strings; items of the wrong type are reported and skipped.
    pub fn strings(&mut self, node: &Node, field: &str) -> Option<Vec<(String, Span)>> {
        self.list(node, field, Doc::string)
    }

    /// A list of non-empty strings.
    pub fn texts(&mut self, node: &Node, field: &str) -> Option<Vec<(String, Span)>> {
        self.list(node, field, Doc::text)
    }

    /// A list whose items are read with `item`; bad items are reported and skipped.
    fn list<T>(
        &mut self,
        node: &Node,
        field: &str,
        item: fn(&mut Doc, &Node, &str) -> Option<T>,
    ) -> Option<Vec<(T, Span)>> {
        let items = self.seq(node, field)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, n) in items.iter().enumerate() {
            if let Some(v) = item(self, n, &index(field, i)) {
                out.push((v, n.span));
            }
        }
        Some(out)
    }

    /// A regex that must compile (Python-like syntax: lookaround and backreferences work).
    pub fn regex(&mut self, node: &Node, field: &str) -> Option<String> {
        let s = self.string(node, field)?;
        if let Err(e) = crate::syntax::pyregex::compile(&s) {
            self.error(
                "invalid-regex",
                node.span,
                field,
                format!("invalid regular expression: {e}"),
            );
            return None;
        }
        Some(s)
    }
}

/// An object being read: look fields up, then report the keys nobody asked for.
pub struct Map<'n> {
    pub entries: &'n [(Key, Node)],
    pub span: Span,
    pub field: String,
}

impl<'n> Map<'n> {
    /// The value of an optional field; an explicit `null` counts as absent.
    pub fn opt(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.name == key)
            .map(|(_, v)| v)
            .filter(|v| v.value != Value::Null)
    }

    /// Whether the key is written at all (even as `null`).
    pub fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k.name == key)
    }

    pub fn key_span(&self, key: &str) -> Option<Span> {
        self.entries
            .iter()
            .find(|(k, _)| k.name == key)
            .map(|(k, _)| k.span)
    }

    /// The value of a required field, reporting it when missing.
    pub fn req(&self, doc: &mut Doc, key: &str) -> Option<&'n Node> {
        match self.entries.iter().find(|(k, _)| k.name == key) {
            Some((_, v)) if v.value != Value::Null => Some(v),
            Some((_, v)) => {
                doc.error(
                    "missing-field",
                    v.span,
                    &self.path(key),
                    format!("required field `{key}` is null"),
                );
                None
            }
            None => {
                doc.error(
                    "missing-field",
                    Span::new(self.span.start, self.span.start + 1),
                    &self.path(key),
                    format!("missing required field `{key}`"),
                );
                None
            }
        }
    }

    pub fn path(&self, key: &str) -> String {
        join(&self.field, key)
    }

    /// Reports every key not in `known`, with a "did you mean" when one is close.
    pub fn check_keys(&self, doc: &mut Doc, what: &str, known: &[&str]) {
        self.check_keys_with(doc, what, known, |_| false, |_| None);
    }

    /// Like [`Map::check_keys`], but keys for which `allow` says yes are accepted, and `hint`
    /// may give a better help text for a particular unknown key.
    pub fn check_keys_with(
        &self,
        doc: &mut Doc,
        what: &str,
        known: &[&str],
        allow: impl Fn(&str) -> bool,
        hint: impl Fn(&str) -> Option<String>,
    ) {
        for (k, _) in self.entries {
            if known.contains(&k.name.as_str()) || allow(&k.name) {
                continue;
            }
            let help = hint(&k.name).or_else(|| {
                did_you_mean(&k.name, known.iter().copied())
                    .map(|s| format!("did you mean `{s}`?"))
                    .or_else(|| Some(format!("known keys: {}", known.join(", "))))
            });
            doc.error(
                "unknown-key",
                k.span,
                &self.path(&k.name),
                format!("unknown key `{}` in {what}", k.name),
            )
            .help = help;
        }
    }

    /// Unknown keys as warnings, for formats whose own runner ignores them (BMAD,
    /// skill-creator): each is named, with a "did you mean" when a known key is close, and
    /// the file still loads. Keys `allow` accepts are not reported; keys `strict` picks
    /// (assay's own `x-assay-…` extension keys, where a typo would drop checks) stay errors.
    pub fn warn_unknown_keys(
        &self,
        doc: &mut Doc,
        what: &str,
        known: &[&str],
        allow: impl Fn(&str) -> bool,
        strict: impl Fn(&str) -> bool,
    ) {
        let lenient: Vec<&Key> = self
            .entries
            .iter()
            .map(|(k, _)| k)
            .filter(|k| !known.contains(&k.name.as_str()) && !allow(&k.name))
            .collect();
        for k in lenient {
            if strict(&k.name) {
                self.check_keys_with(doc, what, known, |n| n != k.name, |_| None);
                continue;
            }
            let help = did_you_mean(&k.name, known.iter().copied())
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| format!("known keys: {}", known.join(", ")));
            doc.warning(
                "ignored-key",
                k.span,
                &self.path(&k.name),
                format!(
                    "unknown key `{}` in {what} is ignored, as its runner ignores it",
                    k.name
                ),
            )
            .help = Some(help);
        }
    }

    pub fn str(&self, doc: &mut Doc, key: &str) -> Option<String> {
        self.opt(key).and_then(|n| doc.string(n, &self.path(key)))
    }

    pub fn text(&self, doc: &mut Doc, key: &str) -> Option<String> {
        self.opt(key).and_then(|n| doc.text(n, &self.path(key)))
    }

    pub fn req_text(&self, doc: &mut Doc, key: &str) -> Option<String> {
        self.req(doc, key)
            .and_then(|n| doc.text(n, &self.path(key)))
    }

    pub fn bool(&self, doc: &mut Doc, key: &str) -> Option<bool> {
        self.opt(key).and_then(|n| doc.bool(n, &self.path(key)))
    }

    pub fn positive_int(&self, doc: &mut Doc, key: &str) -> Option<u64> {
        self.opt(key)
            .and_then(|n| doc.positive_int(n, &self.path(key)))
    }

    pub fn strings(&self, doc: &mut Doc, key: &str) -> Option<Vec<(String, Span)>> {
        self.opt(key).and_then(|n| doc.strings(n, &self.path(key)))
    }

    pub fn texts(&self, doc: &mut Doc, key: &str) -> Option<Vec<(String, Span)>> {
        self.opt(key).and_then(|n| doc.texts(n, &self.path(key)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::json;

    fn doc(text: &str) -> (Doc, Node) {
        let src = Source::new("t.json", text.to_string());
        let (node, probs) = json::parse(&src);
        assert!(probs.is_empty());
        (Doc::new(src), node.unwrap())
    }

    #[test]
    fn reports_unknown_keys_with_suggestions_and_missing_fields() {
        let (mut d, n) = doc(r#"{"promt": "x", "id": 3}"#);
        let m = d.map(&n, "evals[0]").unwrap();
        m.check_keys(&mut d, "an eval", &["id", "prompt"]);
        assert!(m.req(&mut d, "prompt").is_none());
        let id = m.req(&mut d, "id").unwrap();
        assert!(d.string(id, "evals[0].id").is_none());
        let msgs: Vec<_> = d
            .problems
            .iter()
            .map(|p| (p.code, p.field.clone(), p.help.clone()))
            .collect();
        assert_eq!(msgs[0].0, "unknown-key");
        assert_eq!(msgs[0].1.as_deref(), Some("evals[0].promt"));
        assert_eq!(msgs[0].2.as_deref(), Some("did you mean `prompt`?"));
        assert_eq!(msgs[1].0, "missing-field");
        assert_eq!(msgs[2].0, "wrong-type");
    }

    #[test]
    fn ints_must_be_native() {
        let (mut d, n) = doc(r#"{"a": "500", "b": 500.0, "c": true, "d": 0, "e": 7}"#);
        assert_eq!(d.int(n.get("a").unwrap(), "a"), None);
        assert_eq!(
            d.problems[0].help.as_deref(),
            Some("write 500 without quotes")
        );
        assert_eq!(d.int(n.get("b").unwrap(), "b"), None);
        assert_eq!(d.int(n.get("c").unwrap(), "c"), None);
        assert_eq!(d.positive_int(n.get("d").unwrap(), "d"), None);
        assert_eq!(d.positive_int(n.get("e").unwrap(), "e"), Some(7));
        assert_eq!(d.problems.len(), 4);
    }
}
