//! One case-run: stage, setup, the turns through the harness, collect, teardown, record.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::grade::{self, GradeInput, JudgeSlot};
use super::plan::{TriggerMode, Variant};
use crate::assert::check::Checks;
use crate::assert::verdict::Grade;
use crate::assert::view::CaseRunView;
use crate::harness::{AgentError, ErrorCategory, Event, Harness, Invocation, TurnSummary, Usage};
use crate::process::{self, Exited, Spawn};
use crate::record::{self, Lines};
use crate::spec::{Case, OutputSpec, Skill, StdinSource, Suite, TriggerCase};
use crate::workspace::layers::Tree;
use crate::workspace::snapshot::{Change, ChangeKind, Snapshot};
use crate::workspace::{self, StageOptions};

/// Setup and teardown scripts get this long each (as in Skillet).
pub const SCRIPT_TIMEOUT: Duration = Duration::from_secs(30);
/// Artifacts copied into the run folder, at most.
const MAX_ARTIFACT_BYTES: u64 = 16 << 20;
const MAX_ARTIFACTS: usize = 500;

pub use crate::record::case_run::{CaseRunRecord as CaseRunResult, Kind, Status};

pub use crate::record::case_run::FailedToolCall;

/// The tool calls among `events` whose result was an error (at most 20, each output cut to
/// 500 characters).
fn failed_tool_calls(events: &[Event]) -> Vec<FailedToolCall> {
    let mut names: BTreeMap<&str, &str> = BTreeMap::new();
    let mut out = Vec::new();
    for e in events {
        match e {
            Event::ToolCall { id, name, .. } => {
                names.insert(id, name);
            }
            Event::ToolResult {
                id,
                output,
                is_error: true,
            } if out.len() < 20 => out.push(FailedToolCall {
                name: names.get(id.as_str()).unwrap_or(&"?").to_string(),
                output: output.chars().take(500).collect(),
            }),
            _ => {}
        }
    }
    out
}

pub use crate::record::case_run::TriggerRecord;

/// What a trigger case-run needs besides the synthetic case.
#[derive(Debug, Clone)]
pub struct TriggerPlan<'a> {
    pub case: &'a TriggerCase,
    pub mode: TriggerMode,
    pub threshold: f64,
}

/// What the runner decided for this case-run.
pub struct CaseRunPlan<'a> {
    pub suite: &'a Suite,
    pub case: &'a Case,
    pub run: u32,
    pub variant: Variant,
    /// Set for a trigger eval.
    pub trigger: Option<TriggerPlan<'a>>,
    /// The skill to install instead of the suite's (`--baseline-skill`).
    pub skill: Option<Skill>,
    /// Interrupt (Ctrl-C): stop the agent, record the case-run as interrupted.
    pub cancel: Option<tokio::sync::watch::Receiver<bool>>,
    pub harness: &'a dyn Harness,
    pub model: Option<String>,
    pub timeout: Duration,
    pub trust: bool,
    pub keep_workspace: bool,
    pub stage: StageOptions,
    /// How the case-run's processes are contained.
    pub sandbox: crate::sandbox::Setting,
    pub dir: PathBuf,
    pub judge: Option<JudgeSlot>,
    pub checks: &'a Checks,
    /// Secrets out of everything recorded (see [`super::redact`]).
    pub redact: &'a super::redact::Redactor,
}

impl CaseRunResult {
    /// How the case-run ended, when not as a completed run: its status and why.
    fn end(&mut self, status: Status, reason: impl Into<String>) {
        self.status = status;
        self.reason = Some(reason.into());
    }

    fn new(plan: &CaseRunPlan<'_>) -> Self {
        CaseRunResult {
            schema: crate::record::case_run::SCHEMA.into(),
            suite: plan.suite.id.clone(),
            suite_source: plan.suite.source.clone(),
            case: plan.case.id.clone(),
            run: plan.run,
            kind: if plan.trigger.is_some() {
                Kind::Trigger
            } else {
                Kind::Case
            },
            variant: plan.variant,
            trigger: plan.trigger.as_ref().map(|t| TriggerRecord {
                query: t.case.query.clone(),
                should_trigger: t.case.should_trigger,
                fired: None,
                mode: t.mode,
                threshold: t.threshold,
                skill: skill_name(plan.suite),
                note: plan
                    .suite
                    .skill
                    .as_ref()
                    .filter(|s| {
                        s.kind == crate::spec::SkillKind::Command && t.mode == TriggerMode::Agent
                    })
                    .map(|s| {
                        format!(
                            "{} is a slash command; it was installed as the skill {}/{}/SKILL.md for this trigger eval",
                            s.path.display(),
                            plan.harness.engines().first().map_or(crate::workspace::CLAUDE_SKILLS, |e| e.skill_root()),
                            s.name
                        )
                    }),
                reason: None,
            }),
            min_stability: plan
                .suite
                .defaults
                .variance
                .and_then(|v| v.min_stability),
            target: plan.case.target.as_ref().map(|t| {
                let kind = match t.kind {
                    crate::spec::TargetKind::Skill => "skill",
                    crate::spec::TargetKind::Hook => "hook",
                    crate::spec::TargetKind::Agent => "agent",
                };
                format!("{kind}:{}", t.name)
            }),
            target_exercised: None,
            harness: plan.harness.name().to_string(),
            model: plan.model.clone(),
            timeout_secs: Some(plan.timeout.as_secs()),
            sandbox: None,
            status: Status::Completed,
            reason: None,
            error: None,
            exit_code: None,
            timed_out: false,
            duration_ms: 0,
            turns: Vec::new(),
            usage: Usage::default(),
            cost_usd: None,
            tool_calls: BTreeMap::new(),
            skills_invoked: Vec::new(),
            failed_tool_calls: Vec::new(),
            artifacts: Vec::new(),
            fixture_changes: Vec::new(),
            skipped_links: Vec::new(),
            output_files: BTreeMap::new(),
            stderr_tail: String::new(),
            teardown_error: None,
            checks: Vec::new(),
            judge: None,
            grade: None,
            workspace: None,
            regraded: None,
            cached: None,
            dir: plan.dir.clone(),
            unrecorded: Vec::new(),
            stdout_bytes: 0,
            output_truncated: false,
        }
    }
}

/// Runs one case-run to its end and records it. Never panics on agent behaviour; every
/// failure is a status with a reason.
pub async fn execute(plan: CaseRunPlan<'_>) -> CaseRunResult {
    let started = Instant::now();
    let mut result = CaseRunResult::new(&plan);
    if let Err(e) = std::fs::create_dir_all(&plan.dir) {
        result
            .unrecorded
            .push(format!("cannot create {}: {e}", plan.dir.display()));
    }

    if (plan.case.setup.is_some() || plan.case.teardown.is_some()) && !plan.trust {
        result.end(
            Status::Skipped,
            "the case has setup/teardown scripts; pass --trust to run them",
        );
        return finish(result, started, &plan);
    }
    let sent = match prompts_for(&plan) {
        Ok(t) => t,
        Err(e) => {
            result.end(Status::Error, e);
            return finish(result, started, &plan);
        }
    };
    result.write(
        &plan.dir.join("prompt.txt"),
        prompt_text(plan.case, &sent).as_bytes(),
    );
    if let Some(t) = plan
        .trigger
        .as_ref()
        .filter(|t| t.mode == TriggerMode::Judge)
    {
        let t = t.clone();
        judge_trigger(&mut result, &plan, &t).await;
        return finish(result, started, &plan);
    }
    if plan.cancel.as_ref().is_some_and(|c| *c.borrow()) {
        return interrupted(result, started, &plan);
    }

    let staged = {
        let mut suite = workspace::SuiteStage::of(plan.suite);
        if plan.skill.is_some() {
            suite.replaces = suite.skill.take();
            suite.skill = plan.skill.clone();
        }
        let (case, opts) = (plan.case.clone(), plan.stage.clone());
        match tokio::task::spawn_blocking(move || workspace::stage(&suite, &case, &opts)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                result.end(Status::Error, format!("staging failed: {e}"));
                return finish(result, started, &plan);
            }
            Err(e) => {
                result.end(Status::Error, format!("staging failed: {e}"));
                return finish(result, started, &plan);
            }
        }
    };

    result.skipped_links = staged.skipped_links.clone();
    // The sandbox: every process of this case-run runs in it.
    let mut env = staged.env.clone();
    let jail = match plan.sandbox.jail(
        &staged.dir,
        &staged.root,
        staged.overlay.as_ref().map(|o| crate::sandbox::Layers {
            lower: vec![o.stage.clone(), o.base.dir.clone()],
            upper: o.upper.clone(),
            work: o.work.clone(),
            dir: o.dir.clone(),
        }),
        &plan.harness.endpoints(&staged.env),
    ) {
        Ok(j) => j,
        Err(e) => {
            result.end(Status::Error, format!("cannot set up the sandbox: {e}"));
            staged.remove();
            return finish(result, started, &plan);
        }
    };
    result.sandbox = Some(match &jail {
        Some(j) => {
            j.rewrite_env(&mut env);
            j.record()
        }
        None => crate::sandbox::Record::unsandboxed(),
    });
    let jail = jail.as_ref();

    if let Some(script) = &plan.case.setup
        && let Err(why) = run_script("setup", script, &staged.root, &env, jail).await
    {
        // Skillet skips a case whose setup fails (the case could not be set up: nothing of
        // the agent's is measured); elsewhere it is an infrastructure error.
        result.status = if plan.suite.format == crate::spec::Format::Skillet {
            Status::Skipped
        } else {
            Status::Error
        };
        result.reason = Some(format!("setup failed: {why}"));
        result.workspace = Some(staged.keep());
        return finish(result, started, &plan);
    }

    let mut agent_env = env.clone();
    if let Err(e) = plan.harness.prepare(&staged.home, &mut agent_env) {
        result.end(
            Status::Error,
            format!("preparing the {} harness failed: {e}", plan.harness.name()),
        );
        result.workspace = Some(staged.keep());
        return finish(result, started, &plan);
    }
    let deadline = Instant::now() + plan.timeout;
    let mut raw = Lines::create(&plan.dir.join("raw.jsonl"))
        .inspect_err(|e| {
            result
                .unrecorded
                .push(format!("cannot create raw.jsonl: {e}"))
        })
        .ok();
    let mut transcript = Lines::create(&plan.dir.join("transcript.jsonl"))
        .inspect_err(|e| {
            result
                .unrecorded
                .push(format!("cannot create transcript.jsonl: {e}"))
        })
        .ok();
    // A prompt expanded to name the skill already carries its body (a command's, filled in;
    // Codex injects a `$skill`'s SKILL.md): clauditor's system prompt derived from that same
    // body is not sent twice.
    let system_prompt = plan
        .suite
        .defaults
        .system_prompt
        .clone()
        .filter(|sp| sent.first() == plan.case.turns.first() || !skill_body_is(&plan, sp));
    let mut stdout_text = String::new();
    let mut last_exit: Option<Exited> = None;
    let mut session: Option<String> = None;
    let mut all_events: Vec<Event> = Vec::new();

    let turns: Vec<String> = if plan.case.command.is_some() {
        vec![String::new()]
    } else {
        sent.clone()
    };
    for (i, prompt) in turns.iter().enumerate() {
        let inv = Invocation {
            prompt,
            turn: i,
            resume: session.as_deref(),
            model: plan.model.as_deref(),
            system_prompt: system_prompt.as_deref(),
            cwd: &staged.cwd,
            home: &staged.home,
            sync_tasks: plan.suite.defaults.sync_tasks,
            allow_hang_heuristic: plan.suite.defaults.allow_hang_heuristic,
            agent: plan
                .case
                .target
                .as_ref()
                .filter(|t| t.kind == crate::spec::TargetKind::Agent && plan.stage.install_skill)
                .map(|t| t.name.as_str()),
            sandboxed: jail.is_some(),
        };
        let line = match plan.harness.command(&inv) {
            Ok(line) => line,
            Err(why) => {
                result.end(Status::Error, why);
                break;
            }
        };
        let mut spawn = Spawn::new(line.program, &staged.cwd);
        spawn.args = line.args;
        spawn.env = agent_env.clone();
        for (k, v) in line.env {
            spawn.env.retain(|(e, _)| *e != k);
            spawn.env.push((k, v));
        }
        spawn.stdin = match plan.case.command.as_ref().and_then(|c| c.stdin.as_ref()) {
            Some(StdinSource::Text(t)) => Some(t.clone().into_bytes()),
            Some(StdinSource::File(f)) => std::fs::read(f).ok(),
            None => line.stdin,
        };
        spawn.timeout = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        spawn.cancel = plan.cancel.clone();
        if let Some(j) = jail {
            j.wrap(&mut spawn);
        }
        let mut parser = plan.harness.parser(&inv);
        let mut events: Vec<Event> = Vec::new();
        let exited = process::run(&spawn, |l| {
            if let Some(r) = raw.as_mut() {
                r.raw(l);
            }
            let evs = parser.line(l);
            if let Some(t) = transcript.as_mut() {
                for e in &evs {
                    t.json(e);
                }
            }
            events.extend(evs);
        })
        .await;
        let exited = match exited {
            Ok(e) => e,
            Err(e) => {
                result.end(Status::Error, e.to_string());
                break;
            }
        };
        if let Some(why) = crate::sandbox::failed_to_start(&exited) {
            result.end(Status::Error, why);
            result.stderr_tail = exited.stderr_tail.clone();
            break;
        }
        let late = parser.after_exit(&exited);
        if let Some(t) = transcript.as_mut() {
            for e in &late {
                t.json(e);
            }
        }
        events.extend(late);
        let summary = parser.finish(&exited);
        for e in &events {
            match e {
                Event::ToolCall { name, .. } => {
                    *result.tool_calls.entry(name.clone()).or_default() += 1
                }
                Event::SkillInvoked { name } if !result.skills_invoked.contains(name) => {
                    result.skills_invoked.push(name.clone())
                }
                Event::Output { text } => {
                    stdout_text.push_str(text);
                    stdout_text.push('\n');
                }
                _ => {}
            }
        }
        all_events.extend(events);
        result.usage.add(&summary.usage);
        if let Some(c) = summary.cost_usd {
            *result.cost_usd.get_or_insert(0.0) += c;
        }
        session = summary.session_id.clone().or(session);
        let error = summary.error.clone();
        result.turns.push(summary);
        result.exit_code = exited.code;
        result.timed_out |= exited.timed_out;
        result.stdout_bytes += exited.stdout_bytes;
        result.output_truncated |= exited.truncated;
        result.stderr_tail = exited.stderr_tail.clone();
        if exited.interrupted {
            staged.remove();
            return interrupted(result, started, &plan);
        }
        last_exit = Some(exited);
        if let Some(mut err) = error {
            if err.category == ErrorCategory::Network
                && let Some(why) = result.sandbox.as_ref().and_then(|s| s.why_unreachable())
            {
                err.message = format!("{} ({why})", err.message);
            }
            result.end(Status::Failed, err.message.clone());
            result.error = Some(err);
            break;
        }
        if result.timed_out {
            break;
        }
    }
    if result.timed_out && result.error.is_none() {
        result.status = Status::Failed;
        result.error = Some(AgentError {
            category: ErrorCategory::Timeout,
            message: format!("stopped after {:?}", plan.timeout),
        });
        result.reason = Some(format!("timed out after {} s", plan.timeout.as_secs()));
    }
    if plan.case.command.is_none()
        && let (Status::Completed, Some(e)) = (result.status, &last_exit)
        && e.code != Some(0)
        && plan.harness.name() != "command"
    {
        result.end(
            Status::Failed,
            format!(
                "the agent {}: {}",
                describe_exit(e.code),
                e.stderr_tail.trim()
            ),
        );
    }

    // Collect.
    result
        .unrecorded
        .extend(raw.iter().chain(transcript.iter()).filter_map(Lines::error));
    result.failed_tool_calls = failed_tool_calls(&all_events);
    if plan.case.command.is_none() {
        result.target_exercised = plan
            .case
            .target
            .as_ref()
            .map(|t| super::target::exercised(t, &all_events));
    }
    // The workspace after the run, its changes and their copies: file-system work, done off
    // the executor so other case-runs' agents keep being read meanwhile.
    let artifacts_dir = plan.dir.join("artifacts");
    let (staged, after, changes, fixture_changes) = match tokio::task::spawn_blocking(move || {
        let after = staged.snapshot_now();
        let changes = staged.before.changes(&after);
        copy_artifacts(&staged.tree, &changes, &artifacts_dir);
        let fixture_changes = staged.fixture_changes();
        (staged, after, changes, fixture_changes)
    })
    .await
    {
        Ok(collected) => collected,
        Err(e) => {
            result.end(
                Status::Error,
                format!("collecting the workspace failed: {e}"),
            );
            return finish(result, started, &plan);
        }
    };
    let cwd_rel = staged
        .cwd
        .strip_prefix(&staged.root)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut outputs: Vec<(String, Option<String>)> = Vec::new();
    let output = collect_output(
        plan.case,
        &staged.tree,
        &cwd_rel,
        &after,
        &result.turns,
        &stdout_text,
        &mut outputs,
    );
    // Recorded: the output files that could be read, with their text.
    result.output_files = outputs
        .iter()
        .filter_map(|(p, t)| Some((p.clone(), t.clone()?)))
        .collect();
    let output = output.unwrap_or_default();
    result.write(&plan.dir.join("output.txt"), output.as_bytes());
    let stderr_tail = result.stderr_tail.clone();
    result.write(&plan.dir.join("stderr.txt"), stderr_tail.as_bytes());
    result.artifacts = changes;
    result.fixture_changes = fixture_changes;
    let files = after.paths();
    if let Err(e) = record::write_json(&plan.dir.join("workspace.json"), &files) {
        result
            .unrecorded
            .push(format!("cannot write workspace.json: {e}"));
    }

    // Grade: the deterministic checks, against the live workspace.
    let view = CaseRunView {
        output,
        final_message: result
            .turns
            .last()
            .and_then(|t| t.final_message.clone())
            .unwrap_or_default(),
        stdout: stdout_text.clone(),
        stderr: result.stderr_tail.clone(),
        exit_code: result.exit_code,
        events: all_events,
        files: files.into_iter().collect(),
        created: created_by(&result.artifacts),
        file_root: Some(staged.tree.clone()),
        cwd: cwd_rel,
        changed_fixtures: result
            .fixture_changes
            .iter()
            .map(|f| f.path.clone())
            .collect(),
        num_turns: result
            .turns
            .iter()
            .filter_map(|t| t.num_turns)
            .reduce(|a, b| a + b),
        cost_usd: result.cost_usd,
        duration_ms: started.elapsed().as_millis() as u64,
        permission_denials: result
            .turns
            .iter()
            .map(|t| t.permission_denials.len())
            .sum(),
    };
    let artifacts = result
        .artifacts
        .iter()
        .filter(|c| c.kind != ChangeKind::Deleted)
        .take(10)
        .filter_map(|c| {
            // Never through a symlink: the agent may point one anywhere.
            let text = staged
                .tree
                .read_to_string(&c.path, MAX_ARTIFACT_BYTES)
                .ok()?;
            Some((c.path.display().to_string(), text))
        })
        .collect();
    if let Some(t) = result.trigger.as_mut() {
        // A trigger eval: did the skill fire, as the agent's own events show?
        let fired = result.skills_invoked.contains(&t.skill);
        // A failed agent cannot tell: such runs are left out of the trigger rate.
        t.fired = (result.status == Status::Completed).then_some(fired);
        result.grade = Some(trigger_grade(t, result.reason.as_deref()));
    } else {
        let graded = grade::grade(
            plan.suite,
            plan.case,
            GradeInput {
                completed: result.status == Status::Completed,
                reason: result.reason.clone(),
                view,
                artifacts,
                outputs,
            },
            plan.checks,
            plan.judge.as_ref(),
        )
        .await;
        result.checks = graded.checks;
        result.judge = graded.judge;
        result.grade = Some(graded.grade);
        if result.output_truncated
            && let Some(g) = result.grade.as_mut()
            && g.verdict == crate::assert::verdict::Verdict::Pass
        {
            // What was cut could have made a check fail (a `not_contains`, a length limit).
            g.verdict = crate::assert::verdict::Verdict::NotGraded;
            g.reasons.insert(
                0,
                format!(
                    "the agent's output was cut ({} bytes written, {} MiB kept at most, and no line over {} MiB): the checks saw only part of it, so it is not graded as a pass",
                    result.stdout_bytes,
                    process::MAX_STDOUT >> 20,
                    process::MAX_LINE >> 20
                ),
            );
        }
    }
    if let Err(e) = grade::write_grading(
        &plan.dir,
        &result.checks,
        result.judge.as_ref(),
        result.grade.as_ref(),
    ) {
        result
            .unrecorded
            .push(format!("cannot write grading.json: {e}"));
    }

    if let Some(script) = &plan.case.teardown
        && let Err(why) = run_script("teardown", script, &staged.root, &env, jail).await
    {
        result.teardown_error = Some(why);
    }

    let keep = plan.keep_workspace || matches!(result.status, Status::Error | Status::Failed);
    if keep {
        result.workspace = Some(staged.keep());
    } else {
        staged.remove();
    }
    finish(result, started, &plan)
}

/// The name the skill goes by in the workspace (and in `Skill` tool calls).
fn skill_name(suite: &Suite) -> String {
    suite
        .skill
        .as_ref()
        .map(|s| s.name.clone())
        .or_else(|| suite.package.as_ref().and_then(|p| p.name.clone()))
        .unwrap_or_default()
}

/// One trigger case-run's verdict: the skill fired exactly when it should have. (The query's
/// verdict is its trigger rate over all its runs against the threshold; see the report.)
fn trigger_grade(t: &TriggerRecord, failure: Option<&str>) -> Grade {
    use crate::assert::verdict::Verdict;
    let (verdict, reasons) = match t.fired {
        Some(f) if f == t.should_trigger => (Verdict::Pass, Vec::new()),
        Some(true) => (
            Verdict::Fail,
            vec![format!("the skill `{}` fired but should not have", t.skill)],
        ),
        Some(false) => (
            Verdict::Fail,
            vec![format!(
                "the skill `{}` did not fire but should have",
                t.skill
            )],
        ),
        None => (
            Verdict::Fail,
            vec![failure.unwrap_or("the agent failed").to_string()],
        ),
    };
    Grade {
        score: if verdict == Verdict::Pass { 1.0 } else { 0.0 },
        verdict,
        checks_passed: 0,
        checks_total: 0,
        reasons,
    }
}

/// `--trigger-mode judge`: no agent runs; the judge guesses from the skill's name and
/// description whether it would fire on the query.
async fn judge_trigger(result: &mut CaseRunResult, plan: &CaseRunPlan<'_>, t: &TriggerPlan<'_>) {
    let Some(slot) = plan.judge.as_ref() else {
        result.end(
            Status::Error,
            "--trigger-mode judge needs a judge (see --judge)",
        );
        return;
    };
    let judge = match slot {
        JudgeSlot::Ready(j, _) => j.clone(),
        JudgeSlot::Unavailable(why) => {
            result.end(
                Status::Error,
                format!("no judge for --trigger-mode judge: {why}"),
            );
            return;
        }
    };
    let skill = plan.skill.as_ref().or(plan.suite.skill.as_ref());
    let name = result
        .trigger
        .as_ref()
        .map(|t| t.skill.clone())
        .unwrap_or_default();
    let description = skill
        .and_then(|s| s.description.clone())
        .unwrap_or_default();
    match crate::judge::trigger::would_fire(&judge, &name, &description, &t.case.query).await {
        Ok(j) => {
            if let Some(rec) = result.trigger.as_mut() {
                rec.fired = Some(j.fires);
                rec.reason = Some(j.reason);
                result.grade = Some(trigger_grade(rec, None));
            }
        }
        Err(e) => {
            result.end(Status::Error, format!("the trigger judge failed: {e}"));
        }
    }
}

/// A case-run stopped by Ctrl-C: recorded as an error, so `--resume` redoes it.
fn interrupted(
    mut result: CaseRunResult,
    started: Instant,
    plan: &CaseRunPlan<'_>,
) -> CaseRunResult {
    result.end(
        Status::Error,
        "interrupted (Ctrl-C, SIGTERM or SIGHUP) before it finished",
    );
    result.grade = None;
    finish(result, started, plan)
}

fn finish(mut result: CaseRunResult, started: Instant, plan: &CaseRunPlan<'_>) -> CaseRunResult {
    result.duration_ms = started.elapsed().as_millis() as u64;
    if let Some(first) = result.unrecorded.first() {
        // Never a pass read from a folder missing part of what happened.
        result.end(
            Status::Error,
            format!("the case-run was not fully recorded: {first}"),
        );
    }
    // Secrets out of the folder, then out of the result (as the terminal shows it, too).
    let swept = if plan.dir.is_dir() {
        plan.redact.folder(&plan.dir)
    } else {
        Ok(())
    };
    result.redact(plan.redact);
    if let Err(e) = swept {
        result.end(
            Status::Error,
            format!("cannot redact secrets in {}: {e}", plan.dir.display()),
        );
    }
    let written = serde_json::to_value(&result)
        .map_err(std::io::Error::other)
        .and_then(|mut v| {
            plan.redact.json(&mut v);
            record::write_json(&plan.dir.join("result.json"), &v)
        });
    if let Err(e) = written {
        // Never a silent loss: the case-run is an infrastructure error (exit 3).
        result.end(
            Status::Error,
            format!("cannot record the result in {}: {e}", plan.dir.display()),
        );
    }
    result
}

impl CaseRunResult {
    /// Writes a file of the case-run's folder, noting a failure.
    fn write(&mut self, path: &Path, bytes: &[u8]) {
        if let Err(e) = std::fs::write(path, bytes) {
            self.unrecorded
                .push(format!("cannot write {}: {e}", path.display()));
        }
    }

    /// Replaces secret values in every text the terminal may show.
    fn redact(&mut self, r: &super::redact::Redactor) {
        if r.is_empty() {
            return;
        }
        for s in [&mut self.reason, &mut self.teardown_error]
            .into_iter()
            .flatten()
        {
            r.string(s);
        }
        r.string(&mut self.stderr_tail);
        for f in &mut self.failed_tool_calls {
            r.string(&mut f.output);
        }
        for t in &mut self.turns {
            if let Some(m) = t.final_message.as_mut() {
                r.string(m);
            }
        }
        for v in self.output_files.values_mut() {
            r.string(v);
        }
        for c in &mut self.checks {
            r.string(&mut c.message);
            for s in [&mut c.evidence, &mut c.error, &mut c.log]
                .into_iter()
                .flatten()
            {
                r.string(s);
            }
        }
        if let Some(g) = self.grade.as_mut() {
            g.reasons.iter_mut().for_each(|s| r.string(s));
        }
    }
}

/// Whether `text` is the body of the skill or command under test (front matter removed).
fn skill_body_is(plan: &CaseRunPlan<'_>, text: &str) -> bool {
    let skill = plan.skill.as_ref().or(plan.suite.skill.as_ref());
    skill
        .map(|s| match s.kind {
            crate::spec::SkillKind::Dir => s.path.join("SKILL.md"),
            crate::spec::SkillKind::Command => s.path.clone(),
        })
        .and_then(|file| std::fs::read_to_string(file).ok())
        .and_then(|t| crate::spec::skill::body(&t))
        .is_some_and(|b| b.trim() == text.trim())
}

/// The turns as the agent is sent them: a `/<skill>` prompt expanded for an agent without
/// slash commands when the skill is installed (see [`super::slash`]).
fn prompts_for(plan: &CaseRunPlan<'_>) -> Result<Vec<String>, String> {
    let skill = plan.skill.as_ref().or(plan.suite.skill.as_ref());
    let Some(skill) = skill.filter(|_| plan.stage.install_skill && !plan.harness.slash_commands())
    else {
        return Ok(plan.case.turns.clone());
    };
    plan.case
        .turns
        .iter()
        .map(|t| {
            super::slash::expand(t, skill, || std::fs::read_to_string(&skill.path)).map_err(|e| {
                format!(
                    "cannot read the command {} to send it to {}: {e}",
                    skill.path.display(),
                    plan.harness.name()
                )
            })
        })
        .collect()
}

/// prompt.txt: what the agent was sent (a command expanded for an agent without slash
/// commands is recorded expanded).
fn prompt_text(case: &Case, sent: &[String]) -> String {
    if let Some(cmd) = &case.command {
        return format!("$ {}\n", cmd.argv.join(" "));
    }
    match sent {
        [one] => format!("{one}\n"),
        turns => turns
            .iter()
            .enumerate()
            .map(|(i, t)| format!("--- turn {} ---\n{t}\n", i + 1))
            .collect(),
    }
}

/// Runs a setup or teardown script with `bash -c` in the workspace, with the private HOME,
/// in the case-run's sandbox.
async fn run_script(
    what: &str,
    script: &str,
    root: &Path,
    env: &[(String, String)],
    jail: Option<&crate::sandbox::Jail>,
) -> Result<(), String> {
    let mut s = Spawn::new("bash", root);
    s.args = vec!["-c".into(), script.into()];
    s.env = env.to_vec();
    s.timeout = SCRIPT_TIMEOUT;
    s.grace = Duration::from_secs(2);
    if let Some(j) = jail {
        j.wrap(&mut s);
    }
    match process::run(&s, |_| {}).await {
        Ok(e) if let Some(why) = jail.and_then(|_| crate::sandbox::failed_to_start(&e)) => Err(why),
        Ok(e) if e.timed_out => Err(format!(
            "the {what} script timed out after {} s",
            SCRIPT_TIMEOUT.as_secs()
        )),
        Ok(e) if e.code == Some(0) => Ok(()),
        Ok(e) => Err(format!(
            "the {what} script {}: {}",
            describe_exit(e.code),
            e.stderr_tail.trim()
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// What counts as the output: the final message, stdout, one file, or files by glob (the
/// first match is the output, as in clauditor). Files are read under the workspace `root`
/// without following any symlink (the agent may point one at any file of the host): an output
/// that is, or lies through, a symlink counts as missing.
fn collect_output(
    case: &Case,
    tree: &Tree,
    cwd_rel: &Path,
    files_now: &Snapshot,
    turns: &[TurnSummary],
    stdout: &str,
    outputs: &mut Vec<(String, Option<String>)>,
) -> Option<String> {
    // As much as captured stdout may hold.
    const MAX_OUTPUT_FILE_BYTES: u64 = 64 << 20;
    // Folded lexically: nothing on the way is a symlink, so this is where it really is.
    let read = |p: &Path| {
        let rel = crate::spec::paths::normalize(&cwd_rel.join(p))?;
        tree.read_to_string(&rel, MAX_OUTPUT_FILE_BYTES).ok()
    };
    match &case.output {
        OutputSpec::FinalMessage => turns.last().and_then(|s| s.final_message.clone()),
        OutputSpec::Stdout => Some(stdout.to_string()),
        OutputSpec::File { path } => {
            let text = read(Path::new(path))?;
            outputs.push((path.clone(), Some(text.clone())));
            Some(text)
        }
        OutputSpec::Files { globs } => {
            let mut set = globset::GlobSetBuilder::new();
            for g in globs {
                if let Ok(g) = globset::Glob::new(g) {
                    set.add(g);
                }
            }
            let set = set.build().ok()?;
            // The regular files under the working folder (never through a symlink).
            let mut found: Vec<PathBuf> = files_now
                .paths()
                .into_iter()
                .filter_map(|p| p.strip_prefix(cwd_rel).ok().map(Path::to_path_buf))
                .filter(|p| set.is_match(p))
                .collect();
            found.sort();
            // Bounded however many files the agent made: at most MAX_OUTPUT_FILES, and
            // MAX_OUTPUT_FILE_BYTES in all; a file past either is recorded unreadable, so the
            // output checks fail on it rather than pass without seeing it.
            let mut budget = MAX_OUTPUT_FILE_BYTES;
            let many = found.len() > MAX_OUTPUT_FILES;
            for p in found.iter().take(MAX_OUTPUT_FILES) {
                let key = p.to_string_lossy().replace('\\', "/");
                let text = crate::spec::paths::normalize(&cwd_rel.join(p))
                    .and_then(|rel| tree.read_to_string(&rel, budget).ok());
                if let Some(t) = &text {
                    budget -= t.len() as u64;
                }
                outputs.push((key, text));
            }
            if many {
                outputs.push((
                    format!(
                        "({} more files past the first {MAX_OUTPUT_FILES})",
                        found.len() - MAX_OUTPUT_FILES
                    ),
                    None,
                ));
            }
            outputs.first().and_then(|(_, t)| t.clone())
        }
    }
}

/// Output files (clauditor `output_files`) read and checked at most.
const MAX_OUTPUT_FILES: usize = 200;

/// Copies created and modified files into the run folder, within a size budget. Nothing is
/// read through a symlink: a link the agent made stays listed in the artifacts, and neither it
/// nor what it points at is copied.
/// The files a run created: absent from the workspace before the agent started.
pub fn created_by(changes: &[Change]) -> std::collections::BTreeSet<PathBuf> {
    changes
        .iter()
        .filter(|c| c.kind == crate::record::changes::ChangeKind::Created)
        .map(|c| c.path.clone())
        .collect()
}

fn copy_artifacts(tree: &Tree, changes: &[Change], to: &Path) {
    let mut budget = MAX_ARTIFACT_BYTES;
    for c in changes
        .iter()
        .filter(|c| c.kind != ChangeKind::Deleted && !c.symlink)
        .take(MAX_ARTIFACTS)
    {
        if c.size > budget {
            continue;
        }
        if let Ok(n) = tree.copy_out_max(&c.path, &to.join(&c.path), budget) {
            budget -= n;
        }
    }
}

/// "exited with code 3", or "was stopped by a signal".
fn describe_exit(code: Option<i32>) -> String {
    match code {
        Some(c) => format!("exited with code {c}"),
        None => "was stopped by a signal".into(),
    }
}
