//! A merged case checked as Claude Code's loader checks it, in its order and words:
//! `schema_version` first, then the schema (unknown keys at the top, in `context` and in
//! `execution` ignored; graders strict), then the prompt. Every problem is collected; any
//! refuses the case.

use std::collections::BTreeMap;

use super::graders::{self, Grader};
use super::issues::{Issue, Issues, int_in, received, string, strings};
use super::merged::{At, MergedCase};
use crate::diag::source::Span;
use crate::syntax::node::Value;

/// A case that passed.
#[derive(Debug, Clone)]
pub struct CaseDef {
    pub name: String,
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub plugins: Option<Vec<String>>,
    pub runs: u32,
    pub scaffold_script: Option<String>,
    pub history_file: Option<String>,
    pub add_dirs: Vec<String>,
    pub prompt: String,
    pub max_turns: u32,
    pub timeout_seconds: u64,
    pub model: Option<String>,
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    pub append_system_prompt: Option<String>,
    pub env: BTreeMap<String, String>,
    pub graders: Vec<Grader>,
    /// assay's own keys ([`super::extensions`]).
    pub extensions: super::extensions::Extensions,
}

fn get<'a>(list: &[(&str, At<'a>)], key: &str) -> Option<At<'a>> {
    list.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// `schema_version`: a string whose major version (before the first `.`, as JavaScript's
/// `parseInt` reads it) is at most 1. `Err` is the refusal, alone.
fn schema_version(m: &MergedCase<'_>) -> Result<(), Issue> {
    let v = get(&m.top, "schema_version");
    if v.is_none() && m.root.is_none() {
        // A case with no case.yaml is schema 1.1.
        return Ok(());
    }
    let refuse = |at: Option<(usize, Span)>, message: String| Issue {
        at,
        field: "schema_version".into(),
        message,
        schema: false,
    };
    let Some(Value::Str(s)) = v.map(|v| &v.node.value) else {
        let at = v.map(|v| (v.file, v.node.span)).or(m.root);
        return Err(refuse(
            at,
            "missing required field schema_version (e.g. \"1.0\")".into(),
        ));
    };
    let at = v.map(|v| (v.file, v.node.span));
    match js_parse_int(s.split('.').next().unwrap_or("")) {
        None => Err(refuse(
            at,
            format!("schema_version \"{s}\" is not a valid version string"),
        )),
        Some(major) if major > 1 => Err(refuse(
            at,
            format!(
                "schema_version \"{s}\" requires a newer Claude Code (this binary supports up to 1.x)"
            ),
        )),
        Some(_) => Ok(()),
    }
}

/// JavaScript's `parseInt(s, 10)`: leading whitespace and a sign, then digits; the rest ignored.
fn js_parse_int(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let d: String = digits.chars().take_while(char::is_ascii_digit).collect();
    let n: i64 = d.get(..d.len().min(18))?.parse().ok()?;
    Some(if neg { -n } else { n })
}

/// Checks a merged case named `folder` (its folder's name).
pub fn check(m: &MergedCase<'_>, folder: &str) -> Result<CaseDef, Vec<Issue>> {
    if let Err(i) = schema_version(m) {
        return Err(vec![i]);
    }
    let mut is = Issues::default();
    for (key, file) in &m.unknown_prompt_keys {
        is.list.push(Issue {
            at: Some((*file, key.span)),
            field: key.name.clone(),
            schema: false,
            message: format!(
                "prompt.md: unknown frontmatter key \"{}\" (expected one of: {}, {})",
                key.name,
                super::merged::PROMPT_TOP_KEYS.join(", "),
                super::merged::PROMPT_EXECUTION_KEYS.join(", ")
            ),
        });
    }
    if !is.list.is_empty() {
        return Err(is.list);
    }
    let def = schema(&mut is, m, folder);
    match def {
        Some(d) if is.list.is_empty() => prompt_rules(m, d),
        _ => Err(is.list),
    }
}

/// The zod schema of a case.
fn schema(is: &mut Issues, m: &MergedCase<'_>, folder: &str) -> Option<CaseDef> {
    let top = |k: &str| get(&m.top, k);
    let name = match top("name") {
        Some(v) => string(is, v, "name").filter(|s| {
            let ok = !s.is_empty();
            if !ok {
                is.at(v, "name", "String must contain at least 1 character(s)");
            }
            ok
        }),
        None if m.root.is_some() => {
            is.near(m.root, "name", "Required");
            None
        }
        None => Some(folder.to_string()),
    };
    let description = top("description").and_then(|v| string(is, v, "description"));
    let tags = top("tags").map_or(Some(Vec::new()), |v| strings(is, v, "tags"));
    let plugins = top("plugins").and_then(|v| strings(is, v, "plugins"));
    let runs = top("runs").map_or(Some(3), |v| int_in(is, v, "runs", 1, 50));
    if let Some(v) = top("expected_outcome") {
        string(is, v, "expected_outcome");
    }
    let context = context(is, top("context"));
    let extensions = super::extensions::read(is, m);
    let exec = execution(is, m);
    let graders = graders::check_all(is, m);
    Some(CaseDef {
        name: name?,
        description,
        tags: tags?,
        plugins,
        runs: runs? as u32,
        scaffold_script: context.0,
        history_file: context.1,
        add_dirs: context.2,
        graders: graders?,
        extensions,
        ..exec?
    })
}

/// `context`: `scaffold_script`, `history_file`, `add_dirs`; other keys ignored.
fn context(is: &mut Issues, v: Option<At<'_>>) -> (Option<String>, Option<String>, Vec<String>) {
    let Some(v) = v else {
        return (None, None, Vec::new());
    };
    let Value::Map(_) = &v.node.value else {
        is.at(
            v,
            "context",
            format!("Expected object, received {}", received(&v.node.value)),
        );
        return (None, None, Vec::new());
    };
    let field = |is: &mut Issues, k: &str| {
        v.node.get(k).and_then(|n| {
            string(
                is,
                At {
                    node: n,
                    file: v.file,
                },
                &format!("context.{k}"),
            )
        })
    };
    let scaffold = field(is, "scaffold_script");
    let history = field(is, "history_file");
    let add_dirs = v
        .node
        .get("add_dirs")
        .and_then(|n| {
            strings(
                is,
                At {
                    node: n,
                    file: v.file,
                },
                "context.add_dirs",
            )
        })
        .unwrap_or_default();
    (scaffold, history, add_dirs)
}

/// `execution`, required; its limits with Claude Code's defaults (10 turns, 300 s).
fn execution(is: &mut Issues, m: &MergedCase<'_>) -> Option<CaseDef> {
    if let Some(v) = m.bad_execution {
        is.at(
            v,
            "execution",
            format!("Expected object, received {}", received(&v.node.value)),
        );
        return None;
    }
    let Some(exec) = &m.execution else {
        is.near(m.root, "execution", "Required");
        return None;
    };
    let e = |k: &str| get(exec, k);
    let f = |k: &str| format!("execution.{k}");
    let max_turns = e("max_turns").map_or(Some(10), |v| int_in(is, v, &f("max_turns"), 1, 200));
    let timeout =
        e("timeout_seconds").map_or(Some(300), |v| int_in(is, v, &f("timeout_seconds"), 1, 3600));
    let opt_string = |is: &mut Issues, k: &str| e(k).and_then(|v| string(is, v, &f(k)));
    let model = opt_string(is, "model");
    let append = opt_string(is, "append_system_prompt");
    let prompt = opt_string(is, "prompt");
    let allowed =
        e("allowed_tools").map_or(Some(Vec::new()), |v| strings(is, v, &f("allowed_tools")));
    let mut disallowed = Vec::new();
    for v in &m.disallowed {
        disallowed.extend(strings(is, *v, &f("disallowed_tools")).unwrap_or_default());
    }
    if let Some(v) = e("artifact_publish")
        && !matches!(v.node.value, Value::Bool(_))
    {
        is.at(
            v,
            &f("artifact_publish"),
            format!("Expected boolean, received {}", received(&v.node.value)),
        );
    }
    let env = env(is, e("env"));
    Some(CaseDef {
        name: String::new(),
        description: None,
        tags: Vec::new(),
        plugins: None,
        runs: 3,
        scaffold_script: None,
        history_file: None,
        add_dirs: Vec::new(),
        prompt: m.prompt_body.clone().or(prompt).unwrap_or_default(),
        max_turns: max_turns? as u32,
        timeout_seconds: timeout? as u64,
        model,
        allowed_tools: allowed?,
        disallowed_tools: disallowed,
        append_system_prompt: append,
        env: env?,
        graders: Vec::new(),
        extensions: Default::default(),
    })
}

/// `execution.env`: a mapping of strings.
fn env(is: &mut Issues, v: Option<At<'_>>) -> Option<BTreeMap<String, String>> {
    let Some(v) = v else {
        return Some(BTreeMap::new());
    };
    let Some(entries) = v.node.as_map() else {
        is.at(
            v,
            "execution.env",
            format!("Expected object, received {}", received(&v.node.value)),
        );
        return None;
    };
    let mut out = BTreeMap::new();
    for (k, n) in entries {
        let field = format!("execution.env.{}", k.name);
        let at = At {
            node: n,
            file: v.file,
        };
        if !eval_var(&k.name) {
            let why = format!(
                "execution.env key \"{}\" is not allowed — only EVAL_* keys can be set from case.yaml",
                k.name
            );
            is.at(at, &field, why);
            return None;
        }
        out.insert(k.name.clone(), string(is, at, &field)?);
    }
    Some(out)
}

/// A variable a case may set: `EVAL_` and capitals, digits and `_` (Claude Code's rule).
fn eval_var(name: &str) -> bool {
    name.strip_prefix("EVAL_").is_some_and(|r| {
        r.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    })
}

/// After the schema: a prompt is required, and neither it nor a grader may still be the blank
/// `init` template.
fn prompt_rules(m: &MergedCase<'_>, def: CaseDef) -> Result<CaseDef, Vec<Issue>> {
    let refuse = |message: String| {
        Err(vec![Issue {
            at: m.root,
            field: "execution.prompt".into(),
            message,
            schema: false,
        }])
    };
    if def.prompt.trim().is_empty() {
        return refuse(if def.history_file.is_some() {
            "context.history_file requires execution.prompt (the resumed session needs a next turn)"
                .into()
        } else {
            "execution.prompt is required (a prompt.md body, or execution.prompt in case.yaml)"
                .into()
        });
    }
    if def
        .prompt
        .contains("TODO: describe what the agent should do")
    {
        return refuse("the prompt is still the blank `init` template — replace the \"TODO: describe what the agent should do\" line with the user prompt to test (in prompt.md, or in execution.prompt if the case is written in case.yaml)".into());
    }
    if let Some(g) = def.graders.iter().find(|g| g.is_template()) {
        return refuse(format!(
            "grader \"{}\" is still the blank `init` template — replace the \"TODO: describe what a successful response looks like\" line with concrete pass criteria",
            g.name
        ));
    }
    Ok(def)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_int_as_javascript() {
        assert_eq!(js_parse_int(" 1"), Some(1));
        assert_eq!(js_parse_int("1abc"), Some(1));
        assert_eq!(js_parse_int("-3"), Some(-3));
        assert_eq!(js_parse_int("v1"), None);
        assert_eq!(js_parse_int(""), None);
    }
}
