//! `assay completions` and `assay man`, generated from the one clap definition.

use crate::support;

use std::process::Command;

use support::*;

#[test]
fn completions_parse_in_bash_and_name_every_command() {
    let d = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = assay(d.path(), &["completions", shell]);
        assert_eq!(code(&out), 0, "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        for cmd in [
            "validate",
            "run",
            "grade",
            "report",
            "plugin",
            "completions",
            "man",
        ] {
            assert!(script.contains(cmd), "{shell} completions lack {cmd}");
        }
        assert!(script.contains("trigger-mode"), "{shell}: run's flags");
    }
    let out = assay(d.path(), &["completions", "bash"]);
    let file = d.path().join("assay.bash");
    std::fs::write(&file, out.stdout).unwrap();
    let check = Command::new("bash").arg("-n").arg(&file).output().unwrap();
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    // Sourced, it registers a completion for `assay`.
    let complete = Command::new("bash")
        .arg("-c")
        .arg(format!("source {} && complete -p assay", file.display()))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&complete.stdout).contains("assay"),
        "{}",
        String::from_utf8_lossy(&complete.stderr)
    );
    let out = assay(d.path(), &["completions", "tcsh"]);
    assert_eq!(code(&out), 2, "an unknown shell is bad input");
}

#[test]
fn man_pages_cover_every_subcommand_and_the_exit_codes() {
    let d = tempfile::tempdir().unwrap();
    let out = assay(d.path(), &["man"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let page = stdout(&out);
    assert!(
        page.starts_with(".ie") || page.contains(".TH assay"),
        "{page}"
    );
    assert!(page.contains("130 interrupted"), "exit codes in the page");
    let out = assay(d.path(), &["man", "--dir", "man"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for page in [
        "assay.1",
        "assay-run.1",
        "assay-report-diff.1",
        "assay-plugin-new.1",
    ] {
        assert!(d.path().join("man").join(page).is_file(), "{page}");
    }
    let help = stdout(&assay(d.path(), &["--help"]));
    assert!(help.contains("130 interrupted"), "{help}");
}
