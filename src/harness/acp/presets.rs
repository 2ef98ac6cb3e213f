//! Agent CLIs run through the `acp` harness, each a preset: the command line that makes it an
//! ACP agent on stdio, its login and model endpoint variables, where it reads skills, and the
//! private settings written into the case-run's HOME before it starts. How a skill load shows
//! in its events is read by [`super::read`] for every engine alike.

use std::path::Path;

/// Writes an engine's settings into the case-run's private HOME (and may add variables).
pub type Prepare = fn(home: &Path, env: &mut Vec<(String, String)>) -> std::io::Result<()>;

/// One engine driven over ACP.
pub struct Preset {
    /// The harness's name (`--harness qwen-code`).
    pub name: &'static str,
    /// The program, found on PATH.
    pub program: &'static str,
    /// The arguments that make it speak ACP on stdio, headless and allowed to act.
    pub args: &'static [&'static str],
    /// The flag that picks a model (`--model`), when the run names one.
    pub model_flag: Option<&'static str>,
    /// The arguments that make it print its version.
    pub version_args: &'static [&'static str],
    /// Any one of these set is a login.
    pub login: &'static [&'static str],
    /// What to tell the user when there is none.
    pub login_fix: &'static str,
    /// Where it reads a project's skills (relative to the workspace).
    pub skill_folders: &'static [&'static str],
    /// Its settings, written into the private HOME.
    pub prepare: Prepare,
}

/// GitHub Copilot CLI (`@github/copilot`): `copilot --acp --allow-all-tools`, a model of your
/// own from `COPILOT_PROVIDER_BASE_URL` (and `COPILOT_PROVIDER_API_KEY`, `COPILOT_PROVIDER_TYPE`,
/// `COPILOT_MODEL`; offline: no GitHub login, telemetry or update), or a GitHub login from
/// `COPILOT_GITHUB_TOKEN`; skills in `.github/skills` (and `.claude/skills`, `.agents/skills`);
/// a skill load is its `skill` tool, titled `Using skill: <name>`.
pub const COPILOT: Preset = Preset {
    name: "copilot",
    program: "copilot",
    args: &["--acp", "--allow-all-tools"],
    model_flag: Some("--model"),
    version_args: &["--version"],
    login: &["COPILOT_PROVIDER_BASE_URL", "COPILOT_GITHUB_TOKEN"],
    login_fix: "set COPILOT_PROVIDER_BASE_URL (and COPILOT_PROVIDER_API_KEY) for a model of your own, or COPILOT_GITHUB_TOKEN for a Copilot subscription",
    skill_folders: &[".github/skills"],
    prepare: copilot_settings,
};

/// With a model of one's own, Copilot runs offline: no GitHub login, telemetry, web tools
/// or auto-update.
fn copilot_settings(_home: &Path, env: &mut Vec<(String, String)>) -> std::io::Result<()> {
    let byok = env.iter().any(|(k, _)| k == "COPILOT_PROVIDER_BASE_URL");
    let mut set = |k: &str, v: &str| {
        env.retain(|(e, _)| e != k);
        env.push((k.to_string(), v.to_string()));
    };
    if byok {
        set("COPILOT_OFFLINE", "true");
    }
    set("COPILOT_AUTO_UPDATE", "false");
    Ok(())
}

/// Claude's ACP adapter (`@agentclientprotocol/claude-agent-acp`, bundling Claude Code through the
/// Claude Agent SDK): `claude-agent-acp`, `ANTHROPIC_API_KEY` (or `ANTHROPIC_AUTH_TOKEN`,
/// `CLAUDE_CODE_OAUTH_TOKEN`) and `ANTHROPIC_BASE_URL`, skills in `.claude/skills`; a skill load
/// is Claude's `Skill` tool. A cross-check of the built-in `claude-code` harness.
pub const CLAUDE_CODE_ACP: Preset = Preset {
    name: "claude-code-acp",
    program: "claude-agent-acp",
    args: &[],
    model_flag: None,
    version_args: &["--version"],
    login: &[
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
    ],
    login_fix: "set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN)",
    skill_folders: &[".claude/skills"],
    prepare: claude_settings,
};

/// `~/.claude/settings.json` with permissions bypassed (the sandbox is the boundary; as root
/// Claude Code takes that only with `IS_SANDBOX=1`), and no traffic but the model's.
fn claude_settings(home: &Path, env: &mut Vec<(String, String)>) -> std::io::Result<()> {
    let dir = home.join(".claude");
    std::fs::create_dir_all(&dir)?;
    let settings = serde_json::json!({"permissions": {"defaultMode": "bypassPermissions"}});
    std::fs::write(dir.join("settings.json"), settings.to_string())?;
    let mut set = |k: &str, v: &str| {
        env.retain(|(e, _)| e != k);
        env.push((k.to_string(), v.to_string()));
    };
    set("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    set("DISABLE_AUTOUPDATER", "1");
    if crate::host::running_as_root() {
        set("IS_SANDBOX", "1");
    }
    Ok(())
}

/// Qwen Code (`@qwen-code/qwen-code`): `qwen --acp`, an OpenAI-compatible endpoint from
/// `OPENAI_BASE_URL`/`OPENAI_API_KEY`/`OPENAI_MODEL`, skills in `.qwen/skills` (and
/// `.agents/skills`); a skill load is its `skill` tool.
pub const QWEN_CODE: Preset = Preset {
    name: "qwen-code",
    program: "qwen",
    args: &["--acp"],
    model_flag: Some("--model"),
    version_args: &["--version"],
    login: &["OPENAI_API_KEY"],
    login_fix: "set OPENAI_API_KEY (and OPENAI_BASE_URL for an endpoint other than OpenAI's)",
    skill_folders: &[".qwen/skills"],
    prepare: qwen_settings,
};

/// `~/.qwen/settings.json`: OpenAI-compatible auth without a prompt, tools approved (the
/// sandbox is the boundary), no usage statistics, no auto-update, no side requests.
fn qwen_settings(home: &Path, _env: &mut Vec<(String, String)>) -> std::io::Result<()> {
    let dir = home.join(".qwen");
    std::fs::create_dir_all(&dir)?;
    let settings = serde_json::json!({
        "security": {"auth": {"selectedType": "openai"}},
        "tools": {"approvalMode": "yolo"},
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"enableAutoUpdate": false},
        "ui": {"enableFollowupSuggestions": false},
        "memory": {"enableManagedAutoMemory": false},
    });
    std::fs::write(dir.join("settings.json"), settings.to_string())
}
