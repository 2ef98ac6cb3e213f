//! Shards cut by count against shards cut by expected time, on a skewed suite.
//!
//! Part one runs it: 24 cases through the `command` harness, six of them slow (1 s) and
//! sorted so that dealing round-robin puts all six on shard 1 of 4, the rest 0.1 s. One whole
//! run records the durations; then the four shards run one after another, first cut by count,
//! then by time from the recorded run (`--shard-timings`). Each shard's wall time is measured.
//!
//! Part two cuts a large plan without running it: 2,000 cases whose times follow a heavy
//! tail (most under a minute, a few of ten), for 8 and 32 shards, by count and by time, and
//! how long the cut takes.
//!
//! Run with `cargo bench --bench shards`. The goal: the slowest shard within 15% of the mean
//! when cut by time, on a suite where cutting by count is at least 2x off; figures are kept
//! in docs/benchmarks.md.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use assay::run::shard::cut;

const CASES: usize = 24;
const SHARDS: u32 = 4;

fn project(root: &Path) {
    std::fs::create_dir_all(root.join("evals/bench")).unwrap();
    for i in 0..CASES {
        // c00, c04, c08, … land on shard 1 when dealt round-robin.
        let word = if i % 4 == 0 { "slow" } else { "quick" };
        std::fs::write(
            root.join(format!("evals/bench/c{i:02}.yaml")),
            format!("timestamp: 2026-11-26T00:00:00Z\nname: c{i:02}\nprompt: {word}-{i}\nexpected: ok\nassertions:\n  - type: contains\n    value: fine\n"),
        )
        .unwrap();
    }
    let agent = "p=$(cat)\ncase $p in slow-*) sleep 1 ;; *) sleep 0.1 ;; esac\necho fine\n";
    std::fs::write(root.join("agent.sh"), agent).unwrap();
    std::fs::write(
        root.join("assay.toml"),
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"agent.sh\"]\n",
    )
    .unwrap();
}

/// `assay run` in `root` with `args`, one case-run at a time; its wall time in seconds.
fn run(root: &Path, args: &[&str]) -> f64 {
    let start = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["run", "--sandbox", "none", "--no-cache", "-j", "1"])
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    start.elapsed().as_secs_f64()
}

/// The slowest of `times` over their mean.
fn skew(times: &[f64]) -> f64 {
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    times.iter().copied().fold(0.0, f64::max) / mean
}

fn shards(root: &Path, name: &str, extra: &[&str]) -> Vec<f64> {
    (1..=SHARDS)
        .map(|k| {
            let shard = format!("{k}/{SHARDS}");
            let out = format!("{name}-{k}");
            let mut args = vec!["--shard", &shard, "--output-dir", &out];
            args.extend(extra);
            run(root, &args)
        })
        .collect()
}

fn show(label: &str, times: &[f64]) {
    let each: Vec<String> = times.iter().map(|t| format!("{t:.2}")).collect();
    println!(
        "  {label}: shards {} s; slowest / mean {:.2}",
        each.join(", "),
        skew(times)
    );
}

fn part_one() -> (f64, f64) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    project(root);
    let whole = run(root, &["--output-dir", "whole"]);
    println!(
        "{CASES} cases (6 of 1 s, 18 of 0.1 s), {SHARDS} shards, -j 1; the whole run {whole:.2} s"
    );
    let by_count = shards(root, "count", &[]);
    let by_time = shards(root, "time", &["--shard-timings", "whole"]);
    show("by count", &by_count);
    show("by time ", &by_time);
    (skew(&by_count), skew(&by_time))
}

/// A heavy tail from a fixed seed: most cases 5–60 s, one in twenty up to ten minutes.
fn durations(n: usize) -> Vec<(String, Option<f64>)> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x % 10_000) as f64 / 10_000.0;
            let secs = if i % 20 == 0 {
                60.0 + 540.0 * u
            } else {
                5.0 + 55.0 * u
            };
            (format!("s/c{i:05}"), Some(secs * 1000.0))
        })
        .collect()
}

fn part_two() {
    let plan = durations(2_000);
    println!("2,000 cases, heavy-tailed times (cut only):");
    for count in [8u32, 32] {
        let start = Instant::now();
        let timed = cut(&plan, count);
        let took = start.elapsed();
        let untimed: Vec<(String, Option<f64>)> =
            plan.iter().map(|(k, _)| (k.clone(), None)).collect();
        let by_count = cut(&untimed, count);
        let ms: std::collections::BTreeMap<&str, f64> =
            plan.iter().map(|(k, t)| (k.as_str(), t.unwrap())).collect();
        let mut loads = vec![0.0; count as usize];
        for (case, k) in &by_count.shard_of {
            loads[*k as usize - 1] += ms[case.as_str()];
        }
        let timed_loads: Vec<f64> = timed.expected_ms.iter().map(|m| *m as f64).collect();
        println!(
            "  {count} shards: slowest / mean by count {:.3}, by time {:.4}; the cut took {:.2} ms",
            skew(&loads),
            skew(&timed_loads),
            took.as_secs_f64() * 1000.0
        );
    }
}

fn main() {
    let (count, time) = part_one();
    part_two();
    println!(
        "goal: by time within 15% of the mean ({:.0}%) where by count is >= 2x off ({count:.2}x): {}",
        (time - 1.0) * 100.0,
        if time <= 1.15 && count >= 2.0 {
            "met"
        } else {
            "NOT met"
        }
    );
}
