//! `expect:` guards checked against a call's input, as Claude Code checks them: the first
//! broken guard, in its words (`project = "x" is not one of [a, b]`).

use serde_json::Value;

use crate::suite::mocks::{Expect, Guard};

/// The first guard `input` breaks, if any.
pub fn violation(input: &Value, expect: &Expect) -> Option<String> {
    check(input, expect, "")
}

fn check(root: &Value, expect: &Expect, prefix: &str) -> Option<String> {
    for (key, guard) in expect {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        let value = lookup(root, &path);
        let broken = match guard {
            Guard::Fields(inner) => check(root, inner, &path),
            Guard::OneOf(allowed) => (!allowed.iter().any(|a| equals(value, a))).then(|| {
                format!(
                    "{path} = {} is not one of [{}]",
                    show(value),
                    allowed.join(", ")
                )
            }),
            Guard::Pattern { source, flags } => pattern(value, source, flags, &path),
            Guard::Type(t) => {
                let want = if t == "boolean" { "bool" } else { t.as_str() };
                (type_of(value) != want).then(|| format!("{path} = {} is not a {t}", show(value)))
            }
            Guard::Equals(s) => {
                (!equals(value, s)).then(|| format!("{path} = {} is not \"{s}\"", show(value)))
            }
        };
        if broken.is_some() {
            return broken;
        }
    }
    None
}

fn pattern(value: Option<&Value>, source: &str, flags: &str, path: &str) -> Option<String> {
    let subject = match value {
        Some(Value::String(s)) => Some(s.clone()),
        Some(v @ (Value::Number(_) | Value::Bool(_))) => Some(v.to_string()),
        _ => None,
    };
    let matched = subject.as_deref().is_some_and(|s| {
        regress::Regex::with_flags(source, flags).is_ok_and(|re| re.find(s).is_some())
    });
    (!matched).then(|| format!("{path} = {} does not match /{source}/{flags}", show(value)))
}

/// The value at a dotted path (`a.b`, `items.0`): object keys, array indexes.
fn lookup<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let mut at = root;
    for seg in path.split('.') {
        at = match at {
            Value::Object(o) => o.get(seg)?,
            Value::Array(a) if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) => {
                a.get(seg.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    Some(at)
}

/// Strings compared as written; numbers and booleans as JavaScript writes them.
fn equals(value: Option<&Value>, want: &str) -> bool {
    match value {
        Some(Value::String(s)) => s == want,
        Some(v @ (Value::Number(_) | Value::Bool(_))) => {
            // As JavaScript's `String()` writes it, not the JSON value `want` would be.
            let text = v.to_string();
            text == want
        }
        _ => false,
    }
}

fn type_of(value: Option<&Value>) -> &'static str {
    match value {
        None | Some(Value::Null) => "missing",
        Some(Value::Array(_)) => "array",
        Some(Value::Bool(_)) => "bool",
        Some(Value::Number(_)) => "number",
        Some(Value::String(_)) => "string",
        Some(Value::Object(_)) => "object",
    }
}

/// A value as a message shows it: its JSON, cut at 80 characters.
fn show(value: Option<&Value>) -> String {
    let Some(v) = value else {
        return "(missing)".into();
    };
    let s = v.to_string();
    if s.chars().count() > 80 {
        format!("{}...", s.chars().take(77).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn guards(v: Value) -> Expect {
        let mut e = Expect::new();
        for (k, g) in v.as_object().unwrap() {
            e.insert(k.clone(), guard(g));
        }
        e
    }

    fn guard(g: &Value) -> Guard {
        match g {
            Value::Array(a) => Guard::OneOf(a.iter().map(|x| x.as_str().unwrap().into()).collect()),
            Value::String(s) if s.starts_with('/') => Guard::Pattern {
                source: s[1..s.len() - 1].into(),
                flags: String::new(),
            },
            Value::String(s) if s == "string" || s == "number" || s == "boolean" => {
                Guard::Type(s.clone())
            }
            Value::String(s) => Guard::Equals(s.clone()),
            _ => unreachable!(),
        }
    }

    #[test]
    fn each_kind_of_guard_says_what_broke_it() {
        let e = guards(json!({"project": ["web", "api"]}));
        assert_eq!(
            violation(&json!({"project": "ios"}), &e).unwrap(),
            "project = \"ios\" is not one of [web, api]"
        );
        assert!(violation(&json!({"project": "api"}), &e).is_none());
        let e = guards(json!({"title": "string"}));
        assert_eq!(
            violation(&json!({}), &e).unwrap(),
            "title = (missing) is not a string"
        );
        let e = guards(json!({"flag": "boolean"}));
        assert!(violation(&json!({"flag": true}), &e).is_none());
        let e = guards(json!({"repo": "/^acme\\//"}));
        assert_eq!(
            violation(&json!({"repo": "other/x"}), &e).unwrap(),
            "repo = \"other/x\" does not match /^acme\\//"
        );
        let e = guards(json!({"n": "3"}));
        assert!(violation(&json!({"n": 3}), &e).is_none());
        let mut nested = Expect::new();
        nested.insert("a".into(), Guard::Fields(guards(json!({"b": "yes"}))));
        assert_eq!(
            violation(&json!({"a": {"b": "no"}}), &nested).unwrap(),
            "a.b = \"no\" is not \"yes\""
        );
    }
}
