//! Joining shards: several run folders of one suite set (say, a CI matrix of `--shard K/N`)
//! become one run folder that every report reads like any run. Case-run folders are copied
//! as they are; `run.json` records where each came from. Shards are first checked to be
//! slices of one plan ([`shards`]).

pub mod shards;

use std::path::{Path, PathBuf};

use crate::record::layout;
use crate::record::{ReadError, RunRecord};

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("{0} is not a run folder (it has no run.json)")]
    NotARun(PathBuf),
    #[error("{0} already exists; merge into a new folder")]
    Exists(PathBuf),
    #[error("{path} is in more than one of the runs ({first} and {second})")]
    Clash {
        path: PathBuf,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error("not shards of one plan: {0}")]
    NotOnePlan(String),
    #[error("shard {shard} is given twice: {first} and {second}")]
    ShardTwice {
        shard: String,
        first: PathBuf,
        second: PathBuf,
    },
}

/// What a merge wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Merged {
    /// Case-runs copied.
    pub case_runs: usize,
    /// Case-runs planned (by any run, or by a shard not given) and recorded by none: the
    /// merged run shows them `missing`.
    pub missing: usize,
    /// For shards: how many, and each one not given with its case-runs.
    pub slices: Option<shards::Slices>,
    /// What the merge took though it differs between the runs: an agent CLI's version.
    pub warnings: Vec<String>,
}

fn io(path: &Path, e: std::io::Error) -> MergeError {
    MergeError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), MergeError> {
    // Iterative: a deep tree takes no stack.
    let mut folders = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((from, to)) = folders.pop() {
        std::fs::create_dir_all(&to).map_err(|e| io(&to, e))?;
        for e in std::fs::read_dir(&from).map_err(|e| io(&from, e))? {
            let e = e.map_err(|e| io(&from, e))?;
            let (src, dst) = (e.path(), to.join(e.file_name()));
            if e.file_type().map_err(|e| io(&src, e))?.is_dir() {
                folders.push((src, dst));
            } else {
                std::fs::copy(&src, &dst).map_err(|e| io(&src, e))?;
            }
        }
    }
    Ok(())
}

/// The case-run folders of a run, relative to it (those with a `result.json`).
fn case_runs(dir: &Path) -> Vec<PathBuf> {
    crate::record::case_run_dirs(dir)
        .iter()
        .filter_map(|d| d.strip_prefix(dir).ok().map(Path::to_path_buf))
        .collect()
}

/// Merges `runs` into the new folder `out`. Nothing is written when the runs clash or are
/// shards of different plans.
pub fn merge(runs: &[PathBuf], out: &Path) -> Result<Merged, MergeError> {
    if out.exists() {
        return Err(MergeError::Exists(out.to_path_buf()));
    }
    let mut records: Vec<(PathBuf, RunRecord)> = Vec::new();
    for r in runs {
        let record = crate::record::read_run(r).map_err(|e| match e {
            ReadError::NotARun(p) => MergeError::NotARun(p),
            ReadError::Unreadable { path, message } => MergeError::Io { path, message },
        })?;
        records.push((r.clone(), record));
    }
    let slices = shards::check(&records)?;
    let mut plan: std::collections::BTreeMap<PathBuf, PathBuf> = Default::default();
    for r in runs {
        for rel in case_runs(r) {
            if let Some(first) = plan.get(&rel) {
                return Err(MergeError::Clash {
                    path: rel,
                    first: first.clone(),
                    second: r.clone(),
                });
            }
            plan.insert(rel, r.clone());
        }
    }
    for (rel, from) in &plan {
        copy_tree(&from.join(rel), &out.join(rel))?;
    }
    // The project listings the case-runs' `workspace.json` name (named by their content).
    let listings = crate::record::files::LISTINGS;
    for r in runs.iter().filter(|r| r.join(listings).is_dir()) {
        copy_tree(&r.join(listings), &out.join(listings))?;
    }
    let warnings = versions_differ(&records);
    let first = records.first().map(|(_, r)| r.clone()).unwrap_or_default();
    let mut merged = RunRecord {
        schema: crate::record::run::SCHEMA.into(),
        started: records.iter().filter_map(|(_, v)| v.started.clone()).min(),
        finished: records.iter().filter_map(|(_, v)| v.finished.clone()).max(),
        duration_ms: records.iter().filter_map(|(_, v)| v.duration_ms).max(),
        interrupted: records.iter().any(|(_, v)| v.interrupted),
        merged_from: runs.iter().map(|r| r.display().to_string()).collect(),
        shard: None,
        resumed: Vec::new(),
        harnesses: Default::default(),
        projects: Default::default(),
        judges: Vec::new(),
        plugins: Vec::new(),
        planned: Vec::new(),
        case_runs: 0,
        ..first
    };
    let mut seen = std::collections::BTreeSet::new();
    for (_, v) in records {
        merged.harnesses.extend(v.harnesses);
        merged.projects.extend(v.projects);
        for j in v.judges {
            if !merged.judges.contains(&j) {
                merged.judges.push(j);
            }
        }
        for p in v.plugins {
            if !merged.plugins.contains(&p) {
                merged.plugins.push(p);
            }
        }
        // Every shard's plan: a shard's case-run that none recorded stays `missing`.
        for p in v.planned {
            if seen.insert(p.dir.clone()) {
                merged.planned.push(p);
            }
        }
    }
    // And the plan of each shard not given: its case-runs are missing too.
    for (_, runs) in slices.iter().flat_map(|s| &s.missing) {
        for p in runs {
            if seen.insert(p.dir.clone()) {
                merged.planned.push(p.clone());
            }
        }
    }
    merged.options.shard = None;
    merged.case_runs = merged.planned.len().max(plan.len());
    crate::record::write_json(&out.join(layout::RUN_JSON), &merged).map_err(|e| io(out, e))?;
    let missing = crate::record::folder::missing(out, &merged).len();
    Ok(Merged {
        case_runs: plan.len(),
        missing,
        slices,
        warnings,
    })
}

/// Each agent CLI whose version differs between the runs (machines with other images, say):
/// the merged `run.json` keeps one version per harness, so the difference is said.
fn versions_differ(records: &[(PathBuf, RunRecord)]) -> Vec<String> {
    let mut seen: std::collections::BTreeMap<&str, (&str, &Path)> = Default::default();
    let mut out = Vec::new();
    for (dir, r) in records {
        for (name, version) in &r.harnesses {
            match seen.get(name.as_str()) {
                Some((v, first)) if *v != version => out.push(format!(
                    "`{name}` ran as {v} in {} and as {version} in {}; the merged run.json records one version per harness",
                    first.display(),
                    dir.display()
                )),
                Some(_) => {}
                None => {
                    seen.insert(name, (version, dir));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::run::PlannedCaseRun;
    use crate::record::{CaseRunRecord, Outcome, Status};

    /// A shard that planned `cases` and recorded only the first.
    fn shard(root: &Path, name: &str, cases: &[&str]) -> PathBuf {
        let dir = root.join(name);
        let run = RunRecord {
            planned: cases
                .iter()
                .map(|c| PlannedCaseRun {
                    suite: "s".into(),
                    case: c.to_string(),
                    run: 1,
                    variant: Default::default(),
                    kind: Default::default(),
                    dir: PathBuf::from(format!("s/{c}/run-1")),
                })
                .collect(),
            case_runs: cases.len(),
            ..RunRecord::default()
        };
        crate::record::write_json(&dir.join("run.json"), &run).unwrap();
        let done = CaseRunRecord {
            suite: "s".into(),
            case: cases[0].into(),
            run: 1,
            status: Status::Completed,
            ..CaseRunRecord::default()
        };
        crate::record::write_json(
            &dir.join(format!("s/{}/run-1/result.json", cases[0])),
            &done,
        )
        .unwrap();
        dir
    }

    #[test]
    fn a_merged_run_keeps_every_shards_plan() {
        let d = tempfile::tempdir().unwrap();
        let runs = [
            shard(d.path(), "a", &["a1", "a2"]),
            shard(d.path(), "b", &["b1", "b2", "b3"]),
        ];
        let out = d.path().join("merged");
        let merged = merge(&runs, &out).unwrap();
        assert_eq!((merged.case_runs, merged.missing), (2, 3));
        assert_eq!(merged.slices, None);
        let report = crate::report::read(&out).unwrap();
        assert_eq!(report.config.case_runs, 5);
        assert_eq!(report.config.merged_from.len(), 2);
        let missing = report
            .case_runs
            .iter()
            .filter(|c| c.outcome == Outcome::Missing)
            .count();
        assert_eq!(
            missing, 3,
            "what a shard never recorded is missing after the merge"
        );
    }
}
