//! `assay init`: a starter suite in each format, validated, runnable, never overwriting.

use crate::support;

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
            "bmad-cases",
            vec!["evals/greeting/cases.json", "evals/greeting/triggers.json"],
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
        if !format.starts_with("bmad") {
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
    // Without a manifest, one is written: it is what makes the folder a package.
    std::fs::remove_dir_all(d.path().join("evals")).unwrap();
    std::fs::remove_file(d.path().join("package.agent.json")).unwrap();
    let out = assay(
        d.path(),
        &["init", "skills/text-tools", "--format", "uaaps"],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(d.path().join("package.agent.json").is_file());
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
    for format in ["skillet", "bmad", "bmad-cases"] {
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
        let id = match format {
            "skillet" => "001",
            "bmad-cases" => "E1",
            _ => "1",
        };
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

/// A reviewer's feedback.json in `run_dir` on the case-run of `case` (run 1, with the skill).
fn review(run_dir: &Path, case: &str, verdict: &str, note: &str) {
    let dir = run_dir.join(
        support::results(run_dir)
            .into_iter()
            .find(|(_, r)| r["case"] == case && r["kind"] != "trigger")
            .map(|(_, r)| r["dir"].as_str().unwrap().to_string())
            .unwrap(),
    );
    let r = read_json(&dir.join("result.json"));
    let f = serde_json::json!({"schema": "assay.feedback/v1", "run": "out", "items": [
        {"suite": r["suite"], "case": case, "run": 1, "variant": "skill", "verdict": verdict, "note": note}]});
    std::fs::write(run_dir.join("feedback.json"), f.to_string()).unwrap();
}

#[test]
fn from_run_uses_the_reviewers_verdict_a_bad_note_becomes_what_the_case_must_get_right() {
    let note = "It greeted the wrong person\n\"; evil: [1] </script> {{x}}";
    for (format, id, file) in [
        ("skillet", "001", "evals/greeting/003.yaml"),
        ("bmad", "1", "evals/greeting/evals.json"),
    ] {
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
        assert!(matches!(code(&out), 0 | 1), "{}", stderr(&out));
        review(&d.path().join("out"), id, "bad", note);
        // Listed with its review.
        let out = assay(d.path(), &["init", "--from-run", "out"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert!(
            stdout(&out).contains(&format!("--case {id}  (run 1, ")),
            "{}",
            stdout(&out)
        );
        assert!(
            stdout(&out).contains("reviewed bad: It greeted the wrong person\\n"),
            "{}",
            stdout(&out)
        );
        let out = assay(d.path(), &["init", "--from-run", "out", "--case", id]);
        assert_eq!(
            code(&out),
            0,
            "{format}: {}\n{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(
            stdout(&out).contains("the reviewer's `bad` note as what it must get right"),
            "{}",
            stdout(&out)
        );
        let text = std::fs::read_to_string(d.path().join(file)).unwrap();
        assert!(text.contains("It greeted the wrong person"), "{text}");
        match format {
            "bmad" => {
                let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                let added = v["evals"].as_array().unwrap().last().unwrap().clone();
                assert_eq!(
                    added["expectations"][0],
                    format!(
                        "The response does not have the problem a reviewer found in a recorded answer: {note}"
                    ),
                    "{added:#}"
                );
                assert!(
                    added["expected_output"]
                        .as_str()
                        .unwrap()
                        .starts_with("Not this answer, which a reviewer marked bad")
                );
            }
            _ => assert!(
                text.contains("expected: \"An answer without the problem a reviewer found"),
                "{text}"
            ),
        }
        validates(d.path());
        let listed = stdout(&assay(d.path(), &["list", "--json"]));
        assert!(listed.contains("It greeted the wrong person"), "{listed}");
    }

    // A good verdict: the recorded answer is expected, and the case says a reviewer approved it.
    let d = bare_quickstart();
    assert_eq!(code(&assay(d.path(), &["init", "--format", "skillet"])), 0);
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
    assert!(matches!(code(&out), 0 | 1), "{}", stderr(&out));
    review(&d.path().join("out"), "001", "good", "just right");
    let out = assay(d.path(), &["init", "--from-run", "out", "--case", "001"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = std::fs::read_to_string(d.path().join("evals/greeting/003.yaml")).unwrap();
    assert!(
        text.contains("Like this answer, which a reviewer marked good (note: just right)"),
        "{text}"
    );
    assert!(text.contains("Wrote greeting.txt"), "{text}");
    validates(d.path());

    // A feedback.json that is not one is an error naming it.
    std::fs::write(d.path().join("out/feedback.json"), "[]").unwrap();
    let out = assay(d.path(), &["init", "--from-run", "out", "--case", "001"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("feedback.json: not a feedback file"),
        "{}",
        stderr(&out)
    );
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

#[test]
fn a_skill_creator_suite_is_written_in_the_skills_own_folder() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                ".claude/skills/brief/SKILL.md",
                "---\nname: brief\ndescription: Writes product briefs.\n---\nWrite brief.md.\n",
            ),
            (".claude/commands/memo.md", "Write a memo.\n"),
        ],
    );
    let out = assay(
        d.path(),
        &["init", ".claude/skills/brief", "--format", "skill-creator"],
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("a skill-creator suite for `brief`"),
        "{}",
        stdout(&out)
    );
    let evals = read_json(&d.path().join(".claude/skills/brief/evals/evals.json"));
    // skill-creator's shape: integer ids, files, expectations.
    assert_eq!(evals["skill_name"], "brief");
    assert_eq!(evals["evals"][0]["id"], 1);
    assert_eq!(evals["evals"][1]["files"], serde_json::json!([]));
    let triggers = read_json(
        &d.path()
            .join(".claude/skills/brief/evals/trigger-evals.json"),
    );
    assert_eq!(triggers.as_array().unwrap().len(), 4);
    // Found where skill-creator keeps it, with the skill and its trigger queries.
    let out = assay(d.path(), &["list", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let suite = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source"] == ".claude/skills/brief/evals/evals.json")
        .unwrap_or_else(|| panic!("{listed:#}"));
    assert_eq!(suite["skill"]["name"], "brief");
    assert_eq!(suite["cases"].as_array().unwrap().len(), 2);
    assert_eq!(suite["triggers"].as_array().unwrap().len(), 4);
    // A command file has no folder of its own to keep them in.
    let out = assay(
        d.path(),
        &[
            "init",
            ".claude/commands/memo.md",
            "--format",
            "skill-creator",
        ],
    );
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is a command file"),
        "{}",
        stderr(&out)
    );
}
