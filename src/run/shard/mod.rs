//! Shards: one run cut into N slices that finish together. Which slice this machine runs
//! (`--shard K/N`, or `--shard auto` from a Kubernetes Indexed Job or a CI matrix,
//! [`detect`]); how the cases are dealt, by their expected time from earlier runs
//! ([`timings`], [`cut`]); and what a shard records in `run.json` so that `assay report
//! merge` can tell slices of one plan from slices of different ones
//! ([`crate::record::run::ShardRecord`]).

pub mod cut;
pub mod detect;
pub mod timings;

pub use cut::{Cut, cut};
pub use detect::detect;
pub use timings::Timings;

/// `--shard K/N`: the K-th of N slices (K from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// `K/N` with 1 ≤ K ≤ N, or why not.
    pub fn new(index: u32, count: u32) -> Option<Shard> {
        (index >= 1 && count >= 1 && index <= count).then_some(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}` is not K/N with 1 ≤ K ≤ N (e.g. 2/4), or auto");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        Shard::new(index, count).ok_or_else(bad)
    }
}

/// What `--shard` says: a slice, or `auto` (read it from the environment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardSpec {
    Fixed(Shard),
    Auto,
}

impl std::str::FromStr for ShardSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<ShardSpec, String> {
        if s.trim() == "auto" {
            return Ok(ShardSpec::Auto);
        }
        s.parse().map(ShardSpec::Fixed)
    }
}

/// The slice this run takes, where it was read, and what the cases are dealt by.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub shard: Shard,
    /// `--shard 2/4`, or what `--shard auto` read (`Kubernetes Indexed Job:
    /// JOB_COMPLETION_INDEX=1, 4 completions from ASSAY_SHARDS`).
    pub source: String,
    pub timings: Timings,
    /// `--resume` of a shard: its recorded cut, case by case (kept, so the resumed shard
    /// runs what it first planned whatever the timings say now).
    pub recorded: Option<Box<crate::record::run::ShardRecord>>,
    /// Each suite's files as this shard plans them, for the merge to compare.
    pub suites: std::collections::BTreeMap<String, crate::record::run::SuiteDigest>,
}

/// Resolves `--shard` (with `--shards`) against the environment `var` reads.
pub fn choose(
    spec: ShardSpec,
    shards: Option<u32>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(Shard, String), String> {
    match spec {
        ShardSpec::Fixed(s) => match shards {
            Some(n) if n != s.count => Err(format!(
                "--shard {s} and --shards {n} disagree on the number of shards"
            )),
            _ => Ok((s, format!("--shard {s}"))),
        },
        ShardSpec::Auto => detect(shards, var),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_specs_are_checked() {
        for bad in ["0/3", "4/3", "1/0", "x", "1/", "/2", "-1/2", "", "autox"] {
            assert!(bad.parse::<ShardSpec>().is_err(), "{bad}");
        }
        assert_eq!(
            "2/4".parse::<ShardSpec>().unwrap(),
            ShardSpec::Fixed(Shard { index: 2, count: 4 })
        );
        assert_eq!("auto".parse::<ShardSpec>().unwrap(), ShardSpec::Auto);
    }

    #[test]
    fn a_fixed_shard_and_a_different_count_are_refused() {
        let none = |_: &str| None;
        let s = ShardSpec::Fixed(Shard { index: 2, count: 4 });
        assert_eq!(choose(s, None, &none).unwrap().1, "--shard 2/4");
        assert_eq!(choose(s, Some(4), &none).unwrap().0.index, 2);
        assert!(choose(s, Some(3), &none).unwrap_err().contains("disagree"));
    }
}
