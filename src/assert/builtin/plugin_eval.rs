//! Checks with the semantics of Claude Code's `claude plugin eval` graders, so a suite of that
//! format gets the verdicts Claude Code gives it: JavaScript regular expressions over a chosen
//! text (`js_regex`), a tool's calls counted with their input matched (`tool_used`), the first
//! call of one tool before the first of another (`tool_order`), and a glob over the files the
//! run created (`created_glob`). Their messages are Claude Code's explanations, word for word.
//!
//! A grader that cannot be evaluated (a pattern JavaScript refuses, a file that is not there)
//! fails with `grader threw: …`, as in Claude Code: the suite's fault, scored as a failure.

use std::path::{Component, Path};

use serde_json::Value;

use super::{Finding, finding, str_of};
use crate::assert::view::CaseRunView;
use crate::harness::Event;
use crate::harness::tool_kinds;

/// The most of one file a `js_regex` reads, as Claude Code (10 MiB).
const MAX_FILE_BYTES: usize = 10 << 20;

/// A JavaScript `RegExp` built as `new RegExp(pattern, flags)`: ECMAScript syntax (no `(?i)`),
/// JavaScriptCore's message when it is refused.
pub struct JsRegex {
    re: regress::Regex,
    sticky: bool,
}

impl JsRegex {
    pub fn new(pattern: &str, flags: &str) -> Result<JsRegex, String> {
        let mut seen = String::new();
        for f in flags.chars() {
            if !"dgimsuvy".contains(f) || seen.contains(f) {
                return Err(format!(
                    "Invalid flags supplied to RegExp constructor '{flags}'"
                ));
            }
            seen.push(f);
        }
        // `g`, `d` and `y` change how a match is reported, not what matches; `y` anchors it
        // at the start, checked below.
        let kept: String = flags.chars().filter(|f| "imsuv".contains(*f)).collect();
        let re = regress::Regex::with_flags(pattern, kept.as_str())
            .map_err(|e| jsc_message(pattern, &e))?;
        Ok(JsRegex {
            re,
            sticky: flags.contains('y'),
        })
    }

    /// `RegExp.prototype.test` on a fresh object (`lastIndex` 0).
    pub fn test(&self, text: &str) -> bool {
        match self.re.find(text) {
            Some(m) => !self.sticky || m.start() == 0,
            None => false,
        }
    }

    /// `text.match(re)` with `g` added: every match, empty ones included.
    pub fn count(&self, text: &str) -> usize {
        if self.sticky {
            // Sticky and global: matches must follow one another from the start.
            let mut at = 0;
            let mut n = 0;
            for m in self.re.find_iter(text) {
                if m.start() != at {
                    break;
                }
                n += 1;
                at = m.end();
            }
            return n;
        }
        self.re.find_iter(text).count()
    }
}

/// The message JavaScriptCore (the engine of Claude Code's runner) gives for a pattern it
/// refuses, from the ECMAScript engine's reason: the texts observed from Claude Code 2.1.332,
/// else the engine's own.
fn jsc_message(pattern: &str, e: &regress::Error) -> String {
    let why = e.to_string();
    let opens = pattern.matches('(').count() - pattern.matches("\\(").count();
    let closes = pattern.matches(')').count() - pattern.matches("\\)").count();
    let text = match why.as_str() {
        w if w.starts_with("Range values reversed") => "range out of order in character class",
        "Invalid quantifier" => "numbers out of order in {} quantifier",
        w if w.starts_with("Backreference to invalid named capture group") => {
            "invalid \\k<> named backreference"
        }
        "Duplicate capture group name" => "duplicate group specifier name",
        "Invalid atom character" | "Invalid braced quantifier" => "nothing to repeat",
        "Unbalanced parenthesis" if closes > opens => "unmatched parentheses",
        "Unbalanced parenthesis" => "missing )",
        "Unbalanced bracket" => "missing terminating ] for character class",
        "Incomplete escape" => "\\ at end of pattern",
        w if w.starts_with("Invalid token at named capture group") => {
            "invalid group specifier name"
        }
        "Invalid property name" => "invalid property expression",
        "Invalid group modifier" if closes < opens => "missing )",
        "Invalid group modifier" => inline_flag_message(pattern),
        _ => return format!("Invalid regular expression: {}", why.to_lowercase()),
    };
    format!("Invalid regular expression: {text}")
}

/// JavaScriptCore on a PCRE inline flag group (`(?i)`): "invalid regular expression modifier"
/// when the group's letters and the pattern's closing run of `i`, `m`, `s` letters repeat
/// one (`(?i)paris`, `(?i)ss`), else "unrecognized character after (?" (`(?i)great`), as
/// observed of Claude Code 2.1.332.
fn inline_flag_message(pattern: &str) -> &'static str {
    let group: String = pattern
        .find("(?")
        .map(|i| {
            pattern[i + 2..]
                .chars()
                .take_while(|c| "ims-".contains(*c))
                .collect()
        })
        .unwrap_or_default();
    let tail: String = pattern
        .chars()
        .rev()
        .take_while(|c| "ims".contains(*c))
        .collect();
    let letters: Vec<char> = group
        .chars()
        .chain(tail.chars())
        .filter(|c| *c != '-')
        .collect();
    let repeats = letters
        .iter()
        .enumerate()
        .any(|(i, c)| letters[..i].contains(c));
    if repeats {
        "invalid regular expression modifier"
    } else {
        "unrecognized character after (?"
    }
}

/// `grader threw: …`: a grader that could not be evaluated, scored as a failure.
fn threw(why: impl std::fmt::Display) -> Result<Finding, String> {
    finding(false, format!("grader threw: {why}"), None)
}

/// The text a `js_regex` searches, and the label its messages give it: `source` is
/// `last_message`, `trace`, `files` or `mock_calls`; `path` a file under the agent's folder.
pub fn target_text(config: &Value, view: &CaseRunView) -> Result<(String, String), String> {
    if let Some(path) = config.get("path").and_then(Value::as_str) {
        let case = config.get("case").and_then(Value::as_str).unwrap_or("");
        return Ok((file_text(case, path, view)?, format!("file {path}")));
    }
    let source = config
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or("last_message");
    let text = match source {
        "last_message" => last_message(view),
        "trace" => trace(view),
        "files" => created_files(view).join("\n"),
        "mock_calls" => match &view.mock_calls {
            Some(text) => text.clone(),
            None => return Err("no mock stand-ins were active in this run (--mocks off, or no mocks/ directory applies to this case) — a mock_calls grader has nothing to check".to_string()),
        },
        other => return Err(format!("unknown target `{other}`")),
    };
    Ok((text, source.to_string()))
}

/// The text of the agent's last message that had any text.
pub fn last_message(view: &CaseRunView) -> String {
    view.events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Message { text } => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// Every message of the agent's stream, one compact JSON line each (lines that are not JSON
/// are left out, as Claude Code drops them).
pub fn trace(view: &CaseRunView) -> String {
    view.stdout
        .as_str()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The files the run created, relative to the agent's folder with `/`, in JavaScript's sort
/// order (UTF-16 code units).
pub fn created_files(view: &CaseRunView) -> Vec<String> {
    let mut files: Vec<String> = view
        .created
        .iter()
        .filter_map(|p| p.strip_prefix(&view.cwd).ok())
        .map(|p| {
            p.components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect();
    files.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    files
}

/// A focus file's text, under the agent's folder: never outside it, never through a link.
fn file_text(case: &str, path: &str, view: &CaseRunView) -> Result<String, String> {
    let p = Path::new(path);
    let escapes = p.is_absolute() || p.components().any(|c| matches!(c, Component::ParentDir));
    if escapes {
        return Err(format!(
            "case \"{case}\" grader focus file \"{path}\": path \"{path}\" escapes the run sandbox"
        ));
    }
    let missing =
        || format!("case \"{case}\" grader focus file \"{path}\": path \"{path}\" does not exist");
    let bytes = view
        .read_file_bytes(&view.cwd.join(p))
        .ok_or_else(missing)?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(format!(
            "case \"{case}\" grader focus file \"{path}\": file is larger than 10 MiB"
        ));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// How long one pattern may search one text: a pattern that backtracks without end (a
/// nested quantifier on text the agent wrote) fails its grader instead of holding the run.
const MATCH_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// A check evaluated on its own thread within `budget` ([`MATCH_BUDGET`]): a pattern that
/// backtracks without end fails its grader, `grader threw: …`, instead of holding the run
/// (the search is abandoned, its thread left to end on its own).
fn within(
    config: &Value,
    view: &CaseRunView,
    check: fn(&Value, &CaseRunView) -> Result<Finding, String>,
    budget: std::time::Duration,
) -> Result<Finding, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (config, view) = (config.clone(), view.clone());
    std::thread::spawn(move || {
        // The receiver may have given up: nothing to tell then.
        tx.send(check(&config, &view)).ok();
    });
    match rx.recv_timeout(budget) {
        Ok(found) => found,
        Err(_) => threw(format!(
            "the pattern searched for more than {} s without an answer (catastrophic backtracking)",
            budget.as_secs()
        )),
    }
}

/// `js_regex`, within [`MATCH_BUDGET`].
pub fn js_regex(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    within(config, view, js_regex_now, MATCH_BUDGET)
}

/// `tool_used`, within [`MATCH_BUDGET`] (its `input_match` runs on what the agent wrote).
pub fn tool_used(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    within(config, view, tool_used_now, MATCH_BUDGET)
}

/// `tool_order`, within [`MATCH_BUDGET`].
pub fn tool_order(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    within(config, view, tool_order_now, MATCH_BUDGET)
}

/// `js_regex`: `pattern` with `flags` over the target text; `match` is `contains`,
/// `not_contains` or `count:N`.
fn js_regex_now(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let pattern = str_of(config, "pattern")?;
    let flags = config.get("flags").and_then(Value::as_str).unwrap_or("");
    let mode = config
        .get("match")
        .and_then(Value::as_str)
        .unwrap_or("contains");
    let (text, label) = match target_text(config, view) {
        Ok(t) => t,
        Err(why) if why.starts_with("no mock") => return finding(false, why, None),
        Err(why) => return threw(why),
    };
    let re = match JsRegex::new(pattern, flags) {
        Ok(re) => re,
        Err(why) => return threw(why),
    };
    // Claude Code counts the matches whatever the mode.
    let (found, all) = (re.test(&text), re.count(&text));
    match mode {
        "contains" if found => finding(true, format!("matched {pattern}"), None),
        "contains" => finding(false, format!("pattern not found in {label}"), None),
        "not_contains" if found => finding(false, "pattern found (expected absent)", None),
        "not_contains" => finding(true, "pattern absent as expected", None),
        m if m.starts_with("count:") => {
            let n = js_parse_int(&m[6..]);
            finding(
                n == Some(all as u64),
                format!(
                    "found {all} matches (expected {})",
                    n.map_or("NaN".to_string(), |n| n.to_string())
                ),
                None,
            )
        }
        m => finding(
            false,
            format!("unknown match mode \"{m}\" (use contains | not_contains | count:N)"),
            None,
        ),
    }
}

/// `parseInt(s, 10)` for the digits a `count:` mode holds.
fn js_parse_int(s: &str) -> Option<u64> {
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// A tool as `tool_used` and `tool_order` name it: its exact name, and a pattern its input
/// (compact JSON) must match.
struct ToolMatch<'a> {
    tool: &'a str,
    input: Option<JsRegex>,
}

impl<'a> ToolMatch<'a> {
    fn of(v: &'a Value) -> Result<ToolMatch<'a>, String> {
        let (tool, input_match) = match v {
            Value::String(s) => (s.as_str(), None),
            _ => (
                str_of(v, "tool")?,
                v.get("input_match").and_then(Value::as_str),
            ),
        };
        let input = input_match.map(|p| JsRegex::new(p, "")).transpose()?;
        Ok(ToolMatch { tool, input })
    }

    /// Whether a call is of this tool: by its exact name on Claude Code (the suite's own
    /// engine), by its kind on the others (Claude Code's `Bash` is Codex's
    /// `command_execution`).
    fn matches(&self, call: &Call, exact: bool) -> bool {
        let same = call.name == self.tool
            || (!exact && call.kind.is_some() && call.kind == tool_kinds::kind_of(self.tool));
        same && self
            .input
            .as_ref()
            .is_none_or(|re| re.test(&call.input.to_string()))
    }
}

/// A tool call as these checks see it: its name, kind and input.
struct Call {
    name: String,
    kind: Option<&'static str>,
    input: Value,
}

/// Whether tool names are matched exactly: on Claude Code, whose tools the format names.
fn exact(view: &CaseRunView) -> bool {
    view.harness.is_empty() || view.harness == "claude-code"
}

/// The case-run's tool calls in order. On other engines a skill the agent loaded is a `Skill`
/// call (`{"skill": name}`), placed before the call that loaded it (Codex reads a SKILL.md
/// with its shell: the load comes first), and a file Codex changed an `apply_patch` call, as
/// the agent has no such tool of Claude Code's.
fn calls(view: &CaseRunView) -> Vec<Call> {
    let other = !exact(view);
    let mut out: Vec<Call> = Vec::new();
    let mut after_call = false;
    for e in &view.events {
        let (call, loads) = match e {
            Event::ToolCall { name, input, .. } => (
                Call {
                    kind: tool_kinds::kind_of(name),
                    name: name.clone(),
                    input: input.clone(),
                },
                false,
            ),
            Event::SkillInvoked { name, .. } if other => (
                Call {
                    name: "Skill".into(),
                    kind: Some("skill"),
                    input: serde_json::json!({ "skill": name }),
                },
                true,
            ),
            Event::FileChange { path, kind } if other && view.harness == "codex" => (
                Call {
                    name: "apply_patch".into(),
                    kind: Some(if kind == "add" { "write" } else { "edit" }),
                    input: serde_json::json!({ "path": path, "kind": kind }),
                },
                false,
            ),
            // A call's answer keeps it the latest call.
            Event::ToolResult { .. } => continue,
            _ => {
                after_call = false;
                continue;
            }
        };
        if loads && after_call {
            let at = out.len() - 1;
            out.insert(at, call);
        } else {
            after_call = !loads;
            out.push(call);
        }
    }
    out
}

/// `tool_used`: calls of `tool` (with `input_match`) between `min` (1) and `max` (no limit).
fn tool_used_now(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let wanted = match ToolMatch::of(config) {
        Ok(m) => m,
        Err(why) => return threw(why),
    };
    let exact = exact(view);
    let count = calls(view)
        .iter()
        .filter(|c| wanted.matches(c, exact))
        .count() as u64;
    let min = config.get("min").and_then(Value::as_u64).unwrap_or(1);
    let max = config.get("max").and_then(Value::as_u64);
    let shown_max = max.map_or("∞".to_string(), |m| m.to_string());
    finding(
        min <= count && max.is_none_or(|m| count <= m),
        format!(
            "{} called {count}x (expected {min}..{shown_max})",
            wanted.tool
        ),
        None,
    )
}

/// `tool_order`: the first call matching `before` comes before the first matching `after`.
fn tool_order_now(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let sides = config
        .get("before")
        .zip(config.get("after"))
        .ok_or("the check has no `before` or `after`")?;
    let (before, after) =
        match ToolMatch::of(sides.0).and_then(|b| Ok((b, ToolMatch::of(sides.1)?))) {
            Ok(s) => s,
            Err(why) => return threw(why),
        };
    let (calls, exact) = (calls(view), exact(view));
    let first = |m: &ToolMatch| calls.iter().position(|c| m.matches(c, exact));
    let Some(o) = first(&before) else {
        return finding(
            false,
            format!("\"before\" tool {} never called", before.tool),
            None,
        );
    };
    let Some(g) = first(&after) else {
        return finding(
            false,
            format!("\"after\" tool {} never called", after.tool),
            None,
        );
    };
    let (b, a) = (before.tool, after.tool);
    if o < g {
        finding(true, format!("{b}@{o} precedes {a}@{g}"), None)
    } else {
        finding(false, format!("{b}@{o} does NOT precede {a}@{g}"), None)
    }
}

/// `created_glob`: a file the run created matches the glob `path` (or none does, with
/// `exists: false`).
pub fn created_glob(config: &Value, view: &CaseRunView) -> Result<Finding, String> {
    let path = str_of(config, "path")?;
    let exists = config
        .get("exists")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let re = glob_regex(path);
    let found = created_files(view)
        .iter()
        .any(|l| !l.trim().is_empty() && re.test(l.trim()));
    let message = if found == exists {
        format!(
            "{path} {} as expected",
            if exists { "exists" } else { "absent" }
        )
    } else {
        format!(
            "{path} {} (expected {})",
            if found { "exists" } else { "missing" },
            if exists { "present" } else { "absent" }
        )
    };
    finding(found == exists, message, None)
}

/// Claude Code's glob: `**/` any folders, `**` anything, `*` within a folder, `?` any one
/// character (`/` too); everything else literal.
pub fn glob_regex(glob: &str) -> JsRegex {
    let mut re = String::from("^");
    let mut rest = glob;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("**/") {
            re.push_str("(?:.*/)?");
            rest = r;
            continue;
        }
        if let Some(r) = rest.strip_prefix("**") {
            re.push_str(".*");
            rest = r;
            continue;
        }
        match c {
            '*' => re.push_str("[^/]*"),
            '?' => re.push('.'),
            c if ".+^${}()|[]\\".contains(c) => {
                re.push('\\');
                re.push(c);
            }
            c => re.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    re.push('$');
    // Every special character is escaped: the pattern always compiles.
    JsRegex::new(&re, "").unwrap_or_else(|_| JsRegex::new("(?!)", "").expect("a fixed pattern"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view_with(events: Vec<Event>) -> CaseRunView {
        CaseRunView {
            events,
            ..CaseRunView::default()
        }
    }

    fn call(name: &str, input: Value) -> Event {
        Event::ToolCall {
            id: "t".into(),
            name: name.into(),
            input,
        }
    }

    #[test]
    fn javascript_syntax_not_pcre() {
        // JavaScriptCore's words, as Claude Code 2.1.332 reports them.
        for (p, why) in [
            ("(?i)paris", "invalid regular expression modifier"),
            ("(?i)ss", "invalid regular expression modifier"),
            ("(?i)great question|good", "unrecognized character after (?"),
            ("(?i)s", "unrecognized character after (?"),
            ("(?im)x", "unrecognized character after (?"),
            ("(?i", "missing )"),
            ("abc)", "unmatched parentheses"),
            ("[z-a]", "range out of order in character class"),
            ("x{2,1}", "numbers out of order in {} quantifier"),
            ("a**", "nothing to repeat"),
            ("[", "missing terminating ] for character class"),
            ("\\", "\\ at end of pattern"),
            ("(?<n>a)(?<n>b)", "duplicate group specifier name"),
        ] {
            let e = JsRegex::new(p, "").err().unwrap_or_default();
            assert_eq!(e, format!("Invalid regular expression: {why}"), "{p}");
        }
        assert!(JsRegex::new("(?i:x)", "").is_ok());
        assert!(JsRegex::new("\\p{Foo}", "").is_ok());
        assert!(JsRegex::new("\\p{Foo}", "u").is_err());
        assert!(JsRegex::new("paris", "i").unwrap().test("Paris"));
        assert!(JsRegex::new("(?<!not-)x", "").unwrap().test("x"));
        assert!(JsRegex::new("a", "gg").is_err());
        // No implicit multiline: ^ anchors the whole text.
        assert!(!JsRegex::new("^b", "").unwrap().test("a\nb"));
        assert!(JsRegex::new("^b", "m").unwrap().test("a\nb"));
        // Sticky: only at the start.
        assert!(!JsRegex::new("b", "y").unwrap().test("ab"));
    }

    #[test]
    fn a_pattern_that_backtracks_without_end_fails_in_bounded_time() {
        let v = view_with(vec![Event::Message {
            text: format!("{}b", "a".repeat(40)),
        }]);
        let t = std::time::Instant::now();
        let budget = std::time::Duration::from_secs(1);
        let f = within(&json!({"pattern": "^(a+)+$"}), &v, js_regex_now, budget).unwrap();
        assert!(!f.passed);
        assert!(
            f.message.contains("catastrophic backtracking"),
            "{}",
            f.message
        );
        assert!(t.elapsed() < budget + std::time::Duration::from_secs(2));
    }

    #[test]
    fn counts_empty_matches_as_javascript() {
        assert_eq!(JsRegex::new("x*", "").unwrap().count(&"a".repeat(46)), 47);
        assert_eq!(JsRegex::new("x*", "").unwrap().count("axxb"), 4);
    }

    #[test]
    fn regex_modes_and_messages() {
        let v = view_with(vec![
            Event::Message {
                text: "first".into(),
            },
            Event::Message {
                text: "Hello hello".into(),
            },
        ]);
        let f = js_regex(&json!({"pattern": "hello", "flags": "i"}), &v).unwrap();
        assert_eq!((f.passed, f.message.as_str()), (true, "matched hello"));
        let f = js_regex(&json!({"pattern": "first"}), &v).unwrap();
        assert_eq!(f.message, "pattern not found in last_message");
        let f = js_regex(&json!({"pattern": "[Hh]ello", "match": "count:2"}), &v).unwrap();
        assert_eq!(
            (f.passed, f.message.as_str()),
            (true, "found 2 matches (expected 2)")
        );
        let f = js_regex(&json!({"pattern": "bye", "match": "not_contains"}), &v).unwrap();
        assert_eq!(f.message, "pattern absent as expected");
        let f = js_regex(&json!({"pattern": "(?i)x"}), &v).unwrap();
        assert!(!f.passed);
        assert!(
            f.message
                .starts_with("grader threw: Invalid regular expression")
        );
        let f = js_regex(&json!({"pattern": "x", "path": "out.md", "case": "c"}), &v).unwrap();
        assert_eq!(
            f.message,
            "grader threw: case \"c\" grader focus file \"out.md\": path \"out.md\" does not exist"
        );
    }

    #[test]
    fn tool_used_counts_exact_names_and_input() {
        let v = view_with(vec![
            call("Skill", json!({"skill": "x:tidy-commit"})),
            call("skill", json!({})),
            call("Read", json!({"file_path": "a"})),
        ]);
        let c =
            json!({"tool": "Skill", "input_match": r#""skill"\s*:\s*"(?:[\w-]+:)?tidy-commit""#});
        let f = tool_used(&c, &v).unwrap();
        assert_eq!(
            (f.passed, f.message.as_str()),
            (true, "Skill called 1x (expected 1..∞)")
        );
        let f = tool_used(&json!({"tool": "Read", "max": 0, "min": 0}), &v).unwrap();
        assert_eq!(
            (f.passed, f.message.as_str()),
            (false, "Read called 1x (expected 0..0)")
        );
    }

    #[test]
    fn other_engines_are_matched_by_kind() {
        let mut v = view_with(vec![
            call("command_execution", json!({"command": "npm test"})),
            Event::SkillInvoked {
                name: "tidy-commit".into(),
                call: None,
            },
            Event::FileChange {
                path: "a.txt".into(),
                kind: "add".into(),
            },
        ]);
        v.harness = "codex".into();
        let f = tool_used(&json!({"tool": "Bash", "input_match": "npm test"}), &v).unwrap();
        assert_eq!(f.message, "Bash called 1x (expected 1..∞)");
        let f = tool_used(&json!({"tool": "Skill", "input_match": "tidy-commit"}), &v).unwrap();
        assert!(f.passed);
        let f = tool_order(&json!({"before": "Bash", "after": "Write"}), &v).unwrap();
        // The skill's load comes before the shell call that read it.
        assert_eq!(f.message, "Bash@1 precedes Write@2");
        // On Claude Code, names are exact: a MultiEdit is no Edit.
        v.harness = "claude-code".into();
        let f = tool_used(&json!({"tool": "Bash"}), &v).unwrap();
        assert!(!f.passed);
    }

    #[test]
    fn tool_order_compares_first_calls() {
        let v = view_with(vec![
            call("Glob", json!({})),
            call("Read", json!({})),
            call("Glob", json!({})),
        ]);
        let f = tool_order(&json!({"before": "Glob", "after": {"tool": "Read"}}), &v).unwrap();
        assert_eq!(f.message, "Glob@0 precedes Read@1");
        let f = tool_order(&json!({"before": "Read", "after": "Glob"}), &v).unwrap();
        assert_eq!(
            (f.passed, f.message.as_str()),
            (false, "Read@1 does NOT precede Glob@0")
        );
        let f = tool_order(&json!({"before": "Bash", "after": "Glob"}), &v).unwrap();
        assert_eq!(f.message, "\"before\" tool Bash never called");
    }

    #[test]
    fn created_glob_as_claude_code() {
        let mut v = CaseRunView::default();
        v.created.insert("out/a.txt".into());
        v.created.insert("docs/x/y.md".into());
        let f = created_glob(&json!({"path": "out/*.txt"}), &v).unwrap();
        assert_eq!(f.message, "out/*.txt exists as expected");
        let f = created_glob(&json!({"path": "**/*.md"}), &v).unwrap();
        assert!(f.passed);
        let f = created_glob(&json!({"path": "*.md"}), &v).unwrap();
        assert_eq!(f.message, "*.md missing (expected present)");
        let f = created_glob(&json!({"path": "**", "exists": false}), &v).unwrap();
        assert_eq!(f.message, "** exists (expected absent)");
        // `?` crosses folders, as in Claude Code.
        assert!(glob_regex("out?a.txt").test("out/a.txt"));
        assert_eq!(created_files(&v), vec!["docs/x/y.md", "out/a.txt"]);
    }
}
