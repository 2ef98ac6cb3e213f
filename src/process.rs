//! Running one agent or script process under assay's control.
//!
//! The process gets its own session and process group, so a timeout can stop it and everything it started;
//! stdout is streamed line by line as it arrives; stderr keeps only a bounded tail; total
//! capture is capped. After the process exits, the group is killed too, so nothing it left
//! running in the background outlives the case-run.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

/// The longest stdout line handed on (a stream-json event with a large tool result fits);
/// a longer one is dropped whole and the output marked truncated.
pub const MAX_LINE: usize = 16 << 20;

/// The most of a command's stdout handed on, by default; the rest is drained and dropped.
pub const MAX_STDOUT: usize = 64 << 20;

/// What to run, with everything it may see.
#[derive(Debug, Clone)]
pub struct Spawn {
    pub program: String,
    pub args: Vec<String>,
    /// The complete environment: nothing of assay's own is inherited.
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// Written to stdin, which is then closed (an open stdin makes some CLIs wait forever).
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL on timeout.
    pub grace: Duration,
    /// Stop handing stdout lines on after this many bytes (the rest is drained and dropped).
    pub max_stdout: usize,
    /// How much of stderr's end to keep.
    pub stderr_tail: usize,
    /// Set when the run is interrupted (Ctrl-C): the process is stopped like on a timeout.
    pub cancel: Option<tokio::sync::watch::Receiver<bool>>,
    /// The program is a sandbox launcher (bubblewrap): it ignores SIGTERM and SIGINT, so the
    /// command inside gets them and its grace period rather than being killed with the
    /// launcher at once. (The command itself gets default handlers: assay's first process in
    /// the sandbox catches both, and caught signals are reset by `exec`.) It also gets a pipe
    /// as descriptor 3 ([`STATUS_FD`]), where the first process inside says that the command
    /// started; see [`Exited::started`].
    pub launcher: bool,
    /// stdout is one end of a socket pair rather than a pipe: a pipe can be opened again
    /// through `/proc/<pid>/fd/1` by anything the process starts (a tool call writing lines
    /// into an agent's transcript), a socket cannot.
    pub sealed_stdout: bool,
    /// Files the process writes `0` into before it runs, to join a case-run's control groups
    /// (`tasks` under cgroup v1, `cgroup.procs` under v2).
    pub join: Vec<PathBuf>,
    /// Resource limits (`RLIMIT_*`, value) set on the process before it runs.
    pub rlimits: Vec<(i32, u64)>,
    /// Asked while the process runs, on a thread of its own, as often as it says, and once
    /// more after it ended: a reason stops it at once, with no grace period
    /// ([`Exited::stopped_by`]).
    pub watch: Option<Watch>,
    /// Set by whoever reads its lines when one decides the outcome (a trigger run's skill
    /// loaded): the process is stopped at once after that line, with no grace period, and
    /// nothing it prints after it is read ([`Exited::decided`]).
    pub decided: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// How long a process stopped at a decisive line has after SIGTERM before SIGKILL: none
    /// for a CLI (killed at once); an ACP client's, to send `session/cancel` and stop its agent.
    pub decided_grace: Duration,
    /// Programs it starts besides itself (the ACP client's agent): a sandbox shows their
    /// folders as it shows the program's.
    pub shows: Vec<String>,
}

/// What a [`Watch`] said after one look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Look {
    /// Why the process must stop, when it must. The watch has stopped what it watches
    /// already; the process is killed at once, with no grace period.
    pub stop: Option<String>,
    /// When to look again.
    pub next: Duration,
}

/// A check made while a process runs (how much disk its case-run took), given the process's
/// id, and once more after it ended, given none.
#[derive(Clone)]
pub struct Watch(std::sync::Arc<dyn Fn(Option<u32>) -> Look + Send + Sync>);

impl Watch {
    pub fn new(check: impl Fn(Option<u32>) -> Look + Send + Sync + 'static) -> Watch {
        Watch(std::sync::Arc::new(check))
    }
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watch")
    }
}

impl Spawn {
    pub fn new(program: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Spawn {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: cwd.into(),
            stdin: None,
            timeout: Duration::from_secs(600),
            grace: Duration::from_secs(5),
            max_stdout: MAX_STDOUT,
            stderr_tail: 16 << 10,
            cancel: None,
            launcher: false,
            sealed_stdout: false,
            join: Vec::new(),
            rlimits: Vec::new(),
            watch: None,
            decided: None,
            decided_grace: Duration::ZERO,
            shows: Vec::new(),
        }
    }

    /// The program and those it starts, as a sandbox shows them.
    pub fn programs(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.shows.iter().cloned())
            .collect()
    }
}

/// How the process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exited {
    /// The exit code, or `None` when a signal ended it.
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// Stopped because the run was interrupted.
    pub interrupted: bool,
    pub duration: Duration,
    pub stdout_bytes: u64,
    /// Whether stdout passed `max_stdout` and lines were dropped.
    pub truncated: bool,
    pub stderr_tail: String,
    /// For a launcher: whether the command inside started (said on [`STATUS_FD`], which the
    /// command never has, so nothing it prints can fake it). `None` for other programs.
    pub started: Option<bool>,
    /// Why a [`Watch`] stopped the process, when one did.
    pub stopped_by: Option<String>,
    /// Stopped after the line that decided the outcome ([`Spawn::decided`]).
    pub decided: bool,
}

/// The descriptor a launcher's first process inside reports on.
pub const STATUS_FD: i32 = 3;

impl Exited {
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.timed_out && self.stopped_by.is_none()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("`{program}` is not installed or not on PATH")]
    NotFound { program: String },
    #[error("cannot start `{program}`: {source}")]
    Io {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

/// Runs the process to its end, calling `on_line` with each stdout line (without the newline)
/// as it arrives.
pub async fn run(spawn: &Spawn, mut on_line: impl FnMut(&str)) -> Result<Exited, SpawnError> {
    let started = Instant::now();
    let Started {
        mut child,
        sealed,
        status_r,
    } = start(spawn)?;
    let pgid = child.id().map(|id| id as i32);
    let _live = pgid.map(LiveGroup::register);
    // Watched from the start to the end of the whole process group, grace period included.
    let (mut watched, watching) = match (&spawn.watch, child.id()) {
        (Some(w), Some(pid)) => watching(w.clone(), pid),
        _ => (None, None),
    };

    if let (Some(bytes), Some(mut stdin)) = (spawn.stdin.clone(), child.stdin.take()) {
        // A child that exits without reading its input must not fail the run.
        tokio::spawn(async move {
            let _ = stdin.write_all(&bytes).await;
            let _ = stdin.shutdown().await;
        });
    }

    let stderr = child.stderr.take().expect("stderr is piped");
    let tail_len = spawn.stderr_tail;
    let stderr_task = tokio::spawn(async move { read_tail(stderr, tail_len).await });

    let stdout: Box<dyn tokio::io::AsyncRead + Unpin + Send> = match sealed {
        Some(s) => Box::new(s),
        None => Box::new(child.stdout.take().expect("stdout is piped")),
    };
    let deadline = tokio::time::Instant::now() + spawn.timeout;
    let mut cancel = spawn.cancel.clone();
    let mut reader = BufReader::new(stdout);
    let mut read = StdoutRead::default();
    let watch = (&mut watched, &mut cancel);
    read_stdout(&mut reader, &mut read, spawn, deadline, watch, &mut on_line).await;
    let ending = std::mem::take(&mut read.ended);
    let (status, ended, why) = if ending == Ended::Closed {
        // stdout closed: the process is ending; it still answers to the deadline.
        wait_out(
            pgid,
            &mut child,
            spawn,
            deadline,
            (&mut watched, &mut cancel),
        )
        .await
    } else {
        let stopping = (pgid, &mut child, &mut reader);
        let watch = (spawn, &mut watched);
        let (status, why) = stop_reading(stopping, &mut read, &ending, watch, &mut on_line).await;
        (status, ending, why)
    };
    // Whatever the process left running in its group goes with it.
    kill_group(pgid, rustix::process::Signal::KILL);
    // A look under way as the process ended is heard out.
    let heard = match watching {
        Some(w) => w.end(&mut watched).await,
        None => None,
    };
    let stopped_by = match (&ended, why.or(heard)) {
        (Ended::Stopped(why), _) => Some(why.clone()),
        (_, Some(why)) => Some(why),
        // One look more once the process is gone: what it wrote to the last.
        (_, None) => last_look(spawn.watch.clone()).await,
    };

    let stderr_tail = match tokio::time::timeout(Duration::from_secs(2), stderr_task).await {
        Ok(Ok(t)) => t,
        _ => String::new(),
    };
    use std::os::unix::process::ExitStatusExt;
    // Whatever was said on the status pipe is in its buffer by now.
    let command_started = status_r.map(|r| {
        let mut buf = [0u8; 16];
        let n = rustix::io::read(&r, &mut buf).unwrap_or(0);
        buf[..n].contains(&b'1')
    });
    Ok(Exited {
        code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        timed_out: ended == Ended::TimedOut,
        interrupted: ended == Ended::Interrupted,
        duration: started.elapsed(),
        stdout_bytes: read.stdout_bytes,
        truncated: read.truncated,
        stderr_tail,
        started: command_started,
        stopped_by,
        decided: ended == Ended::Decided,
    })
}

/// A started process: the child, the other end of a sealed stdout, and the read end of a
/// launcher's status pipe.
struct Started {
    child: tokio::process::Child,
    sealed: Option<tokio::net::UnixStream>,
    status_r: Option<std::os::fd::OwnedFd>,
}

/// Starts `spawn`'s process, in a session of its own, with only what it is given.
fn start(spawn: &Spawn) -> Result<Started, SpawnError> {
    let mut cmd = Command::new(&spawn.program);
    cmd.args(&spawn.args)
        .env_clear()
        .envs(spawn.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spawn.cwd)
        .stdin(if spawn.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let io_error = |source| SpawnError::Io {
        program: spawn.program.clone(),
        source,
    };
    let sealed = stdout_for(&mut cmd, spawn.sealed_stdout).map_err(io_error)?;
    // A session of its own (and so a process group of its own, for stopping it and all it
    // started): without a controlling terminal, nothing it runs can open assay's terminal
    // (`/dev/tty`) to read it or push keystrokes into it (TIOCSTI).
    // The launcher's status pipe: (read end, write end), both close-on-exec here.
    let status = if spawn.launcher {
        let fds = status_pipe().map_err(io_error)?;
        // SAFETY: both are fresh descriptors that nothing else owns.
        unsafe {
            Some((
                std::os::fd::OwnedFd::from_raw_fd(fds[0]),
                std::os::fd::OwnedFd::from_raw_fd(fds[1]),
            ))
        }
    } else {
        None
    };
    let status_w = status.as_ref().map(|(_, w)| w.as_raw_fd());
    before_exec(&mut cmd, spawn, status_w).map_err(io_error)?;
    let spawned = cmd.spawn();
    // The command holds the child's end of a sealed stdout until it goes.
    drop(cmd);
    // Only the launcher keeps the write end: the pipe says only what it says.
    let status_r = status.map(|(r, _w)| r);
    let child = spawned.map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => SpawnError::NotFound {
            program: spawn.program.clone(),
        },
        _ => SpawnError::Io {
            program: spawn.program.clone(),
            source,
        },
    })?;
    Ok(Started {
        child,
        sealed,
        status_r,
    })
}

/// The watch's receiver and the interrupt, which end a wait.
type Stops<'a> = (
    &'a mut Option<tokio::sync::oneshot::Receiver<String>>,
    &'a mut Option<tokio::sync::watch::Receiver<bool>>,
);

/// Waits for a process whose stdout closed, until the deadline, an interrupt or the watch;
/// the first two stop it with its grace period, the watch at once. How it ended, and why the
/// watch stopped it in its grace period if it did.
async fn wait_out(
    pgid: Option<i32>,
    child: &mut tokio::process::Child,
    spawn: &Spawn,
    deadline: tokio::time::Instant,
    (watched, cancel): Stops<'_>,
) -> (Option<std::process::ExitStatus>, Ended, Option<String>) {
    let wait = tokio::time::timeout_at(deadline, child.wait());
    let ended = tokio::select! {
        w = wait => match w {
            Ok(s) => return (s.ok(), Ended::Closed, None),
            Err(_) => Ended::TimedOut,
        },
        _ = cancelled(cancel) => Ended::Interrupted,
        why = said(watched) => Ended::Stopped(why),
    };
    let (status, why) = stop_group(pgid, child, grace_for(&ended, spawn), watched).await;
    (status, ended, why)
}

/// The grace period of a process stopped for `ended`: none when the watch stopped it.
fn grace_for(ended: &Ended, spawn: &Spawn) -> Duration {
    match ended {
        Ended::Stopped(_) | Ended::Decided => Duration::ZERO,
        _ => spawn.grace,
    }
}

/// Stops the process group while still reading its stdout: what it says while it stops (how
/// an ACP client's cancelled turn ended) is kept, within the grace period (none when the
/// watch stopped it) and a second more for what is still buffered. The watch, still asked
/// through the grace period, may end it sooner: then why comes back.
async fn stop_reading(
    (pgid, child, reader): (
        Option<i32>,
        &mut tokio::process::Child,
        &mut BufReader<Box<dyn tokio::io::AsyncRead + Unpin + Send>>,
    ),
    read: &mut StdoutRead,
    ended: &Ended,
    (spawn, watched): (&Spawn, &mut Option<tokio::sync::oneshot::Receiver<String>>),
    on_line: &mut impl FnMut(&str),
) -> (Option<std::process::ExitStatus>, Option<String>) {
    if *ended == Ended::Decided {
        // Nothing it says after the deciding line is read: it is stopped, unheard.
        return stop_group(pgid, child, spawn.decided_grace, watched).await;
    }
    let grace = grace_for(ended, spawn);
    let until = tokio::time::Instant::now() + grace + Duration::from_secs(1);
    let mut stopping = StdoutRead::default();
    let (mut no_watch, mut no_cancel) = (None, None);
    let ((status, why), ()) = tokio::join!(
        stop_group(pgid, child, grace, watched),
        read_stdout(
            reader,
            &mut stopping,
            spawn,
            until,
            (&mut no_watch, &mut no_cancel),
            on_line
        )
    );
    read.stdout_bytes += stopping.stdout_bytes;
    read.truncated |= stopping.truncated;
    (status, why)
}

/// How reading a process's stdout ended.
#[derive(Debug, Default, PartialEq, Eq)]
enum Ended {
    /// stdout closed.
    #[default]
    Closed,
    TimedOut,
    Interrupted,
    /// A [`Watch`] said why.
    Stopped(String),
    /// A line decided the outcome ([`Spawn::decided`]).
    Decided,
}

/// What reading stdout came to.
#[derive(Default)]
struct StdoutRead {
    stdout_bytes: u64,
    truncated: bool,
    ended: Ended,
}

/// Reads stdout line by line into `out` until it closes, the deadline passes, the run is
/// interrupted or the watch stops it; each line (within [`MAX_LINE`] and `max_stdout`) goes
/// to `on_line`.
async fn read_stdout(
    reader: &mut BufReader<Box<dyn tokio::io::AsyncRead + Unpin + Send>>,
    out: &mut StdoutRead,
    spawn: &Spawn,
    deadline: tokio::time::Instant,
    (watched, cancel): Stops<'_>,
    on_line: &mut impl FnMut(&str),
) {
    let mut line = Vec::new();
    // Inside a line longer than MAX_LINE: its rest is read in pieces and dropped.
    let mut skipping = false;
    loop {
        line.clear();
        // One line at most MAX_LINE bytes in memory, however long the agent makes it.
        let mut bounded = (&mut *reader).take(MAX_LINE as u64);
        let read = tokio::time::timeout_at(deadline, bounded.read_until(b'\n', &mut line));
        let read = tokio::select! {
            r = read => Ok(r),
            _ = cancelled(cancel) => Err(Ended::Interrupted),
            why = said(watched) => Err(Ended::Stopped(why)),
        };
        let read = match read {
            Ok(r) => r.map_err(|_| Ended::TimedOut),
            Err(ended) => Err(ended),
        };
        let n = match read {
            Err(ended) => {
                out.ended = ended;
                return;
            }
            Ok(Ok(0)) | Ok(Err(_)) => return,
            Ok(Ok(n)) => n,
        };
        out.stdout_bytes += n as u64;
        let ends = line.last() == Some(&b'\n');
        if skipping || (!ends && n >= MAX_LINE) {
            out.truncated = true;
            skipping = !ends;
            continue;
        }
        if out.stdout_bytes as usize > spawn.max_stdout {
            out.truncated = true;
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        on_line(text.trim_end_matches(['\n', '\r']));
        if spawn
            .decided
            .as_ref()
            .is_some_and(|d| d.load(std::sync::atomic::Ordering::Acquire))
        {
            out.ended = Ended::Decided;
            return;
        }
    }
}

/// stdout for `cmd`: a pipe, or (sealed) one end of a socket pair, whose other end is returned.
fn stdout_for(cmd: &mut Command, sealed: bool) -> std::io::Result<Option<tokio::net::UnixStream>> {
    if !sealed {
        cmd.stdout(Stdio::piped());
        return Ok(None);
    }
    let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
    theirs.shutdown(std::net::Shutdown::Read)?;
    ours.shutdown(std::net::Shutdown::Write)?;
    ours.set_nonblocking(true)?;
    cmd.stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs)));
    tokio::net::UnixStream::from_std(ours).map(Some)
}

/// What the child does between `fork` and `exec`: a session of its own, no inherited
/// descriptor, the control groups joined and the limits set; for a launcher, its status pipe
/// at [`STATUS_FD`] and SIGTERM and SIGINT ignored.
fn before_exec(cmd: &mut Command, spawn: &Spawn, status_w: Option<i32>) -> std::io::Result<()> {
    let join = cstrings(&spawn.join)?;
    let rlimits = spawn.rlimits.clone();
    // SAFETY: setsid, fcntl, dup2, open, write, close, setrlimit and signal are
    // async-signal-safe and touch no memory of this process but what was made before `fork`.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::setsid()?;
            // Nothing but stdin, stdout and stderr crosses: a descriptor assay inherited (a
            // folder, a pipe, a socket of whatever started it) would reach past any sandbox.
            close_inherited_fds();
            for procs in &join {
                join_group(procs)?;
            }
            for (resource, value) in &rlimits {
                let limit = libc::rlimit {
                    rlim_cur: *value,
                    rlim_max: *value,
                };
                if libc::setrlimit(*resource as _, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if let Some(w) = status_w {
                if w == STATUS_FD {
                    libc::fcntl(w, libc::F_SETFD, 0);
                } else if libc::dup2(w, STATUS_FD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::signal(libc::SIGTERM, libc::SIG_IGN);
                libc::signal(libc::SIGINT, libc::SIG_IGN);
            }
            Ok(())
        });
    }
    Ok(())
}

/// A pipe, both ends close-on-exec and non-blocking.
fn status_pipe() -> std::io::Result<[libc::c_int; 2]> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 (pipe and fcntl elsewhere) fills and flags the two descriptors.
    unsafe {
        #[cfg(target_os = "linux")]
        let made = libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) == 0;
        #[cfg(not(target_os = "linux"))]
        let made = libc::pipe(fds.as_mut_ptr()) == 0
            && fds.iter().all(|fd| {
                libc::fcntl(*fd, libc::F_SETFD, libc::FD_CLOEXEC) == 0
                    && libc::fcntl(*fd, libc::F_SETFL, libc::O_NONBLOCK) == 0
            });
        if !made {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(fds)
}

/// Marks every descriptor from 3 up close-on-exec. Async-signal-safe: for `pre_exec`.
fn close_inherited_fds() {
    #[cfg(target_os = "linux")]
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: system calls on descriptors only.
    unsafe {
        #[cfg(target_os = "linux")]
        let ranged = libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) == 0;
        #[cfg(not(target_os = "linux"))]
        let ranged = false;
        if !ranged {
            // Before Linux 5.11, and elsewhere: one by one, up to the descriptor limit.
            let max = match libc::sysconf(libc::_SC_OPEN_MAX) {
                n if n > 0 => n.min(1 << 20) as libc::c_int,
                _ => 1024,
            };
            for fd in 3..max {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
    }
}

/// Resolves when the run is interrupted; never, without a cancel signal.
async fn cancelled(cancel: &mut Option<tokio::sync::watch::Receiver<bool>>) {
    match cancel {
        Some(rx) => {
            if rx.wait_for(|c| *c).await.is_err() {
                // The sender is gone: no interrupt can come any more.
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending().await,
    }
}

/// Looks with `watch` at process `pid` on a thread of its own, as often as it asks, until a
/// look says to stop (the reason comes out of the receiver) or [`Watching::end`]. No thread
/// (the system refused one): no receiver, and only the last look.
fn watching(
    watch: Watch,
    pid: u32,
) -> (
    Option<tokio::sync::oneshot::Receiver<String>>,
    Option<Watching>,
) {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (done, ended) = std::sync::mpsc::channel::<()>();
    let looking = std::thread::Builder::new()
        .name("assay-watch".into())
        .spawn(move || {
            let mut next = Duration::ZERO;
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = ended.recv_timeout(next) {
                let look = (watch.0)(Some(pid));
                if let Some(why) = look.stop {
                    // Heard by the run, or by `Watching::end` once it ended.
                    let _ = tx.send(why);
                    return;
                }
                next = look.next;
            }
        });
    match looking {
        Ok(thread) => (Some(rx), Some(Watching { done, thread })),
        Err(_) => (None, None),
    }
}

/// The thread looking with a watch.
struct Watching {
    done: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Watching {
    /// Ends the looking, waiting out a look under way; the reason it gave to stop, if it gave
    /// one that `watched` did not hand on yet.
    async fn end(
        self,
        watched: &mut Option<tokio::sync::oneshot::Receiver<String>>,
    ) -> Option<String> {
        drop(self.done);
        let thread = self.thread;
        // A look that panicked said nothing.
        let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        watched.take()?.try_recv().ok()
    }
}

/// The watch's look once the process ended, off the async runtime.
async fn last_look(watch: Option<Watch>) -> Option<String> {
    let w = watch?;
    tokio::task::spawn_blocking(move || (w.0)(None).stop)
        .await
        .ok()
        .flatten()
}

/// The reason a watch gave, or never (and never again once given).
async fn said(watched: &mut Option<tokio::sync::oneshot::Receiver<String>>) -> String {
    let Some(rx) = watched.as_mut() else {
        return std::future::pending().await;
    };
    let said = rx.await;
    *watched = None;
    match said {
        Ok(why) => why,
        Err(_) => std::future::pending().await,
    }
}

/// Paths as C strings, made before `fork` (the child may not allocate).
fn cstrings(paths: &[PathBuf]) -> std::io::Result<Vec<std::ffi::CString>> {
    use std::os::unix::ffi::OsStrExt;
    paths
        .iter()
        .map(|p| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other))
        .collect()
}

/// In the child before `exec` (one thread): joins a control group by writing `0` (itself)
/// to its `tasks` or `cgroup.procs`. Async-signal-safe: open, write, close.
fn join_group(procs: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: a NUL-terminated path and a one-byte buffer that outlive the calls.
    unsafe {
        let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let wrote = libc::write(fd, b"0".as_ptr().cast(), 1);
        libc::close(fd);
        if wrote != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Process groups alive now, so a second Ctrl-C can kill them all at once.
static LIVE_GROUPS: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// A registered process group, unregistered when dropped.
struct LiveGroup(i32);

impl LiveGroup {
    fn register(pgid: i32) -> LiveGroup {
        if let Ok(mut g) = LIVE_GROUPS.lock() {
            g.push(pgid);
        }
        LiveGroup(pgid)
    }
}

impl Drop for LiveGroup {
    fn drop(&mut self) {
        if let Ok(mut g) = LIVE_GROUPS.lock() {
            g.retain(|p| *p != self.0);
        }
    }
}

/// SIGKILL to every process group assay started that is still alive.
pub fn kill_all_groups() {
    let groups = LIVE_GROUPS.lock().map(|g| g.clone()).unwrap_or_default();
    for pgid in groups {
        kill_group(Some(pgid), rustix::process::Signal::KILL);
    }
}

/// SIGTERM to the group, then SIGKILL after `grace` (at once without one), or as soon as the
/// watch says to stop; returns the exit status, and why the watch stopped it if it did.
async fn stop_group(
    pgid: Option<i32>,
    child: &mut tokio::process::Child,
    grace: Duration,
    watched: &mut Option<tokio::sync::oneshot::Receiver<String>>,
) -> (Option<std::process::ExitStatus>, Option<String>) {
    let mut why = None;
    if !grace.is_zero() {
        kill_group(pgid, rustix::process::Signal::TERM);
        let waited = tokio::select! {
            w = tokio::time::timeout(grace, child.wait()) => w.ok(),
            said = said(watched) => {
                why = Some(said);
                None
            }
        };
        if let Some(s) = waited {
            return (s.ok(), why);
        }
    }
    kill_group(pgid, rustix::process::Signal::KILL);
    let _ = child.start_kill();
    (child.wait().await.ok(), why)
}

fn kill_group(pgid: Option<i32>, signal: rustix::process::Signal) {
    if let Some(pid) = pgid.and_then(rustix::process::Pid::from_raw) {
        // The group may already be gone; that is the point.
        let _ = rustix::process::kill_process_group(pid, signal);
    }
}

/// Reads a stream to its end, keeping only its last `keep` bytes.
async fn read_tail(mut r: impl tokio::io::AsyncRead + Unpin, keep: usize) -> String {
    let mut tail: VecDeque<u8> = VecDeque::with_capacity(keep.min(1 << 16));
    let mut buf = [0u8; 8192];
    while let Ok(n) = r.read(&mut buf).await {
        if n == 0 {
            break;
        }
        tail.extend(&buf[..n]);
        while tail.len() > keep {
            tail.pop_front();
        }
    }
    String::from_utf8_lossy(tail.make_contiguous()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Spawn {
        let mut s = Spawn::new("sh", std::env::temp_dir());
        s.args = vec!["-c".into(), script.into()];
        s.env = vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())];
        s
    }

    #[tokio::test]
    async fn streams_lines_and_keeps_a_stderr_tail() {
        let mut s = sh("echo one; echo two; echo oops >&2; exit 3");
        s.stderr_tail = 3;
        let mut lines = Vec::new();
        let e = run(&s, |l| lines.push(l.to_string())).await.unwrap();
        assert_eq!(lines, ["one", "two"]);
        assert_eq!(e.code, Some(3));
        assert_eq!(e.stderr_tail, "ps\n");
        assert!(!e.timed_out);
    }

    #[tokio::test]
    async fn a_sealed_stdout_cannot_be_opened_again_by_what_the_process_starts() {
        // A child of the process writes into its parent's stdout through /proc.
        let script = "echo first; sh -c 'echo forged > /proc/$PPID/fd/1' 2>/dev/null; echo last";
        let mut s = sh(script);
        let mut lines = Vec::new();
        run(&s, |l| lines.push(l.to_string())).await.unwrap();
        assert_eq!(lines, ["first", "forged", "last"], "a pipe can be reopened");
        s.sealed_stdout = true;
        let mut lines = Vec::new();
        let e = run(&s, |l| lines.push(l.to_string())).await.unwrap();
        assert_eq!(lines, ["first", "last"]);
        assert!(e.success());
    }

    #[tokio::test]
    async fn stdin_is_written_then_closed() {
        let mut s = sh("cat");
        s.stdin = Some(b"a\nb".to_vec());
        let mut lines = Vec::new();
        let e = run(&s, |l| lines.push(l.to_string())).await.unwrap();
        assert!(e.success());
        assert_eq!(lines, ["a", "b"]);
    }

    #[tokio::test]
    async fn the_environment_is_only_what_is_given() {
        let mut s = sh("echo \"home=$HOME\"");
        s.env.push(("HOME".into(), "/private/home".into()));
        let mut lines = Vec::new();
        run(&s, |l| lines.push(l.to_string())).await.unwrap();
        assert_eq!(lines, ["home=/private/home"]);
    }

    #[tokio::test]
    async fn caps_captured_output() {
        let mut s = sh("i=0; while [ $i -lt 100 ]; do echo 123456789; i=$((i+1)); done");
        s.max_stdout = 50;
        let mut n = 0;
        let e = run(&s, |_| n += 1).await.unwrap();
        assert_eq!(n, 5);
        assert!(e.truncated);
        assert_eq!(e.stdout_bytes, 1000);
    }

    #[tokio::test]
    async fn the_process_leads_a_session_of_its_own_without_a_terminal() {
        // Field 6 of /proc/<pid>/stat is the session id, field 7 the controlling terminal.
        let s = sh("cut -d' ' -f1,6,7 /proc/$$/stat");
        let mut lines = Vec::new();
        run(&s, |l| lines.push(l.to_string())).await.unwrap();
        let f: Vec<&str> = lines[0].split(' ').collect();
        assert_eq!(f[0], f[1], "session id is its own pid: {lines:?}");
        assert_eq!(f[2], "0", "no controlling terminal: {lines:?}");
    }

    #[tokio::test]
    async fn a_line_longer_than_the_cap_is_dropped_whole_and_the_next_kept() {
        let s = sh(&format!(
            "head -c {} /dev/zero | tr '\\0' x; echo; echo next",
            MAX_LINE * 2 + 5
        ));
        let mut lines = Vec::new();
        let e = run(&s, |l| lines.push(l.len())).await.unwrap();
        assert_eq!(lines, [4], "only `next` is handed on");
        assert!(e.truncated);
    }

    #[tokio::test]
    async fn a_missing_program_is_named() {
        let s = Spawn::new("assay-no-such-program", std::env::temp_dir());
        match run(&s, |_| {}).await {
            Err(SpawnError::NotFound { program }) => assert_eq!(program, "assay-no-such-program"),
            other => panic!("{other:?}"),
        }
    }

    /// Running, not a zombie waiting for a reaper (which in a container may never come).
    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
            .unwrap_or(false)
    }

    fn read_pid(file: &std::path::Path) -> i32 {
        std::fs::read_to_string(file)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// Whether `pid` is gone within a second.
    fn dies_soon(pid: i32) -> bool {
        (0..50).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            !alive(pid)
        })
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group_grandchildren_too() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild.pid");
        // The grandchild ignores nothing special; the parent traps TERM and keeps going, so
        // only SIGKILL after the grace period ends it.
        let script = format!(
            "sleep 300 & echo $! > {}; trap '' TERM; echo started; while true; do sleep 1; done",
            pidfile.display()
        );
        let mut s = sh(&script);
        s.timeout = Duration::from_millis(800);
        s.grace = Duration::from_millis(300);
        let t = Instant::now();
        let mut lines = Vec::new();
        let e = run(&s, |l| lines.push(l.to_string())).await.unwrap();
        assert!(e.timed_out);
        assert_eq!(lines, ["started"]);
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "took {:?}",
            t.elapsed()
        );
        let pid = read_pid(&pidfile);
        assert!(dies_soon(pid), "grandchild {pid} survived the timeout");
    }

    /// A watch that says to stop when `flag` exists (given a running process, or `after`: once
    /// it ended).
    fn stop_when(flag: std::path::PathBuf, after: bool) -> Watch {
        Watch::new(move |pid| Look {
            stop: (flag.exists() && (pid.is_some() || after)).then(|| "past".to_string()),
            next: Duration::from_millis(20),
        })
    }

    #[tokio::test]
    async fn a_watch_stops_the_process_at_once_even_in_its_grace_period() {
        let dir = tempfile::tempdir().unwrap();
        let flag = dir.path().join("late");
        // After the timeout's SIGTERM it goes on; then the watch sees it and it is killed
        // without waiting out the 30 s grace.
        let mut s = sh(&format!(
            "trap 'touch {}' TERM; echo started; while true; do sleep 0.05; done",
            flag.display()
        ));
        s.timeout = Duration::from_millis(300);
        s.grace = Duration::from_secs(30);
        s.watch = Some(stop_when(flag.clone(), false));
        let e = run(&s, |_| {}).await.unwrap();
        assert!(e.timed_out);
        assert_eq!(e.stopped_by.as_deref(), Some("past"));
        assert!(e.duration < Duration::from_secs(5), "{:?}", e.duration);
        // Past the watch from the start: no grace either.
        let mut s = sh("trap '' TERM; while true; do sleep 0.05; done");
        s.grace = Duration::from_secs(30);
        s.watch = Some(stop_when(flag, false));
        let e = run(&s, |_| {}).await.unwrap();
        assert_eq!(e.stopped_by.as_deref(), Some("past"));
        assert!(e.duration < Duration::from_secs(5), "{:?}", e.duration);
    }

    #[tokio::test]
    async fn a_deciding_line_stops_the_process_at_once_and_nothing_after_it_is_read() {
        // It ignores SIGTERM and would print more and run 30 s: the deciding line ends it.
        let mut s = sh("trap '' TERM; echo a; echo DECIDE; echo b; sleep 30; echo c");
        s.grace = Duration::from_secs(30);
        let decided = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        s.decided = Some(decided.clone());
        let mut seen = Vec::new();
        let e = run(&s, |l| {
            seen.push(l.to_string());
            if l == "DECIDE" {
                decided.store(true, std::sync::atomic::Ordering::Release);
            }
        })
        .await
        .unwrap();
        assert!(e.decided && !e.timed_out && !e.interrupted, "{e:?}");
        assert_eq!(seen, ["a", "DECIDE"]);
        assert!(e.duration < Duration::from_secs(10), "{:?}", e.duration);
    }

    #[tokio::test]
    async fn the_watch_looks_once_more_after_the_process_ended() {
        let dir = tempfile::tempdir().unwrap();
        let flag = dir.path().join("written");
        let mut s = sh(&format!("touch {}; exit 0", flag.display()));
        s.watch = Some(stop_when(flag, true));
        let e = run(&s, |_| {}).await.unwrap();
        assert_eq!(e.stopped_by.as_deref(), Some("past"));
        assert!(!e.success());
    }

    #[tokio::test]
    async fn background_children_do_not_outlive_a_normal_exit() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("bg.pid");
        let s = sh(&format!(
            "sleep 300 > /dev/null 2>&1 & echo $! > {}; exit 0",
            pidfile.display()
        ));
        let e = run(&s, |_| {}).await.unwrap();
        assert_eq!(e.code, Some(0));
        let pid = read_pid(&pidfile);
        assert!(dies_soon(pid), "background child {pid} survived");
    }
}
