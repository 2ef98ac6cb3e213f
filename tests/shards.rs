//! Shards past one machine: `--shard auto` as a Kubernetes Indexed Job and CI matrices start
//! it, the cut by expected time, and a merge that joins the slices of one plan and refuses
//! anything else. Every run is the real binary through the command harness (its agent a shell
//! script), in the sandbox as any run.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use support::*;

/// A Skillet suite `team` of nine cases through the command harness: c1, c4 and c7 are slow
/// (dealt round-robin, all three would land on shard 1 of 3) and c9 fails its check.
fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let agent = "read p\ncase \"$p\" in *slow*) sleep 0.8 ;; *) sleep 0.05 ;; esac\ncase \"$p\" in *fail*) echo no ;; *) echo ok ;; esac\n";
    let mut files: Vec<(String, String)> = vec![
        (
            "assay.toml".into(),
            "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"agent.sh\"]\n"
                .into(),
        ),
        ("agent.sh".into(), agent.into()),
    ];
    for i in 1..=9 {
        let word = match i {
            1 | 4 | 7 => "slow",
            9 => "fail",
            _ => "quick",
        };
        files.push((
            format!("evals/team/c{i}.yaml"),
            format!(
                "timestamp: 2026-11-26T00:00:00Z\nname: c{i}\nprompt: \"Answer {word} {i}.\"\nexpected: It says ok.\nassertions:\n  - type: contains\n    value: ok\n"
            ),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write_tree(d.path(), &refs);
    d
}

/// `assay` in `dir` with only `env` of the orchestrator's variables set (none inherited).
fn assay_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_assay"));
    c.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("ASSAY_NO_CACHE", "1");
    for v in [
        "JOB_COMPLETION_INDEX",
        "ASSAY_SHARDS",
        "CI_NODE_INDEX",
        "CI_NODE_TOTAL",
        "GITLAB_CI",
        "GITHUB_ACTIONS",
        "CIRCLE_NODE_INDEX",
        "BUILDKITE_PARALLEL_JOB",
        "ASSAY_SHARD_TIMINGS",
    ] {
        c.env_remove(v);
    }
    c.envs(env.iter().copied());
    c
}

fn run_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    assay_with(dir, args, env).output().unwrap()
}

/// Each case-run of a run folder as the JSON report gives it: its outcome and each check's
/// verdict, by `suite/case/folder`; and each case's statistics.
fn verdicts(dir: &Path, run: &str) -> (BTreeMap<String, Value>, Value) {
    let out = assay(dir, &["report", run, "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| {
        panic!("{e}: {}{}", stdout(&out), stderr(&out));
    });
    let runs = v["case_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let checks: Vec<(Value, Value)> = c["checks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| (k["id"].clone(), k["passed"].clone()))
                .collect();
            (
                c["dir"].as_str().unwrap().to_string(),
                serde_json::json!({"outcome": c["outcome"], "checks": checks, "run": c["run"]}),
            )
        })
        .collect();
    (runs, v["statistics"].clone())
}

/// The three shards of `project` started as a Kubernetes Indexed Job starts its pods: at once,
/// each with `JOB_COMPLETION_INDEX` and the completion count set, writing to one shared folder.
fn indexed_job(dir: &Path, extra: &[&str]) -> Vec<Output> {
    let children: Vec<std::process::Child> = (0..3)
        .map(|i| {
            let out = format!("shared/shard-{i}");
            let mut args = vec!["run", "--shard", "auto", "--output-dir", &out];
            args.extend(extra);
            let index = i.to_string();
            assay_with(
                dir,
                &args,
                &[("JOB_COMPLETION_INDEX", &index), ("ASSAY_SHARDS", "3")],
            )
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

fn shard_record(dir: &Path) -> Value {
    read_json(&dir.join("run.json"))["shard"].clone()
}

#[test]
fn an_indexed_job_of_local_processes_merges_into_the_whole_run_case_for_case() {
    let d = project();
    let p = d.path();
    // The whole run, which also gives the shards their timings.
    let whole = run_with(p, &["run", "--runs", "2", "--output-dir", "whole"], &[]);
    assert_eq!(code(&whole), 1, "{}", stderr(&whole));
    let outs = indexed_job(p, &["--runs", "2", "--shard-timings", "whole"]);
    for (i, o) in outs.iter().enumerate() {
        // c9 fails on whichever shard has it.
        assert!(code(o) <= 1, "shard {i}: {}", stderr(o));
        let said = stderr(o);
        assert!(
            said.contains(&format!(
                "shard {}/3 (Kubernetes Indexed Job: JOB_COMPLETION_INDEX={i}, 3 shards from --shards (or ASSAY_SHARDS)): cut by expected time from whole (18 of 18 case-runs timed)",
                i + 1
            )),
            "{said}"
        );
    }
    // By time, the three slow cases are on three shards (by count all three were on shard 1),
    // and the shards' expected times are within 15% of their mean.
    let cut = shard_record(&p.join("shared/shard-0"));
    assert_eq!(cut["by"], "time");
    let slow: std::collections::BTreeSet<u64> =
        ["skillet:team/c1", "skillet:team/c4", "skillet:team/c7"]
            .iter()
            .map(|c| cut["cases"][c].as_u64().unwrap())
            .collect();
    assert_eq!(slow.len(), 3, "{cut}");
    let expected: Vec<f64> = cut["expected_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let mean = expected.iter().sum::<f64>() / 3.0;
    let slowest = expected.iter().copied().fold(0.0, f64::max);
    assert!(slowest <= mean * 1.15, "{expected:?}");
    // Every shard recorded the same cut, and each its own slice of it.
    for i in 0..3 {
        let r = shard_record(&p.join(format!("shared/shard-{i}")));
        assert_eq!(r["cases"], cut["cases"]);
        assert_eq!(r["index"], i + 1);
    }
    let out = assay(
        p,
        &[
            "report",
            "merge",
            "shared/shard-0",
            "shared/shard-1",
            "shared/shard-2",
            "--output-dir",
            "merged",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("merged 18 case-run(s) from 3 run folder(s)"));
    let (merged, merged_stats) = verdicts(p, "merged");
    let (one, one_stats) = verdicts(p, "whole");
    assert_eq!(merged.len(), 18);
    assert_eq!(
        merged, one,
        "the merged shards and the whole run, case-run for case-run"
    );
    assert_eq!(merged_stats, one_stats);
    // c9 failed in both, twice.
    let failed: Vec<&String> = merged
        .iter()
        .filter(|(_, v)| v["outcome"] == "failed")
        .map(|(k, _)| k)
        .collect();
    assert_eq!(failed, ["skillet_team/c9/run-1", "skillet_team/c9/run-2"]);
}

/// Shards 1 and 3 of `project` (`s1`, `s3`), cut by count, and a shard 2 made into `name` as
/// `shard2` says, for the merge to refuse: the merge's stderr.
fn refused(p: &Path, name: &str, shard2: &[&str]) -> String {
    let mut args = vec!["run", "--shard", "2/3", "--output-dir", name];
    args.extend(shard2);
    let o = run_with(p, &args, &[]);
    assert!(code(&o) <= 1, "{}", stderr(&o));
    merge_refused(p, &["s1", name, "s3"])
}

fn merge_refused(p: &Path, runs: &[&str]) -> String {
    let mut args = vec!["report", "merge"];
    args.extend(runs);
    args.extend(["--output-dir", "refused"]);
    let out = assay(p, &args);
    assert_eq!(code(&out), 2, "{}{}", stdout(&out), stderr(&out));
    assert!(!p.join("refused").exists(), "nothing is written");
    stderr(&out)
}

#[test]
fn the_merge_refuses_shards_of_different_plans_and_a_shard_given_twice() {
    let d = project();
    let p = d.path();
    for k in [1, 3] {
        let (shard, out) = (format!("{k}/3"), format!("s{k}"));
        let o = run_with(p, &["run", "--shard", &shard, "--output-dir", &out], &[]);
        assert!(code(&o) <= 1, "{}", stderr(&o));
    }
    // Another option.
    let said = refused(p, "runs", &["--runs", "2"]);
    assert!(said.contains("not shards of one plan"), "{said}");
    assert!(said.contains("option `runs` differs: null and 2"), "{said}");
    // Other timings: the cases dealt differently.
    let o = run_with(p, &["run", "--output-dir", "timed"], &[]);
    assert_eq!(code(&o), 1);
    let said = refused(
        p,
        "filtered",
        &["--shard-timings", "timed", "--filter", "team"],
    );
    assert!(said.contains("option `filter` differs"), "{said}");
    let said = refused(p, "timed-2", &["--shard-timings", "timed"]);
    assert!(
        said.contains("the cases were dealt differently")
            && said.contains("cut by count and by time from timed"),
        "{said}"
    );
    // The same shard twice.
    let said = merge_refused(p, &["s1", "s3", "s1"]);
    assert!(said.contains("shard 1/3 is given twice"), "{said}");
    // A shard and a whole run.
    let said = merge_refused(p, &["s1", "timed"]);
    assert!(said.contains("timed is not a shard"), "{said}");
    // Shards whose agent CLI differs in version merge, and the merge says so.
    let o = run_with(p, &["run", "--shard", "2/3", "--output-dir", "s2"], &[]);
    assert!(code(&o) <= 1, "{}", stderr(&o));
    for (dir, version) in [("s1", "2.1.197"), ("s3", "2.1.198")] {
        let file = p.join(dir).join("run.json");
        let mut run = read_json(&file);
        run["harnesses"] = serde_json::json!({ "claude-code": version });
        std::fs::write(&file, run.to_string()).unwrap();
    }
    let out = assay(
        p,
        &[
            "report",
            "merge",
            "s1",
            "s2",
            "s3",
            "--output-dir",
            "versions",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: `claude-code` ran as 2.1.197 in ")
            && stderr(&out).contains("and as 2.1.198 in "),
        "{}",
        stderr(&out)
    );
    // Another assay version.
    let o = run_with(p, &["run", "--shard", "2/3", "--output-dir", "older"], &[]);
    assert!(code(&o) <= 1);
    let file = p.join("older/run.json");
    let mut run = read_json(&file);
    run["assay_version"] = "0.0.1".into();
    std::fs::write(&file, run.to_string()).unwrap();
    let said = merge_refused(p, &["s1", "older", "s3"]);
    assert!(said.contains("run by different assay versions ("), "{said}");
    assert!(said.contains(" and 0.0.1)"), "{said}");
    // The suite edited between shards.
    let case = p.join("evals/team/c2.yaml");
    let text = std::fs::read_to_string(&case).unwrap();
    std::fs::write(&case, text.replace("It says ok.", "It says ok!")).unwrap();
    let said = refused(p, "edited", &[]);
    assert!(
        said.contains("suite `skillet:team` differs: its eval files hash"),
        "{said}"
    );
    // Another count of shards.
    let o = run_with(p, &["run", "--shard", "2/4", "--output-dir", "four"], &[]);
    assert!(code(&o) <= 1);
    let said = merge_refused(p, &["s1", "four"]);
    assert!(
        said.contains("cut into different numbers of shards"),
        "{said}"
    );
}

#[test]
fn a_missing_shard_is_reported_as_missing_case_runs_never_as_a_smaller_green_run() {
    let d = project();
    let p = d.path();
    // Shards 1 and 3 of the GitLab CI `parallel:` variables; shard 2 never ran.
    for k in ["1", "3"] {
        let out = format!("runs/shard-{k}");
        let o = run_with(
            p,
            &["run", "--shard", "auto", "--output-dir", &out],
            &[
                ("CI_NODE_INDEX", k),
                ("CI_NODE_TOTAL", "3"),
                ("GITLAB_CI", "true"),
            ],
        );
        assert!(code(&o) <= 1, "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "shard {k}/3 (GitLab CI parallel: CI_NODE_INDEX={k}, 3 shards from CI_NODE_TOTAL): cut by count, round-robin (no earlier timings)"
            )),
            "{}",
            stderr(&o)
        );
    }
    // Without c2, c5 and c8 (shard 2 by count) both given shards pass: a smaller green run.
    let out = assay(
        p,
        &[
            "report",
            "merge",
            "runs/shard-1",
            "runs/shard-3",
            "--output-dir",
            "merged",
        ],
    );
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains("missing: shard 2/3 was not given; its 3 case-run(s) are missing"),
        "{said}"
    );
    assert!(
        said.contains("incomplete: 3 planned case-run(s) were not recorded"),
        "{said}"
    );
    let report = assay(p, &["report", "merged", "--format", "json"]);
    assert_eq!(code(&report), 3, "{}", stderr(&report));
    let v: Value = serde_json::from_str(&stdout(&report)).unwrap();
    let missing: Vec<&str> = v["case_runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["outcome"] == "missing")
        .map(|c| c["case"].as_str().unwrap())
        .collect();
    assert_eq!(missing, ["c2", "c5", "c8"]);
}

#[test]
fn shard_auto_says_what_it_read_and_refuses_what_it_cannot_use() {
    let d = project();
    let p = d.path();
    let dry = |env: &[(&str, &str)], extra: &[&str]| {
        let mut args = vec!["run", "--shard", "auto", "--dry-run"];
        args.extend(extra);
        run_with(p, &args, env)
    };
    let o = dry(
        &[
            ("CI_NODE_INDEX", "2"),
            ("CI_NODE_TOTAL", "2"),
            ("GITHUB_ACTIONS", "true"),
        ],
        &[],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "shard 2/2 (GitHub Actions matrix: CI_NODE_INDEX=2, 2 shards from CI_NODE_TOTAL)"
        ),
        "{}",
        stdout(&o)
    );
    for (env, extra, why) in [
        (
            vec![],
            vec![],
            "no shard in the environment (looked for JOB_COMPLETION_INDEX",
        ),
        (
            vec![("JOB_COMPLETION_INDEX", "0")],
            vec![],
            "JOB_COMPLETION_INDEX is set (Kubernetes Indexed Job), but not how many",
        ),
        (
            vec![("JOB_COMPLETION_INDEX", "3"), ("ASSAY_SHARDS", "3")],
            vec![],
            "JOB_COMPLETION_INDEX=3 is not a shard of 3 (it counts from 0)",
        ),
        (
            vec![("CI_NODE_INDEX", "1"), ("CI_NODE_TOTAL", "2")],
            vec!["--shards", "3"],
            "--shards 3 and CI_NODE_TOTAL=2 disagree",
        ),
        (
            vec![("CI_NODE_INDEX", "1"), ("CI_NODE_TOTAL", "2")],
            vec!["--shard-timings", "nowhere"],
            "nowhere: no such run folder or history file",
        ),
    ] {
        let o = dry(&env, &extra);
        assert_eq!(code(&o), 2, "{env:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(why), "{env:?}: {}", stderr(&o));
        assert!(!p.join(".assay/runs").exists(), "nothing ran");
    } // A variable that would drive the terminal (set a title, ring the bell) reaches it as text.
    let o = dry(
        &[
            ("CI_NODE_INDEX", "1"),
            ("CI_NODE_TOTAL", "\u{1b}]0;pwned\u{7}"),
        ],
        &[],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(!stderr(&o).contains('\u{1b}') && !stderr(&o).contains('\u{7}'));
    assert!(stderr(&o).contains("is not a number"), "{}", stderr(&o));
}

#[test]
fn a_resumed_shard_keeps_its_first_cut_whatever_the_timings_say_now() {
    let d = project();
    let p = d.path();
    let o = run_with(p, &["run", "--shard", "1/3", "--output-dir", "s1"], &[]);
    assert!(code(&o) <= 1, "{}", stderr(&o));
    let first = shard_record(&p.join("s1"));
    assert_eq!(first["by"], "count");
    // Timings now exist that would deal the cases otherwise.
    let o = run_with(p, &["run", "--output-dir", "timed"], &[]);
    assert_eq!(code(&o), 1);
    let o = run_with(
        p,
        &[
            "run",
            "--shard",
            "1/3",
            "--shard-timings",
            "timed",
            "--output-dir",
            "fresh",
        ],
        &[],
    );
    assert!(
        stderr(&o).contains("cut by expected time from timed"),
        "{}",
        stderr(&o)
    );
    assert_ne!(shard_record(&p.join("fresh"))["cases"], first["cases"]);
    let o = run_with(
        p,
        &[
            "run",
            "--shard",
            "1/3",
            "--shard-timings",
            "timed",
            "--resume",
            "s1",
        ],
        &[],
    );
    assert!(code(&o) <= 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("shard 1/3 (--shard 1/3): cut as the run being resumed was"),
        "{}",
        stderr(&o)
    );
    // The whole record stays as first cut: by count, from no timings.
    let resumed = shard_record(&p.join("s1"));
    assert_eq!(resumed["cases"], first["cases"]);
    assert_eq!(resumed["by"], "count");
    assert_eq!(resumed.get("timings"), None, "{resumed}");
    // Resuming it as another shard is refused before anything runs.
    let o = run_with(p, &["run", "--shard", "2/3", "--resume", "s1"], &[]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the run being resumed is shard 1/3; this run asks for 2/3"),
        "{}",
        stderr(&o)
    );
}
