//! The built-in deterministic checks, with the semantics of the formats they come from.
//!
//! clauditor's L1 types search the output (case-sensitive; lengths in code points; counts are
//! non-overlapping matches); Skillet's text checks ignore case, `ends_with` ignores trailing
//! whitespace, and tool checks match tool names exactly across every turn.

use std::path::Path;

use fancy_regex::Regex;
use serde_json::Value;

use super::view::CaseRunView;
use crate::spec::Check;
use crate::spec::value_formats;

/// clauditor's URL pattern (also its `url` format).
pub const URL_PATTERN: &str = r#"https?://[^\s\)"'>]+"#;
/// clauditor's numbered-entry pattern: `**1. Name**`.
pub const ENTRY_PATTERN: &str = r"\*\*\d+\.\s+";

pub use crate::record::grading::CheckOutcome;

/// What a check type found, before negation: passed or not, why, and the evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub passed: bool,
    pub message: String,
    pub evidence: Option<String>,
    /// What the check wrote to stderr (plugins).
    pub log: Option<String>,
}

fn finding(
    passed: bool,
    message: impl Into<String>,
    evidence: Option<String>,
) -> Result<Finding, String> {
    Ok(Finding {
        passed,
        message: message.into(),
        evidence,
        log: None,
    })
}

/// Up to 60 characters either side of a byte range, on one line.
pub fn excerpt(text: &str, start: usize, end: usize) -> String {
    let from = text[..start]
        .char_indices()
        .rev()
        .nth(59)
        .map(|(i, _)| i)
        .unwrap_or(0);
    let to = text[end..]
        .char_indices()
        .nth(60)
        .map(|(i, _)| end + i)
        .unwrap_or(text.len());
    let mut s = String::new();
    if from > 0 {
        s.push('…');
    }
    s.push_str(&text[from..to].replace('\n', "⏎"));
    if to < text.len() {
        s.push('…');
    }
    s
}

fn str_of<'a>(config: &'a Value, key: &str) -> Result<&'a str, String> {
    config
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("the check has no `{key}`"))
}

fn int_of(config: &Value, key: &str) -> Result<i64, String> {
    config
        .get(key)
        .and_then(Value::as_i64)
        .ok_or_else(|| format!("the check has no `{key}`"))
}

fn regex(pattern: &str) -> Result<Regex, String> {
    crate::spec::pyregex::compile(pattern).map_err(|e| format!("invalid regular expression: {e}"))
}

/// Non-overlapping matches, as Python's `re.findall` counts them: since Python 3.7 an empty
/// match right after a non-empty one counts too (`[\d,]*$` finds "00" and "" at the end of
/// "14:30:00"), where Rust's iterator skips it. An empty match is never taken twice at one
/// place.
fn find_all(re: &Regex, text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut empty_at = None;
    while pos <= text.len() {
        let Ok(Some(m)) = re.find_from_pos(text, pos) else {
            break;
        };
        if m.start() == m.end() && empty_at == Some(m.start()) {
            match text[pos..].chars().next() {
                Some(c) => pos += c.len_utf8(),
                None => break,
            }
            continue;
        }
        out.push((m.start(), m.end()));
        empty_at = (m.start() == m.end()).then_some(m.end());
        pos = m.end();
    }
    out
}

fn find(haystack: &str, needle: &str, ignore_case: bool) -> Option<usize> {
    if ignore_case {
        haystack.to_lowercase().find(&needle.to_lowercase())
    } else {
        haystack.find(needle)
    }
}

fn count_check(text: &str, pattern: &str, wanted: i64, what: &str) -> Result<Finding, String> {
    let matches = find_all(&regex(pattern)?, text);
    let n = matches.len() as i64;
    let evidence = matches
        .iter()
        .take(5)
        .map(|(s, e)| text[*s..*e].to_string())
        .collect::<Vec<_>>()
        .join(" | ");
    finding(
        n >= wanted,
        format!("{n} {what} found, at least {wanted} wanted"),
        (!evidence.is_empty()).then_some(evidence),
    )
}

/// Evaluates one built-in check type. `Err` means it could not be evaluated.
pub fn evaluate(kind: &str, config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let out = view.output.as_str();
    let ignore_case = config
        .get("ignore_case")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    match kind {
        "contains" | "not_contains" => {
            let needle = str_of(config, "needle")?;
            let at = find(out, needle, ignore_case);
            let found = at.map(|i| excerpt(out, i, (i + needle.len()).min(out.len())));
            let message = match (&found, kind) {
                (Some(_), "contains") => format!("the output contains {needle:?}"),
                (None, "contains") => format!(
                    "{needle:?} is not in the output ({} characters)",
                    out.chars().count()
                ),
                (Some(_), _) => format!("the output contains {needle:?}, which it must not"),
                (None, _) => format!("{needle:?} is not in the output"),
            };
            finding((kind == "contains") == found.is_some(), message, found)
        }
        "regex" => {
            let pattern = str_of(config, "pattern")?;
            let re = regex(pattern)?;
            // Python's `$` also matches just before a final newline; Rust's does not.
            let m = match re.find(out).map_err(|e| e.to_string())? {
                Some(m) => Some(m),
                None => match out.strip_suffix('\n') {
                    Some(trimmed) => re.find(trimmed).map_err(|e| e.to_string())?,
                    None => None,
                },
            };
            match m {
                Some(m) => finding(
                    true,
                    format!("/{pattern}/ matches"),
                    Some(excerpt(out, m.start(), m.end())),
                ),
                None => finding(
                    false,
                    format!("/{pattern}/ matches nowhere in the output"),
                    None,
                ),
            }
        }
        "min_count" => count_check(
            out,
            str_of(config, "pattern")?,
            int_of(config, "count")?,
            "matches",
        ),
        "min_length" | "max_length" => {
            let wanted = int_of(config, "length")?;
            let n = out.chars().count() as i64;
            let passed = if kind == "min_length" {
                n >= wanted
            } else {
                n <= wanted
            };
            let bound = if kind == "min_length" {
                "at least"
            } else {
                "at most"
            };
            finding(
                passed,
                format!("the output is {n} characters, {bound} {wanted} wanted"),
                None,
            )
        }
        "has_urls" => count_check(out, URL_PATTERN, int_of(config, "count")?, "URLs"),
        "has_entries" => count_check(
            out,
            ENTRY_PATTERN,
            int_of(config, "count")?,
            "numbered entries",
        ),
        "has_format" => {
            let name = str_of(config, "format")?;
            let f = value_formats::lookup(name)
                .ok_or_else(|| format!("`{name}` is not a registered format"))?;
            count_check(
                out,
                f.pattern,
                int_of(config, "count")?,
                &format!("{name} values"),
            )
        }
        "starts_with" => {
            let prefix = str_of(config, "prefix")?;
            let passed = if ignore_case {
                out.to_lowercase().starts_with(&prefix.to_lowercase())
            } else {
                out.starts_with(prefix)
            };
            let head: String = out.chars().take(prefix.chars().count().max(20)).collect();
            finding(
                passed,
                format!("the output starts with {head:?}"),
                Some(head),
            )
        }
        "ends_with" => {
            let suffix = str_of(config, "suffix")?;
            let trimmed = out.trim_end();
            let passed = if ignore_case {
                trimmed.to_lowercase().ends_with(&suffix.to_lowercase())
            } else {
                trimmed.ends_with(suffix)
            };
            let n = trimmed.chars().count();
            let tail: String = trimmed
                .chars()
                .skip(n.saturating_sub(suffix.chars().count().max(20)))
                .collect();
            finding(passed, format!("the output ends with {tail:?}"), Some(tail))
        }
        "tool_called" | "tool_not_called" => {
            let tool = str_of(config, "tool")?;
            let names: Vec<&str> = view.tool_calls().map(|(n, _)| n).collect();
            let called = names.contains(&tool);
            let listed = if names.is_empty() {
                "no tools".to_string()
            } else {
                names.join(", ")
            };
            finding(
                (kind == "tool_called") == called,
                format!("`{tool}` was {}called", if called { "" } else { "not " }),
                Some(format!("tools called: {listed}")),
            )
        }
        "file_exists" => {
            let path = str_of(config, "path")?;
            let exists = view.has_file(Path::new(path)) || view.has_file(&view.cwd.join(path));
            let link = !exists && symlink_at(view, path);
            finding(
                exists,
                format!(
                    "{path} {}",
                    if exists {
                        "exists"
                    } else if link {
                        "is a symlink, not a file (assay does not follow links)"
                    } else {
                        "does not exist"
                    }
                ),
                None,
            )
        }
        "file_created" => {
            let path = str_of(config, "path")?;
            let rel = |p: &Path| [p.to_path_buf(), view.cwd.join(p)];
            let created = rel(Path::new(path))
                .iter()
                .any(|p| view.created.contains(p));
            let exists = rel(Path::new(path)).iter().any(|p| view.has_file(p));
            finding(
                created,
                format!(
                    "{path} {}",
                    if created {
                        "was created by the run"
                    } else if exists {
                        "existed before the run: the agent did not create it"
                    } else {
                        "does not exist"
                    }
                ),
                None,
            )
        }
        "agent_blocked" => {
            let blocked = agent_blocked(view);
            finding(
                blocked.is_some(),
                if blocked.is_some() {
                    "the agent was blocked"
                } else {
                    "nothing blocked the agent"
                }
                .to_string(),
                blocked,
            )
        }
        "file_contains" | "file_matches" => {
            let path = str_of(config, "path")?;
            let p = if view.has_file(Path::new(path)) {
                Path::new(path).to_path_buf()
            } else {
                view.cwd.join(path)
            };
            let Some(text) = view.read_file(&p) else {
                let why = if symlink_at(view, path) {
                    "is a symlink, which assay does not follow"
                } else {
                    "does not exist or is not text"
                };
                return finding(false, format!("{path} {why}"), None);
            };
            if kind == "file_contains" {
                let needle = str_of(config, "needle")?;
                let at = find(&text, needle, ignore_case);
                finding(
                    at.is_some(),
                    format!(
                        "{path} {} {needle:?}",
                        if at.is_some() {
                            "contains"
                        } else {
                            "does not contain"
                        }
                    ),
                    at.map(|i| excerpt(&text, i, (i + needle.len()).min(text.len()))),
                )
            } else {
                let pattern = str_of(config, "pattern")?;
                let m = regex(pattern)?.find(&text).map_err(|e| e.to_string())?;
                finding(
                    m.is_some(),
                    format!(
                        "/{pattern}/ {} in {path}",
                        if m.is_some() {
                            "matches"
                        } else {
                            "matches nowhere"
                        }
                    ),
                    m.map(|m| excerpt(&text, m.start(), m.end())),
                )
            }
        }
        "fixture_unchanged" => {
            let changed: Vec<String> = view
                .changed_fixtures
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            finding(
                changed.is_empty(),
                if changed.is_empty() {
                    "every fixture is as staged".to_string()
                } else {
                    format!("changed fixtures: {}", changed.join(", "))
                },
                None,
            )
        }
        "skill_invoked" => {
            let skill = str_of(config, "skill")?;
            let used = view.skills_invoked();
            let listed = if used.is_empty() {
                "no skills".to_string()
            } else {
                used.join(", ")
            };
            finding(
                used.contains(&skill),
                format!("skills used: {listed}"),
                None,
            )
        }
        "tool_sequence" => {
            let wanted: Vec<&str> = config
                .get("tools")
                .and_then(Value::as_array)
                .ok_or("the check has no `tools`")?
                .iter()
                .filter_map(Value::as_str)
                .collect();
            let called: Vec<&str> = view.tool_calls().map(|(n, _)| n).collect();
            let mut next = wanted.iter().peekable();
            for name in &called {
                if next.peek().is_some_and(|w| *w == name) {
                    next.next();
                }
            }
            let missing: Vec<&&str> = next.collect();
            finding(
                missing.is_empty(),
                if missing.is_empty() {
                    "the tools were called in order".to_string()
                } else {
                    format!("not called in order from `{}` on", missing[0])
                },
                Some(format!("tools called: {}", called.join(" → "))),
            )
        }
        "max_turns" => {
            let max = int_of(config, "turns")?;
            let turns = view.num_turns.ok_or("the harness does not report turns")?;
            finding(
                turns as i64 <= max,
                format!("{turns} turns, at most {max} allowed"),
                None,
            )
        }
        "max_cost" => {
            let max = config
                .get("usd")
                .and_then(Value::as_f64)
                .ok_or("the check has no `usd`")?;
            let cost = view.cost_usd.ok_or("the harness does not report cost")?;
            finding(
                cost <= max,
                format!("cost ${cost:.4}, at most ${max} allowed"),
                None,
            )
        }
        "max_duration" => {
            let max = config
                .get("seconds")
                .and_then(Value::as_f64)
                .ok_or("the check has no `seconds`")?;
            let took = view.duration_ms as f64 / 1000.0;
            finding(
                took <= max,
                format!("took {took:.1} s, at most {max} s allowed"),
                None,
            )
        }
        "exit_code" => {
            let code = int_of(config, "code")?;
            let got = view.exit_code;
            finding(
                got == Some(code as i32),
                format!(
                    "exit code {}, {code} wanted",
                    got.map(|c| c.to_string()).unwrap_or_else(|| "none".into())
                ),
                None,
            )
        }
        "stdout_equals" => {
            let text = str_of(config, "text")?;
            let got = view.stdout.trim_end_matches(['\n', '\r']);
            finding(
                got == text.trim_end_matches(['\n', '\r']),
                "standard output compared".to_string(),
                Some(excerpt(got, 0, 0)),
            )
        }
        "stderr_contains" => {
            let needle = str_of(config, "needle")?;
            let at = view.stderr.find(needle);
            finding(
                at.is_some(),
                format!(
                    "{needle:?} is {}in standard error",
                    if at.is_some() { "" } else { "not " }
                ),
                at.map(|i| excerpt(&view.stderr, i, i + needle.len())),
            )
        }
        other => Err(format!("no built-in check `{other}`")),
    }
}

/// Whether a file check's `path` (relative to the root, else to the agent's folder) is a
/// symlink in the workspace, or lies through one.
fn symlink_at(view: &CaseRunView, path: &str) -> bool {
    view.is_symlink(Path::new(path)) || view.is_symlink(&view.cwd.join(path))
}

/// Why the agent counts as blocked: Claude Code's permission system refused a tool call
/// (`permission_denials` in its result), or a hook denied one — Claude Code reports a hook that
/// exits 2 as an error tool result reading `<Event>:<Tool> hook error: [command]: <message>`.
pub fn agent_blocked(view: &CaseRunView) -> Option<String> {
    let by_hook = view.events.iter().find_map(|e| match e {
        crate::harness::Event::ToolResult {
            output,
            is_error: true,
            ..
        } => {
            let text = output.trim_start_matches("Error: ");
            let hook = text
                .split_once(" hook error:")
                .is_some_and(|(head, _)| head.contains(':') && !head.contains(' '))
                || text.to_lowercase().contains("blocked by hook");
            hook.then(|| text.chars().take(200).collect())
        }
        // A hook the agent reports as having blocked a call (Codex's log).
        crate::harness::Event::HookRan { event, outcome, .. } if outcome.starts_with("blocked") => {
            Some(
                format!("{event} hook {outcome}")
                    .chars()
                    .take(200)
                    .collect(),
            )
        }
        _ => None,
    });
    by_hook.or_else(|| {
        (view.permission_denials > 0).then(|| {
            format!(
                "{} tool call(s) denied by permissions",
                view.permission_denials
            )
        })
    })
}

/// A check's outcome from its type's verdict, with negation applied.
pub fn outcome(c: &Check, result: Result<Finding, String>) -> CheckOutcome {
    match result {
        Ok(v) => CheckOutcome {
            id: c.id.clone(),
            kind: c.kind.clone(),
            passed: v.passed != c.negate,
            message: if c.negate {
                format!("negated: {}", v.message)
            } else {
                v.message
            },
            evidence: v.evidence,
            weight: c.weight,
            negated: c.negate,
            error: None,
            log: v.log,
            provider: None,
        },
        Err(e) => CheckOutcome {
            id: c.id.clone(),
            kind: c.kind.clone(),
            passed: false,
            message: format!("not evaluated: {e}"),
            evidence: None,
            weight: c.weight,
            negated: c.negate,
            error: Some(e),
            log: None,
            provider: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view(output: &str) -> CaseRunView {
        CaseRunView {
            output: output.to_string(),
            ..CaseRunView::default()
        }
    }

    fn passes(kind: &str, config: Value, output: &str) -> bool {
        evaluate(kind, &config, &view(output)).unwrap().passed
    }

    #[test]
    fn clauditor_text_checks() {
        assert!(passes(
            "contains",
            json!({"needle": "Venues"}),
            "## Venues\n"
        ));
        assert!(
            !passes("contains", json!({"needle": "venues"}), "## Venues\n"),
            "case-sensitive"
        );
        assert!(passes(
            "contains",
            json!({"needle": "venues", "ignore_case": true}),
            "## Venues"
        ));
        assert!(passes(
            "not_contains",
            json!({"needle": "Error"}),
            "all good"
        ));
        assert!(passes(
            "regex",
            json!({"pattern": r"\*\*\d+\."}),
            "x **1. A**"
        ));
        assert!(
            !passes("regex", json!({"pattern": "^b"}), "a\nb"),
            "^ anchors at the start without (?m)"
        );
        assert!(passes("regex", json!({"pattern": "(?m)^b"}), "a\nb"));
        assert!(
            passes("regex", json!({"pattern": r"(?<=\$)\d+"}), "cost $12"),
            "lookbehind works"
        );
        assert!(passes(
            "min_count",
            json!({"pattern": "^- ", "count": 1}),
            "- a\n- b"
        ));
        assert!(!passes(
            "min_count",
            json!({"pattern": "(?m)^- ", "count": 3}),
            "- a\n- b"
        ));
        assert!(passes(
            "min_count",
            json!({"pattern": "(?m)^- ", "count": 2}),
            "- a\n- b"
        ));
    }

    #[test]
    fn lengths_count_characters_not_bytes() {
        assert!(passes("min_length", json!({"length": 3}), "été"));
        assert!(passes("max_length", json!({"length": 3}), "été"));
        assert!(!passes("max_length", json!({"length": 2}), "été"));
    }

    #[test]
    fn urls_entries_and_formats_are_counted_like_clauditor() {
        let out = "See https://a.com/x, https://a.com/x and (https://b.org).\n**1. One** **2. Two** **3. Three**";
        assert!(
            passes("has_urls", json!({"count": 3}), out),
            "duplicates count"
        );
        assert!(!passes("has_urls", json!({"count": 4}), out));
        assert!(passes("has_entries", json!({"count": 3}), out));
        assert!(passes(
            "has_format",
            json!({"format": "phone_us", "count": 2}),
            "call (408) 555-0123 or 408.555.0199"
        ));
        assert!(!passes(
            "has_format",
            json!({"format": "uuid", "count": 1}),
            "no ids"
        ));
        let v = evaluate("has_urls", &json!({"count": 1}), &view(out)).unwrap();
        assert_eq!(
            v.evidence.as_deref(),
            Some("https://a.com/x, | https://a.com/x | https://b.org")
        );
    }

    #[test]
    fn skillet_semantics() {
        assert!(passes(
            "starts_with",
            json!({"prefix": "**issue**", "ignore_case": true}),
            "**Issue** (blocking): x"
        ));
        assert!(
            !passes(
                "starts_with",
                json!({"prefix": "issue", "ignore_case": true}),
                "  issue"
            ),
            "no left strip"
        );
        assert!(
            passes(
                "ends_with",
                json!({"suffix": ".", "ignore_case": true}),
                "done.\n  "
            ),
            "right-stripped"
        );
        let mut v = view("");
        v.events = vec![crate::harness::Event::ToolCall {
            id: "1".into(),
            name: "Read".into(),
            input: json!({}),
        }];
        assert!(
            evaluate("tool_called", &json!({"tool": "Read"}), &v)
                .unwrap()
                .passed
        );
        assert!(
            !evaluate("tool_called", &json!({"tool": "read"}), &v)
                .unwrap()
                .passed,
            "exact names"
        );
        assert!(
            evaluate("tool_not_called", &json!({"tool": "Write"}), &v)
                .unwrap()
                .passed
        );
    }

    #[test]
    fn a_hook_denial_or_a_permission_denial_blocks_the_agent() {
        let result = |output: &str| crate::harness::Event::ToolResult {
            id: "t".into(),
            output: output.into(),
            is_error: true,
        };
        let mut v = view("");
        v.events = vec![result(
            "PreToolUse:Write hook error: [sh block.sh]: writes to /etc are not allowed\n",
        )];
        assert!(agent_blocked(&v).unwrap().contains("not allowed"));
        v.events = vec![result(
            "File does not exist. Note: the hook error log is empty",
        )];
        assert!(
            agent_blocked(&v).is_none(),
            "an ordinary tool error is not a block"
        );
        v.events.clear();
        v.permission_denials = 1;
        assert!(agent_blocked(&v).is_some());
    }

    #[test]
    fn file_checks_never_read_through_a_symlink() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(ws.join("inputs")).unwrap();
        std::fs::write(d.path().join("secret.txt"), "SECRET\n").unwrap();
        std::fs::create_dir_all(d.path().join("outside")).unwrap();
        std::fs::write(d.path().join("outside/f.txt"), "SECRET\n").unwrap();
        std::os::unix::fs::symlink(d.path().join("secret.txt"), ws.join("leak.txt")).unwrap();
        std::os::unix::fs::symlink(d.path().join("secret.txt"), ws.join("inputs/out.txt")).unwrap();
        std::os::unix::fs::symlink(d.path().join("outside"), ws.join("dir")).unwrap();
        let v = CaseRunView {
            // As if a listing named them: the content must still not be read.
            files: ["leak.txt", "inputs/out.txt", "dir/f.txt"]
                .iter()
                .map(std::path::PathBuf::from)
                .collect(),
            file_root: Some(crate::workspace::layers::Tree::dir(ws.clone())),
            cwd: "inputs".into(),
            ..CaseRunView::default()
        };
        for path in [
            "leak.txt",
            "out.txt",
            "dir/f.txt",
            "../secret.txt",
            "inputs/../../secret.txt",
        ] {
            let o = evaluate(
                "file_contains",
                &json!({"path": path, "needle": "SECRET"}),
                &v,
            )
            .unwrap();
            assert!(!o.passed, "{path}: {}", o.message);
            assert!(o.evidence.is_none(), "{path}: {:?}", o.evidence);
            let o = evaluate("file_matches", &json!({"path": path, "pattern": "SEC"}), &v).unwrap();
            assert!(!o.passed, "{path}: {}", o.message);
        }
        let o = evaluate(
            "file_contains",
            &json!({"path": "leak.txt", "needle": "x"}),
            &v,
        )
        .unwrap();
        assert!(o.message.contains("symlink"), "{}", o.message);
        // A link is seen as a link, not as the file it points at.
        let live = CaseRunView {
            files: Default::default(),
            ..v.clone()
        };
        let o = evaluate("file_exists", &json!({"path": "leak.txt"}), &live).unwrap();
        assert!(!o.passed);
        assert!(o.message.contains("symlink"), "{}", o.message);
        assert_eq!(v.read_file(Path::new("leak.txt")), None);
    }

    #[test]
    fn file_created_needs_the_run_to_have_created_the_file() {
        let v = CaseRunView {
            files: ["old.txt", "out/new.txt", "inputs/r.txt"]
                .iter()
                .map(std::path::PathBuf::from)
                .collect(),
            created: ["out/new.txt", "inputs/r.txt"]
                .iter()
                .map(std::path::PathBuf::from)
                .collect(),
            cwd: "inputs".into(),
            ..CaseRunView::default()
        };
        let run = |path: &str| evaluate("file_created", &json!({ "path": path }), &v).unwrap();
        assert!(run("out/new.txt").passed);
        assert!(run("r.txt").passed, "relative to the agent's folder too");
        let old = run("old.txt");
        assert!(!old.passed);
        assert!(
            old.message.contains("existed before the run"),
            "{}",
            old.message
        );
        assert!(run("gone.txt").message.contains("does not exist"));
    }

    #[test]
    fn file_fixture_skill_sequence_and_budget_checks() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("inputs")).unwrap();
        std::fs::write(d.path().join("brief.md"), "# Brief\nPricing: $9/month\n").unwrap();
        std::fs::write(d.path().join("inputs/out.txt"), "done\n").unwrap();
        let call = |name: &str| crate::harness::Event::ToolCall {
            id: "t".into(),
            name: name.into(),
            input: json!({}),
        };
        let v = CaseRunView {
            files: ["brief.md", "inputs/out.txt"]
                .iter()
                .map(std::path::PathBuf::from)
                .collect(),
            file_root: Some(crate::workspace::layers::Tree::dir(d.path())),
            cwd: "inputs".into(),
            events: vec![
                call("Skill"),
                crate::harness::Event::SkillInvoked {
                    name: "brief".into(),
                },
                call("Read"),
                call("Bash"),
                call("Write"),
            ],
            num_turns: Some(4),
            cost_usd: Some(0.02),
            duration_ms: 1500,
            ..CaseRunView::default()
        };
        let ok = |kind: &str, c: Value| evaluate(kind, &c, &v).unwrap().passed;
        assert!(ok(
            "file_contains",
            json!({"path": "brief.md", "needle": "$9/month"})
        ));
        assert!(
            ok(
                "file_contains",
                json!({"path": "out.txt", "needle": "done"})
            ),
            "relative to the agent's folder too"
        );
        assert!(!ok(
            "file_contains",
            json!({"path": "missing.md", "needle": "x"})
        ));
        assert!(ok(
            "file_matches",
            json!({"path": "brief.md", "pattern": "(?m)^# \\w+$"})
        ));
        assert!(ok("fixture_unchanged", json!({})));
        assert!(ok("skill_invoked", json!({"skill": "brief"})));
        assert!(!ok("skill_invoked", json!({"skill": "other"})));
        assert!(ok(
            "tool_sequence",
            json!({"tools": ["Skill", "Bash", "Write"]})
        ));
        assert!(
            !ok("tool_sequence", json!({"tools": ["Write", "Read"]})),
            "order matters"
        );
        assert!(ok("max_turns", json!({"turns": 4})) && !ok("max_turns", json!({"turns": 3})));
        assert!(ok("max_cost", json!({"usd": 0.05})) && !ok("max_cost", json!({"usd": 0.01})));
        assert!(
            ok("max_duration", json!({"seconds": 2})) && !ok("max_duration", json!({"seconds": 1}))
        );
        let mut changed = v.clone();
        changed.changed_fixtures = vec!["inputs/sales.csv".into()];
        assert!(
            !evaluate("fixture_unchanged", &json!({}), &changed)
                .unwrap()
                .passed
        );
        let mut no_cost = v.clone();
        no_cost.cost_usd = None;
        assert!(
            evaluate("max_cost", &json!({"usd": 1}), &no_cost).is_err(),
            "unknown cost is not a pass"
        );
    }

    #[test]
    fn negation_and_unevaluable_checks() {
        let check = |kind: &str, config: Value, negate: bool| Check {
            id: "c".into(),
            kind: kind.into(),
            config,
            negate,
            weight: 1.0,
            target: crate::spec::CheckTarget::Output,
            location: None,
        };
        let checks = crate::assert::check::Checks::builtin(Default::default());
        let r = checks.run(
            &[check("contains", json!({"needle": "x"}), true)],
            &std::sync::Arc::new(view("xyz")),
        );
        assert!(!r[0].passed && r[0].negated);
        let r = checks.run(
            &[check("nope", json!({}), false)],
            &std::sync::Arc::new(view("")),
        );
        assert!(
            !r[0].passed && r[0].error.is_some(),
            "a check that cannot run never passes"
        );
    }

    #[test]
    fn excerpts_are_bounded_and_on_one_line() {
        let text = format!("{}needle\n{}", "a".repeat(100), "b".repeat(100));
        let e = excerpt(&text, 100, 106);
        assert!(e.starts_with('…') && e.ends_with('…') && e.contains("needle⏎"));
        assert!(e.chars().count() <= 60 + 6 + 60 + 2);
    }
}
