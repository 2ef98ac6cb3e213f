//! What a plugin provides, in the host's own terms, whatever WIT version it was built
//! against: its check types, formats and harnesses, and a check's verdict.

use serde::Serialize;

use crate::record::agent::ErrorCategory;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckTypeInfo {
    pub name: String,
    pub summary: String,
    pub config_schema: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FormatInfo {
    pub name: String,
    pub summary: String,
    pub example: String,
}

/// A harness a plugin provides. The fields after `program` came with WIT 0.2.0 (engines to
/// endpoints) and 0.3.0 (skill folders to error kinds); an older plugin gets what assay
/// assumed for an agent it does not know ([`HarnessInfo::assumed`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HarnessInfo {
    pub name: String,
    pub summary: String,
    pub program: String,
    /// `claude-code` and/or `codex`: where the skill and a package's parts are installed.
    pub engines: Vec<String>,
    /// Whether the agent expands `/<command>` prompts itself.
    pub slash_commands: bool,
    /// How the agent logs in, checked before anything runs.
    pub login: Option<DeclaredLogin>,
    /// (variable, default URL) of each model endpoint.
    pub endpoints: Vec<(String, String)>,
    /// Folders (relative to the workspace) the agent reads skills from, beyond its engines'.
    pub skill_folders: Vec<String>,
    /// The arguments that make the program print its version; none: it has no such flag.
    pub version_args: Option<Vec<String>>,
    /// The agent's own error kinds, each counted as one of assay's categories.
    pub error_kinds: Vec<ErrorKind>,
    /// The program speaks ACP: assay's client runs it and reads its session (WIT 0.3.0).
    pub speaks_acp: bool,
}

/// An error kind of an agent's own (WIT 0.3.0), counted as one of assay's categories.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorKind {
    pub name: String,
    pub summary: String,
    /// The category's name (`rate-limit`, …), checked when the plugin loads.
    pub counts_as: String,
}

impl ErrorKind {
    /// The category it counts as (`agent` for a name that is none: refused at load).
    pub fn category(&self) -> ErrorCategory {
        ErrorCategory::named(&self.counts_as).unwrap_or(ErrorCategory::Agent)
    }
}

/// A login: any one of the variables set, or any one of the files (below HOME) present.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeclaredLogin {
    pub vars: Vec<String>,
    pub files: Vec<String>,
    pub fix: String,
}

impl HarnessInfo {
    /// A harness described only by name, summary and program (WIT 0.1.0): installed for both
    /// engines, slash commands left to the agent, no login checked, endpoints from its
    /// `*_BASE_URL` variables, its version asked with `--version`, no error kinds of its own.
    pub fn assumed(name: String, summary: String, program: String) -> Self {
        HarnessInfo {
            name,
            summary,
            program,
            engines: Vec::new(),
            slash_commands: true,
            login: None,
            endpoints: Vec::new(),
            skill_folders: Vec::new(),
            version_args: Some(vec!["--version".into()]),
            error_kinds: Vec::new(),
            speaks_acp: false,
        }
    }

    /// What is wrong with the description, each said for `assay` to refuse the plugin: a skill
    /// folder that could leave the workspace, an error kind that is badly named, shadows a
    /// category or counts as none.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let counts = [
            ("skill folders", self.skill_folders.len(), MAX_SKILL_FOLDERS),
            ("error kinds", self.error_kinds.len(), MAX_ERROR_KINDS),
            (
                "version arguments",
                self.version_args.as_ref().map_or(0, Vec::len),
                MAX_VERSION_ARGS,
            ),
        ];
        for (what, n, max) in counts.into_iter().filter(|(_, n, max)| n > max) {
            out.push(format!(
                "the {} harness names {n} {what}, more than the {max} assay takes",
                self.name
            ));
        }
        let args = self.version_args.iter().flatten();
        if args.clone().any(|a| a.len() > 200 || a.contains('\0')) {
            out.push(format!(
                "the {} harness's version arguments are not plain short words",
                self.name
            ));
        }
        for f in &self.skill_folders {
            if !relative_folder(f) {
                out.push(format!(
                    "the {} harness's skill folder `{}` is not a plain relative folder (no `/` at the start, no `.` or `..` part, no `\\`)",
                    self.name,
                    crate::text::shorten(&crate::text::printable(f), 100)
                ));
            }
        }
        for k in &self.error_kinds {
            let name = crate::text::shorten(&crate::text::printable(&k.name), 64);
            if !plain_name(&k.name) {
                out.push(format!(
                    "the {} harness's error kind `{name}` is not a name of lowercase letters, digits and `-`",
                    self.name
                ));
            } else if ErrorCategory::named(&k.name).is_some() {
                out.push(format!(
                    "the {} harness's error kind `{name}` is assay's own category",
                    self.name
                ));
            }
            let counted = ErrorCategory::named(&k.counts_as);
            if counted.is_none() || counted == Some(ErrorCategory::Limit) {
                out.push(format!(
                    "the {} harness's error kind `{name}` counts as `{}`, which is none of the categories a harness may name ({})",
                    self.name,
                    crate::text::shorten(&crate::text::printable(&k.counts_as), 64),
                    ErrorCategory::NAMES
                        .iter()
                        .filter(|n| **n != "limit")
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        out
    }
}

/// At most this many skill folders, error kinds and version arguments per harness: each
/// folder is a copy of the skill (and its siblings) per case-run.
const MAX_SKILL_FOLDERS: usize = 8;
const MAX_ERROR_KINDS: usize = 32;
const MAX_VERSION_ARGS: usize = 8;

/// A folder below the workspace: relative, each part a plain name.
fn relative_folder(f: &str) -> bool {
    !f.is_empty()
        && f.len() <= 200
        && !f.contains('\\')
        && !f.contains('\0')
        && f.trim_end_matches('/')
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != "..")
}

fn plain_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// What a plugin's check concluded, before negation.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginVerdict {
    pub passed: bool,
    pub message: String,
    pub evidence: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(folders: &[&str], kinds: &[(&str, &str)]) -> HarnessInfo {
        HarnessInfo {
            skill_folders: folders.iter().map(|f| f.to_string()).collect(),
            error_kinds: kinds
                .iter()
                .map(|(n, c)| ErrorKind {
                    name: n.to_string(),
                    summary: String::new(),
                    counts_as: c.to_string(),
                })
                .collect(),
            ..HarnessInfo::assumed("acme".into(), String::new(), "acme-agent".into())
        }
    }

    #[test]
    fn skill_folders_stay_in_the_workspace_and_kinds_count_as_a_category() {
        let fine = with(
            &[".acme/skills", "tools/skills/"],
            &[("quota", "rate-limit")],
        );
        assert_eq!(fine.problems(), Vec::<String>::new());
        for bad in [
            "/etc",
            "../up",
            "a/../../b",
            ".",
            "a//b",
            "",
            "a\\b",
            "a\0b",
        ] {
            assert_eq!(with(&[bad], &[]).problems().len(), 1, "{bad:?}");
        }
        for (kind, counts) in [
            ("Quota", "agent"),
            ("crash", "agent"),
            ("quota", "nothing"),
            ("quota", "limit"),
            ("", "agent"),
        ] {
            assert_eq!(
                with(&[], &[(kind, counts)]).problems().len(),
                1,
                "{kind} as {counts}"
            );
        }
    }
}
