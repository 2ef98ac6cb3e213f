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

/// The kinds, in the vocabulary's order.
pub fn kinds() -> impl Iterator<Item = &'static str> {
    KINDS.iter().map(|(k, _)| *k)
}

#[cfg(test)]
mod tests {
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
