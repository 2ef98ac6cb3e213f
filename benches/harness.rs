//! Harness adapters, built-in against component, in process, release build: the claude-code
//! adapter's line parser and summary (`harness::claude_code`) against the same adapter built
//! as a WIT 0.2.0 component (`plugins/claude-code`), over every stream recorded from the real
//! Claude Code CLI (tests/fixtures/streams/claude-code); and one command line from each.
//!
//! Run with `cargo bench --bench harness` (it builds plugins/claude-code for wasm32-wasip2
//! first). Figures are kept in docs/benchmarks.md.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use assay::harness::claude_code::ClaudeCode;
use assay::harness::{Harness, HarnessSettings, Invocation};
use assay::plugin::grants::Grants;
use assay::plugin::harness::PluginHarness;
use assay::plugin::loaded::LoadedPlugin;
use assay::process::Exited;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Every recorded stream, as lines.
fn streams(repo: &Path) -> Vec<Vec<String>> {
    let dir = repo.join("tests/fixtures/streams/claude-code");
    let mut out: Vec<Vec<String>> = std::fs::read_dir(&dir)
        .expect("recorded streams")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect()
        })
        .collect();
    out.sort();
    out
}

/// Parses every stream once (a parser per stream, as per turn); the time per line.
fn parse_all(
    h: &dyn Harness,
    inv: &Invocation<'_>,
    streams: &[Vec<String>],
    exit: &Exited,
) -> Duration {
    let lines: usize = streams.iter().map(Vec::len).sum();
    let t = Instant::now();
    for s in streams {
        let mut p = h.parser(inv);
        for l in s {
            std::hint::black_box(p.line(l));
        }
        std::hint::black_box(p.finish(exit));
    }
    t.elapsed() / lines as u32
}

fn main() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let status = std::process::Command::new("cargo")
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "-p",
            "claude-code",
        ])
        .current_dir(repo.join("plugins"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building plugins/claude-code failed");
    let wasm = repo.join("plugins/target/wasm32-wasip2/release/claude_code.wasm");
    let engine = assay::plugin::engine::shared().unwrap();
    let plugin = Arc::new(LoadedPlugin::load(engine, &wasm, Grants::default()).unwrap());
    let info = plugin.harnesses[0].clone();
    let settings = HarnessSettings::default();
    let builtin = ClaudeCode::new(&settings);
    let component = PluginHarness::new(plugin, info, &settings);

    let streams = streams(&repo);
    let lines: usize = streams.iter().map(Vec::len).sum();
    let bytes: usize = streams.iter().flatten().map(String::len).sum();
    let cwd = PathBuf::from("/w");
    let no_servers = std::collections::BTreeMap::new();
    let no_limits = assay::suite::AgentLimits::default();
    let inv = Invocation {
        prompt: "greeting card for Ada",
        turn: 0,
        resume: None,
        model: None,
        system_prompt: None,
        cwd: &cwd,
        home: &cwd,
        sync_tasks: false,
        allow_hang_heuristic: true,
        agent: None,
        sandboxed: false,
        mcp_servers: &no_servers,
        limits: &no_limits,
        plugin_dirs: Vec::new(),
        grants: &Default::default(),
    };
    let exit = Exited {
        code: Some(0),
        signal: None,
        timed_out: false,
        interrupted: false,
        duration: Duration::from_millis(900),
        stdout_bytes: 0,
        truncated: false,
        stderr_tail: String::new(),
        started: None,
        stopped_by: None,
        decided: false,
    };
    // Warm up, then medians of 30 passes over every stream.
    for _ in 0..3 {
        parse_all(&builtin, &inv, &streams, &exit);
        parse_all(&component, &inv, &streams, &exit);
    }
    let b = median(
        (0..30)
            .map(|_| parse_all(&builtin, &inv, &streams, &exit))
            .collect(),
    );
    let c = median(
        (0..30)
            .map(|_| parse_all(&component, &inv, &streams, &exit))
            .collect(),
    );
    println!(
        "{} recorded streams, {lines} lines, {:.0} KB",
        streams.len(),
        bytes as f64 / 1e3
    );
    println!(
        "per line (parser per stream, summary included): built-in {:.1} µs, component {:.1} µs ({:.1}×)",
        b.as_secs_f64() * 1e6,
        c.as_secs_f64() * 1e6,
        c.as_secs_f64() / b.as_secs_f64()
    );
    let time_command = |h: &dyn Harness| {
        median(
            (0..300)
                .map(|_| {
                    let t = Instant::now();
                    std::hint::black_box(h.command(&inv).unwrap());
                    t.elapsed()
                })
                .collect(),
        )
    };
    println!(
        "one command line: built-in {:.1} µs, component {:.1} µs",
        time_command(&builtin).as_secs_f64() * 1e6,
        time_command(&component).as_secs_f64() * 1e6
    );
    let t = Instant::now();
    let n = 100;
    for _ in 0..n {
        std::hint::black_box(component.parser(&inv));
    }
    println!(
        "a component parser for one turn (store, instance, resource): {:.1} µs",
        (t.elapsed() / n).as_secs_f64() * 1e6
    );
}
