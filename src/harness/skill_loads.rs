//! A skill load counts as a use only when it worked: each `skill_invoked` a parser reports is
//! held until its tool call's result, then kept (the result is no error) or turned into a
//! `skill_failed` (Claude Code's `Unknown skill: x`, Copilot's `Tool 'skill' does not
//! exist.`, OpenCode's and Qwen Code's `Skill "x" not found`, …: every engine marks such a
//! result as an error). A load whose result never came, the turn over, failed too.
//!
//! [`Settled`] wraps any harness's parser, built-in or a plugin's, so every engine agrees.

use std::collections::HashMap;

use super::{Event, StreamParser};
use crate::process::Exited;
use crate::record::agent::TurnSummary;

/// The longest failure text kept in a `skill_failed` event.
const MAX_ERROR: usize = 500;
/// The most tool results remembered (for a skill named after its call's result).
const MAX_RESULTS: usize = 10_000;

/// A parser whose skill loads are settled by their results.
pub struct Settled {
    inner: Box<dyn StreamParser>,
    /// The last tool call seen: a `skill_invoked` naming no call is that call's.
    last_call: Option<String>,
    /// Skill loads waiting for their call's result, by call id, in the order seen.
    pending: Vec<(String, String)>,
    /// The results seen so far: whether each was an error, and its text.
    results: HashMap<String, (bool, String)>,
}

impl Settled {
    pub fn new(inner: Box<dyn StreamParser>) -> Settled {
        Settled {
            inner,
            last_call: None,
            pending: Vec::new(),
            results: HashMap::new(),
        }
    }

    fn settle(&mut self, events: Vec<Event>) -> Vec<Event> {
        let mut out = Vec::with_capacity(events.len());
        for e in events {
            match e {
                Event::ToolCall { ref id, .. } => {
                    self.last_call = (!id.is_empty()).then(|| id.clone());
                    out.push(e);
                }
                Event::SkillInvoked { name, call } => {
                    match call.or_else(|| self.last_call.take()) {
                        Some(id) => match self.results.get(&id) {
                            Some((is_error, text)) => out.push(outcome(name, *is_error, text)),
                            None => self.pending.push((id, name)),
                        },
                        // No call to wait for (a plugin's event of its own): as it said.
                        None => out.push(Event::SkillInvoked { name, call: None }),
                    }
                }
                Event::ToolResult {
                    ref id,
                    ref output,
                    is_error,
                } => {
                    let (id, text) = (id.clone(), output.clone());
                    out.push(e);
                    let (now, later) = std::mem::take(&mut self.pending)
                        .into_iter()
                        .partition(|(call, _)| *call == id);
                    self.pending = later;
                    for (_, name) in now {
                        out.push(outcome(name, is_error, &text));
                    }
                    if self.results.len() < MAX_RESULTS {
                        self.results.insert(id, (is_error, text));
                    }
                    self.last_call = None;
                }
                other => {
                    self.last_call = None;
                    out.push(other)
                }
            }
        }
        out
    }
}

impl Settled {
    /// The skills called and not yet settled, with their calls' ids, in the order called.
    pub fn awaiting(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pending
            .iter()
            .map(|(call, name)| (call.as_str(), name.as_str()))
    }

    /// Settles the waiting loads of `name` as worked, without their result: the caller knows
    /// they cannot fail (the engine listed the skill when it started). Their event, once.
    pub fn trust(&mut self, name: &str) -> Option<Event> {
        let before = self.pending.len();
        self.pending.retain(|(_, n)| n != name);
        (self.pending.len() < before).then(|| Event::SkillInvoked {
            name: name.to_string(),
            call: None,
        })
    }
}

/// A load's event from its call's result.
fn outcome(name: String, is_error: bool, result: &str) -> Event {
    match is_error {
        false => Event::SkillInvoked { name, call: None },
        true => Event::SkillFailed {
            name,
            error: crate::text::shorten(&crate::text::printable(result.trim()), MAX_ERROR),
        },
    }
}

impl StreamParser for Settled {
    fn line(&mut self, line: &str) -> Vec<Event> {
        let events = self.inner.line(line);
        self.settle(events)
    }

    /// The inner parser's last events, then every load still waiting: failed, the turn over
    /// before its result came (as it was said, from a harness that reports no results).
    fn after_exit(&mut self, exit: &Exited) -> Vec<Event> {
        let events = self.inner.after_exit(exit);
        let mut out = self.settle(events);
        let results = !self.results.is_empty();
        out.extend(
            std::mem::take(&mut self.pending)
                .into_iter()
                .map(|(_, name)| match results {
                    true => Event::SkillFailed {
                        name,
                        error: "no result before the turn ended".into(),
                    },
                    false => Event::SkillInvoked { name, call: None },
                }),
        );
        out
    }

    fn finish(&mut self, exit: &Exited) -> TurnSummary {
        self.inner.finish(exit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parser that reports, for each line, the next of the events it was given.
    struct Replay(std::collections::VecDeque<Vec<Event>>);

    impl StreamParser for Replay {
        fn line(&mut self, _line: &str) -> Vec<Event> {
            self.0.pop_front().unwrap_or_default()
        }
        fn finish(&mut self, _exit: &Exited) -> TurnSummary {
            TurnSummary::default()
        }
    }

    fn call(id: &str) -> Event {
        Event::ToolCall {
            id: id.into(),
            name: "Skill".into(),
            input: serde_json::json!({"skill": "greeter"}),
        }
    }

    fn result(id: &str, is_error: bool, output: &str) -> Event {
        Event::ToolResult {
            id: id.into(),
            output: output.into(),
            is_error,
        }
    }

    fn invoked(name: &str, call: Option<&str>) -> Event {
        Event::SkillInvoked {
            name: name.into(),
            call: call.map(str::to_string),
        }
    }

    fn exit() -> Exited {
        Exited {
            code: Some(0),
            signal: None,
            timed_out: false,
            interrupted: false,
            duration: std::time::Duration::from_millis(1),
            stdout_bytes: 0,
            truncated: false,
            stderr_tail: String::new(),
            started: None,
            stopped_by: None,
            decided: false,
        }
    }

    fn run(lines: &[Vec<Event>]) -> Vec<Event> {
        let mut p = Settled::new(Box::new(Replay(lines.iter().cloned().collect())));
        let mut out = Vec::new();
        for _ in lines {
            out.extend(p.line(""));
        }
        out.extend(p.after_exit(&exit()));
        out
    }

    #[test]
    fn a_load_counts_only_when_its_result_is_no_error() {
        // Claude Code: the call, the load, then its result a line later.
        let events = run(&[
            vec![call("a"), invoked("greeter", None)],
            vec![result(
                "a",
                true,
                "<tool_use_error>Unknown skill: greeter</tool_use_error>",
            )],
            vec![call("b"), invoked("greeter", None)],
            vec![result("b", false, "Launching skill: greeter")],
        ]);
        let skills: Vec<&Event> = events
            .iter()
            .filter(|e| matches!(e, Event::SkillInvoked { .. } | Event::SkillFailed { .. }))
            .collect();
        assert_eq!(
            skills,
            [
                &Event::SkillFailed {
                    name: "greeter".into(),
                    error: "<tool_use_error>Unknown skill: greeter</tool_use_error>".into()
                },
                &invoked("greeter", None)
            ]
        );
        // Each comes right after its result.
        assert_eq!(events[2], skills[0].clone());
    }

    #[test]
    fn a_load_named_by_its_call_after_the_result_or_never_answered() {
        // An ACP agent naming the skill once the call has ended, another call between.
        let events = run(&[
            vec![call("a"), call("b")],
            vec![result("a", false, "ok")],
            vec![invoked("greeter", Some("a"))],
            vec![invoked("other", Some("b"))],
        ]);
        assert_eq!(events[3], invoked("greeter", None), "{events:?}");
        assert_eq!(
            events[4],
            Event::SkillFailed {
                name: "other".into(),
                error: "no result before the turn ended".into()
            }
        );
        // A load with no call at all (a plugin's own event) is as it said, also when a call
        // came before but not right before, or had no id.
        assert_eq!(run(&[vec![invoked("x", None)]]), [invoked("x", None)]);
        let msg = Event::Message { text: "hi".into() };
        let events = run(&[vec![call("a"), msg.clone(), invoked("x", None)]]);
        assert_eq!(events[2], invoked("x", None), "{events:?}");
        let events = run(&[vec![call(""), invoked("x", None)]]);
        assert_eq!(events[1], invoked("x", None), "{events:?}");
        // A harness that reports no results at all: its loads are as it said.
        let events = run(&[vec![call("a"), invoked("x", None)]]);
        assert_eq!(events[1], invoked("x", None), "{events:?}");
    }
}
