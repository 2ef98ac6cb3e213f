//! A hostile agent and symlinks: no link carries a read or a write out of a case-run's
//! workspace, whether the project brought the link or the agent made it.

use crate::support;

use std::path::{Path, PathBuf};

use support::*;

/// `assay run` in `dir`, unsandboxed so the links themselves are what is tested.
fn run(dir: &Path) -> std::process::Output {
    assay(
        dir,
        &[
            "run",
            "--sandbox",
            "none",
            "--workspace-dir",
            "ws",
            "--output-dir",
            "out",
        ],
    )
}

/// A clauditor suite whose agent is `script` (run with `sh -c` in the workspace's root), whose
/// output is `out.txt` and whose one check wants it to contain `needle`.
fn project(root: &Path, script: &str, needle: &str) {
    write_tree(
        root,
        &[
            (
                "assay.toml",
                &format!(
                    "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", {}]\n",
                    toml_string(script)
                ),
            ),
            (".claude/commands/sum.md", "Summarize."),
            (
                ".claude/commands/sum.eval.json",
                &format!(
                    r#"{{"output_file": "out.txt", "assertions": [{{"id": "a", "type": "contains", "needle": {needle:?}}}]}}"#
                ),
            ),
        ],
    );
}

fn toml_string(s: &str) -> String {
    format!("{:?}", s)
}

/// Every file under `dir` (not following links), with its bytes.
fn all_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                out.push((e.path(), std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn project_links_out_of_the_project_are_not_staged_so_writes_through_them_stay_inside() {
    let d = tempfile::tempdir().unwrap();
    let outside = d.path().join("outside");
    write_tree(&outside, &[("keep.txt", "original\n")]);
    let proj = d.path().join("proj");
    project(
        &proj,
        "echo pwned > up/keep.txt; echo pwned > up/new.txt; \
         echo pwned > abs/keep.txt; echo pwned > abs/new2.txt; \
         cat inner/note.txt > out.txt",
        "inside note",
    );
    write_tree(&proj, &[("sub/note.txt", "inside note\n")]);
    // Relative and leaving the project, absolute, and inside the project.
    // Climbing past `/` stays at `/`, so this reaches `outside` from any workspace.
    let climb = format!(
        "{}{}",
        "../".repeat(40),
        outside.strip_prefix("/").unwrap().display()
    );
    std::os::unix::fs::symlink(climb, proj.join("up")).unwrap();
    std::os::unix::fs::symlink(&outside, proj.join("abs")).unwrap();
    std::os::unix::fs::symlink("sub", proj.join("inner")).unwrap();

    let out = run(&proj);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));

    // Nothing outside changed: no write went through a link.
    let files = all_files(&outside);
    assert_eq!(
        files,
        vec![(outside.join("keep.txt"), b"original\n".to_vec())],
        "the folder outside the project was written to"
    );
    // The link inside the project still works in the workspace.
    let r = &results(&proj.join("out"))["sum"];
    assert_eq!(r["grade"]["verdict"], "pass", "{r:#}");
    assert_eq!(r["output_files"]["out.txt"], "inside note\n");
}

#[test]
fn an_agent_made_link_to_a_file_outside_is_neither_read_nor_copied() {
    let d = tempfile::tempdir().unwrap();
    let secret = d.path().join("secret.txt");
    std::fs::write(&secret, "TOPSECRET-xyzzy-4242\n").unwrap();
    let proj = d.path().join("proj");
    let s = secret.display();
    let outside = d.path().display();
    project(
        &proj,
        &format!(
            "ln -s {s} out.txt; mkdir -p deep; ln -s {s} deep/copy.txt; \
             ln -s /etc/hostname host.txt; ln -s {outside} dirlink; echo done"
        ),
        "TOPSECRET",
    );

    let out = run(&proj);
    let r = &results(&proj.join("out"))["sum"];
    // The check does not see the link's target.
    assert_eq!(r["grade"]["verdict"], "fail", "{r:#}\n{}", stderr(&out));
    assert!(
        r["output_files"].get("out.txt").is_none(),
        "the output was read through a link: {r:#}"
    );
    // Nothing in the run folder holds the secret: not the output, not the artifacts (the
    // check's own needle is in its record, so look for the rest of the secret).
    let dir = Path::new(r["dir"].as_str().unwrap());
    assert!(std::fs::metadata(dir).is_ok());
    for (path, bytes) in all_files(&proj.join("out")) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains("xyzzy-4242"),
            "{} holds the secret",
            path.display()
        );
    }
    // The links are listed as artifacts, as links.
    let listed: Vec<(String, bool)> = r["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap().to_string(),
                a["symlink"] == true,
            )
        })
        .collect();
    for p in ["out.txt", "deep/copy.txt", "host.txt", "dirlink"] {
        assert!(listed.contains(&(p.to_string(), true)), "{p}: {listed:?}");
    }
    // And no link, nor what one points at, made it into the artifacts.
    let arts = dir.join("artifacts");
    let mut stack = vec![arts];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let t = e.file_type().unwrap();
            assert!(!t.is_symlink(), "{} is a link", e.path().display());
            if t.is_dir() {
                stack.push(e.path());
            }
        }
    }
}
