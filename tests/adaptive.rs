//! `--runs auto`: a stable case stops after a few runs, a borderline one runs to --max-runs,
//! and the run says how many runs each used and what was saved.

use crate::support;

use support::*;

fn project(dir: &std::path::Path) {
    let counter = dir.join("counter");
    write_tree(
        dir,
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n\n[harness.command]\ncommand = [\"sh\", \"agent.sh\"]\n",
            ),
            (
                "agent.sh",
                &format!(
                    "prompt=$(cat)\ncase \"$prompt\" in\n  */steady*) echo steady ;;\n  *) n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}\n     if [ $((n % 2)) = 1 ]; then echo yes; else echo no; fi ;;\nesac\n",
                    c = counter.display()
                ),
            ),
            (".claude/commands/flip.md", "Say yes."),
            (
                ".claude/commands/flip.eval.json",
                r#"{"assertions": [{"id": "yes", "type": "contains", "needle": "yes"}]}"#,
            ),
            (".claude/commands/steady.md", "Say steady."),
            (
                ".claude/commands/steady.eval.json",
                r#"{"assertions": [{"id": "steady", "type": "contains", "needle": "steady"}]}"#,
            ),
        ],
    );
}

#[test]
fn stable_cases_stop_early_and_borderline_ones_use_the_budget() {
    let d = tempfile::tempdir().unwrap();
    project(d.path());
    // The flipping agent keeps its count outside the workspace, so it runs unsandboxed, one
    // at a time.
    let out = assay(
        d.path(),
        &[
            "run",
            "--runs",
            "auto",
            "--max-runs",
            "6",
            "--min-pass-rate",
            "0.5",
            "--sandbox",
            "none",
            "-j",
            "1",
            "--no-cache",
            "--output-dir",
            "out",
        ],
    );
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}\n{}", stderr(&out));
    assert!(
        text.contains("adaptive runs: 10 case-runs for 2 case(s) in 5 round(s), against 12 with --runs 6 (saved 2); settled 1 by Wald's sequential test: a pass rate of 0.65 against 0.35, each error at most 10% (threshold 0.5), 1 at the maximum"),
        "{text}"
    );
    assert!(
        text.contains("clauditor:steady/steady: 4 run(s), 4 passed: pass"),
        "{text}"
    );
    assert!(
        text.contains("clauditor:flip/flip: 6 run(s), 3 passed: max-runs"),
        "{text}"
    );
    let run = read_json(&d.path().join("out/run.json"));
    assert_eq!(run["adaptive"]["runs_used"], 10);
    assert_eq!(run["adaptive"]["confidence"], 0.9);
    let recorded = assay::record::case_run_dirs(&d.path().join("out"));
    assert_eq!(recorded.len(), 10, "{recorded:?}");

    // A fixed count and `auto` are the only words; a threshold of 1 is warned about.
    let out = assay(d.path(), &["run", "--runs", "sometimes", "--dry-run"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("is not a number of runs (1 or more) or `auto`"),
        "{}",
        stderr(&out)
    );
    let out = assay(
        d.path(),
        &[
            "run",
            "--runs",
            "auto",
            "--max-runs",
            "2",
            "--sandbox",
            "none",
            "-j",
            "1",
            "--output-dir",
            "out2",
        ],
    );
    assert!(
        stderr(&out).contains("--runs auto with --min-pass-rate 1"),
        "{}",
        stderr(&out)
    );
}
