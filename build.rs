//! Stamps the build with the commit it was made from, for `assay --version`: `git rev-parse`
//! in a checkout, else `ASSAY_COMMIT` (a release pipeline building from a source archive), else
//! `unknown` (a crates.io build has no repository to ask).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=ASSAY_COMMIT");
    let from_git = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit()));
    if from_git.is_some() {
        // A new commit or checkout changes HEAD (or the branch it points at).
        if let Ok(dir) = Command::new("git")
            .args(["rev-parse", "--git-dir"])
            .output()
            && let Ok(dir) = String::from_utf8(dir.stdout)
        {
            let dir = dir.trim();
            println!("cargo:rerun-if-changed={dir}/HEAD");
            if let Ok(head) = std::fs::read_to_string(format!("{dir}/HEAD"))
                && let Some(branch) = head.trim().strip_prefix("ref: ")
            {
                println!("cargo:rerun-if-changed={dir}/{branch}");
            }
            println!("cargo:rerun-if-changed={dir}/packed-refs");
        }
    }
    let commit = from_git
        .or_else(|| std::env::var("ASSAY_COMMIT").ok().filter(|c| !c.is_empty()))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=ASSAY_COMMIT={commit}");
}
