//! The sandbox's cost per case-run: the same 200 case-runs of `true` on a tiny project, at
//! `-j 1`, unsandboxed, then under each Linux backend (bubblewrap, Landlock) with no network
//! and with the model forwarder (one loopback endpoint); and, for scale, a bare `bwrap … true`
//! against `true`; and the per case-run limits (control groups, the disk watch) on against off.
//!
//! Run with `cargo bench --bench sandbox` (needs bubblewrap and Landlock ABI 4). The goals:
//! at most 10 ms added per case-run by bubblewrap, 3 ms by Landlock, 2 ms by the limits; figures are kept in
//! docs/benchmarks.md.

use std::process::Command;
use std::time::{Duration, Instant};

const CASES: usize = 200;

fn run(root: &std::path::Path, out: &std::path::Path, args: &[&str]) -> Duration {
    let t = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_assay"))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env("PATH", "/usr/bin:/bin")
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("ASSAY_NO_CACHE", "1")
        .args(["run", "-j", "1", "--output-dir"])
        .arg(out)
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    let took = t.elapsed();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains(&format!("{CASES} case-runs: {CASES} not graded")),
        "{said}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    took
}

fn spawn_loop(program: &str, args: &[&str]) -> Duration {
    let t = Instant::now();
    for _ in 0..CASES {
        assert!(Command::new(program).args(args).status().unwrap().success());
    }
    t.elapsed()
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir_all(root.join("evals/trivial")).unwrap();
    std::fs::write(
        root.join("assay.toml"),
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"true\"]\n",
    )
    .unwrap();
    let evals: Vec<String> = (0..CASES)
        .map(|i| format!(r#"{{"id": "c{i:04}", "prompt": "case {i}", "expectations": ["e"]}}"#))
        .collect();
    std::fs::write(
        root.join("evals/trivial/evals.json"),
        format!("{{\"evals\": [{}]}}", evals.join(",\n")),
    )
    .unwrap();
    let per = |d: Duration| d.as_secs_f64() * 1000.0 / CASES as f64;

    // Warm the page cache and the binary once.
    run(&root, &tmp.path().join("warm"), &["--sandbox", "none"]);
    let none = run(&root, &tmp.path().join("a"), &["--sandbox", "none"]);
    println!("{CASES} case-runs of `true` at -j 1:");
    println!("  unsandboxed:                 {:.2} ms each", per(none));
    let mut added = Vec::new();
    for backend in ["bwrap", "landlock"] {
        let mut worst: f64 = 0.0;
        for network in ["none", "model"] {
            let took = run(
                &root,
                &tmp.path().join(format!("{backend}-{network}")),
                &["--sandbox", backend, "--network", network],
            );
            println!(
                "  {backend}, --network {network}:{:>width$.2} ms each (+{:.2} ms)",
                per(took),
                per(took) - per(none),
                width = 14 - backend.len() - network.len() + 6,
            );
            worst = worst.max(per(took) - per(none));
        }
        added.push((backend, worst));
    }
    // The limits (a control group per case-run, the disk measured): defaults against none.
    let unlimited = [
        "--limit-memory",
        "none",
        "--limit-pids",
        "none",
        "--limit-disk",
        "none",
    ];
    let mut limits_cost = Vec::new();
    for backend in ["bwrap", "landlock"] {
        let mut with = vec!["--sandbox", backend, "--network", "none"];
        let limited = run(&root, &tmp.path().join(format!("{backend}-limited")), &with);
        with.extend(unlimited);
        let free = run(
            &root,
            &tmp.path().join(format!("{backend}-unlimited")),
            &with,
        );
        let cost = per(limited) - per(free);
        println!(
            "  {backend}, limits on vs off:  {:.2} vs {:.2} ms each ({cost:+.2} ms)",
            per(limited),
            per(free)
        );
        limits_cost.push((backend, cost));
    }
    let bare = spawn_loop("true", &[]);
    // The same namespaces and host view as a case-run's sandbox, without its covers.
    let system = assay::sandbox::bwrap::mounts::system();
    let mut args: Vec<&str> = assay::sandbox::bwrap::mounts::BASE.to_vec();
    args.extend(system.iter().map(String::as_str));
    args.extend(["--unshare-net", "true"]);
    let bwrap = spawn_loop("bwrap", &args);
    println!(
        "for scale: `true` {:.2} ms, bare `bwrap … true` {:.2} ms (+{:.2} ms)",
        per(bare),
        per(bwrap),
        per(bwrap) - per(bare)
    );
    for (backend, goal) in [("bwrap", 10.0), ("landlock", 3.0)] {
        let worst = added
            .iter()
            .find(|(b, _)| *b == backend)
            .map(|(_, w)| *w)
            .unwrap_or(0.0);
        println!(
            "{backend} adds {worst:.2} ms per case-run (goal <= {goal} ms: {})",
            if worst <= goal { "met" } else { "NOT met" }
        );
    }
    for (backend, cost) in limits_cost {
        println!(
            "the limits add {cost:.2} ms per case-run under {backend} (goal <= 2 ms: {})",
            if cost <= 2.0 { "met" } else { "NOT met" }
        );
    }
}
