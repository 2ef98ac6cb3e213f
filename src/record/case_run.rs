//! One case-run's `result.json`: how it ended, what the agent did, and how it was graded.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::agent::{AgentError, TurnSummary, Usage};
use super::changes::{Change, FixtureChange};
use super::grading::{CheckOutcome, Grade, JudgeRecord, Verdict};

/// The version of `result.json` this assay writes. A new version is a new name; readers keep
/// reading the older ones.
pub const SCHEMA: &str = "assay.result/v1";

fn half() -> f64 {
    0.5
}

/// `case` (an artifact eval) or `trigger` (does the skill fire on a query?).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    #[default]
    Case,
    Trigger,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::Case => "case",
            Kind::Trigger => "trigger",
        }
    }
}

/// Where a cached case-run came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cached {
    /// Its cache key.
    pub key: String,
    /// The folder it was first recorded in.
    #[serde(with = "super::path_text")]
    pub from: PathBuf,
}

/// One case-run's outcome in one word: what every report and the exit code count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Passed,
    Failed,
    NotGraded,
    Error,
    Skipped,
    /// Planned, never recorded (the run crashed or stopped first).
    Missing,
}

impl Outcome {
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::NotGraded => "not graded",
            Outcome::Error => "error",
            Outcome::Skipped => "skipped",
            Outcome::Missing => "missing",
        }
    }
}

/// How a case-run ended, before grading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The agent ran to its end without a harness error.
    Completed,
    /// The agent failed (timeout, API error, crash, interactive hang, …).
    Failed,
    /// Something outside the agent failed (staging, a setup script); also a record that
    /// does not say how it ended.
    #[default]
    Error,
    /// Not run, with the reason.
    Skipped,
    /// Planned and never recorded (the run crashed or stopped first): never written by a
    /// run, only read from a run folder's plan ([`super::folder::missing`]).
    Missing,
}

/// The decisive event a trigger run stopped at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoppedAt {
    /// `skill_loaded` (its result said it worked), `skill_called` (its call, which could not
    /// fail: the engine listed the skill when its session started), or `turn_budget` (the
    /// `--trigger-turns` budget spent with no load: not fired).
    pub event: String,
    /// The skill that loaded.
    pub skill: String,
    /// In which turn of the case-run (1-based), after how many tool calls.
    pub turn: usize,
    pub tool_calls: usize,
}

/// Everything a case-run produced, as recorded in `result.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CaseRunRecord {
    /// The record's version ([`SCHEMA`]); empty in folders written before it was recorded.
    pub schema: String,
    pub suite: String,
    /// The file (or folder) the suite was read from, so `assay grade <run-dir>` can reload it.
    #[serde(with = "super::path_text")]
    pub suite_source: PathBuf,
    pub case: String,
    /// What the case's author calls it beside its id (skill-creator's `name`), when named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_name: Option<String>,
    /// Where the case is written (its file and line), for reports that point at it (GitHub
    /// annotations). Absent in runs recorded before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_at: Option<CaseAt>,
    pub run: u32,
    /// `case` (an artifact eval) or `trigger` (does the skill fire on a query?).
    pub kind: Kind,
    /// `skill`, or `baseline` (without the skill, or with `--baseline-skill`).
    pub variant: Arm,
    /// For a trigger eval: the query, what was expected, and whether the skill fired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<TriggerRecord>,
    /// The suite's `variance.min_stability`, which gates the case over its runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_stability: Option<f64>,
    /// The mean score the case must reach over its runs, where its format scores by weight
    /// (Claude Code plugin evals: `--threshold`, else 1.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_threshold: Option<f64>,
    /// The case as its format's own runner describes it (Claude Code's per-case fields), for
    /// the report in that runner's schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_case: Option<serde_json::Value>,
    /// What the case evaluates (UAAPS `target`), as `skill:<name>`, `hook:<event>` or `agent:<name>`.
    pub target: Option<String>,
    /// Whether the transcript shows the target at work: the skill fired, the sub-agent ran,
    /// the hook ran. Absent when the case has no target or no agent ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_exercised: Option<bool>,
    pub harness: String,
    pub model: Option<String>,
    /// The effective timeout of each turn, in seconds (after every default and override).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// How the agent was contained (`kind: none` when unsandboxed); absent when no process ran.
    pub sandbox: Option<SandboxRecord>,
    pub status: Status,
    pub reason: Option<String>,
    pub error: Option<AgentError>,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    pub turns: Vec<TurnSummary>,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    pub tool_calls: BTreeMap<String, usize>,
    /// The same calls by kind, in one vocabulary across engines (`shell`, `read`, `write`,
    /// `edit`, `skill`, …: [`crate::harness::tool_kinds`]); calls of no known kind are left out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_kinds: BTreeMap<String, usize>,
    pub skills_invoked: Vec<String>,
    /// Where a trigger run's agent was stopped: the decisive event, once the verdict was
    /// known (absent for a run that went to its end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<StoppedAt>,
    /// What the MCP stand-ins saw (Claude Code plugin evals' `mocks/`); absent when none ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mocks: Option<super::mocks::MockRecord>,
    /// Skills the agent tried to load and could not (an unknown skill, no skill tool): no use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills_failed: Vec<String>,
    /// Tool calls whose result was an error (a command that failed, a write refused by the
    /// sandbox, …), so a case that "completed" without doing its work shows why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_tool_calls: Vec<FailedToolCall>,
    pub artifacts: Vec<Change>,
    pub fixture_changes: Vec<FixtureChange>,
    /// The project's symlinks not staged because they point outside it.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "super::path_text::many"
    )]
    pub skipped_links: Vec<PathBuf>,
    /// Output files read per the spec (path relative to the agent's folder → content).
    pub output_files: BTreeMap<String, String>,
    pub stderr_tail: String,
    /// Bytes the agent wrote to stdout, all turns together, kept or not.
    pub stdout_bytes: u64,
    /// Some of it was dropped (past the total cap, or a line over the line cap): no check
    /// passes on part of an output, so such a case-run is not graded as a pass.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub output_truncated: bool,
    /// Parts of the workspace that could not be read when it was collected (a folder nested
    /// past the longest path the system takes, one the agent made unreadable): its files are
    /// missing from the artifacts and `workspace.json`, so the case-run is not graded as a pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workspace_unread: Vec<String>,
    /// Where a plain program's stdout is kept when it is the case's output too: `output.txt`,
    /// stored once (no `raw.jsonl`, no output events in `transcript.jsonl`, and the turns'
    /// final message cut at 64 KiB). Absent: `transcript.jsonl` holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout_in: Option<String>,
    pub teardown_error: Option<String>,
    /// Every check's outcome.
    pub checks: Vec<CheckOutcome>,
    /// What the judge said of the case's judge items.
    pub judge: Option<JudgeRecord>,
    /// The verdict from the harness outcome, the checks and the judge (absent when not run).
    pub grade: Option<Grade>,
    /// The kept workspace, when kept.
    #[serde(with = "super::path_text::option")]
    pub workspace: Option<PathBuf>,
    /// When `assay grade` last graded it again (its checks, judge and grade are then the
    /// new grading).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regraded: Option<String>,
    /// Where the case-run was reused from, when it was restored from the cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached: Option<Cached>,
    #[serde(with = "super::path_text")]
    pub dir: PathBuf,
    /// Files of the case-run's folder that could not be written: the case-run is then an
    /// error, never a result read from an incomplete folder.
    #[serde(skip)]
    pub unrecorded: Vec<String>,
}

/// A tool call that failed, with the start of what the tool said.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FailedToolCall {
    pub name: String,
    pub output: String,
}

/// A trigger eval's query and what came of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TriggerRecord {
    pub query: String,
    pub should_trigger: bool,
    /// Whether the skill fired; absent when the run could not tell (the agent failed).
    pub fired: Option<bool>,
    /// How firing was decided: `agent` (the real agent's events) or `judge` (an LLM's guess
    /// from the skill's name and description alone).
    #[serde(default)]
    pub mode: TriggerMode,
    /// The trigger rate a query needs (`--trigger-threshold`).
    #[serde(default = "half")]
    pub threshold: f64,
    #[serde(default)]
    pub skill: String,
    /// Said when the skill is a slash command that was installed as a skill for this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The judge's reason, in judge mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Which skills the query must and must not reach, beside `should_trigger` (the query's
    /// `x-assay-checks`: `must_fire`, `must_not_fire`, `no_other_skill`).
    #[serde(default, skip_serializing_if = "Routing::is_empty")]
    pub routing: Routing,
}

/// A trigger query's routing expectations, over the skills installed side by side.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Routing {
    /// Skills that must fire (at the trigger threshold).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub must_fire: Vec<String>,
    /// Skills that must not fire.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub must_not_fire: Vec<String>,
    /// No skill may fire but the skill under test (when `should_trigger`), the `must_fire`
    /// ones and the `allow`ed ones.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_other_skill: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
}

/// One routing expectation of a query, as reports name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    MustFire(String),
    MustNotFire(String),
    /// No skill outside this list fires.
    NoOtherSkill(Vec<String>),
}

impl Rule {
    /// Whether the rule holds in a run that saw `fired` fire.
    pub fn holds(&self, fired: &[String]) -> bool {
        match self {
            Rule::MustFire(s) => fired.contains(s),
            Rule::MustNotFire(s) => !fired.contains(s),
            Rule::NoOtherSkill(allowed) => fired.iter().all(|f| allowed.contains(f)),
        }
    }

    /// Whether the rule asks for something to happen (a skill firing) rather than not to:
    /// over runs, a `must_fire` holds when the skill's rate reaches the threshold, the others
    /// when the rate of what they forbid stays under it, as `should_trigger` does.
    pub fn demands_firing(&self) -> bool {
        matches!(self, Rule::MustFire(_))
    }

    /// The check type that says it: `must_fire`, `must_not_fire`, `no_other_skill`.
    pub fn kind(&self) -> &'static str {
        match self {
            Rule::MustFire(_) => "must_fire",
            Rule::MustNotFire(_) => "must_not_fire",
            Rule::NoOtherSkill(_) => "no_other_skill",
        }
    }

    /// The skills it names: the one that must (not) fire, or the allowed ones.
    pub fn skills(&self) -> Vec<String> {
        match self {
            Rule::MustFire(s) | Rule::MustNotFire(s) => vec![s.clone()],
            Rule::NoOtherSkill(a) => a.clone(),
        }
    }

    /// "must_fire `b`", "no other skill than `a`, `b`".
    pub fn describe(&self) -> String {
        let list = |v: &[String]| {
            v.iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Rule::MustFire(s) => format!("must_fire `{s}`"),
            Rule::MustNotFire(s) => format!("must_not_fire `{s}`"),
            Rule::NoOtherSkill(a) if a.is_empty() => "no_other_skill (none may fire)".into(),
            Rule::NoOtherSkill(a) => format!("no_other_skill (only {})", list(a)),
        }
    }
}

impl Routing {
    pub fn is_empty(&self) -> bool {
        self.must_fire.is_empty() && self.must_not_fire.is_empty() && !self.no_other_skill
    }

    /// The rules for a query of the skill `skill`: with `no_other_skill`, the skill under test
    /// may fire only when the query should trigger it (otherwise `should_trigger` already
    /// forbids it, and another skill is what the query is for).
    pub fn rules(&self, skill: &str, should_trigger: bool) -> Vec<Rule> {
        let mut out: Vec<Rule> = self.must_fire.iter().cloned().map(Rule::MustFire).collect();
        out.extend(self.must_not_fire.iter().cloned().map(Rule::MustNotFire));
        if self.no_other_skill {
            let mut allowed: Vec<String> = self.must_fire.clone();
            allowed.extend(self.allow.iter().cloned());
            if should_trigger && !skill.is_empty() {
                allowed.push(skill.to_string());
            }
            allowed.sort();
            allowed.dedup();
            out.push(Rule::NoOtherSkill(allowed));
        }
        out
    }
}

/// `--trigger-mode`: how firing is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum TriggerMode {
    /// Run the real agent with the skill installed and watch its events.
    #[default]
    Agent,
    /// Ask the judge, from the skill's name and description alone (cheap, an estimate).
    Judge,
}

/// Which version of the skill a case-run has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arm {
    /// The skill under test.
    #[default]
    Skill,
    /// Without the skill (`--baseline`) or with another version of it (`--baseline-skill`).
    Baseline,
    /// Another version of the skill, compared as the baseline is (`--variant-path`: a stripped
    /// copy, the previous release; BMAD's `variant` mode, skill-creator's `old_skill`).
    Variant,
}

impl Arm {
    pub fn word(self) -> &'static str {
        match self {
            Arm::Skill => "skill",
            Arm::Baseline => "baseline",
            Arm::Variant => "variant",
        }
    }

    /// Whether the case-run is the comparison arm (the baseline or the variant), not the
    /// skill under test: reported beside the skill, never as a failure of it.
    pub fn is_comparison(self) -> bool {
        self != Arm::Skill
    }
}

/// How one case-run was contained, as recorded in its `result.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxRecord {
    /// `bwrap`, `landlock`, `seatbelt`, or `none` (unsandboxed).
    pub kind: String,
    /// `model`, `none` or `host`; absent when unsandboxed (the host's network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// The endpoints the agent could reach, with `model`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<String>,
    /// The case-run's limits (bytes, processes; absent: none), when sandboxed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitsRecord>,
}

/// A case-run's limits as recorded: `null` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitsRecord {
    pub memory: Option<u64>,
    pub pids: Option<u64>,
    pub disk: Option<u64>,
}

impl CaseRunRecord {
    /// The case-run's outcome: its status, then its verdict. A case-run without a verdict
    /// that did not end in error or skip failed; only a `pass` verdict passes.
    pub fn outcome(&self) -> Outcome {
        match (self.status, self.grade.as_ref().map(|g| g.verdict)) {
            (Status::Error, _) => Outcome::Error,
            (Status::Missing, _) => Outcome::Missing,
            (Status::Skipped, _) => Outcome::Skipped,
            (_, Some(Verdict::Pass)) => Outcome::Passed,
            (_, Some(Verdict::NotGraded)) => Outcome::NotGraded,
            _ => Outcome::Failed,
        }
    }

    /// Why it is not a pass (the grade's first reason, else the case-run's), when it is not.
    pub fn why_not_passed(&self) -> Option<&str> {
        if self.outcome() == Outcome::Passed {
            return None;
        }
        self.grade
            .as_ref()
            .and_then(|g| g.reasons.first())
            .or(self.reason.as_ref())
            .map(String::as_str)
    }

    /// Reads a `result.json`. A record of a version this assay does not know is refused
    /// (it was written by a newer assay), never read as something it is not.
    pub fn parse(text: &str) -> Result<CaseRunRecord, String> {
        let r = super::parse_versioned(text, "a case-run record", SCHEMA, |r: &Self| &r.schema)?;
        if r.suite.is_empty() || r.case.is_empty() {
            return Err("not a case-run record: no `suite` and `case`".into());
        }
        Ok(r)
    }
}

/// A place in a suite file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseAt {
    pub file: PathBuf,
    pub line: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::grading::Grade;

    fn graded(verdict: Verdict) -> CaseRunRecord {
        CaseRunRecord {
            schema: SCHEMA.into(),
            suite: "s".into(),
            case: "c".into(),
            run: 2,
            kind: Kind::Trigger,
            variant: Arm::Baseline,
            status: Status::Completed,
            grade: Some(Grade {
                verdict,
                checks_passed: 1,
                checks_total: 2,
                score: 0.5,
                reasons: vec!["a check failed".into()],
            }),
            ..CaseRunRecord::default()
        }
    }

    #[test]
    fn what_is_written_reads_back_the_same() {
        let r = graded(Verdict::Fail);
        let text = serde_json::to_string(&r).unwrap();
        let back = CaseRunRecord::parse(&text).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        assert_eq!(back.outcome(), Outcome::Failed);
        assert_eq!(back.why_not_passed(), Some("a check failed"));
        assert_eq!(
            (back.kind, back.variant, back.run),
            (Kind::Trigger, Arm::Baseline, 2)
        );
    }

    #[test]
    fn only_a_pass_verdict_passes() {
        assert_eq!(graded(Verdict::Pass).outcome(), Outcome::Passed);
        assert_eq!(graded(Verdict::Pass).why_not_passed(), None);
        assert_eq!(graded(Verdict::NotGraded).outcome(), Outcome::NotGraded);
        let mut r = graded(Verdict::Pass);
        r.status = Status::Error;
        assert_eq!(r.outcome(), Outcome::Error, "an error is never a pass");
        r.status = Status::Missing;
        assert_eq!(r.outcome(), Outcome::Missing);
        r.status = Status::Completed;
        r.grade = None;
        assert_eq!(r.outcome(), Outcome::Failed, "no verdict is no pass");
    }

    #[test]
    fn a_record_that_does_not_say_how_it_ended_is_an_error() {
        let r =
            CaseRunRecord::parse(r#"{"suite": "s", "case": "c", "grade": {"verdict": "pass"}}"#)
                .unwrap();
        assert_eq!(r.outcome(), Outcome::Error);
    }

    #[test]
    fn records_written_before_the_schema_still_read() {
        // A result.json as assay 0.1 wrote it: no `schema`, no `cached`, no byte counts.
        let old = r#"{"suite": "s", "suite_source": "evals/evals.json", "case": "c", "run": 1,
            "kind": "case", "variant": "skill", "harness": "claude-code", "status": "completed",
            "duration_ms": 1200, "usage": {"input_tokens": 10, "output_tokens": 5},
            "turns": [{"model": "m", "num_turns": 2}], "artifacts": [{"path": "a.md",
            "kind": "created", "size": 3}], "checks": [], "grade": {"verdict": "pass",
            "checks_passed": 0, "checks_total": 0, "score": 1.0, "reasons": []}}"#;
        let r = CaseRunRecord::parse(old).unwrap();
        assert_eq!(r.outcome(), Outcome::Passed);
        assert_eq!(r.usage.input_tokens, 10);
        assert_eq!(r.turns[0].num_turns, Some(2));
        assert_eq!(r.artifacts[0].path, PathBuf::from("a.md"));
    }

    #[test]
    fn a_record_of_a_newer_assay_is_refused_not_misread() {
        let e = CaseRunRecord::parse(
            r#"{"schema": "assay.result/v9", "suite": "s", "case": "c", "status": "completed",
                "grade": {"verdict": "pass"}}"#,
        )
        .unwrap_err();
        assert!(e.contains("assay.result/v9"), "{e}");
        // Nor is a record whose fields have the wrong shape.
        let e = CaseRunRecord::parse(r#"{"suite": "s", "case": "c", "status": "passed-for-sure"}"#)
            .unwrap_err();
        assert!(e.contains("not a case-run record"), "{e}");
    }
}
