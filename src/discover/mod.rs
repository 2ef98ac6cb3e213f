//! Finding eval files under some paths and loading them all: the generic part. The walk never
//! enters `.git`, `node_modules`, `target`, virtualenvs, build output or what `.gitignore`
//! excludes; each file it finds is offered to the formats of
//! [`formats::FORMATS`](crate::formats::FORMATS) in order, the first
//! to claim it has it, then each format turns what it claimed into loading jobs, which run in
//! parallel. Which files are a format's, and how, is in that format's folder (`find.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::diag::{self, Problem};
use crate::formats::FORMATS;
use crate::formats::LoadCtx;
use crate::formats::find::{self, Found, Job, Scan};
use crate::suite::{Format, Loaded, paths, skill};

use crate::suite::paths::is_skipped_dir;

/// What to look at.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Files or folders; empty means the working directory.
    pub paths: Vec<PathBuf>,
    /// BMAD: the skill under test (a folder with SKILL.md); its evals are found by BMAD's order.
    pub skill: Option<PathBuf>,
    /// BMAD `--evals`: a folder, or an `evals.json`/`triggers.json` file, taken first.
    pub evals: Option<PathBuf>,
}

/// Discovers and loads every suite under the options' paths.
pub fn discover(ctx: &LoadCtx, opts: &Options) -> Loaded {
    let mut out = Loaded::default();
    let abs = |p: &Path| {
        let joined = ctx.cwd.join(p);
        paths::normalize_abs(&joined)
    };

    let mut jobs = Vec::new();
    if opts.skill.is_some() || opts.evals.is_some() {
        match flag_jobs(
            ctx,
            opts.skill.as_deref().map(abs),
            opts.evals.as_deref().map(abs),
        ) {
            Ok(mut j) => jobs.append(&mut j),
            Err(p) => out.problems.push(*p),
        }
    }
    let defaulted = opts.paths.is_empty() && jobs.is_empty() && opts.skill.is_none();
    let scan: Vec<PathBuf> = if defaulted {
        vec![ctx.cwd.clone()]
    } else {
        opts.paths.iter().map(|p| abs(p)).collect()
    };
    if defaulted {
        for finder in FORMATS {
            jobs.extend(finder.home(ctx, &walk_files));
        }
    }
    for path in &scan {
        jobs.extend(scan_jobs(ctx, path, &mut out.problems));
    }

    let loaded: Vec<Loaded> = jobs.into_par_iter().map(|job| job(ctx)).collect();
    for l in loaded {
        out.extend(l);
    }
    dedupe_suites(ctx, &mut out);
    for suite in &mut out.suites {
        crate::suite::routing::resolve(suite);
    }
    out.suites
        .sort_by(|a, b| (&a.source, &a.id).cmp(&(&b.source, &b.id)));
    diag::sort(&mut out.problems);
    out.problems
        .dedup_by(|a, b| a.file == b.file && a.span == b.span && a.message == b.message);
    out
}

/// The loading jobs of one path the user gave (or the working folder): a file the formats
/// must claim, or a folder walked.
fn scan_jobs(ctx: &LoadCtx, path: &Path, problems: &mut Vec<Problem>) -> Vec<Job> {
    if !path.exists() {
        problems.push(Problem::error(
            "not-found",
            &ctx.shown(path),
            "no such file or folder",
        ));
        return Vec::new();
    }
    let mut found = Found::default();
    if path.is_file() {
        if !find::claim(path, true, &mut found) {
            problems.push(
                Problem::error(
                    "unknown-format",
                    &ctx.shown(path),
                    "not an eval file of any format assay reads",
                )
                .help(format!("assay reads {}", readable())),
            );
        }
    } else {
        walk(path, &mut |file| {
            find::claim(file, false, &mut found);
        });
    }
    let mut scan = Scan::new(path, found);
    let jobs = scan.plan(ctx);
    problems.append(&mut scan.problems);
    jobs
}

/// What every format reads, as a list in words.
fn readable() -> String {
    let reads: Vec<&str> = FORMATS.iter().map(|f| f.reads()).collect();
    match reads.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{}, and {last}", rest.join(", ")),
        _ => reads.concat(),
    }
}

/// The files under `dir`, as the walk finds them.
fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    walk(dir, &mut |file| files.push(file.to_path_buf()));
    files
}

fn walk(dir: &Path, visit: &mut dyn FnMut(&Path)) {
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .git_global(false)
        .require_git(false)
        .filter_entry(|e| {
            !(e.file_type().is_some_and(|t| t.is_dir())
                && e.depth() > 0
                && is_skipped_dir(&e.file_name().to_string_lossy()))
        })
        .build();
    for entry in walker.flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            visit(entry.path());
        }
    }
}

/// `--skill` and `--evals`: the runners' explicit entry. With `--evals`, the first format
/// that takes it; with `--skill` alone, every format's evals of the skill.
fn flag_jobs(
    ctx: &LoadCtx,
    skill_path: Option<PathBuf>,
    evals: Option<PathBuf>,
) -> Result<Vec<Job>, Box<Problem>> {
    let skill = skill_path.map(|p| read_skill(ctx, &p)).transpose()?;
    if let Some(evals) = evals {
        return FORMATS
            .iter()
            .find_map(|f| f.of_evals(ctx, &evals, skill.as_ref()))
            .unwrap_or_else(|| {
                Err(Box::new(Problem::error(
                    "unknown-format",
                    &ctx.shown(&evals),
                    "no format assay reads takes --evals",
                )))
            });
    }
    let skill = skill.expect("one of --skill/--evals is set");
    let root = crate::suite::root::skill_project_root(&skill.path, &ctx.cwd);
    let jobs: Vec<Job> = FORMATS
        .iter()
        .flat_map(|f| f.of_skill(&skill, &root))
        .collect();
    if jobs.is_empty() {
        let places: Vec<&str> = FORMATS.iter().filter_map(|f| f.skill_places()).collect();
        return Err(Box::new(
            Problem::error(
                "no-evals",
                &ctx.shown(&skill.path),
                format!("no evals found for skill `{}`", skill.name),
            )
            .help(format!("looked in {}", places.join("; "))),
        ));
    }
    Ok(jobs)
}

/// `--skill`: the skill's folder (or its SKILL.md).
fn read_skill(ctx: &LoadCtx, path: &Path) -> Result<crate::suite::Skill, Box<Problem>> {
    let dir = if path.is_file() {
        path.parent().unwrap_or(path)
    } else {
        path
    };
    skill::read(dir).ok_or_else(|| {
        Box::new(
            Problem::error("skill-not-found", &ctx.shown(path), "no SKILL.md here")
                .help("--skill takes the skill's folder (the one holding SKILL.md)"),
        )
    })
}

/// Gives suites that share an id (say, two specs for skills of the same name) ids that
/// include their source path.
fn dedupe_suites(_ctx: &LoadCtx, out: &mut Loaded) {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for s in &out.suites {
        *counts.entry(s.id.clone()).or_default() += 1;
    }
    for s in &mut out.suites {
        if counts[&s.id] > 1 {
            s.id = format!("{}:{}", s.format, s.source.display());
        }
    }
}

/// Suites per format, for summaries.
pub fn count_by_format(suites: &[crate::suite::Suite]) -> Vec<(Format, usize)> {
    Format::ALL
        .iter()
        .map(|f| (*f, suites.iter().filter(|s| s.format == *f).count()))
        .filter(|(_, n)| *n > 0)
        .collect()
}
