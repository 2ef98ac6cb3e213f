//! One case-run, stage by stage: the prompts, the workspace ([`workspace::stage`]), its
//! containment (sandbox, setup script, the harness's HOME), the turns ([`super::turns`]), what
//! they left ([`super::collect`]), grading ([`super::grade`]), teardown; then the record.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::case_run::{CaseRunPlan, Stop, TriggerPlan};
use super::collect::{self, Collected};
use super::turns::{self, Contained, Driven};
use crate::grade::{self, GradeInput};
use crate::process::{self, Spawn};
use crate::record;
use crate::record::case_run::TriggerMode;
use crate::record::case_run::{FailedToolCall, Kind, TriggerRecord};
use crate::suite::Case;
use crate::workspace::{self, Staged};
use crate::{
    harness::Event,
    record::agent::{AgentError, ErrorCategory, Usage},
};

/// Setup and teardown scripts get this long each (as in Skillet).
pub const SCRIPT_TIMEOUT: Duration = Duration::from_secs(30);

use crate::record::case_run::{CaseRunRecord, Status};
use crate::record::layout;

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

impl CaseRunRecord {
    fn new(plan: &CaseRunPlan<'_>) -> Self {
        CaseRunRecord {
            schema: crate::record::case_run::SCHEMA.into(),
            suite: plan.suite.id.clone(),
            suite_source: plan.suite.source.clone(),
            case: plan.case.id.clone(),
            case_name: plan.case.name.clone(),
            case_at: (plan.case.location.line > 0).then(|| crate::record::case_run::CaseAt {
                file: plan.case.location.file.clone(),
                line: plan.case.location.line,
            }),
            run: plan.run,
            kind: if plan.trigger.is_some() {
                Kind::Trigger
            } else {
                Kind::Case
            },
            variant: plan.variant,
            trigger: trigger_record(plan),
            min_stability: plan.suite.defaults.variance.and_then(|v| v.min_stability),
            pass_threshold: plan
                .suite
                .policies
                .pass_threshold
                .map(|t| plan.case.pass_threshold.or(plan.threshold).unwrap_or(t)),
            native_case: plan.case.native.clone(),
            target: plan.case.target.as_ref().map(ToString::to_string),
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
            tool_kinds: BTreeMap::new(),
            mocks: None,
            stopped_at: None,
            skills_invoked: Vec::new(),
            skills_failed: Vec::new(),
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
            workspace_unread: Vec::new(),
            stdout_in: None,
        }
    }
}

/// A trigger eval's record before the agent runs: the query, what is expected, how it is told.
fn trigger_record(plan: &CaseRunPlan<'_>) -> Option<TriggerRecord> {
    plan.trigger.as_ref().map(|t| TriggerRecord {
        query: t.case.query.clone(),
        should_trigger: t.case.should_trigger,
        fired: None,
        mode: t.mode,
        threshold: t.threshold,
        skill: super::case_run::skill_name(plan.suite),
        note: plan
            .suite
            .skill
            .as_ref()
            .filter(|s| {
                s.kind == crate::suite::SkillKind::Command && t.mode == TriggerMode::Agent
            })
            .map(|s| {
                format!(
                    "{} is a slash command; it was installed as the skill {}/{}/SKILL.md for this trigger eval",
                    s.path.display(),
                    skill_folder(plan.harness),
                    s.name
                )
            }),
        reason: None,
        routing: t.case.routing.clone(),
    })
}

/// Runs one case-run to its end and records it. Never panics on agent behaviour; every
/// failure is a status with a reason.
pub async fn execute(mut plan: CaseRunPlan<'_>) -> CaseRunRecord {
    let started = Instant::now();
    let mut result = CaseRunRecord::new(&plan);
    let mocks = match super::mocks::for_case_run::open(&plan) {
        Ok(m) => m,
        Err(why) => {
            result.end(Status::Error, format!("cannot serve the MCP mocks: {why}"));
            return finish(result, started, &plan);
        }
    };
    let run_cancel = plan.cancel.clone();
    if let Some(m) = &mocks {
        // A mocked call that aborts the run stops the agent, as an interrupt does.
        plan.cancel = Some(m.stop_signal(plan.cancel.take()));
    }
    let interrupted_by_run = || run_cancel.as_ref().is_some_and(|c| *c.borrow());
    match stages(&mut result, &plan, started, mocks.as_ref()).await {
        Ok(()) | Err(Stop::Finish) => finish(result, started, &plan),
        Err(Stop::Interrupted) => match mocks.as_ref().filter(|m| m.aborted()) {
            Some(m) if !interrupted_by_run() => aborted_by_mock(result, started, &plan, m).await,
            _ => interrupted(result, started, &plan),
        },
    }
}

/// The stages, in order: the prompts, the workspace, its containment, the turns, what they
/// left, grading, teardown.
async fn stages(
    r: &mut CaseRunRecord,
    plan: &CaseRunPlan<'_>,
    started: Instant,
    mocks: Option<&super::mocks::Active>,
) -> Result<(), Stop> {
    let sent = begin(r, plan)?;
    if let Some(t) = plan
        .trigger
        .as_ref()
        .filter(|t| t.mode == TriggerMode::Judge)
    {
        judge_trigger(r, plan, t).await;
        return Ok(());
    }
    if plan.cancel.as_ref().is_some_and(|c| *c.borrow()) {
        return Err(Stop::Interrupted);
    }
    let mut staged = stage(r, plan).await?;
    if let Some(m) = mocks {
        let var = crate::workspace::stand_ins::URL_VAR.to_string();
        staged.env.push((var, m.url.clone()));
    }
    r.skipped_links = staged.skipped_links.clone();
    let contained = contain(r, plan, &mut staged).await?;
    let driven = turns::drive(r, plan, &staged, &contained, &sent)
        .await
        .inspect_err(|_| staged.remove())?;
    conclude(r, plan, &driven);
    if let Some(m) = mocks {
        super::mocks::for_case_run::record(r, m).await;
    }
    if plan.case.command.is_none() {
        r.target_exercised = plan
            .case
            .target
            .as_ref()
            .map(|t| super::target::exercised(t, &driven.events));
    }
    r.failed_tool_calls = failed_tool_calls(&driven.events);
    let (staged, collected) = collect::collect(r, plan, staged, driven, started).await?;
    grade_case_run(r, plan, collected).await;
    if let Some(script) = &plan.case.teardown
        && let Err(why) = run_script(
            "teardown",
            script,
            &staged.root,
            &contained.env,
            contained.jail.as_ref(),
        )
        .await
    {
        r.teardown_error = Some(why);
    }
    // A failed or errored case-run's workspace is kept for a look, unless the model API's
    // outage ended it: nothing of the skill's is in it, and an outage hits every case-run.
    let outage = r
        .error
        .as_ref()
        .is_some_and(|e| e.category.is_infrastructure());
    let keep =
        plan.keep_workspace || (matches!(r.status, Status::Error | Status::Failed) && !outage);
    r.workspace = settle(staged, keep).await;
    Ok(())
}

/// Keeps the workspace (its folder, returned) or removes it, off the async runtime: a tree of
/// a hundred thousand files takes seconds to copy or remove, and the other case-runs go on
/// meanwhile.
async fn settle(staged: workspace::Staged, keep: bool) -> Option<PathBuf> {
    let dir = staged.dir.clone();
    let done = tokio::task::spawn_blocking(move || {
        if keep {
            Some(staged.keep())
        } else {
            staged.remove();
            None
        }
    })
    .await;
    match done {
        Ok(kept) => kept,
        // The task panicked: the folder stays where it is, said as kept.
        Err(_) => keep.then_some(dir),
    }
}

/// Before any process: the run folder, `--trust` for scripts, the prompts to send
/// (`prompt.txt`).
fn begin(r: &mut CaseRunRecord, plan: &CaseRunPlan<'_>) -> Result<Vec<String>, Stop> {
    if let Err(e) = std::fs::create_dir_all(&plan.dir) {
        r.unrecorded
            .push(format!("cannot create {}: {e}", plan.dir.display()));
    }
    // The case cannot run as written (a BMAD cases.json fixture that is not there): it fails,
    // as the format's runner fails it, and no agent starts.
    if let Some(why) = &plan.case.unrunnable {
        r.end(Status::Failed, why.clone());
        return Err(Stop::Finish);
    }
    if plan.case.has_scripts() && !plan.trust && !plan.suite.policies.setup_optional {
        r.end(Status::Skipped, super::plan::UNTRUSTED_SCRIPTS);
        return Err(Stop::Finish);
    }
    let sent = prompts_for(plan).map_err(|e| {
        r.end(Status::Error, e);
        Stop::Finish
    })?;
    r.write(
        &plan.dir.join(layout::PROMPT_TXT),
        prompt_text(plan.case, &sent).as_bytes(),
    );
    Ok(sent)
}

/// The workspace: the project's files, fixtures and the skill (or the baseline's), staged off
/// the executor.
async fn stage(r: &mut CaseRunRecord, plan: &CaseRunPlan<'_>) -> Result<Staged, Stop> {
    let mut suite = workspace::SuiteStage::of(plan.suite);
    if plan.skill.is_some() {
        suite.replaces = suite.skill.take();
        suite.skill = plan.skill.clone();
    }
    let (case, opts) = (plan.case.clone(), plan.stage.clone());
    let staged =
        match tokio::task::spawn_blocking(move || workspace::stage(&suite, &case, &opts)).await {
            Ok(Ok(s)) => return Ok(s),
            Ok(Err(e)) => e.to_string(),
            Err(e) => e.to_string(),
        };
    r.end(Status::Error, format!("staging failed: {staged}"));
    Err(Stop::Finish)
}

/// The sandbox every process of the case-run runs in, the setup script, and the harness's
/// preparation of the private HOME.
async fn contain(
    r: &mut CaseRunRecord,
    plan: &CaseRunPlan<'_>,
    staged: &mut Staged,
) -> Result<Contained, Stop> {
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
            r.end(Status::Error, format!("cannot set up the sandbox: {e}"));
            staged.remove();
            return Err(Stop::Finish);
        }
    };
    r.sandbox = Some(match &jail {
        Some(j) => {
            j.rewrite_env(&mut env);
            j.record()
        }
        None => crate::record::case_run::SandboxRecord::unsandboxed(),
    });
    if let Some(script) = plan.case.setup.as_ref().filter(|_| plan.trust)
        && let Err(why) = setup(plan, script, staged, &env, jail.as_ref()).await
    {
        // Skillet skips a case whose setup fails (the case could not be set up: nothing of
        // the agent's is measured); elsewhere it is an infrastructure error.
        let status = if plan.suite.policies.failed_setup_skips {
            Status::Skipped
        } else {
            Status::Error
        };
        r.end(status, format!("setup failed: {why}"));
        r.workspace = Some(staged.keep());
        return Err(Stop::Finish);
    }
    if plan.case.setup.is_some() && plan.trust {
        // What the setup made is where the agent starts, not what it created.
        staged.before = staged.snapshot_now();
    }
    let mut agent_env = env.clone();
    if let Err(e) = plan.harness.prepare(&staged.home, &mut agent_env) {
        r.end(
            Status::Error,
            format!("preparing the {} harness failed: {e}", plan.harness.name()),
        );
        r.workspace = Some(staged.keep());
        return Err(Stop::Finish);
    }
    Ok(Contained {
        env,
        agent_env,
        jail,
    })
}

/// How the turns ended, when no turn said: the timeout, or an agent that exited non-zero.
fn conclude(r: &mut CaseRunRecord, plan: &CaseRunPlan<'_>, driven: &Driven) {
    if r.timed_out && r.error.is_none() {
        r.end(
            Status::Failed,
            format!("timed out after {} s", plan.timeout.as_secs()),
        );
        r.error = Some(AgentError {
            category: ErrorCategory::Timeout,
            message: format!("stopped after {:?}", plan.timeout),
            kind: None,
        });
    }
    if plan.case.command.is_none()
        && let (Status::Completed, Some(e)) = (r.status, &driven.last_exit)
        && e.code != Some(0)
        && plan.harness.name() != "command"
    {
        r.end(
            Status::Failed,
            format!(
                "the agent {}: {}",
                describe_exit(e.code),
                e.stderr_tail.trim()
            ),
        );
    }
}

/// The grade: a trigger eval's (did the skill fire?), or the checks' and the judge's; then
/// `grading.json`.
async fn grade_case_run(r: &mut CaseRunRecord, plan: &CaseRunPlan<'_>, collected: Collected) {
    if r.trigger.is_some() {
        grade::trigger::grade_observed(r);
    } else {
        let (case, unscored) = grade::weighted::for_arm(plan.case, plan.variant, plan.two_arms);
        let graded = grade::grade(
            plan.suite,
            &case,
            GradeInput {
                completed: r.status == Status::Completed,
                reason: r.reason.clone(),
                view: collected.view,
                artifacts: collected.artifacts,
                outputs: collected.outputs,
                output_cut: grade::output_cut(r),
                unscored,
            },
            plan.checks,
            plan.judge.as_ref(),
        )
        .await;
        r.checks = graded.checks;
        r.judge = graded.judge;
        r.grade = Some(graded.grade);
        super::mocks::for_case_run::zero_if_aborted(r);
    }
    if let Err(e) = grade::write_grading(&plan.dir, &r.checks, r.judge.as_ref(), r.grade.as_ref()) {
        r.unrecorded.push(format!("cannot write grading.json: {e}"));
    }
}

/// `--trigger-mode judge`: no agent runs; the judge guesses from the skill's name and
/// description whether it would fire on the query.
async fn judge_trigger(r: &mut CaseRunRecord, plan: &CaseRunPlan<'_>, t: &TriggerPlan<'_>) {
    let skill = plan.skill.as_ref().or(plan.suite.skill.as_ref());
    let description = skill
        .and_then(|s| s.description.clone())
        .unwrap_or_default();
    let judged =
        grade::trigger::grade_judged(r, plan.judge.as_ref(), &description, &t.case.query).await;
    if let Err(why) = judged {
        r.end(Status::Error, why);
    }
}

/// A run a mocked call aborted, its agent stopped: nothing of it is graded, and it fails with
/// a score of 0 (an infrastructure error when the abort is assay's).
async fn aborted_by_mock(
    mut result: CaseRunRecord,
    started: Instant,
    plan: &CaseRunPlan<'_>,
    mocks: &super::mocks::Active,
) -> CaseRunRecord {
    super::mocks::for_case_run::record(&mut result, mocks).await;
    result.grade = Some(record::grading::Grade {
        verdict: record::grading::Verdict::Fail,
        checks_passed: 0,
        checks_total: 0,
        score: 0.0,
        reasons: result.reason.iter().cloned().collect(),
    });
    if let Err(e) = grade::write_grading(&plan.dir, &[], None, result.grade.as_ref()) {
        result
            .unrecorded
            .push(format!("cannot write grading.json: {e}"));
    }
    finish(result, started, plan)
}

/// A case-run stopped by Ctrl-C: recorded as an error, so `--resume` redoes it.
fn interrupted(
    mut result: CaseRunRecord,
    started: Instant,
    plan: &CaseRunPlan<'_>,
) -> CaseRunRecord {
    result.end(
        Status::Error,
        "interrupted (Ctrl-C, SIGTERM or SIGHUP) before it finished",
    );
    result.grade = None;
    finish(result, started, plan)
}

fn finish(mut result: CaseRunRecord, started: Instant, plan: &CaseRunPlan<'_>) -> CaseRunRecord {
    result.duration_ms = started.elapsed().as_millis() as u64;
    let timing = record::timing::Timing::of(&result.usage, result.duration_ms);
    if let Err(e) = record::write_json(&plan.dir.join(layout::TIMING_JSON), &timing) {
        result
            .unrecorded
            .push(format!("cannot write {}: {e}", layout::TIMING_JSON));
    }
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
            record::write_json(&plan.dir.join(layout::RESULT_JSON), &v)
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

impl CaseRunRecord {
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
/// The setup script, with the files it needs copied into the case-run's HOME for it alone
/// (`$HOME/.assay-setup`, a plugin-eval suite's eval folder) and removed before the agent
/// starts, so what the agent is graded by is never where it can read it.
async fn setup(
    plan: &CaseRunPlan<'_>,
    script: &str,
    staged: &Staged,
    env: &[(String, String)],
    jail: Option<&crate::sandbox::Jail>,
) -> Result<(), String> {
    let copy = staged.home.join(crate::suite::SETUP_FILES);
    if let Some(files) = &plan.case.setup_files {
        crate::workspace::copy::copy_tree(files, &copy, false).map_err(|e| {
            format!(
                "cannot copy the setup's files from {}: {e}",
                files.display()
            )
        })?;
    }
    let ran = run_script("setup", script, &staged.root, env, jail).await;
    if copy.exists() {
        std::fs::remove_dir_all(&copy).map_err(|e| {
            format!(
                "cannot remove the setup's files from {}: {e}",
                copy.display()
            )
        })?;
    }
    ran
}

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
        Ok(e) if let Some(why) = e.stopped_by.clone().or_else(|| jail?.limit_hit()) => {
            Err(format!("the {what} script: {why}"))
        }
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

/// "exited with code 3", or "was stopped by a signal".
fn describe_exit(code: Option<i32>) -> String {
    match code {
        Some(c) => format!("exited with code {c}"),
        None => "was stopped by a signal".into(),
    }
}

/// The first folder the harness's agent reads skills from (where a trigger eval's note says
/// a slash command was installed as a skill).
fn skill_folder(harness: &dyn crate::harness::Harness) -> String {
    match harness.engines().first() {
        Some(e) => e.skill_root().to_string(),
        None => harness
            .skill_folders()
            .into_iter()
            .next()
            .unwrap_or_else(|| crate::workspace::CLAUDE_SKILLS.to_string()),
    }
}
