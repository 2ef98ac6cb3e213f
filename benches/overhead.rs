//! Runner overhead: 1,000 case-runs of a trivial command at `-j 8`, against spawning the same
//! command 1,000 times with 8 threads and nothing else.
//!
//! Run with `cargo bench --bench overhead`. The goal is at most 3 ms of assay's own work per
//! case-run; figures are kept in docs/benchmarks.md.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const CASES: usize = 1000;
const JOBS: usize = 8;

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir_all(root.join("evals/trivial")).unwrap();
    std::fs::write(
        root.join("assay.toml"),
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"true\"]\n",
    )
    .unwrap();
    // One evals.json of 1,000 evals, so each workspace copies a small project: what is measured
    // is assay's work per case-run (plan, stage, spawn, stream, collect, grade, record).
    let evals: Vec<String> = (0..CASES)
        .map(|i| format!(r#"{{"id": "c{i:04}", "prompt": "case {i}", "expectations": ["e"]}}"#))
        .collect();
    std::fs::write(
        root.join("evals/trivial/evals.json"),
        format!("{{\"evals\": [{}]}}", evals.join(",\n")),
    )
    .unwrap();

    let t = Instant::now();
    // No judge: the expectations stay not graded, and no model is called.
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env("PATH", "/usr/bin:/bin")
        // The runner's own work; the sandbox's cost is measured by `--bench sandbox`.
        .args([
            "run",
            "--sandbox",
            "none",
            "-j",
            &JOBS.to_string(),
            "--output-dir",
        ])
        .arg(tmp.path().join("run"))
        .arg("--workspace-dir")
        .arg(tmp.path().join("ws"))
        .current_dir(&root)
        .output()
        .unwrap();
    let assay = t.elapsed();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("{CASES} case-runs: {CASES} not graded")),
        "{}",
        said.lines().rev().take(3).collect::<Vec<_>>().join("\n")
    );

    let next = AtomicUsize::new(0);
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..JOBS {
            s.spawn(|| {
                while next.fetch_add(1, Ordering::Relaxed) < CASES {
                    Command::new("true").status().unwrap();
                }
            });
        }
    });
    let baseline = t.elapsed();
    let per = |d: std::time::Duration| d.as_secs_f64() * 1000.0 / CASES as f64;
    println!(
        "{CASES} case-runs of `true` at -j {JOBS}: assay {assay:?} ({:.2} ms each)",
        per(assay)
    );
    println!(
        "the same {CASES} spawns alone:          {baseline:?} ({:.2} ms each)",
        per(baseline)
    );
    let overhead = per(assay) - per(baseline);
    println!(
        "assay's overhead per case-run: {overhead:.2} ms (goal <= 3 ms: {})",
        if overhead <= 3.0 { "met" } else { "NOT met" }
    );
}
