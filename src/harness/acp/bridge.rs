//! The ACP client, run by assay inside the case-run's sandbox as the agent's parent
//! (`assay __acp-client [--resume <session>] -- <agent> <args>…`, the prompt on stdin): it
//! starts the agent, speaks the Agent Client Protocol to it (through the
//! `agent-client-protocol` crate), and prints one JSON object per line for the harness's
//! parser ([`super::read`]): each message the agent sent, as `{"agent": …}`, and its own
//! steps, as `{"bridge": "session" | "permission" | "stop" | "error" | "cancelled", …}`.
//!
//! - One session per case-run: `session/new` with the workspace as `cwd` on the first turn,
//!   `session/load` of the session on later ones (each turn is a process, as for every
//!   harness); an agent that cannot load a session cannot run later turns.
//! - A package's MCP servers, handed over in [`super::mcp::VAR`] (and kept from the agent's
//!   environment), go into `session/new` and `session/load`: stdio ones always, HTTP and SSE
//!   ones where the agent offers those transports.
//! - Permission requests are allowed (the sandbox is the boundary), each printed.
//! - No file-system or terminal capability is offered: the agent works in its workspace
//!   itself.
//! - The agent runs in a process group of its own: on SIGTERM (assay's timeout) the client
//!   sends `session/cancel` before any signal reaches the agent, prints how the turn ended,
//!   and kills the agent's group after [`CANCEL_GRACE`] (and whenever the client ends).
//! - The agent's stdout is a socket, not a pipe, and this process is not dumpable, so
//!   nothing the agent runs can write into what it prints.

use std::process::ExitCode;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, Implementation, InitializeRequest, LoadSessionRequest,
    McpCapabilities, McpServer, NewSessionRequest, PermissionOptionKind, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionId, SessionNotification, TextContent,
};
use agent_client_protocol::{Agent, ByteStreams, Client};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// The hidden subcommand that runs it.
pub const SUBCOMMAND: &str = "__acp-client";

/// The longest line taken from the agent: a longer one ends the session as an error (well
/// under what assay reads of the client's own lines, `process::MAX_LINE`, so every line the
/// client acted on is also recorded).
const MAX_LINE: usize = 4 << 20;

/// The longest session id taken from the agent (it is passed back on the next turn).
const MAX_SESSION_ID: usize = 256;

struct Args {
    resume: Option<String>,
    /// `--stop-at-skill`: a trigger run's skill, whose load cannot fail; the agent is frozen
    /// the moment it announces a call of it, then cancelled and killed.
    stop_at: Option<String>,
    argv: Vec<String>,
}

/// The flag that names the skill to stop at ([`Args::stop_at`]).
pub const STOP_AT_SKILL: &str = "--stop-at-skill";

fn parse(args: &[String]) -> Result<Args, String> {
    let (mut resume, mut stop_at) = (None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--resume" => resume = Some(it.next().ok_or("--resume SESSION")?.clone()),
            STOP_AT_SKILL => stop_at = Some(it.next().ok_or("--stop-at-skill SKILL")?.clone()),
            "--" => {
                let argv: Vec<String> = it.cloned().collect();
                if argv.is_empty() {
                    return Err("no agent command after --".into());
                }
                return Ok(Args {
                    resume,
                    stop_at,
                    argv,
                });
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Err(
        "usage: assay __acp-client [--resume SESSION] [--stop-at-skill SKILL] -- AGENT [ARGS]…"
            .into(),
    )
}

/// One line of what this process prints.
fn say(v: Value) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    // A closed stdout (assay gone) leaves nothing to tell.
    if writeln!(out, "{v}").and_then(|_| out.flush()).is_err() {
        std::process::exit(1);
    }
}

pub fn main(args: &[String]) -> ExitCode {
    let args = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("assay {SUBCOMMAND}: {e}");
            return ExitCode::from(2);
        }
    };
    // Nothing the agent starts may read or write this process's memory or descriptors.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_DUMPABLE takes no pointers.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        say(json!({"bridge": "error", "message": "cannot make the ACP client undumpable"}));
        return ExitCode::from(1);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            say(json!({"bridge": "error", "message": format!("no runtime: {e}")}));
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(session(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            say(json!({"bridge": "error", "message": message}));
            ExitCode::from(1)
        }
    }
}

async fn session(args: Args) -> Result<(), String> {
    let mut prompt = String::new();
    tokio::io::stdin()
        .read_to_string(&mut prompt)
        .await
        .map_err(|e| format!("cannot read the prompt: {e}"))?;
    let (mine, theirs) = std::os::unix::net::UnixStream::pair()
        .map_err(|e| format!("cannot make the agent's stdout: {e}"))?;
    let servers = mcp_servers()?;
    let mut command = tokio::process::Command::new(&args.argv[0]);
    command
        .args(&args.argv[1..])
        .env_remove(super::mcp::VAR)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::from(std::os::fd::OwnedFd::from(
            theirs,
        )))
        .kill_on_drop(true)
        .process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: the closure runs in the child before exec and only calls prctl.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", args.argv[0]))?;
    let _group = AgentGroup(child.id());
    let (decided, heard) = tokio::sync::watch::channel(false);
    tokio::spawn(stop_after_cancel(child.id(), heard.clone()));
    let stdin = child.stdin.take().ok_or("the agent has no stdin")?;
    mine.set_nonblocking(true).map_err(|e| e.to_string())?;
    let stdout = tokio::net::UnixStream::from_std(mine).map_err(|e| e.to_string())?;
    let stop = args.stop_at.clone().map(|skill| StopAt {
        skill,
        agent: child.id(),
        decided,
    });
    let incoming = tee(stdout, stop);
    let transport = ByteStreams::new(stdin.compat_write(), incoming.compat());
    let cwd = std::env::current_dir().map_err(|e| format!("no working folder: {e}"))?;
    let conversation = Client
        .v1()
        .name("assay")
        .on_receive_notification(
            async move |_n: SessionNotification, _cx| Ok(()),
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: RequestPermissionRequest, responder, _cx| {
                responder.respond(allow(&req))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async |cx: ConnectionTo<Agent>| {
            turn(&cx, cwd, (args.resume, servers), (prompt, heard)).await
        });
    tokio::pin!(conversation);
    // The agent gone while something it started holds its stdout open: the turn ends with
    // it (after a moment for its last lines), not at assay's timeout.
    let result = tokio::select! {
        r = &mut conversation => r.map_err(|e| e.to_string()),
        exited = child.wait() => {
            let grace = tokio::time::timeout(std::time::Duration::from_secs(2), &mut conversation);
            match grace.await {
                Ok(r) => r.map_err(|e| e.to_string()),
                Err(_) => Err(format!(
                    "Incoming transport closed: the agent exited ({}) before finishing its turn",
                    exited.map_or_else(|e| e.to_string(), |s| s.to_string())
                )),
            }
        }
    };
    result
}

/// How long the agent has to end its turn after `session/cancel` before its process group
/// is killed (well inside assay's grace period, so the client can still say how it ended).
pub const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_millis(1500);

/// The agent's process group, of its own so that assay's SIGTERM reaches the client first
/// and the agent hears `session/cancel` before any signal; killed, with all the agent left
/// running, when the client ends.
struct AgentGroup(Option<u32>);

impl Drop for AgentGroup {
    fn drop(&mut self) {
        kill_group(self.0);
    }
}

fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
        // Already gone is what is wanted.
        rustix::process::kill_process_group(pid, rustix::process::Signal::KILL).ok();
    }
}

/// On SIGTERM (the turn's cancel is sent by [`turn`]): the agent's group killed once the
/// cancel's grace has passed, whether or not the turn ended. Stopped at the skill's call
/// ([`StopAt`]): killed as soon as the cancel is sent, the agent being frozen already.
async fn stop_after_cancel(agent: Option<u32>, mut decided: tokio::sync::watch::Receiver<bool>) {
    let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    else {
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = stopped_at_call(&mut decided) => {}
    }
    let grace = match *decided.borrow() {
        true => DECIDED_GRACE,
        false => CANCEL_GRACE,
    };
    tokio::time::sleep(grace).await;
    kill_group(agent);
}

/// Ends once the agent announced the call it stops at; never for a turn with no such stop
/// (its sender gone).
async fn stopped_at_call(decided: &mut tokio::sync::watch::Receiver<bool>) {
    if decided.wait_for(|d| *d).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Between the cancel of a turn stopped at the skill's call and its frozen agent's kill.
const DECIDED_GRACE: std::time::Duration = std::time::Duration::from_millis(50);

/// A trigger run's stop: the skill under test, the agent's group, and who hears that the
/// agent announced its call.
struct StopAt {
    skill: String,
    agent: Option<u32>,
    decided: tokio::sync::watch::Sender<bool>,
}

impl StopAt {
    /// Freezes the agent (SIGSTOP to its group) when `v` announces a call of the skill, before
    /// the line goes on: it runs nothing more and asks its model nothing more. Then the turn is
    /// cancelled and the agent killed ([`stop_after_cancel`]).
    fn see(&self, v: &Value) {
        if *self.decided.borrow() || super::read::skill_called(v).as_deref() != Some(&self.skill) {
            return;
        }
        if let Some(pid) = self
            .agent
            .and_then(|p| rustix::process::Pid::from_raw(p as i32))
        {
            // Already gone: nothing more can come from it either.
            rustix::process::kill_process_group(pid, rustix::process::Signal::STOP).ok();
        }
        self.decided.send_replace(true);
    }
}

/// The agent's stdout, each line printed as `{"agent": …}` before the client reads it.
fn tee(stdout: tokio::net::UnixStream, stop: Option<StopAt>) -> tokio::io::DuplexStream {
    let (mut feed, incoming) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stdout);
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = (&mut lines)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut line)
                .await;
            let why = match read {
                Ok(0) => break,
                Err(e) => Some(format!("cannot read the agent's output: {e}")),
                Ok(_) if line.len() > MAX_LINE => Some(format!(
                    "the agent printed a line longer than {} MiB",
                    MAX_LINE >> 20
                )),
                Ok(_) => std::str::from_utf8(&line)
                    .err()
                    .map(|_| "the agent printed a line that is not UTF-8".to_string()),
            };
            if let Some(why) = why {
                // Said, and the agent's output ends here: the turn fails, never half-read.
                say(json!({"bridge": "error", "message": why}));
                break;
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end();
            let v = serde_json::from_str::<Value>(text)
                .unwrap_or_else(|_| Value::String(crate::text::shorten(text, 4096)));
            if let Some(s) = &stop {
                s.see(&v);
            }
            say(json!({"agent": v}));
            if feed
                .write_all(format!("{text}\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
    });
    incoming
}

/// The package's MCP servers, handed over by the harness ([`super::mcp::VAR`]).
fn mcp_servers() -> Result<Vec<McpServer>, String> {
    match crate::host::HostEnv::process_var(super::mcp::VAR) {
        Some(text) => serde_json::from_str(&text).map_err(|e| format!("bad MCP servers: {e}")),
        None => Ok(Vec::new()),
    }
}

/// The servers the agent can take: stdio always, HTTP and SSE where it says so (the rest
/// named on stderr).
fn usable(servers: Vec<McpServer>, can: &McpCapabilities) -> Vec<McpServer> {
    servers
        .into_iter()
        .filter(|s| {
            let (ok, name) = match s {
                McpServer::Http(h) => (can.http, &h.name),
                McpServer::Sse(h) => (can.sse, &h.name),
                McpServer::Stdio(_) => return true,
                _ => return false,
            };
            if !ok {
                eprintln!("assay: the agent cannot reach the MCP server `{name}` (its transport is not one it offers)");
            }
            ok
        })
        .collect()
}

/// One turn: initialize, a session made or loaded with the package's MCP servers, the
/// prompt; cancelled on SIGTERM, or once the agent announced the call it stops at.
async fn turn(
    cx: &ConnectionTo<Agent>,
    cwd: std::path::PathBuf,
    (resume, servers): (Option<String>, Vec<McpServer>),
    (prompt, decided): (String, tokio::sync::watch::Receiver<bool>),
) -> Result<(), agent_client_protocol::Error> {
    let init = cx
        .send_request(
            InitializeRequest::new(ProtocolVersion::V1)
                .client_info(Implementation::new("assay", env!("CARGO_PKG_VERSION"))),
        )
        .block_task()
        .await?;
    let servers = usable(servers, &init.agent_capabilities.mcp_capabilities);
    let agent = init
        .agent_info
        .as_ref()
        .map(|i| format!("{} {}", i.name, i.version));
    let sid = match resume {
        Some(s) if init.agent_capabilities.load_session => {
            let sid = SessionId::new(s);
            cx.send_request(LoadSessionRequest::new(sid.clone(), cwd).mcp_servers(servers))
                .block_task()
                .await?;
            sid
        }
        Some(_) => {
            return Err(agent_client_protocol::Error::invalid_request().data(
                "the agent cannot load a session (no loadSession capability): later turns cannot resume it",
            ));
        }
        None => {
            cx.send_request(NewSessionRequest::new(cwd).mcp_servers(servers))
                .block_task()
                .await?
                .session_id
        }
    };
    let id = sid.to_string();
    if id.len() > MAX_SESSION_ID || id.chars().any(char::is_control) {
        return Err(agent_client_protocol::Error::invalid_request()
            .data("the agent's session id is not a short printable name"));
    }
    say(json!({"bridge": "session", "session_id": id, "agent": agent}));
    let cancel = {
        let (cx, sid, mut decided) = (cx.clone(), sid.clone(), decided);
        async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok()?;
            tokio::select! {
                _ = term.recv() => {}
                _ = stopped_at_call(&mut decided) => {}
            }
            say(json!({"bridge": "cancelled"}));
            cx.send_notification(CancelNotification::new(sid)).ok()
        }
    };
    cx.spawn(async move {
        cancel.await;
        Ok(())
    })?;
    let text = ContentBlock::Text(TextContent::new(prompt));
    let done = cx
        .send_request(PromptRequest::new(sid, vec![text]))
        .block_task()
        .await?;
    say(json!({"bridge": "stop", "stop_reason": done.stop_reason}));
    Ok(())
}

/// Allow, once if the agent offers it (the sandbox is the boundary), else reject (never
/// "cancelled", which would end the turn); printed as answered.
fn allow(req: &RequestPermissionRequest) -> RequestPermissionResponse {
    let pick = [
        PermissionOptionKind::AllowOnce,
        PermissionOptionKind::AllowAlways,
        PermissionOptionKind::RejectOnce,
        PermissionOptionKind::RejectAlways,
    ]
    .iter()
    .find_map(|k| req.options.iter().find(|o| o.kind == *k));
    say(json!({
        "bridge": "permission",
        "tool_call_id": req.tool_call.tool_call_id.to_string(),
        "option": pick.map(|o| o.option_id.to_string()),
        "kind": pick.map(|o| serde_json::to_value(o.kind).unwrap_or(Value::Null)),
    }));
    RequestPermissionResponse::new(match pick {
        Some(o) => {
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(o.option_id.clone()))
        }
        None => RequestPermissionOutcome::Cancelled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::CommandLine;

    #[test]
    fn the_skill_to_stop_at_is_taken_before_the_agent_s_command() {
        let args: Vec<String> = ["--stop-at-skill", "greeter", "--", "opencode", "acp"]
            .map(String::from)
            .to_vec();
        let a = parse(&args).unwrap();
        assert_eq!(a.stop_at.as_deref(), Some("greeter"));
        assert_eq!(a.argv, ["opencode", "acp"]);
        assert!(parse(&args[..1]).is_err());
        let mut line = CommandLine {
            program: "assay".into(),
            args: [SUBCOMMAND, "--resume", "s", "--", "opencode"]
                .map(String::from)
                .to_vec(),
            env: Vec::new(),
            stdin: None,
            shows: Vec::new(),
        };
        super::super::stop_at_call(&mut line, "greeter");
        let a = parse(&line.args[1..]).unwrap();
        assert_eq!(
            (a.stop_at.as_deref(), a.resume.as_deref()),
            (Some("greeter"), Some("s"))
        );
    }
}
