//! Finding eval files under some paths, deciding which format each is, and loading them all.
//!
//! The walk never enters `.git`, `node_modules`, `target`, virtualenvs, build output or what
//! `.gitignore` excludes. Each found file is taken for exactly one format by its name (and, for
//! Skillet's free-form YAML names, a look at its top-level keys); loading then runs in parallel.

pub use crate::spec::root::project_root;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::diag::{self, Problem};
use crate::spec::formats::bmad::find as bmad;
use crate::spec::formats::{self, LoadCtx};
use crate::spec::{Format, Loaded, paths, skill};

pub use crate::spec::paths::{SKIPPED_DIRS, is_skipped_dir};

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

/// One unit of loading work.
#[derive(Debug)]
enum Job {
    Bmad(formats::bmad::Input),
    Clauditor {
        file: PathBuf,
        root: PathBuf,
    },
    Uaaps {
        root: PathBuf,
    },
    UaapsTests {
        dir: PathBuf,
        root: PathBuf,
    },
    Skillet {
        files: Vec<PathBuf>,
        scan_root: PathBuf,
        /// The project these evals run in, when it is not where they are (`~/.skillet/evals/`).
        project: Option<PathBuf>,
    },
}

/// What the walk found, before loading.
#[derive(Debug, Default)]
struct Found {
    skills: BTreeSet<PathBuf>,
    bmad_dirs: BTreeSet<PathBuf>,
    clauditor: BTreeSet<PathBuf>,
    packages: BTreeSet<PathBuf>,
    /// `evals/eval-config.json` files the user named that are in no UAAPS package.
    not_packages: BTreeSet<PathBuf>,
    tests_dirs: BTreeSet<PathBuf>,
    yaml: BTreeSet<PathBuf>,
    /// YAML files the user named: Skillet evals, whatever their keys look like.
    named_yaml: BTreeSet<PathBuf>,
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
        match bmad_job_for_flags(
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
    if defaulted && let Some(job) = skillet_home_job(ctx) {
        jobs.push(job);
    }

    for path in &scan {
        if !path.exists() {
            out.problems.push(Problem::error(
                "not-found",
                &ctx.shown(path),
                "no such file or folder",
            ));
            continue;
        }
        let mut found = Found::default();
        if path.is_file() {
            if !classify_file(path, &mut found, true) {
                out.problems.push(
                    Problem::error("unknown-format", &ctx.shown(path), "not an eval file of any format assay reads")
                        .help("assay reads evals.json/triggers.json (BMAD), *.eval.json (clauditor), Skillet *.yaml, and UAAPS eval-config.json/test-config.json"),
                );
            }
        } else {
            walk(path, &mut found);
        }
        jobs.extend(plan(ctx, path, found, &mut out.problems));
    }

    let loaded: Vec<Loaded> = jobs.into_par_iter().map(|job| run_job(ctx, job)).collect();
    for l in loaded {
        out.extend(l);
    }
    dedupe_suites(ctx, &mut out);
    for suite in &mut out.suites {
        crate::spec::routing::resolve(suite);
    }
    out.suites
        .sort_by(|a, b| (&a.source, &a.id).cmp(&(&b.source, &b.id)));
    diag::sort(&mut out.problems);
    out.problems
        .dedup_by(|a, b| a.file == b.file && a.span == b.span && a.message == b.message);
    out
}

fn run_job(ctx: &LoadCtx, job: Job) -> Loaded {
    match job {
        Job::Bmad(input) => formats::bmad::load(ctx, &input),
        Job::Clauditor { file, root } => formats::clauditor::load(ctx, &file, &root),
        Job::Uaaps { root } => formats::uaaps::load(ctx, &root),
        Job::UaapsTests { dir, root } => formats::uaaps::deterministic::load(ctx, &dir, &root),
        Job::Skillet {
            files,
            scan_root,
            project,
        } => formats::skillet::load(ctx, &files, &scan_root, &|dir: &Path| match &project {
            Some(p) => p.clone(),
            None => project_root(dir, &scan_root),
        }),
    }
}

/// Skillet's default folder, `~/.skillet/evals/`, when it exists: searched (for Skillet evals
/// only) besides the project when no path is given, as Skillet looks there by default. Its
/// evals run in the project, as Skillet runs them where it is started. Left out when the
/// working folder is inside it or holds it (the walk of the project already covers it).
fn skillet_home_job(ctx: &LoadCtx) -> Option<Job> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    let dir = paths::normalize_abs(&PathBuf::from(home).join(".skillet/evals"));
    if !dir.is_dir() || dir.starts_with(&ctx.cwd) || ctx.cwd.starts_with(&dir) {
        return None;
    }
    let mut found = Found::default();
    walk(&dir, &mut found);
    let files: Vec<PathBuf> = found
        .yaml
        .into_iter()
        .filter(|p| std::fs::read(p).is_ok_and(|bytes| sniff_skillet(&bytes)))
        .collect();
    (!files.is_empty()).then(|| Job::Skillet {
        files,
        scan_root: dir.clone(),
        project: Some(project_root(&ctx.cwd, &ctx.cwd)),
    })
}

fn walk(dir: &Path, found: &mut Found) {
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
            classify_file(entry.path(), found, false);
        }
    }
}

/// Sorts one file into what it may be. `explicit` is true when the user named the file.
fn classify_file(path: &Path, found: &mut Found, explicit: bool) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let parent_name = parent
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.as_str() {
        "SKILL.md" => {
            found.skills.insert(parent);
        }
        // A `cases.json` of another shape is not BMAD's: left alone.
        "cases.json" if !bmad::is_cases_shape(path) => return false,
        n if bmad::is_eval_file_name(n) => {
            found.bmad_dirs.insert(parent);
        }
        "package.agent.json" => {
            found.packages.insert(parent);
        }
        "eval-config.json" if parent_name == "evals" => {
            let root = parent.parent().unwrap_or(Path::new(""));
            // The manifest is the one file a UAAPS package must have; other tools keep an
            // `evals/eval-config.json` of their own, which a walk leaves alone.
            if in_package(root) {
                found.packages.insert(root.to_path_buf());
            } else if explicit {
                found.not_packages.insert(path.to_path_buf());
            } else {
                return false;
            }
        }
        "test-config.json" if parent_name == "tests" => {
            found.tests_dirs.insert(parent);
        }
        n if n.ends_with(".eval.json") => {
            found.clauditor.insert(path.to_path_buf());
        }
        n if n.ends_with(".yaml") || (explicit && n.ends_with(".yml")) => {
            let owner = (parent_name == "cases").then(|| parent.parent()).flatten();
            match owner {
                // A UAAPS case named on the command line: load its whole package or tests folder.
                Some(o) if explicit && o.join("eval-config.json").is_file() && in_package(o) => {
                    found.packages.insert(o.parent().unwrap_or(o).to_path_buf());
                }
                Some(o) if explicit && o.join("test-config.json").is_file() => {
                    found.tests_dirs.insert(o.to_path_buf());
                }
                _ if explicit => {
                    found.named_yaml.insert(path.to_path_buf());
                }
                _ => {
                    found.yaml.insert(path.to_path_buf());
                }
            }
        }
        _ => return false,
    }
    true
}

/// Whether `dir` is in a UAAPS package: it or a folder above it holds `package.agent.json`.
fn in_package(dir: &Path) -> bool {
    dir.ancestors()
        .any(|a| a.join("package.agent.json").is_file())
}

/// Turns what the walk found into loading jobs.
fn plan(ctx: &LoadCtx, scan_root: &Path, found: Found, problems: &mut Vec<Problem>) -> Vec<Job> {
    let mut jobs = Vec::new();
    let fallback = |p: &Path| project_root(p, scan_root);

    // BMAD: each skill claims its eval folder by the runner's order; unclaimed folders load alone.
    let mut claimed: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    for skill_dir in &found.skills {
        let Some(name) = skill_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
        else {
            continue;
        };
        let grandparent = skill_dir
            .parent()
            .and_then(Path::parent)
            .unwrap_or(scan_root);
        let root = project_root(skill_dir, grandparent);
        let Some((dir, others)) =
            bmad::evals_dir_for(skill_dir, &name, &root, Some(&found.bmad_dirs))
        else {
            continue;
        };
        for other in others {
            problems.push(
                Problem::warning(
                    "ambiguous-evals",
                    &ctx.shown(&other),
                    format!(
                        "also named like skill `{name}`; its evals were taken from {}",
                        ctx.shown(&dir).display()
                    ),
                )
                .help("pass --skill and --evals to choose"),
            );
        }
        if let Some(first) = claimed.get(&dir) {
            problems.push(Problem::warning(
                "ambiguous-skill",
                &ctx.shown(skill_dir),
                format!(
                    "{} is already the eval folder of {}",
                    ctx.shown(&dir).display(),
                    ctx.shown(first).display()
                ),
            ));
            continue;
        }
        claimed.insert(dir.clone(), skill_dir.clone());
        jobs.push(Job::Bmad(bmad_input(
            dir,
            name,
            skill::read(skill_dir),
            root,
        )));
    }
    for dir in &found.bmad_dirs {
        if claimed.contains_key(dir) {
            continue;
        }
        let root = fallback(dir);
        let (name, skill) = unclaimed_skill(dir, &root);
        jobs.push(Job::Bmad(bmad_input(dir.clone(), name, skill, root)));
    }

    for file in found.clauditor {
        let root = fallback(file.parent().unwrap_or(scan_root));
        jobs.push(Job::Clauditor { file, root });
    }

    // UAAPS: evals and deterministic tests of packages.
    for file in &found.not_packages {
        problems.push(
            Problem::error(
                "not-a-package",
                &ctx.shown(file),
                "this eval-config.json is in no UAAPS package: there is no package.agent.json beside its evals/ folder or above it",
            )
            .help("a UAAPS package needs its manifest, package.agent.json, at its root (the folder holding evals/)"),
        );
    }
    let mut package_roots: BTreeSet<PathBuf> = found.packages.clone();
    for root in &found.packages {
        jobs.push(Job::Uaaps { root: root.clone() });
    }
    for dir in &found.tests_dirs {
        let root = dir
            .ancestors()
            .find(|a| a.join("package.agent.json").is_file())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| {
                // `skills/<name>/tests` or `hooks/tests` without a manifest: the folder above them.
                let up = dir.parent().unwrap_or(dir);
                let is_skill = up
                    .parent()
                    .and_then(|p| p.file_name())
                    .is_some_and(|n| n == "skills" || n == "agents");
                if is_skill {
                    up.parent().and_then(Path::parent).unwrap_or(up)
                } else {
                    up.parent().unwrap_or(up)
                }
                .to_path_buf()
            });
        package_roots.insert(root.clone());
        jobs.push(Job::UaapsTests {
            dir: dir.clone(),
            root,
        });
    }

    // Skillet: YAML files that are not UAAPS cases and look like Skillet evals.
    let is_uaaps_yaml = |p: &Path| {
        p.parent()
            .is_some_and(|d| d.file_name().is_some_and(|n| n == "cases"))
            && p.parent().and_then(Path::parent).is_some_and(|d| {
                (d.join("eval-config.json").exists() && in_package(d))
                    || d.join("test-config.json").exists()
                    || package_roots.iter().any(|r| d.starts_with(r))
            })
    };
    let skillet: Vec<PathBuf> = found
        .yaml
        .into_iter()
        .filter(|p| !is_uaaps_yaml(p))
        .filter(|p| !p.components().any(|c| c.as_os_str() == ".github"))
        .filter(|p| std::fs::read(p).is_ok_and(|bytes| sniff_skillet(&bytes)))
        .chain(found.named_yaml)
        .collect();
    if !skillet.is_empty() {
        jobs.push(Job::Skillet {
            files: skillet,
            scan_root: scan_root.to_path_buf(),
            project: None,
        });
    }
    jobs
}

/// The skill of an eval folder that no SKILL.md claimed by the runner's order: the skill whose
/// folder holds it (`<skill>/tests/evals.json`); else the one its file names in `skill_name`,
/// looked for from the folder up to the project root (a root-level `evals/evals.json` pairs
/// with `skills/<name>/` whatever the checkout is called, a plugin's `evals/` with the
/// plugin's `skills/<name>/`); else the folder's name (the name of the folder above, for a
/// folder called `evals`).
fn unclaimed_skill(dir: &Path, root: &Path) -> (String, Option<crate::spec::Skill>) {
    if let Some(skill) = dir.parent().and_then(skill::read) {
        return (skill.name.clone(), Some(skill));
    }
    let declared = bmad::declared_skill_name(&bmad::EvalFiles::in_dir(dir));
    if let Some(name) = &declared {
        let found = dir
            .ancestors()
            .skip(1)
            .take_while(|a| a.starts_with(root))
            .find_map(|a| skill::find_in_project(a, name));
        if let Some(skill) = found {
            return (name.clone(), Some(skill));
        }
    }
    let mut name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name == "evals"
        && let Some(p) = dir.parent().and_then(|p| p.file_name())
    {
        name = p.to_string_lossy().into_owned();
    }
    let skill = skill::find_in_project(root, &name);
    (name, skill)
}

/// Whether a YAML file's bytes look like a Skillet eval. Text that is not UTF-8 is sniffed
/// through a lossy (or, with a byte-order mark, UTF-16) decoding, so a Skillet file saved in
/// another encoding is loaded and refused with a "not UTF-8" error, never skipped in silence.
fn sniff_skillet(bytes: &[u8]) -> bool {
    let utf16 = |be: bool| {
        let units: Vec<u16> = bytes[2..]
            .chunks_exact(2)
            .map(|c| {
                let pair = [c[0], c[1]];
                if be {
                    u16::from_be_bytes(pair)
                } else {
                    u16::from_le_bytes(pair)
                }
            })
            .collect();
        String::from_utf16_lossy(&units)
    };
    let text = match bytes {
        [0xff, 0xfe, ..] => utf16(false),
        [0xfe, 0xff, ..] => utf16(true),
        _ => String::from_utf8_lossy(bytes).into_owned(),
    };
    formats::skillet::looks_like_skillet(&text)
}

fn bmad_input(
    dir: PathBuf,
    skill_name: String,
    skill: Option<crate::spec::Skill>,
    project_root: PathBuf,
) -> formats::bmad::Input {
    let files = bmad::EvalFiles::in_dir(&dir);
    formats::bmad::Input {
        evals_file: files.evals,
        cases_file: files.cases,
        triggers_file: files.triggers,
        dir,
        skill_name,
        skill,
        project_root,
    }
}

/// `--skill` and `--evals`: the BMAD runner's explicit entry.
fn bmad_job_for_flags(
    ctx: &LoadCtx,
    skill_path: Option<PathBuf>,
    evals: Option<PathBuf>,
) -> Result<Vec<Job>, Box<Problem>> {
    let skill = match &skill_path {
        Some(p) => {
            let dir = if p.is_file() {
                p.parent().unwrap_or(p).to_path_buf()
            } else {
                p.clone()
            };
            Some(skill::read(&dir).ok_or_else(|| {
                Box::new(
                    Problem::error("skill-not-found", &ctx.shown(p), "no SKILL.md here")
                        .help("--skill takes the skill's folder (the one holding SKILL.md)"),
                )
            })?)
        }
        None => None,
    };
    let mut jobs = Vec::new();
    if let Some(evals) = evals {
        let (dir, files) = evals_flag_files(ctx, &evals)?;
        // The skill's name; without --skill, the folder's name (or, for a JSON file of
        // another name than the runners' own, the file's stem: `brief.json` is skill `brief`).
        let stem = evals
            .is_file()
            .then(|| evals.file_name().map(|n| n.to_string_lossy().into_owned()))
            .flatten()
            .filter(|n| !bmad::is_eval_file_name(n))
            .and_then(|n| {
                Path::new(&n)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
            });
        let name = skill.as_ref().map(|s| s.name.clone()).unwrap_or_else(|| {
            stem.unwrap_or_else(|| {
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
        });
        let root = project_root(&dir, &ctx.cwd);
        jobs.push(Job::Bmad(formats::bmad::Input {
            dir,
            evals_file: files.evals,
            cases_file: files.cases,
            triggers_file: files.triggers,
            skill_name: name,
            skill,
            project_root: root,
        }));
        return Ok(jobs);
    }
    let skill = skill.expect("one of --skill/--evals is set");
    let grandparent = skill
        .path
        .parent()
        .and_then(Path::parent)
        .unwrap_or(&ctx.cwd)
        .to_path_buf();
    let root = project_root(&skill.path, &grandparent);
    for file in formats::clauditor::specs_of_skill(&skill.path, &skill.name) {
        jobs.push(Job::Clauditor {
            file,
            root: root.clone(),
        });
    }
    match bmad::evals_dir_for(&skill.path, &skill.name, &root, None) {
        Some((dir, _)) => jobs.push(Job::Bmad(bmad_input(
            dir,
            skill.name.clone(),
            Some(skill),
            root,
        ))),
        None if jobs.is_empty() => {
            return Err(Box::new(
                Problem::error(
                    "no-evals",
                    &ctx.shown(&skill.path),
                    format!("no evals found for skill `{}`", skill.name),
                )
                .help("looked in <skill>/evals/, <skill>/../../evals/<name>/, <root>/evals/<name>/ and <root>/evals/**/<name>/"),
            ));
        }
        None => {}
    }
    Ok(jobs)
}

/// `--evals`: a folder of eval files, or one JSON file taken by its name (`evals.json`,
/// `cases.json`, a trigger file) or, under any other name, by its shape.
fn evals_flag_files(
    ctx: &LoadCtx,
    evals: &Path,
) -> Result<(PathBuf, bmad::EvalFiles), Box<Problem>> {
    if !evals.exists() {
        return Err(Box::new(Problem::error(
            "not-found",
            &ctx.shown(evals),
            "no such file or folder",
        )));
    }
    if evals.is_dir() {
        let files = bmad::EvalFiles::in_dir(evals);
        if files.is_empty() {
            return Err(Box::new(Problem::error(
                "not-found",
                &ctx.shown(evals),
                "no evals.json, cases.json or trigger file (triggers.json, trigger-evals.json, …) here",
            )));
        }
        return Ok((evals.to_path_buf(), files));
    }
    let name = evals
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = Some(evals.to_path_buf());
    let files = match name.as_str() {
        "evals.json" => bmad::EvalFiles {
            evals: file,
            ..Default::default()
        },
        "cases.json" => bmad::EvalFiles {
            cases: file,
            ..Default::default()
        },
        n if formats::bmad::TRIGGER_FILES.contains(&n) => bmad::EvalFiles {
            triggers: file,
            ..Default::default()
        },
        // Any other JSON file in one of the runners' shapes, told apart by its content.
        _ if bmad::is_triggers_shape(evals) => bmad::EvalFiles {
            triggers: file,
            ..Default::default()
        },
        _ if bmad::is_cases_shape(evals) => bmad::EvalFiles {
            cases: file,
            ..Default::default()
        },
        _ => bmad::EvalFiles {
            evals: file,
            ..Default::default()
        },
    };
    let dir = evals.parent().unwrap_or(evals).to_path_buf();
    Ok((dir, files))
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
pub fn count_by_format(suites: &[crate::spec::Suite]) -> Vec<(Format, usize)> {
    Format::ALL
        .iter()
        .map(|f| (*f, suites.iter().filter(|s| s.format == *f).count()))
        .filter(|(_, n)| *n > 0)
        .collect()
}
