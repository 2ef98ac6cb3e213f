//! Reading a run folder: its `run.json`, every case-run's `result.json`, and a `missing`
//! record for each case-run the run planned and never recorded.

use std::path::{Path, PathBuf};

use super::case_run::{CaseRunRecord, Status};
use super::run::RunRecord;
use crate::record::layout;

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0} is not a run folder (it has no run.json)")]
    NotARun(PathBuf),
    #[error("{path}: {message}")]
    Unreadable { path: PathBuf, message: String },
}

fn unreadable(path: &Path, message: impl Into<String>) -> ReadError {
    ReadError::Unreadable {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Reads a run folder's `run.json`.
pub fn read_run(dir: &Path) -> Result<RunRecord, ReadError> {
    let path = dir.join(layout::RUN_JSON);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ReadError::NotARun(dir.to_path_buf()));
        }
        Err(e) => return Err(unreadable(&path, e.to_string())),
    };
    RunRecord::parse(&text).map_err(|m| unreadable(&path, m))
}

/// Reads the `result.json` of the case-run folder `dir`.
pub fn read_case_run(dir: &Path) -> Result<CaseRunRecord, ReadError> {
    let path = dir.join(layout::RESULT_JSON);
    let text = std::fs::read_to_string(&path).map_err(|e| unreadable(&path, e.to_string()))?;
    CaseRunRecord::parse(&text).map_err(|m| unreadable(&path, m))
}

/// The folder of every case-run recorded in a run folder (those with a `result.json`), in
/// natural path order (`trigger-2` before `trigger-10`, `run-2` before `run-10`).
pub fn case_run_dirs(run_dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = ignore::WalkBuilder::new(run_dir)
        .standard_filters(false)
        .max_depth(Some(4))
        .build()
        .flatten()
        .filter(|e| e.file_name() == layout::RESULT_JSON && e.depth() > 0)
        .filter_map(|e| e.path().parent().map(Path::to_path_buf))
        .collect();
    found.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
    found
}

/// Text compared as people read numbers in it: each run of ASCII digits by its value (then by
/// its length, so `01` and `1` stay apart), everything else character by character.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let (n, rest_x) = digits(x);
                let (m, rest_y) = digits(y);
                let (n_trim, m_trim) = (trim_zeros(n), trim_zeros(m));
                let by_value = n_trim
                    .len()
                    .cmp(&m_trim.len())
                    .then_with(|| n_trim.cmp(m_trim))
                    .then_with(|| n.len().cmp(&m.len()));
                if by_value.is_ne() {
                    return by_value;
                }
                (x, y) = (rest_x, rest_y);
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

/// The leading digits of `s`, and the rest.
fn digits(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
    s.split_at(n)
}

fn trim_zeros(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&c| c == b'0').count();
    &s[n..]
}

/// What stands in for each case-run `run` planned that has no `result.json` in `run_dir`
/// (the run crashed, was killed, or stopped first): status `missing`, so no report counts it
/// as passed. Each with its folder, relative to the run folder.
pub fn missing(run_dir: &Path, run: &RunRecord) -> Vec<(PathBuf, CaseRunRecord)> {
    run.planned
        .iter()
        .filter(|p| {
            // Only folders inside the run folder, as planned (never `..` from a forged file).
            p.dir
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
                && !run_dir.join(&p.dir).join(layout::RESULT_JSON).is_file()
        })
        .map(|p| {
            let record = CaseRunRecord {
                suite: p.suite.clone(),
                case: p.case.clone(),
                run: p.run,
                variant: p.variant,
                kind: p.kind,
                status: Status::Missing,
                reason: Some(
                    "planned but never recorded: the run stopped before this case-run finished"
                        .into(),
                ),
                dir: run_dir.join(&p.dir),
                ..CaseRunRecord::default()
            };
            (p.dir.clone(), record)
        })
        .collect()
}

/// Every case-run of a run folder, recorded or missing, each with its folder relative to the
/// run folder: recorded ones in path order, then the missing ones in the order planned.
pub fn read_case_runs(
    run_dir: &Path,
    run: &RunRecord,
) -> Result<Vec<(PathBuf, CaseRunRecord)>, ReadError> {
    let mut out = Vec::new();
    each_case_run(run_dir, run, |rel, record| out.push((rel, record)))?;
    Ok(out)
}

/// Each case-run of a run folder, as [`read_case_runs`] lists them, handed to `f` one at a
/// time (for a reader that keeps only part of each).
pub fn each_case_run(
    run_dir: &Path,
    run: &RunRecord,
    mut f: impl FnMut(PathBuf, CaseRunRecord),
) -> Result<(), ReadError> {
    for dir in case_run_dirs(run_dir) {
        let record = read_case_run(&dir)?;
        f(
            dir.strip_prefix(run_dir).unwrap_or(&dir).to_path_buf(),
            record,
        );
    }
    for (rel, record) in missing(run_dir, run) {
        f(rel, record);
    }
    Ok(())
}

/// A new folder name under `base`: the UTC time (`20261123T101500Z`), with `-2`, `-3`, … when
/// one of that name exists. Not created.
pub fn fresh_stamped(base: &Path) -> PathBuf {
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    let mut dir = base.join(&stamp);
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = base.join(format!("{stamp}-{n}"));
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Outcome;
    use crate::record::run::PlannedCaseRun;

    fn planned(dir: &str) -> PlannedCaseRun {
        PlannedCaseRun {
            suite: "s".into(),
            case: "c".into(),
            run: 1,
            variant: Default::default(),
            kind: Default::default(),
            dir: dir.into(),
        }
    }

    #[test]
    fn case_runs_are_listed_in_natural_order() {
        let d = tempfile::tempdir().unwrap();
        let names = ["trigger-2", "trigger-10", "trigger-1", "trigger-12", "B1"];
        for n in names {
            for run in ["run-10", "run-2"] {
                let dir = d.path().join("s").join(n).join(run);
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("result.json"), "{}").unwrap();
            }
        }
        let listed: Vec<String> = case_run_dirs(d.path())
            .iter()
            .map(|p| {
                p.strip_prefix(d.path().join("s"))
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        assert_eq!(
            listed,
            [
                "B1/run-2",
                "B1/run-10",
                "trigger-1/run-2",
                "trigger-1/run-10",
                "trigger-2/run-2",
                "trigger-2/run-10",
                "trigger-10/run-2",
                "trigger-10/run-10",
                "trigger-12/run-2",
                "trigger-12/run-10"
            ]
        );
    }

    #[test]
    fn planned_case_runs_without_a_result_are_missing() {
        let d = tempfile::tempdir().unwrap();
        let run = RunRecord {
            planned: vec![
                planned("s/c/run-1"),
                planned("s/c/run-2"),
                // A forged plan never reaches outside the run folder.
                planned("../elsewhere/run-1"),
                planned("/etc/run-1"),
            ],
            ..RunRecord::default()
        };
        crate::record::write_json(&d.path().join("run.json"), &run).unwrap();
        let done = CaseRunRecord {
            suite: "s".into(),
            case: "c".into(),
            run: 1,
            status: Status::Completed,
            ..CaseRunRecord::default()
        };
        crate::record::write_json(&d.path().join("s/c/run-1/result.json"), &done).unwrap();
        let read = read_run(d.path()).unwrap();
        assert_eq!(read, run);
        let all = read_case_runs(d.path(), &read).unwrap();
        let dirs: Vec<_> = all.iter().map(|(p, _)| p.clone()).collect();
        assert_eq!(
            dirs,
            [PathBuf::from("s/c/run-1"), PathBuf::from("s/c/run-2")]
        );
        assert_eq!(all[0].1.outcome(), Outcome::Failed);
        assert_eq!(all[1].1.outcome(), Outcome::Missing);
    }

    #[test]
    fn unreadable_records_name_their_file() {
        let d = tempfile::tempdir().unwrap();
        assert!(matches!(read_run(d.path()), Err(ReadError::NotARun(_))));
        std::fs::write(d.path().join("run.json"), "{").unwrap();
        let e = read_run(d.path()).unwrap_err().to_string();
        assert!(
            e.contains("run.json") && e.contains("not valid JSON"),
            "{e}"
        );
        std::fs::write(d.path().join("run.json"), "{}").unwrap();
        std::fs::create_dir_all(d.path().join("s/c/run-1")).unwrap();
        std::fs::write(d.path().join("s/c/run-1/result.json"), "[]").unwrap();
        let run = read_run(d.path()).unwrap();
        assert_eq!(
            run.options.min_pass_rate, 1.0,
            "older runs: every run must pass"
        );
        let e = read_case_runs(d.path(), &run).unwrap_err().to_string();
        assert!(e.contains("s/c/run-1/result.json"), "{e}");
    }
}
