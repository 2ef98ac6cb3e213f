//! Problems of a case in Claude Code's schema words ("Expected string, received number"),
//! and the typed reads that report them.

use super::merged::At;
use crate::diag::source::Span;
use crate::syntax::node::Value;

/// A problem: where (a file of [`MergedCase::sources`] and a span, or the case folder), the field
/// in Claude Code's dotted form, and its message.
#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
    pub at: Option<(usize, Span)>,
    pub field: String,
    pub message: String,
    /// A schema issue, shown as `<field>: <message>` as Claude Code lists them; otherwise
    /// the message is whole.
    pub schema: bool,
}

/// Collects issues.
#[derive(Debug, Default)]
pub struct Issues {
    pub list: Vec<Issue>,
}

impl Issues {
    pub fn at(&mut self, v: At<'_>, field: &str, message: impl Into<String>) {
        self.list.push(Issue {
            at: Some((v.file, v.node.span)),
            field: field.to_string(),
            message: message.into(),
            schema: true,
        });
    }

    pub fn near(&mut self, at: Option<(usize, Span)>, field: &str, message: impl Into<String>) {
        self.list.push(Issue {
            at,
            field: field.to_string(),
            message: message.into(),
            schema: true,
        });
    }
}

/// zod's name for a value's type, in "Expected X, received Y".
pub fn received(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Int(_) | Value::Float(_) => "number",
        Value::Str(_) => "string",
        Value::Seq(_) => "array",
        Value::Map(_) => "object",
    }
}

/// A string, or zod's complaint.
pub fn string(is: &mut Issues, v: At<'_>, field: &str) -> Option<String> {
    match &v.node.value {
        Value::Str(s) => Some(s.clone()),
        other => {
            is.at(
                v,
                field,
                format!("Expected string, received {}", received(other)),
            );
            None
        }
    }
}

/// A list of strings, or zod's complaints.
pub fn strings(is: &mut Issues, v: At<'_>, field: &str) -> Option<Vec<String>> {
    let Value::Seq(items) = &v.node.value else {
        is.at(
            v,
            field,
            format!("Expected array, received {}", received(&v.node.value)),
        );
        return None;
    };
    let mut out = Vec::new();
    for (i, n) in items.iter().enumerate() {
        out.push(string(
            is,
            At {
                node: n,
                file: v.file,
            },
            &format!("{field}.{i}"),
        )?);
    }
    Some(out)
}

/// An integer in `1..=max`, or zod's complaint.
pub fn int_in(is: &mut Issues, v: At<'_>, field: &str, min: i64, max: i64) -> Option<i64> {
    let n = match &v.node.value {
        Value::Int(n) => *n,
        Value::Float(f) if f.fract() == 0.0 && f.is_finite() => *f as i64,
        Value::Float(_) => {
            is.at(v, field, "Expected integer, received float");
            return None;
        }
        other => {
            is.at(
                v,
                field,
                format!("Expected number, received {}", received(other)),
            );
            return None;
        }
    };
    if n < min {
        let msg = if min == 1 {
            "Number must be greater than 0".to_string()
        } else {
            format!("Number must be greater than or equal to {min}")
        };
        is.at(v, field, msg);
        return None;
    }
    if n > max {
        is.at(
            v,
            field,
            format!("Number must be less than or equal to {max}"),
        );
        return None;
    }
    Some(n)
}
