//! The case-run cache is authenticated: an entry edited by anyone who can write the project (an
//! agent that escaped, a teammate, a CI step) is not trusted, and its case-run is run again.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::*;

/// Runs assay with the cache on and its key in `key_dir`, never in the real HOME.
fn assay_cached(dir: &Path, key_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("ASSAY_NO_CACHE")
        .env("ASSAY_CACHE_KEY", key_dir.join("cache.key"))
        .env("XDG_DATA_HOME", key_dir.join("data"))
        .output()
        .expect("assay runs")
}

/// Every `result.json` stored in the project's cache.
fn stored_results(project: &Path) -> Vec<PathBuf> {
    let root = project.join(".assay/cache/case-runs");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path().join("result.json"))
        .filter(|p| p.is_file())
        .collect()
}

/// Rewrites a stored failed result to read as a clean pass, the way an attacker would.
fn forge_pass(path: &Path) {
    let mut v = read_json(path);
    v["status"] = "completed".into();
    v["exit_code"] = 0.into();
    if let Some(checks) = v["checks"].as_array_mut() {
        for c in checks {
            c["passed"] = true.into();
            c["message"] = "\"ok\" is in the output".into();
        }
    }
    let total = v["grade"]["checks_total"].clone();
    v["grade"]["verdict"] = "pass".into();
    v["grade"]["checks_passed"] = total;
    v["grade"]["score"] = 1.0.into();
    v["grade"]["reasons"] = serde_json::json!([]);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// A project with the `command` harness whose agent says `say`, graded by one check that the
/// output contains "ok".
fn project(say: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let agent = format!("echo {say}\n");
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"agent.sh\"]\n",
            ),
            ("agent.sh", &agent),
            (".claude/commands/a.md", "Say a.\n"),
            (
                ".claude/commands/a.eval.json",
                r#"{"skill_name": "a", "test_args": "a", "assertions": [{"id": "ok", "type": "contains", "needle": "ok"}]}"#,
            ),
        ],
    );
    d
}

#[test]
fn an_edited_cache_entry_is_a_miss_and_the_case_runs_again() {
    // The agent never says "ok": the check fails.
    let d = project("no");
    let keys = tempfile::tempdir().unwrap();

    let out = assay_cached(d.path(), keys.path(), &["run", "--output-dir", "r1"]);
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let stored = stored_results(d.path());
    assert_eq!(stored.len(), 1, "the failed case-run is stored");
    assert_eq!(read_json(&stored[0])["grade"]["verdict"], "fail");

    // The key was made on first use, outside the project, readable by its owner only.
    let key = keys.path().join("cache.key");
    assert_eq!(std::fs::read(&key).unwrap().len(), 32);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }

    // An untouched entry is a hit.
    let out = assay_cached(d.path(), keys.path(), &["run", "--output-dir", "r2"]);
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("FAIL       clauditor:a/a (from the cache)"),
        "{}",
        stdout(&out)
    );

    // The attack: the stored failure rewritten as a pass.
    forge_pass(&stored[0]);
    let out = assay_cached(d.path(), keys.path(), &["run", "--output-dir", "r3"]);
    let said = stdout(&out);
    assert_eq!(code(&out), 1, "{said}\n{}", stderr(&out));
    assert!(!said.contains("from the cache"), "{said}");
    assert!(said.contains("FAIL       clauditor:a/a ("), "{said}");
    let r3 = results(&d.path().join("r3"));
    assert_eq!(r3["a"]["grade"]["verdict"], "fail");
    assert!(r3["a"].get("cached").is_none(), "the case-run ran again");
    // Its fresh result replaced the forged entry.
    assert_eq!(read_json(&stored[0])["grade"]["verdict"], "fail");
}

#[test]
fn an_unusable_key_turns_the_cache_off_with_a_warning() {
    let d = project("no");
    let keys = tempfile::tempdir().unwrap();
    // A key of the wrong length.
    std::fs::write(keys.path().join("cache.key"), "short").unwrap();
    for name in ["r1", "r2"] {
        let out = assay_cached(d.path(), keys.path(), &["run", "--output-dir", name]);
        assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
        assert!(!stdout(&out).contains("from the cache"), "{}", stdout(&out));
        let err = stderr(&out);
        let warned: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("warning: the cache is off: "))
            .collect();
        assert_eq!(warned.len(), 1, "{err}");
    }
    assert!(stored_results(d.path()).is_empty());
    assert_eq!(
        std::fs::read(keys.path().join("cache.key")).unwrap(),
        b"short",
        "a bad key is never replaced"
    );
}
