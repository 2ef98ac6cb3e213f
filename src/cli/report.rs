//! `assay report <run-dir> --format …`: any report, regenerated from a run folder.

use super::{ReportArgs, ReportCommand, ReportDiffArgs, ReportMergeArgs};
use crate::exit::Outcome;
use crate::report;
use crate::spec::formats::LoadCtx;
use crate::text::{printable, printable_json};

fn read(ctx: &LoadCtx, dir: &std::path::Path) -> Result<report::Report, Outcome> {
    let dir = ctx.cwd.join(dir);
    match report::read(&dir) {
        Ok(mut r) => {
            r.dir = ctx.shown(&dir);
            Ok(r)
        }
        Err(e) => {
            tell!("error: {e}");
            Err(Outcome::BadInput)
        }
    }
}

/// One side of a diff: a run folder, or a UAAPS report file.
fn side(ctx: &LoadCtx, path: &std::path::Path) -> Result<report::diff::Side, Outcome> {
    let full = ctx.cwd.join(path);
    if full.is_file() {
        return report::uaaps::read(&full, &ctx.shown(&full).display().to_string()).map_err(|e| {
            tell!("error: {e}");
            Outcome::BadInput
        });
    }
    read(ctx, path).map(|r| report::diff::Side::from(&r))
}

fn diff(ctx: &LoadCtx, args: &ReportDiffArgs) -> Outcome {
    let (a, b) = match (side(ctx, &args.before), side(ctx, &args.after)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(o), _) | (_, Err(o)) => return o,
    };
    let d = report::diff::diff(&a, &b);
    if args.json {
        super::print_json(&d);
    } else {
        print!("{}", printable(&report::diff::render_text(&d)));
    }
    if d.has_regressions() {
        Outcome::Failed
    } else {
        Outcome::Success
    }
}

fn merge(ctx: &LoadCtx, args: &ReportMergeArgs) -> Outcome {
    let runs: Vec<_> = args.runs.iter().map(|r| ctx.cwd.join(r)).collect();
    let out = ctx.cwd.join(&args.output_dir);
    match report::merge::merge(&runs, &out) {
        Ok(n) => {
            say!(
                "merged {n} case-run(s) from {} run folder(s) into {}",
                runs.len(),
                ctx.shown(&out).display()
            );
            Outcome::Success
        }
        Err(e @ report::merge::MergeError::Io { .. }) => {
            tell!("error: {e}");
            Outcome::Infrastructure
        }
        Err(e) => {
            tell!("error: {e}");
            Outcome::BadInput
        }
    }
}

pub fn run(ctx: &LoadCtx, args: &ReportArgs) -> Outcome {
    match &args.command {
        Some(ReportCommand::Diff(d)) => return diff(ctx, d),
        Some(ReportCommand::Merge(m)) => return merge(ctx, m),
        None => {}
    }
    let Some(run_dir) = &args.run_dir else {
        tell!("error: give a run folder (assay report <run-dir>), or `assay report diff <a> <b>`");
        return Outcome::BadInput;
    };
    let dir = ctx.cwd.join(run_dir);
    let r = match report::read(&dir) {
        Ok(mut r) => {
            r.dir = ctx.shown(&dir);
            r
        }
        Err(e) => {
            tell!("error: {e}");
            return Outcome::BadInput;
        }
    };
    let text = report::render(&r, args.format);
    match &args.output {
        Some(path) => {
            let path = ctx.cwd.join(path);
            if let Err(e) = crate::record::write_atomic(&path, text.as_bytes()) {
                tell!("error: {}: {e}", path.display());
                return Outcome::Infrastructure;
            }
        }
        // JSON as JSON (its escapes are fit for a terminal); the other formats hold no
        // control characters but newlines and tabs, so what prints is what a file would hold.
        None if matches!(args.format, report::Format::Json | report::Format::Uaaps) => {
            print!("{}", printable_json(&text))
        }
        None => print!("{}", printable(&text)),
    }
    if let Some(n) = report::missing_notice(&r.summary) {
        // A run that did not record all it planned is never a success.
        tell!("error: {n}");
        return Outcome::Infrastructure;
    }
    Outcome::Success
}
