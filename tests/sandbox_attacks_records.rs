//! Attacks on what a run records (issue 42, round four, item 8): a case-run whose record
//! cannot be written must never vanish into an exit 0, and no tree an agent makes may crash
//! assay. Each attack runs a hostile agent (a bash script through the `command` harness)
//! under each Linux backend: each test is `name::bwrap` and `name::landlock`.

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

use support::{HOSTILE_CASE, code, hostile_project as project, read_json, results, stderr, stdout};

/// `assay run . --output-dir <d>/run` in `project` under `backend`, with a private HOME and
/// workspaces under `<d>/ws`.
fn assay_cmd(d: &Path, project: &Path, backend: &str) -> Command {
    support::contained(d, project, backend)
}

fn said(out: &Output) -> String {
    format!("exit {}\n{}\n{}", code(out), stdout(out), stderr(out))
}

/// Removes a folder with `rm -rf` when dropped: a chain left 20,000 deep would overflow the
/// test thread's stack in `tempfile`'s recursive removal.
struct RemovedByRm(std::path::PathBuf);

impl Drop for RemovedByRm {
    fn drop(&mut self) {
        let _ = Command::new("rm").arg("-rf").arg(&self.0).status();
    }
}

/// How the run folder records the name `bad-\xff\xfe` (see `record::path_text`).
const ESCAPED: &str = "\"bad-\\xff\\xfe\"";

per_backend! {
/// A failing agent that also leaves a file whose name is not UTF-8: its `result.json` could
/// not be written ("cannot record the result…"), the case-run read back as `missing`, and
/// `assay run` exited 0 (without that file: exit 1). Now the name is recorded escaped, the
/// case-run is recorded as failed, and the run exits 1.
fn a_file_name_that_is_not_utf8_is_recorded_escaped(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("project");
    project(&p, "printf x > \"$(printf 'bad-\\377\\376')\"\necho not-done\n");
    let out = assay_cmd(d.path(), &p, backend).output().unwrap();
    let run = d.path().join("run");
    let r = &results(&run)["001"];
    assert_eq!(r["status"], "completed", "{r:#}\n{}", said(&out));
    assert_eq!(r["grade"]["verdict"], "fail", "{r:#}");
    assert_eq!(r["sandbox"]["kind"], backend);
    let artifacts: Vec<&str> = r["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["path"].as_str())
        .collect();
    assert!(artifacts.contains(&ESCAPED), "{artifacts:?}");
    let ws = read_json(&run.join("skillet_hostile/001/run-1/workspace.json"));
    assert!(
        ws["added"].as_array().unwrap().iter().any(|a| a == ESCAPED),
        "{ws:#}"
    );
    assert_eq!(code(&out), 1, "{}", said(&out));
}
}

per_backend! {
/// A folder chain 20,000 deep: removing the workspace recursed once per folder and
/// overflowed the remover thread's stack ("thread has overflowed its stack", exit 134), which
/// took the other case-run still running with it; no report was written and `run.json` kept
/// `finished: null`. Now every walk is iterative: both case-runs are recorded, the report and
/// `finished` written.
fn a_folder_chain_20000_deep_crashes_nothing(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    let _rm = RemovedByRm(d.path().to_path_buf());
    let p = d.path().join("project");
    project(
        &p,
        "read -r prompt\nif [ \"$prompt\" = calm ]; then sleep 6; echo finished; exit 0; fi\nperl -e 'for (1..20000) { mkdir \"d\" or die \"mkdir: $!\"; chdir \"d\" or die \"chdir: $!\" }' || echo 'perl: FAILED'\necho finished\n",
    );
    std::fs::write(
        p.join("evals/hostile/002.yaml"),
        HOSTILE_CASE
            .replace("prompt: go", "prompt: calm")
            .replace("name: hostile", "name: calm"),
    )
    .unwrap();
    let out = assay_cmd(d.path(), &p, backend)
        .args(["--jobs", "2", "--reporter", "json"])
        .output()
        .unwrap();
    let run = d.path().join("run");
    assert!(
        !stderr(&out).contains("overflowed its stack"),
        "{}",
        said(&out)
    );
    assert!(matches!(code(&out), 0 | 1 | 3), "{}", said(&out));
    let all = results(&run);
    assert_eq!(all["002"]["grade"]["verdict"], "pass", "{}", said(&out));
    assert_ne!(all["001"]["status"], "missing", "{:#}", all["001"]);
    let output = std::fs::read_to_string(run.join("skillet_hostile/001/run-1/output.txt"))
        .unwrap_or_default();
    assert!(!output.contains("perl: FAILED"), "the chain was not made: {output}");
    assert!(run.join("report.json").is_file(), "{}", said(&out));
    let record = read_json(&run.join("run.json"));
    assert!(!record["finished"].is_null(), "{record:#}");
}
}

/// A case-run whose `result.json` cannot be written (here an unsandboxed agent, run by an
/// ordinary user, takes the write permission off its case-run's folder; a full disk does the
/// same) was read back as `missing` and the run exited 0. Now a result that cannot be
/// recorded makes the run exit 3. (Needs root, to act as `nobody`.)
#[test]
fn a_result_that_cannot_be_recorded_exits_3() {
    let d = tempfile::tempdir().unwrap();
    let (home, p) = (d.path().join("home"), d.path().join("project"));
    let case_dir = d.path().join("run/skillet_hostile/001/run-1");
    project(
        &p,
        &format!("chmod a-w '{}' && echo finished\n", case_dir.display()),
    );
    std::fs::create_dir_all(&home).unwrap();
    let chown = Command::new("chown")
        .args(["-R", "nobody:nogroup"])
        .arg(d.path())
        .status()
        .unwrap();
    assert!(chown.success(), "this test needs root (chown to nobody)");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // assay where the user can reach it (the build folder may be under a HOME only root
    // can enter).
    let bin = d.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let built = Path::new(env!("CARGO_BIN_EXE_assay"));
    if std::fs::hard_link(built, bin.join("assay")).is_err() {
        std::fs::copy(built, bin.join("assay")).unwrap();
    }
    let assay = assay_cmd(d.path(), &p, "none");
    let out = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg(bin.join("assay"))
        .args(assay.get_args())
        .current_dir(&p)
        .env("HOME", &home)
        .env("ASSAY_NO_CACHE", "1")
        .env("NO_COLOR", "1")
        .env_remove("ASSAY_SANDBOX")
        .output()
        .unwrap();
    assert!(
        !case_dir.join("result.json").exists(),
        "the fault did not happen: {}",
        said(&out)
    );
    assert!(
        stderr(&out).contains("could not be recorded"),
        "{}",
        said(&out)
    );
    assert_eq!(code(&out), 3, "{}", said(&out));
}
