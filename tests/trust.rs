//! Results you can trust: what a careless suite or a hostile agent does must never lose a
//! case-run's result, nor make a failure read as a pass.

use crate::support;

use support::{assay_run, code, read_json, results, stderr, stdout, write_tree};

const FAILS: &str = "timestamp: 2026-11-22T00:00:00Z\nname: sec\nprompt: go\nexpected: x\nassertions:\n  - type: contains\n    value: nope\n";
const PASSES: &str = "timestamp: 2026-11-22T00:00:00Z\nname: sec\nprompt: go\nexpected: x\nassertions:\n  - type: contains\n    value: hello\n";

/// An assay.toml whose agent is `sh -c script` through the `command` harness.
fn sh_agent(script: &str) -> String {
    format!(
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", {}]\n",
        serde_json::Value::String(script.into())
    )
}

#[test]
fn ids_that_slug_to_one_folder_keep_their_results_apart() {
    // `security/003` fails and `security_003` passes: once, both wrote one folder, and the
    // run said "1 case-run: 1 passed", exit 0. Also an id too long for a folder name.
    let d = tempfile::tempdir().unwrap();
    let long = format!("evals/sec/{}.yaml", "x".repeat(240));
    write_tree(
        d.path(),
        &[
            ("assay.toml", &sh_agent("echo hello")),
            ("evals/sec/security/003.yaml", FAILS),
            ("evals/sec/security_003.yaml", PASSES),
            (&long, PASSES),
        ],
    );
    let out = assay_run(d.path())
        .args(["-j", "3", "--reporter", "junit", "--output-dir", "out"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("3 case-runs: 1 failed, 2 passed"),
        "{}",
        stdout(&out)
    );
    let rs = results(&d.path().join("out"));
    assert_eq!(rs.len(), 3, "{rs:#?}");
    assert_eq!(rs["security/003"]["grade"]["verdict"], "fail");
    assert_eq!(rs["security_003"]["grade"]["verdict"], "pass");
    let junit = std::fs::read_to_string(d.path().join("out/junit.xml")).unwrap();
    assert!(junit.contains("failures=\"1\""), "{junit}");
    // Each case-run's raw output is its own.
    for r in rs.values() {
        let dir = d.path().join("out");
        let found = walk(&dir)
            .into_iter()
            .filter(|p| p.ends_with("result.json"))
            .filter(|p| read_json(p)["case"] == r["case"])
            .count();
        assert_eq!(found, 1);
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn secrets_the_agent_echoes_are_redacted_everywhere_assay_writes() {
    let d = tempfile::tempdir().unwrap();
    let agent = r#"echo "key=$ANTHROPIC_API_KEY token=$MY_TOKEN"; echo "$MY_TOKEN" >&2; echo "$ANTHROPIC_API_KEY" > leaked.txt; echo nope"#;
    write_tree(
        d.path(),
        &[
            ("assay.toml", &sh_agent(agent)),
            (
                "evals/sec/001.yaml",
                FAILS
                    .replace("value: nope", "value: absent-needle")
                    .as_str(),
            ),
        ],
    );
    let out = assay_run(d.path())
        // The command harness is given no vendor's key unless it is named.
        .args(["--pass-env", "MY_TOKEN", "--pass-env", "ANTHROPIC_API_KEY"])
        .arg("--keep-workspaces")
        .args([
            "--reporter",
            "junit",
            "--reporter",
            "html",
            "--reporter",
            "json",
        ])
        .args(["--output-dir", "out"])
        .env("ANTHROPIC_API_KEY", "sk-ant-secret-4242")
        .env("MY_TOKEN", "tok-passed-7777")
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let terminal = format!("{}{}", stdout(&out), stderr(&out));
    let mut seen = terminal.clone();
    for f in walk(&d.path().join("out")) {
        seen.push_str(&String::from_utf8_lossy(&std::fs::read(&f).unwrap()));
    }
    for secret in ["sk-ant-secret-4242", "tok-passed-7777"] {
        assert!(!seen.contains(secret), "{secret} was written: {seen}");
    }
    assert!(seen.contains("[redacted:ANTHROPIC_API_KEY]"), "{seen}");
    assert!(seen.contains("[redacted:MY_TOKEN]"), "{seen}");
    // The artifact the agent wrote is kept, redacted.
    let artifact = walk(&d.path().join("out"))
        .into_iter()
        .find(|p| p.ends_with("artifacts/leaked.txt"))
        .expect("the artifact");
    assert_eq!(
        std::fs::read_to_string(artifact).unwrap().trim(),
        "[redacted:ANTHROPIC_API_KEY]"
    );
}

#[test]
fn a_run_folder_that_cannot_be_written_stops_the_run_before_anything_runs() {
    // The agent would leave a marker; the run folder lies under a file, so nothing can be
    // recorded there: exit 3, naming the file, and no agent ran.
    let d = tempfile::tempdir().unwrap();
    let marker = d.path().join("ran");
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                &format!(
                    "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"touch\", {}]\n",
                    serde_json::Value::String(marker.display().to_string())
                ),
            ),
            ("evals/sec/001.yaml", PASSES),
            ("a-file", "not a folder"),
        ],
    );
    let out = assay_run(d.path())
        .args(["--sandbox", "none", "--output-dir", "a-file/out"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 3, "{}\n{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("run.json"), "{}", stderr(&out));
    assert!(
        !marker.exists(),
        "an agent ran although nothing could be recorded"
    );
}

#[test]
fn a_run_killed_mid_way_reports_what_it_never_recorded() {
    // Three cases at -j 1; the second hangs. assay is killed (-9) once the first is recorded:
    // the report must count the two never recorded as missing, never as passed, and fail.
    let d = tempfile::tempdir().unwrap();
    let agent = "read p; case \"$p\" in *hang*) exec sleep 300 ;; *) echo hello ;; esac";
    write_tree(
        d.path(),
        &[
            ("assay.toml", &sh_agent(agent)),
            ("evals/sec/a.yaml", PASSES),
            (
                "evals/sec/b.yaml",
                &PASSES.replace("prompt: go", "prompt: hang"),
            ),
            ("evals/sec/c.yaml", PASSES),
        ],
    );
    let mut child = assay_run(d.path())
        .args(["-j", "1", "--output-dir", "out"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let out_dir = d.path().join("out");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while walk_if(&out_dir)
        .iter()
        .filter(|p| p.ends_with("result.json"))
        .count()
        < 1
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no case-run was recorded"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL: nothing of assay's own runs after it
    child.wait().unwrap();

    let out = support::assay(d.path(), &["report", "out", "--format", "markdown"]);
    assert_eq!(code(&out), 3, "{}\n{}", stdout(&out), stderr(&out));
    let md = stdout(&out);
    assert!(md.contains("1 of 3 case-runs passed"), "{md}");
    assert!(md.contains("2 missing"), "{md}");
    assert!(
        stderr(&out).contains("only 1 of 3 recorded"),
        "{}",
        stderr(&out)
    );
    let json = support::assay(d.path(), &["report", "out", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(v["summary"]["missing"], 2, "{v:#}");
    assert_eq!(v["summary"]["passed"], 1, "{v:#}");
}

fn walk_if(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    if dir.is_dir() { walk(dir) } else { Vec::new() }
}

#[test]
fn a_truncated_output_is_marked_and_never_passes() {
    // One stdout line over the 16 MiB line cap is dropped; the check on what is left would
    // pass, but the checks saw only part of the output.
    let d = tempfile::tempdir().unwrap();
    let agent = "head -c 17000000 /dev/zero | tr '\\0' a; echo; echo hello";
    write_tree(
        d.path(),
        &[
            ("assay.toml", &sh_agent(agent)),
            ("evals/sec/001.yaml", PASSES),
        ],
    );
    let out = assay_run(d.path())
        .args(["--output-dir", "out"])
        .output()
        .unwrap();
    let r = &results(&d.path().join("out"))["001"];
    assert_eq!(r["output_truncated"], true, "{r:#}");
    assert!(r["stdout_bytes"].as_u64().unwrap() > 17_000_000, "{r:#}");
    assert_eq!(r["grade"]["verdict"], "not-graded", "{r:#}");
    assert!(
        r["grade"]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("output was cut"),
        "{r:#}"
    );
    // Never shown as a pass.
    let said = stdout(&out);
    assert!(
        said.contains("NOT GRADED") && !said.contains("PASS"),
        "{said}"
    );
    assert!(said.contains("1 not graded"), "{said}");
    // And never a green exit: what was cut could have failed a check.
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("not graded"), "{}", stderr(&out));
}

#[test]
fn a_forged_artifact_list_never_reads_files_outside_the_case_runs_artifacts() {
    // A run folder handed over from elsewhere (a CI artifact of an untrusted pull request)
    // lists artifacts outside its `artifacts/`: by `..`, by an absolute path, and through a
    // symlink in `artifacts/`. No report may show those files' contents.
    let d = tempfile::tempdir().unwrap();
    let secret = d.path().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET-CONTENT").unwrap();
    let case = d.path().join("run/s/c/run-1");
    std::fs::create_dir_all(case.join("artifacts")).unwrap();
    std::os::unix::fs::symlink(&secret, case.join("artifacts/link.txt")).unwrap();
    std::fs::write(d.path().join("run/run.json"), "{}").unwrap();
    let listed = |p: &str| serde_json::json!({"path": p, "kind": "created", "size": 18});
    let result = serde_json::json!({
        "suite": "s", "case": "c", "run": 1, "status": "completed",
        "grade": {"verdict": "fail"},
        "artifacts": [
            listed("../../../../secret.txt"),
            listed(secret.to_str().unwrap()),
            listed("link.txt"),
        ],
    });
    std::fs::write(case.join("result.json"), result.to_string()).unwrap();
    for format in ["html", "json", "markdown", "junit"] {
        let out = support::assay(d.path(), &["report", "run", "--format", format]);
        assert_eq!(code(&out), 0, "{format}: {}", stderr(&out));
        assert!(
            !stdout(&out).contains("TOP-SECRET"),
            "{format} shows a file outside the run folder:\n{}",
            stdout(&out)
        );
    }
}
