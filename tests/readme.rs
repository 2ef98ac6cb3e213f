//! The README, run as a new user runs it: every command it shows, on a fresh copy of the
//! repository (the files git tracks, and new ones it does not ignore), in the order shown,
//! with `assay` on PATH (what `cargo install --locked --path .` gives; `cargo run --` is the same
//! binary). Shown output must match, but for what differs from machine to machine (run
//! stamps, timings, the bubblewrap version, where the cache key lives); a `…` line in the
//! README stands for any lines.
//!
//! Not run here, each tested elsewhere: the install lines (apt-get, `cargo install`, rustup,
//! building `plugins/`: the test builds them once for the whole suite and copies the
//! components in), `scripts/test` (it is what runs this test), and the lines through a real
//! agent (`--harness claude-code`, `--harness codex`: they need a login; the end-to-end tests
//! drive both CLIs against the scripted model server).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;

/// One command the README shows, with the output it shows (if any).
#[derive(Debug)]
struct Shown {
    line: usize,
    command: String,
    output: Option<Vec<String>>,
}

/// Lines of the README's `sh` blocks that this test does not run, and why.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "apt-get install",
        "installs system packages (scripts/test does, as root)",
    ),
    (
        "cargo install --locked --path .",
        "a release build of this same binary",
    ),
    ("rustup target add", "installs a target (scripts/test does)"),
    (
        "(cd plugins && cargo build",
        "built once by support::wasm_plugins, copied in",
    ),
    ("scripts/test", "the test command: it runs this test"),
    (
        "--harness claude-code",
        "needs `claude` and a login (tests/claude_code.rs)",
    ),
    (
        "--harness codex",
        "needs `codex` and a login (tests/codex.rs)",
    ),
];

/// The README's commands, in order.
fn commands(readme: &str) -> Vec<Shown> {
    let lines: Vec<&str> = readme.lines().collect();
    // Fenced blocks: (language, first line number, lines).
    let mut blocks: Vec<(String, usize, Vec<&str>)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(lang) = lines[i].strip_prefix("```") {
            let start = i + 1;
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() && !lines[i].starts_with("```") {
                body.push(lines[i]);
                i += 1;
            }
            blocks.push((lang.trim().to_string(), start + 1, body));
        }
        i += 1;
    }
    let mut out = Vec::new();
    for (b, (lang, first, body)) in blocks.iter().enumerate() {
        if body.first().is_some_and(|l| l.starts_with("$ ")) {
            // `$ command` then its output, up to the next `$ `.
            let mut k = 0;
            while k < body.len() {
                let command = body[k].strip_prefix("$ ").expect("a $ line").to_string();
                let line = first + k;
                k += 1;
                let mut output = Vec::new();
                while k < body.len() && !body[k].starts_with("$ ") {
                    output.push(body[k].to_string());
                    k += 1;
                }
                out.push(Shown {
                    line,
                    command,
                    output: Some(output),
                });
            }
        } else if lang == "sh" {
            let runnable: Vec<(usize, String)> = body
                .iter()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .filter(|(_, l)| !NOT_RUN.iter().any(|(p, _)| l.contains(p)))
                .map(|(k, l)| {
                    let l = l.split("  #").next().unwrap_or(l).trim();
                    let l = l
                        .strip_prefix("cargo run -- ")
                        .map_or(l.to_string(), |r| format!("assay {r}"));
                    assert!(
                        l.starts_with("assay "),
                        "README line {}: `{l}` is neither run nor listed in NOT_RUN",
                        first + k
                    );
                    (first + k, l)
                })
                .collect();
            // An `sh` block of one command followed by a plain block: that is its output.
            let next_is_output = blocks.get(b + 1).is_some_and(|(l, _, body)| {
                l.is_empty() && !body.iter().any(|x| x.starts_with("$ "))
            });
            let single = runnable.len() == 1;
            for (line, command) in runnable {
                let output = (single && next_is_output)
                    .then(|| blocks[b + 1].2.iter().map(|s| s.to_string()).collect());
                out.push(Shown {
                    line,
                    command,
                    output,
                });
            }
        }
    }
    out
}

/// What varies from machine to machine, made the same on both sides.
fn normalized(line: &str) -> String {
    let rules: &[(&str, &str)] = &[
        (r"\d{8}T\d{6}Z(-\d+)?", "<stamp>"),
        (r"\(\d+\.\d+s\)", "(<secs>)"),
        (r"bubblewrap \d+(\.\d+)*", "bubblewrap <version>"),
        (r"Landlock ABI \d+", "Landlock ABI <n>"),
        // The backend that runs: bubblewrap where it works, else Landlock.
        (r"^(✓ sandbox +)\w+ \([^)]*\)", "$1<backend>"),
        (r"\S*/assay/cache\.key", "<cache key>"),
        (r"workspaces: .*", "workspaces: <how>"),
    ];
    let mut s = line.trim_end().to_string();
    for (pattern, with) in rules {
        s = fancy_regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&s, *with)
            .into_owned();
    }
    s
}

/// A case-run's progress line: these print as case-runs finish, in any order.
fn is_progress(line: &str) -> bool {
    ["PASS ", "FAIL ", "ERROR ", "TIMEOUT "]
        .iter()
        .any(|p| line.starts_with(p))
}

/// Each run of consecutive progress lines put in order.
fn sort_progress_runs(lines: &mut [String]) {
    let mut k = 0;
    while k < lines.len() {
        let n = lines[k..].iter().take_while(|l| is_progress(l)).count();
        lines[k..k + n].sort();
        k += n.max(1);
    }
}

/// Whether `actual` is what the README shows (`…` lines standing for any lines; progress
/// lines in any order).
fn matches(shown: &[String], actual: &str) -> Result<(), String> {
    let mut shown: Vec<String> = shown.iter().map(|l| normalized(l)).collect();
    let mut actual: Vec<String> = actual.lines().map(normalized).collect();
    sort_progress_runs(&mut shown);
    sort_progress_runs(&mut actual);
    let mut at = 0;
    let mut skipping = false;
    for want in &shown {
        if want.trim() == "…" {
            skipping = true;
            continue;
        }
        if skipping {
            match actual[at..].iter().position(|a| a == want) {
                Some(k) => at += k + 1,
                None => return Err(format!("`{want}` never comes (after line {at})")),
            }
            skipping = false;
        } else {
            match actual.get(at) {
                Some(a) if a == want => at += 1,
                other => {
                    return Err(format!(
                        "line {}: wanted `{want}`, got `{}`",
                        at + 1,
                        other.map_or("(the end)", |s| s)
                    ));
                }
            }
        }
    }
    if !skipping && at < actual.len() {
        return Err(format!("more than shown, from `{}`", actual[at]));
    }
    Ok(())
}

/// The repository's files as a clone has them, copied to `to`.
fn fresh_copy(to: &Path) {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(out.status.success());
    for rel in out.stdout.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let rel = PathBuf::from(String::from_utf8(rel.to_vec()).unwrap());
        let from = repo().join(&rel);
        if !from.exists() && from.symlink_metadata().is_err() {
            continue; // deleted in the work tree, not yet committed
        }
        let dest = to.join(&rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        if from.symlink_metadata().unwrap().file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&from).unwrap(), &dest).unwrap();
        } else {
            std::fs::copy(&from, &dest).unwrap();
        }
    }
}

/// A folder with a link to every program on this PATH but bubblewrap: a machine without it.
fn path_without_bwrap(to: &Path) -> String {
    for dir in std::env::split_paths(&std::env::var("PATH").unwrap_or_default()) {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let (name, link) = (e.file_name(), to.join(e.file_name()));
            if name != "bwrap" && !link.exists() && e.path().is_file() {
                std::os::unix::fs::symlink(e.path(), link).unwrap();
            }
        }
    }
    to.display().to_string()
}

fn run_shown(dir: &Path, bin_dir: &Path, path: &str, command: &str) -> std::process::Output {
    let path = format!("{}:{path}", bin_dir.display());
    Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env_remove("ASSAY_JUDGE")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap()
}

#[test]
fn every_command_the_readme_shows_works_on_a_fresh_copy() {
    readme_commands_work(&std::env::var("PATH").unwrap_or_default());
}

/// A fresh machine: no bubblewrap on PATH. The same commands work, contained by Landlock.
#[test]
fn every_command_the_readme_shows_works_without_bubblewrap() {
    let bin = tempfile::tempdir().unwrap();
    let path = path_without_bwrap(bin.path());
    let out = Command::new("sh")
        .args(["-c", "command -v bwrap"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(!out.status.success(), "bwrap is still on PATH");
    readme_commands_work(&path);
}

fn readme_commands_work(path: &str) {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let shown = commands(&readme);
    assert!(
        shown.len() >= 6,
        "the README's commands were not found: {shown:?}"
    );
    let fresh = tempfile::tempdir().unwrap();
    fresh_copy(fresh.path());
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_assay"));
    let bin_dir = bin.parent().unwrap();

    // Before the plugins are built, the examples say what to do first.
    let out = run_shown(fresh.path(), bin_dir, path, "assay validate examples");
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no such plugin file or folder (a build output: build it first with `rustup target add wasm32-wasip2` and `cargo build --release --target wasm32-wasip2` in"),
        "{}",
        stderr(&out)
    );

    // Then as the Install section says: the plugins built (here, copied from this build).
    let built = wasm_plugins();
    let into = fresh.path().join("plugins/target/wasm32-wasip2/release");
    std::fs::create_dir_all(&into).unwrap();
    for e in std::fs::read_dir(&built).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "wasm") {
            std::fs::copy(e.path(), into.join(e.file_name())).unwrap();
        }
    }

    let mut failures = Vec::new();
    for s in &shown {
        let out = run_shown(fresh.path(), bin_dir, path, &s.command);
        if code(&out) != 0 {
            failures.push(format!(
                "README line {}: `{}` exited {}\n{}{}",
                s.line,
                s.command,
                code(&out),
                stdout(&out),
                stderr(&out)
            ));
            continue;
        }
        if let Some(want) = &s.output
            && let Err(why) = matches(want, &stdout(&out))
        {
            failures.push(format!(
                "README line {}: `{}` printed other than shown: {why}\n{}",
                s.line,
                s.command,
                stdout(&out)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_matcher_elides_and_normalizes() {
    let shown = |s: &str| s.lines().map(str::to_string).collect::<Vec<_>>();
    assert!(matches(&shown("a (0.0s)\n…\nz"), "a (1.2s)\nb\nc\nz\n").is_ok());
    assert!(matches(&shown("a\nz"), "a\nb\nz\n").is_err());
    assert!(matches(&shown("a"), "a\nmore\n").is_err());
    assert!(matches(&shown("a\n…"), "a\nmore\n").is_ok());
    assert!(matches(&shown("PASS  x\nPASS  y\nend"), "PASS  y\nPASS  x\nend\n").is_ok());
    assert!(matches(&shown("PASS  x\nPASS  y"), "PASS  y\nPASS  z\n").is_err());
}
