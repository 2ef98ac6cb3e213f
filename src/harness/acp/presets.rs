//! Agent CLIs run through the `acp` harness, each a preset: the command line that makes it an
//! ACP agent on stdio, its login and model endpoint variables, where it reads skills, and the
//! private settings written into the case-run's HOME before it starts. How a skill load shows
//! in its events is read by [`super::read`] for every engine alike.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

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
    /// How the run's model (`--model`) is given to it.
    pub model: ModelChoice,
    /// The arguments that make it print its version.
    pub version_args: &'static [&'static str],
    /// Any one of these set is a login.
    pub login: &'static [&'static str],
    /// What to tell the user when there is none.
    pub login_fix: &'static str,
    /// Every key variable it is given (those of `login`, and a key that goes with an endpoint
    /// of one's own): no other vendor's reaches it.
    pub keys: &'static [&'static str],
    /// Its login files below HOME, copied into the private HOME.
    pub files: &'static [&'static str],
    /// Where it reads a project's skills (relative to the workspace).
    pub skill_folders: &'static [&'static str],
    /// Its settings, written into the private HOME.
    pub prepare: Prepare,
    /// The variable that points it at a model endpoint of one's own.
    pub base_url: &'static str,
    /// The endpoints it reaches when that is not set (`--network model`).
    pub default_endpoints: &'static [&'static str],
    /// How a package's MCP servers reach it.
    pub mcp: McpHandoff,
    /// Programs its tools run, each with why: checked on PATH before anything runs, and shown
    /// inside the sandbox.
    pub needs: &'static [(&'static str, &'static str)],
    /// When it must be told a model (checked before anything runs).
    pub model_needed: Option<ModelNeeded>,
}

/// An engine that, pointed at an endpoint of one's own (`when` set), needs a model named: the
/// run's `--model`, or `var`.
pub struct ModelNeeded {
    pub when: &'static str,
    pub var: &'static str,
    /// What happens without one.
    pub why: &'static str,
}

/// How an engine is given a package's MCP servers.
pub enum McpHandoff {
    /// In `session/new` (ACP's own way).
    Session,
    /// Written into its settings in the private HOME, where it reads them (it leaves ACP's
    /// out).
    Settings(fn(home: &Path, servers: &BTreeMap<String, Value>) -> std::io::Result<()>),
}

/// How a preset's engine is told the run's model.
pub enum ModelChoice {
    /// A flag on its command line (`--model m`).
    Flag(&'static str),
    /// Variables that say it.
    Env(fn(model: &str) -> Vec<(String, String)>),
    /// It cannot be told: its own settings choose.
    Unsupported,
}

/// Replaces a variable in an environment.
fn set(env: &mut Vec<(String, String)>, k: &str, v: &str) {
    env.retain(|(e, _)| e != k);
    env.push((k.to_string(), v.to_string()));
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
    model: ModelChoice::Flag("--model"),
    version_args: &["--version"],
    login: &["COPILOT_PROVIDER_BASE_URL", "COPILOT_GITHUB_TOKEN"],
    login_fix: "set COPILOT_PROVIDER_BASE_URL (and COPILOT_PROVIDER_API_KEY) for a model of your own, or COPILOT_GITHUB_TOKEN for a Copilot subscription",
    keys: &["COPILOT_PROVIDER_API_KEY", "COPILOT_GITHUB_TOKEN"],
    files: &[],
    skill_folders: &[".github/skills"],
    prepare: copilot_settings,
    base_url: "COPILOT_PROVIDER_BASE_URL",
    default_endpoints: &[
        "https://api.githubcopilot.com",
        "https://api.individual.githubcopilot.com",
        "https://api.business.githubcopilot.com",
        "https://api.enterprise.githubcopilot.com",
        "https://api.github.com",
    ],
    mcp: McpHandoff::Settings(copilot_mcp),
    needs: &[],
    model_needed: Some(ModelNeeded {
        when: "COPILOT_PROVIDER_BASE_URL",
        var: "COPILOT_MODEL",
        why: "Copilot refuses to start: \"BYOK providers require an explicit model\"",
    }),
};

/// `~/.copilot/mcp-config.json`: Copilot CLI 1.0.102 leaves out the servers of ACP's
/// `session/new`, and reads this file (every tool of each server allowed).
fn copilot_mcp(home: &Path, servers: &BTreeMap<String, Value>) -> std::io::Result<()> {
    let mut all = serde_json::Map::new();
    for (name, s) in servers {
        let mut server = s.clone();
        if let Some(o) = server.as_object_mut() {
            let kind = match (o.get("url"), o.get("type").and_then(Value::as_str)) {
                (None, _) => "local",
                (Some(_), Some("sse")) => "sse",
                (Some(_), _) => "http",
            };
            o.insert("type".into(), kind.into());
            o.insert("tools".into(), serde_json::json!(["*"]));
        }
        all.insert(name.clone(), server);
    }
    let dir = home.join(".copilot");
    std::fs::create_dir_all(&dir)?;
    let config = serde_json::json!({"mcpServers": all});
    std::fs::write(dir.join("mcp-config.json"), config.to_string())
}

/// With a model of one's own, Copilot runs offline: no GitHub login, telemetry, web tools
/// or auto-update.
fn copilot_settings(_home: &Path, env: &mut Vec<(String, String)>) -> std::io::Result<()> {
    let byok = env.iter().any(|(k, _)| k == "COPILOT_PROVIDER_BASE_URL");
    if byok {
        set(env, "COPILOT_OFFLINE", "true");
    }
    set(env, "COPILOT_AUTO_UPDATE", "false");
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
    model: ModelChoice::Env(|m| vec![("ANTHROPIC_MODEL".into(), m.into())]),
    version_args: &["--version"],
    login: &[
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
    ],
    login_fix: "set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN)",
    keys: &[
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
    ],
    files: &[".claude/.credentials.json"],
    skill_folders: &[".claude/skills"],
    prepare: claude_settings,
    base_url: "ANTHROPIC_BASE_URL",
    default_endpoints: &["https://api.anthropic.com"],
    mcp: McpHandoff::Session,
    needs: &[],
    model_needed: None,
};

/// `~/.claude/settings.json` with permissions bypassed (the sandbox is the boundary; as root
/// Claude Code takes that only with `IS_SANDBOX=1`), and no traffic but the model's.
fn claude_settings(home: &Path, env: &mut Vec<(String, String)>) -> std::io::Result<()> {
    let dir = home.join(".claude");
    std::fs::create_dir_all(&dir)?;
    let settings = serde_json::json!({"permissions": {"defaultMode": "bypassPermissions"}});
    std::fs::write(dir.join("settings.json"), settings.to_string())?;
    set(env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    set(env, "DISABLE_AUTOUPDATER", "1");
    crate::harness::claude_code::cap_retries(env);
    if crate::host::running_as_root() {
        set(env, "IS_SANDBOX", "1");
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
    model: ModelChoice::Flag("--model"),
    version_args: &["--version"],
    login: &["OPENAI_API_KEY"],
    login_fix: "set OPENAI_API_KEY (and OPENAI_BASE_URL for an endpoint other than OpenAI's)",
    keys: &["OPENAI_API_KEY"],
    files: &[],
    skill_folders: &[".qwen/skills"],
    prepare: qwen_settings,
    base_url: "OPENAI_BASE_URL",
    default_endpoints: &["https://api.openai.com"],
    mcp: McpHandoff::Session,
    needs: &[],
    model_needed: None,
};

/// `~/.qwen/settings.json`: OpenAI-compatible auth without a prompt, tools approved (the
/// sandbox is the boundary), no usage statistics, no auto-update, no side requests, no retries
/// but its own loop's.
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
        // A failing model API said within its own loop of 7 attempts (about 80 s): no retries
        // of the HTTP client inside each, nor its 429 loop (10 retries a minute apart and more).
        "model": {"generationConfig": {"maxRetries": 0}},
    });
    std::fs::write(dir.join("settings.json"), settings.to_string())
}

/// OpenCode (`opencode-ai`): `opencode acp`. With `OPENAI_BASE_URL` set, a provider `assay` of
/// that OpenAI-compatible endpoint (key `OPENAI_API_KEY`), whose model is the run's `--model`
/// (or `OPENAI_MODEL`); else its own providers (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`) and a
/// `--model provider/model`. Skills in `.opencode/skills` (and `.claude/skills`,
/// `.agents/skills`); a skill load is its `skill` tool, retitled `Loaded skill: <name>`. Its
/// file search and its skill tool need ripgrep (`rg`) on PATH.
pub const OPENCODE: Preset = Preset {
    name: "opencode",
    program: "opencode",
    args: &["acp"],
    model: ModelChoice::Env(opencode_model),
    version_args: &["--version"],
    login: &["OPENAI_API_KEY", "ANTHROPIC_API_KEY"],
    login_fix: "set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible endpoint), or ANTHROPIC_API_KEY",
    keys: &["OPENAI_API_KEY", "ANTHROPIC_API_KEY"],
    files: &[],
    skill_folders: &[".opencode/skills"],
    prepare: opencode_settings,
    base_url: "OPENAI_BASE_URL",
    default_endpoints: &["https://api.anthropic.com", "https://api.openai.com"],
    mcp: McpHandoff::Session,
    needs: &[(
        "rg",
        "OpenCode's skill, grep and glob tools run ripgrep (it would download one, and the sandbox has no network)",
    )],
    model_needed: Some(ModelNeeded {
        when: "OPENAI_BASE_URL",
        var: "OPENAI_MODEL",
        why: "OpenCode falls back to its own providers and fails after a minute: \"Cannot connect to API\"",
    }),
};

/// The provider `assay` stands for `OPENAI_BASE_URL`; a model named without a provider is one
/// of its.
/// The variables set to `1` that keep OpenCode from updating itself, fetching models, LSP
/// servers or its default plugins, and from sharing sessions: it runs offline and alone.
pub const OPENCODE_QUIET: &[&str] = &[
    "OPENCODE_DISABLE_AUTOUPDATE",
    "OPENCODE_DISABLE_MODELS_FETCH",
    "OPENCODE_DISABLE_LSP_DOWNLOAD",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS",
    "OPENCODE_DISABLE_SHARE",
];

const OPENCODE_PROVIDER: &str = "assay";

/// `provider/model` for OpenCode, and the model added to the `assay` provider when it is one
/// of that provider's.
fn opencode_model_config(model: &str) -> serde_json::Value {
    let (provider, id) = model.split_once('/').unwrap_or((OPENCODE_PROVIDER, model));
    let full = format!("{provider}/{id}");
    let mut config = serde_json::json!({"model": full, "small_model": full});
    if provider == OPENCODE_PROVIDER {
        config["provider"] = serde_json::json!({OPENCODE_PROVIDER: {"models": {id: {"name": id, "tool_call": true}}}});
    }
    config
}

/// The run's model, as OpenCode's inline configuration (merged over the one in HOME).
fn opencode_model(model: &str) -> Vec<(String, String)> {
    vec![(
        "OPENCODE_CONFIG_CONTENT".into(),
        opencode_model_config(model).to_string(),
    )]
}

/// `~/.config/opencode/opencode.json`: every tool allowed (the sandbox is the boundary), no
/// sharing, update or downloads, and with `OPENAI_BASE_URL` set the `assay` provider (its key
/// read from the environment, never written down).
fn opencode_settings(home: &Path, env: &mut Vec<(String, String)>) -> std::io::Result<()> {
    let dir = home.join(".config/opencode");
    std::fs::create_dir_all(&dir)?;
    let mut config = serde_json::json!({
        "autoupdate": false,
        "share": "disabled",
        "permission": "allow",
    });
    let var = |k: &str| {
        env.iter()
            .find(|(e, v)| e == k && !v.is_empty())
            .map(|(_, v)| v.clone())
    };
    if let Some(url) = var("OPENAI_BASE_URL") {
        config["provider"] = serde_json::json!({OPENCODE_PROVIDER: {
            "npm": "@ai-sdk/openai-compatible",
            "name": "OpenAI-compatible (OPENAI_BASE_URL)",
            "options": {"baseURL": url, "apiKey": "{env:OPENAI_API_KEY}"},
        }});
        if let Some(model) = var("OPENAI_MODEL") {
            let chosen = opencode_model_config(&model);
            config["model"] = chosen["model"].clone();
            config["small_model"] = chosen["small_model"].clone();
            if let Some(models) = chosen.pointer(&format!("/provider/{OPENCODE_PROVIDER}/models")) {
                config["provider"][OPENCODE_PROVIDER]["models"] = models.clone();
            }
        }
    }
    std::fs::write(dir.join("opencode.json"), config.to_string())?;
    for k in OPENCODE_QUIET {
        set(env, k, "1");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opencode_s_model_is_the_assay_provider_s_unless_it_names_its_provider() {
        let own = opencode_model_config("gpt-test");
        assert_eq!(own["model"], "assay/gpt-test");
        assert_eq!(
            own["provider"]["assay"]["models"]["gpt-test"]["tool_call"],
            true
        );
        let named = opencode_model_config("anthropic/claude-sonnet-4-5");
        assert_eq!(named["model"], "anthropic/claude-sonnet-4-5");
        assert!(named.get("provider").is_none());
    }

    #[test]
    fn opencode_s_settings_point_at_the_endpoint_and_never_hold_the_key() {
        let home = tempfile::tempdir().unwrap();
        let mut env = vec![
            (
                "OPENAI_BASE_URL".to_string(),
                "http://127.0.0.1:9/v1".to_string(),
            ),
            ("OPENAI_API_KEY".to_string(), "sk-secret".to_string()),
            ("OPENAI_MODEL".to_string(), "m1".to_string()),
        ];
        opencode_settings(home.path(), &mut env).unwrap();
        let text =
            std::fs::read_to_string(home.path().join(".config/opencode/opencode.json")).unwrap();
        assert!(!text.contains("sk-secret"), "{text}");
        let config: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            config["provider"]["assay"]["options"]["baseURL"],
            "http://127.0.0.1:9/v1"
        );
        assert_eq!(config["model"], "assay/m1");
        assert_eq!(config["permission"], "allow");
        assert!(
            env.iter()
                .any(|(k, v)| k == "OPENCODE_DISABLE_MODELS_FETCH" && v == "1")
        );
    }
}
