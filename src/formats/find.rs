//! An eval format: how it is found (which files the walk hands it, and what it loads from
//! them) and the dialects it writes. Each format's folder implements [`EvalFormat`] (in its
//! `find.rs`) and is listed once in [`FORMATS`] (in `formats/mod.rs`, so that this trait does
//! not use the formats that implement it); `discover` walks the paths, offers each file to
//! the formats in the list's order, then asks each, in the same order, for its loading jobs.
//! Its reader is the folder's `load`, its policies the `POLICIES` it puts on every suite.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{FORMATS, LoadCtx};
use crate::diag::Problem;
use crate::suite::{Loaded, Skill};

/// One unit of loading work; discovery runs them in parallel.
pub type Job = Box<dyn FnOnce(&LoadCtx) -> Loaded + Send>;

/// The files under a folder, as discovery walks it (`.gitignore`, skipped folders).
pub type Walk<'a> = &'a dyn Fn(&Path) -> Vec<PathBuf>;

/// One eval format: found, read and written through this trait.
pub trait EvalFormat: Sync {
    /// The dialects of the format `assay init` writes (BMAD: its `evals.json`, skill-creator's,
    /// its `cases.json`), each in the format's `write.rs`.
    fn dialects(&self) -> &'static [&'static dyn super::write::Dialect];
    /// What the `unknown-format` help says this format reads ("*.eval.json (clauditor)").
    fn reads(&self) -> &'static str;
    /// Takes a file the walk found (or the user named) for this format, noting it in `found`;
    /// false when the file is not this format's. The first format in [`FORMATS`] to take a
    /// file has it.
    fn claim(&self, file: &File, found: &mut Found) -> bool;
    /// What this format took under one scan root, as loading jobs; problems of discovery
    /// (an ambiguous folder, a file that cannot be this format's) go to `scan.problems`.
    fn plan(&self, ctx: &LoadCtx, scan: &mut Scan) -> Vec<Job>;
    /// Whether a file that a format later in [`FORMATS`] took is really this format's (a
    /// UAAPS package's case YAML): the later format leaves it alone ([`Scan::taken_earlier`]).
    fn owns(&self, _file: &Path, _scan: &Scan) -> bool {
        false
    }
    /// `--skill` without `--evals`: this format's evals of `skill`, under the project `root`.
    fn of_skill(&self, _skill: &Skill, _root: &Path) -> Vec<Job> {
        Vec::new()
    }
    /// Where [`EvalFormat::of_skill`] looks, for the `no-evals` help; `None` when it is not said.
    fn skill_places(&self) -> Option<&'static str> {
        None
    }
    /// `--evals`: the evals the user named (an absolute path), of `skill` when `--skill` is
    /// also given; `None` when this format takes no `--evals`.
    fn of_evals(
        &self,
        _ctx: &LoadCtx,
        _evals: &Path,
        _skill: Option<&Skill>,
    ) -> Option<Result<Vec<Job>, Box<Problem>>> {
        None
    }
    /// When no path is given: this format's evals outside the project (Skillet's
    /// `~/.skillet/evals/`), found with `walk`.
    fn home(&self, _ctx: &LoadCtx, _walk: Walk) -> Vec<Job> {
        Vec::new()
    }
}

/// A file the walk found, or the user named.
#[derive(Debug)]
pub struct File<'a> {
    pub path: &'a Path,
    pub name: String,
    /// Its folder, and that folder's name.
    pub dir: &'a Path,
    pub dir_name: String,
    /// Whether the user named this file (rather than a folder holding it).
    pub named: bool,
}

impl<'a> File<'a> {
    pub fn new(path: &'a Path, named: bool) -> Self {
        let name_of = |p: &Path| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let dir = path.parent().unwrap_or(Path::new(""));
        File {
            path,
            name: name_of(path),
            dir,
            dir_name: name_of(dir),
            named,
        }
    }
}

/// What the formats took from one walk: sets of paths, under keys each format names for
/// itself (`"bmad:dirs"`).
#[derive(Debug, Default)]
pub struct Found {
    sets: BTreeMap<&'static str, BTreeSet<PathBuf>>,
}

impl Found {
    pub fn add(&mut self, key: &'static str, path: PathBuf) {
        self.sets.entry(key).or_default().insert(path);
    }

    pub fn get(&self, key: &'static str) -> &BTreeSet<PathBuf> {
        static EMPTY: BTreeSet<PathBuf> = BTreeSet::new();
        self.sets.get(key).unwrap_or(&EMPTY)
    }
}

/// One scan root (a folder or file the user gave, or the working folder) as the formats plan it.
#[derive(Debug)]
pub struct Scan<'a> {
    pub root: &'a Path,
    pub found: Found,
    pub problems: Vec<Problem>,
    /// How many formats of [`FORMATS`] come before the one planning.
    planning: usize,
}

impl<'a> Scan<'a> {
    pub fn new(root: &'a Path, found: Found) -> Self {
        Scan {
            root,
            found,
            problems: Vec::new(),
            planning: 0,
        }
    }

    /// Every format's jobs, in [`FORMATS`]' order.
    pub fn plan(&mut self, ctx: &LoadCtx) -> Vec<Job> {
        let mut jobs = Vec::new();
        for (i, finder) in FORMATS.iter().enumerate() {
            self.planning = i;
            jobs.extend(finder.plan(ctx, self));
        }
        jobs
    }

    /// Whether a format before the one planning owns `file` ([`EvalFormat::owns`]).
    pub fn taken_earlier(&self, file: &Path) -> bool {
        FORMATS[..self.planning].iter().any(|f| f.owns(file, self))
    }
}

/// Offers a file to each format in turn; whether one took it.
pub fn claim(path: &Path, named: bool, found: &mut Found) -> bool {
    let file = File::new(path, named);
    FORMATS.iter().any(|f| f.claim(&file, found))
}
