//! `assay init`: a starter suite in each format, validated, runnable, never overwriting.

mod support;

use std::path::Path;

use support::*;

/// The quickstart without its own suites: the `greeting` command and the stand-in agent.
fn bare_quickstart() -> tempfile::TempDir {
    let d = copy_example("examples/quickstart");
    std::fs::remove_dir_all(d.path().join("evals")).unwrap();
    std::fs::remove_file(d.path().join(".claude/commands/greeting.eval.json")).unwrap();
    d
}

fn validates(dir: &Path) -> String {
    let out = assay(dir, &["validate"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    stdout(&out)
}

#[test]
fn each_format_writes_a_suite_that_validates_and_runs() {
    for (format, files, suite) in [
        (
            "bmad",
            vec!["evals/greeting/evals.json", "evals/greeting/triggers.json"],
            "bmad",
        ),
        (
            "clauditor",
            vec![".claude/commands/greeting.eval.json"],
            "clauditor",
        ),
        (
            "skillet",
            vec!["evals/greeting/001.yaml", "evals/greeting/002.yaml"],
            "skillet",
        ),
    ] {
        let d = bare_quickstart();
        // The only command is found without naming it.
        let out = assay(d.path(), &["init", "--format", format]);
        assert_eq!(
            code(&out),
            0,
            "{format}: {}\n{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(stdout(&out).contains("it validates"), "{}", stdout(&out));
        for f in &files {
            assert!(d.path().join(f).is_file(), "{format}: {f}");
        }
        let listed = validates(d.path());
        assert!(listed.starts_with(suite), "{format}: {listed}");
        if format != "bmad" {
            // Its checks pass on a first run, through the quickstart's stand-in agent.
            let out = assay(
                d.path(),
                &["run", "--mode", "artifacts", "--output-dir", "out"],
            );
            assert_eq!(
                code(&out),
                0,
                "{format}: {}\n{}",
                stdout(&out),
                stderr(&out)
            );
        }
        // Never over what is there.
        let again = assay(d.path(), &["init", "--format", format]);
        assert_eq!(code(&again), 2, "{format}");
        assert!(
            stderr(&again).contains("already exists (pass --force"),
            "{}",
            stderr(&again)
        );
        let forced = assay(d.path(), &["init", "--format", format, "--force"]);
        assert_eq!(code(&forced), 0, "{}", stderr(&forced));
    }
}

#[test]
fn a_uaaps_package_gets_its_config_and_a_case_for_its_skill() {
    let d = copy_example("examples/uaaps");
    std::fs::remove_dir_all(d.path().join("evals")).unwrap();
    let out = assay(
        d.path(),
        &["init", "skills/text-tools", "--format", "uaaps"],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(d.path().join("evals/eval-config.json").is_file());
    let case = std::fs::read_to_string(d.path().join("evals/cases/text-tools.yaml")).unwrap();
    assert!(case.contains("target: skill:text-tools"), "{case}");
    assert!(validates(d.path()).contains("uaaps"));
    // A skill outside a package's skills/ cannot be a UAAPS case.
    let q = bare_quickstart();
    let out = assay(q.path(), &["init", "--format", "uaaps"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("skills/<name>/"), "{}", stderr(&out));
}

#[test]
fn a_skill_folder_gets_its_eval_beside_skill_md_and_a_project_its_assay_toml() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[(
            ".claude/skills/release-notes/SKILL.md",
            "---\nname: release-notes\ndescription: Writes release notes from merged pull requests.\n---\nRead the merged PRs.\n",
        )],
    );
    let out = assay(d.path(), &["init"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let eval = d
        .path()
        .join(".claude/skills/release-notes/release-notes.eval.json");
    let v = read_json(&eval);
    assert_eq!(v["skill_name"], "release-notes");
    assert!(
        v["trigger_tests"]["should_trigger"][1]
            .as_str()
            .unwrap()
            .starts_with("Writes release notes from merged pull requests"),
        "{v:#}"
    );
    assert!(d.path().join("assay.toml").is_file());
    validates(d.path());
}

#[test]
fn no_skill_or_several_is_bad_input_naming_them() {
    let d = tempfile::tempdir().unwrap();
    let out = assay(d.path(), &["init"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("no skill or slash command here"));
    write_tree(
        d.path(),
        &[
            (".claude/commands/a.md", "A."),
            (".claude/commands/b.md", "B."),
        ],
    );
    let out = assay(d.path(), &["init"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains(".claude/commands/a.md, .claude/commands/b.md"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn from_run_turns_a_recorded_case_run_into_a_new_case_of_its_suite() {
    for format in ["skillet", "bmad"] {
        let d = bare_quickstart();
        let out = assay(d.path(), &["init", "--format", format]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let out = assay(
            d.path(),
            &[
                "run",
                "--mode",
                "artifacts",
                "--judge",
                "none",
                "--output-dir",
                "out",
            ],
        );
        assert!(
            matches!(code(&out), 0 | 1),
            "{}\n{}",
            stdout(&out),
            stderr(&out)
        );
        let before = assay(d.path(), &["list", "--json"]);
        let id = if format == "skillet" { "001" } else { "1" };
        let out = assay(d.path(), &["init", "--from-run", "out", "--case", id]);
        assert_eq!(
            code(&out),
            0,
            "{format}: {}\n{}",
            stdout(&out),
            stderr(&out)
        );
        // One more case, whose expectation is what the stand-in agent answered.
        let after = assay(d.path(), &["list", "--json"]);
        let count = |o: &std::process::Output| stdout(o).matches("\"turns\"").count();
        assert!(
            count(&after) > count(&before),
            "{format}: {}",
            stdout(&after)
        );
        assert!(
            stdout(&after).contains("Wrote greeting.txt"),
            "{}",
            stdout(&after)
        );
        validates(d.path());
    }
    let d = bare_quickstart();
    let out = assay(d.path(), &["init", "--from-run", "nowhere", "--case", "x"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

#[test]
fn init_writes_nothing_through_a_symbolic_link() {
    let d = bare_quickstart();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("evals")).unwrap();
    std::os::unix::fs::symlink(outside.path(), d.path().join("evals/greeting")).unwrap();
    let out = assay(d.path(), &["init", "--format", "skillet"]);
    assert_eq!(code(&out), 2, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("is a symbolic link"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn a_skill_named_from_outside_its_project_gets_its_suite_in_that_project() {
    let outer = tempfile::tempdir().unwrap();
    let project = outer.path().join("proj");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(bare_quickstart().path())
        .arg(&project)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::create_dir(outer.path().join(".git")).unwrap();
    let out = assay(
        outer.path(),
        &[
            "init",
            "proj/.claude/commands/greeting.md",
            "--format",
            "skillet",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("wrote proj/evals/greeting/001.yaml"),
        "{}",
        stdout(&out)
    );
    assert!(
        !outer.path().join("evals").exists(),
        "nothing in the folder it ran from"
    );
    validates(&project);
}
