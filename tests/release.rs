//! What a release promises about itself: `assay --version` names the commit it was built from.
//! (Packaging — `cargo publish --dry-run`, `dist plan`, `dist build` and the built binary on the
//! quickstart — runs as `scripts/test`'s release step: cargo cannot run inside `cargo test` on
//! the same target folder.)

use crate::support;

use support::*;

#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = assay(&repo(), &["--version"]);
    assert_eq!(code(&out), 0);
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(repo())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    assert_eq!(
        stdout(&out).trim(),
        format!("assay {} (commit {head})", env!("CARGO_PKG_VERSION"))
    );
}
