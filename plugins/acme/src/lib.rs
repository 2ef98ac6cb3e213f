//! acme: assay's harness adapter for `acme-agent`, an organisation's in-house agent CLI
//! (`agent/acme-agent` is a stand-in for one). The walkthrough in docs/plugins.md builds it
//! step by step. What the agent needs said, and where this adapter says it:
//!
//! - how to run one turn headless: [`Harness::command`] (`acme-agent run --prompt …`, and
//!   `--resume <session>` on later turns);
//! - how to read what it prints (one JSON object per line): [`Lines`], into assay's events
//!   and a typed [`Summary`];
//! - where it reads skills: `.acme/skills` ([`Harness::skill_folders`]), so assay installs the
//!   skill under test there, and removes it from there for a baseline;
//! - how to ask its version: `acme-agent version` ([`Harness::version_args`]), run inside the
//!   sandbox before any case-run;
//! - its own error kind, `quota`, counted as a rate limit ([`Harness::error_kinds`]).
//!
//! The second harness, `acme-acp` ([`AcmeAcp`]), is the same organisation's agent that speaks
//! the Agent Client Protocol: it says only how to start it, and assay's ACP client does the
//! rest.

mod acp;
mod adapter;

pub use acp::AcmeAcp;
pub use adapter::{Acme, Lines};
use assay_plugin::Plugin;

fn plugin() -> Plugin {
    Plugin::new().harness(Acme).harness(AcmeAcp)
}

assay_plugin::export!(plugin);
