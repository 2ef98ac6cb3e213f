//! How much of the machine and the budget a run takes: agent processes at once ([`jobs`]) and
//! the spending limit ([`max_cost`]).

use crate::config::Config;
use crate::run::options::RunOptions;

/// Agent processes at once: `--jobs` (or `ASSAY_JOBS`) > `[run] jobs` of the first project
/// that sets it > [`default_jobs`]; at least 1.
pub fn jobs<'a>(opts: &RunOptions, configs: impl IntoIterator<Item = &'a Config>) -> usize {
    match opts.jobs {
        0 => configs
            .into_iter()
            .find_map(|c| c.run.jobs)
            .unwrap_or_else(default_jobs)
            .max(1),
        n => n,
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

/// The spending limit: `--max-cost` (or `ASSAY_MAX_COST`) > the lowest `[run] max_cost` of the
/// projects > none.
pub fn max_cost<'a>(
    opts: &RunOptions,
    configs: impl IntoIterator<Item = &'a Config>,
) -> Option<f64> {
    opts.settings.max_cost.or_else(|| {
        configs
            .into_iter()
            .filter_map(|c| c.run.max_cost)
            .reduce(f64::min)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_jobs_is_bounded() {
        let j = default_jobs();
        assert!((1..=8).contains(&j));
    }
}
