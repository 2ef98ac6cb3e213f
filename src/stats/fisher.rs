//! Fisher's exact test: does a skill change the pass rate, or is the difference luck?
//!
//! Exact rather than chi-squared because eval tables are small and often have zero cells,
//! where the chi-squared approximation is wrong.

/// `ln(k!)`: summed directly for small k, Stirling's series (error below 1e-14) beyond, so no
/// table has to be allocated however large the counts are.
fn ln_factorial(k: u64) -> f64 {
    if k < 16 {
        return (2..=k).map(|i| (i as f64).ln()).sum();
    }
    let x = k as f64;
    let (x2, ln_2pi) = (x * x, (2.0 * std::f64::consts::PI).ln());
    let series = (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - 1.0 / (1680.0 * x2)) / x2) / x2) / x;
    x * x.ln() - x + 0.5 * (ln_2pi + x.ln()) + series
}

fn ln_choose(n: u64, k: u64) -> f64 {
    ln_factorial(n) - ln_factorial(k) - ln_factorial(n - k)
}

/// Two-sided p-value of Fisher's exact test on `[[a, b], [c, d]]` — with the skill `a` passes
/// and `b` fails, the baseline `c` passes and `d` fails — defined as R's `fisher.test`: the
/// total probability of the tables with these margins no more likely than the observed one
/// (with R's relative tolerance of 1e-7, so ties in exact arithmetic stay ties).
///
/// An empty table carries no evidence: 1.0. So do counts too large to add up in a u64.
pub fn fisher_exact(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let margins = (|| {
        let row1 = a.checked_add(b)?;
        let col1 = a.checked_add(c)?;
        Some((row1, col1, row1.checked_add(c.checked_add(d)?)?))
    })();
    let Some((row1, col1, n)) = margins else {
        return 1.0;
    };
    if n == 0 {
        return 1.0;
    }
    let row2 = n - row1;
    // Log-probability of the table whose top-left cell is x (hypergeometric).
    let base = ln_choose(n, col1);
    let ln_p = |x: u64| ln_choose(row1, x) + ln_choose(row2, col1 - x) - base;
    let (lo, hi) = (col1.saturating_sub(row2), row1.min(col1));
    let threshold = ln_p(a) + 1e-7f64.ln_1p();

    // The distribution is unimodal: walk out from the mode both ways and stop once the terms
    // underflow, rather than visiting the whole (possibly huge) support.
    let mode = (u128::from(col1) + 1).saturating_mul(u128::from(row1) + 1) / (u128::from(n) + 2);
    let mode = u64::try_from(mode).unwrap_or(hi).clamp(lo, hi);
    let down = tail((lo..=mode).rev().map(&ln_p), threshold);
    let up = tail((mode..=hi).skip(1).map(&ln_p), threshold);
    (down + up).clamp(0.0, 1.0)
}

/// Sums the probabilities at or below `threshold` from log-probabilities that only fall,
/// stopping where `exp` underflows to zero since every later term is smaller still.
fn tail(ln_ps: impl Iterator<Item = f64>, threshold: f64) -> f64 {
    ln_ps
        .take_while(|&lp| lp >= -746.0)
        .filter(|&lp| lp <= threshold)
        .map(f64::exp)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values: exact rational sums (Python `math.comb`); the first four are R's too.
    #[test]
    fn known_values() {
        let cases = [
            ((3, 1, 1, 3), 0.485_714_285_714_285_7), // R's tea-tasting example
            ((10, 0, 0, 10), 1.082_508_822_446_903e-5),
            ((8, 2, 1, 9), 0.005_477_494_642_473_596),
            ((1, 9, 11, 3), 0.002_759_456_185_220_083),
            ((0, 7, 3, 0), 0.008_333_333_333_333_333),
            ((500, 300, 400, 400), 5.860_004_867_744_902e-7),
            ((5000, 4800, 5200, 5000), 0.966_145_385_106_657_4),
            ((0, 3000, 20, 2980), 1.847_704_674_702_568_4e-6),
        ];
        for ((a, b, c, d), want) in cases {
            let got = fisher_exact(a, b, c, d);
            assert!(
                (got - want).abs() <= 1e-9 * want,
                "{a} {b} {c} {d}: {got} != {want}"
            );
        }
    }

    #[test]
    fn no_evidence_is_one() {
        assert_eq!(fisher_exact(0, 0, 0, 0), 1.0);
        for (a, b, c, d) in [(5, 5, 5, 5), (1, 0, 0, 0), (0, 0, 4, 6)] {
            assert!((fisher_exact(a, b, c, d) - 1.0).abs() < 1e-12);
        }
        // Swapping rows or columns does not change the evidence.
        assert!((fisher_exact(1, 9, 8, 2) - fisher_exact(8, 2, 1, 9)).abs() < 1e-15);
    }

    #[test]
    fn ln_factorial_is_accurate() {
        let mut exact = 0.0f64;
        for k in 1..=200u64 {
            exact += (k as f64).ln();
            assert!(
                (ln_factorial(k) - exact).abs() < 1e-12 * exact.max(1.0),
                "{k}"
            );
        }
    }

    #[test]
    fn extreme_inputs_stay_finite() {
        let p = fisher_exact(50_000, 50_000, 50_000, 50_000);
        assert!(p.is_finite() && (p - 1.0).abs() < 1e-6, "{p}");
        assert_eq!(fisher_exact(50_000, 0, 0, 50_000), 0.0); // below f64's smallest value
        assert_eq!(fisher_exact(u64::MAX, 1, 0, 0), 1.0); // the counts overflow
        assert_eq!(fisher_exact(u64::MAX, 0, 0, 0), 1.0);
        let p = fisher_exact(u64::MAX / 2, 0, 0, u64::MAX / 2);
        assert!(p.is_finite() && (0.0..=1.0).contains(&p));
    }
}
