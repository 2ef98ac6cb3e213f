//! The flags of a run (`assay run`, and the commands that run one: `watch`, `doctor`,
//! `optimize`), as clap parses them, and their conversion into the library's plain
//! [`RunSettings`]. A flag's `env = "ASSAY_*"` is read here, by clap, and nowhere else: the
//! variable stands in for the flag (the flag wins), it shows in `--help`, and a bad value is
//! a usage error as a bad flag is. Every other variable is read through
//! [`crate::host::HostEnv`] where its setting is resolved (`run::resolve`).

use std::path::{Path, PathBuf};

use clap::Args;

use crate::run::shard::ShardSpec;
use crate::sandbox::limits::{count, size};
use crate::{
    record::{case_run::TriggerMode, run::Mode},
    run::options::{RunSettings, Runs},
};

/// The `assay run` flags that the run takes as they are (flattened into `run`, `watch`,
/// `doctor` and `optimize`), converted once into [`RunSettings`] by [`RunFlags::from`].
#[derive(Debug, Clone, Default, Args)]
pub struct RunFlags {
    /// The harness: claude-code, codex, command, a plugin's, or auto (default: the suite's,
    /// then assay.toml's, then claude-code; for clauditor suites auto: claude-code when
    /// `claude` is on PATH, else codex). (`ASSAY_HARNESS` is read after the flag, then, for
    /// clauditor suites, `CLAUDITOR_HARNESS`.)
    #[arg(long)]
    pub harness: Option<String>,
    /// The model the agent uses.
    #[arg(long, env = "ASSAY_MODEL")]
    pub model: Option<String>,
    /// Seconds per case-run for cases without their own `timeout` (over the suite's,
    /// assay.toml's and the format's default; else 600).
    #[arg(long, env = "ASSAY_TIMEOUT")]
    pub timeout: Option<u64>,
    /// Runs of each case (over clauditor `variance.n_runs`); statistics are over the runs.
    /// `auto`: run each case until Wald's sequential test settles its verdict against
    /// --min-pass-rate (each error at most 1 - --confidence), or --max-runs is reached.
    #[arg(long, value_name = "N|auto", env = "ASSAY_RUNS", value_parser = runs)]
    pub runs: Option<Runs>,
    /// With `--runs auto`: the most runs of a case.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_runs: u32,
    /// With `--runs auto`: 1 minus each error rate of the sequential test that settles a
    /// case.
    #[arg(long, value_name = "LEVEL", default_value_t = 0.9, value_parser = open_fraction)]
    pub confidence: f64,
    /// A case passes when this share of its runs pass (0–1; default 1: every run). A suite's
    /// `variance.min_stability` replaces it for that suite's cases.
    #[arg(long, value_name = "RATE", default_value_t = 1.0, value_parser = fraction)]
    pub min_pass_rate: f64,
    /// The k of pass@k and pass^k in the statistics (capped at the number of runs).
    #[arg(long, value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub pass_k: u32,
    /// Stop starting case-runs once those started have cost this much (USD, as the agents
    /// report it): the ones running finish, the rest are left for `--resume` (exit 3).
    /// Default: `[run] max_cost` of assay.toml, else no limit. `--max-cost-usd` is the same
    /// flag, as Claude Code's plugin evals name it.
    #[arg(long, visible_alias = "max-cost-usd", value_name = "USD", env = "ASSAY_MAX_COST", value_parser = positive)]
    pub max_cost: Option<f64>,
    /// What runs: artifact evals, trigger evals, or both.
    #[arg(long, value_enum, default_value_t = Mode::All)]
    pub mode: Mode,
    /// How a trigger eval decides whether the skill fired: by running the real agent, or by
    /// asking the judge from the skill's name and description alone (cheaper, an estimate).
    #[arg(long, value_enum, default_value_t = TriggerMode::Agent)]
    pub trigger_mode: TriggerMode,
    /// Runs of each trigger query through the agent.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub trigger_runs: u32,
    /// A should-trigger query passes when its trigger rate reaches this; a should-not query
    /// when it stays below.
    #[arg(long, value_name = "RATE", default_value_t = 0.5, value_parser = fraction)]
    pub trigger_threshold: f64,
    /// The model of trigger runs (a cheaper one than the cases', say), as each engine's CLI
    /// takes a model. Default: `[run] trigger_model` of assay.toml, else the cases' model.
    #[arg(long, value_name = "MODEL", env = "ASSAY_TRIGGER_MODEL")]
    pub trigger_model: Option<String>,
    /// Let each trigger run go to the agent's end (to grade what a triggered run does), rather
    /// than stopping the agent once the skill under test has loaded.
    #[arg(long)]
    pub trigger_full_runs: bool,
    /// A trigger run's budget of acting steps with no load: the agent's next step that writes,
    /// edits or runs a command (listing, grep, glob, reading and a todo list never count)
    /// decides "not fired" and stops it. 0: no budget (the agent's answer decides).
    #[arg(long, value_name = "STEPS", default_value_t = crate::run::options::TRIGGER_TURNS)]
    pub trigger_turns: u32,
    /// Finish an interrupted run in its folder: only missing or errored case-runs run again.
    #[arg(long, value_name = "RUN_DIR", conflicts_with = "output_dir")]
    pub resume: Option<PathBuf>,
    /// Run only the K-th of N slices of the cases (for a CI matrix or a Kubernetes Indexed
    /// Job), dealt so the shards finish together by each case's time in earlier runs
    /// (--shard-timings); join the shards' run folders with `assay report merge`. `auto`:
    /// the slice the environment gives (JOB_COMPLETION_INDEX with --shards, CI_NODE_INDEX and
    /// CI_NODE_TOTAL, CIRCLE_NODE_*, BUILDKITE_PARALLEL_JOB*).
    #[arg(long, value_name = "K/N|auto")]
    pub shard: Option<ShardSpec>,
    /// With `--shard auto`: how many shards there are (a Kubernetes Indexed Job's
    /// completions, which its pods' environment does not carry).
    #[arg(long, value_name = "N", env = "ASSAY_SHARDS", value_parser = clap::value_parser!(u32).range(1..))]
    pub shards: Option<u32>,
    /// Where the shards' expected times come from: a run folder (a merged one of every shard,
    /// say) or a history file. Default: .assay/history.jsonl, when there is one; without
    /// timings the cases are dealt round-robin. Every shard must read the same timings.
    #[arg(long, value_name = "RUN_DIR|FILE", env = "ASSAY_SHARD_TIMINGS")]
    pub shard_timings: Option<PathBuf>,
    /// Only case-runs whose `suite/case` id contains this text, or matches this glob (the
    /// suite with or without its format: `tiny/00*` or `skillet:tiny/00*`). `--case` is
    /// the same flag, as Claude Code's plugin evals name it.
    #[arg(long, visible_alias = "case")]
    pub filter: Option<String>,
    /// Only cases that evaluate this (UAAPS `target`): skill:<name>, agent:<name> or
    /// hook:<event>.
    #[arg(long, value_name = "KIND:NAME")]
    pub target: Option<crate::suite::Target>,
    /// Print every case-run that would run (harness, model, timeout, target) and the agent
    /// runs it takes, then stop: no agent, judge or run folder.
    #[arg(long)]
    pub dry_run: bool,
    /// Keep every workspace (failed ones are always kept).
    #[arg(long)]
    pub keep_workspaces: bool,
    /// The run folder (default: .assay/runs/<timestamp>).
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Where workspaces are made (default: the system temp folder).
    #[arg(long, value_name = "DIR", env = "ASSAY_WORKSPACE_DIR")]
    pub workspace_dir: Option<PathBuf>,
    /// How agents, setup/teardown scripts and test commands are contained: `auto` takes the
    /// strongest backend that works here (bubblewrap, else Landlock; Seatbelt on macOS) and
    /// refuses to start (exit 3) where none does; `bwrap`, `landlock` or `seatbelt` that
    /// backend or refuse; `none` runs them unsandboxed, as you (recorded in run.json and every
    /// report).
    /// Default: `[run] sandbox` of assay.toml, else auto.
    #[arg(long, value_enum, env = "ASSAY_SANDBOX")]
    pub sandbox: Option<crate::sandbox::SandboxMode>,
    /// What a sandboxed agent may reach: `model` (only its harness's model endpoints),
    /// `none`, or `host` (the host's network). Default: the suite's (UAAPS
    /// `sandbox.network`), then `[run] network` of assay.toml, then model.
    #[arg(long, value_enum, env = "ASSAY_NETWORK")]
    pub network: Option<crate::sandbox::Network>,
    /// Install every skill in this folder (each a folder with SKILL.md) beside the skill under
    /// test, where each agent reads skills, so trigger evals show which skill a query reaches
    /// (the routing table, each skill's precision and recall). The project's own
    /// `.claude/skills` and `.agents/skills` are in every workspace anyway.
    #[arg(long, value_name = "DIR")]
    pub with_skills: Option<PathBuf>,
    /// Run setup and teardown scripts (Skillet, and Claude Code plugin evals'
    /// `scaffold_script`); without it such cases are skipped.
    #[arg(long)]
    pub trust: bool,
    /// Grant these tools to every Claude Code plugin-eval case (Bash, Write, Edit, WebFetch,
    /// `mcp__…`; `Tool(pattern:*)` rules too): without a grant a case's `allowed_tools`
    /// gives it only read-only tools, as in `claude plugin eval`.
    #[arg(long, value_name = "TOOL", num_args = 1..)]
    pub allow_tools: Vec<String>,
    /// Keep these tools from every Claude Code plugin-eval case, over any grant (the case's
    /// `disallowed_tools` for all of them).
    #[arg(long, value_name = "TOOL", num_args = 1..)]
    pub disallow_tools: Vec<String>,
    /// For Claude Code plugin evals: `with-without` (the default) also runs each case without
    /// the plugin and reports the difference; `none` runs the plugin's arm alone.
    #[arg(long, value_enum)]
    pub ablation: Option<crate::run::options::Ablation>,
    /// For Claude Code plugin evals with `mocks/`: `record` (the default) answers each mocked
    /// MCP server's tools from its mocks and starts no server that has none; `off` starts the
    /// plugin's servers as it declares them.
    #[arg(long, value_enum, value_name = "MODE")]
    pub mocks: Option<crate::run::options::Mocks>,
    /// With mocks on, start the plugin's MCP servers that have no mock (inside the sandbox)
    /// rather than leaving them out.
    #[arg(long)]
    pub allow_real_servers: bool,
    /// For suites scored by weight (Claude Code plugin evals): the mean score a case must
    /// reach, 0 to 1 (default 1.0); a case below it fails the run (exit 1).
    #[arg(long, value_name = "0..1", value_parser = threshold)]
    pub threshold: Option<f64>,
    /// Only cases with one of these tags (repeatable).
    #[arg(long = "tag", value_name = "TAG", num_args = 1..)]
    pub tags: Vec<String>,
    /// Pass this host environment variable to agents too (repeatable): how a vendor's key
    /// reaches the `command` harness or an agent assay does not know (each harness is given
    /// its own vendor's login only). Its value is redacted from everything recorded.
    #[arg(long, value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// The most memory a sandboxed case-run may use, all its processes together (`4GiB`,
    /// `512MiB`, or `none`). Default: `[run.limits] memory` of assay.toml, else 3 GiB.
    #[arg(long, value_name = "SIZE", env = "ASSAY_LIMIT_MEMORY", value_parser = size)]
    pub limit_memory: Option<crate::sandbox::limits::Cap>,
    /// The most processes a sandboxed case-run may have at once (or `none`). Default:
    /// `[run.limits] pids`, else 1024.
    #[arg(long, value_name = "N", env = "ASSAY_LIMIT_PIDS", value_parser = count)]
    pub limit_pids: Option<crate::sandbox::limits::Cap>,
    /// The most disk a sandboxed case-run may write (workspace, HOME, temp; or `none`).
    /// Default: `[run.limits] disk`, else 4 GiB.
    #[arg(long, value_name = "SIZE", env = "ASSAY_LIMIT_DISK", value_parser = size)]
    pub limit_disk: Option<crate::sandbox::limits::Cap>,
}

impl RunFlags {
    /// The settings as the run takes them, given from `cwd`: the workspace folder and the
    /// sibling skills' folder absolute.
    pub fn from(&self, cwd: &Path) -> RunSettings {
        let f = self.clone();
        RunSettings {
            harness: f.harness,
            model: f.model,
            timeout: f.timeout,
            runs: f.runs,
            max_runs: f.max_runs,
            confidence: f.confidence,
            min_pass_rate: f.min_pass_rate,
            pass_k: f.pass_k,
            max_cost: f.max_cost,
            mode: f.mode,
            trigger_mode: f.trigger_mode,
            trigger_runs: f.trigger_runs,
            trigger_threshold: f.trigger_threshold,
            trigger_model: f.trigger_model,
            trigger_full_runs: f.trigger_full_runs,
            trigger_turns: f.trigger_turns,
            resume: f.resume,
            shard: f.shard,
            shards: f.shards,
            shard_timings: f.shard_timings,
            filter: f.filter,
            target: f.target,
            dry_run: f.dry_run,
            keep_workspaces: f.keep_workspaces,
            output_dir: f.output_dir,
            workspace_dir: f.workspace_dir.map(|d| cwd.join(d)),
            sandbox: f.sandbox,
            network: f.network,
            with_skills: f.with_skills.map(|d| cwd.join(d)),
            trust: f.trust,
            tools: crate::suite::ToolGrants {
                allow: f.allow_tools,
                deny: f.disallow_tools,
            },
            ablation: f.ablation,
            mocks: f.mocks,
            allow_real_servers: f.allow_real_servers,
            threshold: f.threshold,
            tags: f.tags,
            pass_env: f.pass_env,
            limit_memory: f.limit_memory,
            limit_pids: f.limit_pids,
            limit_disk: f.limit_disk,
        }
    }
}

/// `--threshold`: a number from 0 to 1.
fn threshold(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if (0.0..=1.0).contains(&t) => Ok(t),
        _ => Err(format!(
            "`{s}` is not a threshold: write a number from 0 to 1"
        )),
    }
}

/// `--runs`: a number of runs, or `auto`.
fn runs(s: &str) -> Result<Runs, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok(Runs::Auto);
    }
    match s.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok(Runs::Fixed(n)),
        _ => Err(format!(
            "`{s}` is not a number of runs (1 or more) or `auto`"
        )),
    }
}

/// A number strictly between 0 and 1.
fn open_fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(format!("`{s}` is not a number between 0 and 1")),
    }
}

/// A number from 0 to 1.
fn fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("`{s}` is not a number from 0 to 1")),
    }
}

/// A number above 0.
fn positive(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("`{s}` is not a number above 0")),
    }
}
