//! What a run is made of: which case-runs, in which variant, on which shard.

use std::path::PathBuf;
use std::time::Duration;

use super::{DEFAULT_HARNESS, DEFAULT_TIMEOUT_SECS, JudgeSlot, RunOptions, judge_for, shard};
use crate::config::Config;
use crate::harness::command::CommandHarness;
use crate::harness::{self, Harness, HarnessSettings};
use crate::host::{HostEnv, Unavailable};
use crate::record;
use crate::spec::{Case, Suite, TriggerCase};

pub use crate::record::run::Mode;

impl Mode {
    pub fn artifacts(self) -> bool {
        self != Mode::Triggers
    }
    pub fn triggers(self) -> bool {
        self != Mode::Artifacts
    }
}

pub use crate::record::case_run::{TriggerMode, Variant};

impl Variant {
    /// The case-run folder's name: `run-<k>`, `baseline-<k>`.
    pub fn folder(self, run: u32) -> String {
        match self {
            Variant::Skill => format!("run-{run}"),
            Variant::Baseline => format!("baseline-{run}"),
            Variant::Variant => format!("variant-{run}"),
        }
    }
}

/// What a baseline case-run has instead of the skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Baseline {
    /// No skill at all.
    WithoutSkill,
    /// This version of the skill (a folder with SKILL.md, or a command file).
    Skill(PathBuf),
    /// Another version of the skill, reported as the variant (`--variant-path`).
    Variant(PathBuf),
}

impl Baseline {
    /// The skill the comparison arm installs instead of the suite's, if any.
    pub fn skill_path(&self) -> Option<&std::path::Path> {
        match self {
            Baseline::WithoutSkill => None,
            Baseline::Skill(p) | Baseline::Variant(p) => Some(p),
        }
    }

    /// The variant its case-runs are recorded under.
    pub fn variant(&self) -> Variant {
        match self {
            Baseline::Variant(_) => Variant::Variant,
            _ => Variant::Baseline,
        }
    }
}

/// The default number of agent processes at once: one per CPU, and no more than memory allows
/// at about 400 MB each (a Claude Code process takes ~300 MB), between 1 and 8.
pub fn default_jobs() -> usize {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    let by_memory = available_memory_mb()
        .map(|mb| (mb / 400) as usize)
        .unwrap_or(cpus);
    cpus.min(by_memory).clamp(1, 8)
}

/// `MemAvailable` from /proc/meminfo, in MB.
fn available_memory_mb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_jobs_is_bounded() {
        let j = default_jobs();
        assert!((1..=8).contains(&j));
    }
}

/// The plan of a run, as printed before any agent starts (and all `--dry-run` does): every
/// case-run with its harness, model, timeout and target, and what it will cost in agent runs.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Preview {
    pub case_runs: Vec<PlannedRow>,
    /// Harnesses or a sandbox that cannot run here: a real run would stop on them (exit 3).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<String>,
    /// `--shard`: the slice, and each shard's expected time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<Box<ShardPreview>>,
}

/// The shard a run takes, as the plan prints it.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ShardPreview {
    pub index: u32,
    pub count: u32,
    /// Where K/N came from.
    pub source: String,
    /// Where the expected times came from; `None`: dealt by count.
    pub timings: Option<String>,
    /// Each shard's expected time in ms, shard 1 first; empty when dealt by count.
    pub expected_ms: Vec<u64>,
    /// Case-runs of the whole plan with a time of their own, of all.
    pub timed: usize,
    pub total: usize,
    /// Cut as the run being resumed was first cut.
    pub resumed: bool,
}

impl ShardPreview {
    /// `shard 2/4 (…): cut by expected time from …, this shard ~3m 10s; the 4 shards 3m 10s, …`.
    pub fn line(&self) -> String {
        let mut line = format!(
            "shard {}/{} ({})",
            self.index,
            self.count,
            crate::text::printable(&self.source)
        );
        if self.resumed {
            line.push_str(": cut as the run being resumed was");
            return line;
        }
        if self.expected_ms.is_empty() {
            line.push_str(": cut by count, round-robin (no earlier timings");
            if let Some(t) = &self.timings {
                line.push_str(&format!(" in {}", crate::text::printable(t)));
            }
            line.push(')');
            return line;
        }
        let mine = self
            .expected_ms
            .get(self.index as usize - 1)
            .copied()
            .unwrap_or(0);
        let shown: Vec<String> = self
            .expected_ms
            .iter()
            .take(12)
            .map(|ms| span(*ms))
            .collect();
        let more = if self.expected_ms.len() > 12 {
            ", …"
        } else {
            ""
        };
        line.push_str(&format!(
            ": cut by expected time from {} ({} of {} case-runs timed), this shard ~{}; the {} shards {}{more}",
            crate::text::printable(self.timings.as_deref().unwrap_or("")),
            self.timed,
            self.total,
            span(mine),
            self.count,
            shown.join(", "),
        ));
        line
    }
}

/// `850ms`, `4.2s`, `42s`, `3m 10s`, `1h 5m`.
fn span(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0 => format!("{ms}ms"),
        1..10 => format!("{:.1}s", ms as f64 / 1000.0),
        10..60 => format!("{s}s"),
        60..3600 => format!("{}m {}s", s / 60, s % 60),
        _ => format!("{}h {}m", s / 3600, (s % 3600) / 60),
    }
}

/// One planned case-run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PlannedRow {
    pub suite: String,
    pub case: String,
    pub kind: crate::record::case_run::Kind,
    pub variant: Variant,
    pub run: u32,
    pub harness: String,
    /// `None`: the harness's own default model.
    pub model: Option<String>,
    pub timeout_secs: u64,
    pub target: Option<String>,
    /// Starts an agent (or a test command); a judged trigger eval only asks the judge.
    pub starts_agent: bool,
    pub judged: bool,
    /// Why the run will skip it without starting anything (scripts without `--trust`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// Whether the case-run starts an agent (or a test command): a judged trigger eval only asks
/// the judge, and scripts without `--trust` start nothing (as `execute::begin` decides).
pub(super) fn starts_agent(p: &Planned<'_>, opts: &RunOptions) -> bool {
    let judge_mode = p.trigger.is_some() && opts.settings.trigger_mode == TriggerMode::Judge;
    !judge_mode && !untrusted(p, opts)
}

/// A case with setup or teardown scripts, without `--trust`.
fn untrusted(p: &Planned<'_>, opts: &RunOptions) -> bool {
    p.case.has_scripts() && !opts.settings.trust
}

/// Why a case with setup or teardown scripts is skipped without `--trust`.
pub const UNTRUSTED_SCRIPTS: &str = "the case has setup/teardown scripts; pass --trust to run them";

impl Preview {
    /// One line: case-runs by kind, and how many agent runs and judge calls they take.
    /// `reused` case-runs (cache, `--resume`) start nothing: the `reused_agents` of them that
    /// would have started an agent are not counted as agent runs.
    pub fn line(&self, reused: usize, reused_agents: usize) -> String {
        use crate::record::case_run::Kind;
        let count =
            |f: &dyn Fn(&PlannedRow) -> bool| self.case_runs.iter().filter(|r| f(r)).count();
        let cases = count(&|r| r.kind == Kind::Case && r.variant == Variant::Skill);
        let baselines = count(&|r| r.variant == Variant::Baseline);
        let variants = count(&|r| r.variant == Variant::Variant);
        let triggers = count(&|r| r.kind == Kind::Trigger && r.starts_agent);
        let judged_triggers =
            count(&|r| r.kind == Kind::Trigger && !r.starts_agent && r.skipped.is_none());
        let agent_runs = count(&|r| r.starts_agent).saturating_sub(reused_agents);
        let skipped = count(&|r| r.skipped.is_some());
        let mut parts = vec![format!("{cases} case run{}", plural(cases))];
        if baselines > 0 {
            parts.push(format!("{baselines} baseline run{}", plural(baselines)));
        }
        if variants > 0 {
            parts.push(format!("{variants} variant run{}", plural(variants)));
        }
        if triggers > 0 {
            parts.push(format!("{triggers} trigger run{}", plural(triggers)));
        }
        if judged_triggers > 0 {
            parts.push(format!(
                "{judged_triggers} judged trigger quer{}",
                if judged_triggers == 1 { "y" } else { "ies" }
            ));
        }
        let mut line = format!(
            "plan: {} case-run{} ({}): {agent_runs} agent run{}",
            self.case_runs.len(),
            plural(self.case_runs.len()),
            parts.join(", "),
            plural(agent_runs)
        );
        if skipped > 0 {
            line.push_str(&format!(
                ", {skipped} skipped (setup/teardown scripts need --trust)"
            ));
        }
        if reused > 0 {
            line.push_str(&format!(", {reused} already done (cache or --resume)"));
        }
        line
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod summary_tests {
    use super::*;
    use crate::record::case_run::Kind;

    fn row(kind: Kind, variant: Variant, starts_agent: bool) -> PlannedRow {
        PlannedRow {
            suite: "s".into(),
            case: "c".into(),
            kind,
            variant,
            run: 1,
            harness: "claude-code".into(),
            model: None,
            timeout_secs: 300,
            target: None,
            starts_agent,
            judged: false,
            skipped: None,
        }
    }

    #[test]
    fn the_line_counts_agent_runs_by_kind() {
        let mut s = Preview::default();
        for _ in 0..5 {
            s.case_runs.push(row(Kind::Case, Variant::Skill, true));
        }
        s.case_runs.push(row(Kind::Case, Variant::Baseline, true));
        for _ in 0..6 {
            s.case_runs.push(row(Kind::Trigger, Variant::Skill, true));
        }
        assert_eq!(
            s.line(2, 2),
            "plan: 12 case-runs (5 case runs, 1 baseline run, 6 trigger runs): 10 agent runs, 2 already done (cache or --resume)"
        );
        let judged = Preview {
            case_runs: vec![row(Kind::Trigger, Variant::Skill, false)],
            ..Preview::default()
        };
        assert_eq!(
            judged.line(0, 0),
            "plan: 1 case-run (0 case runs, 1 judged trigger query): 0 agent runs"
        );
    }

    #[test]
    fn the_line_counts_case_runs_skipped_for_want_of_trust() {
        let mut untrusted = row(Kind::Case, Variant::Skill, false);
        untrusted.skipped = Some(UNTRUSTED_SCRIPTS.into());
        let s = Preview {
            case_runs: vec![row(Kind::Case, Variant::Skill, true), untrusted],
            ..Preview::default()
        };
        assert_eq!(
            s.line(0, 0),
            "plan: 2 case-runs (2 case runs): 1 agent run, 1 skipped (setup/teardown scripts need --trust)"
        );
    }
}

/// What a run will do, decided before anything starts: every case-run, the harnesses and
/// judges they need, and what is missing on this machine.
pub(super) struct Plan<'a> {
    pub case_runs: Vec<Planned<'a>>,
    /// Each distinct harness (by everything that shapes its command line), once.
    pub harnesses: Vec<(String, Box<dyn Harness>)>,
    pub judges: Vec<(String, JudgeSlot)>,
    pub unavailable: Vec<(String, Unavailable)>,
    /// `--shard`: the slice this run takes.
    pub shard: Option<ShardPlan<'a>>,
}

/// Plans every selected case of `suites` (their trigger evals as `trigger_cases`, one list per
/// suite): harness, model, timeout, judge, runs and variants, by the precedence of
/// docs/running.md. Harnesses are checked once each; what cannot run is listed, not fatal here.
pub(super) fn plan<'a>(
    suites: &'a [Suite],
    setup: &'a super::setup::Setup,
    opts: &RunOptions,
    host: &HostEnv,
) -> Plan<'a> {
    let (trigger_cases, configs) = (&setup.trigger_cases, &setup.configs);
    let mut harnesses: Vec<(String, Box<dyn Harness>)> = Vec::new();
    let mut planned: Vec<Planned<'a>> = Vec::new();
    let mut unavailable: Vec<(String, Unavailable)> = Vec::new();
    let mut judges: Vec<(String, JudgeSlot)> = Vec::new();
    for (si, s) in suites.iter().enumerate() {
        let config = &configs[&s.project_root];
        let name = harness_name(opts, s, config);
        let settings = HarnessSettings {
            permission_mode: config.harness.claude_code.permission_mode.clone(),
            claude_bin: std::env::var("ASSAY_CLAUDE_BIN")
                .ok()
                .filter(|v| !v.is_empty())
                .or_else(|| config.harness.claude_code.bin.clone()),
            codex_bin: std::env::var("ASSAY_CODEX_BIN")
                .ok()
                .filter(|v| !v.is_empty())
                .or_else(|| config.harness.codex.bin.clone()),
            codex_sandbox: config.harness.codex.sandbox.clone(),
            command: if opts.command.is_empty() {
                config.harness.command.command.clone()
            } else {
                opts.command.clone()
            },
            acp_command: if opts.command.is_empty() {
                config.harness.acp.command.clone()
            } else {
                opts.command.clone()
            },
        };
        let mut work: Vec<(&Case, Option<&TriggerCase>)> = Vec::new();
        if opts.settings.mode.artifacts() {
            work.extend(s.cases.iter().map(|c| (c, None)));
        }
        if opts.settings.mode.triggers() {
            work.extend(
                trigger_cases[si]
                    .iter()
                    .zip(&s.triggers)
                    .map(|(c, t)| (c, Some(t))),
            );
        }
        for (case, trigger) in work {
            if !matches_filter(&opts.settings.filter, &s.id, &case.id) {
                continue;
            }
            if opts.settings.target.is_some() && case.target != opts.settings.target {
                continue;
            }
            let judge_mode = trigger.is_some() && opts.settings.trigger_mode == TriggerMode::Judge;
            let (key, h): (String, Box<dyn Harness>) = match &case.command {
                Some(cmd) => (
                    format!("command:{}", cmd.argv.join("\u{0}")),
                    Box::new(CommandHarness::with_argv(cmd.argv.clone())),
                ),
                None => match adapter_harness(&name, opts, s)
                    .or_else(|| harness::builtin(&name, &settings))
                    .or_else(|| opts.plugins.harness(&name, &settings))
                {
                    // Everything that shapes the agent's command line tells harnesses apart
                    // (and goes into the cache key).
                    Some(h) => (
                        format!(
                            "{name}:{}\u{1}{}\u{1}{:?}\u{1}{}",
                            settings.command.join("\u{0}"),
                            settings.acp_command.join("\u{0}"),
                            (
                                &settings.permission_mode,
                                &settings.claude_bin,
                                &settings.codex_bin,
                                &settings.codex_sandbox,
                            ),
                            adapter_key(&name, opts, s),
                        ),
                        h,
                    ),
                    None => {
                        let mut names: Vec<String> =
                            harness::builtin_names().map(str::to_string).collect();
                        names.extend(opts.plugins.providers.iter().flat_map(|p| {
                            p.harnesses()
                                .iter()
                                .map(|h| h.name.clone())
                                .collect::<Vec<_>>()
                        }));
                        let fix = format!("use one of: {}", names.join(", "));
                        if !unavailable.iter().any(|(n, _)| *n == name) {
                            unavailable.push((
                                name.clone(),
                                Unavailable {
                                    message: format!("unknown harness `{name}`"),
                                    fix,
                                },
                            ));
                        }
                        continue;
                    }
                },
            };
            let idx = match harnesses.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    // A judged trigger eval starts no agent: its harness need not be here.
                    if !judge_mode
                        && let Err(u) = h.preflight(host)
                        && !unavailable
                            .iter()
                            .any(|(n, e)| *n == h.name() && e.message == u.message)
                    {
                        unavailable.push((h.name().to_string(), u));
                    }
                    harnesses.push((key, h));
                    harnesses.len() - 1
                }
            };
            // The case's own timeout is the most specific: `--timeout` sets the default
            // for cases that have none (BMAD's rule), over the suite's and assay.toml's.
            let timeout = case
                .timeout_secs
                .or(opts.settings.timeout)
                .or(s.defaults.timeout_secs)
                .or(config.run.timeout)
                .or(s.policies.default_timeout_secs)
                .unwrap_or(DEFAULT_TIMEOUT_SECS);
            let needs_judge = !case.judge.is_empty() || judge_mode;
            let judge = needs_judge.then(|| {
                judge_for(
                    &mut judges,
                    crate::judge::Flags {
                        judge: opts.judge.as_deref(),
                        transport: opts.transport.as_deref(),
                    },
                    s,
                    host,
                    opts.judge_jobs,
                )
            });
            let runs = match trigger {
                Some(_) if judge_mode => 1,
                Some(_) => opts.settings.trigger_runs.max(1),
                None => opts
                    .runs_for
                    .get(&(s.id.clone(), case.id.clone()))
                    .copied()
                    .or(opts.settings.runs.and_then(super::options::Runs::fixed))
                    .or(s.defaults.variance.map(|v| v.runs))
                    .unwrap_or(1)
                    .max(1),
            };
            let variants: Vec<Variant> = match &opts.baseline {
                Some(b) if trigger.is_none() && case.command.is_none() => {
                    vec![Variant::Skill, b.variant()]
                }
                _ => vec![Variant::Skill],
            };
            let model = opts
                .settings
                .model
                .clone()
                .or_else(|| s.defaults.model.clone())
                .or_else(|| config.run.model.clone());
            if !judge_mode {
                need_model(&mut unavailable, harnesses[idx].1.as_ref(), &model, host);
            }
            for variant in variants {
                for run in 1..=runs {
                    planned.push(Planned {
                        judge: judge.clone(),
                        suite: s,
                        case,
                        trigger,
                        variant,
                        run,
                        harness: idx,
                        model: model.clone(),
                        timeout: Duration::from_secs(timeout),
                        folder: PathBuf::new(),
                    });
                }
            }
        }
    }
    assign_folders(&mut planned);
    let shard = setup.shard.as_ref().map(|c| slice(&mut planned, c));
    Plan {
        case_runs: planned,
        harnesses,
        judges,
        unavailable,
        shard,
    }
}

/// The slice of a run cut into shards: what this shard runs, and what the others do.
pub(super) struct ShardPlan<'a> {
    pub chosen: &'a shard::Chosen,
    pub cut: shard::Cut,
    /// The case-runs the other shards run.
    pub elsewhere: Vec<record::run::PlannedCaseRun>,
}

/// Cuts the whole plan into shards (as `--resume` of a shard first cut it, else by the
/// expected times) and keeps this shard's case-runs.
/// A harness that needs a model named and is given none cannot run (said once).
fn need_model(
    unavailable: &mut Vec<(String, Unavailable)>,
    h: &dyn Harness,
    model: &Option<String>,
    host: &crate::host::HostEnv,
) {
    if let Some(u) = h.model_missing(model.as_deref(), host)
        && !unavailable.iter().any(|(_, e)| e.message == u.message)
    {
        unavailable.push((h.name().to_string(), u));
    }
}

fn slice<'a>(planned: &mut Vec<Planned<'_>>, chosen: &'a shard::Chosen) -> ShardPlan<'a> {
    let items: Vec<(String, Option<f64>)> = planned
        .iter()
        .map(|p| {
            let ms = chosen
                .timings
                .expected_ms(&p.suite.id, &p.case.id, p.kind(), p.variant);
            (p.case_key(), ms)
        })
        .collect();
    let mut cut = shard::cut(&items, chosen.shard.count);
    if let Some(recorded) = &chosen.recorded {
        for (case, k) in cut.shard_of.iter_mut() {
            if let Some(r) = recorded.cases.get(case) {
                *k = *r;
            }
        }
        cut.expected_ms = recorded.expected_ms.clone();
    }
    let mine = |p: &Planned<'_>| cut.shard_of.get(&p.case_key()) == Some(&chosen.shard.index);
    let elsewhere = planned
        .iter()
        .filter(|p| !mine(p))
        .map(Planned::record)
        .collect();
    planned.retain(|p| mine(p));
    ShardPlan {
        chosen,
        cut,
        elsewhere,
    }
}

impl ShardPlan<'_> {
    /// What run.json records of the shard (a resumed shard: how it was first cut).
    pub(super) fn record(&self) -> record::run::ShardRecord {
        let c = self.chosen;
        let timings = match &c.recorded {
            Some(r) => r.timings.clone(),
            None => c.timings.source.clone(),
        };
        record::run::ShardRecord {
            index: c.shard.index,
            count: c.shard.count,
            source: c.source.clone(),
            by: if self.cut.by_time() { "time" } else { "count" }.into(),
            timings,
            expected_ms: self.cut.expected_ms.clone(),
            cases: self.cut.shard_of.clone(),
            elsewhere: self.elsewhere.clone(),
            suites: c.suites.clone(),
        }
    }

    /// The line the plan prints of the shard.
    pub(super) fn preview(&self) -> ShardPreview {
        let c = self.chosen;
        ShardPreview {
            index: c.shard.index,
            count: c.shard.count,
            source: c.source.clone(),
            timings: c.timings.source.clone(),
            expected_ms: self.cut.expected_ms.clone(),
            timed: self.cut.timed,
            total: self.cut.total,
            resumed: c.recorded.is_some(),
        }
    }
}

/// The plan as printed before anything starts, and all `--dry-run` shows.
pub(super) fn preview(
    planned: &[Planned<'_>],
    harnesses: &[(String, Box<dyn Harness>)],
    unavailable: &[(String, Unavailable)],
    opts: &RunOptions,
) -> Preview {
    Preview {
        case_runs: planned
            .iter()
            .map(|p| {
                let skipped = untrusted(p, opts).then(|| UNTRUSTED_SCRIPTS.to_string());
                PlannedRow {
                    suite: p.suite.id.clone(),
                    case: p.case.id.clone(),
                    kind: if p.trigger.is_some() {
                        record::case_run::Kind::Trigger
                    } else {
                        record::case_run::Kind::Case
                    },
                    variant: p.variant,
                    run: p.run,
                    harness: harnesses[p.harness].1.name().to_string(),
                    model: p.model.clone(),
                    timeout_secs: p.timeout.as_secs(),
                    target: p.case.target.as_ref().map(ToString::to_string),
                    starts_agent: starts_agent(p, opts),
                    judged: p.judge.is_some() && skipped.is_none(),
                    skipped,
                }
            })
            .collect(),
        unavailable: unavailable
            .iter()
            .map(|(name, u)| format!("{name}: {}", u.message))
            .collect(),
        shard: None,
    }
}

/// One planned case-run.
pub(super) struct Planned<'a> {
    pub(super) suite: &'a Suite,
    pub(super) case: &'a Case,
    pub(super) trigger: Option<&'a TriggerCase>,
    pub(super) variant: Variant,
    pub(super) run: u32,
    pub(super) judge: Option<JudgeSlot>,
    pub(super) harness: usize,
    pub(super) model: Option<String>,
    pub(super) timeout: Duration,
    /// The case's folder in the run folder, `<suite>/<case>` (see [`record::folder_names`]).
    pub(super) folder: PathBuf,
}

impl Planned<'_> {
    /// The case-run as run.json's `planned` lists it.
    pub(super) fn record(&self) -> record::run::PlannedCaseRun {
        record::run::PlannedCaseRun {
            suite: self.suite.id.clone(),
            case: self.case.id.clone(),
            run: self.run,
            variant: self.variant,
            kind: self.kind(),
            dir: self.folder.join(self.variant.folder(self.run)),
        }
    }

    /// A trigger query's case-run, or an artifact case's.
    pub(super) fn kind(&self) -> record::case_run::Kind {
        if self.trigger.is_some() {
            record::case_run::Kind::Trigger
        } else {
            record::case_run::Kind::Case
        }
    }

    /// The case's id within the run, `suite/case` (shards keep a case's runs together).
    pub(super) fn case_key(&self) -> String {
        format!("{}/{}", self.suite.id, self.case.id)
    }

    pub(super) fn dir(&self, run_dir: &std::path::Path) -> PathBuf {
        run_dir
            .join(&self.folder)
            .join(self.variant.folder(self.run))
    }
}

/// Gives every planned case-run its folder: suites apart within the run, cases apart within
/// their suite, whatever their ids slug to.
pub(super) fn assign_folders(planned: &mut [Planned<'_>]) {
    use std::collections::{BTreeMap, BTreeSet};
    let suites: BTreeSet<&str> = planned.iter().map(|p| p.suite.id.as_str()).collect();
    let suites: Vec<&str> = suites.into_iter().collect();
    let suite_names: BTreeMap<&str, String> = suites
        .iter()
        .copied()
        .zip(record::folder_names(&suites))
        .collect();
    let mut cases: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in planned.iter() {
        cases
            .entry(p.suite.id.as_str())
            .or_default()
            .insert(p.case.id.as_str());
    }
    let mut names: BTreeMap<(&str, &str), PathBuf> = BTreeMap::new();
    for (suite, ids) in &cases {
        let ids: Vec<&str> = ids.iter().copied().collect();
        for (id, name) in ids.iter().zip(record::folder_names(&ids)) {
            names.insert(
                (suite, id),
                std::path::Path::new(&suite_names[suite]).join(name),
            );
        }
    }
    for p in planned.iter_mut() {
        p.folder = names[&(p.suite.id.as_str(), p.case.id.as_str())].clone();
    }
}

/// The harness named for a suite, by precedence: flag > `ASSAY_HARNESS` > `CLAUDITOR_HARNESS`
/// (clauditor suites) > suite > assay.toml > the format's default. `auto` at any of them names
/// no harness (the next one decides), as in clauditor; a clauditor suite's default is `auto`:
/// `claude-code` when the `claude` binary is on PATH, else `codex` when `codex` is, else
/// `claude-code` (which then says how to install it).
/// The `adapter` harness: `--adapter`'s, else the suite's own `adapter.json`.
fn adapter_harness(name: &str, opts: &RunOptions, s: &Suite) -> Option<Box<dyn Harness>> {
    if name != crate::spec::model::ADAPTER_HARNESS {
        return None;
    }
    let spec = opts
        .adapter
        .clone()
        .or_else(|| s.defaults.adapter.clone())?;
    Some(Box::new(harness::adapter::Adapter::new(
        spec,
        opts.settings.trust,
    )))
}

/// What tells adapters apart: the file and everything in it that shapes the command.
fn adapter_key(name: &str, opts: &RunOptions, s: &Suite) -> String {
    if name != crate::spec::model::ADAPTER_HARNESS {
        return String::new();
    }
    opts.adapter
        .as_ref()
        .or(s.defaults.adapter.as_ref())
        .map(|a| format!("{a:?}"))
        .unwrap_or_default()
}

pub(super) fn harness_name(opts: &RunOptions, suite: &Suite, config: &Config) -> String {
    let env = |k: &str| {
        std::env::var(k)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    [
        opts.settings.harness.clone(),
        env("ASSAY_HARNESS"),
        opts.adapter
            .as_ref()
            .map(|_| crate::spec::model::ADAPTER_HARNESS.to_string()),
        suite.policies.vars.harness.and_then(env),
        suite.defaults.harness.clone(),
        config.run.harness.clone(),
    ]
    .into_iter()
    .flatten()
    .find(|h| h != "auto")
    .unwrap_or_else(|| {
        if suite.policies.auto_harness {
            auto_harness(&HostEnv::from_process(), config)
        } else {
            DEFAULT_HARNESS.into()
        }
    })
}

/// clauditor's `harness: auto`: Claude Code when its CLI is installed, else Codex when its is.
pub(super) fn auto_harness(host: &HostEnv, config: &Config) -> String {
    let bin = |var: &str, configured: &Option<String>, default: &str| {
        host.var(var)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .or_else(|| configured.clone())
            .unwrap_or_else(|| default.to_string())
    };
    let claude = bin(
        "ASSAY_CLAUDE_BIN",
        &config.harness.claude_code.bin,
        "claude",
    );
    let codex = bin("ASSAY_CODEX_BIN", &config.harness.codex.bin, "codex");
    if host.which(&claude).is_some() {
        "claude-code".into()
    } else if host.which(&codex).is_some() {
        "codex".into()
    } else {
        DEFAULT_HARNESS.into()
    }
}

/// Whether `--filter` takes the case `case` of the suite `suite` (`<format>:<name>`): text
/// contained in `suite/case`, or a glob matching `suite/case` with or without the format
/// (`'tiny/00*'` and `'skillet:tiny/00*'` alike).
pub(super) fn matches_filter(filter: &Option<String>, suite: &str, case: &str) -> bool {
    let Some(f) = filter else { return true };
    let id = format!("{suite}/{case}");
    if f.contains(['*', '?', '[']) {
        let Ok(glob) = globset::Glob::new(f) else {
            return false;
        };
        let glob = glob.compile_matcher();
        let bare = suite
            .split_once(':')
            .map(|(_, name)| format!("{name}/{case}"));
        glob.is_match(&id) || bare.is_some_and(|b| glob.is_match(b))
    } else {
        id.contains(f.as_str())
    }
}

#[cfg(test)]
mod filter_tests {
    use super::matches_filter;

    #[test]
    fn a_glob_matches_suite_slash_case_with_or_without_the_format() {
        let f = |s: &str| Some(s.to_string());
        assert!(matches_filter(&f("tiny/00*"), "skillet:tiny", "001"));
        assert!(matches_filter(
            &f("skillet:tiny/00*"),
            "skillet:tiny",
            "001"
        ));
        assert!(matches_filter(&f("*tiny/00*"), "skillet:tiny", "001"));
        assert!(!matches_filter(&f("tiny/01*"), "skillet:tiny", "001"));
        assert!(!matches_filter(&f("other/00*"), "skillet:tiny", "001"));
        assert!(matches_filter(&f("tiny/0"), "skillet:tiny", "001"));
        assert!(matches_filter(&None, "skillet:tiny", "001"));
    }
}
