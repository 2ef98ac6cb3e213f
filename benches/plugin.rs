//! Plugin costs, in process, release build:
//! - a plugin check against the same check built in, on a 100 KB output: the hostile test
//!   plugin's `echo` (does the output contain a needle, read through the case-run resource)
//!   against the built-in `contains` (goal: ≤ 2×);
//! - a plugin's cold start with a warm compile cache: loading the component from the cache,
//!   pre-instantiating it and asking what it provides (goal: ≤ 5 ms).
//!
//! Run with `cargo bench --bench plugin` (it builds plugins/ for wasm32-wasip2 first).
//! Figures are kept in docs/benchmarks.md.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use assay::assert::check::Checks;
use assay::assert::view::CaseRunView;
use assay::config::PluginConfig;
use assay::plugin::{Declared, NativePolicy, Plugins};
use assay::suite::{Check, CheckTarget};
use serde_json::json;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
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
            "hostile",
            "-p",
            "markdown",
        ])
        .current_dir(repo.join("plugins"))
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .unwrap();
    assert!(status.success());
    let wasm_dir = repo.join("plugins/target/wasm32-wasip2/release");
    let cache = tempfile::tempdir().unwrap();
    // SAFETY: set before any thread reads the environment.
    unsafe { std::env::set_var("ASSAY_CACHE_DIR", cache.path()) };

    let declare = |name: &str| Declared {
        config: PluginConfig {
            path: wasm_dir.join(name).display().to_string(),
            ..PluginConfig::default()
        },
        root: repo.clone(),
        origin: "bench".into(),
    };

    // Cold start: the first load compiles and fills the cache; later loads are served by it.
    let t = Instant::now();
    let plugins = Plugins::load(&[declare("hostile.wasm")], NativePolicy::Refused).unwrap();
    let first = t.elapsed();
    let mut cold = Vec::new();
    for _ in 0..30 {
        let t = Instant::now();
        let p = Plugins::load(&[declare("markdown.wasm")], NativePolicy::Refused).unwrap();
        cold.push(t.elapsed());
        drop(p);
    }
    let mut cold_hostile = Vec::new();
    for _ in 0..30 {
        let t = Instant::now();
        let p = Plugins::load(&[declare("hostile.wasm")], NativePolicy::Refused).unwrap();
        cold_hostile.push(t.elapsed());
        drop(p);
    }

    // A 100 KB output with the needle at the end.
    let mut output = "lorem ipsum dolor sit amet ".repeat(100_000 / 27);
    output.push_str("NEEDLE");
    let view = Arc::new(CaseRunView {
        output: output.into(),
        ..CaseRunView::default()
    });
    let mut checks = Checks::builtin(Default::default());
    plugins.install(&mut checks);
    let check = |kind: &str| Check {
        id: kind.into(),
        kind: kind.into(),
        config: json!({"needle": "NEEDLE"}),
        negate: false,
        weight: 1.0,
        target: CheckTarget::Output,
        location: None,
    };
    let (builtin, plugin) = (vec![check("contains")], vec![check("echo")]);
    let time = |list: &[Check]| {
        let mut v = Vec::new();
        for _ in 0..500 {
            let t = Instant::now();
            let o = checks.run(list, &view);
            v.push(t.elapsed());
            assert!(o[0].passed, "{o:?}");
        }
        median(v)
    };
    time(&builtin);
    time(&plugin);
    let (b, p) = (time(&builtin), time(&plugin));

    // Where a plugin call's time goes.
    if let Some(assay::plugin::Provider::Wasm(w)) = plugins.providers.first() {
        let (mut s_t, mut i_t, mut c_t) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..300 {
            let t = Instant::now();
            let mut store = w.store();
            s_t.push(t.elapsed());
            let t = Instant::now();
            let inst = w.instantiate(&mut store).unwrap();
            i_t.push(t.elapsed());
            let t = Instant::now();
            let run = store
                .data_mut()
                .table
                .push(assay::plugin::host::CaseRunResource(view.clone()))
                .unwrap();
            let r = w
                .exports()
                .evaluate(&mut store, &inst, "echo", r#"{"needle": "NEEDLE"}"#, run)
                .unwrap();
            assert!(r.unwrap().passed);
            c_t.push(t.elapsed());
        }
        println!(
            "a plugin call: store {:.1} µs, instantiate {:.1} µs, call {:.1} µs",
            median(s_t).as_secs_f64() * 1e6,
            median(i_t).as_secs_f64() * 1e6,
            median(c_t).as_secs_f64() * 1e6
        );
    }

    println!(
        "first load (compile, fill the cache): {:.1} ms",
        first.as_secs_f64() * 1e3
    );
    println!(
        "cold start with a warm cache: markdown {:.2} ms, hostile {:.2} ms (medians of 30; goal <= 5 ms)",
        median(cold).as_secs_f64() * 1e3,
        median(cold_hostile).as_secs_f64() * 1e3
    );
    println!(
        "100 KB output: built-in contains {:.1} µs, plugin echo {:.1} µs: {:.2}x (medians of 500; goal <= 2x)",
        b.as_secs_f64() * 1e6,
        p.as_secs_f64() * 1e6,
        p.as_secs_f64() / b.as_secs_f64()
    );
}
