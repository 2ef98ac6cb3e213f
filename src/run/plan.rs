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

/// The plan of a run, as printed before any agent starts (and all `--dry-run` does): every
/// case-run with its harness, model, timeout and target, and what it will cost in agent runs.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Summary {
    pub case_runs: Vec<PlannedRow>,
    /// Harnesses or a sandbox that cannot run here: a real run would stop on them (exit 3).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<String>,
}

/// One planned case-run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PlannedRow {
    pub suite: String,
    pub case: String,
    pub kind: crate::record::case_run::Kind,
    pub variant: Variant,
    pub run: u32,
    pub harness: String,
    /// `None`: the harness's own default model.
    pub model: Option<String>,
    pub timeout_secs: u64,
    pub target: Option<String>,
    /// Starts an agent (or a test command); a judged trigger eval only asks the judge.
    pub starts_agent: bool,
    pub judged: bool,
}

impl Summary {
    /// One line: case-runs by kind, and how many agent runs and judge calls they take.
    /// `reused` case-runs (cache, `--resume`) start nothing.
    pub fn line(&self, reused: usize) -> String {
        use crate::record::case_run::Kind;
        let count =
            |f: &dyn Fn(&PlannedRow) -> bool| self.case_runs.iter().filter(|r| f(r)).count();
        let cases = count(&|r| r.kind == Kind::Case && r.variant == Variant::Skill);
        let baselines = count(&|r| r.variant == Variant::Baseline);
        let triggers = count(&|r| r.kind == Kind::Trigger && r.starts_agent);
        let judged_triggers = count(&|r| r.kind == Kind::Trigger && !r.starts_agent);
        let agent_runs = count(&|r| r.starts_agent);
        let mut parts = vec![format!("{cases} case run{}", plural(cases))];
        if baselines > 0 {
            parts.push(format!("{baselines} baseline run{}", plural(baselines)));
        }
        if triggers > 0 {
            parts.push(format!("{triggers} trigger run{}", plural(triggers)));
        }
        if judged_triggers > 0 {
            parts.push(format!(
                "{judged_triggers} judged trigger quer{}",
                if judged_triggers == 1 { "y" } else { "ies" }
            ));
        }
        let mut line = format!(
            "plan: {} case-run{} ({}): {agent_runs} agent run{}",
            self.case_runs.len(),
            plural(self.case_runs.len()),
            parts.join(", "),
            plural(agent_runs)
        );
        if reused > 0 {
            line.push_str(&format!(", {reused} already done (cache or --resume)"));
        }
        line
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod summary_tests {
    use super::*;
    use crate::record::case_run::Kind;

    fn row(kind: Kind, variant: Variant, starts_agent: bool) -> PlannedRow {
        PlannedRow {
            suite: "s".into(),
            case: "c".into(),
            kind,
            variant,
            run: 1,
            harness: "claude-code".into(),
            model: None,
            timeout_secs: 300,
            target: None,
            starts_agent,
            judged: false,
        }
    }

    #[test]
    fn the_line_counts_agent_runs_by_kind() {
        let mut s = Summary::default();
        for _ in 0..5 {
            s.case_runs.push(row(Kind::Case, Variant::Skill, true));
        }
        s.case_runs.push(row(Kind::Case, Variant::Baseline, true));
        for _ in 0..6 {
            s.case_runs.push(row(Kind::Trigger, Variant::Skill, true));
        }
        assert_eq!(
            s.line(2),
            "plan: 12 case-runs (5 case runs, 1 baseline run, 6 trigger runs): 12 agent runs, 2 already done (cache or --resume)"
        );
        let judged = Summary {
            case_runs: vec![row(Kind::Trigger, Variant::Skill, false)],
            unavailable: vec![],
        };
        assert_eq!(
            judged.line(0),
            "plan: 1 case-run (0 case runs, 1 judged trigger query): 0 agent runs"
        );
    }
}
