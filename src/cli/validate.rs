//! `assay validate`: load everything, report every problem.

use serde_json::json;

use super::{OutputFormat, ValidateArgs, load, print_problems};
use crate::diag;
use crate::discover::count_by_format;
use crate::exit::Exit;
use crate::formats::LoadCtx;
use crate::suite::Suite;
use crate::text::printable;

pub fn run(ctx: &LoadCtx, args: &ValidateArgs) -> Exit {
    let loaded = load(ctx, &args.selection);
    let failed = loaded.problems.iter().any(|p| p.is_error());
    let outcome = if failed {
        Exit::BadInput
    } else {
        Exit::Success
    };
    let totals = Totals::of(&loaded.suites);
    match args.format {
        OutputFormat::Json => {
            let doc = json!({
                "ok": !failed,
                "summary": {
                    "suites": loaded.suites.len(),
                    "by_format": count_by_format(&loaded.suites)
                        .into_iter()
                        .map(|(f, n)| (f.name().to_string(), json!(n)))
                        .collect::<serde_json::Map<_, _>>(),
                    "cases": totals.cases,
                    "trigger_cases": totals.triggers,
                    "checks": totals.checks,
                },
                "suites": loaded.suites.iter().map(|s| json!({
                    "id": s.id,
                    "format": s.format,
                    "source": s.source,
                    "skill": s.skill.as_ref().map(|k| &k.name),
                    "cases": s.cases.len(),
                    "trigger_cases": s.triggers.len(),
                    "checks": s.check_count(),
                })).collect::<Vec<_>>(),
                "problems": diag::render_json(&loaded.problems),
            });
            super::print_json(&doc);
        }
        OutputFormat::Text => {
            print_problems(&loaded.problems);
            if !failed {
                print!("{}", printable(&render_summary(&loaded.suites)));
            }
        }
    }
    outcome
}

struct Totals {
    cases: usize,
    triggers: usize,
    checks: usize,
}

impl Totals {
    fn of(suites: &[Suite]) -> Self {
        Totals {
            cases: suites.iter().map(|s| s.cases.len()).sum(),
            triggers: suites.iter().map(|s| s.triggers.len()).sum(),
            checks: suites.iter().map(Suite::check_count).sum(),
        }
    }
}

/// One line per suite naming the format it was read as, then the totals.
pub fn render_summary(suites: &[Suite]) -> String {
    let mut out = String::new();
    let width = suites
        .iter()
        .map(|s| s.source.display().to_string().len())
        .max()
        .unwrap_or(0);
    // The format's column: 12 wide, or one more than the longest name listed.
    let fw = suites
        .iter()
        .map(|s| s.format.name().len() + 1)
        .max()
        .unwrap_or(0)
        .max(12);
    for s in suites {
        out.push_str(&format!(
            "{:<fw$}{:<width$}  {} case{}, {} trigger{}, {} check{}\n",
            s.format.name(),
            s.source.display().to_string(),
            s.cases.len(),
            if s.cases.len() == 1 { "" } else { "s" },
            s.triggers.len(),
            if s.triggers.len() == 1 { "" } else { "s" },
            s.check_count(),
            if s.check_count() == 1 { "" } else { "s" },
        ));
    }
    let t = Totals::of(suites);
    let by_format: Vec<String> = count_by_format(suites)
        .into_iter()
        .map(|(f, n)| format!("{f} {n}"))
        .collect();
    out.push_str(&format!(
        "ok: {} suite{}{}: {} case{}, {} trigger case{}, {} check{}\n",
        suites.len(),
        if suites.len() == 1 { "" } else { "s" },
        if by_format.is_empty() {
            String::new()
        } else {
            format!(" ({})", by_format.join(", "))
        },
        t.cases,
        if t.cases == 1 { "" } else { "s" },
        t.triggers,
        if t.triggers == 1 { "" } else { "s" },
        t.checks,
        if t.checks == 1 { "" } else { "s" },
    ));
    out
}
