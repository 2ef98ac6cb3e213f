//! MCP stand-ins for a case-run (Claude Code plugin evals' `mocks/`): the plugin's mocked
//! servers point at assay's, on the host's loopback ([`server`]); each call is answered by
//! its responder — a canned body ([`template`]) or a model playing the server ([`agent`]) —
//! after its `expect:` guards ([`guards`]), and recorded. A broken guard, or an agent mock's
//! `abort_when:`, aborts the run: it fails with a score of 0. An agent mock whose model
//! cannot answer is an infrastructure error, never the skill's failure.

pub mod agent;
pub mod for_case_run;
pub mod guards;
pub mod mcp;
pub mod server;
pub mod template;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::judge::provider::Judge;
use crate::record::mocks::{MockAbort, MockCall, MockRecord, MockedServer};
use crate::suite::mocks::MockServer;

/// Agent-answered calls one case-run may make, per turn it is allowed (Claude Code's 4).
const AGENT_CALLS_PER_TURN: usize = 4;
/// Mocked calls one case-run may make: past it the run is aborted (an agent calling without
/// end must not grow its record without end).
pub const MAX_CALLS: usize = 1_000;
/// The most of one answer handed back and recorded.
const MAX_ANSWER: usize = 1 << 20;

/// One case-run's stand-ins, registered with the host while the case-run lasts.
pub struct Session {
    pub servers: BTreeMap<String, MockServer>,
    /// The tool-name prefix the agent sees for a server: `mcp__plugin_<plugin>_<server>__`.
    plugin: String,
    /// The model agent mocks ask, or why there is none.
    judge: Result<Arc<Judge>, String>,
    /// The run's runtime, where agent mocks' requests are made.
    runtime: tokio::runtime::Handle,
    agent_budget: usize,
    state: tokio::sync::Mutex<State>,
    /// Set when a call aborts the run (or the run is interrupted): the agent is stopped.
    stop: tokio::sync::watch::Sender<bool>,
    /// A call aborted the run.
    aborted: AtomicBool,
}

#[derive(Default)]
struct State {
    calls: Vec<MockCall>,
    aborted: Option<MockAbort>,
    /// The abort is assay's (an agent mock's model failed), not the skill's.
    infrastructure: bool,
    agent_calls: usize,
    /// Earlier calls per server, for agent mocks.
    history: BTreeMap<String, Vec<String>>,
}

/// A live session: removed from the host when dropped.
pub struct Active {
    pub session: Arc<Session>,
    token: String,
    /// The base URL the agent reaches the stand-ins at (`ASSAY_MOCKS_BASE_URL`).
    pub url: String,
    pub withheld: Vec<String>,
}

impl Drop for Active {
    fn drop(&mut self) {
        server::forget(&self.token);
    }
}

/// How a case-run's stand-ins are set up.
pub struct Opening<'a> {
    pub servers: &'a [MockServer],
    pub plugin: &'a str,
    pub judge: Result<Arc<Judge>, String>,
    pub max_turns: u32,
    pub withheld: Vec<String>,
}

/// Registers the case-run's stand-ins with the host (started on first use).
pub fn open(o: Opening<'_>) -> Result<Active, String> {
    let session = Arc::new(Session {
        servers: o
            .servers
            .iter()
            .map(|s| (s.name.clone(), s.clone()))
            .collect(),
        plugin: o.plugin.to_string(),
        judge: o.judge,
        runtime: tokio::runtime::Handle::try_current().map_err(|e| e.to_string())?,
        agent_budget: AGENT_CALLS_PER_TURN * o.max_turns.max(1) as usize,
        state: Default::default(),
        stop: tokio::sync::watch::channel(false).0,
        aborted: AtomicBool::new(false),
    });
    let (token, port) = server::register(session.clone())?;
    Ok(Active {
        session,
        url: format!("http://127.0.0.1:{port}/{token}"),
        token,
        withheld: o.withheld,
    })
}

impl Active {
    /// What stops the agent: the run's interrupt (`run`), or a call that aborts the run.
    pub fn stop_signal(
        &self,
        run: Option<tokio::sync::watch::Receiver<bool>>,
    ) -> tokio::sync::watch::Receiver<bool> {
        let stop = self.session.stop.clone();
        if let Some(mut run) = run {
            let forward = stop.clone();
            tokio::spawn(async move {
                if run.wait_for(|c| *c).await.is_ok() {
                    forward.send_replace(true);
                }
            });
        }
        stop.subscribe()
    }

    /// Whether a call aborted the run.
    pub fn aborted(&self) -> bool {
        *self.session.stop.borrow() && self.session.aborted.load(Ordering::Acquire)
    }

    /// What the stand-ins saw, for the case-run's record.
    pub async fn record(&self) -> (MockRecord, bool) {
        let st = self.session.state.lock().await;
        let servers = self
            .session
            .servers
            .values()
            .map(|s| MockedServer {
                server: s.name.clone(),
                tools: s
                    .tools
                    .iter()
                    .map(|(t, r)| (t.clone(), r.kind().to_string()))
                    .collect(),
            })
            .collect();
        let record = MockRecord {
            servers,
            withheld: self.withheld.clone(),
            calls: st.calls.clone(),
            aborted: st.aborted.clone(),
        };
        (record, st.infrastructure)
    }
}

/// A name as Claude Code puts it in a tool name: anything but letters, digits, `_` and `-`
/// becomes `_`.
pub fn tool_segment(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl Session {
    /// The tool's name as the agent calls it.
    fn full_name(&self, server: &str, tool: &str) -> String {
        format!(
            "mcp__plugin_{}_{}__{tool}",
            tool_segment(&self.plugin),
            tool_segment(server)
        )
    }

    /// Answers one call: `(text, is_error)`.
    pub async fn call(&self, server: &str, tool: &str, input: serde_json::Value) -> (String, bool) {
        let mut st = self.state.lock().await;
        if let Some(a) = &st.aborted {
            return (format!("{ABORTED}: {}", a.reason), true);
        }
        let Some(responder) = self.servers.get(server).and_then(|s| s.tools.get(tool)) else {
            return (format!("no mock for {server}/{tool}"), true);
        };
        let broken = responder
            .expect()
            .and_then(|e| guards::violation(&input, e));
        let mut answer = match broken {
            _ if st.calls.len() >= MAX_CALLS => {
                agent::MockAnswer::abort(format!("more than {MAX_CALLS} mocked calls this run"))
            }
            Some(broken) => {
                agent::MockAnswer::abort(format!("the model's call violates expect: {broken}"))
            }
            None => self.answer(&mut st, server, tool, responder, &input).await,
        };
        if answer.text.len() > MAX_ANSWER {
            let mut end = MAX_ANSWER;
            while !answer.text.is_char_boundary(end) {
                end -= 1;
            }
            answer.text.truncate(end);
        }
        if answer.verdict == agent::CallVerdict::Abort && st.aborted.is_none() {
            st.aborted = Some(MockAbort {
                server: server.to_string(),
                tool: tool.to_string(),
                reason: answer.text.clone(),
            });
            st.infrastructure = answer.infrastructure;
            // The agent is stopped now, as Claude Code stops it.
            self.aborted.store(true, Ordering::Release);
            self.stop.send_replace(true);
        }
        let text = match answer.verdict {
            agent::CallVerdict::Abort => format!("{ABORTED}: {}", answer.text),
            _ => answer.text.clone(),
        };
        let is_error = answer.verdict != agent::CallVerdict::Ok;
        st.history
            .entry(server.to_string())
            .or_default()
            .push(agent::history_line(
                tool,
                &input,
                answer.verdict,
                &answer.text,
            ));
        st.calls.push(MockCall {
            server: server.to_string(),
            tool: tool.to_string(),
            name: self.full_name(server, tool),
            input,
            output: Some(text.clone()),
            is_error,
            verdict: answer.verdict.name().to_string(),
        });
        (text, is_error)
    }

    async fn answer(
        &self,
        st: &mut State,
        server: &str,
        tool: &str,
        responder: &crate::suite::mocks::Responder,
        input: &serde_json::Value,
    ) -> agent::MockAnswer {
        use crate::suite::mocks::Responder;
        match responder {
            Responder::Fixed {
                body,
                is_error,
                base_dir,
                ..
            } => match template::fill(body, input, base_dir) {
                Ok(text) if *is_error => agent::MockAnswer::tool_error(text),
                Ok(text) => agent::MockAnswer::ok(text),
                Err(why) => agent::MockAnswer::tool_error(why),
            },
            Responder::Agent { .. } => {
                st.agent_calls += 1;
                if st.agent_calls > self.agent_budget {
                    return agent::MockAnswer::abort(format!(
                        "mock call budget exceeded ({} agent-answered calls this run)",
                        self.agent_budget
                    ));
                }
                let history = st.history.get(server).cloned().unwrap_or_default();
                let ask = agent::Ask {
                    server,
                    tool,
                    responder,
                    input,
                    history: &history,
                };
                agent::answer(&self.judge, &self.runtime, &ask).await
            }
        }
    }
}

/// What an aborted run's mocked calls answer, before the reason.
pub const ABORTED: &str = "eval aborted by mock";
