//! What the first process inside does to the command between `fork` and `exec`: give up every
//! capability, install the seccomp filter, and (with the `landlock` backend) restrict the
//! command to its Landlock ruleset. Built into the small `assay-sandbox-init` too (std, libc
//! and the `landlock` crate only).

#![cfg_attr(not(target_os = "linux"), allow(dead_code, unused_imports))]

use std::io;

/// Whether the command has namespaces of its own (bubblewrap: its IPC, its mounts with the
/// host read-only) or shares the host's (Landlock), where the filter also refuses System V and
/// POSIX IPC and making a file writable by everyone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespaces {
    Own,
    Host,
}

/// Which sockets the command may create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sockets {
    /// Every family but `AF_UNIX` (bubblewrap's own network namespace, or `--network host`).
    NotUnix,
    /// TCP over IPv4 and IPv6 only: no UDP, no raw, netlink or Unix sockets (Landlock limits
    /// where TCP connects; nothing else of the host's network is shared).
    TcpOnly,
    /// Any: the first process inside itself, which reaches the host's side of the network
    /// through Unix sockets.
    Any,
}

#[cfg(target_os = "linux")]
/// Gives up every capability for good: the bounding and ambient sets emptied, root's
/// special treatment on `exec` turned off and locked, then the sets themselves cleared.
pub fn drop_capabilities() -> io::Result<()> {
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
    let err = io::Error::last_os_error;
    let header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut now = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: prctl and capget/capset with plain values and structs that outlive the calls.
    unsafe {
        if libc::syscall(libc::SYS_capget, &header as *const Header, now.as_mut_ptr()) != 0 {
            return Err(err());
        }
        // Without any capability (an ordinary user) there is nothing to give up, and no
        // right to change the sets; `no_new_privs` keeps it that way across `exec`.
        if now.iter().all(|d| d.permitted == 0) && libc::geteuid() != 0 {
            return Ok(());
        }
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
                && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL)
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
        let none = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &header as *const Header, none.as_ptr()) != 0 {
            return Err(err());
        }
    }
    Ok(())
}

/// A place in the filter program: the next instruction, or a named one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum To {
    Next,
    Allow,
    Deny,
    NoSys,
    Socket,
    Stream,
    NewUser,
    Ptrace,
    Send(u32),
    /// A `chmod` whose mode is argument N.
    Mode(u32),
}

/// One instruction of the filter before its jumps are resolved.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// Marks where a `To` leads.
    Label(To),
    /// The 32-bit word at this offset of `seccomp_data`.
    Load(u32),
    And(u32),
    Eq(u32, To, To),
    Ge(u32, To, To),
    Set(u32, To, To),
    Ret(u32),
}

#[cfg(target_os = "linux")]
const ALLOW: u32 = 0x7fff_0000;
#[cfg(target_os = "linux")]
const DENY: u32 = 0x0005_0000 | libc::EACCES as u32; // SECCOMP_RET_ERRNO
#[cfg(target_os = "linux")]
const NOSYS: u32 = 0x0005_0000 | libc::ENOSYS as u32;
#[cfg(target_os = "linux")]
/// `MSG_FASTOPEN`: a TCP connect carried by `sendto`/`sendmsg`.
const FASTOPEN: u32 = 0x2000_0000;

/// `PTRACE_ATTACH` and `PTRACE_SEIZE`: tracing a process that did not ask for it.
const PTRACE_ATTACH: u32 = 16;
const PTRACE_SEIZE: u32 = 0x4206;

/// `seccomp_data`: `nr` at 0, `arch` at 4, the low word of argument N at 16 + 8N.
const fn arg(n: u32) -> u32 {
    16 + 8 * n
}

/// The kernel's key-management calls: a process with no namespace of its own would reach the
/// host user's keyrings (read, overwrite and leave keys), so none may use them.
#[cfg(target_os = "linux")]
const KEYRING: &[libc::c_long] = &[libc::SYS_add_key, libc::SYS_request_key, libc::SYS_keyctl];

/// Changing a file's mode, with the argument that holds the mode. Landlock does not see a
/// mode change, and an agent running as root owns the host's system files.
#[cfg(target_os = "linux")]
const CHMOD: &[(libc::c_long, u32)] = &[
    #[cfg(target_arch = "x86_64")]
    (libc::SYS_chmod, 1),
    (libc::SYS_fchmod, 1),
    (libc::SYS_fchmodat, 2),
    (libc::SYS_fchmodat2, 2),
];

/// Mode bits no agent may set: set-user-ID and set-group-ID (a root-owned file made setuid is
/// root for every local user).
const SET_ID: u32 = 0o6000;
/// With no mount namespace: the write bit for everyone (`chmod o+w /etc/passwd`).
const WORLD_WRITABLE: u32 = 0o002;

/// System V and POSIX IPC: without an IPC namespace of its own (Landlock) these are the host's
/// segments, semaphores and queues, shared with every process and other case-runs.
#[cfg(target_os = "linux")]
const HOST_IPC: &[libc::c_long] = &[
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmctl,
    libc::SYS_shmdt,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semctl,
    libc::SYS_semtimedop,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_mq_open,
    libc::SYS_mq_unlink,
    libc::SYS_mq_timedsend,
    libc::SYS_mq_timedreceive,
    libc::SYS_mq_notify,
    libc::SYS_mq_getsetattr,
];

/// `AF_VSOCK`: a way to the hypervisor or other guests that no namespace encloses.
#[cfg(target_os = "linux")]
const AF_VSOCK: u32 = 40;

#[cfg(target_os = "linux")]
/// The filter for the command and all it starts. Refused: user namespaces (`unshare`,
/// `clone` with `CLONE_NEWUSER`; `clone3`, whose flags are behind a pointer, as absent so libc
/// falls back to `clone`) and entering any namespace (`setns`), io_uring (which could do all
/// this unseen), other ABIs (i386, x32), another process's memory and descriptors (`ptrace`
/// attaching to a process that did not ask with `PTRACE_TRACEME`, so a debugger still runs its
/// own child; `process_vm_readv`/`writev`, `pidfd_getfd`), the kernel's keyrings, with
/// [`Namespaces::Host`] System V and POSIX IPC, and the sockets `sockets` does not allow; socket pairs
/// stay allowed. With `TcpOnly`, also a TCP connect hidden in `sendto`/`sendmsg`
/// (`MSG_FASTOPEN`).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn program(sockets: Sockets, ns: Namespaces) -> Vec<Op> {
    use Op::*;
    use To::*;
    let mut p = syscalls(sockets, ns);
    p.extend([Ret(ALLOW), Label(Socket), Load(arg(0))]);
    p.extend(socket_families(sockets));
    p.extend([Label(NewUser), Load(arg(0))]);
    p.extend([Set(libc::CLONE_NEWUSER as u32, Deny, Allow)]);
    p.extend([
        Label(Ptrace),
        Load(arg(0)),
        Eq(PTRACE_ATTACH, Deny, Next),
        Eq(PTRACE_SEIZE, Deny, Allow),
    ]);
    if sockets == Sockets::TcpOnly {
        for n in [2, 3] {
            p.extend([Label(Send(n)), Load(arg(n)), Set(FASTOPEN, Deny, Allow)]);
        }
    }
    let refused = match ns {
        Namespaces::Own => SET_ID,
        Namespaces::Host => SET_ID | WORLD_WRITABLE,
    };
    for n in [1, 2] {
        p.extend([Label(Mode(n)), Load(arg(n)), Set(refused, Deny, Allow)]);
    }
    p.extend([
        Label(Allow),
        Ret(ALLOW),
        Label(Deny),
        Ret(DENY),
        Label(NoSys),
        Ret(NOSYS),
    ]);
    p
}

#[cfg(target_os = "linux")]
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
/// The architecture check, then each system call the filter looks at, by number.
fn syscalls(sockets: Sockets, ns: Namespaces) -> Vec<Op> {
    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
    use Op::*;
    use To::*;
    let nr = |n: libc::c_long| n as u32;
    let mut p = vec![
        Load(4),
        Eq(ARCH, Next, Deny),
        Load(0),
        Ge(0x4000_0000, Deny, Next),
        Eq(nr(libc::SYS_socket), Socket, Next),
        Eq(nr(libc::SYS_io_uring_setup), Deny, Next),
        Eq(nr(libc::SYS_unshare), NewUser, Next),
        Eq(nr(libc::SYS_clone), NewUser, Next),
        Eq(nr(libc::SYS_clone3), NoSys, Next),
        Eq(nr(libc::SYS_setns), Deny, Next),
        Eq(nr(libc::SYS_ptrace), Ptrace, Next),
        Eq(nr(libc::SYS_process_vm_readv), Deny, Next),
        Eq(nr(libc::SYS_process_vm_writev), Deny, Next),
        Eq(nr(libc::SYS_pidfd_getfd), Deny, Next),
    ];
    p.extend(KEYRING.iter().map(|n| Eq(nr(*n), Deny, Next)));
    p.extend(CHMOD.iter().map(|(n, arg)| Eq(nr(*n), Mode(*arg), Next)));
    if ns == Namespaces::Host {
        p.extend(HOST_IPC.iter().map(|n| Eq(nr(*n), Deny, Next)));
    }
    if sockets == Sockets::TcpOnly {
        p.extend([
            Eq(nr(libc::SYS_sendto), Send(3), Next),
            Eq(nr(libc::SYS_sendmsg), Send(2), Next),
            Eq(nr(libc::SYS_sendmmsg), Send(3), Next),
        ]);
    }
    p
}

#[cfg(target_os = "linux")]
/// `socket(family, type, protocol)`, its family loaded: which may be made. `TcpOnly` takes a
/// stream socket of IPv4 or IPv6 with protocol 0 or TCP alone: Landlock limits where TCP
/// connects, and nothing else (MPTCP, SCTP, …) is TCP to it.
fn socket_families(sockets: Sockets) -> Vec<Op> {
    use Op::*;
    use To::*;
    match sockets {
        Sockets::NotUnix => vec![
            Eq(libc::AF_UNIX as u32, Deny, Next),
            Eq(AF_VSOCK, Deny, Allow),
        ],
        Sockets::Any => vec![Ret(ALLOW)],
        Sockets::TcpOnly => vec![
            Eq(libc::AF_INET as u32, Stream, Next),
            Eq(libc::AF_INET6 as u32, Stream, Deny),
            Label(Stream),
            Load(arg(1)),
            And(0xf),
            Eq(libc::SOCK_STREAM as u32, Next, Deny),
            Load(arg(2)),
            Eq(0, Allow, Next),
            Eq(libc::IPPROTO_TCP as u32, Allow, Deny),
        ],
    }
}

#[cfg(target_os = "linux")]
/// The program in the kernel's form, its jumps resolved (all forward, as BPF requires).
fn assemble(ops: &[Op]) -> Result<Vec<libc::sock_filter>, String> {
    let mut at = Vec::new();
    let mut n = 0usize;
    for op in ops {
        match op {
            Op::Label(l) => at.push((*l, n)),
            _ => n += 1,
        }
    }
    let mut out = Vec::with_capacity(n);
    let jump = |to: To, here: usize| -> Result<u8, String> {
        if to == To::Next {
            return Ok(0);
        }
        let (_, t) = at
            .iter()
            .find(|(l, _)| *l == to)
            .ok_or(format!("no label {to:?}"))?;
        t.checked_sub(here + 1)
            .and_then(|d| u8::try_from(d).ok())
            .ok_or(format!("jump to {to:?} out of reach"))
    };
    let f = |code: u16, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    for op in ops {
        let here = out.len();
        out.push(match *op {
            Op::Label(_) => continue,
            Op::Load(off) => f(0x20, 0, 0, off),
            Op::And(k) => f(0x54, 0, 0, k),
            Op::Eq(k, t, e) => f(0x15, jump(t, here)?, jump(e, here)?, k),
            Op::Ge(k, t, e) => f(0x35, jump(t, here)?, jump(e, here)?, k),
            Op::Set(k, t, e) => f(0x45, jump(t, here)?, jump(e, here)?, k),
            Op::Ret(k) => f(0x06, 0, 0, k),
        });
    }
    Ok(out)
}

#[cfg(target_os = "linux")]
/// Installs the filter (and `no_new_privs`) on this process, for all it runs after. On
/// architectures other than x86-64 and AArch64, none.
pub fn filter(sockets: Sockets, ns: Namespaces) -> io::Result<()> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        let program = assemble(&program(sockets, ns)).map_err(io::Error::other)?;
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
                return Err(io::Error::last_os_error());
            }
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = (sockets, ns);
    Ok(())
}

#[cfg(target_os = "linux")]
/// The first process inside, before it starts anything: no one without a capability may
/// ptrace it, read or write its memory or take its descriptors (not dumpable), and it is under
/// the filter too, Unix sockets apart (it reaches the host's side of the network through them).
pub fn seal_self() -> io::Result<()> {
    // SAFETY: prctl with plain values.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    filter(Sockets::Any, Namespaces::Own)
}

#[cfg(target_os = "linux")]
/// With bubblewrap (whose mounts decide what is writable): a Landlock ruleset that lets the
/// command read everything and write wherever the mounts let it, except `/proc` and `/sys`, so
/// no process can write another's memory through `/proc/<pid>/mem`. `None` where the kernel has
/// no Landlock (the mounts and the filter still hold; `doctor` says which).
pub fn proc_guard() -> Option<landlock::RulesetCreated> {
    let write = std::fs::read_dir("/")
        .ok()?
        .flatten()
        .filter(|e| !matches!(e.file_name().to_str(), Some("proc" | "sys")))
        .map(|e| e.path().display().to_string())
        .collect();
    let rules = Rules {
        read: vec!["/".into()],
        write,
        host_network: true,
        ..Rules::default()
    };
    ruleset(&rules).ok()
}

#[cfg(target_os = "linux")]
/// In the child, after [`filter`]: the [`proc_guard`] ruleset, as far as this kernel enforces it.
pub fn guard(ruleset: landlock::RulesetCreated) -> io::Result<()> {
    ruleset
        .restrict_self()
        .map(|_| ())
        .map_err(io::Error::other)
}

/// What a command confined by Landlock may reach.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Rules {
    /// Read and run (files and folders beneath).
    pub read: Vec<String>,
    /// Read, write, create and remove beneath.
    pub write: Vec<String>,
    /// Devices read and written as files (`/dev/null`, …).
    pub devices: Vec<String>,
    /// TCP ports it may connect to; with `host_network`, anything.
    pub connect: Vec<u16>,
    pub host_network: bool,
}

#[cfg(target_os = "linux")]
/// The ruleset, made (its folders opened) before `fork`; [`restrict`] enforces it in the
/// child. A path that does not exist is left out: it is not reachable either.
pub fn ruleset(rules: &Rules) -> Result<landlock::RulesetCreated, landlock::RulesetError> {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, NetPort, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
        path_beneath_rules,
    };
    let abi = ABI::V10;
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let mut set = Ruleset::default()
        .handle_access(all)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)?;
    if !rules.host_network {
        set = set.handle_access(AccessNet::from_all(abi))?;
    }
    let mut made = set
        .create()?
        .add_rules(path_beneath_rules(&rules.read, read))?
        .add_rules(path_beneath_rules(&rules.write, all))?
        .add_rules(path_beneath_rules(
            &rules.devices,
            AccessFs::ReadFile | AccessFs::WriteFile,
        ))?;
    if !rules.host_network {
        for port in &rules.connect {
            made = made.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
        }
    }
    Ok(made)
}

#[cfg(target_os = "linux")]
/// In the child: every capability given up, the filter, then the ruleset.
pub fn restrict(ruleset: landlock::RulesetCreated, sockets: Sockets) -> io::Result<()> {
    drop_capabilities()?;
    filter(sockets, Namespaces::Host)?;
    let status = ruleset.restrict_self().map_err(io::Error::other)?;
    if status.ruleset == landlock::RulesetStatus::NotEnforced {
        return Err(io::Error::other("Landlock is not enforced by this kernel"));
    }
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn every_jump_of_both_programs_resolves_forward() {
        for s in [Sockets::NotUnix, Sockets::TcpOnly, Sockets::Any] {
            for ns in [Namespaces::Own, Namespaces::Host] {
                let p = assemble(&program(s, ns)).unwrap();
                assert!(p.len() < 128, "{}", p.len());
                assert_eq!(p.last().unwrap().code, 0x06);
            }
        }
    }
}
