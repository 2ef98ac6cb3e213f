//! What a run is made of: which case-runs, in which variant, on which shard.

use std::path::PathBuf;

pub use crate::record::run::Mode;

impl Mode {
    pub fn artifacts(self) -> bool {
        self != Mode::Triggers
    }
    pub fn triggers(self) -> bool {
        self != Mode::Artifacts
    }
}

pub use crate::record::case_run::{TriggerMode, Variant};

impl Variant {
    /// The case-run folder's name: `run-<k>`, `baseline-<k>`.
    pub fn folder(self, run: u32) -> String {
        match self {
            Variant::Skill => format!("run-{run}"),
            Variant::Baseline => format!("baseline-{run}"),
        }
    }
}

/// What a baseline case-run has instead of the skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Baseline {
    /// No skill at all.
    WithoutSkill,
    /// This version of the skill (a folder with SKILL.md, or a command file).
    Skill(PathBuf),
}

/// `--shard K/N`: the K-th of N deterministic slices (K from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}` is not K/N with 1 ≤ K ≤ N (e.g. 2/4)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// Which of `keys` (case ids, `suite/case`) this shard runs: every case's runs stay on one
    /// shard, and cases are dealt round-robin in sorted order, so shards differ in size by one
    /// case at most and the same inputs always give the same slices.
    pub fn keeps(&self, keys: &[String]) -> std::collections::BTreeSet<String> {
        let mut sorted: Vec<&String> = keys.iter().collect();
        sorted.sort();
        sorted.dedup();
        sorted
            .into_iter()
            .enumerate()
            .filter(|(i, _)| (*i as u32) % self.count == self.index - 1)
            .map(|(_, k)| k.clone())
            .collect()
    }
}

/// The default number of agent processes at once: one per CPU, and no more than memory allows
/// at about 400 MB each (a Claude Code process takes ~300 MB), between 1 and 8.
pub fn default_jobs() -> usize {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    let by_memory = available_memory_mb()
        .map(|mb| (mb / 400) as usize)
        .unwrap_or(cpus);
    cpus.min(by_memory).clamp(1, 8)
}

/// `MemAvailable` from /proc/meminfo, in MB.
fn available_memory_mb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_cases_evenly_and_completely() {
        let keys: Vec<String> = (0..10).map(|i| format!("s/c{i}")).collect();
        let mut all = std::collections::BTreeSet::new();
        for k in 1..=3 {
            let shard: Shard = format!("{k}/3").parse().unwrap();
            let kept = shard.keeps(&keys);
            assert!((3..=4).contains(&kept.len()), "{kept:?}");
            assert!(all.is_disjoint(&kept));
            all.extend(kept);
        }
        assert_eq!(all.len(), 10);
        // The same slice whatever the order the cases come in.
        let mut reversed = keys.clone();
        reversed.reverse();
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!(s.keeps(&keys), s.keeps(&reversed));
    }

    #[test]
    fn shard_specs_are_checked() {
        for bad in ["0/3", "4/3", "1/0", "x", "1/", "/2", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(
            "2/4".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 4 }
        );
    }

    #[test]
    fn default_jobs_is_bounded() {
        let j = default_jobs();
        assert!((1..=8).contains(&j));
    }
}
