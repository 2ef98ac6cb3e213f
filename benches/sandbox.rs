//! The sandbox's cost per case-run: the same 200 case-runs of `true` on a tiny project, at
//! `-j 1`, unsandboxed, in bubblewrap with no network, and in bubblewrap with the model
//! forwarder (one loopback endpoint); and, for scale, a bare `bwrap … true` against `true`.
//!
//! Run with `cargo bench --bench sandbox` (needs bubblewrap). The goal is at most 10 ms added
//! per case-run; figures are kept in docs/benchmarks.md.

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
    let offline = run(
        &root,
        &tmp.path().join("b"),
        &["--sandbox", "bwrap", "--network", "none"],
    );
    let model = run(
        &root,
        &tmp.path().join("c"),
        &["--sandbox", "bwrap", "--network", "model"],
    );
    let bare = spawn_loop("true", &[]);
    // The same namespaces and host view as a case-run's sandbox, without its covers.
    let mut args: Vec<&str> = assay::sandbox::jail::BASE.to_vec();
    args.extend(["--unshare-net", "true"]);
    let bwrap = spawn_loop("bwrap", &args);
    println!("{CASES} case-runs of `true` at -j 1:");
    println!("  unsandboxed:                 {:.2} ms each", per(none));
    println!(
        "  bwrap, --network none:       {:.2} ms each (+{:.2} ms)",
        per(offline),
        per(offline) - per(none)
    );
    println!(
        "  bwrap, --network model:      {:.2} ms each (+{:.2} ms)",
        per(model),
        per(model) - per(none)
    );
    println!(
        "for scale: `true` {:.2} ms, bare `bwrap … true` {:.2} ms (+{:.2} ms)",
        per(bare),
        per(bwrap),
        per(bwrap) - per(bare)
    );
    let added = per(model).max(per(offline)) - per(none);
    println!(
        "the sandbox adds {added:.2} ms per case-run (goal <= 10 ms: {})",
        if added <= 10.0 { "met" } else { "NOT met" }
    );
}
