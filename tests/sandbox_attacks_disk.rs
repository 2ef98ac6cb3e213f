//! Attacks on the disk limit that worked when they were written (issue 42, item 7): each test
//! runs a hostile agent (a bash script through the `command` harness) under each Linux
//! backend at `--limit-disk 64MiB` and asserts the case-run ends as an error naming the disk
//! limit (category `limit`, assay's exit 3), never a pass. Each test writes a few hundred MiB
//! at most, in a temporary folder removed after it.

use crate::support;

use std::path::Path;
use std::process::Output;

use support::{code, hostile_project as project, results, stderr};

/// The limit every attack runs at.
const LIMIT_MIB: u64 = 64;

/// The most a full-speed writer may get past the limit before it is stopped: the figure
/// docs/running.md gives ("Limits": the disk limit's overshoot).
const OVERSHOOT_BOUND_MIB: u64 = 48;

/// What one attack came to: assay's output, the error's category and message, and what the
/// agent printed.
struct Ended {
    out: Output,
    category: String,
    message: String,
    said: String,
}

/// Runs `script` as the agent under `backend` at `--limit-disk 64MiB`, with `args` added, the
/// workspace kept under `d/ws`.
fn attack(d: &Path, backend: &str, script: &str, args: &[&str]) -> Ended {
    let p = d.join("project");
    project(&p, script);
    let out = support::contained(d, &p, backend)
        .args(["--limit-disk", "64MiB"])
        .args(args)
        .output()
        .unwrap();
    let r = &results(&d.join("run"))["001"];
    let said = std::fs::read_to_string(d.join("run/skillet_hostile/001/run-1/output.txt"))
        .unwrap_or_default();
    Ended {
        category: r["error"]["category"].as_str().unwrap_or("").to_string(),
        message: r["error"]["message"].as_str().unwrap_or("").to_string(),
        out,
        said,
    }
}

/// The case-run ended as the disk-limit error: category `limit`, the limit named, assay's
/// exit 3, and the agent never got to say `finished`.
fn assert_disk_limit_error(e: &Ended) {
    assert_eq!(
        e.category,
        "limit",
        "{}\n{}\n{}",
        e.message,
        e.said,
        stderr(&e.out)
    );
    assert!(
        e.message.contains(&format!("disk limit ({LIMIT_MIB} MiB)")),
        "{}",
        e.message
    );
    assert_eq!(code(&e.out), 3, "{}", stderr(&e.out));
    assert!(!e.said.contains("finished"), "{}", e.said);
}

per_backend! {
/// Files written and unlinked while held open (20 × 50 MiB in the attack, 6 here) take the
/// disk until the last descriptor closes, but no walk of the folder finds them: the case-run
/// passed with 1000 MiB written. Now the open files of the case-run's processes count.
fn unlinked_files_held_open_count(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    let e = attack(
        d.path(),
        backend,
        "for i in 1 2 3 4 5 6; do exec {fd}>held-$i; rm held-$i; head -c 50M /dev/zero >&$fd; done\n\
         sleep 3\necho finished\n",
        &["--timeout", "60"],
    );
    assert_disk_limit_error(&e);
}
}

per_backend! {
/// Empty files take inodes, not blocks: 250,000 of them exhausted the filesystem's inodes
/// with 0 bytes counted, and the case-run passed. Now each file, folder and link counts at
/// least 4 KiB, so 30,000 empty files (117 MiB by that rule) pass a 64 MiB limit.
fn empty_files_count_their_inodes(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    let e = attack(
        d.path(),
        backend,
        "mkdir many && cd many && seq 30000 | xargs touch\nsleep 3\necho finished\n",
        &["--timeout", "60"],
    );
    assert_disk_limit_error(&e);
}
}

per_backend! {
/// After the timeout's SIGTERM the agent keeps writing through its grace period, when
/// nothing measured: 172 of 234 MiB were never flagged, and the case-run ended as a timeout.
/// Now the folder is measured until the last process is gone, and once more after.
fn writing_through_the_grace_period_is_caught(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    let e = attack(
        d.path(),
        backend,
        "trap 'go=1' TERM\nwhile [ -z \"$go\" ]; do sleep 0.1; done\n\
         for i in $(seq 60); do head -c 2M /dev/zero > late-$i; sleep 0.04; done\necho finished\n",
        &["--timeout", "2"],
    );
    assert_disk_limit_error(&e);
}
}

per_backend! {
/// 1 MiB files written as fast as a process can (10,000 in the attack) ran to 1.1 GiB
/// (Landlock) and 1.36 GiB (bubblewrap) past a 64 MiB limit before the watch, once a second,
/// saw them. Now the case-run is measured more often as it nears the limit and killed at
/// once: what was written stays within the documented overshoot.
fn a_fast_writer_stops_within_the_documented_overshoot(backend: &str) {
    // The overshoot grows with CPU contention (docs/running.md): another test's Chromium on
    // the other core can slow the watch's pace. The bound holds for the better of two
    // attempts; a watch that does not speed up near the limit overshoots by hundreds of MiB
    // every time (1.1 GiB before), so it still fails.
    let mut seen = Vec::new();
    for _ in 0..2 {
        let d = tempfile::tempdir().unwrap();
        let e = attack(
            d.path(),
            backend,
            "/usr/bin/python3 -c \"\nimport os\nb = bytes(1 << 20)\nfor i in range(400):\n    with open('fast-%d' % i, 'wb') as f: f.write(b)\n\"\n\
             sleep 3\necho finished\n",
            &["--timeout", "60", "--keep-workspaces"],
        );
        assert_disk_limit_error(&e);
        let written = written_mib(&d.path().join("ws"), "fast-");
        eprintln!("{backend}: {written} MiB written at a {LIMIT_MIB} MiB limit");
        if written <= LIMIT_MIB + OVERSHOOT_BOUND_MIB {
            return;
        }
        seen.push(format!("{written} MiB ({})", e.message));
    }
    panic!(
        "written at a {LIMIT_MIB} MiB limit, twice over the bound of {OVERSHOOT_BOUND_MIB} MiB: {}",
        seen.join("; ")
    );
}
}

/// The MiB allocated by files under `root` whose names start with `prefix`.
fn written_mib(root: &Path, prefix: &str) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut bytes = 0u64;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else if e.file_name().to_string_lossy().starts_with(prefix) {
                bytes += m.blocks() * 512;
            }
        }
    }
    bytes >> 20
}

per_backend! {
/// bubblewrap's own `/tmp`, `/dev/shm`, `/run`, … were each a tmpfs of the limit's size, and
/// none was measured: 40 MiB in `/tmp` and 40 MiB in `/dev/shm` passed a 64 MiB limit. Now
/// what the sandbox's own filesystems hold counts with the rest. (Under Landlock neither is
/// writable: the writes fail.)
fn the_sandboxs_own_temp_folders_count_together(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    let e = attack(
        d.path(),
        backend,
        "dd if=/dev/zero of=/tmp/a bs=1M count=40 2>/dev/null && \
         dd if=/dev/zero of=/dev/shm/b bs=1M count=40 2>/dev/null && echo wrote-both\n\
         sleep 3\necho finished\n",
        &["--timeout", "60"],
    );
    match backend {
        "bwrap" => assert_disk_limit_error(&e),
        _ => assert!(!e.said.contains("wrote-both"), "{}", e.said),
    }
}
}
