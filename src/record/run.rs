//! A run's `run.json`: what was planned and how — options, harness versions, judges, plugins,
//! the sandbox, each project's configuration — and, at the end, how long it took.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::case_run::{Arm, Kind, TriggerMode};

/// The version of `run.json` this assay writes. A new version is a new name; readers keep
/// reading the older ones.
pub const SCHEMA: &str = "assay.run/v1";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunRecord {
    /// The record's version ([`SCHEMA`]).
    pub schema: String,
    pub assay_version: String,
    /// When the run first started (a resumed run keeps it).
    pub started: Option<String>,
    /// When each `--resume` started again.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resumed: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Ctrl-C, SIGTERM or SIGHUP stopped it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// `--max-cost` stopped it from starting more case-runs: the limit, what was spent, and
    /// how many were left unstarted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_stop: Option<BudgetStop>,
    /// How many case-runs were planned.
    pub case_runs: usize,
    /// Each harness's version, as its CLI printed it.
    pub harnesses: BTreeMap<String, String>,
    /// The judges the suites use.
    pub judges: Vec<JudgeEntry>,
    pub options: OptionsRecord,
    pub sandbox: Option<SandboxSettings>,
    /// Every loaded plugin: name, path, hash, grants, what it provides.
    pub plugins: Vec<Value>,
    /// Every case-run this run means to record: one without a `result.json` is `missing`.
    pub planned: Vec<PlannedCaseRun>,
    /// Each project's `assay.toml` as used (`run.env` as variable names, never values).
    pub projects: BTreeMap<String, Value>,
    /// The run folders a merged run was made from (`assay report merge`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
    /// `--runs auto`: how many runs each case took, and why it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveRecord>,
    /// `--shard`: which slice of which plan this run is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
}

/// A shard of a run cut into slices: which one, how the cases were dealt, and the whole
/// plan's cut, so `assay report merge` can check that slices belong together and name the
/// case-runs of a slice it was not given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShardRecord {
    /// K of K/N, from 1.
    pub index: u32,
    pub count: u32,
    /// Where K/N came from: `--shard 2/4`, or what `--shard auto` read.
    pub source: String,
    /// `time` (by each case's expected time) or `count` (round-robin).
    pub by: String,
    /// The history file or run folder the expected times came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timings: Option<String>,
    /// Each shard's expected time in ms, shard 1 first (cut by time).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expected_ms: Vec<u64>,
    /// Every case of the whole plan (`suite/case`) and its shard.
    pub cases: BTreeMap<String, u32>,
    /// The case-runs the other shards planned.
    pub elsewhere: Vec<PlannedCaseRun>,
    /// Each suite as planned, by id: the short hashes of its eval files and of its skill.
    pub suites: BTreeMap<String, SuiteDigest>,
}

/// A suite's files as a shard planned them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SuiteDigest {
    pub spec: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
}

/// What adaptive repeats (`--runs auto`) did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AdaptiveRecord {
    pub max_runs: u32,
    pub confidence: f64,
    /// How a case was settled: the stopping rule and its parameters.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rule: String,
    /// The pass rate each case's interval had to clear (`--min-pass-rate`).
    pub threshold: f64,
    pub rounds: u32,
    pub cases: Vec<AdaptiveCase>,
    /// Case-runs taken (with the skill; baselines follow the same counts).
    pub runs_used: u64,
    /// What `--runs <max-runs>` would have taken.
    pub runs_fixed: u64,
}

/// One case under adaptive repeats.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AdaptiveCase {
    pub suite: String,
    pub case: String,
    pub runs: u32,
    pub passed: u32,
    /// The interval cleared the threshold (`pass` above it, `fail` below); otherwise the
    /// maximum was reached (`max-runs`) or the run stopped first (`stopped`).
    pub settled: String,
}

/// A judge a suite uses, or why it has none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JudgeEntry {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Where the choice came from: flag, env, spec or auto.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

/// `--mode`: which evals run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Artifact evals only (cases with prompts and grading).
    Artifacts,
    /// Trigger evals only (does the skill fire on a query?).
    Triggers,
    /// Both.
    #[default]
    All,
}

/// A run that `--max-cost` stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetStop {
    pub max_cost_usd: f64,
    pub spent_usd: f64,
    pub not_started: usize,
}

/// The run's options as they took effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OptionsRecord {
    pub harness: Option<String>,
    pub model: Option<String>,
    pub timeout: Option<u64>,
    pub jobs: usize,
    pub judge_jobs: Option<usize>,
    pub filter: Option<String>,
    pub keep_workspaces: bool,
    pub trust: bool,
    /// Names of the variables passed through (never their values).
    pub pass_env: Vec<String>,
    pub allow_private_urls: bool,
    pub runs: Option<u32>,
    pub mode: Mode,
    pub trigger_mode: TriggerMode,
    pub trigger_runs: u32,
    pub trigger_threshold: f64,
    /// `--trigger-model` (or `[run] trigger_model`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_model: Option<String>,
    /// `without-skill`, the path of the baseline skill, or `variant:<path>` (`--variant-path`).
    pub baseline: Option<String>,
    /// Whether the cache was used.
    pub cache: bool,
    /// `K/N`.
    pub shard: Option<String>,
    pub min_pass_rate: f64,
    pub pass_k: u32,
    /// `--max-cost` (or `[run] max_cost`), USD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
    /// `--with-skills`: the skills installed beside the one under test, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub with_skills: Vec<String>,
    /// `--ablation`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ablation: Option<String>,
    /// `--mocks`, when given (`record` or `off`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mocks: Option<String>,
    /// `--allow-real-servers`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_real_servers: bool,
    /// `--threshold`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// `--tag`s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// `--allow-tools` grants.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_tools: Vec<String>,
    /// `--disallow-tools`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disallow_tools: Vec<String>,
}

impl Default for OptionsRecord {
    /// What a run recorded before an option existed meant.
    fn default() -> Self {
        OptionsRecord {
            harness: None,
            model: None,
            timeout: None,
            jobs: 0,
            judge_jobs: None,
            filter: None,
            keep_workspaces: false,
            trust: false,
            pass_env: Vec::new(),
            allow_private_urls: false,
            runs: None,
            mode: Mode::All,
            trigger_mode: TriggerMode::Agent,
            trigger_runs: 3,
            trigger_threshold: 0.5,
            trigger_model: None,
            baseline: None,
            cache: false,
            shard: None,
            min_pass_rate: 1.0,
            pass_k: 3,
            max_cost: None,
            with_skills: Vec::new(),
            ablation: None,
            mocks: None,
            allow_real_servers: false,
            threshold: None,
            tags: Vec::new(),
            allow_tools: Vec::new(),
            disallow_tools: Vec::new(),
        }
    }
}

/// How the run's agents were contained.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SandboxSettings {
    /// `--sandbox`: `auto`, `bwrap`, `landlock`, `seatbelt` or `none`.
    pub mode: String,
    /// The backend that ran (`bwrap`, `landlock`, `seatbelt`), `none` (unsandboxed), or
    /// `unused` (no case-run starts a process).
    pub kind: String,
    /// bubblewrap's version.
    pub bwrap: Option<String>,
    /// What ran: bubblewrap's version, `Landlock ABI 7`, `sandbox-exec`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// What the backend does not contain that bubblewrap does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<String>,
    /// `--network`, when given.
    pub network: Option<String>,
    /// `overlay` (copy-on-write workspaces) or `copy` (each a copy of the project).
    pub workspaces: String,
    /// Each case-run's limits (`memory`, `pids`, `disk`), as `--limit-*` and the first
    /// project's `[run.limits]` set them, and how each holds on this machine. Each
    /// `result.json` records its own case-run's figures.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<String, LimitHeld>,
}

/// One limit of a run: its figure (`null`: none) and how this machine enforces it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitHeld {
    pub limit: Option<u64>,
    pub how: String,
}

/// A case-run the run planned, and the folder its record goes to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedCaseRun {
    pub suite: String,
    pub case: String,
    pub run: u32,
    #[serde(default)]
    pub variant: Arm,
    #[serde(default)]
    pub kind: Kind,
    /// Relative to the run folder.
    pub dir: PathBuf,
}

impl RunRecord {
    /// Reads a `run.json`. A record of a version this assay does not know is refused.
    pub fn parse(text: &str) -> Result<RunRecord, String> {
        super::parse_versioned(text, "a run record", SCHEMA, |r: &Self| &r.schema)
    }
}

/// A serialized enum's word (`--sandbox auto` → `auto`), for the options recorded as text.
pub fn word(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        Ok(v) => v.to_string(),
        Err(_) => String::new(),
    }
}
