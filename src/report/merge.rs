//! Joining shards: several run folders of one suite set (say, a CI matrix of `--shard K/N`)
//! become one run folder that every report reads like any run. Case-run folders are copied
//! as they are; `run.json` records where each came from.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

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
}

fn io(path: &Path, e: std::io::Error) -> MergeError {
    MergeError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), MergeError> {
    std::fs::create_dir_all(to).map_err(|e| io(to, e))?;
    for e in std::fs::read_dir(from).map_err(|e| io(from, e))? {
        let e = e.map_err(|e| io(from, e))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().map_err(|e| io(&src, e))?.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| io(&src, e))?;
        }
    }
    Ok(())
}

/// The case-run folders of a run, relative to it (those with a `result.json`).
fn case_runs(dir: &Path) -> Vec<PathBuf> {
    crate::run::record::case_run_results(dir)
        .iter()
        .filter_map(|f| f.parent()?.strip_prefix(dir).ok().map(Path::to_path_buf))
        .collect()
}

/// Merges `runs` into the new folder `out`. Nothing is written when the runs clash.
pub fn merge(runs: &[PathBuf], out: &Path) -> Result<usize, MergeError> {
    if out.exists() {
        return Err(MergeError::Exists(out.to_path_buf()));
    }
    let mut records = Vec::new();
    let mut plan: Vec<(PathBuf, PathBuf)> = Vec::new();
    for r in runs {
        let text = std::fs::read_to_string(r.join("run.json"))
            .map_err(|_| MergeError::NotARun(r.clone()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| MergeError::Io {
            path: r.join("run.json"),
            message: format!("not valid JSON: {e}"),
        })?;
        records.push(v);
        for rel in case_runs(r) {
            if let Some((_, first)) = plan.iter().find(|(p, _)| *p == rel) {
                return Err(MergeError::Clash {
                    path: rel,
                    first: first.clone(),
                    second: r.clone(),
                });
            }
            plan.push((rel, r.clone()));
        }
    }
    for (rel, from) in &plan {
        copy_tree(&from.join(rel), &out.join(rel))?;
    }
    let first = |k: &str| {
        records
            .iter()
            .filter_map(|v| v[k].as_str())
            .min()
            .map(str::to_string)
    };
    let last = records.iter().filter_map(|v| v["finished"].as_str()).max();
    let mut harnesses = serde_json::Map::new();
    let mut projects = serde_json::Map::new();
    for v in &records {
        for (map, key) in [(&mut harnesses, "harnesses"), (&mut projects, "projects")] {
            if let Some(o) = v[key].as_object() {
                map.extend(o.clone());
            }
        }
    }
    let concat = |k: &str| -> Vec<Value> {
        let mut all: Vec<Value> = Vec::new();
        for v in &records {
            for x in v[k].as_array().into_iter().flatten() {
                if !all.contains(x) {
                    all.push(x.clone());
                }
            }
        }
        all
    };
    let merged = json!({
        "assay_version": records.first().map(|v| v["assay_version"].clone()).unwrap_or(Value::Null),
        "started": first("started"),
        "finished": last,
        "duration_ms": records.iter().filter_map(|v| v["duration_ms"].as_u64()).max(),
        "case_runs": plan.len(),
        "harnesses": harnesses,
        "judges": concat("judges"),
        "plugins": concat("plugins"),
        "options": records.first().map(|v| v["options"].clone()).unwrap_or(Value::Null),
        "projects": projects,
        "merged_from": runs.iter().map(|r| r.display().to_string()).collect::<Vec<_>>(),
    });
    crate::run::record::write_json(&out.join("run.json"), &merged).map_err(|e| io(out, e))?;
    Ok(plan.len())
}
