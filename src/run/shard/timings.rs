//! How long each case-run took before: from the history (`.assay/history.jsonl`, each line a
//! case's mean over one run) or from a run folder (each `result.json`'s `duration_ms`). The
//! cut reads them as the expected time of the same case-run now.

use std::collections::BTreeMap;
use std::path::Path;

use crate::record::case_run::{Arm, Kind};
use crate::record::layout;

/// The history lines of a case-run that count: the latest few, their median (one slow run
/// does not move a case to another shard on its own).
const RECENT: usize = 5;

/// The longest a case-run is taken to last, in ms (a day): a forged duration cannot make
/// every other case look free.
const MOST_MS: f64 = 86_400_000.0;

/// A case-run: suite, case, `case`/`trigger`, `skill`/`baseline`/`variant`.
type Key = (String, String, String, String);

/// Expected case-run durations, and where they were read.
#[derive(Debug, Clone, Default)]
pub struct Timings {
    expected: BTreeMap<Key, f64>,
    /// The history file or run folder, as shown; `None` when there were none.
    pub source: Option<String>,
}

fn key(suite: &str, case: &str, kind: &str, variant: &str) -> Key {
    (suite.into(), case.into(), kind.into(), variant.into())
}

fn clamp(ms: f64) -> Option<f64> {
    ms.is_finite().then(|| ms.clamp(0.0, MOST_MS))
}

impl Timings {
    /// The durations `path` holds: a run folder's case-runs, or a history file's lines.
    /// `shown` names it in the plan line and in errors.
    pub fn load(path: &Path, shown: &str) -> Result<Timings, String> {
        if path.is_dir() {
            return Self::from_run(path, shown);
        }
        if !path.is_file() {
            return Err(format!("{shown}: no such run folder or history file"));
        }
        Self::from_history(path, shown)
    }

    /// A history file's latest lines for each case-run, their median.
    pub fn from_history(file: &Path, shown: &str) -> Result<Timings, String> {
        let (lines, _bad) =
            crate::record::history::read(file).map_err(|e| format!("{shown}: {e}"))?;
        let mut seen: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
        for l in lines {
            if let Some(ms) = l.duration_ms_mean.and_then(clamp) {
                seen.entry(key(&l.suite, &l.case, &l.kind, &l.variant))
                    .or_default()
                    .push(ms);
            }
        }
        let expected = seen
            .into_iter()
            .map(|(k, all)| (k, median(&all[all.len().saturating_sub(RECENT)..])))
            .collect();
        Ok(Timings {
            expected,
            source: Some(shown.to_string()),
        })
    }

    /// A run folder's recorded case-runs, each case-run's mean over its runs.
    pub fn from_run(dir: &Path, shown: &str) -> Result<Timings, String> {
        if !dir.join(layout::RUN_JSON).is_file() {
            return Err(format!("{shown}: not a run folder (it has no run.json)"));
        }
        let mut seen: BTreeMap<Key, (f64, f64)> = BTreeMap::new();
        for d in crate::record::case_run_dirs(dir) {
            // A result that cannot be read times nothing; the cut falls back for its case.
            let Ok(r) = crate::record::read_case_run(&d) else {
                continue;
            };
            let k = key(&r.suite, &r.case, r.kind.word(), r.variant.word());
            let (sum, n) = seen.entry(k).or_default();
            *sum += clamp(r.duration_ms as f64).unwrap_or(0.0);
            *n += 1.0;
        }
        let expected = seen.into_iter().map(|(k, (s, n))| (k, s / n)).collect();
        Ok(Timings {
            expected,
            source: Some(shown.to_string()),
        })
    }

    /// How long this case-run took before, in ms, if it ran.
    pub fn expected_ms(&self, suite: &str, case: &str, kind: Kind, variant: Arm) -> Option<f64> {
        self.expected
            .get(&key(suite, case, kind.word(), variant.word()))
            .copied()
    }

    /// Timings for tests and benchmarks: `(suite, case, ms)` of skill case-runs.
    pub fn of(cases: &[(&str, &str, f64)]) -> Timings {
        Timings {
            expected: cases
                .iter()
                .map(|(s, c, ms)| (key(s, c, "case", "skill"), *ms))
                .collect(),
            source: Some("given".into()),
        }
    }
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::history::{HistoryLine, SCHEMA, append};

    fn line(case: &str, ms: f64) -> HistoryLine {
        HistoryLine {
            schema: SCHEMA.into(),
            suite: "s".into(),
            case: case.into(),
            kind: "case".into(),
            variant: "skill".into(),
            duration_ms_mean: Some(ms),
            ..HistoryLine::default()
        }
    }

    #[test]
    fn the_history_gives_the_median_of_each_case_runs_latest_lines() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("history.jsonl");
        let mut lines: Vec<HistoryLine> = [9e9, 100.0, 200.0, 300.0, 400.0, 500.0]
            .iter()
            .map(|ms| line("slow", *ms))
            .collect();
        lines.push(line("fast", 10.0));
        lines.push(line("forged", -5.0));
        append(&file, &lines).unwrap();
        let t = Timings::load(&file, "h").unwrap();
        let get = |c| t.expected_ms("s", c, Kind::Case, Arm::Skill);
        // The oldest line (9e9) is past the latest five.
        assert_eq!(get("slow"), Some(300.0));
        assert_eq!(get("fast"), Some(10.0));
        assert_eq!(get("forged"), Some(0.0));
        assert_eq!(get("unseen"), None);
        assert_eq!(t.expected_ms("s", "fast", Kind::Case, Arm::Baseline), None);
        assert_eq!(t.source.as_deref(), Some("h"));
    }

    #[test]
    fn a_path_that_is_neither_is_an_error_naming_it() {
        let d = tempfile::tempdir().unwrap();
        let err = Timings::load(&d.path().join("nope"), "nope").unwrap_err();
        assert!(
            err.starts_with("nope: no such run folder or history file"),
            "{err}"
        );
        let err = Timings::load(d.path(), "empty").unwrap_err();
        assert!(err.contains("not a run folder"), "{err}");
    }
}
