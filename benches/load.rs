//! Load: 10,000 case-runs (2,500 cases × `--runs 4`) of a trivial command at `-j 16`, every
//! result recorded, and assay's peak memory bounded.
//!
//! Run with `cargo bench --bench load`. Goals: every case-run recorded, peak RSS ≤ 100 MB;
//! the figures (wall time, per-case-run overhead, peak RSS) are kept in docs/benchmarks.md.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CASES: usize = 2500;
const RUNS: usize = 4;
const JOBS: usize = 16;

/// The peak resident set size of a live process (`VmHWM`), in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir_all(root.join("evals/load")).unwrap();
    std::fs::write(
        root.join("assay.toml"),
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"true\"]\n",
    )
    .unwrap();
    let evals: Vec<String> = (0..CASES)
        .map(|i| format!(r#"{{"id": "c{i:05}", "prompt": "case {i}", "expectations": ["e"]}}"#))
        .collect();
    std::fs::write(
        root.join("evals/load/evals.json"),
        format!("{{\"evals\": [{}]}}", evals.join(",\n")),
    )
    .unwrap();

    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_assay"))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env("PATH", "/usr/bin:/bin")
        .args([
            "run",
            // The runner's throughput and memory; the sandbox's cost is `--bench sandbox`.
            "--sandbox",
            "none",
            "--no-cache",
            "--runs",
            &RUNS.to_string(),
            "-j",
            &JOBS.to_string(),
            "--output-dir",
        ])
        .arg(tmp.path().join("run"))
        .arg("--workspace-dir")
        .arg(tmp.path().join("ws"))
        .current_dir(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Read stdout on a thread so the pipe never fills; sample the peak RSS meanwhile.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Some(kib) = peak_rss_kib(pid) {
            peak = peak.max(kib);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let wall = t.elapsed();
    let said = reader.join().unwrap();
    let total = CASES * RUNS;
    assert!(
        said.contains(&format!("{total} case-runs: {total} not graded")),
        "{}",
        said.lines().rev().take(5).collect::<Vec<_>>().join("\n")
    );
    let recorded = walk_results(&tmp.path().join("run"));
    assert_eq!(recorded, total, "every case-run has its result.json");
    println!(
        "{total} case-runs ({CASES} cases × {RUNS} runs) at -j {JOBS}: {:.1} s wall, {:.2} ms per case-run, peak RSS {:.1} MB (goal ≤ 100 MB), {recorded} results recorded",
        wall.as_secs_f64(),
        wall.as_secs_f64() * 1000.0 / total as f64,
        peak as f64 / 1024.0
    );
}

fn walk_results(dir: &std::path::Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "result.json") {
                n += 1;
            }
        }
    }
    n
}
