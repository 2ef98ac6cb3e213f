//! How well a grader (or a judge model) separates passing outputs from failing ones.

/// Counts of a binary classifier's verdicts against the truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Confusion {
    /// Said pass, was pass.
    pub tp: u64,
    /// Said pass, was fail.
    pub fp: u64,
    /// Said fail, was fail.
    pub tn: u64,
    /// Said fail, was pass.
    pub fn_: u64,
}

/// `num / den`, or `None` for an empty denominator: a rate of nothing is unknown, not 0.
/// Sums are u128 so adding counts cannot overflow.
fn ratio(num: u128, den: u128) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

impl Confusion {
    /// Counts one verdict: what the classifier `said` against the `truth`.
    pub fn count(&mut self, said: bool, truth: bool) {
        match (said, truth) {
            (true, true) => self.tp += 1,
            (true, false) => self.fp += 1,
            (false, false) => self.tn += 1,
            (false, true) => self.fn_ += 1,
        }
    }

    /// Of the outputs called pass, the fraction that were. `None` when nothing was called pass.
    pub fn precision(&self) -> Option<f64> {
        let tp = u128::from(self.tp);
        ratio(tp, tp + u128::from(self.fp))
    }

    /// Of the outputs that were pass, the fraction called pass. `None` when none were.
    pub fn recall(&self) -> Option<f64> {
        let tp = u128::from(self.tp);
        ratio(tp, tp + u128::from(self.fn_))
    }

    /// The fraction of all verdicts that were right. `None` when there are no verdicts.
    pub fn accuracy(&self) -> Option<f64> {
        let [tp, fp, tn, fn_] = [self.tp, self.fp, self.tn, self.fn_].map(u128::from);
        ratio(tp + tn, tp + fp + tn + fn_)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(tp: u64, fp: u64, tn: u64, fn_: u64) -> Confusion {
        Confusion { tp, fp, tn, fn_ }
    }

    #[test]
    fn small_example() {
        let c = m(6, 2, 9, 3);
        assert_eq!((c.precision(), c.recall()), (Some(0.75), Some(6.0 / 9.0)));
        assert_eq!(c.accuracy(), Some(0.75));
    }

    #[test]
    fn empty_denominators() {
        let c = Confusion::default();
        assert_eq!(
            (c.precision(), c.recall(), c.accuracy()),
            (None, None, None)
        );
        let c = m(0, 0, 4, 0);
        assert_eq!(
            (c.precision(), c.recall(), c.accuracy()),
            (None, None, Some(1.0))
        );
        let c = m(u64::MAX, u64::MAX, u64::MAX, u64::MAX);
        assert_eq!((c.precision(), c.accuracy()), (Some(0.5), Some(0.5)));
    }
}
