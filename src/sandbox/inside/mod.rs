//! `assay-sandbox-init` (or `assay __sandbox-exec`): the first process inside a sandbox. It opens the sandbox's side of
//! the network (loopback listeners that lead to the host's Unix sockets, and a `CONNECT`
//! proxy for `https` endpoints), runs the command, and exits as it does. It outlives SIGTERM
//! so the command gets its grace period; when it exits, bubblewrap's init ends and the kernel
//! kills everything left in the sandbox's PID namespace.
//!
//! With a copy-on-write workspace it first mounts the workspace's overlay (bubblewrap granted
//! it the capabilities for that alone), unmounts the layers' own folders so nothing inside
//! writes to them behind the overlay's back, and drops every capability for good.
//!
//! Arguments: `[--overlay-at DIR --overlay-lower DIR… --overlay-upper DIR --overlay-work DIR
//! [--hide DIR]…] [--cwd DIR] [--listen PORT=SOCKET]… [--proxy PORT [--route HOST:PORT=SOCKET]…] --
//! PROGRAM ARGS…`

#![cfg_attr(not(target_os = "linux"), allow(unused_imports, dead_code))]

mod confine;
#[cfg(target_os = "linux")]
mod reap;

use std::collections::HashMap;
use std::process::ExitCode;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;

#[allow(dead_code)] // not by the small binary, which includes this file too
pub const SUBCOMMAND: &str = "__sandbox-exec";
/// The small binary that runs this, installed beside `assay`.
#[allow(dead_code)]
pub const HELPER_BIN: &str = "assay-sandbox-init";

/// The parsed arguments.
#[derive(Debug, Default, PartialEq, Eq)]
struct Args {
    listen: Vec<(u16, String)>,
    proxy: Option<u16>,
    routes: HashMap<String, String>,
    overlay: Option<Overlay>,
    /// Mounts to take away once the overlay is up (the layers' folders).
    hide: Vec<String>,
    /// Where the command runs, entered after the overlay is mounted (it may exist only there).
    cwd: Option<String>,
    /// The `landlock` backend: the command's rules, and how long it may take to stop.
    landlock: Option<Landlock>,
    argv: Vec<String>,
}

/// `--landlock [--read P]… [--write P]… [--device P]… [--connect PORT]… [--host-network]
/// [--grace-ms N]`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Landlock {
    rules: confine::Rules,
    grace_ms: u64,
}

/// The workspace's overlay: mounted at `at`, the lower layers top first.
#[derive(Debug, Default, PartialEq, Eq)]
struct Overlay {
    at: String,
    lower: Vec<String>,
    upper: String,
    work: String,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut out = Args::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--listen" => {
                let v = value("--listen")?;
                let (port, sock) = v.split_once('=').ok_or("--listen PORT=SOCKET")?;
                let port = port.parse().map_err(|_| format!("bad port in {v}"))?;
                out.listen.push((port, sock.to_string()));
            }
            "--proxy" => {
                let v = value("--proxy")?;
                out.proxy = Some(v.parse().map_err(|_| format!("bad port {v}"))?);
            }
            "--overlay-at" => out.overlay.get_or_insert_with(Default::default).at = value(a)?,
            "--overlay-lower" => {
                let v = value(a)?;
                out.overlay
                    .get_or_insert_with(Default::default)
                    .lower
                    .push(v);
            }
            "--overlay-upper" => out.overlay.get_or_insert_with(Default::default).upper = value(a)?,
            "--overlay-work" => out.overlay.get_or_insert_with(Default::default).work = value(a)?,
            "--hide" => out.hide.push(value(a)?),
            "--landlock" => {
                out.landlock.get_or_insert_with(Default::default);
            }
            "--read" | "--write" | "--device" | "--connect" | "--host-network" | "--grace-ms" => {
                let l = out.landlock.get_or_insert_with(Default::default);
                let r = &mut l.rules;
                match a.as_str() {
                    "--read" => r.read.push(value(a)?),
                    "--write" => r.write.push(value(a)?),
                    "--device" => r.devices.push(value(a)?),
                    "--connect" => {
                        let v = value(a)?;
                        r.connect
                            .push(v.parse().map_err(|_| format!("bad port {v}"))?);
                    }
                    "--grace-ms" => {
                        let v = value(a)?;
                        l.grace_ms = v.parse().map_err(|_| format!("bad grace {v}"))?;
                    }
                    _ => r.host_network = true,
                }
            }
            "--cwd" => out.cwd = Some(value(a)?),
            "--route" => {
                let v = value("--route")?;
                let (target, sock) = v.split_once('=').ok_or("--route HOST:PORT=SOCKET")?;
                out.routes
                    .insert(target.to_ascii_lowercase(), sock.to_string());
            }
            "--" => {
                out.argv = it.cloned().collect();
                break;
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if out.argv.is_empty() {
        return Err("no command".into());
    }
    if let Some(o) = &out.overlay
        && (o.at.is_empty() || o.lower.is_empty() || o.upper.is_empty() || o.work.is_empty())
    {
        return Err(
            "--overlay-at, --overlay-lower, --overlay-upper and --overlay-work go together".into(),
        );
    }
    Ok(out)
}

/// Runs inside the sandbox; `args` are those after the subcommand. Plain threads, std and
/// libc only (`src/bin/assay-sandbox-init.rs` builds this folder alone into a small binary):
/// this runs once per command, and its start-up is the sandbox's cost.
pub fn main(args: &[String]) -> ExitCode {
    let args = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("assay sandbox: {e}");
            return ExitCode::from(125);
        }
    };
    #[cfg(target_os = "linux")]
    return ExitCode::from(run(args));
    #[cfg(not(target_os = "linux"))]
    {
        let _ = args;
        eprintln!("assay sandbox: the first process inside a sandbox runs on Linux only");
        ExitCode::from(125)
    }
}

#[cfg(target_os = "linux")]
/// Does nothing: SIGTERM and SIGINT are for the command (it is in the same process group);
/// this process waits for it to end. A handler, not SIG_IGN, so `exec` resets it for the
/// command.
extern "C" fn ignore(_: libc::c_int) {}

#[cfg(target_os = "linux")]
/// The descriptor assay reads "started" from (see `process::STATUS_FD`).
const STATUS_FD: libc::c_int = 3;

#[cfg(target_os = "linux")]
fn run(args: Args) -> u8 {
    if let Some(l) = &args.landlock {
        return landlocked(l, &args);
    }
    if let Some(o) = &args.overlay {
        if let Err(e) = mount_overlay(o, &args.hide) {
            eprintln!(
                "assay sandbox: cannot mount the workspace's overlay on {}: {e}",
                o.at
            );
            return 125;
        }
        if let Err(e) = confine::drop_capabilities() {
            eprintln!("assay sandbox: cannot drop capabilities: {e}");
            return 125;
        }
    }
    if let Some(cwd) = &args.cwd
        && let Err(e) = std::env::set_current_dir(cwd)
    {
        eprintln!("assay sandbox: cannot enter {cwd}: {e}");
        return 125;
    }
    // SAFETY: installing a handler that does nothing; marking a descriptor close-on-exec.
    let status = unsafe {
        libc::signal(libc::SIGTERM, ignore as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, ignore as *const () as libc::sighandler_t);
        // The command never holds the status pipe.
        libc::fcntl(STATUS_FD, libc::F_SETFD, libc::FD_CLOEXEC) == 0
    };
    if let Err(e) = confine::seal_self() {
        eprintln!("assay sandbox: cannot seal the first process inside: {e}");
        return 125;
    }
    // Bound before the command starts, so it never finds a port closed; served after, so the
    // command is forked from a process with no other thread.
    let listeners = listen(&args);
    let mut command = std::process::Command::new(&args.argv[0]);
    command.args(&args.argv[1..]);
    let mut guard = confine::proc_guard();
    // SAFETY: prctl with a filter that lives in static memory, and the ruleset's syscall;
    // this process runs no other thread yet.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(move || {
            confine::filter(confine::Sockets::NotUnix, confine::Namespaces::Own)?;
            guard.take().map_or(Ok(()), confine::guard)
        });
    }
    let mut child = match start(&mut command, &args.argv[0], status) {
        Ok(c) => c,
        Err(code) => return code,
    };
    listeners.serve(&args.routes);
    let Ok(status) = child.wait() else {
        return 1;
    };
    use std::os::unix::process::ExitStatusExt;
    exit_code(status.into_raw())
}

/// The sandbox's side of the network, bound and not yet served.
struct Listeners {
    /// Loopback listeners, each leading to one host socket.
    relays: Vec<(TcpListener, String)>,
    /// The `CONNECT` proxy's listener.
    proxy: Option<TcpListener>,
}

/// Binds `--listen` ports (IPv4 and, where there is one, IPv6 loopback) and the `--proxy` port.
fn listen(args: &Args) -> Listeners {
    let mut relays = Vec::new();
    for (port, sock) in &args.listen {
        for host in ["127.0.0.1", "[::1]"] {
            match TcpListener::bind(format!("{host}:{port}")) {
                Ok(l) => relays.push((l, sock.clone())),
                Err(e) if host == "127.0.0.1" => {
                    eprintln!("assay sandbox: cannot listen on 127.0.0.1:{port}: {e}")
                }
                Err(_) => {}
            }
        }
    }
    let proxy = args.proxy.and_then(|port| {
        TcpListener::bind(("127.0.0.1", port))
            .inspect_err(|e| eprintln!("assay sandbox: cannot listen on 127.0.0.1:{port}: {e}"))
            .ok()
    });
    Listeners { relays, proxy }
}

impl Listeners {
    /// Serves every listener on threads of its own, a thread per connection.
    fn serve(self, routes: &HashMap<String, String>) {
        for (l, sock) in self.relays {
            std::thread::spawn(move || {
                for tcp in l.incoming().flatten() {
                    let sock = sock.clone();
                    std::thread::spawn(move || {
                        if let Ok(up) = UnixStream::connect(&sock) {
                            relay(tcp, up, &[]);
                        }
                    });
                }
            });
        }
        if let Some(l) = self.proxy {
            let routes = std::sync::Arc::new(routes.clone());
            std::thread::spawn(move || {
                for tcp in l.incoming().flatten() {
                    let routes = routes.clone();
                    std::thread::spawn(move || connect_proxy(tcp, &routes));
                }
            });
        }
    }
}

#[cfg(target_os = "linux")]
/// Starts the command and says so on the status pipe (when assay gave one).
fn start(
    command: &mut std::process::Command,
    program: &str,
    status: bool,
) -> Result<std::process::Child, u8> {
    let child = match command.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "assay sandbox: `{program}` is not installed or not visible inside the sandbox"
            );
            return Err(127);
        }
        Err(e) => {
            eprintln!("assay sandbox: cannot start `{program}`: {e}");
            return Err(126);
        }
    };
    if status {
        // SAFETY: one byte to the status pipe, then it is closed.
        unsafe {
            libc::write(STATUS_FD, b"1".as_ptr().cast(), 1);
            libc::close(STATUS_FD);
        }
    }
    Ok(child)
}

#[cfg(target_os = "linux")]
/// The exit code for a wait status: the command's, or 128 + the signal that ended it.
fn exit_code(status: libc::c_int) -> u8 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status) as u8
    } else if libc::WIFSIGNALED(status) {
        128u8.saturating_add(libc::WTERMSIG(status) as u8)
    } else {
        1
    }
}

#[cfg(target_os = "linux")]
/// The `landlock` backend. No namespaces: this process stays outside the command's
/// confinement, as the subreaper of everything it starts ([`reap`]); the command gives up its
/// capabilities, gets the seccomp filter and its Landlock ruleset between `fork` and `exec`.
fn landlocked(l: &Landlock, args: &Args) -> u8 {
    // First, as a descriptor made before this would take the status pipe's number where assay
    // gave none. SAFETY: handlers that do nothing (assay's launcher set these ignored, which
    // `exec` would keep for the command; a handler is reset); marking a descriptor
    // close-on-exec.
    let status = unsafe {
        libc::signal(libc::SIGTERM, ignore as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, ignore as *const () as libc::sighandler_t);
        libc::fcntl(STATUS_FD, libc::F_SETFD, libc::FD_CLOEXEC) == 0
    };
    let ruleset = match confine::ruleset(&l.rules) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("assay sandbox: cannot make the Landlock ruleset: {e}");
            return 125;
        }
    };
    if let Err(e) = reap::prepare() {
        eprintln!("assay sandbox: cannot supervise the command: {e}");
        return 125;
    }
    if let Err(e) = confine::seal_self() {
        eprintln!("assay sandbox: cannot seal the first process inside: {e}");
        return 125;
    }
    if let Some(cwd) = &args.cwd
        && let Err(e) = std::env::set_current_dir(cwd)
    {
        eprintln!("assay sandbox: cannot enter {cwd}: {e}");
        return 125;
    }
    let sockets = if l.rules.host_network {
        confine::Sockets::NotUnix
    } else {
        confine::Sockets::TcpOnly
    };
    let mut command = std::process::Command::new(&args.argv[0]);
    command.args(&args.argv[1..]);
    let mut ruleset = Some(ruleset);
    // SAFETY: this process runs no other thread, so the child may allocate before `exec`.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(move || {
            reap::unblock()?;
            let r = ruleset.take().ok_or(std::io::ErrorKind::AlreadyExists)?;
            confine::restrict(r, sockets)
        });
    }
    let child = match start(&mut command, &args.argv[0], status) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let grace = std::time::Duration::from_millis(l.grace_ms);
    exit_code(reap::supervise(child.id() as libc::pid_t, grace))
}

#[cfg(target_os = "linux")]
/// Mounts the overlay, then unmounts `hide` (lazily: the overlay keeps its layers).
fn mount_overlay(o: &Overlay, hide: &[String]) -> std::io::Result<()> {
    use std::ffi::CString;
    let c = |s: &str| CString::new(s).map_err(std::io::Error::other);
    // The host checked the paths have none of overlayfs's separators (`:`, `,`, `\`).
    let data = format!(
        "lowerdir={},upperdir={},workdir={},userxattr",
        o.lower.join(":"),
        o.upper,
        o.work
    );
    let (source, target, fstype, data) = (c("overlay")?, c(&o.at)?, c("overlay")?, c(&data)?);
    // SAFETY: NUL-terminated strings that outlive the calls.
    unsafe {
        if libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            data.as_ptr().cast(),
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        for h in hide {
            let h = c(h)?;
            if libc::umount2(h.as_ptr(), libc::MNT_DETACH) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Copies both ways until either side closes; `first` goes upstream before anything else.
fn relay(tcp: TcpStream, up: UnixStream, first: &[u8]) {
    let (Ok(mut tcp_r), Ok(mut up_w)) = (tcp.try_clone(), up.try_clone()) else {
        return;
    };
    if !first.is_empty() && up_w.write_all(first).is_err() {
        return;
    }
    let upstream = std::thread::spawn(move || {
        let _ = std::io::copy(&mut tcp_r, &mut up_w);
        let _ = up_w.shutdown(std::net::Shutdown::Write);
    });
    let (mut up_r, mut tcp_w) = (up, tcp);
    let _ = std::io::copy(&mut up_r, &mut tcp_w);
    let _ = tcp_w.shutdown(std::net::Shutdown::Write);
    let _ = upstream.join();
}

/// The most a proxy request's head may be.
const MAX_HEAD: usize = 16 << 10;
pub const FORBIDDEN: &[u8] = b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n";
pub const ESTABLISHED: &[u8] = b"HTTP/1.1 200 Connection established\r\n\r\n";

/// How far a proxy request's head has been read.
#[derive(Debug, PartialEq, Eq)]
pub enum Head {
    /// Whole: it ends at this byte.
    Whole(usize),
    /// More may come.
    More,
    /// Past the bound: the connection is dropped.
    TooLong,
}

/// Where a proxy request's head read so far ends.
pub fn head_end(head: &[u8]) -> Head {
    match head.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(i) => Head::Whole(i + 4),
        None if head.len() > MAX_HEAD => Head::TooLong,
        None => Head::More,
    }
}

/// The `host:port` a `CONNECT` request asks for, lowercased; `None` for any other request.
pub fn connect_target(head: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(head);
    let mut words = text.lines().next().unwrap_or("").split_whitespace();
    (words.next() == Some("CONNECT")).then(|| words.next().unwrap_or("").to_ascii_lowercase())
}

/// One proxy connection: `CONNECT host:port` to an allowed endpoint is tunnelled; anything
/// else gets 403.
fn connect_proxy(mut tcp: TcpStream, routes: &HashMap<String, String>) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    let end = loop {
        match tcp.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        match head_end(&head) {
            Head::Whole(end) => break end,
            Head::More => {}
            Head::TooLong => return,
        }
    };
    let sock = connect_target(&head[..end]).and_then(|t| routes.get(&t));
    let Some(sock) = sock else {
        let _ = tcp.write_all(FORBIDDEN);
        return;
    };
    let Ok(up) = UnixStream::connect(sock) else {
        let _ = tcp.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n");
        return;
    };
    if tcp.write_all(ESTABLISHED).is_err() {
        return;
    }
    relay(tcp, up, &head[end..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_listeners_routes_and_the_command() {
        let a = parse(&s(&[
            "--listen",
            "4567=/run/assay/net/0.sock",
            "--proxy",
            "3128",
            "--route",
            "API.example.com:443=/run/assay/net/1.sock",
            "--",
            "claude",
            "-p",
            "hi",
        ]))
        .unwrap();
        assert_eq!(a.listen, [(4567, "/run/assay/net/0.sock".to_string())]);
        assert_eq!(a.proxy, Some(3128));
        assert_eq!(
            a.routes.get("api.example.com:443").map(String::as_str),
            Some("/run/assay/net/1.sock")
        );
        assert_eq!(a.argv, ["claude", "-p", "hi"]);
        assert!(parse(&s(&["--listen", "x"])).is_err());
        assert!(parse(&s(&["--"])).is_err());
    }

    #[test]
    fn a_request_head_is_bounded_and_only_connect_names_a_target() {
        assert_eq!(
            head_end(b"CONNECT a:1 HTTP/1.1\r\n\r\nrest"),
            Head::Whole(24)
        );
        assert_eq!(head_end(b"CONNECT a:1 HTTP/1.1\r\n"), Head::More);
        assert_eq!(head_end(&vec![b'x'; MAX_HEAD + 1]), Head::TooLong);
        assert_eq!(
            connect_target(b"CONNECT API.example:443 HTTP/1.1\r\n\r\n").as_deref(),
            Some("api.example:443")
        );
        assert_eq!(connect_target(b"GET http://x/ HTTP/1.1\r\n\r\n"), None);
    }

    #[test]
    fn the_proxy_refuses_hosts_it_was_not_given() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            let (tcp, _) = l.accept().unwrap();
            connect_proxy(tcp, &HashMap::new());
        });
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(b"CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n")
            .unwrap();
        let mut reply = String::new();
        c.read_to_string(&mut reply).unwrap();
        assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
    }

    #[test]
    fn the_proxy_tunnels_to_an_allowed_host_with_the_bytes_after_the_request() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("0.sock");
        let upstream = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = upstream.accept().unwrap();
            let mut buf = [0u8; 5];
            s.read_exact(&mut buf).unwrap();
            assert_eq!(&buf, b"hello");
            s.write_all(b"world").unwrap();
        });
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let routes: HashMap<String, String> =
            [("api.example:443".to_string(), sock.display().to_string())].into();
        std::thread::spawn(move || {
            let (tcp, _) = l.accept().unwrap();
            connect_proxy(tcp, &routes);
        });
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(b"CONNECT API.example:443 HTTP/1.1\r\n\r\nhello")
            .unwrap();
        let mut reply = [0u8; 39];
        c.read_exact(&mut reply).unwrap();
        assert!(
            reply.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&reply)
        );
        let mut rest = [0u8; 5];
        c.read_exact(&mut rest).unwrap();
        assert_eq!(&rest, b"world");
    }
}
