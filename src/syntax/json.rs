//! JSON text → [`Node`] tree, strictly (no comments, no trailing commas), with spans.

use std::sync::Arc;

use jsonc_parser::ast::{ObjectPropName, Value as Ast};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};

use super::node::{Key, KeySet, Node, Value};
use crate::diag::Problem;
use crate::diag::source::{Source, Span};

/// Parses a whole JSON document. Problems are syntax errors and duplicate keys.
pub fn parse(source: &Arc<Source>) -> (Option<Node>, Vec<Problem>) {
    let strict = ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let mut problems = Vec::new();
    match jsonc_parser::parse_to_ast(&source.text, &CollectOptions::default(), &strict) {
        Ok(parsed) => match parsed.value {
            Some(ast) => {
                let node = convert(ast, source, &mut problems);
                (Some(node), problems)
            }
            None => {
                problems.push(
                    Problem::error(
                        "syntax",
                        &source.path,
                        "the file is empty; expected a JSON document",
                    )
                    .at(source, Span::new(0, 0)),
                );
                (None, problems)
            }
        },
        Err(e) => {
            let r = e.range();
            problems.push(
                Problem::error(
                    "syntax",
                    &source.path,
                    format!("invalid JSON: {}", e.kind()),
                )
                .at(source, Span::new(r.start, r.end)),
            );
            (None, problems)
        }
    }
}

fn span_of(r: jsonc_parser::common::Range) -> Span {
    Span::new(r.start, r.end)
}

fn convert(ast: Ast<'_>, source: &Arc<Source>, problems: &mut Vec<Problem>) -> Node {
    let span = span_of(ast.range());
    let value = match ast {
        Ast::NullKeyword(_) => Value::Null,
        Ast::BooleanLit(b) => Value::Bool(b.value),
        Ast::StringLit(s) => Value::Str(s.value.into_owned()),
        Ast::NumberLit(n) => number(n.value),
        Ast::Array(a) => Value::Seq(
            a.elements
                .into_iter()
                .map(|e| convert(e, source, problems))
                .collect(),
        ),
        Ast::Object(o) => {
            let mut entries: Vec<(Key, Node)> = Vec::with_capacity(o.properties.len());
            let mut keys = KeySet::default();
            for prop in o.properties {
                let (name, kspan) = match prop.name {
                    ObjectPropName::String(s) => (s.value.into_owned(), span_of(s.range)),
                    ObjectPropName::Word(w) => (w.value.to_string(), span_of(w.range)),
                };
                let value = convert(prop.value, source, problems);
                if keys.contains(&entries, &name) {
                    problems.push(
                        Problem::error(
                            "duplicate-key",
                            &source.path,
                            format!("duplicate key `{name}`"),
                        )
                        .at(source, kspan)
                        .help("JSON parsers disagree on which copy wins; keep exactly one"),
                    );
                    continue;
                }
                entries.push((Key { name, span: kspan }, value));
            }
            Value::Map(entries)
        }
    };
    Node { value, span }
}

/// Integers stay integers (so `500` and `500.0` can be told apart, as clauditor requires).
fn number(raw: &str) -> Value {
    if !raw.contains(['.', 'e', 'E'])
        && let Ok(i) = raw.parse::<i64>()
    {
        return Value::Int(i);
    }
    Value::Float(raw.parse::<f64>().unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> (Option<Node>, Vec<Problem>) {
        parse(&Source::new("t.json", text.to_string()))
    }

    #[test]
    fn keeps_ints_and_floats_apart() {
        let (n, probs) = p(r#"{"a": 500, "b": 500.0, "c": -3, "d": 1e3}"#);
        assert!(probs.is_empty());
        let n = n.unwrap();
        assert_eq!(n.get("a").unwrap().value, Value::Int(500));
        assert_eq!(n.get("b").unwrap().value, Value::Float(500.0));
        assert_eq!(n.get("c").unwrap().value, Value::Int(-3));
        assert_eq!(n.get("d").unwrap().value, Value::Float(1000.0));
    }

    #[test]
    fn rejects_comments_trailing_commas_and_duplicates() {
        assert_eq!(p("{\"a\": 1, // x\n}").1[0].code, "syntax");
        assert_eq!(p("[1, 2,]").1[0].code, "syntax");
        let (_, probs) = p(r#"{"a": 1, "a": 2}"#);
        assert_eq!(probs[0].code, "duplicate-key");
        assert_eq!(probs[0].line_col(), Some((1, 10)));
    }

    #[test]
    fn survives_deep_nesting_and_garbage() {
        let deep = "[".repeat(100_000);
        assert!(p(&deep).0.is_none());
        assert!(p("\u{0}\u{ffff}").0.is_none());
        assert!(p("").0.is_none());
    }
}
