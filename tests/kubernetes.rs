//! docs/kubernetes.md: every manifest passes Kubernetes' own schemas (`kubernetes-validate
//! --strict` from PyPI, in scripts/test's venv), and the documented shard and merge scripts do
//! what the page says when started as a Kubernetes Indexed Job starts them: each pod's
//! environment set, one shared folder, a retried index resumed, the merge writing the timings
//! of the next Job.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use support::*;

/// The schemas' Kubernetes version: the first where `backoffLimitPerIndex` is generally
/// available.
const KUBERNETES: &str = "1.33.0";

fn validator() -> PathBuf {
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("kubernetes-validate"))
        .find(|p| p.is_file())
        .expect("kubernetes-validate is on PATH (scripts/test installs it: pip install kubernetes-validate)")
}

fn validate(file: &Path) -> Output {
    Command::new(validator())
        .args(["--strict", "-k", KUBERNETES])
        .arg(file)
        .output()
        .unwrap()
}

fn both(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

/// docs/kubernetes.md's manifests, each as JSON (read by the validator's own Python, whose
/// PyYAML parses YAML as the Kubernetes tools do), with the line it starts on.
fn manifests() -> Vec<(usize, String, Value)> {
    let doc = std::fs::read_to_string(repo().join("docs/kubernetes.md")).unwrap();
    let python = validator().with_file_name("python3");
    yaml_blocks(&doc)
        .into_iter()
        .map(|(line, text)| {
            let out = Command::new(&python)
                .args([
                    "-c",
                    "import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))",
                ])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .and_then(|mut c| {
                    use std::io::Write;
                    c.stdin.take().unwrap().write_all(text.as_bytes())?;
                    c.wait_with_output()
                })
                .unwrap();
            let v: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("docs/kubernetes.md line {line}: {e}"));
            (line, text, v)
        })
        .collect()
}

#[test]
fn every_manifest_in_docs_kubernetes_md_passes_the_schemas() {
    let d = tempfile::tempdir().unwrap();
    let all = manifests();
    let kinds: Vec<&str> = all
        .iter()
        .map(|(_, _, v)| v["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["Secret", "PersistentVolumeClaim", "Job", "Job"]);
    for (line, text, v) in &all {
        let file = d.path().join(format!("line-{line}.yaml"));
        std::fs::write(&file, text).unwrap();
        let out = validate(&file);
        assert_eq!(
            code(&out),
            0,
            "docs/kubernetes.md line {line}: {}",
            both(&out)
        );
        assert!(both(&out).contains("passed for resource"), "{}", both(&out));
        // No pod asks for privilege.
        assert!(!text.contains("privileged: true"), "line {line}");
        if let Some(spec) = v["spec"]["template"]["spec"].as_object() {
            assert_eq!(spec["securityContext"]["runAsNonRoot"], true, "line {line}");
        }
    }
    // The Indexed Job: one shard per pod, each retried alone, ASSAY_SHARDS its completions.
    let job = &all[2].2["spec"];
    assert_eq!(job["completionMode"], "Indexed");
    assert_eq!(job["completions"], job["parallelism"]);
    assert!(job["backoffLimitPerIndex"].as_u64().unwrap() >= 1);
    let shards = env_of(&all[2].2, "ASSAY_SHARDS");
    assert_eq!(shards, job["completions"].as_u64().unwrap().to_string());
    let secret = &container(&all[2].2)["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "ANTHROPIC_API_KEY")
        .unwrap()["valueFrom"]["secretKeyRef"];
    assert_eq!(secret["name"], all[0].2["metadata"]["name"]);
}

#[test]
fn the_validator_finds_what_is_wrong() {
    let d = tempfile::tempdir().unwrap();
    let (_, text, _) = manifests().swap_remove(2);
    for (broken, why) in [
        (
            text.replace("backoffLimitPerIndex:", "backoffLimitPerIndx:"),
            "backoffLimitPerIndx",
        ),
        (text.replace("completions: 4", "completions: four"), "four"),
    ] {
        let file = d.path().join("broken.yaml");
        std::fs::write(&file, broken).unwrap();
        let out = validate(&file);
        assert_ne!(code(&out), 0, "{}", both(&out));
        assert!(both(&out).contains(why), "{}", both(&out));
    }
}

fn container(manifest: &Value) -> &Value {
    &manifest["spec"]["template"]["spec"]["containers"][0]
}

fn env_of(manifest: &Value, name: &str) -> String {
    container(manifest)["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_str())
        .unwrap_or_else(|| panic!("no {name} in {manifest}"))
        .to_string()
}

/// A container's script (`command: [/bin/sh, -c]`, `args: [script]`), its `/runs` volume
/// moved to `runs`.
fn script(manifest: &Value, runs: &Path) -> String {
    let c = container(manifest);
    assert_eq!(c["command"], serde_json::json!(["/bin/sh", "-c"]));
    c["args"][0]
        .as_str()
        .unwrap()
        .replace("/runs", &runs.display().to_string())
}

/// Runs a container's script in `dir` as its pod would: `env` set, assay on PATH.
fn pod(script: &str, dir: &Path, env: &[(&str, String)]) -> std::process::Child {
    let bin = Path::new(env!("CARGO_BIN_EXE_assay")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("/bin/sh")
        .args(["-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env("ASSAY_NO_CACHE", "1")
        .env_remove("CI_NODE_INDEX")
        .env_remove("CI_NODE_TOTAL")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// A Skillet suite of six cases through the command harness; `c6` fails its check.
fn project(root: &Path) {
    let mut files: Vec<(String, String)> = vec![(
        "assay.toml".into(),
        "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"read p; case $p in *c6*) echo no ;; *) echo ok ;; esac\"]\n".into(),
    )];
    for i in 1..=6 {
        files.push((
            format!("evals/k8s/c{i}.yaml"),
            format!("timestamp: 2026-11-26T00:00:00Z\nname: c{i}\nprompt: \"Answer c{i}.\"\nexpected: ok\nassertions:\n  - type: contains\n    value: ok\n"),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write_tree(root, &refs);
}

#[test]
fn the_documented_job_and_merge_run_as_kubernetes_starts_them() {
    let all = manifests();
    let (job, merge) = (&all[2].2, &all[3].2);
    let d = tempfile::tempdir().unwrap();
    let (work, runs) = (d.path().join("work"), d.path().join("runs"));
    project(&work);
    std::fs::create_dir_all(&runs).unwrap();
    let shard_script = script(job, &runs);
    let shards: u32 = env_of(job, "ASSAY_SHARDS").parse().unwrap();
    let env = |i: u32, name: &str| {
        vec![
            ("JOB_COMPLETION_INDEX", i.to_string()),
            ("ASSAY_SHARDS", shards.to_string()),
            ("JOB_NAME", name.to_string()),
            ("ANTHROPIC_API_KEY", "unused".to_string()),
        ]
    };
    // Every index at once, as `parallelism` = `completions` starts them.
    let pods: Vec<_> = (0..shards)
        .map(|i| pod(&shard_script, &work, &env(i, "assay-evals")))
        .collect();
    for (i, p) in pods.into_iter().enumerate() {
        let out = p.wait_with_output().unwrap();
        // A failed case (c6) is a verdict: the pod still succeeds.
        assert_eq!(code(&out), 0, "index {i}: {}", both(&out));
        assert!(
            stderr(&out).contains(&format!("(Kubernetes Indexed Job: JOB_COMPLETION_INDEX={i}, {shards} shards from --shards (or ASSAY_SHARDS)): cut by count")),
            "{}",
            stderr(&out)
        );
    }
    // A retried index resumes its folder: nothing recorded runs again.
    let out = pod(&shard_script, &work, &env(1, "assay-evals"))
        .wait_with_output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", both(&out));
    assert!(
        stderr(&out).contains("cut as the run being resumed was"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("already done (cache or --resume)"),
        "{}",
        stderr(&out)
    );
    // The merge Job: every case-run, and the timings of the next Job.
    let out = pod(&script(merge, &runs), &work, &[])
        .wait_with_output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", both(&out));
    assert!(
        stdout(&out).contains(&format!("merged 6 case-run(s) from {shards} run folder(s)")),
        "{}",
        stdout(&out)
    );
    assert!(runs.join("assay-evals/merged/report.html").is_file());
    assert!(runs.join("latest/run.json").is_file());
    let report = assay(
        &work,
        &[
            "report",
            &runs.join("latest").display().to_string(),
            "--format",
            "json",
        ],
    );
    let v: Value = serde_json::from_str(&stdout(&report)).unwrap();
    assert_eq!(v["summary"]["total"], 6);
    assert_eq!(v["summary"]["passed"], 5);
    // The next Job cuts by the merged run's times.
    let out = pod(&shard_script, &work, &env(0, "assay-evals-2"))
        .wait_with_output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", both(&out));
    assert!(
        stderr(&out).contains(&format!(
            "cut by expected time from {}",
            runs.join("latest").display()
        )),
        "{}",
        stderr(&out)
    );
}
