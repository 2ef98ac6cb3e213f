//! `assay report <run-dir> --format …`: any report, regenerated from a run folder.

use std::collections::BTreeSet;

use super::{ReportArgs, ReportCommand, ReportDiffArgs, ReportMergeArgs, ReportTrendArgs};
use crate::exit::Exit;
use crate::formats::LoadCtx;
use crate::record::layout;
use crate::report;
use crate::report::history::{Fingerprint, incomparable};
use crate::text::{printable, printable_json};

fn read(ctx: &LoadCtx, dir: &std::path::Path) -> Result<report::Report, Exit> {
    let dir = ctx.cwd.join(dir);
    match report::read(&dir) {
        Ok(mut r) => {
            r.dir = ctx.shown(&dir);
            Ok(r)
        }
        Err(e) => {
            tell!("error: {e}");
            Err(Exit::BadInput)
        }
    }
}

/// One side of a diff: a run folder (with what makes it comparable), or a UAAPS report file.
fn side(
    ctx: &LoadCtx,
    path: &std::path::Path,
) -> Result<(report::diff::Side, BTreeSet<Fingerprint>), Exit> {
    let full = ctx.cwd.join(path);
    if full.is_file() {
        return report::uaaps::read(&full, &ctx.shown(&full).display().to_string())
            .map(|s| (s, BTreeSet::new()))
            .map_err(|e| {
                tell!("error: {e}");
                Exit::BadInput
            });
    }
    read(ctx, path).map(|r| (report::diff::Side::from(&r), fingerprints(&r)))
}

/// The harnesses, models and agent CLI versions a run's case-runs used.
fn fingerprints(r: &report::Report) -> BTreeSet<Fingerprint> {
    r.case_runs
        .iter()
        .filter(|c| !c.harness.is_empty())
        .map(|c| Fingerprint {
            harness: c.harness.clone(),
            model: c.model.clone(),
            agent_version: r.config.harnesses.get(&c.harness).cloned(),
        })
        .collect()
}

fn diff(ctx: &LoadCtx, args: &ReportDiffArgs) -> Exit {
    let ((a, fa), (b, fb)) = match (side(ctx, &args.before), side(ctx, &args.after)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(o), _) | (_, Err(o)) => return o,
    };
    if !args.cross && !fa.is_empty() && !fb.is_empty() && fa != fb {
        let both: BTreeSet<Fingerprint> = fa.union(&fb).cloned().collect();
        if let Some(why) = incomparable(&both) {
            tell!("error: not comparable: {why}");
            tell!("  fix: compare runs made the same way, or pass --cross to compare them anyway");
            return Exit::BadInput;
        }
    }
    let d = report::diff::diff(&a, &b);
    if args.json {
        super::print_json(&d);
    } else {
        print!("{}", printable(&report::diff::render_text(&d)));
    }
    if d.has_regressions() {
        Exit::Failed
    } else {
        Exit::Success
    }
}

fn merge(ctx: &LoadCtx, args: &ReportMergeArgs) -> Exit {
    let runs: Vec<_> = args.runs.iter().map(|r| ctx.cwd.join(r)).collect();
    let out = ctx.cwd.join(&args.output_dir);
    match report::merge::merge(&runs, &out) {
        Ok(m) => {
            say!(
                "merged {} case-run(s) from {} run folder(s) into {}",
                m.case_runs,
                runs.len(),
                ctx.shown(&out).display()
            );
            for w in &m.warnings {
                tell!("warning: {w}");
            }
            if let Some(slices) = &m.slices {
                for (k, planned) in &slices.missing {
                    tell!(
                        "missing: shard {k}/{} was not given; its {} case-run(s) are missing in the merged run",
                        slices.count,
                        planned.len()
                    );
                }
            }
            if m.missing > 0 {
                tell!(
                    "incomplete: {} planned case-run(s) were not recorded (they show as missing; exit 3)",
                    m.missing
                );
                return Exit::Infrastructure;
            }
            Exit::Success
        }
        Err(e @ report::merge::MergeError::Io { .. }) => {
            tell!("error: {e}");
            Exit::Infrastructure
        }
        Err(e) => {
            tell!("error: {e}");
            Exit::BadInput
        }
    }
}

/// The history's lines, and how many could not be read.
fn history(
    ctx: &LoadCtx,
    args: &ReportTrendArgs,
) -> Result<Vec<crate::record::history::HistoryLine>, Exit> {
    let file = ctx.cwd.join(&args.history);
    let (lines, bad) = crate::record::history::read(&file).map_err(|e| {
        tell!("error: cannot read {}: {e}", ctx.shown(&file).display());
        Exit::Infrastructure
    })?;
    if bad > 0 {
        tell!(
            "warning: {bad} line(s) of {} could not be read and are left out",
            ctx.shown(&file).display()
        );
    }
    if lines.is_empty() {
        tell!(
            "error: no history in {}: `assay run` appends to it when a run ends",
            ctx.shown(&file).display()
        );
        return Err(Exit::BadInput);
    }
    Ok(lines)
}

/// Refuses runs made differently, unless `--cross`.
fn comparable(
    lines: &[crate::record::history::HistoryLine],
    runs: &[String],
    cross: bool,
) -> Result<(), Exit> {
    let prints: BTreeSet<Fingerprint> = lines
        .iter()
        .filter(|l| runs.contains(&l.run) && l.variant == "skill")
        .map(Fingerprint::of)
        .collect();
    match incomparable(&prints) {
        Some(why) if !cross => {
            tell!("error: not comparable: {why}");
            tell!("  fix: --last fewer runs, or pass --cross to compare them anyway");
            Err(Exit::BadInput)
        }
        Some(why) => {
            tell!("note: {why} (compared anyway: --cross)");
            Ok(())
        }
        None => Ok(()),
    }
}

fn trend(ctx: &LoadCtx, args: &ReportTrendArgs) -> Exit {
    let lines = match history(ctx, args) {
        Ok(l) => l,
        Err(o) => return o,
    };
    let t = report::history::trend(&lines, args.last as usize);
    if let Err(o) = comparable(&lines, &t.runs, args.cross) {
        return o;
    }
    if args.json {
        super::print_json(&t);
    } else {
        print!(
            "{}",
            crate::text::for_terminal(&report::history::render_trend(&t))
        );
    }
    Exit::Success
}

fn audit(ctx: &LoadCtx, args: &ReportTrendArgs) -> Exit {
    let lines = match history(ctx, args) {
        Ok(l) => l,
        Err(o) => return o,
    };
    let runs = report::history::trend(&lines, args.last as usize).runs;
    if let Err(o) = comparable(&lines, &runs, args.cross) {
        return o;
    }
    let mut reports = Vec::new();
    let mut hashes = Vec::new();
    for run in &runs {
        match read(ctx, std::path::Path::new(run)) {
            Ok(r) => {
                reports.push(r);
                hashes.push(
                    lines
                        .iter()
                        .filter(|l| l.run == *run)
                        .filter_map(|l| Some((l.suite.clone(), l.suite_hash.clone()?)))
                        .collect(),
                );
            }
            Err(_) => tell!("warning: {run} is left out (see above)"),
        }
    }
    let a = report::audit::audit(&reports, &hashes);
    if args.json {
        super::print_json(&a);
    } else {
        print!("{}", crate::text::for_terminal(&report::audit::render(&a)));
    }
    Exit::Success
}

/// An optimisation folder (`optimize.json`, no `run.json`): its HTML view, or its record.
fn optimisation(ctx: &LoadCtx, dir: &std::path::Path, args: &ReportArgs) -> Exit {
    let rec = match crate::optimize::load(dir) {
        Ok(r) => r,
        Err(e) => {
            tell!("error: {e}");
            return Exit::BadInput;
        }
    };
    if args.against.is_some() {
        tell!(
            "error: --against compares run folders; {} is an optimisation folder",
            ctx.shown(dir).display()
        );
        return Exit::BadInput;
    }
    let text = match args.format {
        report::Reporter::Html => {
            let skill = std::fs::read_to_string(&rec.file).ok();
            crate::optimize::html::render(&rec, skill.as_deref())
        }
        report::Reporter::Json => serde_json::to_string_pretty(&rec).unwrap_or_default() + "\n",
        _ => {
            tell!(
                "error: {} is an optimisation folder: its reports are --format html (the page) and --format json (optimize.json)",
                ctx.shown(dir).display()
            );
            return Exit::BadInput;
        }
    };
    emit(ctx, args, &text)
}

/// A report to `--output`, else to stdout: JSON as JSON (its escapes are fit for a
/// terminal); the other formats hold no control characters but newlines and tabs, so what
/// prints is what a file would hold.
fn emit(ctx: &LoadCtx, args: &ReportArgs, text: &str) -> Exit {
    match &args.output {
        Some(path) => {
            let path = ctx.cwd.join(path);
            if let Err(e) = crate::record::write_atomic(&path, text.as_bytes()) {
                tell!("error: {}: {e}", path.display());
                return Exit::Infrastructure;
            }
        }
        None if matches!(
            args.format,
            report::Reporter::Json | report::Reporter::Uaaps
        ) =>
        {
            print!("{}", printable_json(text))
        }
        None => print!("{}", printable(text)),
    }
    Exit::Success
}

pub fn run(ctx: &LoadCtx, args: &ReportArgs) -> Exit {
    match &args.command {
        Some(ReportCommand::Diff(d)) => return diff(ctx, d),
        Some(ReportCommand::Merge(m)) => return merge(ctx, m),
        Some(ReportCommand::Trend(t)) => return trend(ctx, t),
        Some(ReportCommand::Audit(t)) => return audit(ctx, t),
        None => {}
    }
    let Some(run_dir) = &args.run_dir else {
        tell!("error: give a run folder (assay report <run-dir>), or `assay report diff <a> <b>`");
        return Exit::BadInput;
    };
    let dir = ctx.cwd.join(run_dir);
    if !dir.join(layout::RUN_JSON).exists() && dir.join(layout::OPTIMIZE_JSON).is_file() {
        return optimisation(ctx, &dir, args);
    }
    let r = match report::read(&dir) {
        Ok(mut r) => {
            r.dir = ctx.shown(&dir);
            r
        }
        Err(e) => {
            tell!("error: {e}");
            return Exit::BadInput;
        }
    };
    for w in &r.warnings {
        tell!("warning: {w}");
    }
    let text = match &args.against {
        None => report::render(&r, args.format),
        Some(older) if args.format == report::Reporter::Html => match read(ctx, older) {
            Ok(o) => report::html::render_against(&r, Some(&o)),
            Err(o) => return o,
        },
        Some(_) => {
            tell!("error: --against shows an older run beside this one in the HTML report only");
            tell!("  fix: add --format html, or use `assay report diff <older> <run>`");
            return Exit::BadInput;
        }
    };
    let written = emit(ctx, args, &text);
    if written != Exit::Success {
        return written;
    }
    if let Some(n) = report::missing_notice(&r.summary) {
        // A run that did not record all it planned is never a success.
        tell!("error: {n}");
        return Exit::Infrastructure;
    }
    Exit::Success
}
