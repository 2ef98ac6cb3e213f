//! Attacks through what a sandbox could share with the host besides files: other socket
//! protocols than TCP, the kernel's keyrings and IPC, the user's terminals, other processes'
//! command lines, root-only system files, vsock. Each worked when it was written (round four
//! of the attacks, issue 42); each test now asserts it fails, under both Linux backends, as
//! root in CI. The agent is a Python probe (Debian's `/usr/bin/python3`, shown in every
//! sandbox) that prints `HOLE …` for each thing it reached and `finished` at its end.

use crate::support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

use support::{hostile_project as project, results, stderr, stdout};

/// Runs `probe` (Python, given `args`) as the agent of a hostile project in `d`, under
/// `backend` with `--network network`.
fn run_probe(d: &Path, backend: &str, network: &str, probe: &str, args: &[String]) -> Output {
    let p = d.join("project");
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    project(
        &p,
        &format!("/usr/bin/python3 probe.py {}\n", quoted.join(" ")),
    );
    std::fs::write(p.join("probe.py"), probe).unwrap();
    support::contained(d, &p, backend)
        .args(["--network", network, "--timeout", "60"])
        .output()
        .unwrap()
}

/// What the probe said: it ran to its end, and every `HOLE` line it printed.
fn holes(d: &Path, backend: &str, out: &Output) -> Vec<String> {
    let said = support::hostile_output(&d.join("run"), out);
    assert!(
        said.contains("probe-ran") && said.contains("finished"),
        "the probe must really run: {said}\n{}\n{}",
        stdout(out),
        stderr(out)
    );
    assert_eq!(
        results(&d.join("run"))["001"]["sandbox"]["kind"],
        backend,
        "{}",
        stderr(out)
    );
    said.lines()
        .filter(|l| l.starts_with("HOLE"))
        .map(String::from)
        .collect()
}

const SOCKETS_PROBE: &str = r#"
import socket, sys
print("probe-ran")
port = int(sys.argv[1])
tries = [
    ("MPTCP over IPv4", socket.AF_INET, socket.SOCK_STREAM, 262, ("127.0.0.1", port)),
    ("MPTCP over IPv6", socket.AF_INET6, socket.SOCK_STREAM, 262, ("::1", port)),
    ("SCTP stream over IPv4", socket.AF_INET, socket.SOCK_STREAM, 132, ("127.0.0.1", port)),
    ("TCP over IPv4", socket.AF_INET, socket.SOCK_STREAM, 0, ("127.0.0.1", port)),
    ("TCP over IPv6", socket.AF_INET6, socket.SOCK_STREAM, 6, ("::1", port)),
]
for name, fam, typ, proto, addr in tries:
    try:
        s = socket.socket(fam, typ, proto)
    except OSError as e:
        print(f"{name}: no socket ({e.errno})")
        continue
    try:
        s.settimeout(2)
        s.connect(addr)
        print(f"HOLE {name}: connected to {addr}")
    except OSError as e:
        print(f"{name}: refused ({e.errno})")
try:
    socket.socket(40, socket.SOCK_STREAM, 0)
    print("HOLE AF_VSOCK: a socket was made")
except OSError as e:
    print(f"AF_VSOCK: no socket ({e.errno})")
print("finished")
"#;

per_backend! {
/// `socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)` then `connect` reached any port of the host's
/// loopback under Landlock, with `--network model` and `--network none`: Landlock's TCP rules
/// do not cover MPTCP, and the filter checked the socket's type, not its protocol. Under both
/// backends an `AF_VSOCK` socket could be made. Listeners on 127.0.0.1 and ::1 must hear
/// nothing.
fn stream_sockets_other_than_tcp_reach_nothing(backend: &str) {
    let v4 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = v4.local_addr().unwrap().port();
    let v6 = std::net::TcpListener::bind(("::1", port)).ok();
    v4.set_nonblocking(true).unwrap();
    for network in ["model", "none"] {
        let d = tempfile::tempdir().unwrap();
        let out = run_probe(
            d.path(),
            backend,
            network,
            SOCKETS_PROBE,
            &[port.to_string()],
        );
        let holes = holes(d.path(), backend, &out);
        assert!(holes.is_empty(), "--network {network}: {holes:?}");
    }
    assert!(v4.accept().is_err(), "the IPv4 listener was reached");
    if let Some(v6) = v6 {
        v6.set_nonblocking(true).unwrap();
        assert!(v6.accept().is_err(), "the IPv6 listener was reached");
    }
}
}

const KEYRING_PROBE: &str = r#"
import ctypes, os, sys
print("probe-ran")
libc = ctypes.CDLL(None, use_errno=True)
SYS_add_key, SYS_request_key, SYS_keyctl = 248, 249, 250
KEY_SPEC_USER_KEYRING = -4
desc, shm_key, left = sys.argv[1].encode(), int(sys.argv[2]), sys.argv[3]
kid = libc.syscall(SYS_request_key, b"user", desc, None, 0)
if kid > 0:
    buf = ctypes.create_string_buffer(256)
    n = libc.syscall(SYS_keyctl, 11, kid, buf, 256)
    print(f"HOLE keyring: read the host's key: {buf.raw[:max(n, 0)]!r}")
mine = libc.syscall(SYS_add_key, b"user", (left + "-key").encode(), b"x", 1, KEY_SPEC_USER_KEYRING)
if mine > 0:
    print("HOLE keyring: left a key of its own")
libc.shmget.restype = ctypes.c_int
libc.shmat.restype = ctypes.c_void_p
sid = libc.shmget(shm_key, 0, 0)
if sid >= 0:
    addr = libc.shmat(sid, None, 0)
    if addr not in (None, ctypes.c_void_p(-1).value):
        print(f"HOLE sysv: read the host's segment: {ctypes.string_at(addr, 24)!r}")
big = libc.shmget(shm_key + 1, 64 << 20, 0o1600)
print(f"sysv: a 64 MiB segment: {big}")
libc.mq_open.restype = ctypes.c_int
q = libc.mq_open(("/" + left + "-q").encode(), os.O_CREAT | os.O_RDWR, 0o600, None)
e = ctypes.get_errno()
print(f"mq_open: {q} ({e})")
print("finished")
"#;

/// A key of root's user keyring, made by the test and unlinked when it ends.
struct PlantedKey(i64);

impl PlantedKey {
    fn plant(desc: &str, payload: &str) -> PlantedKey {
        let (t, d) = (c"user", std::ffi::CString::new(desc).unwrap());
        // SAFETY: add_key with NUL-terminated strings and a payload that outlive the call.
        let id = unsafe {
            libc::syscall(
                libc::SYS_add_key,
                t.as_ptr(),
                d.as_ptr(),
                payload.as_ptr(),
                payload.len(),
                -4i32, // KEY_SPEC_USER_KEYRING
            )
        };
        assert!(
            id > 0,
            "planting a key: {}",
            std::io::Error::last_os_error()
        );
        PlantedKey(id)
    }
}

impl Drop for PlantedKey {
    fn drop(&mut self) {
        // SAFETY: keyctl(KEYCTL_UNLINK, key, KEY_SPEC_USER_KEYRING).
        unsafe { libc::syscall(libc::SYS_keyctl, 9, self.0, -4i32) };
    }
}

/// Whether root's user keyring holds a key so described.
fn key_exists(desc: &str) -> bool {
    let (t, d) = (c"user", std::ffi::CString::new(desc).unwrap());
    // SAFETY: request_key with NUL-terminated strings; no callout info.
    let id = unsafe {
        libc::syscall(
            libc::SYS_request_key,
            t.as_ptr(),
            d.as_ptr(),
            std::ptr::null::<u8>(),
            0,
        )
    };
    if id > 0 {
        // SAFETY: as in Drop.
        unsafe { libc::syscall(libc::SYS_keyctl, 9, id, -4i32) };
    }
    id > 0
}

/// A host System V segment, 0600, holding `text`; removed when the test ends.
struct PlantedSegment(i32);

impl PlantedSegment {
    fn plant(key: i32, text: &str) -> PlantedSegment {
        // SAFETY: shmget, shmat and a copy of `text` into the segment it made, shmdt.
        unsafe {
            let id = libc::shmget(key, 4096, libc::IPC_CREAT | libc::IPC_EXCL | 0o600);
            assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
            let at = libc::shmat(id, std::ptr::null(), 0);
            std::ptr::copy_nonoverlapping(text.as_ptr(), at.cast::<u8>(), text.len());
            libc::shmdt(at);
            PlantedSegment(id)
        }
    }
}

impl Drop for PlantedSegment {
    fn drop(&mut self) {
        // SAFETY: removing the segment this test made.
        unsafe { libc::shmctl(self.0, libc::IPC_RMID, std::ptr::null_mut()) };
    }
}

/// Removes the System V segment with `key`, if any; whether there was one.
fn remove_segment(key: i32) -> bool {
    // SAFETY: shmget of an existing key, shmctl(IPC_RMID) on what it found.
    unsafe {
        let id = libc::shmget(key, 0, 0);
        if id >= 0 {
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
        }
        id >= 0
    }
}

/// Removes the POSIX queue `name`, if any; whether there was one.
fn remove_queue(name: &str) -> bool {
    let n = std::ffi::CString::new(name).unwrap();
    // SAFETY: mq_unlink with a NUL-terminated name.
    unsafe { libc::mq_unlink(n.as_ptr()) == 0 }
}

per_backend! {
/// With no namespaces (Landlock), the agent as root read a key planted in root's `@u`
/// keyring and left its own; read a host 0600 System V segment and left a 64 MiB one (the
/// host's `Shmem` grew past assay's exit); `mq_open(O_CREAT)` said EACCES yet made the queue,
/// and 256 of them exhausted the host's `queues_max`. None of it may reach the host.
fn the_hosts_keyrings_and_ipc_are_out_of_reach(backend: &str) {
    let tag = format!("assay-attack-{backend}-{}", std::process::id());
    let key_text = format!("CANARY-KEY-{backend}");
    let _key = PlantedKey::plant(&tag, &key_text);
    let shm_key = 0x4153_0000 + (std::process::id() as i32 & 0xfff) * 4
        + 2 * i32::from(backend == "bwrap");
    let seg_text = format!("CANARY-SHM-{backend}");
    let _seg = PlantedSegment::plant(shm_key, &seg_text);
    let d = tempfile::tempdir().unwrap();
    let left = format!("{tag}-left");
    let out = run_probe(
        d.path(),
        backend,
        "model",
        KEYRING_PROBE,
        &[tag.clone(), shm_key.to_string(), left.clone()],
    );
    let holes = holes(d.path(), backend, &out);
    let said = support::hostile_output(&d.path().join("run"), &out);
    let left_key = key_exists(&format!("{left}-key"));
    let left_segment = remove_segment(shm_key + 1);
    let left_queue = remove_queue(&format!("/{left}-q"));
    assert!(holes.is_empty(), "{holes:?}");
    assert!(!said.contains(&key_text) && !said.contains(&seg_text), "{said}");
    assert!(!left_key, "the agent's key is in the host's keyring");
    assert!(!left_segment, "the agent's segment is in the host's IPC");
    assert!(!left_queue, "the agent's queue is in the host's IPC: {said}");
}
}

const TERMINAL_PROBE: &str = r#"
import glob, os
print("probe-ran")
for p in sorted(glob.glob("/dev/pts/*") + glob.glob("/dev/vcs*") + glob.glob("/dev/tty[0-9]*")):
    if p.endswith("ptmx"):
        continue
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as e:
        continue
    try:
        data = os.read(fd, 4096)
        print(f"HOLE terminal: read {p}: {data!r}")
    except OSError as e:
        print(f"HOLE terminal: opened {p} ({e.errno})")
for p in sorted(glob.glob("/dev/loop*") + glob.glob("/dev/zram*") + glob.glob("/dev/vd*") + glob.glob("/dev/sd*")):
    try:
        os.close(os.open(p, os.O_RDONLY | os.O_NONBLOCK))
        print(f"HOLE device: opened {p}")
    except OSError:
        pass
try:
    os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    print("HOLE terminal: /dev/tty opened")
except OSError as e:
    print(f"/dev/tty: {e.errno}")
print("finished")
"#;

/// A pseudo-terminal as a user's terminal pane: its device's path, and the side the user
/// types into.
fn user_terminal() -> (String, std::fs::File) {
    let (mut main, mut sub) = (0, 0);
    // SAFETY: openpty fills two descriptors; no name buffer, terminal settings or size.
    let r = unsafe {
        libc::openpty(
            &mut main,
            &mut sub,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
    let path = std::fs::read_link(format!("/proc/self/fd/{sub}")).unwrap();
    // SAFETY: the descriptor openpty made is this file's alone from here.
    let typed = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(main) };
    (path.display().to_string(), typed)
}

per_backend! {
/// Run from a terminal, the agent opened the pane's `/dev/pts/N` and read what the user typed
/// (under Landlock, `/dev` was readable whole); `/dev/vcs*` (the console's text) was readable,
/// loop and zram devices openable. The user's typing must stay theirs.
fn the_users_terminal_is_out_of_reach(backend: &str) {
    let (pts, mut typed) = user_terminal();
    typed.write_all(b"echo TYPED-BY-USER-hunter2\n").unwrap();
    let d = tempfile::tempdir().unwrap();
    let out = run_probe(d.path(), backend, "model", TERMINAL_PROBE, &[]);
    let holes = holes(d.path(), backend, &out);
    let said = support::hostile_output(&d.path().join("run"), &out);
    assert!(holes.is_empty(), "{pts}: {holes:?}");
    assert!(!said.contains("hunter2"), "{said}");
}
}

const FILES_PROBE: &str = r#"
import sys
print("probe-ran")
for p in sys.argv[1:]:
    try:
        with open(p, "rb") as f:
            print(f"HOLE file: read {p}: {f.read(200)!r}")
    except OSError as e:
        print(f"{p}: {e.errno}")
print("finished")
"#;

/// A 0600 file `text` at `path` (its folder made), removed with the folder when dropped.
struct Canary(std::path::PathBuf);

impl Canary {
    fn at(path: &Path, text: &str) -> Canary {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
        Canary(path.parent().unwrap().to_path_buf())
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

per_backend! {
/// The agent is uid 0, so `/etc/shadow` and `/etc/gshadow` (root's) were readable under both
/// backends; and bubblewrap showed the whole host read-only: a 0600 canary under `/var/lib`,
/// debconf's passwords, `/var/log/btmp` and other checkouts under the host's work folders were
/// read. bubblewrap shows no more than Landlock: the system folders and the toolchains.
fn root_only_host_files_are_out_of_reach(backend: &str) {
    let tag = format!("assay-attack-{backend}-{}", std::process::id());
    let var = Path::new("/var/lib").join(&tag).join("secret");
    let _var = Canary::at(&var, "CANARY-VAR-LIB");
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(&tag).join("secret");
    let _work = Canary::at(&work, "CANARY-OTHER-CHECKOUT");
    let mut targets: Vec<String> = [
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/shadow-",
        "/etc/gshadow-",
        "/etc/ssl/private/ssl-cert-snakeoil.key",
        "/var/cache/debconf/passwords.dat",
        "/var/log/btmp",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    targets.extend([var.display().to_string(), work.display().to_string()]);
    let readable: Vec<&String> = targets
        .iter()
        .filter(|t| std::fs::File::open(t).is_ok())
        .collect();
    assert!(readable.len() >= 3, "too few targets to attack: {readable:?}");
    let d = tempfile::tempdir().unwrap();
    let out = run_probe(d.path(), backend, "model", FILES_PROBE, &targets);
    let holes = holes(d.path(), backend, &out);
    assert!(holes.is_empty(), "{holes:#?}");
}
}

const ARGV_PROBE: &str = r#"
import glob, sys
print("probe-ran")
canary = sys.argv[1][::-1]
for p in glob.glob("/proc/[0-9]*/cmdline"):
    try:
        with open(p, "rb") as f:
            if canary.encode() in f.read():
                print(f"HOLE argv: {p} holds the canary")
    except OSError:
        pass
print("finished")
"#;

per_backend! {
/// `/proc/<pid>/cmdline` of the host's processes was readable under Landlock: a planted
/// `CANARY-ARGV` was read. bubblewrap's own PID namespace holds it; Landlock cannot tell one
/// process's `/proc` folder from another's, so there it is a gap that run.json's
/// `sandbox.gaps` says (and no secret of assay's is ever in a command line: the judge's prompt
/// goes through stdin).
fn other_processes_command_lines_are_out_of_reach_or_a_stated_gap(backend: &str) {
    let canary = format!("CANARY-ARGV-{backend}-{}", std::process::id());
    let mut host = Command::new("sh")
        .args(["-c", "sleep 120; :", &canary])
        .spawn()
        .unwrap();
    let d = tempfile::tempdir().unwrap();
    // Given reversed, so the probe's own command line does not hold it.
    let reversed: String = canary.chars().rev().collect();
    let out = run_probe(d.path(), backend, "model", ARGV_PROBE, &[reversed]);
    host.kill().ok();
    host.wait().ok();
    let holes = holes(d.path(), backend, &out);
    let run = support::read_json(&d.path().join("run/run.json"));
    let gaps = run["sandbox"]["gaps"].to_string();
    if backend == "bwrap" {
        assert!(holes.is_empty(), "{holes:?}");
    } else {
        assert!(!holes.is_empty(), "Landlock now contains it: make it no gap");
        assert!(
            gaps.contains("command lines"),
            "the gap is not stated: {gaps}"
        );
    }
}
}

per_backend! {
/// Landlock does not see `chmod`: the agent, root, made a root-owned host file setuid and
/// writable by everyone (`chmod 4777`): a way to root for every local user. Set-id bits are
/// refused under both backends, the write bit for everyone under Landlock (bubblewrap shows the
/// host read-only); `chmod +x` in the workspace still works.
fn a_host_file_cannot_be_made_setuid_or_writable_by_everyone(backend: &str) {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let p = d.path().join("project");
    project(
        &p,
        &format!(
            "chmod 4755 {0} 2>/dev/null && echo 'HOLE setuid'\nchmod 0757 {0} 2>/dev/null && echo 'HOLE world-writable'\nprintf x > mine && chmod +x mine && echo X-OK\nchmod 4755 mine 2>/dev/null && echo 'HOLE setuid in the workspace'\necho probe-ran\necho finished\n",
            victim.display()
        ),
    );
    let out = support::contained(d.path(), &p, backend).output().unwrap();
    let said = support::hostile_output(&d.path().join("run"), &out);
    let mode = std::fs::metadata(&victim).unwrap().permissions().mode() & 0o7777;
    assert!(said.contains("X-OK"), "chmod +x must work: {said}");
    assert!(!said.contains("HOLE"), "{said}");
    assert_eq!(mode, 0o755, "the host file's mode changed: {mode:o}");
}
}
