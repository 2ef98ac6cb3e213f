//! What the project's size costs each case-run: assay's time per sandboxed case-run of
//! `true` for a 5,000-file project against a 201-file one, and what each case-run's record
//! of the workspace takes in the run folder.
//!
//! The project is copied once per run (the shared base of copy-on-write workspaces): that
//! cost is the run's, not the case-run's. So each project is run with 50 case-runs and with
//! 200 (`--runs 4`), and the difference over 150 is the time one more case-run adds; the
//! median of five such pairs is reported, as wall time and as the CPU time of assay and
//! everything it started (less disturbed by the rest of the machine).
//!
//! Run with `cargo bench --bench project_size` (needs bubblewrap). The goal: the 5,000-file
//! project's time per case-run within 10% of the 201-file one's; figures are kept in
//! docs/benchmarks.md.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const CASES: usize = 50;
const PAIRS: usize = 5;
/// The second run of a pair has this many more runs per case.
const MORE: usize = 3;

/// A project of `dirs` × `per_dir` files (and one more, `assay.toml`) with `CASES` cases.
fn project(root: &Path, dirs: usize, per_dir: usize) {
    for d in 0..dirs {
        let dir = root.join(format!("pkg{d:02}/src"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..per_dir {
            std::fs::write(dir.join(format!("file{f:03}.txt")), format!("{d} {f}\n")).unwrap();
        }
    }
    std::fs::write(
        root.join("assay.toml"),
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"true\"]\n",
    )
    .unwrap();
    let evals: Vec<String> = (0..CASES)
        .map(|i| format!(r#"{{"id": "c{i:04}", "prompt": "case {i}", "expectations": ["e"]}}"#))
        .collect();
    let suite = root.join(".claude/skills/s/evals");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::write(
        root.join(".claude/skills/s/SKILL.md"),
        "---\nname: s\ndescription: A skill.\n---\nDo it.\n",
    )
    .unwrap();
    std::fs::write(
        suite.join("evals.json"),
        format!("{{\"evals\": [{}]}}", evals.join(",\n")),
    )
    .unwrap();
}

/// CPU time (user and system) of every child process waited for so far.
fn children_cpu() -> Duration {
    // SAFETY: getrusage writes the struct it is given, nothing else.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut u);
        u
    };
    let t = |v: libc::timeval| Duration::new(v.tv_sec as u64, v.tv_usec as u32 * 1000);
    t(u.ru_utime) + t(u.ru_stime)
}

/// One `assay run` of `runs` runs per case into `out`: its wall time, and the CPU time of
/// assay and everything it started.
fn run(root: &Path, out: &Path, runs: usize) -> (Duration, Duration) {
    let (t, cpu) = (Instant::now(), children_cpu());
    let o = Command::new(env!("CARGO_BIN_EXE_assay"))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env("PATH", "/usr/bin:/bin")
        .env("ASSAY_NO_CACHE", "1")
        .args(["run", "-j", "1", "--sandbox", "bwrap", "--runs"])
        .arg(runs.to_string())
        .arg("--output-dir")
        .arg(out)
        .current_dir(root)
        .output()
        .unwrap();
    let took = (t.elapsed(), children_cpu() - cpu);
    let said = String::from_utf8_lossy(&o.stdout);
    let n = CASES * runs;
    assert!(
        said.contains(&format!("{n} case-runs: {n} not graded")),
        "{said}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    took
}

/// The bytes under `dir` in files named `name`.
fn bytes_named(dir: &Path, name: &str) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            total += bytes_named(&p, name);
        } else if e.file_name() == name {
            total += e.metadata().unwrap().len();
        }
    }
    total
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let projects = [("5,000-file", 50, 100), ("201-file", 4, 50)];
    let root = |dirs: usize| tmp.path().join(format!("project-{dirs}"));
    let out = |dirs: usize, tag: &str| tmp.path().join(format!("run-{dirs}-{tag}"));
    for (_, dirs, per_dir) in projects {
        project(&root(dirs), dirs, per_dir);
        run(&root(dirs), &out(dirs, "warm"), 1);
    }
    // Per project, the wall and CPU time one more case-run adds, per pair; the projects
    // taken in turn so that a slower spell of the machine falls on both.
    let mut added: Vec<(Vec<f64>, Vec<f64>)> = vec![Default::default(); projects.len()];
    let per = |a: Duration, b: Duration| {
        (b.as_secs_f64() - a.as_secs_f64()) * 1000.0 / (MORE * CASES) as f64
    };
    for i in 0..PAIRS {
        for (k, (_, dirs, _)) in projects.iter().enumerate() {
            let one = run(&root(*dirs), &out(*dirs, &format!("{i}a")), 1);
            let two = run(&root(*dirs), &out(*dirs, &format!("{i}b")), 1 + MORE);
            added[k].0.push(per(one.0, two.0));
            added[k].1.push(per(one.1, two.1));
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut figures = Vec::new();
    for ((name, dirs, _), (wall, cpu)) in projects.iter().zip(added.iter_mut()) {
        let recorded =
            bytes_named(&out(*dirs, "0b"), "workspace.json") / ((1 + MORE) * CASES) as u64;
        let (w, c) = (median(wall), median(cpu));
        println!(
            "{name} project: per case-run {w:.2} ms wall (pairs {wall:.2?}), {c:.2} ms CPU (pairs {cpu:.2?}); workspace.json {recorded} bytes"
        );
        figures.push((w, c));
    }
    let (wall, cpu) = (figures[0].0 / figures[1].0, figures[0].1 / figures[1].1);
    let met = |r: f64| if r <= 1.10 { "met" } else { "NOT met" };
    println!(
        "5,000-file / 201-file: wall {wall:.3} (goal <= 1.10: {}), CPU {cpu:.3} (goal <= 1.10: {})",
        met(wall),
        met(cpu)
    );
}
