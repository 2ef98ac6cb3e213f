//! What a description scored on a set of queries, and whether one score beats another by more
//! than noise.

use serde::{Deserialize, Serialize};

use crate::stats::{fisher_exact, wilson};

/// One query's trigger runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryScore {
    pub id: String,
    pub query: String,
    pub should_trigger: bool,
    /// Runs where the skill fired.
    pub fired: u64,
    /// Runs that said whether it fired (an agent that failed says nothing).
    pub runs: u64,
}

impl QueryScore {
    /// Runs that did what the query expects.
    pub fn correct(&self) -> u64 {
        if self.should_trigger {
            self.fired
        } else {
            self.runs - self.fired
        }
    }

    /// Whether the query passes: its fire rate on the right side of the threshold.
    pub fn passes(&self, threshold: f64) -> bool {
        if self.runs == 0 {
            return false;
        }
        let rate = self.fired as f64 / self.runs as f64;
        (rate >= threshold) == self.should_trigger
    }
}

/// A description's score on a set of queries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Score {
    pub queries: Vec<QueryScore>,
    /// Trigger runs that did what their query expects, of `runs`.
    pub correct: u64,
    pub runs: u64,
    /// Runs whose agent failed, so they count neither way.
    pub failed: u64,
    /// What the agents reported spending, in USD.
    pub cost_usd: f64,
}

impl Score {
    pub fn from_queries(queries: Vec<QueryScore>, failed: u64, cost_usd: f64) -> Score {
        Score {
            correct: queries.iter().map(QueryScore::correct).sum(),
            runs: queries.iter().map(|q| q.runs).sum(),
            queries,
            failed,
            cost_usd,
        }
    }

    /// Correct runs over runs (0 when none said anything).
    pub fn accuracy(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.correct as f64 / self.runs as f64
        }
    }

    /// The Wilson 95% interval of the accuracy.
    pub fn interval(&self) -> (f64, f64) {
        wilson(self.correct, self.runs)
    }

    /// Recall and precision over runs: (fired on should-fire runs, should-fire among fired).
    pub fn recall_precision(&self) -> (Option<f64>, Option<f64>) {
        let tp: u64 = self
            .queries
            .iter()
            .filter(|q| q.should_trigger)
            .map(|q| q.fired)
            .sum();
        let pos: u64 = self
            .queries
            .iter()
            .filter(|q| q.should_trigger)
            .map(|q| q.runs)
            .sum();
        let fp: u64 = self
            .queries
            .iter()
            .filter(|q| !q.should_trigger)
            .map(|q| q.fired)
            .sum();
        let ratio = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        (ratio(tp, pos), ratio(tp, tp + fp))
    }

    /// The queries that did not pass, for the proposer.
    pub fn misses(&self, threshold: f64) -> Vec<&QueryScore> {
        self.queries
            .iter()
            .filter(|q| !q.passes(threshold))
            .collect()
    }
}

/// The verdict on a candidate against the current description, on the holdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateVerdict {
    /// Two-sided p-value of Fisher's exact test on the holdout's correct and wrong runs.
    pub p_value: f64,
    /// The level the p-value must be under: `alpha` divided among every holdout comparison the
    /// optimisation may make (Bonferroni), so trying many candidates does not manufacture a win.
    pub level: f64,
    pub better: bool,
    pub significant: bool,
}

/// Compares a candidate's holdout score with the current description's.
pub fn compare(candidate: &Score, current: &Score, level: f64) -> CandidateVerdict {
    let p_value = fisher_exact(
        candidate.correct,
        candidate.runs - candidate.correct,
        current.correct,
        current.runs - current.correct,
    );
    let better = candidate.accuracy() > current.accuracy();
    CandidateVerdict {
        p_value,
        level,
        better,
        significant: better && p_value < level,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(per: &[(bool, u64, u64)]) -> Score {
        let q = per
            .iter()
            .enumerate()
            .map(|(i, &(should, fired, runs))| QueryScore {
                id: format!("q{i}"),
                query: String::new(),
                should_trigger: should,
                fired,
                runs,
            })
            .collect();
        Score::from_queries(q, 0, 0.0)
    }

    #[test]
    fn a_real_gain_is_significant_and_noise_is_not() {
        // Holdout: 2 should-fire, 2 should-not, 3 runs each.
        let current = score(&[(true, 0, 3), (true, 0, 3), (false, 0, 3), (false, 0, 3)]);
        assert_eq!((current.correct, current.runs), (6, 12));
        let keyword = score(&[(true, 3, 3), (true, 3, 3), (false, 0, 3), (false, 0, 3)]);
        let c = compare(&keyword, &current, 0.025);
        assert!(c.better && c.significant, "{c:?}");
        assert!(c.p_value < 0.02, "{c:?}");
        let noise = score(&[(true, 3, 3), (true, 0, 3), (false, 0, 3), (false, 0, 3)]);
        let c = compare(&noise, &current, 0.025);
        assert!(c.better && !c.significant, "{c:?}");
        let worse = score(&[(true, 0, 3), (true, 0, 3), (false, 3, 3), (false, 0, 3)]);
        assert!(!compare(&worse, &current, 0.5).significant);
    }

    #[test]
    fn queries_pass_by_the_threshold_and_misses_are_listed() {
        let s = score(&[(true, 2, 3), (true, 1, 3), (false, 2, 3), (false, 0, 0)]);
        let misses: Vec<&str> = s.misses(0.5).iter().map(|q| q.id.as_str()).collect();
        assert_eq!(misses, ["q1", "q2", "q3"]);
        assert_eq!(s.recall_precision(), (Some(0.5), Some(0.6)));
    }
}
