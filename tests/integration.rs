//! The CLI integration tests, one binary (as ripgrep's and cargo's are): a module per area,
//! each a file beside this one, sharing `support/` (the assay command, the scripted model
//! server, the judge server). Run one area with `cargo test --test integration <area>::`.

#[macro_use]
mod support;

mod acp;
mod acp_records;
mod action;
mod adaptive;
mod agentskills;
mod bmad_adapter;
mod bmad_modes;
mod broken;
mod cache_integrity;
mod cases;
mod claude_code;
mod clauditor_differential;
mod codex;
mod discovery;
mod doctor;
mod engine_setup;
mod formats_defaults;
mod grade;
mod harness_equivalence;
mod history;
mod hostile_text;
mod init;
mod judge;
mod kubernetes;
mod lint;
mod loaders_never_panic;
mod native_plugins;
mod one_skill_repo;
mod optimize;
mod own_suites;
mod packages;
mod plugin_eval;
mod plugin_eval_differential;
mod plugin_eval_mocks;
mod plugins;
mod readme;
mod release;
mod report;
mod routing;
mod run;
mod sandbox;
mod sandbox_attacks;
mod sandbox_attacks_disk;
mod sandbox_attacks_host;
mod sandbox_attacks_logins;
mod sandbox_attacks_records;
mod sandbox_attacks_reports;
mod shards;
mod shell;
mod skill_creator_authors;
mod skill_loads;
mod symlinks;
mod team;
mod trust;
mod uaaps_spec_tests;
mod validate;
mod viewer;
mod watch;
mod x_assay_checks;
