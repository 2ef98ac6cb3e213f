//! `assay watch`: a real file change re-runs exactly the affected case; the rest come from the
//! cache; each pass says what got fixed or broken.

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use support::*;

const AGENT: &str = "#!/bin/sh\n# Answers with the command file's first line, read from the workspace.\nprompt=$(cat)\ncmd=$(printf '%s' \"$prompt\" | sed -n 's|^/\\([a-z]*\\).*|\\1|p')\nhead -n 1 \".claude/commands/$cmd.md\"\n";

fn spawn_watch(dir: &std::path::Path, key: &std::path::Path) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["watch", "--debounce", "100"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("ASSAY_NO_CACHE")
        // The cache's key outside the watched folder (its first write is not a change).
        .env("ASSAY_CACHE_KEY", key.join("cache.key"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    for stream in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    (child, rx)
}

/// The lines up to (and with) the next "waiting for changes".
fn pass(rx: &mpsc::Receiver<String>) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut lines = Vec::new();
    while Instant::now() < deadline {
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
            let done = l.contains("waiting for changes");
            lines.push(l);
            if done {
                return lines;
            }
        }
    }
    panic!("no pass ended within 60 s: {lines:#?}");
}

#[test]
fn a_saved_change_reruns_only_the_affected_case_and_says_what_broke() {
    let d = tempfile::tempdir().unwrap();
    let check = |needle: &str| {
        format!(r#"{{"assertions": [{{"id": "says", "type": "contains", "needle": "{needle}"}}]}}"#)
    };
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\nsandbox = \"none\"\n[harness.command]\ncommand = [\"sh\", \"agent.sh\"]\n",
            ),
            ("agent.sh", AGENT),
            (".claude/commands/alpha.md", "alpha is fine\n"),
            (".claude/commands/alpha.eval.json", &check("fine")),
            (".claude/commands/beta.md", "beta is fine\n"),
            (".claude/commands/beta.eval.json", &check("fine")),
        ],
    );
    let key = tempfile::tempdir().unwrap();
    let (mut child, rx) = spawn_watch(d.path(), key.path());
    let first = pass(&rx).join("\n");
    assert!(first.contains("pass 1 (start)"), "{first}");
    assert!(first.contains("2 case-runs: 2 passed"), "{first}");

    // Only alpha's command changes: alpha runs again and now fails; beta comes from the cache.
    std::fs::write(
        d.path().join(".claude/commands/alpha.md"),
        "alpha is broken\n",
    )
    .unwrap();
    let second = pass(&rx).join("\n");
    // Ctrl-C while it waits ends the watch, as shells report SIGINT.
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("assay watch did not stop on SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(code, Some(130));
    assert!(
        second.contains("pass 2 (changed: .claude/commands/alpha.md)"),
        "{second}"
    );
    assert!(
        second.contains("clauditor:beta/beta (from the cache)"),
        "beta is reused: {second}"
    );
    assert!(
        second.contains("FAIL") && second.contains("clauditor:alpha/alpha"),
        "{second}"
    );
    assert!(
        second.contains("since the last pass: fixed none; broken clauditor:alpha/alpha#1 (skill)"),
        "{second}"
    );
    // Passes are not points of the history, as docs/reports.md says.
    assert!(
        !d.path().join(".assay/history.jsonl").exists(),
        "a watch pass appended to the history"
    );
}
