//! Write assay plugins in Rust: check types, formats and harness adapters, built as one
//! WebAssembly component (`cargo build --release --target wasm32-wasip2`) against assay's WIT
//! interface (`assay:plugin@0.3.0`).
//!
//! Implement [`Assertion`], [`Format`] or [`Harness`] for your types, list them in a
//! [`Plugin`], and export it:
//!
//! ```ignore
//! use assay_plugin::{Assertion, Plugin, Run, Verdict, Value};
//!
//! struct Shouting;
//! impl Assertion for Shouting {
//!     fn name(&self) -> &str { "shouting" }
//!     fn summary(&self) -> &str { "the output is in capitals" }
//!     fn evaluate(&self, _config: &Value, run: &Run) -> Result<Verdict, String> {
//!         let out = run.output();
//!         Ok(Verdict::new(out == out.to_uppercase(), "checked the case of the output"))
//!     }
//! }
//!
//! fn plugin() -> Plugin { Plugin::new().assertion(Shouting) }
//! assay_plugin::export!(plugin);
//! ```
//!
//! Plugins run sandboxed: no files, environment or network unless the project grants them.

use std::cell::RefCell;
use std::sync::OnceLock;

pub use serde::{self, Deserialize};
pub use serde_json::{self, Value, json};

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "wit",
        world: "plugin",
        pub_export_macro: true,
        export_macro_name: "__export_world",
        default_bindings_module: "assay_plugin::bindings",
    });
}

use bindings::assay::plugin::case_run;
use bindings::assay::plugin::types;
use bindings::exports::assay::plugin::{assertion, format, harness};

pub use bindings::exports::assay::plugin::harness::{
    CommandLine, ErrorKind, Exit, Invocation, Login,
};

impl Exit {
    /// An exit with this code (none: killed by a signal), as a parser's tests need one.
    pub fn new(code: Option<i32>, timed_out: bool, stderr_tail: &str) -> Self {
        Exit {
            code,
            timed_out,
            stderr_tail: stderr_tail.to_string(),
            duration_ms: 0,
        }
    }
}

/// The finished case-run a check looks at. Each call asks the host, so only what is used is
/// copied into the plugin.
pub struct Run<'a>(&'a case_run::Run);

impl Run<'_> {
    /// What counts as the case's output.
    pub fn output(&self) -> String {
        self.0.output()
    }
    pub fn final_message(&self) -> String {
        self.0.final_message()
    }
    pub fn stdout(&self) -> String {
        self.0.stdout()
    }
    pub fn stderr(&self) -> String {
        self.0.stderr()
    }
    pub fn exit_code(&self) -> Option<i32> {
        self.0.exit_code()
    }
    /// Files in the workspace after the run, relative to its root.
    pub fn files(&self) -> Vec<String> {
        self.0.files()
    }
    /// A workspace file's bytes, relative to the root or to the agent's folder.
    pub fn file(&self, path: &str) -> Option<Vec<u8>> {
        self.0.file(path)
    }
    /// A workspace file as text (lossy UTF-8).
    pub fn file_text(&self, path: &str) -> Option<String> {
        self.file(path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }
    /// The normalized transcript events.
    pub fn events(&self) -> Vec<Value> {
        self.0
            .events()
            .iter()
            .filter_map(|e| serde_json::from_str(e).ok())
            .collect()
    }
    /// Tool calls in order: name and input.
    pub fn tool_calls(&self) -> Vec<(String, Value)> {
        self.0
            .tool_calls()
            .into_iter()
            .map(|t| {
                (
                    t.name,
                    serde_json::from_str(&t.input).unwrap_or(Value::Null),
                )
            })
            .collect()
    }
    pub fn skills_invoked(&self) -> Vec<String> {
        self.0.skills_invoked()
    }
    pub fn usage(&self) -> types::Usage {
        self.0.usage()
    }
}

/// What a check concluded (before negation, which assay applies).
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub passed: bool,
    pub message: String,
    /// The matching excerpt, or why nothing matched.
    pub evidence: Option<String>,
}

impl Verdict {
    pub fn new(passed: bool, message: impl Into<String>) -> Self {
        Verdict {
            passed,
            message: message.into(),
            evidence: None,
        }
    }

    pub fn with_evidence(mut self, evidence: impl Into<String>) -> Self {
        self.evidence = Some(evidence.into());
        self
    }
}

/// A check type.
pub trait Assertion: Send + Sync {
    /// The `type` name suites use.
    fn name(&self) -> &str;
    fn summary(&self) -> &str;
    /// A JSON Schema of the configuration (the keys beside `type`, `id`, `negate`, `weight`).
    fn config_schema(&self) -> Value {
        json!({"type": "object"})
    }
    /// Checks a configuration when the suite loads.
    fn validate(&self, _config: &Value) -> Result<(), String> {
        Ok(())
    }
    fn evaluate(&self, config: &Value, run: &Run) -> Result<Verdict, String>;
}

/// A check type whose settings are a struct: its fields say once which keys it takes, of what
/// type, which are optional (`Option`, `#[serde(default)]`) and which are not
/// (`#[serde(deny_unknown_fields)]` makes a typo an error). The suite's settings are
/// deserialized when it loads, so a wrong one is an error naming the check before anything
/// runs, and `evaluate` gets them typed. Register it with [`Plugin::typed_assertion`].
pub trait TypedAssertion: Send + Sync {
    /// The settings (the keys beside `type`, `id`, `negate`, `weight`). Derive it with
    /// `#[derive(Deserialize)] #[serde(crate = "assay_plugin::serde")]`.
    type Config: serde::de::DeserializeOwned;
    /// The `type` name suites use.
    fn name(&self) -> &str;
    fn summary(&self) -> &str;
    /// A JSON Schema of the settings, for `assay plugin inspect` and editors.
    fn config_schema(&self) -> Value {
        json!({"type": "object"})
    }
    /// Checks beyond the shape (say, a word that must not be empty).
    fn check(&self, _config: &Self::Config) -> Result<(), String> {
        Ok(())
    }
    fn evaluate(&self, config: &Self::Config, run: &Run) -> Result<Verdict, String>;
}

/// A [`TypedAssertion`] as an [`Assertion`]: settings deserialized at load and at each run.
pub struct Typed<T>(pub T);

impl<T: TypedAssertion> Typed<T> {
    fn config(config: &Value) -> Result<T::Config, String> {
        serde_json::from_value(config.clone()).map_err(|e| format!("settings: {e}"))
    }
}

impl<T: TypedAssertion> Assertion for Typed<T> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn summary(&self) -> &str {
        self.0.summary()
    }
    fn config_schema(&self) -> Value {
        self.0.config_schema()
    }
    fn validate(&self, config: &Value) -> Result<(), String> {
        self.0.check(&Self::config(config)?)
    }
    fn evaluate(&self, config: &Value, run: &Run) -> Result<Verdict, String> {
        self.0.evaluate(&Self::config(config)?, run)
    }
}

/// One event of a harness's normalized transcript, in assay's vocabulary (docs/plugins.md):
/// what [`Parser::feed`] returns, built typed so that assay can always read it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    SessionStarted {
        session_id: String,
        model: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tools: Vec<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        skills: Vec<String>,
    },
    Message {
        text: String,
    },
    Reasoning {
        text: String,
    },
    ToolCall {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        id: String,
        output: String,
        is_error: bool,
    },
    SkillInvoked {
        name: String,
    },
    AgentStarted {
        name: String,
    },
    HookRan {
        event: String,
        exit_code: Option<i64>,
        outcome: String,
    },
    FileChange {
        path: String,
        kind: String,
    },
    Output {
        text: String,
    },
    Error {
        message: String,
        category: Option<ErrorCategory>,
    },
}

/// Why a turn failed, as assay categorises it; or a kind of the agent's own, which the
/// harness declares in [`Harness::error_kinds`] with the category it counts as (one it does
/// not declare counts as `agent`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorCategory {
    Auth,
    RateLimit,
    Server,
    Network,
    Timeout,
    InteractiveHang,
    BackgroundTasks,
    Crash,
    /// The adapter's own fault (it cannot read this agent's output, say): an error of
    /// assay's side, never the skill failing.
    Plugin,
    Agent,
    /// A kind of the agent's own, by its name (`quota`).
    Own(String),
}

impl ErrorCategory {
    /// The name assay reads.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCategory::Auth => "auth",
            ErrorCategory::RateLimit => "rate-limit",
            ErrorCategory::Server => "server",
            ErrorCategory::Network => "network",
            ErrorCategory::Timeout => "timeout",
            ErrorCategory::InteractiveHang => "interactive-hang",
            ErrorCategory::BackgroundTasks => "background-tasks",
            ErrorCategory::Crash => "crash",
            ErrorCategory::Plugin => "plugin",
            ErrorCategory::Agent => "agent",
            ErrorCategory::Own(name) => name,
        }
    }
}

impl serde::Serialize for ErrorCategory {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Why a turn failed: what [`Summary::error`] holds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TurnError {
    pub category: ErrorCategory,
    pub message: String,
}

impl TurnError {
    pub fn new(category: ErrorCategory, message: impl Into<String>) -> Self {
        TurnError {
            category,
            message: message.into(),
        }
    }

    /// How the process ended, as the built-in harnesses say it when the agent reported
    /// nothing: stopped by the timeout, or `<agent> exited with <code>: <the end of stderr>`
    /// (a crash); none for exit 0.
    pub fn from_exit(agent: &str, exit: &Exit) -> Option<TurnError> {
        if exit.timed_out {
            return Some(TurnError::new(
                ErrorCategory::Timeout,
                "stopped by the timeout",
            ));
        }
        let code = match exit.code {
            Some(0) => return None,
            Some(c) => c.to_string(),
            None => "a signal".to_string(),
        };
        let lines: Vec<&str> = exit.stderr_tail.trim().lines().collect();
        let tail = &lines[lines.len().saturating_sub(3)..];
        Some(TurnError::new(
            ErrorCategory::Crash,
            format!("{agent} exited with {code}: {}", tail.join(" / ")),
        ))
    }
}

/// Tokens, as the model API counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tokens {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
}

/// What one turn came to: what [`Parser::finish`] returns (`summary.into()`), built typed so
/// that assay can always read it. Every field may stay empty.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    /// The session to resume on the next turn.
    pub session_id: Option<String>,
    pub model: Option<String>,
    /// The agent's last message to the user.
    pub final_message: Option<String>,
    /// Why the turn failed, when it did not just give a wrong answer.
    pub error: Option<TurnError>,
    /// Model round trips, as the agent counted them.
    pub num_turns: Option<u64>,
    pub cost_usd: Option<f64>,
    pub usage: Tokens,
    /// The turn's wall time as the agent measured it (else [`Exit::duration_ms`]).
    pub duration_ms: Option<u64>,
    /// Tool calls the agent's own permission system refused.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub permission_denials: Vec<Value>,
}

impl From<Summary> for Value {
    fn from(s: Summary) -> Value {
        serde_json::to_value(s).unwrap_or(Value::Null)
    }
}

impl From<Event> for Value {
    fn from(e: Event) -> Value {
        serde_json::to_value(e).unwrap_or(Value::Null)
    }
}

/// A named format for `has_format` and extraction field `format`.
pub trait Format: Send + Sync {
    fn name(&self) -> &str;
    fn summary(&self) -> &str;
    fn example(&self) -> &str;
    /// Whether the whole value is of the format.
    fn matches(&self, value: &str) -> bool;
    /// Non-overlapping occurrences in a text, as byte ranges.
    fn find_all(&self, text: &str) -> Vec<(usize, usize)>;
}

/// Reads one turn of an agent's output.
pub trait Parser {
    /// Normalized events from one line of stdout (see docs/plugins.md for their shape).
    fn feed(&mut self, line: &str) -> Vec<Value>;
    /// The turn's summary once the process exited: a [`Summary`], `.into()` (the JSON shape
    /// docs/plugins.md gives).
    fn finish(&mut self, exit: &Exit) -> Value;
}

/// An agent CLI adapter.
pub trait Harness: Send + Sync {
    fn name(&self) -> &str;
    fn summary(&self) -> &str;
    /// The program it runs (looked up on PATH before anything runs).
    fn program(&self) -> &str;
    fn command(&self, invocation: &Invocation) -> Result<CommandLine, String>;
    /// What reads the agent's stdout. Not called for an agent that speaks ACP
    /// ([`Harness::speaks_acp`]): the default reads nothing.
    fn parser(&self, _invocation: &Invocation) -> Box<dyn Parser> {
        Box::new(Unread)
    }
    /// Whose conventions the agent follows for skills and a package's parts: `claude-code`
    /// (`.claude/skills`, …) and/or `codex` (`.agents/skills`, …). Empty: both.
    fn engines(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether the agent expands `/<command>` prompts itself (else assay does).
    fn slash_commands(&self) -> bool {
        true
    }
    /// How the agent logs in, checked before anything runs, and the only vendor login it is
    /// given (its variables; its files when they are login files assay knows). None: not
    /// checked, and no vendor key reaches the agent unless the user names it (`--pass-env`).
    fn login(&self) -> Option<Login> {
        None
    }
    /// Each model endpoint as (variable, default URL), for `--network model`.
    fn endpoints(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Folders, relative to the workspace, the agent reads skills from (say `.acme/skills`):
    /// the skill under test goes there, and is removed from there for a baseline. Empty:
    /// where [`Harness::engines`] read them; named with no engine: only there.
    fn skill_folders(&self) -> Vec<String> {
        Vec::new()
    }
    /// The arguments that make [`Harness::program`] print its version on its first line
    /// (run inside assay's sandbox before any case-run, recorded, and part of the cache key).
    /// None: it has no such flag, and is only looked up.
    fn version_args(&self) -> Option<Vec<String>> {
        Some(vec!["--version".into()])
    }
    /// The agent's own error kinds, each with the category of assay's it counts as: an
    /// [`ErrorCategory::Own`] naming one is recorded as that kind.
    fn error_kinds(&self) -> Vec<ErrorKind> {
        Vec::new()
    }
    /// The program speaks the Agent Client Protocol on stdio: assay's own ACP client runs
    /// [`Harness::command`]'s line (the prompt goes in `session/prompt`, not on stdin) and
    /// reads the session; [`Harness::parser`] is not used. An in-house ACP agent needs only
    /// its name, program, command line, skill folders and login.
    fn speaks_acp(&self) -> bool {
        false
    }
}

/// The parser of a harness whose stdout assay reads itself (an ACP agent's).
struct Unread;

impl Parser for Unread {
    fn feed(&mut self, _line: &str) -> Vec<Value> {
        Vec::new()
    }
    fn finish(&mut self, _exit: &Exit) -> Value {
        Summary::default().into()
    }
}

impl ErrorKind {
    pub fn new(name: &str, summary: &str, counts_as: ErrorCategory) -> Self {
        ErrorKind {
            name: name.to_string(),
            summary: summary.to_string(),
            counts_as: counts_as.as_str().to_string(),
        }
    }
}

/// Everything a plugin provides.
#[derive(Default)]
pub struct Plugin {
    assertions: Vec<Box<dyn Assertion>>,
    formats: Vec<Box<dyn Format>>,
    harnesses: Vec<Box<dyn Harness>>,
}

impl Plugin {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn assertion(mut self, a: impl Assertion + 'static) -> Self {
        self.assertions.push(Box::new(a));
        self
    }
    /// A check type with typed settings ([`TypedAssertion`]).
    pub fn typed_assertion(self, a: impl TypedAssertion + 'static) -> Self {
        self.assertion(Typed(a))
    }
    pub fn format(mut self, f: impl Format + 'static) -> Self {
        self.formats.push(Box::new(f));
        self
    }
    pub fn harness(mut self, h: impl Harness + 'static) -> Self {
        self.harnesses.push(Box::new(h));
        self
    }
}

static PLUGIN: OnceLock<Plugin> = OnceLock::new();

unsafe extern "Rust" {
    /// Defined by [`export!`] in the plugin crate.
    safe fn __assay_plugin_build() -> Plugin;
}

fn plugin() -> &'static Plugin {
    PLUGIN.get_or_init(__assay_plugin_build)
}

fn parse_config(config: &str) -> Result<Value, String> {
    serde_json::from_str(config).map_err(|e| format!("the configuration is not JSON: {e}"))
}

#[doc(hidden)]
pub struct Exports;

impl assertion::Guest for Exports {
    fn check_types() -> Vec<types::CheckType> {
        plugin()
            .assertions
            .iter()
            .map(|a| types::CheckType {
                name: a.name().to_string(),
                summary: a.summary().to_string(),
                config_schema: a.config_schema().to_string(),
            })
            .collect()
    }

    fn validate(check_type: String, config: String) -> Result<(), String> {
        let a = find_assertion(&check_type)?;
        a.validate(&parse_config(&config)?)
    }

    fn evaluate(
        check_type: String,
        config: String,
        run: &case_run::Run,
    ) -> Result<types::Verdict, String> {
        let a = find_assertion(&check_type)?;
        let v = a.evaluate(&parse_config(&config)?, &Run(run))?;
        Ok(types::Verdict {
            passed: v.passed,
            message: v.message,
            evidence: v.evidence,
        })
    }
}

fn find_assertion(name: &str) -> Result<&'static dyn Assertion, String> {
    plugin()
        .assertions
        .iter()
        .find(|a| a.name() == name)
        .map(|a| a.as_ref())
        .ok_or_else(|| format!("this plugin has no check type `{name}`"))
}

fn find_format(name: &str) -> Option<&'static dyn Format> {
    plugin()
        .formats
        .iter()
        .find(|f| f.name() == name)
        .map(|f| f.as_ref())
}

impl format::Guest for Exports {
    fn formats() -> Vec<types::FormatInfo> {
        plugin()
            .formats
            .iter()
            .map(|f| types::FormatInfo {
                name: f.name().to_string(),
                summary: f.summary().to_string(),
                example: f.example().to_string(),
            })
            .collect()
    }

    fn matches(format: String, value: String) -> bool {
        find_format(&format).is_some_and(|f| f.matches(&value))
    }

    fn find_all(format: String, text: String) -> Vec<(u32, u32)> {
        find_format(&format)
            .map(|f| {
                f.find_all(&text)
                    .into_iter()
                    .map(|(a, b)| (a as u32, b as u32))
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn find_harness(name: &str) -> Result<&'static dyn Harness, String> {
    plugin()
        .harnesses
        .iter()
        .find(|h| h.name() == name)
        .map(|h| h.as_ref())
        .ok_or_else(|| format!("this plugin has no harness `{name}`"))
}

impl harness::Guest for Exports {
    type Parser = ParserResource;

    fn harnesses() -> Vec<harness::HarnessInfo> {
        plugin()
            .harnesses
            .iter()
            .map(|h| harness::HarnessInfo {
                name: h.name().to_string(),
                summary: h.summary().to_string(),
                program: h.program().to_string(),
                engines: h.engines(),
                slash_commands: h.slash_commands(),
                login: h.login(),
                endpoints: h.endpoints(),
                skill_folders: h.skill_folders(),
                version_args: h.version_args(),
                error_kinds: h.error_kinds(),
                speaks_acp: h.speaks_acp(),
            })
            .collect()
    }

    fn command(harness: String, invocation: Invocation) -> Result<CommandLine, String> {
        find_harness(&harness)?.command(&invocation)
    }
}

#[doc(hidden)]
pub struct ParserResource(RefCell<Option<Box<dyn Parser>>>);

impl harness::GuestParser for ParserResource {
    fn new(harness: String, invocation: Invocation) -> Self {
        ParserResource(RefCell::new(
            find_harness(&harness).ok().map(|h| h.parser(&invocation)),
        ))
    }

    fn feed(&self, line: String) -> Vec<String> {
        match self.0.borrow_mut().as_mut() {
            Some(p) => p.feed(&line).iter().map(Value::to_string).collect(),
            None => Vec::new(),
        }
    }

    fn finish(&self, exit: Exit) -> String {
        match self.0.borrow_mut().as_mut() {
            Some(p) => p.finish(&exit).to_string(),
            None => {
                json!({"error": {"category": "plugin", "message": "this plugin has no such harness"}}).to_string()
            }
        }
    }
}

/// Exports a plugin: `assay_plugin::export!(build)` where `build` is a `fn() -> Plugin`.
#[macro_export]
macro_rules! export {
    ($build:path) => {
        #[doc(hidden)]
        #[unsafe(no_mangle)]
        pub fn __assay_plugin_build() -> $crate::Plugin {
            $build()
        }
        #[doc(hidden)]
        pub use $crate::Exports as AssayPluginExports;
        // Component exports only exist in the wasm build; natively (for `cargo test`) the
        // plugin is plain Rust.
        #[cfg(target_arch = "wasm32")]
        $crate::bindings::__export_world!(AssayPluginExports with_types_in $crate::bindings);
    };
}
