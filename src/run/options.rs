//! What a run is asked to do: [`RunSettings`] as the command line gives it (the flags, parsed
//! in `cli`), [`RunOptions`] with what the command line prepares around them (the judge,
//! plugins, the baseline, the cache). Plain data: what each means when sources disagree is
//! decided in [`super::resolve`]. `run.json` records them through
//! [`crate::record::run::OptionsRecord`], the versioned on-disk schema that reads every older
//! run folder (kept apart on purpose: a record type never changes with a flag).

use std::path::PathBuf;

use super::shard::ShardSpec;
use crate::record::case_run::TriggerMode;
use crate::record::run::Mode;

impl Mode {
    pub fn artifacts(self) -> bool {
        self != Mode::Triggers
    }
    pub fn triggers(self) -> bool {
        self != Mode::Artifacts
    }
}

/// What a run is asked to do, as the command line gives it (`cli::RunFlags` parses the flags and
/// their `ASSAY_*` variables into it). Each field's meaning is the flag's, in `--help`; where
/// a field and another source disagree, [`super::resolve`] decides.
/// `--trigger-turns` by default: three acting steps with no load, and the next decides "not
/// fired" (docs/team-runs.md says why three).
pub const TRIGGER_TURNS: u32 = 3;

#[derive(Debug, Clone, Default)]
pub struct RunSettings {
    /// The harness: claude-code, codex, command, a plugin's, or auto (default: the suite's,
    /// then assay.toml's, then claude-code; for clauditor suites auto: claude-code when
    /// `claude` is on PATH, else codex). (`ASSAY_HARNESS` is read after the flag, then, for
    /// clauditor suites, `CLAUDITOR_HARNESS`.)
    pub harness: Option<String>,
    /// The model the agent uses.
    pub model: Option<String>,
    /// Seconds per case-run for cases without their own `timeout` (over the suite's,
    /// assay.toml's and the format's default; else 600).
    pub timeout: Option<u64>,
    /// Runs of each case (over clauditor `variance.n_runs`); statistics are over the runs.
    /// `auto`: run each case until Wald's sequential test settles its verdict against
    /// --min-pass-rate (each error at most 1 - --confidence), or --max-runs is reached.
    pub runs: Option<Runs>,
    /// With `--runs auto`: the most runs of a case.
    pub max_runs: u32,
    /// With `--runs auto`: 1 minus each error rate of the sequential test that settles a
    /// case.
    pub confidence: f64,
    /// A case passes when this share of its runs pass (0–1; default 1: every run). A suite's
    /// `variance.min_stability` replaces it for that suite's cases.
    pub min_pass_rate: f64,
    /// The k of pass@k and pass^k in the statistics (capped at the number of runs).
    pub pass_k: u32,
    /// Stop starting case-runs once those started have cost this much (USD, as the agents
    /// report it): the ones running finish, the rest are left for `--resume` (exit 3).
    /// Default: `[run] max_cost` of assay.toml, else no limit.
    pub max_cost: Option<f64>,
    /// What runs: artifact evals, trigger evals, or both.
    pub mode: Mode,
    /// How a trigger eval decides whether the skill fired: by running the real agent, or by
    /// asking the judge from the skill's name and description alone (cheaper, an estimate).
    pub trigger_mode: TriggerMode,
    /// Runs of each trigger query through the agent.
    pub trigger_runs: u32,
    /// A should-trigger query passes when its trigger rate reaches this; a should-not query
    /// when it stays below.
    pub trigger_threshold: f64,
    /// The model of trigger runs (`--trigger-model`).
    pub trigger_model: Option<String>,
    /// Trigger runs go to the agent's end rather than stopping at the decisive event.
    pub trigger_full_runs: bool,
    /// `--trigger-turns`: a trigger run's acting steps with no load before "not fired"; 0: none.
    pub trigger_turns: u32,
    /// Finish an interrupted run in its folder: only missing or errored case-runs run again.
    pub resume: Option<PathBuf>,
    /// Run only the K-th of N slices of the cases (for a CI matrix or a Kubernetes Indexed
    /// Job), dealt so the shards finish together by each case's time in earlier runs
    /// (--shard-timings); join the shards' run folders with `assay report merge`. `auto`:
    /// the slice the environment gives (JOB_COMPLETION_INDEX with --shards, CI_NODE_INDEX and
    /// CI_NODE_TOTAL, CIRCLE_NODE_*, BUILDKITE_PARALLEL_JOB*).
    pub shard: Option<ShardSpec>,
    /// With `--shard auto`: how many shards there are (a Kubernetes Indexed Job's
    /// completions, which its pods' environment does not carry).
    pub shards: Option<u32>,
    /// Where the shards' expected times come from: a run folder (a merged one of every shard,
    /// say) or a history file. Default: .assay/history.jsonl, when there is one; without
    /// timings the cases are dealt round-robin. Every shard must read the same timings.
    pub shard_timings: Option<PathBuf>,
    /// Only case-runs whose `suite/case` id contains this text, or matches this glob (the
    /// suite with or without its format: `tiny/00*` or `skillet:tiny/00*`).
    pub filter: Option<String>,
    /// Only cases that evaluate this (UAAPS `target`): skill:<name>, agent:<name> or
    /// hook:<event>.
    pub target: Option<crate::suite::Target>,
    /// Print every case-run that would run (harness, model, timeout, target) and the agent
    /// runs it takes, then stop: no agent, judge or run folder.
    pub dry_run: bool,
    /// Keep every workspace (failed ones are always kept).
    pub keep_workspaces: bool,
    /// The run folder (default: .assay/runs/<timestamp>).
    pub output_dir: Option<PathBuf>,
    /// Where workspaces are made (default: the system temp folder).
    pub workspace_dir: Option<PathBuf>,
    /// How agents, setup/teardown scripts and test commands are contained: `auto` takes the
    /// strongest backend that works here (bubblewrap, else Landlock; Seatbelt on macOS) and
    /// refuses to start (exit 3) where none does; `bwrap`, `landlock` or `seatbelt` that
    /// backend or refuse; `none` runs them unsandboxed, as you (recorded in run.json and every
    /// report).
    /// Default: `[run] sandbox` of assay.toml, else auto.
    pub sandbox: Option<crate::sandbox::SandboxMode>,
    /// What a sandboxed agent may reach: `model` (only its harness's model endpoints),
    /// `none`, or `host` (the host's network). Default: the suite's (UAAPS
    /// `sandbox.network`), then `[run] network` of assay.toml, then model.
    pub network: Option<crate::sandbox::Network>,
    /// Install every skill in this folder (each a folder with SKILL.md) beside the skill under
    /// test, where each agent reads skills, so trigger evals show which skill a query reaches
    /// (the routing table, each skill's precision and recall). The project's own
    /// `.claude/skills` and `.agents/skills` are in every workspace anyway.
    pub with_skills: Option<PathBuf>,
    /// Run setup and teardown scripts (Skillet); without it such cases are skipped.
    pub trust: bool,
    /// Tools granted to every case that gates them (Claude Code plugin evals' `--allow-tools`:
    /// Bash, Write, Edit, WebFetch, `mcp__…`, with rules such as `Bash(npm test:*)`), and
    /// tools kept from every such case (`--disallow-tools`).
    pub tools: crate::suite::ToolGrants,
    /// Whether suites that compare with the plugin left out (Claude Code plugin evals) run
    /// that arm: `none` runs the plugin's arm alone (Claude Code's `--ablation`).
    pub ablation: Option<Ablation>,
    /// Claude Code plugin evals' MCP mocks: `record` (the default) serves each mocked server's
    /// stand-in and starts no server without a mock; `off` starts the plugin's servers as it
    /// declares them.
    pub mocks: Option<Mocks>,
    /// With mocks on, a server with no mock starts for real (inside the sandbox).
    pub allow_real_servers: bool,
    /// The mean score a case must reach, where its format scores cases (Claude Code plugin
    /// evals: default 1.0).
    pub threshold: Option<f64>,
    /// Only cases with one of these tags (Claude Code plugin evals' `--tag`).
    pub tags: Vec<String>,
    /// Pass this host environment variable to agents too (repeatable): how a vendor's key
    /// reaches the `command` harness or an agent assay does not know (each harness is given
    /// its own vendor's login only). Its value is redacted from everything recorded.
    pub pass_env: Vec<String>,
    /// The most memory a sandboxed case-run may use, all its processes together (`4GiB`,
    /// `512MiB`, or `none`). Default: `[run.limits] memory` of assay.toml, else 3 GiB.
    pub limit_memory: Option<crate::sandbox::limits::Cap>,
    /// The most processes a sandboxed case-run may have at once (or `none`). Default:
    /// `[run.limits] pids`, else 1024.
    pub limit_pids: Option<crate::sandbox::limits::Cap>,
    /// The most disk a sandboxed case-run may write (workspace, HOME, temp; or `none`).
    /// Default: `[run.limits] disk`, else 4 GiB.
    pub limit_disk: Option<crate::sandbox::limits::Cap>,
}

/// What the user asked for on the command line (and through `ASSAY_*` variables).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The flags taken as they are.
    pub settings: RunSettings,
    /// What a second Ctrl-C (SIGTERM, SIGHUP) does once every agent's process group is killed:
    /// the program's to decide (the CLI exits with 128 + the signal). `None`: the run goes on
    /// recording what the killed agents left.
    pub on_kill: Option<fn(i32)>,
    /// Agent processes at once; 0 picks `[run] jobs` of assay.toml, else a default from CPUs and memory.
    pub jobs: usize,
    /// The `command` harness's command, overriding `assay.toml`.
    pub command: Vec<String>,
    /// `--judge`: provider, provider:model, or a model name.
    pub judge: Option<String>,
    /// `--transport`: how an Anthropic judge is reached (`api`, `cli`, `auto`).
    pub transport: Option<String>,
    /// `urls_reachable` may reach loopback, private and link-local addresses.
    pub allow_private_urls: bool,
    /// Loaded plugins: check types, formats, harnesses.
    pub plugins: crate::plugin::Plugins,
    /// `--judge-jobs`: judge calls at once (over `ASSAY_JUDGE_CONCURRENCY`).
    pub judge_jobs: Option<usize>,
    pub baseline: Option<OtherArm>,
    /// `--adapter` (or `BMAD_EVAL_ADAPTER`): a BMAD runner adapter that every suite runs
    /// through, over the suites' own `adapter.json`.
    pub adapter: Option<crate::suite::AdapterSpec>,
    /// Reuse unchanged case-runs from the cache (off with `--no-cache`).
    pub cache: bool,
    /// Runs of particular cases, by (suite id, case id), over `--runs` (adaptive repeats set
    /// them round by round).
    pub runs_for: std::collections::BTreeMap<(String, String), u32>,
    /// (skill, harness) whose loads the trigger canary saw work
    /// ([`super::canary::verified`]): a trigger run's call of that skill is its load, which
    /// cannot fail, so the agent is stopped at the call, before it asks the model anything more.
    pub loads_verified: Vec<(String, String)>,
}

/// `--runs`: a fixed count, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    Fixed(u32),
    /// Adaptive: until each case's verdict is settled (see [`super::adaptive`]).
    Auto,
}

impl Runs {
    /// The fixed count, when it is one.
    pub fn fixed(self) -> Option<u32> {
        match self {
            Runs::Fixed(n) => Some(n),
            Runs::Auto => None,
        }
    }
}

/// Claude Code's `--ablation`: whether the no-plugin arm runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ablation {
    /// The plugin's arm alone.
    None,
    /// The plugin's arm and the arm without it, with the difference of their scores.
    WithWithout,
}

/// Claude Code's `--mocks`: whether MCP servers are stood in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mocks {
    /// Mocked servers answered by their stand-ins; servers with no mock not started.
    Record,
    /// No stand-ins: the plugin's servers as it declares them.
    Off,
}

/// What a baseline case-run has instead of the skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OtherArm {
    /// No skill at all.
    WithoutSkill,
    /// This version of the skill (a folder with SKILL.md, or a command file).
    Skill(PathBuf),
    /// Another version of the skill, reported as the variant (`--variant-path`).
    Variant(PathBuf),
}

impl OtherArm {
    /// The skill the comparison arm installs instead of the suite's, if any.
    pub fn skill_path(&self) -> Option<&std::path::Path> {
        match self {
            OtherArm::WithoutSkill => None,
            OtherArm::Skill(p) | OtherArm::Variant(p) => Some(p),
        }
    }

    /// The variant its case-runs are recorded under.
    pub fn variant(&self) -> crate::record::case_run::Arm {
        use crate::record::case_run::Arm;
        match self {
            OtherArm::Variant(_) => Arm::Variant,
            _ => Arm::Baseline,
        }
    }
}
