//! A case-run's turns through its harness: one agent process per turn, in the sandbox, its
//! stdout recorded line by line (`raw.jsonl`) and read into the transcript
//! (`transcript.jsonl`), each turn resuming the session the last one left.

use std::time::{Duration, Instant};

use super::case_run::{CaseRunPlan, Stop};
use crate::harness::skill_loads::Settled;
use crate::process::{self, Exited, Spawn};
use crate::record::Lines;
use crate::record::case_run::{CaseRunRecord, Status};
use crate::record::layout;
use crate::suite::StdinSource;
use crate::workspace::Staged;
use crate::{
    harness::{Event, Invocation, StreamParser},
    record::agent::{ErrorCategory, TurnSummary},
};

/// Where the agent runs: its environment, and the sandbox around it.
pub struct Contained {
    /// The case-run's environment (setup and teardown scripts get it).
    pub env: Vec<(String, String)>,
    /// The agent's: `env` with what the harness prepared.
    pub agent_env: Vec<(String, String)>,
    pub jail: Option<crate::sandbox::Jail>,
}

/// What the turns left: the transcript, what a plain program printed, how the last process
/// ended.
#[derive(Default)]
pub struct Driven {
    pub events: Vec<Event>,
    pub stdout_text: String,
    pub last_exit: Option<Exited>,
}

/// The turn's harness reported an error: the case-run ends with it, as an error when the
/// model API or a harness plugin failed, else as the agent's failure.
fn end_on(r: &mut CaseRunRecord, mut err: crate::record::agent::AgentError) {
    if err.category == ErrorCategory::Network
        && let Some(why) = r.sandbox.as_ref().and_then(|s| s.why_unreachable())
    {
        err.message = format!("{} ({why})", err.message);
    }
    // A harness plugin's fault is assay's side, and the model API's (a login refused,
    // a rate limit, a 5xx, no connection) the infrastructure's: an error, never the
    // skill failing.
    let status = match err.category {
        c if c == ErrorCategory::Plugin || c.is_infrastructure() => Status::Error,
        _ => Status::Failed,
    };
    let reason = match &err.kind {
        Some(kind) => format!("{kind}: {}", err.message),
        None if err.category.is_infrastructure() => format!(
            "infrastructure error ({}): {}",
            crate::record::run::word(&err.category),
            err.message
        ),
        None => err.message.clone(),
    };
    r.end(status, reason);
    r.error = Some(err);
}

/// The most retries of one case-run told live: an agent printing retries without end floods
/// no terminal (all stay in its transcript).
const MAX_RETRIES_TOLD: u32 = 10;

/// Tells the run's live display of a retry of the model API, as it happens, up to
/// [`MAX_RETRIES_TOLD`] (`told` counts them).
fn tell_retry(plan: &CaseRunPlan<'_>, e: &Event, told: &mut u32) {
    let (
        Some(to),
        Event::Retrying {
            attempt,
            max_retries,
            status,
        },
    ) = (&plan.retries, e)
    else {
        return;
    };
    if *told >= MAX_RETRIES_TOLD {
        return;
    }
    *told += 1;
    let retry = super::retry::Retry {
        suite: plan.suite.id.clone(),
        case: plan.case.id.clone(),
        run: plan.run,
        variant: plan.variant,
        attempt: *attempt,
        max_retries: *max_retries,
        status: *status,
    };
    // A display that stopped listening (the run is ending) misses a line, nothing more.
    to.send(retry).ok();
}

/// Runs the turns, recording each in `r`; stops at the first that fails. `Err` only when the
/// run was interrupted.
pub async fn drive(
    r: &mut CaseRunRecord,
    plan: &CaseRunPlan<'_>,
    staged: &Staged,
    contained: &Contained,
    sent: &[String],
) -> Result<Driven, Stop> {
    let deadline = Instant::now() + plan.timeout;
    // A plain program's stdout that is also the case's output is stored once, as output.txt.
    let plain = stdout_is_output(plan, sent);
    let mut records = Records::open(r, plan, plain);
    let system_prompt = system_prompt(plan, sent);
    let mut driven = Driven::default();
    let mut decisive = Decisive::of(plan);
    let Ok(mut session) = recorded_session(r, plan, staged) else {
        return Ok(driven);
    };
    let mut retries_told = 0;
    let turns: Vec<String> = if plan.case.command.is_some() {
        vec![String::new()]
    } else {
        sent.to_vec()
    };
    for (i, prompt) in turns.iter().enumerate() {
        let inv = Invocation {
            prompt,
            turn: i,
            resume: session.as_deref(),
            system_prompt: system_prompt.as_deref(),
            ..invocation(plan, staged, contained)
        };
        let mut line = match plan.harness.command(&inv) {
            Ok(line) => line,
            Err(why) => {
                r.end(Status::Error, why);
                break;
            }
        };
        if let Some(skill) = decisive.as_ref().and_then(Decisive::verified) {
            plan.harness.stop_at_call(&mut line, skill);
        }
        let mut spawn = spawn_for(line, plan, staged, contained, deadline);
        spawn.sealed_stdout = plan.harness.sealed_stdout();
        spawn.decided = decisive.as_ref().map(|d| d.flag.clone());
        spawn.decided_grace = plan.harness.decided_grace();
        let mut parser = Settled::new(plan.harness.parser(&inv));
        let tell = |e: &Event| tell_retry(plan, e, &mut retries_told);
        let heard = Heard {
            decisive: decisive.as_mut(),
            tell,
        };
        let (exited, mut events) =
            match stream(&spawn, &mut parser, &mut records, plain, heard).await {
                Ok(streamed) => streamed,
                Err(e) => {
                    r.end(Status::Error, e.to_string());
                    break;
                }
            };
        if let Some(why) = crate::sandbox::failed_to_start(&exited) {
            r.end(Status::Error, why);
            r.stderr_tail = exited.stderr_tail.clone();
            break;
        }
        let late = parser.after_exit(&exited);
        records.events(&late);
        events.extend(late);
        // An agent's claimed cost is believed only within bounds.
        let mut summary = parser.finish(&exited).with_believed_cost();
        session = summary.session_id.clone().or(session);
        tally(r, &mut driven, events, plain);
        if let Some(d) = decisive.as_ref().filter(|_| exited.decided) {
            d.record(r, i + 1, &mut summary);
        }
        if !conclude_turn(r, &mut driven, summary, exited, contained.jail.as_ref())? {
            break;
        }
    }
    r.unrecorded.extend(records.errors());
    Ok(driven)
}

/// The session a case continues (Claude Code plugin evals' `context.history_file`), staged
/// for the agent; `Err` when it cannot be (the case-run ends, said why).
fn recorded_session(
    r: &mut CaseRunRecord,
    plan: &CaseRunPlan<'_>,
    staged: &Staged,
) -> Result<Option<String>, ()> {
    let Some(history) = plan
        .case
        .history
        .as_ref()
        .filter(|_| plan.trigger.is_none())
    else {
        return Ok(None);
    };
    match plan
        .harness
        .resume_recorded(history, &staged.home, &staged.cwd)
    {
        Ok(id) => Ok(Some(id)),
        Err(why) => {
            r.end(Status::Error, why);
            Err(())
        }
    }
}

/// The system prompt to send. A prompt expanded to name the skill already carries its body (a
/// command's, filled in; Codex injects a `$skill`'s SKILL.md): clauditor's system prompt
/// derived from that same body is not sent twice.
fn system_prompt(plan: &CaseRunPlan<'_>, sent: &[String]) -> Option<String> {
    plan.suite
        .defaults
        .system_prompt
        .clone()
        .filter(|sp| sent.first() == plan.case.turns.first() || !plan.skill_body_is(sp))
}

/// What every turn's invocation shares (the prompt, the turn and what it resumes are each
/// turn's own).
fn invocation<'a>(
    plan: &'a CaseRunPlan<'_>,
    staged: &'a Staged,
    contained: &Contained,
) -> Invocation<'a> {
    Invocation {
        prompt: "",
        turn: 0,
        resume: None,
        model: plan.model.as_deref().or(plan.case.agent.model.as_deref()),
        system_prompt: None,
        cwd: &staged.cwd,
        home: &staged.home,
        sync_tasks: plan.suite.defaults.sync_tasks,
        allow_hang_heuristic: plan.suite.defaults.allow_hang_heuristic,
        agent: plan
            .case
            .target
            .as_ref()
            .filter(|t| t.kind == crate::suite::TargetKind::Agent && plan.stage.install_skill)
            .map(|t| t.name.as_str()),
        sandboxed: contained.jail.is_some(),
        mcp_servers: package_mcp_servers(plan),
        limits: &plan.case.agent,
        grants: plan.grants,
        plugin_dirs: crate::workspace::package::staged_plugins(&staged.home),
    }
}

/// Who hears a turn's events as they come: the retry display, and the trigger run's stop.
struct Heard<'d, F> {
    decisive: Option<&'d mut Decisive>,
    tell: F,
}

/// Runs one turn's process: each stdout line recorded raw and read into events as it comes
/// (a plain program's output lines are kept once, as its final message), each retry told,
/// each event shown to the trigger run's stop (which may settle a load at its call).
async fn stream<F: FnMut(&Event)>(
    spawn: &Spawn,
    parser: &mut Settled,
    records: &mut Records,
    plain: bool,
    mut heard: Heard<'_, F>,
) -> Result<(Exited, Vec<Event>), process::SpawnError> {
    let mut events: Vec<Event> = Vec::new();
    let exited = process::run(spawn, |l| {
        if let Some(r) = records.raw.as_mut() {
            r.raw(l);
        }
        let mut evs: Vec<Event> = parser
            .line(l)
            .into_iter()
            .filter(|e| !plain || !matches!(e, Event::Output { .. }))
            .collect();
        if let Some(d) = heard.decisive.as_deref_mut() {
            evs.iter().for_each(|e| d.see(e));
            evs.extend(d.at_call(parser));
        }
        for e in evs {
            if let Some(t) = records.transcript.as_mut() {
                t.json(&e);
            }
            (heard.tell)(&e);
            events.push(e);
        }
    })
    .await?;
    Ok((exited, events))
}

/// A trigger run's decisive event: the skill under test loaded. A load counts once its result
/// says it worked, or at its call where it cannot fail: the engine listed the skill when its
/// session started (Claude Code's `skills`), or the run's trigger canary saw its loads work
/// through this harness; so the agent is stopped before it runs the load and asks the model
/// anything more. Seen, the agent is stopped. Only where nothing after it
/// could change the verdict: with sibling skills (`--with-skills`) or routing rules, a later
/// load of another skill could fail the query (`no_other_skill`, `must_not_fire`), so such a
/// run goes on.
struct Decisive {
    skills: Vec<String>,
    flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The skill decided on, and whether at its call (else at its result).
    loaded: Option<(String, bool)>,
    /// The turn budget (`--trigger-turns`; 0: none), the acting steps so far, whether the
    /// last event was a tool call (calls in a row are one step) and whether that step acted.
    budget: u32,
    acted: u32,
    in_step: (bool, bool),
    /// The budget was spent with no load: decided "not fired".
    spent: bool,
    /// The calls that read a file (a `SKILL.md` read whose path may be wrong): their loads
    /// count only at their results.
    reads: Vec<String>,
    /// The engine listed the skill under test when its session started, or the canary saw
    /// its loads work.
    listed: bool,
}

impl Decisive {
    /// For a trigger run that stops early; `None` otherwise.
    fn of(plan: &CaseRunPlan<'_>) -> Option<Decisive> {
        let t = plan.trigger.as_ref().filter(|t| t.stop_early)?;
        if !plan.stage.siblings.is_empty() || !t.case.routing.is_empty() {
            return None;
        }
        let skills = vec![super::case_run::skill_name(plan.suite)];
        if skills[0].is_empty() {
            return None;
        }
        Some(Decisive {
            skills,
            flag: Default::default(),
            loaded: None,
            listed: t.load_verified,
            budget: t.turns,
            acted: 0,
            in_step: (false, false),
            spent: false,
            reads: Vec::new(),
        })
    }

    /// The stop, into the case-run: where it was; its cut-off stream says nothing of the
    /// agent's own.
    fn record(&self, r: &mut CaseRunRecord, turn: usize, summary: &mut TurnSummary) {
        let (event, skill) = match (&self.loaded, self.spent) {
            (Some((skill, true)), _) => ("skill_called", skill.clone()),
            (Some((skill, false)), _) => ("skill_loaded", skill.clone()),
            (None, true) => ("turn_budget", String::new()),
            (None, false) => return,
        };
        summary.error = None;
        r.stopped_at = Some(crate::record::case_run::StoppedAt {
            event: event.into(),
            skill,
            turn,
            tool_calls: r.tool_calls.values().sum(),
        });
    }

    /// The skill under test, where its call is its load (the canary saw it work, or the
    /// engine listed it) and nothing is decided yet.
    fn verified(&self) -> Option<&str> {
        (self.listed && self.loaded.is_none() && !self.spent).then(|| self.skills[0].as_str())
    }

    fn see(&mut self, e: &Event) {
        match e {
            Event::SessionStarted { skills, .. } => {
                self.listed |= skills.iter().any(|s| self.skills.contains(s));
            }
            Event::SkillInvoked { name, .. } if self.skills.contains(name) => {
                self.decide(name, false)
            }
            Event::ToolCall { id, name, input } => {
                if crate::harness::tool_kinds::kind_of(name) == Some("read")
                    && self.reads.len() < 10_000
                {
                    self.reads.push(id.clone());
                }
                self.step(name, input)
            }
            _ => {}
        }
        if !matches!(e, Event::ToolCall { .. } | Event::SkillInvoked { .. }) {
            self.in_step = (false, false);
        }
    }

    /// A tool call: the steps that act are counted (calls in a row are one step); past the
    /// budget with no load, the run is decided "not fired". Exploring never counts.
    fn step(&mut self, name: &str, input: &serde_json::Value) {
        let (in_step, step_acted) = self.in_step;
        let acts = crate::harness::tool_kinds::acts(name, input);
        self.in_step = (true, step_acted || acts);
        if !acts || (in_step && step_acted) {
            return;
        }
        self.acted += 1;
        if self.budget > 0 && self.acted > self.budget && self.loaded.is_none() && !self.spent {
            self.spent = true;
            self.flag.store(true, std::sync::atomic::Ordering::Release);
        }
    }

    /// A call of the skill under test that cannot fail, settled as its load at once: the
    /// engine's skill tool (or Codex's plain read of the installed skill), never a file read.
    fn at_call(&mut self, parser: &mut Settled) -> Option<Event> {
        if !self.listed || self.loaded.is_some() || self.spent {
            return None;
        }
        let name = parser
            .awaiting()
            .find(|(call, n)| {
                self.skills.iter().any(|s| s == n) && !self.reads.iter().any(|r| r == call)
            })?
            .1
            .to_string();
        self.decide(&name, true);
        parser.trust(&name)
    }

    fn decide(&mut self, name: &str, at_call: bool) {
        if self.loaded.is_none() && !self.spent {
            self.loaded = Some((name.to_string(), at_call));
            self.flag.store(true, std::sync::atomic::Ordering::Release);
        }
    }
}

/// A finished turn into the case-run: its summary, usage and cost, how its process ended.
/// `Ok(false)` when the case-run ends here (a limit, the agent's error, the timeout); `Err`
/// when it was interrupted.
fn conclude_turn(
    r: &mut CaseRunRecord,
    driven: &mut Driven,
    summary: TurnSummary,
    exited: Exited,
    jail: Option<&crate::sandbox::Jail>,
) -> Result<bool, Stop> {
    r.usage.add(&summary.usage);
    if let Some(c) = summary.cost_usd {
        *r.cost_usd.get_or_insert(0.0) += c;
    }
    let error = summary.error.clone();
    r.turns.push(summary);
    r.exit_code = exited.code;
    r.timed_out |= exited.timed_out;
    r.stdout_bytes += exited.stdout_bytes;
    r.output_truncated |= exited.truncated;
    r.stderr_tail = exited.stderr_tail.clone();
    if exited.interrupted {
        return Err(Stop::Interrupted);
    }
    if exited.decided {
        // Killed at the decisive event: not an exit of the agent's own.
        return Ok(false);
    }
    if past_limit(r, &exited, jail) {
        driven.last_exit = Some(exited);
        return Ok(false);
    }
    driven.last_exit = Some(exited);
    if let Some(err) = error {
        end_on(r, err);
        return Ok(false);
    }
    Ok(!r.timed_out)
}

/// The files a case-run's turns are written to as they stream: `raw.jsonl` (none for a plain
/// program whose stdout is its output) and `transcript.jsonl`.
struct Records {
    raw: Option<Lines>,
    transcript: Option<Lines>,
}

impl Records {
    /// Both created; a file that cannot be is said in `r.unrecorded`.
    fn open(r: &mut CaseRunRecord, plan: &CaseRunPlan<'_>, plain: bool) -> Records {
        let mut open = |name: &str| {
            Lines::create(&plan.dir.join(name))
                .inspect_err(|e| r.unrecorded.push(format!("cannot create {name}: {e}")))
                .ok()
        };
        let raw = if plain { None } else { open(layout::RAW_JSONL) };
        let transcript = open(layout::TRANSCRIPT_JSONL);
        if plain {
            r.stdout_in = Some(OUTPUT_FILE.into());
        }
        Records { raw, transcript }
    }

    /// Events that came after the process exited, into the transcript.
    fn events(&mut self, events: &[Event]) {
        if let Some(t) = self.transcript.as_mut() {
            for e in events {
                t.json(e);
            }
        }
    }

    /// What could not be written to either.
    fn errors(&self) -> Vec<String> {
        self.raw
            .iter()
            .chain(self.transcript.iter())
            .filter_map(Lines::error)
            .collect()
    }
}

/// Whether a limit of the case-run stopped it (the disk watch, or the kernel's memory or
/// process bound): then it is an error naming the limit.
fn past_limit(r: &mut CaseRunRecord, exited: &Exited, jail: Option<&crate::sandbox::Jail>) -> bool {
    let Some(why) = exited
        .stopped_by
        .clone()
        .or_else(|| jail.and_then(|j| j.limit_hit()))
    else {
        return false;
    };
    r.end(Status::Error, why.clone());
    r.error = Some(crate::record::agent::AgentError {
        category: ErrorCategory::Limit,
        message: why,
        kind: None,
    });
    true
}

/// Where a plain program's stdout is kept when it is the output (see [`stdout_is_output`]).
pub const OUTPUT_FILE: &str = layout::OUTPUT_TXT;

/// Whether the case-run's stdout is a plain program's and is its output as well: one turn
/// whose output is the final message or stdout, which for such a program are all of stdout.
fn stdout_is_output(plan: &CaseRunPlan<'_>, sent: &[String]) -> bool {
    use crate::suite::OutputSpec;
    !plan.harness.sealed_stdout()
        && (sent.len() <= 1 || plan.case.command.is_some())
        && matches!(
            plan.case.output,
            OutputSpec::FinalMessage | OutputSpec::Stdout
        )
}

/// The process for one turn: the harness's command line, in the agent's environment (the
/// harness's variables over it), with the case's stdin, the time left, and the sandbox.
fn spawn_for(
    line: crate::harness::CommandLine,
    plan: &CaseRunPlan<'_>,
    staged: &Staged,
    contained: &Contained,
    deadline: Instant,
) -> Spawn {
    let mut spawn = Spawn::new(line.program, &staged.cwd);
    spawn.args = line.args;
    spawn.shows = line.shows;
    spawn.env = contained.agent_env.clone();
    let case_env = plan
        .case
        .agent
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()));
    for (k, v) in line.env.into_iter().chain(case_env) {
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
    if let Some(j) = &contained.jail {
        j.wrap(&mut spawn);
    }
    spawn
}

/// A turn's events into the case-run: tool calls counted, skills used, what a plain program
/// printed (unless `plain`: its stdout is its final message); then kept in order.
fn tally(r: &mut CaseRunRecord, driven: &mut Driven, events: Vec<Event>, plain: bool) {
    for e in &events {
        match e {
            Event::ToolCall { name, .. } => {
                *r.tool_calls.entry(name.clone()).or_default() += 1;
                if let Some(kind) = crate::harness::tool_kinds::kind_of(name) {
                    *r.tool_kinds.entry(kind.to_string()).or_default() += 1;
                }
            }
            Event::SkillInvoked { name, .. } if !r.skills_invoked.contains(name) => {
                r.skills_invoked.push(name.clone())
            }
            Event::SkillFailed { name, .. } if !r.skills_failed.contains(name) => {
                r.skills_failed.push(name.clone())
            }
            Event::Output { text } if !plain => {
                driven.stdout_text.push_str(text);
                driven.stdout_text.push('\n');
            }
            _ => {}
        }
    }
    driven.events.extend(events);
}

/// The package's MCP servers when the package is installed (not for a baseline, nor for a
/// package's skill run on its own).
fn package_mcp_servers<'a>(
    plan: &'a CaseRunPlan<'_>,
) -> &'a std::collections::BTreeMap<String, serde_json::Value> {
    static NONE: std::collections::BTreeMap<String, serde_json::Value> =
        std::collections::BTreeMap::new();
    match (&plan.suite.package, &plan.suite.skill) {
        (Some(pkg), None) if plan.stage.install_skill => &pkg.parts.mcp_servers,
        _ => &NONE,
    }
}
