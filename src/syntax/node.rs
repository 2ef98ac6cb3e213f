//! A parsed document as a tree of values that remember where they came from.
//!
//! JSON and YAML both parse into this one shape, so every loader validates with
//! the same reader and every error can point at a line and column.

use crate::diag::source::Span;

/// One value in a document.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub span: Span,
}

/// A key of a mapping, with its own span (errors about a key point at the key).
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub name: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// A number written without fraction or exponent.
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Entries in document order; duplicates are rejected by the parsers.
    Map(Vec<(Key, Node)>),
}

impl Value {
    /// How a value is named in "expected X, found Y" messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number with a fraction",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "an object",
        }
    }
}

impl Node {
    pub fn as_map(&self) -> Option<&[(Key, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The entry for `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.name == key)
            .map(|(_, v)| v)
    }

    /// Converts to JSON for storing a check's configuration as written.
    pub fn to_json(&self) -> serde_json::Value {
        match &self.value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => (*b).into(),
            Value::Int(i) => (*i).into(),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Value::Str(s) => s.clone().into(),
            Value::Seq(items) => items.iter().map(Node::to_json).collect(),
            Value::Map(entries) => entries
                .iter()
                .map(|(k, v)| (k.name.clone(), v.to_json()))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }
}

/// Spots a repeated key while a mapping is being built, in time linear in its size: a few
/// keys are compared directly, a large mapping's keys go into a set.
#[derive(Debug, Default)]
pub struct KeySet {
    set: std::collections::HashSet<String>,
    /// How many of the mapping's entries are in `set`.
    synced: usize,
}

impl KeySet {
    const SMALL: usize = 16;

    /// Whether `name` is already a key of `entries` (the mapping so far).
    pub fn contains(&mut self, entries: &[(Key, Node)], name: &str) -> bool {
        if entries.len() <= Self::SMALL {
            return entries.iter().any(|(k, _)| k.name == name);
        }
        for (k, _) in &entries[self.synced.min(entries.len())..] {
            self.set.insert(k.name.clone());
        }
        self.synced = entries.len();
        self.set.contains(name)
    }
}
