//! One vocabulary for what a tool call does, across engines: `shell`, `read`, `write`,
//! `edit`, `glob`, `grep`, `list`, `skill`, `agent`, `todo`, `web_fetch`, `web_search`,
//! `ask`, `notebook`. A suite written for one engine's tools (Claude Code's `Bash`, say) is
//! graded on another by the kind (Codex's `command_execution` is a `shell` call too); each
//! case-run records its calls by kind beside their own names (`tool_kinds` in result.json).

/// Each engine's tool names, by kind.
const KINDS: &[(&str, &[&str])] = &[
    (
        "shell",
        &[
            "Bash",
            "PowerShell",
            "command_execution",
            "exec_command",
            "shell",
            "bash",
            "run_shell_command",
        ],
    ),
    (
        "read",
        &["Read", "read_file", "read", "view", "read_many_files"],
    ),
    ("write", &["Write", "write_file", "write", "create"]),
    (
        "edit",
        &[
            "Edit",
            "MultiEdit",
            "edit",
            "replace",
            "apply_patch",
            "patch",
            "str_replace",
        ],
    ),
    ("glob", &["Glob", "glob", "find_files"]),
    ("grep", &["Grep", "grep", "search_file_content", "search"]),
    ("list", &["LS", "list_directory", "list", "ls"]),
    ("skill", &["Skill", "skill", "activate_skill"]),
    ("agent", &["Agent", "Task", "task"]),
    (
        "todo",
        &["TodoWrite", "todowrite", "write_todos", "todo_write"],
    ),
    ("web_fetch", &["WebFetch", "web_fetch", "webfetch", "fetch"]),
    (
        "web_search",
        &["WebSearch", "web_search", "websearch", "google_web_search"],
    ),
    ("ask", &["AskUserQuestion", "ask_user", "question"]),
    ("notebook", &["NotebookEdit", "NotebookRead"]),
];

/// The kind of a tool, by any engine's name for it; `None` for a tool of no known kind (an
/// MCP server's, say).
pub fn kind_of(name: &str) -> Option<&'static str> {
    KINDS
        .iter()
        .find(|(_, names)| names.contains(&name))
        .map(|(kind, _)| *kind)
}

/// Programs whose runs only look: listing, reading, searching.
const LOOKING: &[&str] = &[
    "ls", "cat", "head", "tail", "less", "grep", "rg", "egrep", "find", "fd", "wc", "pwd", "tree",
    "file", "stat", "which", "du", "sort", "uniq", "cut", "nl", "realpath", "dirname", "basename",
];

/// Whether a tool call does something rather than explore: a write, an edit, or a shell
/// command other than one that only lists, reads or searches (and writes no file). Listing,
/// grep, glob, reading, a todo list, a skill, a sub-agent and any tool of no known kind are
/// not (a trigger run's turn budget counts only what acts, `--trigger-turns`).
pub fn acts(name: &str, input: &serde_json::Value) -> bool {
    match kind_of(name) {
        Some("write" | "edit" | "notebook") => true,
        Some("shell") => {
            let command = ["command", "cmd"]
                .iter()
                .find_map(|k| input.get(*k))
                .map(|c| match c {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_default();
            !only_looks(&command)
        }
        _ => false,
    }
}

/// Whether a shell command line only lists, reads or searches: every command of it (split at
/// `&&`, `||`, `;` and `|`, inside `bash -lc '…'`) one of [`LOOKING`], or `cd`, or `git` asked
/// for its status, log, a diff or a show, and nothing redirected into a file.
fn only_looks(command: &str) -> bool {
    let inner = [
        "bash -lc ",
        "bash -c ",
        "sh -c ",
        "/bin/bash -lc ",
        "/bin/sh -c ",
    ]
    .iter()
    .find_map(|w| command.trim_start().strip_prefix(w))
    .map(|rest| rest.trim().trim_matches(|c| c == '\'' || c == '"'))
    .unwrap_or(command);
    if inner.contains('>') || inner.trim().is_empty() {
        return false;
    }
    inner
        .split(['&', '|', ';', '\n'])
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .all(|part| {
            let mut words = part.split_whitespace();
            match words.next().unwrap_or("") {
                "cd" => true,
                "git" => matches!(
                    words.next(),
                    Some("status" | "log" | "diff" | "show" | "ls-files")
                ),
                first => LOOKING.contains(&first.rsplit('/').next().unwrap_or(first)),
            }
        })
}

/// The kinds, in the vocabulary's order.
pub fn kinds() -> impl Iterator<Item = &'static str> {
    KINDS.iter().map(|(k, _)| *k)
}

#[cfg(test)]
mod tests {
    #[test]
    fn writing_editing_and_commands_that_change_things_act_and_looking_does_not() {
        use serde_json::json as j;
        for (name, input) in [
            ("Write", j!({"file_path": "a"})),
            ("apply_patch", j!({})),
            ("Bash", j!({"command": "npm test"})),
            ("Bash", j!({"command": "cat a > b"})),
            (
                "command_execution",
                j!({"command": "bash -lc 'ls && touch x'"}),
            ),
            ("exec_command", j!({"cmd": "mkdir out"})),
        ] {
            assert!(acts(name, &input), "{name} {input}");
        }
        for (name, input) in [
            ("Read", j!({"file_path": "a"})),
            ("Glob", j!({})),
            ("Grep", j!({})),
            ("TodoWrite", j!({})),
            ("Skill", j!({"skill": "x"})),
            ("mcp__s__t", j!({})),
            ("Bash", j!({"command": "ls -la && grep -rn x . | head"})),
            (
                "command_execution",
                j!({"command": "/bin/bash -lc 'cat .agents/skills/x/SKILL.md'"}),
            ),
            ("Bash", j!({"command": "cd src; git status"})),
        ] {
            assert!(!acts(name, &input), "{name} {input}");
        }
    }

    use super::*;

    #[test]
    fn every_name_has_one_kind() {
        let mut seen = std::collections::HashSet::new();
        for (_, names) in KINDS {
            for n in *names {
                assert!(seen.insert(*n), "{n} has two kinds");
            }
        }
        assert_eq!(kind_of("Bash"), Some("shell"));
        assert_eq!(kind_of("command_execution"), Some("shell"));
        assert_eq!(kind_of("mcp__srv__tool"), None);
        assert_eq!(kinds().count(), KINDS.len());
    }
}
