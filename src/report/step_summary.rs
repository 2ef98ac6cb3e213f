//! GitHub Actions' step summary: `--reporter github` appends the Markdown report to the file
//! `$GITHUB_STEP_SUMMARY` names, when it names one.

use std::io::Write;

use crate::host::HostEnv;

/// Appends the Markdown report of `r` to `$GITHUB_STEP_SUMMARY`; nothing when it is not set.
pub fn append(r: &super::Report, host: &HostEnv) -> std::io::Result<()> {
    let Some(path) = host.var("GITHUB_STEP_SUMMARY") else {
        return Ok(());
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(super::render(r, super::Reporter::Markdown).as_bytes())?;
    f.flush()
}
