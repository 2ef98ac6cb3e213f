//! A plain program printing 1 GB on stdout under the default sandbox: how much its case-run
//! stores and how much memory assay takes, running it and writing its HTML report.
//!
//! Run with `cargo bench --bench huge_output` (needs bubblewrap). The goals: at most 70 MB
//! stored per case-run, at most 150 MB of assay's peak memory; figures are kept in
//! docs/benchmarks.md.

use std::process::Command;

/// The largest resident set of any child waited for so far, in MiB.
fn children_peak_mib() -> u64 {
    // SAFETY: a zeroed struct the call fills.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    u.ru_maxrss as u64 >> 10
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir_all(root.join("evals/huge")).unwrap();
    std::fs::write(
        root.join("assay.toml"),
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"print.sh\"]\n",
    )
    .unwrap();
    std::fs::write(
        root.join("print.sh"),
        "yes 'padding padding padding padding padding padding padding padding' | head -c 1000000000\necho 'I ran: rm -rf /'\n",
    )
    .unwrap();
    std::fs::write(
        root.join("evals/huge/evals.json"),
        r#"{"evals": [{"id": "huge", "prompt": "print", "expectations": ["e"]}]}"#,
    )
    .unwrap();
    let out = tmp.path().join("run");
    let t = std::time::Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_assay"))
        .env("ASSAY_NO_CACHE", "1")
        .env("PATH", "/usr/bin:/bin")
        .args(["run", "--output-dir"])
        .arg(&out)
        .current_dir(&root)
        .output()
        .unwrap();
    let took = t.elapsed();
    let run_peak = children_peak_mib();
    assert!(
        out.join("run.json").exists(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stored = assay::sandbox::limits::usage(&out) >> 20;
    let html = Command::new(env!("CARGO_BIN_EXE_assay"))
        .arg("report")
        .arg(&out)
        .args(["--format", "html"])
        .output()
        .unwrap();
    let report_peak = children_peak_mib();
    println!("1 GB on a plain program's stdout, one case-run, --sandbox auto:");
    println!(
        "  the run took {:.1} s; assay's peak memory {run_peak} MiB",
        took.as_secs_f64()
    );
    println!("  the run folder: {stored} MiB");
    println!(
        "  the HTML report: {} KiB; peak memory over both commands {report_peak} MiB",
        html.stdout.len() >> 10
    );
    println!(
        "stored per case-run {stored} MiB (goal <= 70 MB: {}); peak {run_peak} MiB (goal <= 150 MB: {})",
        if stored * 1_048_576 <= 70_000_000 {
            "met"
        } else {
            "NOT met"
        },
        if run_peak * 1_048_576 <= 150_000_000 {
            "met"
        } else {
            "NOT met"
        }
    );
}
