//! The one normalized model every format loads into.
//!
//! A file in any format becomes [`Suite`]s of [`Case`]s and [`TriggerCase`]s; the runner,
//! the graders and the reporters only ever see this model.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// The eval formats assay reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// BMAD eval runner: `evals/<skill>/evals.json` + `triggers.json`.
    Bmad,
    /// clauditor: `<skill>.eval.json`.
    Clauditor,
    /// Skillet: `<dir>/<name>/NNN.yaml`.
    Skillet,
    /// UAAPS agent package: `evals/eval-config.json` + `evals/cases/*.yaml`.
    Uaaps,
    /// UAAPS deterministic tests: `<artifact>/tests/test-config.json` + `cases/*.yaml`.
    UaapsTests,
    /// Claude Code's `claude plugin eval`: `evals/<case>/{case.yaml,prompt.md,graders/*.md}`.
    ClaudePluginEval,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Bmad,
        Format::Clauditor,
        Format::Skillet,
        Format::Uaaps,
        Format::UaapsTests,
        Format::ClaudePluginEval,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Bmad => "bmad",
            Format::Clauditor => "clauditor",
            Format::Skillet => "skillet",
            Format::Uaaps => "uaaps",
            Format::UaapsTests => "uaaps-tests",
            Format::ClaudePluginEval => "claude-plugin-eval",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A place in a source file, for pointing back at where something was declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

/// The skill under test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skill {
    pub name: String,
    /// The skill's folder (holding SKILL.md) or its command file.
    pub path: PathBuf,
    pub kind: SkillKind,
    /// From SKILL.md front matter, when present.
    pub description: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkillKind {
    /// A folder with SKILL.md (Claude Code and Codex skills).
    Dir,
    /// A slash-command file (`.claude/commands/<name>.md`).
    Command,
}

/// The agent package a UAAPS suite belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Package {
    pub name: Option<String>,
    pub version: Option<String>,
    pub root: PathBuf,
    /// What an eval installs for the agent besides skills, commands and hooks.
    pub parts: PackageParts,
    /// A Claude Code plugin: Claude Code loads it whole (`--plugin-dir`, a copy staged in the
    /// case-run's HOME without its eval folders); other engines get its skills.
    pub claude_plugin: bool,
}

/// A package's sub-agents, rules, MCP servers and AGENTS.md, read and checked at load time;
/// each engine gets them where it reads them (docs/formats.md, "On each engine").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PackageParts {
    pub agents: Vec<PackageAgent>,
    /// `rules/<name>/RULE.md`, by name.
    pub rules: Vec<(String, PathBuf)>,
    /// `mcp/servers.json`'s servers, by name: `command` (+ `args`, `env`) or `url`.
    pub mcp_servers: BTreeMap<String, serde_json::Value>,
    /// The package has an `AGENTS.md` at its root.
    pub agents_md: bool,
    /// The package has `hooks/hooks.json`.
    pub hooks: bool,
}

/// `agents/<name>/agent.yaml` with its `system-prompt.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageAgent {
    pub name: String,
    pub description: Option<String>,
    pub tools: Vec<String>,
    pub model: Option<String>,
    /// The system prompt's text.
    pub system_prompt: String,
}

/// One loaded suite: a set of cases sharing a skill, defaults and overlays.
#[derive(Debug, Clone, Serialize)]
pub struct Suite {
    /// Stable id, unique in a project: `<format>:<name>`.
    pub id: String,
    pub format: Format,
    /// The file (or folder) the suite was read from.
    pub source: PathBuf,
    /// The root whose contents are copied into each workspace.
    pub project_root: PathBuf,
    pub skill: Option<Skill>,
    pub description: Option<String>,
    /// Free-form notes for people (BMAD `_design_notes`); never used by the runner.
    pub notes: Option<String>,
    pub defaults: Defaults,
    /// Copied over the project in every case's workspace, before the case's own overlay.
    pub base_overlay: Option<PathBuf>,
    pub package: Option<Package>,
    pub cases: Vec<Case>,
    pub triggers: Vec<TriggerCase>,
    /// What the format's own runner decides, as data: the runner, the judge, lint and the
    /// command line follow it and never match on the format.
    pub policies: Policies,
}

/// The decisions a format's own runner makes that assay follows for its suites, set by the
/// format's loader.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Policies {
    /// The timeout, in seconds, when neither the case, the suite, the command line nor
    /// assay.toml sets one (clauditor's runner waits 300 s; UAAPS's `eval-config.json` says
    /// 120 s).
    pub default_timeout_secs: Option<u64>,
    /// A setup script that fails skips the case, as Skillet does (nothing of the agent's was
    /// measured); otherwise it is an infrastructure error.
    pub failed_setup_skips: bool,
    /// The runner's own environment variables, read after assay's.
    pub vars: RunnerVars,
    /// Without a harness named anywhere, take the one this machine can run (clauditor's
    /// auto transport) rather than assay's default.
    pub auto_harness: bool,
    /// The folders beside the suite's file where its fixtures are kept (for lint's
    /// `unused-fixture`).
    pub fixture_dirs: &'static [&'static str],
    /// The whole folder of the suite's file is its evaluation, kept out of the agent's view
    /// (BMAD's eval folder, UAAPS's `evals/`); otherwise the file alone.
    pub spec_is_folder: bool,
    /// What `assay grade --output` says when the case's fixtures cannot apply (clauditor
    /// prints its own sentence).
    pub output_bypass_warning: Option<&'static str>,
    /// The workspace starts empty: the project is not copied into it (Claude Code's plugin
    /// evals run in a fresh folder; the plugin is loaded, not copied).
    pub empty_workspace: bool,
    /// Each case also runs without the plugin under test, as the baseline arm, unless the
    /// run says otherwise (Claude Code's `--ablation with-without`, its default).
    pub compare_without: bool,
    /// A case passes when the mean of its runs' scores reaches this (Claude Code's
    /// `--threshold`, 1.0); `None`: when every run passes.
    pub pass_threshold: Option<f64>,
    /// Without `--trust`, a case runs without its setup script rather than being skipped
    /// (Claude Code runs a plugin-eval case against an unstaged workspace without
    /// `--scaffold`).
    pub setup_optional: bool,
}

impl Policies {
    /// A format that decides none of these: assay's defaults.
    pub const NONE: Policies = Policies {
        default_timeout_secs: None,
        failed_setup_skips: false,
        vars: RunnerVars {
            harness: None,
            judge_provider: None,
            judge_transport: None,
        },
        auto_harness: false,
        fixture_dirs: &[],
        spec_is_folder: false,
        output_bypass_warning: None,
        empty_workspace: false,
        compare_without: false,
        pass_threshold: None,
        setup_optional: false,
    };
}

/// A format runner's environment variables (clauditor's `CLAUDITOR_HARNESS`,
/// `CLAUDITOR_GRADING_PROVIDER`, `CLAUDITOR_TRANSPORT`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunnerVars {
    /// Names the harness, after `ASSAY_HARNESS`.
    pub harness: Option<&'static str>,
    /// Names the judge's provider, after `ASSAY_JUDGE`.
    pub judge_provider: Option<&'static str>,
    /// Names how an Anthropic judge is reached, after `--transport`.
    pub judge_transport: Option<&'static str>,
}

impl Suite {
    pub fn check_count(&self) -> usize {
        self.cases.iter().map(|c| c.checks.len()).sum()
    }

    /// The files and folders this suite's evaluation is written in (specs, expected outputs,
    /// the judge's criteria), made absolute against `cwd`: kept out of the agent's
    /// workspace, so it never reads its own grading. BMAD's eval folder and UAAPS's `evals/`
    /// whole (their fixtures and overlays are staged on purpose), a Skillet folder, a
    /// clauditor spec, a UAAPS `tests/` config and its cases.
    pub fn spec_paths(&self, cwd: &std::path::Path) -> Vec<PathBuf> {
        let source = cwd.join(&self.source);
        let mut out = vec![if self.policies.spec_is_folder {
            source
                .parent()
                .map(std::path::Path::to_path_buf)
                .unwrap_or_else(|| source.clone())
        } else {
            source.clone()
        }];
        out.extend(self.cases.iter().map(|c| cwd.join(&c.location.file)));
        out.extend(self.triggers.iter().map(|t| cwd.join(&t.location.file)));
        out.retain(|p| !p.as_os_str().is_empty() && p != cwd && p != &self.project_root);
        out.sort();
        out.dedup();
        out
    }
}

/// Settings a suite gives all its cases; CLI flags, `ASSAY_*` and `assay.toml` combine with
/// these by the precedence in docs/running.md when a run is planned.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Defaults {
    /// `claude-code`, `codex`, `command`, a plugin harness, or `None` for auto.
    pub harness: Option<String>,
    pub model: Option<String>,
    pub timeout_secs: Option<u64>,
    pub judge: JudgeConfig,
    pub thresholds: Option<Thresholds>,
    pub variance: Option<Variance>,
    /// Sent on the system-prompt channel where the harness has one (clauditor `system_prompt`).
    pub system_prompt: Option<String>,
    /// Flag an interactive hang when a run stops on a question (clauditor, default true).
    pub allow_hang_heuristic: bool,
    /// Run background tasks synchronously (`CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1`).
    pub sync_tasks: bool,
    pub sandbox: Option<Sandbox>,
    /// Environment variables injected into every case's agent process.
    pub env: BTreeMap<String, String>,
    /// A BMAD runner `adapter.json` found beside the suite's eval files: the suite's harness is
    /// then `adapter`.
    pub adapter: Option<AdapterSpec>,
}

/// The name of the harness an [`AdapterSpec`] runs as.
pub const ADAPTER_HARNESS: &str = "adapter";

/// A BMAD eval runner's platform adapter (`adapter.json`): one non-interactive command per
/// turn, run in the sandbox like any harness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdapterSpec {
    /// Where it was read from.
    pub source: PathBuf,
    pub name: Option<String>,
    /// The argv template: `{prompt}` (or `{query}`) is the composed prompt, `{cwd}` the agent's
    /// working folder.
    pub invocation: Vec<String>,
    /// The one variable the runtime reads its credential from, forwarded when set non-empty.
    pub auth_env: Option<String>,
    /// Where the JSONL transcript is: stdout (`None`), or this file in the working folder.
    pub transcript_file: Option<String>,
    /// Where the runtime reads skills, under the working folder.
    pub skill_dir: String,
    /// More host variables to forward.
    pub env_passthrough: Vec<String>,
    /// Named by the user (`--adapter`, `BMAD_EVAL_ADAPTER`) rather than found beside the eval
    /// files: only then are host variables forwarded without `--trust`.
    pub chosen: bool,
}

/// Which model judges, through what.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JudgeConfig {
    pub model: Option<String>,
    /// `anthropic`, `openai`, `claude-cli`, `codex-cli`, or `None` for auto.
    pub provider: Option<String>,
    /// clauditor `transport`: `api`, `cli` or `None` (auto).
    pub transport: Option<String>,
    /// The model family auto-selection prefers (`anthropic`, `openai`): UAAPS's "default:
    /// same as engine model" when `judge` is absent.
    pub family: Option<String>,
}

use crate::record::grading::Thresholds;

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            min_pass_rate: 0.7,
            min_mean_score: 0.5,
        }
    }
}

/// Repeated runs of each case, and the agreement required between them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Variance {
    pub runs: u32,
    pub min_stability: Option<f64>,
}

/// UAAPS `sandbox`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Sandbox {
    pub network: bool,
    /// Relative folders the agent may write to; empty means the whole workspace.
    pub writable_paths: Vec<String>,
}

/// Where a case's [`Case::setup_files`] are copied in the case-run's HOME, for its setup
/// script alone (removed before the agent starts).
pub const SETUP_FILES: &str = ".assay-setup";

/// One case: a prompt (or several turns), what to stage, and how to grade.
#[derive(Debug, Clone, Serialize)]
pub struct Case {
    /// Unique within its suite.
    pub id: String,
    /// What its author calls it, beside its id (skill-creator's `name`): shown with the id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub location: Location,
    pub description: Option<String>,
    /// One prompt per turn; later turns resume the same session.
    pub turns: Vec<String>,
    /// What a good result looks like, for the judge's context; never scored by itself.
    pub expected_output: Option<String>,
    pub fixtures: Vec<Fixture>,
    /// Files created empty in the workspace before the run (UAAPS `workspace-files`).
    pub workspace_files: Vec<PathBuf>,
    /// The case's own overlay, copied after the suite's base overlay.
    pub overlay: Option<PathBuf>,
    /// The agent's working directory, relative to the workspace root (clauditor: `inputs`).
    pub cwd: Option<PathBuf>,
    pub setup: Option<String>,
    /// A folder the setup script needs (a plugin-eval suite's eval folder, for its
    /// `scaffold_script` and the files beside it): copied into the case-run's HOME as
    /// `.assay-setup` for the script alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup_files: Option<PathBuf>,
    pub teardown: Option<String>,
    pub checks: Vec<Check>,
    pub judge: JudgeSpec,
    pub extraction: Vec<Section>,
    pub timeout_secs: Option<u64>,
    pub output: OutputSpec,
    pub target: Option<Target>,
    /// For deterministic cases run without an agent (UAAPS `tests/`).
    pub command: Option<CommandSpec>,
    /// Skillet `actual`: a response recorded by hand; kept for reference, never graded.
    pub recorded_output: Option<String>,
    /// Skillet `timestamp`.
    pub created: Option<String>,
    /// Why the case cannot run as written, when its format's runner fails the case rather than
    /// the file (a BMAD `cases.json` fixture that is not there): every case-run of it fails
    /// with this reason, and no agent starts.
    pub unrunnable: Option<String>,
    /// How many times the case runs when neither `--runs` nor the suite says (a Claude Code
    /// plugin-eval case's `runs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<u32>,
    /// Labels `--tag` selects cases by.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// What the case allows the agent: turns, model, tools.
    #[serde(skip_serializing_if = "AgentLimits::is_empty")]
    pub agent: AgentLimits,
    /// Checks and judge items that only say whether the plugin fired: with a baseline arm,
    /// shown but not scored (Claude Code's `arm: with-only`, and `tool_used: Skill`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub with_only: Vec<String>,
    /// The case as its format's own runner describes it (Claude Code's per-case `--json`
    /// fields: `name`, `dir`, `source`, `graders` with their `config`, …), for the reporter
    /// that writes results in that runner's schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native: Option<serde_json::Value>,
    /// The mean score this case must reach, over its format's and `--threshold` (a Claude
    /// Code plugin-eval case's `x-assay-threshold`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_threshold: Option<f64>,
    /// The plugins this case loads instead of its suite's (a Claude Code plugin-eval case's
    /// `plugins:`, resolved): each a [`Package`] with `claude_plugin`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plugins: Vec<Package>,
    /// Stand-ins for the MCP servers the plugin declares (Claude Code plugin evals'
    /// `mocks/`, every layer from the eval folder down to the case's merged).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mocks: Vec<super::mocks::MockServer>,
    /// A recorded session the agent continues, the case's prompt its next turn (Claude Code
    /// plugin evals' `context.history_file`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<PathBuf>,
}

/// What a case allows the agent, where its format says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AgentLimits {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Tools the case grants (Claude Code's names, with their rules: `Bash(npm test:*)`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_tools: Vec<String>,
    /// Tools kept from the agent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disallowed_tools: Vec<String>,
    /// Text added to the agent's system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub append_system_prompt: Option<String>,
    /// Tools beyond the read-only ones (reading, searching, skills, sub-agents, todo lists)
    /// are kept from the agent unless the run grants them (`--allow-tools`), as Claude
    /// Code's plugin evals do; `allowed_tools` alone grants only read-only ones.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub gated: bool,
    /// Variables set for the agent (Claude Code plugin evals' `execution.env`, `EVAL_*` only).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

/// The tools a run grants and keeps from every case that gates them, beyond each case's own
/// (Claude Code plugin evals' `--allow-tools` and `--disallow-tools`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolGrants {
    /// Granted (Claude Code's names, with their rules: `Bash(npm test:*)`).
    pub allow: Vec<String>,
    /// Kept from the agent, over any grant.
    pub deny: Vec<String>,
}

impl AgentLimits {
    pub fn is_empty(&self) -> bool {
        *self == AgentLimits::default()
    }
}

impl Case {
    /// Whether it runs setup or teardown scripts: such a case runs only with `--trust`.
    pub fn has_scripts(&self) -> bool {
        self.setup.is_some() || self.teardown.is_some()
    }

    /// A case with only an id, location and prompt; loaders fill in the rest.
    pub fn new(id: impl Into<String>, location: Location, turns: Vec<String>) -> Self {
        Case {
            id: id.into(),
            name: None,
            location,
            description: None,
            turns,
            expected_output: None,
            fixtures: Vec::new(),
            workspace_files: Vec::new(),
            overlay: None,
            cwd: None,
            setup: None,
            setup_files: None,
            teardown: None,
            checks: Vec::new(),
            judge: JudgeSpec::default(),
            extraction: Vec::new(),
            timeout_secs: None,
            output: OutputSpec::FinalMessage,
            target: None,
            command: None,
            recorded_output: None,
            created: None,
            unrunnable: None,
            runs: None,
            tags: Vec::new(),
            agent: AgentLimits::default(),
            with_only: Vec::new(),
            native: None,
            pass_threshold: None,
            plugins: Vec::new(),
            mocks: Vec::new(),
            history: None,
        }
    }
}

/// A file staged into the workspace before the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fixture {
    /// Resolved, existing source path.
    pub source: PathBuf,
    /// Destination relative to the workspace root.
    pub dest: PathBuf,
}

/// What the LLM judge is asked about this case.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct JudgeSpec {
    /// Each graded PASS/FAIL with evidence (BMAD `expectations`).
    pub expectations: Vec<String>,
    /// Rubric criteria scored 0–1 (clauditor `grading_criteria`).
    pub rubric: Vec<Criterion>,
    /// One pass/fail criterion (Skillet `expected`, UAAPS `judge.criteria`).
    pub criteria: Option<String>,
    /// The user's request as the blind A/B judge sees it (clauditor `user_prompt`).
    pub blind_compare_prompt: Option<String>,
    /// How many times the judge grades the rubric, each criterion passing by a majority of
    /// the votes (Claude Code's plugin evals ask three times); 0 or 1: once.
    #[serde(skip_serializing_if = "is_zero")]
    pub rubric_votes: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl JudgeSpec {
    pub fn is_empty(&self) -> bool {
        self.expectations.is_empty() && self.rubric.is_empty() && self.criteria.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Criterion {
    pub id: String,
    pub criterion: String,
}

/// clauditor L2 extraction: a section of the output with tiers of entries and fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    pub name: String,
    pub tiers: Vec<Tier>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tier {
    pub label: String,
    pub description: Option<String>,
    pub min_entries: u64,
    pub max_entries: Option<u64>,
    pub fields: Vec<Field>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Field {
    pub id: String,
    pub name: String,
    pub required: bool,
    /// A registered format name or an inline regex matched against the whole value.
    pub format: Option<String>,
}

/// What counts as the case's output for checks and the judge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum OutputSpec {
    /// The agent's final message.
    FinalMessage,
    /// The process's standard output (the `command` harness).
    Stdout,
    /// One file, relative to the agent's working directory.
    File { path: String },
    /// Every file matching the globs, relative to the agent's working directory.
    Files { globs: Vec<String> },
}

/// UAAPS `target`: what a case evaluates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    pub kind: TargetKind,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetKind {
    Skill,
    Hook,
    Agent,
}

impl std::str::FromStr for Target {
    type Err = String;

    /// `skill:<name>`, `hook:<event>` or `agent:<name>`.
    fn from_str(s: &str) -> Result<Target, String> {
        let kind = match s.split_once(':') {
            Some(("skill", _)) => TargetKind::Skill,
            Some(("hook", _)) => TargetKind::Hook,
            Some(("agent", _)) => TargetKind::Agent,
            _ => {
                return Err(format!(
                    "`{s}` is not a target: write skill:<name>, hook:<event> or agent:<name>"
                ));
            }
        };
        let name = s.split_once(':').map_or("", |(_, n)| n);
        if name.trim().is_empty() {
            return Err(format!("`{s}` names nothing after the colon"));
        }
        // One skill, agent or event of the package: a name, never a path (it is looked up as
        // a folder of the package and handed to the agent CLI).
        if name.contains(['/', '\\'])
            || name == "."
            || name == ".."
            || name.chars().any(char::is_control)
        {
            return Err(format!(
                "`{s}` is not a name: write the skill's, agent's or event's name alone"
            ));
        }
        Ok(Target {
            kind,
            name: name.to_string(),
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            TargetKind::Skill => "skill",
            TargetKind::Hook => "hook",
            TargetKind::Agent => "agent",
        };
        write!(f, "{kind}:{}", self.name)
    }
}

/// A program run directly, without an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandSpec {
    /// Program and arguments (a string command is run with `sh -c`).
    pub argv: Vec<String>,
    pub stdin: Option<StdinSource>,
    pub env: BTreeMap<String, String>,
    /// Working directory relative to the workspace root.
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum StdinSource {
    Text(String),
    File(PathBuf),
}

/// One deterministic or plugin check on a case-run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub id: String,
    /// A built-in type (`contains`, `regex`, …) or one a plugin provides.
    pub kind: String,
    /// The type's settings, normalized to assay's keys (`needle`, `pattern`, `count`, …).
    pub config: serde_json::Value,
    /// Pass when the underlying check fails.
    pub negate: bool,
    pub weight: f64,
    pub target: CheckTarget,
    pub location: Option<Location>,
}

impl Check {
    /// A check as the formats write them: not negated, weight 1.
    pub fn new(
        id: String,
        kind: impl Into<String>,
        config: serde_json::Value,
        target: CheckTarget,
        location: Option<Location>,
    ) -> Self {
        Check {
            id,
            kind: kind.into(),
            config,
            negate: false,
            weight: 1.0,
            target,
            location,
        }
    }
}

/// What a check looks at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum CheckTarget {
    /// The case's output (see [`OutputSpec`]).
    Output,
    /// The normalized transcript: tool calls, skill invocations, events.
    Transcript,
    /// The workspace after the run.
    Workspace,
    /// The process's exit status and streams (command cases).
    Process,
}

/// Does the skill fire on this query?
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TriggerCase {
    pub id: String,
    pub query: String,
    pub should_trigger: bool,
    /// Which other skills the query must and must not reach (its `x-assay-checks`).
    #[serde(skip_serializing_if = "crate::record::case_run::Routing::is_empty")]
    pub routing: crate::record::case_run::Routing,
    pub location: Location,
    /// A query of the validation set (agentskills.io's `validation_queries.json`): `assay run`
    /// runs it as any other, `assay optimize` holds it out of training (its holdout).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub holdout: bool,
}
