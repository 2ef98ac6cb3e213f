//! Loading speed: `assay validate` over 1,000 generated suites of mixed formats, and over one
//! 100 MB minified `evals.json` (about 95,000 evals on a single line).
//!
//! Run with `cargo bench --bench validate`. Prints the wall time of the release binary
//! (median, min and max of 15 runs, after a warm-up; 5 runs for the big file) and of the
//! in-process load alone, then of `assay lint` over the same corpus. The goals are under 300 ms for the 1,000 suites and under 2 s for
//! the big file on a 2-core machine; figures are kept in docs/benchmarks.md.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const SUITES_PER_FORMAT: usize = 250;
const RUNS: usize = 15;

fn write(root: &Path, path: &str, text: &str) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// 250 suites each of BMAD, clauditor and Skillet, and 125 UAAPS packages with evals and
/// tests (250 suites): 1,000 suites in all, in one project.
fn generate(root: &Path) {
    write(root, "assay.toml", "");
    for i in 0..SUITES_PER_FORMAT {
        let skill = format!("skill-{i:04}");
        write(
            root,
            &format!(".claude/skills/{skill}/SKILL.md"),
            &format!("---\nname: {skill}\ndescription: Skill number {i}.\n---\nDo the thing.\n"),
        );
        write(root, &format!("evals/{skill}/files/input.md"), "notes\n");
        write(
            root,
            &format!("evals/{skill}/evals.json"),
            &format!(
                r#"{{"skill_name": "{skill}", "evals": [
  {{"id": "A1", "prompt": "Run headless. Do it.", "files": ["evals/{skill}/files/input.md"], "expectations": ["out.md exists", "it cites the input"]}},
  {{"id": "A2", "prompt": "Run headless. Do it again.", "expectations": ["out.md exists"], "timeout": 900}},
  {{"id": "A3", "prompt": "Run headless. And again.", "expected_output": "x", "expectations": ["a", "b", "c"]}}
]}}"#
            ),
        );
        write(
            root,
            &format!("evals/{skill}/triggers.json"),
            r#"[{"query": "do the thing", "should_trigger": true}, {"query": "something else", "should_trigger": false}]"#,
        );

        let cmd = format!("cmd-{i:04}");
        write(
            root,
            &format!(".claude/commands/{cmd}.md"),
            "Summarize $ARGUMENTS.\n",
        );
        write(
            root,
            &format!(".claude/commands/fixtures/{cmd}.csv"),
            "a,b\n1,2\n",
        );
        write(
            root,
            &format!(".claude/commands/{cmd}.eval.json"),
            &format!(
                r#"{{"skill_name": "{cmd}", "test_args": "x.csv", "input_files": ["fixtures/{cmd}.csv"],
 "assertions": [
  {{"id": "c1", "type": "contains", "needle": "Total"}},
  {{"id": "c2", "type": "regex", "pattern": "\\d+ rows"}},
  {{"id": "c3", "type": "has_format", "format": "currency_usd", "count": 2}},
  {{"id": "c4", "type": "min_length", "length": 100}},
  {{"id": "c5", "type": "has_entries", "count": 3}}
 ],
 "sections": [{{"name": "Rows", "tiers": [{{"label": "default", "min_entries": 1, "fields": [
  {{"id": "f1", "name": "name", "required": true}}, {{"id": "f2", "name": "zip", "format": "zip_us"}}]}}]}}],
 "grading_criteria": [{{"id": "g1", "criterion": "Is it right?"}}],
 "trigger_tests": {{"should_trigger": ["summarize this"], "should_not_trigger": ["weather"]}}
}}"#
            ),
        );

        for n in 1..=3 {
            write(
                root,
                &format!("skillet/sk-{i:04}/{n:03}.yaml"),
                &format!(
                    "timestamp: 2025-01-15T10:30:00Z\nname: sk-{i:04}\nprompt:\n  - \"First turn {n}\"\n  - \"Second turn\"\nexpected: |\n  Does the thing.\nassertions:\n  - type: contains\n    value: thing\n  - type: tool_called\n    value: Read\n"
                ),
            );
        }
    }
    for i in 0..SUITES_PER_FORMAT / 2 {
        let p = format!("packages/pkg-{i:04}");
        write(
            root,
            &format!("{p}/package.agent.json"),
            &format!(r#"{{"name": "@bench/pkg-{i}", "version": "1.0.0"}}"#),
        );
        write(
            root,
            &format!("{p}/skills/tool/SKILL.md"),
            "---\nname: tool\ndescription: A tool.\n---\n",
        );
        write(
            root,
            &format!("{p}/evals/eval-config.json"),
            r#"{"version": 1, "engine": "claude-code", "timeout": 120}"#,
        );
        write(root, &format!("{p}/evals/fixtures/in.txt"), "hello\n");
        for n in 0..3 {
            write(
                root,
                &format!("{p}/evals/cases/case-{n}.yaml"),
                &format!(
                    "name: case-{n}\ntarget: skill:tool\ninput:\n  prompt: Do it\n  files: [fixtures/in.txt]\nexpected:\n  contains: [done]\n  files-created: [out.txt]\njudge:\n  criteria: It is done.\n"
                ),
            );
        }
        write(
            root,
            &format!("{p}/skills/tool/tests/test-config.json"),
            r#"{"version": 1, "command": ["python3", "run.py"]}"#,
        );
        for n in 0..2 {
            write(
                root,
                &format!("{p}/skills/tool/tests/cases/t-{n}.yaml"),
                &format!(
                    "name: t-{n}\nargs: [\"--n\", \"{n}\"]\nexpected:\n  exit-code: 0\n  stdout-contains: [ok]\n"
                ),
            );
        }
    }
}

/// Evals in the big file, and how many times each prompt repeats its 50-byte phrase: about
/// 100 MB on one line.
const BIG_EVALS: usize = 95_000;
const BIG_PHRASES: usize = 19;

/// One BMAD suite whose `evals.json` is a single line of about 100 MB, as a minifier writes
/// it. Prompts hold a few non-ASCII characters, so columns are counted in characters.
fn generate_big(root: &Path) -> usize {
    write(root, "assay.toml", "");
    write(
        root,
        ".claude/skills/big/SKILL.md",
        "---\nname: big\ndescription: A skill with many evals.\n---\nDo it.\n",
    );
    let filler = "Run headless. Résumé the naïve café notes — ".repeat(BIG_PHRASES);
    let mut text = String::with_capacity(BIG_EVALS * (filler.len() + 120));
    text.push_str(r#"{"skill_name":"big","evals":["#);
    for i in 0..BIG_EVALS {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"id":"E{i}","prompt":"{filler}{i}","expectations":["out.md exists","it names case {i}"],"timeout":600}}"#
        ));
    }
    text.push_str("]}");
    write(root, "evals/big/evals.json", &text);
    text.len()
}

fn bench_big() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = generate_big(dir.path());
    let bin = env!("CARGO_BIN_EXE_assay");
    let run = || {
        let t = Instant::now();
        let out = Command::new(bin)
            .args(["validate", "--format", "json"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let elapsed = t.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["summary"]["cases"], BIG_EVALS, "every eval must load");
        elapsed
    };
    run(); // warm the page cache
    let (median, min, max) = stats((0..BIG_RUNS).map(|_| run()).collect());
    println!(
        "big file: {:.1} MB on one line, {BIG_EVALS} evals",
        bytes as f64 / 1e6
    );
    println!(
        "assay validate (release binary, {BIG_RUNS} runs): median {median:?}, min {min:?}, max {max:?}"
    );
    println!(
        "goal: under 2 s -> {}",
        if median < Duration::from_secs(2) {
            "met"
        } else {
            "NOT met"
        }
    );
}

const BIG_RUNS: usize = 5;

enum Corpus {
    Temp(tempfile::TempDir),
    Kept(std::path::PathBuf),
}

impl Corpus {
    fn path(&self) -> &Path {
        match self {
            Corpus::Temp(d) => d.path(),
            Corpus::Kept(p) => p,
        }
    }
}

fn stats(mut samples: Vec<Duration>) -> (Duration, Duration, Duration) {
    samples.sort();
    (
        samples[samples.len() / 2],
        samples[0],
        samples[samples.len() - 1],
    )
}

fn main() {
    // `cargo bench --bench validate -- big` runs only the big file; `-- suites` only the rest.
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if only.as_deref() != Some("suites") {
        bench_big();
    }
    if only.as_deref() == Some("big") {
        return;
    }
    // ASSAY_BENCH_CORPUS keeps the corpus at a path of your choosing, for profiling.
    let dir = tempfile::tempdir().unwrap();
    let dir = match std::env::var_os("ASSAY_BENCH_CORPUS") {
        Some(p) => {
            let keep = std::path::PathBuf::from(p);
            std::fs::create_dir_all(&keep).unwrap();
            Corpus::Kept(keep)
        }
        None => Corpus::Temp(dir),
    };
    generate(dir.path());
    let bin = env!("CARGO_BIN_EXE_assay");

    let run = || {
        let t = Instant::now();
        let out = Command::new(bin)
            .args(["validate", "--format", "json"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let elapsed = t.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v["summary"]["suites"], 1000,
            "the corpus must load as 1,000 suites"
        );
        (elapsed, v)
    };
    let (_, v) = run(); // warm the page cache
    let samples: Vec<Duration> = (0..RUNS).map(|_| run().0).collect();
    let (median, min, max) = stats(samples);

    let ctx = assay::formats::LoadCtx::new(dir.path());
    let in_process: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            let loaded = assay::discover::discover(&ctx, &Default::default());
            assert_eq!(loaded.suites.len(), 1000);
            t.elapsed()
        })
        .collect();
    let (ip_median, ip_min, ip_max) = stats(in_process);

    println!(
        "corpus: {} suites, {} cases, {} trigger cases, {} checks",
        v["summary"]["suites"],
        v["summary"]["cases"],
        v["summary"]["trigger_cases"],
        v["summary"]["checks"]
    );
    println!(
        "assay validate (release binary, {RUNS} runs): median {median:?}, min {min:?}, max {max:?}"
    );
    println!(
        "discover+load in process ({RUNS} runs):       median {ip_median:?}, min {ip_min:?}, max {ip_max:?}"
    );
    println!(
        "goal: under 300 ms -> {}",
        if median < Duration::from_millis(300) {
            "met"
        } else {
            "NOT met"
        }
    );

    // `assay lint` over the same corpus: the load, then every skill and suite linted.
    let lint = || {
        let t = Instant::now();
        let out = Command::new(bin)
            .args(["lint", "--format", "json"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let elapsed = t.elapsed();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["summary"]["suites"], 1000, "lint must see 1,000 suites");
        (elapsed, v)
    };
    let (_, v) = lint();
    let samples: Vec<Duration> = (0..RUNS).map(|_| lint().0).collect();
    let (median, min, max) = stats(samples);
    println!(
        "assay lint (release binary, {RUNS} runs): median {median:?}, min {min:?}, max {max:?}; {} skills, {} findings",
        v["summary"]["skills"],
        v["findings"].as_array().map_or(0, Vec::len)
    );
}
