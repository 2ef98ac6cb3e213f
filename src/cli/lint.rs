//! `assay lint`: static checks of skills and their evals (no agent, no judge), each finding
//! with its place, code and fix. Errors exit 2; warnings too with `--strict`.

use clap::Args;
use serde_json::json;

use super::{OutputFormat, Selection, load, print_problems};
use crate::diag::{self, Problem};
use crate::exit::Outcome;
use crate::lint::{self, Options};
use crate::spec::formats::LoadCtx;

#[derive(Debug, Args)]
pub struct LintArgs {
    #[command(flatten)]
    pub selection: Selection,
    /// Fail (exit 2) on warnings too, not only on errors. Findings a project accepts in
    /// assay.toml (`[[lint.allow]]`, with a reason) never fail.
    #[arg(long)]
    pub strict: bool,
    /// The token budget for a SKILL.md body (estimated as characters / 4), over
    /// `[lint] max_tokens` in assay.toml; default 5000, as the Agent Skills specification
    /// recommends.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tokens: Option<u64>,
    /// How to print the findings.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

pub fn run(ctx: &LoadCtx, args: &LintArgs) -> Outcome {
    let loaded = load(ctx, &args.selection);
    let report = lint::lint(
        &ctx.cwd,
        &args.selection.scope(),
        &loaded.suites,
        &Options {
            max_tokens: args.max_tokens,
        },
    );
    // A loader's warning about what a lint finding at its place is about (a repeated trigger
    // query) says the same thing with less: the finding, with its fix, stands for both. Any
    // other warning there is about something else, and stays.
    let said: std::collections::HashSet<(&std::path::Path, (usize, usize), &str)> = report
        .findings
        .iter()
        .filter_map(|f| Some((f.file.as_path(), f.line_col()?, f.code)))
        .collect();
    let load: Vec<Problem> = loaded
        .problems
        .iter()
        .filter(|p| {
            let Some(at) = p.line_col().filter(|_| !p.is_error()) else {
                return true;
            };
            !lint::SAME_AS_LOADER
                .iter()
                .filter(|(loader, _)| *loader == p.code)
                .any(|(_, finding)| said.contains(&(p.file.as_path(), at, *finding)))
        })
        .cloned()
        .collect();
    let mut all: Vec<Problem> = load.clone();
    all.extend(report.findings.iter().cloned());
    let errors = all.iter().filter(|p| p.is_error()).count();
    let warnings = all.len() - errors;
    let failed = errors > 0 || (args.strict && warnings > 0);
    match args.format {
        OutputFormat::Json => {
            let allowed: Vec<serde_json::Value> = report
                .allowed
                .iter()
                .map(|(p, reason)| {
                    let mut v = diag::render_json(std::slice::from_ref(p))[0].clone();
                    v["reason"] = json!(reason);
                    v
                })
                .collect();
            super::print_json(&json!({
                "ok": !failed,
                "summary": {
                    "skills": report.skills,
                    "suites": report.suites,
                    "errors": errors,
                    "warnings": warnings,
                    "allowed": report.allowed.len(),
                },
                "findings": diag::render_json(&all),
                "allowed": allowed,
            }));
        }
        OutputFormat::Text => {
            print_problems(&load);
            for f in &report.findings {
                let kind = if f.is_error() { "error" } else { "warning" };
                say!("{}: {kind}[{}]: {}", f.location(), f.code, f.message);
                if let Some(fix) = &f.help {
                    say!("  fix: {fix}");
                }
            }
            let allowed = match report.allowed.len() {
                0 => String::new(),
                n => format!(", {n} allowed by assay.toml"),
            };
            say!(
                "lint: {} skill(s), {} suite(s): {errors} error(s), {warnings} warning(s){allowed}{}",
                report.skills,
                report.suites,
                if args.strict && warnings > 0 && errors == 0 {
                    " (--strict: warnings fail)"
                } else {
                    ""
                }
            );
        }
    }
    if failed {
        Outcome::BadInput
    } else {
        Outcome::Success
    }
}
