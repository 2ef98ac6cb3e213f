//! `json-schema`: the output — or a file the agent wrote — is JSON that a JSON Schema accepts.
//!
//! ```json
//! {"id": "report-shape", "type": "json-schema", "schema": {"type": "object", "required": ["total"]}}
//! {"id": "file-shape", "type": "json-schema", "file": "out/report.json", "schema_file": "schemas/report.json"}
//! ```
//!
//! `schema` is the schema inline; `schema_file` reads it from the workspace instead. `file`
//! checks a workspace file rather than the output. Text around the JSON (prose, a code fence)
//! is tolerated: the first JSON value found is what is checked.

use assay_plugin::{Assertion, Plugin, Run, Value, Verdict, json};

struct JsonSchema;

/// The JSON in a text: all of it, a fenced block, or the outermost braces or brackets.
pub fn json_in(text: &str) -> Option<Value> {
    let t = text.trim();
    if let Ok(v) = assay_plugin::serde_json::from_str(t) {
        return Some(v);
    }
    if let Some(start) = t.find("```") {
        let rest = &t[start + 3..];
        let rest = rest.strip_prefix("json").unwrap_or(rest);
        if let Some(end) = rest.find("```")
            && let Ok(v) = assay_plugin::serde_json::from_str(rest[..end].trim())
        {
            return Some(v);
        }
    }
    let mut spans: Vec<(usize, usize)> = [('{', '}'), ('[', ']')]
        .iter()
        .filter_map(|(o, c)| Some((t.find(*o)?, t.rfind(*c)?)))
        .filter(|(a, b)| a < b)
        .collect();
    spans.sort();
    spans
        .into_iter()
        .find_map(|(a, b)| assay_plugin::serde_json::from_str(&t[a..=b]).ok())
}

/// Validates `instance` against `schema`; the errors, each with its place.
pub fn errors(schema: &Value, instance: &Value) -> Result<Vec<String>, String> {
    let validator =
        jsonschema::validator_for(schema).map_err(|e| format!("the schema is not valid: {e}"))?;
    Ok(validator
        .iter_errors(instance)
        .take(10)
        .map(|e| {
            let at = e.instance_path().to_string();
            format!("{}: {e}", if at.is_empty() { "/" } else { &at })
        })
        .collect())
}

impl Assertion for JsonSchema {
    fn name(&self) -> &str {
        "json-schema"
    }

    fn summary(&self) -> &str {
        "the output (or a workspace file) is JSON that a JSON Schema accepts"
    }

    fn config_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "schema": {"type": ["object", "boolean"]},
                "schema_file": {"type": "string"},
                "file": {"type": "string"}
            },
            "oneOf": [{"required": ["schema"]}, {"required": ["schema_file"]}]
        })
    }

    fn validate(&self, config: &Value) -> Result<(), String> {
        let known = ["schema", "schema_file", "file"];
        if let Some(obj) = config.as_object() {
            for k in obj.keys() {
                if !known.contains(&k.as_str()) {
                    return Err(format!("unknown key `{k}` (known: {})", known.join(", ")));
                }
            }
        }
        match (config.get("schema"), config.get("schema_file")) {
            (Some(s), None) => jsonschema::validator_for(s)
                .map(|_| ())
                .map_err(|e| format!("`schema` is not a valid JSON Schema: {e}")),
            (None, Some(Value::String(_))) => Ok(()),
            (None, Some(_)) => Err("`schema_file` must be a path".into()),
            (Some(_), Some(_)) => Err("give `schema` or `schema_file`, not both".into()),
            (None, None) => Err("`schema` (inline) or `schema_file` is required".into()),
        }
    }

    fn evaluate(&self, config: &Value, run: &Run) -> Result<Verdict, String> {
        let schema = match (
            config.get("schema"),
            config.get("schema_file").and_then(Value::as_str),
        ) {
            (Some(s), _) => s.clone(),
            (None, Some(path)) => {
                let text = run
                    .file_text(path)
                    .ok_or_else(|| format!("the schema file {path} is not in the workspace"))?;
                assay_plugin::serde_json::from_str(&text)
                    .map_err(|e| format!("the schema file {path} is not JSON: {e}"))?
            }
            (None, None) => return Err("no schema".into()),
        };
        let (text, what) = match config.get("file").and_then(Value::as_str) {
            Some(f) => match run.file_text(f) {
                Some(t) => (t, f.to_string()),
                None => return Ok(Verdict::new(false, format!("{f} is not in the workspace"))),
            },
            None => (run.output(), "the output".to_string()),
        };
        let Some(instance) = json_in(&text) else {
            return Ok(Verdict::new(false, format!("{what} holds no JSON"))
                .with_evidence(text.chars().take(120).collect::<String>()));
        };
        let errs = errors(&schema, &instance)?;
        Ok(if errs.is_empty() {
            Verdict::new(true, format!("{what} is valid against the schema"))
        } else {
            Verdict::new(
                false,
                format!("{what} breaks the schema in {} place(s)", errs.len()),
            )
            .with_evidence(errs.join("; "))
        })
    }
}

fn plugin() -> Plugin {
    Plugin::new().assertion(JsonSchema)
}

assay_plugin::export!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_json_and_reports_each_error_with_its_place() {
        let v = json_in("Here:\n```json\n{\"total\": \"3\"}\n```\n").unwrap();
        let schema = json!({"type": "object", "required": ["total", "items"], "properties": {"total": {"type": "integer"}}});
        let errs = errors(&schema, &v).unwrap();
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs.iter().any(|e| e.starts_with("/total")));
        assert!(
            errors(&schema, &json!({"total": 3, "items": []}))
                .unwrap()
                .is_empty()
        );
        assert!(
            JsonSchema
                .validate(&json!({"schema": {"type": "nope"}}))
                .is_err()
        );
        assert!(
            JsonSchema
                .validate(&json!({"schema": true, "extra": 1}))
                .is_err()
        );
    }
}
