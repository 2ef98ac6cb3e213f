//! The machine assay runs on, as the runner sees it: the PATH to search and the variables it
//! may pass on, and what is missing there that stops a run before it starts (exit 3). A leaf:
//! harnesses, the sandbox's probe and the judge all ask it, and it asks nobody.

pub mod output;

use std::path::{Path, PathBuf};

/// Something missing on the machine that stops a harness from running at all (exit 3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Unavailable {
    pub message: String,
    pub fix: String,
}

/// What the host knows of the machine: the PATH to search, and the variables it may pass on.
/// Every environment variable assay reads is read through it (clap's `env =` on a flag aside:
/// see `cli::run_flags`).
#[derive(Debug, Clone, Default)]
pub struct HostEnv {
    pub path: String,
    pub vars: Vec<(String, String)>,
}

impl HostEnv {
    /// The process's environment: the one place assay reads it (a variable whose name or
    /// value is not UTF-8 is left out, as if unset).
    pub fn from_process() -> Self {
        HostEnv {
            path: std::env::var("PATH").unwrap_or_default(),
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        }
    }

    /// One variable of this process's environment as it is set (even empty), read alone: for
    /// a read on a hot path (a plugin call's grants) or far from a run's [`HostEnv`].
    pub fn process_var(key: &str) -> Option<String> {
        std::env::var(key).ok()
    }

    /// This process's HOME as it is set (any bytes, even empty), read alone: for the readers
    /// that look beside the user's home (a project's root is never HOME's `.claude/`; Skillet's
    /// `~/.skillet/evals/`).
    pub fn process_home() -> Option<std::path::PathBuf> {
        std::env::var_os("HOME").map(std::path::PathBuf::from)
    }

    /// A variable that is set and not empty (an empty one is taken as unset).
    pub fn var(&self, key: &str) -> Option<&str> {
        self.raw(key).filter(|v| !v.is_empty())
    }

    /// A variable as it is set, even when empty.
    pub fn raw(&self, key: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether one of `vars` is set, or one of `files` (relative to HOME, never leaving it)
    /// exists: how an agent CLI finds its login.
    pub fn has_login(&self, vars: &[impl AsRef<str>], files: &[impl AsRef<str>]) -> bool {
        vars.iter().any(|v| self.var(v.as_ref()).is_some())
            || self.var("HOME").is_some_and(|home| {
                files.iter().any(|f| {
                    let rel = Path::new(f.as_ref());
                    rel.components()
                        .all(|c| matches!(c, std::path::Component::Normal(_)))
                        && Path::new(home).join(rel).is_file()
                })
            })
    }

    /// The full path of `program` on PATH, if it is there.
    pub fn which(&self, program: &str) -> Option<PathBuf> {
        if program.contains('/') {
            let p = PathBuf::from(program);
            return p.is_file().then_some(p);
        }
        std::env::split_paths(&self.path)
            .map(|d| d.join(program))
            .find(|p| is_executable(p))
    }
}

/// Whether assay runs as root (Claude Code refuses to skip permission prompts as root unless
/// told it is sandboxed).
pub fn running_as_root() -> bool {
    rustix::process::geteuid().is_root()
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What of the host's logins one harness's agent is given: its own vendor's and no other's
/// (the `command` harness and any agent assay does not know: none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Login {
    /// The variables that hold its keys and tokens, passed when set (and redacted).
    pub keys: Vec<String>,
    /// The variables that point it at its model endpoint (no secrets), passed when set.
    pub endpoints: Vec<String>,
    /// Its login files below HOME, copied into the private HOME when the user has them: only
    /// those of [`LOGIN_FILES`], whatever a harness plugin names.
    pub files: Vec<String>,
}

impl Login {
    /// A login of `keys`, `endpoints` and `files`.
    pub fn of(keys: &[&str], endpoints: &[&str], files: &[&str]) -> Login {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        Login {
            keys: owned(keys),
            endpoints: owned(endpoints),
            files: owned(files),
        }
    }

    /// Whether the variable `name` is part of it.
    pub fn passes(&self, name: &str) -> bool {
        self.keys.iter().chain(&self.endpoints).any(|k| k == name)
    }
}

/// The agent CLIs' login files below HOME that assay knows (and can find the secrets in): the
/// only files ever copied into a private HOME, each to its own harness.
pub const LOGIN_FILES: &[&str] = &[
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
];

/// Every vendor's login and endpoint variables assay knows: redacted from every record
/// whichever harness ran (each harness is given only its own, [`Login`]).
pub const AUTH: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "COPILOT_PROVIDER_BASE_URL",
    "COPILOT_PROVIDER_API_KEY",
    "COPILOT_GITHUB_TOKEN",
];

/// The LLM judge's own key variable: never given to an agent, redacted like a vendor's key.
pub const JUDGE_KEY: &str = "ASSAY_JUDGE_API_KEY";

/// The harnesses' settings that are no secrets (a provider's kind, a model's name), passed
/// when set and never redacted.
pub const SETTINGS: &[&str] = &["COPILOT_PROVIDER_TYPE", "COPILOT_MODEL", "OPENAI_MODEL"];
