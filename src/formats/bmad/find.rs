//! Finding BMAD (and skill-creator) evals: the eval folders a walk finds, each claimed by a
//! skill the walk found in the BMAD runner's order (from a skill to its eval folder), the
//! others paired with a skill by [`unclaimed_skill`]; and the runner's `--skill`/`--evals`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::Input;
use super::sniff::Sniff;
use super::triggers::{GENERIC_NAMES, TRAIN_FILE, TRIGGER_FILES, VALIDATION_FILE};
use crate::diag::Problem;
use crate::formats::LoadCtx;
use crate::formats::find::{EvalFormat, File, Found, Job, Scan};
use crate::suite::root::{project_root, skill_project_root};
use crate::suite::{Skill, skill};

/// Folders holding a SKILL.md the walk found.
const SKILLS: &str = "bmad:skills";
/// Folders holding eval files the walk found.
const DIRS: &str = "bmad:dirs";
/// BenchFlow's `evals.json` files, named and left alone.
const BENCHFLOW: &str = "bmad:benchflow";

/// BMAD's (and skill-creator's) evals, as discovery finds them.
pub struct Bmad;

impl EvalFormat for Bmad {
    fn dialects(&self) -> &'static [&'static dyn crate::formats::write::Dialect] {
        &[
            &super::write::BmadDialect,
            &super::write::SkillCreator,
            &super::write::BmadCases,
        ]
    }

    fn reads(&self) -> &'static str {
        "evals.json/triggers.json (BMAD)"
    }

    fn claim(&self, file: &File, found: &mut Found) -> bool {
        match file.name.as_str() {
            "SKILL.md" => found.add(SKILLS, file.dir.to_path_buf()),
            // A `cases.json` of another shape is not BMAD's: left alone.
            "cases.json" if !is_cases_shape(file.path) => return false,
            // A dataset's `train_queries.json` is not a trigger set: left alone.
            n if is_another_tools(n, file.path) => return false,
            // BenchFlow's `evals.json` is named, never read as skill-creator's.
            "evals.json" if is_benchflow(file.path) => {
                found.add(BENCHFLOW, file.path.to_path_buf())
            }
            n if is_eval_file_name(n) => found.add(DIRS, file.dir.to_path_buf()),
            _ => return false,
        }
        true
    }

    fn plan(&self, ctx: &LoadCtx, scan: &mut Scan) -> Vec<Job> {
        for file in scan.found.get(BENCHFLOW).clone() {
            scan.problems.push(Problem::warning(
                "benchflow-evals",
                &ctx.shown(&file),
                "this evals.json is BenchFlow's (`cases` with `question`, `ground_truth`, `expected_behavior`), not skill-creator's: a benchmark for BenchFlow's runner, which assay does not read; it is left alone",
            ));
        }
        let (claimed, mut jobs) = claimed_by_skills(ctx, scan);
        for dir in scan.found.get(DIRS) {
            if claimed.contains_key(dir) {
                continue;
            }
            let root = project_root(dir, scan.root);
            let (name, skill) = unclaimed_skill(dir, &root);
            jobs.push(job(input(dir.clone(), name, skill, root)));
        }
        jobs
    }

    fn of_skill(&self, skill: &Skill, root: &Path) -> Vec<Job> {
        evals_dir_for(&skill.path, &skill.name, root, None)
            .map(|(dir, _)| {
                job(input(
                    dir,
                    skill.name.clone(),
                    Some(skill.clone()),
                    root.to_path_buf(),
                ))
            })
            .into_iter()
            .collect()
    }

    fn skill_places(&self) -> Option<&'static str> {
        Some(
            "<skill>/evals/, <skill>/../../evals/<name>/, <root>/evals/<name>/ and <root>/evals/**/<name>/",
        )
    }

    fn of_evals(
        &self,
        ctx: &LoadCtx,
        evals: &Path,
        skill: Option<&Skill>,
    ) -> Option<Result<Vec<Job>, Box<Problem>>> {
        Some(evals_flag_job(ctx, evals, skill).map(|j| vec![j]))
    }
}

fn job(input: Input) -> Job {
    Box::new(move |ctx: &LoadCtx| super::load(ctx, &input))
}

fn input(dir: PathBuf, skill_name: String, skill: Option<Skill>, project_root: PathBuf) -> Input {
    let files = EvalFiles::in_dir(&dir);
    Input {
        evals_file: files.evals,
        cases_file: files.cases,
        triggers_file: files.triggers,
        validation_file: files.validation,
        dir,
        skill_name,
        skill,
        project_root,
    }
}

/// Each skill the walk found claims its eval folder by the runner's order; a folder two skills
/// claim, or a skill whose name several folders carry, is warned about. The claimed folders
/// (to the skill that claimed each) and their jobs.
fn claimed_by_skills(ctx: &LoadCtx, scan: &mut Scan) -> (BTreeMap<PathBuf, PathBuf>, Vec<Job>) {
    let mut claimed: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    let mut jobs = Vec::new();
    for skill_dir in scan.found.get(SKILLS) {
        let Some(name) = skill_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
        else {
            continue;
        };
        let root = skill_project_root(skill_dir, scan.root);
        let Some((dir, others)) =
            evals_dir_for(skill_dir, &name, &root, Some(scan.found.get(DIRS)))
        else {
            continue;
        };
        for other in others {
            scan.problems.push(
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
            scan.problems.push(Problem::warning(
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
        jobs.push(job(input(dir, name, skill::read(skill_dir), root)));
    }
    (claimed, jobs)
}

/// The skill of an eval folder that no SKILL.md claimed by the runner's order: the skill whose
/// folder holds it (`<skill>/tests/evals.json`); else the one its file names in `skill_name`,
/// looked for from the folder up to the project root (a root-level `evals/evals.json` pairs
/// with `skills/<name>/` whatever the checkout is called, a plugin's `evals/` with the
/// plugin's `skills/<name>/`); else the folder's name (the name of the folder above, for a
/// folder called `evals`).
fn unclaimed_skill(dir: &Path, root: &Path) -> (String, Option<Skill>) {
    if let Some(skill) = dir.parent().and_then(skill::read) {
        return (skill.name.clone(), Some(skill));
    }
    let declared = declared_skill_name(&EvalFiles::in_dir(dir));
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

/// `--evals` (with `--skill` or without): the runner's explicit entry.
fn evals_flag_job(ctx: &LoadCtx, evals: &Path, skill: Option<&Skill>) -> Result<Job, Box<Problem>> {
    let (dir, files) = evals_flag_files(ctx, evals)?;
    // The skill's name; without --skill, the folder's name (or, for a JSON file of
    // another name than the runners' own, the file's stem: `brief.json` is skill `brief`).
    let stem = evals
        .is_file()
        .then(|| evals.file_name().map(|n| n.to_string_lossy().into_owned()))
        .flatten()
        .filter(|n| !is_eval_file_name(n))
        .and_then(|n| {
            Path::new(&n)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        });
    let name = skill.map(|s| s.name.clone()).unwrap_or_else(|| {
        stem.unwrap_or_else(|| {
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
    });
    let root = project_root(&dir, &ctx.cwd);
    Ok(job(Input {
        dir,
        evals_file: files.evals,
        cases_file: files.cases,
        triggers_file: files.triggers,
        validation_file: files.validation,
        skill_name: name,
        skill: skill.cloned(),
        project_root: root,
    }))
}

/// `--evals`: a folder of eval files, or one JSON file taken by its name (`evals.json`,
/// `cases.json`, a trigger file) or, under any other name, by its shape.
fn evals_flag_files(ctx: &LoadCtx, evals: &Path) -> Result<(PathBuf, EvalFiles), Box<Problem>> {
    if !evals.exists() {
        return Err(Box::new(Problem::error(
            "not-found",
            &ctx.shown(evals),
            "no such file or folder",
        )));
    }
    if evals.is_dir() {
        let files = EvalFiles::in_dir(evals);
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
        "evals.json" => EvalFiles {
            evals: file,
            ..Default::default()
        },
        "cases.json" => EvalFiles {
            cases: file,
            ..Default::default()
        },
        n if TRIGGER_FILES.contains(&n) => EvalFiles {
            validation: validation_beside(evals),
            triggers: file,
            ..Default::default()
        },
        // Any other JSON file in one of the runners' shapes, told apart by its content.
        _ if is_triggers_shape(evals) => EvalFiles {
            triggers: file,
            ..Default::default()
        },
        _ if is_cases_shape(evals) => EvalFiles {
            cases: file,
            ..Default::default()
        },
        _ => EvalFiles {
            evals: file,
            ..Default::default()
        },
    };
    let dir = evals.parent().unwrap_or(evals).to_path_buf();
    Ok((dir, files))
}

/// The eval files of one folder, by the names the BMAD runner and skill-creator give them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EvalFiles {
    pub evals: Option<PathBuf>,
    pub cases: Option<PathBuf>,
    pub triggers: Option<PathBuf>,
    /// `validation_queries.json`, when the trigger file is `train_queries.json` beside it.
    pub validation: Option<PathBuf>,
}

impl EvalFiles {
    /// The eval files in `dir`: `evals.json`, a `cases.json` in the runner's cases shape, the
    /// first trigger file by [`TRIGGER_FILES`]' order, and the validation set beside it.
    pub fn in_dir(dir: &Path) -> Self {
        let file = |n: &str| Some(dir.join(n)).filter(|p| p.is_file());
        let triggers = TRIGGER_FILES
            .iter()
            .find_map(|n| file(n).filter(|p| !is_another_tools(n, p)));
        EvalFiles {
            evals: file("evals.json").filter(|p| !is_benchflow(p)),
            cases: file("cases.json").filter(|p| is_cases_shape(p)),
            validation: triggers.as_deref().and_then(validation_beside),
            triggers,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.evals.is_none() && self.cases.is_none() && self.triggers.is_none()
    }
}

/// agentskills.io's validation set beside a trigger file that is its training set
/// (`train_queries.json`), when there is one.
pub fn validation_beside(triggers: &Path) -> Option<PathBuf> {
    if triggers.file_name()? != TRAIN_FILE {
        return None;
    }
    Some(triggers.with_file_name(VALIDATION_FILE)).filter(|p| p.is_file())
}

/// Whether a folder holds BMAD (or skill-creator) eval files.
pub fn has_eval_files(dir: &Path) -> bool {
    !EvalFiles::in_dir(dir).is_empty()
}

/// Whether a file name is one of a skill's eval files (a `cases.json` still needs its shape).
pub fn is_eval_file_name(name: &str) -> bool {
    name == "evals.json" || name == "cases.json" || TRIGGER_FILES.contains(&name)
}

/// Whether a JSON file given to `--evals` is in the shape of `triggers.json` (a list of
/// objects with `query`) rather than `evals.json` (an object with `evals`, or a bare list of
/// evals). A file that does not parse is taken for evals, so the loader reports its error.
pub fn is_triggers_shape(file: &Path) -> bool {
    Sniff::of(file).is_some_and(|s| s.is_triggers())
}

/// Whether a file under one of the generic trigger names ([`GENERIC_NAMES`]) is another
/// tool's: JSON, but not in a trigger set's shape.
fn is_another_tools(name: &str, file: &Path) -> bool {
    GENERIC_NAMES.contains(&name) && Sniff::of(file).is_some_and(|s| !s.is_triggers())
}

/// BenchFlow's `evals.json` ([`Sniff::is_benchflow`]).
pub fn is_benchflow(file: &Path) -> bool {
    Sniff::of(file).is_some_and(|s| s.is_benchflow())
}

/// Whether a file is in the current BMAD runner's cases shape: an object with `cases`, or a
/// list whose first object has `input` (a `cases.json` of any other shape is not BMAD's and is
/// left alone).
pub fn is_cases_shape(file: &Path) -> bool {
    Sniff::of(file).is_some_and(|s| s.is_cases())
}

/// The skill an evals, cases or trigger file says it is for (`skill_name`), when it says one.
pub fn declared_skill_name(files: &EvalFiles) -> Option<String> {
    [&files.evals, &files.cases, &files.triggers]
        .into_iter()
        .flatten()
        .find_map(|f| Sniff::of(f)?.skill_name().map(str::to_string))
        .filter(|n| {
            !n.trim().is_empty()
                && !n.contains(['/', '\\'])
                && !n.chars().any(char::is_control)
                && n != "."
                && n != ".."
        })
}

/// Where a skill's evals are, by the BMAD order (after `--evals`): `<skill>/evals/`,
/// `<skill>/../../evals/<name>/`, `<root>/evals/<name>/`, then any `<root>/evals/**/<name>/`.
/// The fuzzy step takes the first match in sorted order and also returns the others.
///
/// `known` lists eval folders a walk already found; without it the fuzzy step walks
/// `<root>/evals/` itself.
pub fn evals_dir_for(
    skill: &Path,
    name: &str,
    root: &Path,
    known: Option<&BTreeSet<PathBuf>>,
) -> Option<(PathBuf, Vec<PathBuf>)> {
    let ordered = [
        skill.join("evals"),
        skill.join("../../evals").join(name),
        root.join("evals").join(name),
    ];
    if let Some(d) = ordered.iter().find(|d| has_eval_files(d)) {
        return Some((crate::suite::paths::normalize_abs(d), Vec::new()));
    }
    let evals_root = root.join("evals");
    let named = |d: &PathBuf| d.file_name().is_some_and(|n| n == name);
    let mut found: Vec<PathBuf> = match known {
        Some(known) => known
            .iter()
            .filter(|d| named(d) && d.starts_with(&evals_root))
            .cloned()
            .collect(),
        None => walkdir(&evals_root, 12)
            .into_iter()
            .filter(|d| named(d) && has_eval_files(d))
            .collect(),
    };
    found.sort();
    if found.is_empty() {
        return None;
    }
    let first = found.remove(0);
    Some((first, found))
}

/// Folders under `dir`, to a bounded depth, skipping the usual heavy ones.
fn walkdir(dir: &Path, depth: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, level)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir())
                && !crate::suite::paths::is_skipped_dir(&e.file_name().to_string_lossy())
            {
                out.push(p.clone());
                if level + 1 < depth {
                    stack.push((p, level + 1));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for f in files {
            std::fs::write(
                d.path().join(f),
                r#"[{"query": "q", "should_trigger": true}]"#,
            )
            .unwrap();
        }
        d
    }

    #[test]
    fn the_validation_set_is_taken_beside_its_training_set_only() {
        let d = folder(&[TRAIN_FILE, VALIDATION_FILE]);
        let files = EvalFiles::in_dir(d.path());
        assert_eq!(files.triggers, Some(d.path().join(TRAIN_FILE)));
        assert_eq!(files.validation, Some(d.path().join(VALIDATION_FILE)));
        // `--evals train_queries.json` (and `optimize --queries`) take it too.
        let ctx = LoadCtx::new(d.path());
        let (_, given) = evals_flag_files(&ctx, &d.path().join(TRAIN_FILE)).unwrap();
        assert_eq!(given, files);
        // Beside another trigger set, or alone, it is not a holdout.
        let d = folder(&["triggers.json", TRAIN_FILE, VALIDATION_FILE]);
        let files = EvalFiles::in_dir(d.path());
        assert_eq!(files.triggers, Some(d.path().join("triggers.json")));
        assert_eq!(files.validation, None);
        let d = folder(&[VALIDATION_FILE]);
        assert!(EvalFiles::in_dir(d.path()).is_empty());
        assert!(!is_eval_file_name(VALIDATION_FILE));
        // `--evals validation_queries.json` runs it as a trigger set of its own.
        let ctx = LoadCtx::new(d.path());
        let (_, given) = evals_flag_files(&ctx, &d.path().join(VALIDATION_FILE)).unwrap();
        assert_eq!(given.triggers, Some(d.path().join(VALIDATION_FILE)));
        assert_eq!(given.validation, None);
    }

    #[test]
    fn a_generic_name_in_another_tools_shape_is_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let data = d.path().join(TRAIN_FILE);
        std::fs::write(&data, r#"[{"text": "a query", "label": 3}]"#).unwrap();
        assert!(EvalFiles::in_dir(d.path()).is_empty());
        assert!(is_another_tools(TRAIN_FILE, &data));
        // Not JSON at all: ours, so the loader says what is wrong with it.
        std::fs::write(&data, "[{\"query\": ").unwrap();
        assert_eq!(EvalFiles::in_dir(d.path()).triggers, Some(data.clone()));
        // The runners' own names are never taken for another tool's.
        assert!(!is_another_tools("triggers.json", &data));
    }
}
