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
    argv: Vec<String>,
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
/// libc only (`src/bin/assay-sandbox-init.rs` builds this file alone into a small binary): this
/// runs once per command, and its start-up is the sandbox's cost.
pub fn main(args: &[String]) -> ExitCode {
    let args = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("assay sandbox: {e}");
            return ExitCode::from(125);
        }
    };
    ExitCode::from(run(args))
}

/// Does nothing: SIGTERM and SIGINT are for the command (it is in the same process group);
/// this process waits for it to end. A handler, not SIG_IGN, so `exec` resets it for the
/// command.
extern "C" fn ignore(_: libc::c_int) {}

/// The descriptor assay reads "started" from (see `process::STATUS_FD`).
const STATUS_FD: libc::c_int = 3;

fn run(args: Args) -> u8 {
    if let Some(o) = &args.overlay {
        if let Err(e) = mount_overlay(o, &args.hide) {
            eprintln!(
                "assay sandbox: cannot mount the workspace's overlay on {}: {e}",
                o.at
            );
            return 125;
        }
        if let Err(e) = drop_capabilities() {
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
    for (port, sock) in &args.listen {
        for host in ["127.0.0.1", "[::1]"] {
            match TcpListener::bind(format!("{host}:{port}")) {
                Ok(l) => {
                    let sock = sock.clone();
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
                Err(e) if host == "127.0.0.1" => {
                    eprintln!("assay sandbox: cannot listen on 127.0.0.1:{port}: {e}")
                }
                Err(_) => {}
            }
        }
    }
    if let Some(port) = args.proxy {
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(l) => {
                let routes = std::sync::Arc::new(args.routes.clone());
                std::thread::spawn(move || {
                    for tcp in l.incoming().flatten() {
                        let routes = routes.clone();
                        std::thread::spawn(move || connect_proxy(tcp, &routes));
                    }
                });
            }
            Err(e) => eprintln!("assay sandbox: cannot listen on 127.0.0.1:{port}: {e}"),
        }
    }
    let mut command = std::process::Command::new(&args.argv[0]);
    command.args(&args.argv[1..]);
    // SAFETY: prctl with a filter that lives in static memory.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            no_unix_sockets()?;
            Ok(())
        });
    }
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "assay sandbox: `{}` is not installed or not visible inside the sandbox",
                args.argv[0]
            );
            return 127;
        }
        Err(e) => {
            eprintln!("assay sandbox: cannot start `{}`: {e}", args.argv[0]);
            return 126;
        }
    };
    if status {
        // SAFETY: one byte to the status pipe, then it is closed.
        unsafe {
            libc::write(STATUS_FD, b"1".as_ptr().cast(), 1);
            libc::close(STATUS_FD);
        }
    }
    let Ok(status) = child.wait() else {
        return 1;
    };
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c as u8,
        (None, Some(sig)) => 128u8.saturating_add(sig as u8),
        _ => 1,
    }
}

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

/// Gives up every capability for good: the bounding and ambient sets emptied, root's
/// special treatment on `exec` turned off and locked, then the sets themselves cleared.
fn drop_capabilities() -> std::io::Result<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    // SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP, SECBIT_NO_CAP_AMBIENT_RAISE and their locks,
    // and SECBIT_KEEP_CAPS locked off.
    const SECUREBITS: libc::c_ulong = 0b1110_1111;
    let err = std::io::Error::last_os_error;
    // SAFETY: prctl and capset with plain values and structs that outlive the calls.
    unsafe {
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
                && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL)
            {
                return Err(err());
            }
        }
        if libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        ) != 0
            || libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0) != 0
        {
            return Err(err());
        }
        let header = Header {
            version: VERSION_3,
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) != 0 {
            return Err(err());
        }
    }
    Ok(())
}

/// The command and all it starts may not create user namespaces (bubblewrap's
/// `--disable-userns` is not used with a copy-on-write workspace), Unix sockets
/// (`socket(AF_UNIX, …)`; socket pairs stay allowed) nor io_uring instances (which could create
/// them unseen): a socket file
/// the sandbox shows read-only (a daemon's under `/var`, say) can still be connected to, and
/// with `--network host` the host's abstract sockets could. This process, which relays the
/// network through Unix sockets, is not filtered. A seccomp filter; on architectures other
/// than x86-64 and AArch64, none.
fn no_unix_sockets() -> std::io::Result<()> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        #[cfg(target_arch = "x86_64")]
        const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
        #[cfg(target_arch = "aarch64")]
        const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
        const LD_W_ABS: u16 = 0x20;
        const JEQ_K: u16 = 0x15;
        const JGE_K: u16 = 0x35;
        const RET_K: u16 = 0x06;
        const ALLOW: u32 = 0x7fff_0000;
        const DENY: u32 = 0x0005_0000 | libc::EACCES as u32; // SECCOMP_RET_ERRNO
        const JSET_K: u16 = 0x45;
        const ENOSYS: u32 = 0x0005_0000 | libc::ENOSYS as u32;
        const NEWUSER: u32 = libc::CLONE_NEWUSER as u32;
        let f = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
        // Jumps are relative: to instruction (this + 1 + offset).
        let program = [
            f(LD_W_ABS, 0, 0, 4),         // 0: arch
            f(JEQ_K, 0, 13, ARCH),        // 1: another ABI (i386): denied
            f(LD_W_ABS, 0, 0, 0),         // 2: syscall number
            f(JGE_K, 11, 0, 0x4000_0000), // 3: x32 ABI: denied
            f(JEQ_K, 5, 0, libc::SYS_socket as u32),
            f(JEQ_K, 9, 0, libc::SYS_io_uring_setup as u32),
            f(JEQ_K, 5, 0, libc::SYS_unshare as u32),
            f(JEQ_K, 4, 0, libc::SYS_clone as u32),
            // clone3's flags are behind a pointer: refused as absent (libc falls back to clone).
            f(JEQ_K, 5, 0, libc::SYS_clone3 as u32),
            f(RET_K, 0, 0, ALLOW), // 9
            f(LD_W_ABS, 0, 0, 16), // 10: socket's domain (low word of args[0])
            f(JEQ_K, 3, 4, libc::AF_UNIX as u32),
            f(LD_W_ABS, 0, 0, 16),    // 12: unshare's and clone's flags
            f(JSET_K, 1, 2, NEWUSER), // a new user namespace: denied
            f(RET_K, 0, 0, ENOSYS),   // 14
            f(RET_K, 0, 0, DENY),     // 15
            f(RET_K, 0, 0, ALLOW),    // 16
        ];
        let prog = libc::sock_fprog {
            len: program.len() as u16,
            filter: program.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: the program outlives the call; the kernel copies it.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &prog as *const libc::sock_fprog,
                ) != 0
            {
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
        if let Some(i) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if head.len() > 16 << 10 {
            return;
        }
    };
    let text = String::from_utf8_lossy(&head[..end]).to_string();
    let mut words = text.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let sock = (method == "CONNECT")
        .then(|| routes.get(&target.to_ascii_lowercase()))
        .flatten();
    let Some(sock) = sock else {
        let _ = tcp.write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n");
        return;
    };
    let Ok(up) = UnixStream::connect(sock) else {
        let _ = tcp.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n");
        return;
    };
    if tcp
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .is_err()
    {
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
