//! Dealing cases to shards so the shards finish together: each case (all its runs, its
//! baseline) weighs its expected time, and the heaviest goes first onto the least-loaded
//! shard (longest processing time first, within 4/3 of the best possible slowest shard).
//! A case-run with no time of its own weighs the median of those timed; with no timings at
//! all the cases are dealt round-robin in sorted order, by count. Ties go by case id and to
//! the lowest shard, so every machine cuts the same inputs the same way.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// How the cases were dealt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cut {
    /// Each case (`suite/case`) and its shard (from 1).
    pub shard_of: BTreeMap<String, u32>,
    /// Each shard's expected time in ms, shard 1 first (shards past the last case expect
    /// none and are left out); empty when the cases were dealt by count.
    pub expected_ms: Vec<u64>,
    /// Case-runs with a time of their own, of all.
    pub timed: usize,
    pub total: usize,
}

impl Cut {
    pub fn by_time(&self) -> bool {
        !self.expected_ms.is_empty()
    }

    /// The expected time of shard `index` (from 1), in ms.
    pub fn expected_of(&self, index: u32) -> u64 {
        self.expected_ms
            .get(index as usize - 1)
            .copied()
            .unwrap_or(0)
    }
}

/// Deals the cases of `case_runs` (each a case id and the case-run's expected ms, if known)
/// to `count` shards.
pub fn cut(case_runs: &[(String, Option<f64>)], count: u32) -> Cut {
    // Whole milliseconds, summed as integers: the same weights whatever order the case-runs
    // come in (a float sum's last bit depends on it).
    let mut cases: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut known: Vec<u64> = Vec::new();
    for (case, ms) in case_runs {
        let (sum, unknown) = cases.entry(case).or_default();
        match ms {
            Some(ms) => {
                let ms = ms.max(0.0).round() as u64;
                *sum = sum.saturating_add(ms);
                known.push(ms);
            }
            None => *unknown += 1,
        }
    }
    let timed = known.len();
    let total = case_runs.len();
    if timed == 0 {
        let shard_of = cases
            .keys()
            .enumerate()
            .map(|(i, k)| (k.to_string(), (i as u64 % u64::from(count)) as u32 + 1))
            .collect();
        return Cut {
            shard_of,
            expected_ms: Vec::new(),
            timed,
            total,
        };
    }
    known.sort_unstable();
    let fill = known[known.len() / 2];
    let mut weighed: Vec<(u64, &str)> = cases
        .iter()
        .map(|(k, (sum, unknown))| (sum.saturating_add(fill.saturating_mul(*unknown)), *k))
        .collect();
    weighed.sort_by_key(|(ms, k)| (Reverse(*ms), *k));
    // Shards past the number of cases would get none: only as many are weighed.
    let used = (count as usize).min(weighed.len()).max(1);
    let mut loads: BinaryHeap<Reverse<(u64, u32)>> =
        (1..=used as u32).map(|i| Reverse((0, i))).collect();
    let mut expected_ms = vec![0u64; used];
    let mut shard_of = BTreeMap::new();
    for (ms, k) in weighed {
        let Some(Reverse((load, i))) = loads.pop() else {
            break;
        };
        shard_of.insert(k.to_string(), i);
        expected_ms[i as usize - 1] = load.saturating_add(ms);
        loads.push(Reverse((load.saturating_add(ms), i)));
    }
    Cut {
        shard_of,
        expected_ms,
        timed,
        total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(cases: &[(&str, Option<f64>)]) -> Vec<(String, Option<f64>)> {
        cases.iter().map(|(c, ms)| (c.to_string(), *ms)).collect()
    }

    #[test]
    fn without_timings_cases_are_dealt_round_robin_in_sorted_order() {
        let keys = ["s/c5", "s/c1", "s/c3", "s/c2", "s/c4", "s/c1"];
        let c = cut(&runs(&keys.map(|k| (k, None))), 2);
        assert!(!c.by_time());
        let on = |k: u32| -> Vec<&str> {
            c.shard_of
                .iter()
                .filter(|(_, s)| **s == k)
                .map(|(c, _)| c.as_str())
                .collect()
        };
        assert_eq!(on(1), ["s/c1", "s/c3", "s/c5"]);
        assert_eq!(on(2), ["s/c2", "s/c4"]);
    }

    #[test]
    fn the_heaviest_case_goes_first_onto_the_least_loaded_shard() {
        // By count, shard 1 would take a, c, e (30 + 30 + 30) and shard 2 b, d (1 + 1).
        let c = cut(
            &runs(&[
                ("a", Some(30.0)),
                ("b", Some(1.0)),
                ("c", Some(30.0)),
                ("d", Some(1.0)),
                ("e", Some(30.0)),
                ("f", Some(29.0)),
            ]),
            2,
        );
        assert!(c.by_time());
        // a → 1, c → 2, e → 1 (a tie: the lower shard), f → 2, b → 2, d → 1.
        assert_eq!(c.expected_ms, vec![61, 60]);
        assert_eq!(c.shard_of["a"], 1);
        assert_eq!(c.shard_of["c"], 2);
        assert_eq!(c.shard_of["e"], 1);
        assert_eq!((c.timed, c.total), (6, 6));
    }

    #[test]
    fn a_cases_runs_stay_together_and_unseen_ones_weigh_the_median() {
        let c = cut(
            &runs(&[
                ("a", Some(10.0)),
                ("a", Some(10.0)),
                ("a", Some(10.0)),
                ("b", Some(10.0)),
                ("new", None),
            ]),
            2,
        );
        // a weighs 30; b 10 and new 10 (the median) share the other shard.
        assert_eq!(c.shard_of["a"], 1);
        assert_eq!(c.shard_of["b"], 2);
        assert_eq!(c.shard_of["new"], 2);
        assert_eq!(c.expected_ms, vec![30, 20]);
        assert_eq!((c.timed, c.total), (4, 5));
    }

    proptest::proptest! {
        /// Every case lands on exactly one shard in 1..=N, whatever order the case-runs come
        /// in, and no shard expects more than the mean plus the heaviest case (the greedy
        /// bound).
        #[test]
        fn every_case_once_in_any_order_within_the_greedy_bound(
            weights in proptest::collection::vec((0u8..40, proptest::option::of(0u32..100_000)), 0..60),
            count in 1u32..9,
            seed in 0usize..1000,
        ) {
            let runs: Vec<(String, Option<f64>)> = weights
                .iter()
                // Fractions of a millisecond: summing them in another order must not matter.
                .map(|(c, ms)| (format!("s/c{c}"), ms.map(|m| f64::from(m) / 7.0)))
                .collect();
            let c = cut(&runs, count);
            let cases: std::collections::BTreeSet<&String> = runs.iter().map(|(k, _)| k).collect();
            proptest::prop_assert_eq!(c.shard_of.len(), cases.len());
            proptest::prop_assert!(c.shard_of.values().all(|k| (1..=count).contains(k)));
            let mut shuffled = runs.clone();
            if !shuffled.is_empty() {
                let n = shuffled.len();
                shuffled.rotate_left(seed % n);
                shuffled.reverse();
            }
            proptest::prop_assert_eq!(&cut(&shuffled, count), &c);
            if c.by_time() {
                let total: u64 = c.expected_ms.iter().sum();
                let mean = total as f64 / f64::from(count);
                let heaviest = *c.expected_ms.iter().max().unwrap_or(&0) as f64;
                // The last case put on the slowest shard weighed at most the heaviest case,
                // and that shard was the least loaded (at most the mean) before it.
                let mut weight: std::collections::BTreeMap<&str, f64> = Default::default();
                let known: Vec<f64> = runs.iter().filter_map(|(_, m)| *m).collect();
                let mut sorted = known.clone();
                sorted.sort_by(f64::total_cmp);
                let fill = sorted[sorted.len() / 2];
                for (k, m) in &runs {
                    *weight.entry(k.as_str()).or_default() += m.unwrap_or(fill);
                }
                let biggest = weight.values().copied().fold(0.0, f64::max);
                // Each case-run is rounded to a whole millisecond first.
                let slack = runs.len() as f64;
                proptest::prop_assert!(heaviest <= mean + biggest + slack, "{:?}", c.expected_ms);
            }
        }
    }

    #[test]
    fn more_shards_than_cases_and_enormous_counts_are_bounded() {
        let c = cut(&runs(&[("a", Some(5.0)), ("b", Some(f64::MAX))]), u32::MAX);
        assert_eq!(c.shard_of["b"], 1);
        assert_eq!(c.shard_of["a"], 2);
        assert_eq!(c.expected_ms.len(), 2);
        assert_eq!(c.expected_of(u32::MAX), 0);
        let none = cut(&[], 3);
        assert!(none.shard_of.is_empty());
    }
}
