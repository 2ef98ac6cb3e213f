//! Built-in check types and the keys each one takes.

use super::model::CheckTarget;

/// The type of one configuration key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// A string with something other than whitespace in it (a name, a tool, a text).
    Text,
    /// A string searched for in a text: anything but the empty string, so `" "` is a real
    /// needle (`not_contains " "` fails on any output with a space), as in clauditor.
    Needle,
    /// A regular expression that must compile.
    Regex,
    /// A native integer, at least `min`.
    Int { min: i64 },
    /// A registered format name.
    FormatName,
    /// true or false.
    Bool,
    /// A list of non-empty strings.
    TextList,
    /// A non-negative number.
    Number,
    /// A path relative to the workspace.
    Path,
    /// An object, kept as written (the JSON structure of `stdout_json`).
    Object,
    /// A string, the empty one included (a JavaScript regular expression's flags).
    String,
    /// Any value, kept as written (`tool_order`'s sides: a tool's name, or an object).
    Any,
}

#[derive(Debug, Clone, Copy)]
pub struct KeySpec {
    pub name: &'static str,
    pub kind: KeyKind,
    pub required: bool,
    /// The value used when an optional integer key is left out.
    pub default: Option<i64>,
}

const fn req(name: &'static str, kind: KeyKind) -> KeySpec {
    KeySpec {
        name,
        kind,
        required: true,
        default: None,
    }
}

const fn opt_int(name: &'static str, default: i64, min: i64) -> KeySpec {
    KeySpec {
        name,
        kind: KeyKind::Int { min },
        required: false,
        default: Some(default),
    }
}

/// A built-in check type.
#[derive(Debug)]
pub struct CheckType {
    pub name: &'static str,
    pub keys: &'static [KeySpec],
    pub target: CheckTarget,
    pub summary: &'static str,
}

impl CheckType {
    pub fn key_names(&self) -> Vec<&'static str> {
        self.keys.iter().map(|k| k.name).collect()
    }
}

const fn opt_list(name: &'static str) -> KeySpec {
    KeySpec {
        name,
        kind: KeyKind::TextList,
        required: false,
        default: None,
    }
}

/// The check types that say which skills a query reaches: the only ones a trigger query takes.
pub const ROUTING: &[&str] = &["must_fire", "must_not_fire", "no_other_skill"];

const fn opt(name: &'static str, kind: KeyKind) -> KeySpec {
    KeySpec {
        name,
        kind,
        required: false,
        default: None,
    }
}

const fn opt_bool(name: &'static str) -> KeySpec {
    KeySpec {
        name,
        kind: KeyKind::Bool,
        required: false,
        default: None,
    }
}

/// Text checks may ignore case (Skillet's always do).
const NEEDLE: &[KeySpec] = &[req("needle", KeyKind::Needle), opt_bool("ignore_case")];
const PATTERN: &[KeySpec] = &[req("pattern", KeyKind::Regex)];
const LENGTH: &[KeySpec] = &[req("length", KeyKind::Int { min: 0 })];
const COUNT: &[KeySpec] = &[opt_int("count", 1, 0)];

/// Every built-in type. clauditor's L1 types keep clauditor's names and keys exactly.
pub const BUILTIN: &[CheckType] = &[
    CheckType {
        name: "contains",
        keys: NEEDLE,
        target: CheckTarget::Output,
        summary: "the output contains `needle`",
    },
    CheckType {
        name: "not_contains",
        keys: NEEDLE,
        target: CheckTarget::Output,
        summary: "the output does not contain `needle`",
    },
    CheckType {
        name: "regex",
        keys: PATTERN,
        target: CheckTarget::Output,
        summary: "`pattern` matches somewhere in the output",
    },
    CheckType {
        name: "min_count",
        keys: &[
            req("pattern", KeyKind::Regex),
            req("count", KeyKind::Int { min: 0 }),
        ],
        target: CheckTarget::Output,
        summary: "`pattern` matches at least `count` times",
    },
    CheckType {
        name: "min_length",
        keys: LENGTH,
        target: CheckTarget::Output,
        summary: "the output is at least `length` characters",
    },
    CheckType {
        name: "max_length",
        keys: LENGTH,
        target: CheckTarget::Output,
        summary: "the output is at most `length` characters",
    },
    CheckType {
        name: "has_urls",
        keys: COUNT,
        target: CheckTarget::Output,
        summary: "the output contains at least `count` URLs",
    },
    CheckType {
        name: "has_entries",
        keys: COUNT,
        target: CheckTarget::Output,
        summary: "the output contains at least `count` numbered entries",
    },
    CheckType {
        name: "urls_reachable",
        keys: COUNT,
        target: CheckTarget::Output,
        summary: "at least `count` URLs in the output answer 2xx to HEAD",
    },
    CheckType {
        name: "has_format",
        keys: &[req("format", KeyKind::FormatName), opt_int("count", 1, 0)],
        target: CheckTarget::Output,
        summary: "at least `count` strings in the output match `format`",
    },
    CheckType {
        name: "starts_with",
        keys: &[req("prefix", KeyKind::Needle), opt_bool("ignore_case")],
        target: CheckTarget::Output,
        summary: "the output starts with `prefix`",
    },
    CheckType {
        name: "ends_with",
        keys: &[req("suffix", KeyKind::Needle), opt_bool("ignore_case")],
        target: CheckTarget::Output,
        summary: "the output ends with `suffix`",
    },
    CheckType {
        name: "tool_called",
        keys: &[req("tool", KeyKind::Text)],
        target: CheckTarget::Transcript,
        summary: "the agent called tool `tool`",
    },
    CheckType {
        name: "tool_not_called",
        keys: &[req("tool", KeyKind::Text)],
        target: CheckTarget::Transcript,
        summary: "the agent never called tool `tool`",
    },
    CheckType {
        name: "file_exists",
        keys: &[req("path", KeyKind::Path)],
        target: CheckTarget::Workspace,
        summary: "the workspace holds `path` after the run",
    },
    CheckType {
        name: "file_created",
        keys: &[req("path", KeyKind::Path)],
        target: CheckTarget::Workspace,
        summary: "the run created `path`: absent before the agent started, there after",
    },
    CheckType {
        name: "agent_blocked",
        keys: &[],
        target: CheckTarget::Transcript,
        summary: "a hook or a permission denial stopped the agent",
    },
    CheckType {
        name: "file_contains",
        keys: &[
            req("path", KeyKind::Path),
            req("needle", KeyKind::Needle),
            opt_bool("ignore_case"),
        ],
        target: CheckTarget::Workspace,
        summary: "the file at `path` contains `needle`",
    },
    CheckType {
        name: "file_matches",
        keys: &[req("path", KeyKind::Path), req("pattern", KeyKind::Regex)],
        target: CheckTarget::Workspace,
        summary: "`pattern` matches somewhere in the file at `path`",
    },
    CheckType {
        name: "fixture_unchanged",
        keys: &[],
        target: CheckTarget::Workspace,
        summary: "no staged fixture was changed or deleted (by hash)",
    },
    CheckType {
        name: "skill_invoked",
        keys: &[req("skill", KeyKind::Text)],
        target: CheckTarget::Transcript,
        summary: "the agent used the skill `skill`",
    },
    CheckType {
        name: "must_fire",
        keys: &[req("skill", KeyKind::Text)],
        target: CheckTarget::Transcript,
        summary: "the skill `skill` fired (routing: on a trigger query, at the trigger threshold)",
    },
    CheckType {
        name: "must_not_fire",
        keys: &[req("skill", KeyKind::Text)],
        target: CheckTarget::Transcript,
        summary: "the skill `skill` did not fire (routing: on a trigger query, under the threshold)",
    },
    CheckType {
        name: "no_other_skill",
        keys: &[opt_list("allow")],
        target: CheckTarget::Transcript,
        summary: "no skill fired but the one under test, the case's `must_fire` skills and `allow`",
    },
    CheckType {
        name: "tool_sequence",
        keys: &[req("tools", KeyKind::TextList)],
        target: CheckTarget::Transcript,
        summary: "the tools were called in this order (others may come between)",
    },
    CheckType {
        name: "max_turns",
        keys: &[req("turns", KeyKind::Int { min: 0 })],
        target: CheckTarget::Transcript,
        summary: "the agent took at most `turns` turns",
    },
    CheckType {
        name: "max_cost",
        keys: &[req("usd", KeyKind::Number)],
        target: CheckTarget::Transcript,
        summary: "the run cost at most `usd` dollars",
    },
    CheckType {
        name: "max_duration",
        keys: &[req("seconds", KeyKind::Number)],
        target: CheckTarget::Process,
        summary: "the run took at most `seconds` seconds",
    },
    CheckType {
        name: "exit_code",
        keys: &[req("code", KeyKind::Int { min: 0 })],
        target: CheckTarget::Process,
        summary: "the process exited with `code`",
    },
    CheckType {
        name: "stdout_equals",
        keys: &[req("text", KeyKind::Text)],
        target: CheckTarget::Process,
        summary: "standard output equals `text` (trailing newlines ignored)",
    },
    CheckType {
        name: "stderr_contains",
        keys: NEEDLE,
        target: CheckTarget::Process,
        summary: "standard error contains `needle`",
    },
    CheckType {
        name: "stdio_not_contains",
        keys: NEEDLE,
        target: CheckTarget::Process,
        summary: "neither standard output nor standard error contains `needle`",
    },
    CheckType {
        name: "js_regex",
        keys: &[
            req("pattern", KeyKind::Text),
            opt("flags", KeyKind::String),
            opt("match", KeyKind::Text),
            opt("source", KeyKind::Text),
            opt("path", KeyKind::Path),
            opt("case", KeyKind::String),
        ],
        target: CheckTarget::Transcript,
        summary: "a JavaScript regular expression (`pattern`, `flags`) over the last message, the transcript, the created files' names or a file (`source`, `path`): `match` contains, not_contains or count:N",
    },
    CheckType {
        name: "tool_used",
        keys: &[
            req("tool", KeyKind::Text),
            opt("input_match", KeyKind::Text),
            opt("min", KeyKind::Int { min: 0 }),
            opt("max", KeyKind::Int { min: 0 }),
        ],
        target: CheckTarget::Transcript,
        summary: "`tool` was called between `min` (1) and `max` times, with input (compact JSON) matching the JavaScript regular expression `input_match`",
    },
    CheckType {
        name: "tool_order",
        keys: &[req("before", KeyKind::Any), req("after", KeyKind::Any)],
        target: CheckTarget::Transcript,
        summary: "the first call of `before` comes before the first call of `after` (each a tool, or `{tool, input_match}`)",
    },
    CheckType {
        name: "created_glob",
        keys: &[req("path", KeyKind::Text), opt_bool("exists")],
        target: CheckTarget::Workspace,
        summary: "a file the run created matches the glob `path` (none does, with `exists: false`)",
    },
    CheckType {
        name: "stdout_json",
        keys: &[req("json", KeyKind::Object)],
        target: CheckTarget::Process,
        summary: "standard output is JSON that holds `json` (a deep partial match)",
    },
];

/// The clauditor L1 assertion types, in clauditor's order.
pub const CLAUDITOR_TYPES: &[&str] = &[
    "contains",
    "not_contains",
    "regex",
    "min_count",
    "min_length",
    "max_length",
    "has_urls",
    "has_entries",
    "urls_reachable",
    "has_format",
];

/// The keys clauditor itself allows on each of its types (it knows nothing of `ignore_case`).
pub fn clauditor_keys(ty: &CheckType) -> Vec<&'static str> {
    ty.keys
        .iter()
        .map(|k| k.name)
        .filter(|k| *k != "ignore_case")
        .collect()
}

pub fn lookup(name: &str) -> Option<&'static CheckType> {
    BUILTIN.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_clauditor_type_is_built_in() {
        for t in CLAUDITOR_TYPES {
            assert!(lookup(t).is_some(), "{t}");
        }
        let names: std::collections::HashSet<_> = BUILTIN.iter().map(|t| t.name).collect();
        assert_eq!(names.len(), BUILTIN.len(), "duplicate type names");
    }
}
