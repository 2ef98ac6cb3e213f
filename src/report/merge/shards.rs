//! Whether run folders are slices of one plan. Shards (`--shard`) record the whole plan's cut
//! and what it was made from; before anything is written, the merge checks that every shard
//! given was cut from the same suites, options and assay version into the same slices, that
//! no slice is given twice, and lists the case-runs of each slice not given (so the merged
//! run shows them `missing`, never as a smaller green run).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::MergeError;
use crate::record::RunRecord;
use crate::record::run::{PlannedCaseRun, ShardRecord};

/// Options that may differ between the machines of one plan: the slice itself, how many
/// processes each ran at once, and what each kept or reused.
const PER_MACHINE: &[&str] = &["shard", "jobs", "judge_jobs", "keep_workspaces", "cache"];

/// The slices of one plan, as given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slices {
    pub count: u32,
    /// Each slice not given (K), and the case-runs it planned.
    pub missing: Vec<(u32, Vec<PlannedCaseRun>)>,
}

/// `None` when no run is a shard (whole runs, or runs of an assay that recorded no cut);
/// the slices when every run is a shard of one plan; otherwise what tells them apart.
pub fn check(runs: &[(PathBuf, RunRecord)]) -> Result<Option<Slices>, MergeError> {
    let sharded: Vec<(&Path, &RunRecord, &ShardRecord)> = runs
        .iter()
        .filter_map(|(p, r)| r.shard.as_ref().map(|s| (p.as_path(), r, s)))
        .collect();
    let Some(&(first_dir, first, first_shard)) = sharded.first() else {
        return Ok(None);
    };
    if let Some((whole, _)) = runs.iter().find(|(_, r)| r.shard.is_none()) {
        return Err(MergeError::NotOnePlan(format!(
            "{} is shard {}/{} and {} is not a shard: merge the shards of one plan, or whole runs",
            first_dir.display(),
            first_shard.index,
            first_shard.count,
            whole.display()
        )));
    }
    let mut given: BTreeMap<u32, &Path> = BTreeMap::new();
    for &(dir, run, shard) in &sharded {
        if let Some(other) = given.insert(shard.index, dir) {
            return Err(MergeError::ShardTwice {
                shard: format!("{}/{}", shard.index, shard.count),
                first: other.to_path_buf(),
                second: dir.to_path_buf(),
            });
        }
        let differ = |what: String| {
            MergeError::NotOnePlan(format!(
                "{} and {}: {what}",
                first_dir.display(),
                dir.display()
            ))
        };
        if let Some(what) = difference((first, first_shard), (run, shard)) {
            return Err(differ(what));
        }
    }
    let planned: BTreeSet<u32> = first_shard.cases.values().copied().collect();
    let mut missing = Vec::new();
    for k in planned.into_iter().filter(|k| !given.contains_key(k)) {
        let mut runs: Vec<PlannedCaseRun> = Vec::new();
        for p in sharded.iter().flat_map(|(_, _, s)| &s.elsewhere) {
            let key = format!("{}/{}", p.suite, p.case);
            if first_shard.cases.get(&key) == Some(&k) && !runs.contains(p) {
                runs.push(p.clone());
            }
        }
        missing.push((k, runs));
    }
    Ok(Some(Slices {
        count: first_shard.count,
        missing,
    }))
}

/// What tells two shards' plans apart, in words: the shard count, assay's version, a suite's
/// files, an option, or the cut.
fn difference(a: (&RunRecord, &ShardRecord), b: (&RunRecord, &ShardRecord)) -> Option<String> {
    let ((ra, sa), (rb, sb)) = (a, b);
    if sa.count != sb.count {
        return Some(format!(
            "shard {}/{} and shard {}/{} were cut into different numbers of shards",
            sa.index, sa.count, sb.index, sb.count
        ));
    }
    if ra.assay_version != rb.assay_version {
        return Some(format!(
            "run by different assay versions ({} and {})",
            ra.assay_version, rb.assay_version
        ));
    }
    suites_differ(&sa.suites, &sb.suites)
        .or_else(|| options_differ(ra, rb))
        .or_else(|| cut_differs(sa, sb))
}

fn suites_differ(
    a: &BTreeMap<String, crate::record::run::SuiteDigest>,
    b: &BTreeMap<String, crate::record::run::SuiteDigest>,
) -> Option<String> {
    for (id, da) in a {
        let Some(db) = b.get(id) else {
            return Some(format!(
                "suite `{id}` is in the first's plan and not in the second's"
            ));
        };
        if da.spec != db.spec {
            return Some(format!(
                "suite `{id}` differs: its eval files hash {} and {}",
                da.spec, db.spec
            ));
        }
        if da.skill != db.skill {
            return Some(format!(
                "suite `{id}` differs: its skill hashes {} and {}",
                da.skill.as_deref().unwrap_or("(none)"),
                db.skill.as_deref().unwrap_or("(none)")
            ));
        }
    }
    b.keys()
        .find(|id| !a.contains_key(*id))
        .map(|id| format!("suite `{id}` is in the second's plan and not in the first's"))
}

fn options_differ(a: &RunRecord, b: &RunRecord) -> Option<String> {
    let fields = |r: &RunRecord| match serde_json::to_value(&r.options) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    let (fa, fb) = (fields(a), fields(b));
    let keys: BTreeSet<&String> = fa.keys().chain(fb.keys()).collect();
    keys.into_iter()
        .filter(|k| !PER_MACHINE.contains(&k.as_str()))
        .find(|k| fa.get(*k) != fb.get(*k))
        .map(|k| {
            let shown = |m: &serde_json::Map<String, serde_json::Value>| {
                m.get(k).map_or("(unset)".to_string(), ToString::to_string)
            };
            format!(
                "option `{k}` differs: {} and {}",
                crate::text::printable(&shown(&fa)),
                crate::text::printable(&shown(&fb))
            )
        })
}

fn cut_differs(a: &ShardRecord, b: &ShardRecord) -> Option<String> {
    let keys: BTreeSet<&String> = a.cases.keys().chain(b.cases.keys()).collect();
    let case = keys
        .into_iter()
        .find(|k| a.cases.get(*k) != b.cases.get(*k))?;
    let on = |s: &ShardRecord| {
        s.cases
            .get(case)
            .map_or("no shard".to_string(), |k| format!("shard {k}"))
    };
    let from = |s: &ShardRecord| match &s.timings {
        Some(t) if s.by == "time" => format!("by time from {t}"),
        _ => "by count".to_string(),
    };
    Some(format!(
        "the cases were dealt differently (case `{case}` to {} and to {}): cut {} and {}; give every shard the same --shard-timings",
        on(a),
        on(b),
        from(a),
        from(b)
    ))
}
