//! Adaptive repeats against a fixed count, on a suite of mostly passing cases: ten cases (eight
//! that always pass, one that fails its third run, one that always fails) through the `command`
//! harness, once with `--runs 10` and once with `--runs auto --min-pass-rate 0.8 --max-runs 10`.
//! Prints the agent runs each took and whether every case got the same verdict.
//!
//! Run with `cargo bench --bench adaptive`. The goal: at least 40% fewer agent runs than
//! `--runs 10`, with the same case verdicts; figures are kept in docs/benchmarks.md.

use std::path::Path;
use std::process::Command;

const CASES: usize = 10;

/// The suite, and an agent that counts its runs of each case in `counts` (outside the
/// workspace: the runs are unsandboxed).
fn project(root: &Path, counts: &Path) {
    std::fs::create_dir_all(root.join("evals/bench")).unwrap();
    std::fs::create_dir_all(counts).unwrap();
    for i in 0..CASES {
        std::fs::write(
            root.join(format!("evals/bench/{i:03}.yaml")),
            format!("timestamp: 2026-11-25T00:00:00Z\nname: c{i}\nprompt: case-{i}\nexpected: ok\nassertions:\n  - type: contains\n    value: fine\n"),
        )
        .unwrap();
    }
    let agent = format!(
        "p=$(cat); f={c}/$p; n=$(cat $f 2>/dev/null || echo 0); n=$((n+1)); echo $n > $f\ncase $p in\n  case-8) [ $n = 3 ] && echo bad || echo fine ;;\n  case-9) echo bad ;;\n  *) echo fine ;;\nesac\n",
        c = counts.display()
    );
    std::fs::write(root.join("agent.sh"), agent).unwrap();
    std::fs::write(
        root.join("assay.toml"),
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"agent.sh\"]\n",
    )
    .unwrap();
}

/// Runs `assay run` with `args`; the case verdicts and the agent runs taken.
fn run(root: &Path, out: &Path, args: &[&str]) -> (Vec<(String, String)>, u64) {
    let o = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args([
            "run",
            "--sandbox",
            "none",
            "--no-cache",
            "-j",
            "2",
            "--json",
            "--output-dir",
        ])
        .arg(out)
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}\n{}", String::from_utf8_lossy(&o.stderr));
    });
    let verdicts = v["statistics"]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["case"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let runs = v["case_runs"].as_array().unwrap().len() as u64;
    (verdicts, runs)
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let fixed_root = tmp.path().join("fixed");
    let auto_root = tmp.path().join("auto");
    project(&fixed_root, &tmp.path().join("counts-fixed"));
    project(&auto_root, &tmp.path().join("counts-auto"));
    let threshold = ["--min-pass-rate", "0.8"];
    let (fixed, fixed_runs) = run(
        &fixed_root,
        &tmp.path().join("out-fixed"),
        &[&["--runs", "10"][..], &threshold].concat(),
    );
    let (auto, auto_runs) = run(
        &auto_root,
        &tmp.path().join("out-auto"),
        &[&["--runs", "auto", "--max-runs", "10"][..], &threshold].concat(),
    );
    let same = fixed == auto;
    let saved = 1.0 - auto_runs as f64 / fixed_runs as f64;
    println!(
        "{CASES} cases (8 always pass, 1 fails its third run, 1 always fails), --min-pass-rate 0.8:"
    );
    println!("  --runs 10:                  {fixed_runs} agent runs");
    println!(
        "  --runs auto --max-runs 10:  {auto_runs} agent runs ({:.0}% fewer)",
        saved * 100.0
    );
    println!(
        "  the same case verdicts: {}",
        if same { "yes" } else { "NO" }
    );
    if !same {
        println!("  fixed: {fixed:?}\n  auto:  {auto:?}");
    }
    println!(
        "goal >= 40% fewer with the same verdicts: {}",
        if saved >= 0.4 && same {
            "met"
        } else {
            "NOT met"
        }
    );
}
