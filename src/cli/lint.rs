//! `assay lint`: static checks of skills and their evals (no agent, no judge), each finding
//! with its place, code and fix. Errors exit 2; warnings too with `--strict`.

use clap::Args;

use super::{OutputFormat, Selection, load, print_problems};
use crate::exit::Exit;
use crate::formats::LoadCtx;
use crate::lint::counted::Counted;
use crate::lint::{self, LintOptions};

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

pub fn run(ctx: &LoadCtx, args: &LintArgs) -> Exit {
    let loaded = load(ctx, &args.selection);
    let report = lint::lint(
        &ctx.cwd,
        &args.selection.scope(),
        &loaded.suites,
        &LintOptions {
            max_tokens: args.max_tokens,
        },
    );
    let counted = lint::counted::count(&report, &loaded.problems, args.strict);
    match args.format {
        OutputFormat::Json => super::print_json(&counted.json(&report)),
        OutputFormat::Text => print_text(args, &report, &counted),
    }
    if counted.failed {
        Exit::BadInput
    } else {
        Exit::Success
    }
}

/// The loader's problems, each finding with its fix, and the counts.
fn print_text(args: &LintArgs, report: &lint::Findings, v: &Counted) {
    print_problems(&v.load);
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
    let (errors, warnings) = (v.errors, v.warnings);
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
