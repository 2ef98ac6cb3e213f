//! Confidence interval for a pass rate.

/// The 97.5th percentile of the standard normal: a two-sided 95% interval.
const Z: f64 = 1.959963984540054;

/// The Wilson score 95% interval for `passes` out of `n` runs.
///
/// Wilson rather than the normal (Wald) interval because eval suites run few times and often
/// pass all or none: Wald collapses to zero width at 0/n and n/n, Wilson stays honest.
/// `n == 0` tells nothing, so the whole of [0, 1]; `passes > n` counts as `n`.
pub fn wilson(passes: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let passes = passes.min(n);
    let nf = n as f64;
    let p = passes as f64 / nf;
    let z2 = Z * Z;
    let denom = 1.0 + z2 / nf;
    let centre = (p + z2 / (2.0 * nf)) / denom;
    let half = Z * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt() / denom;
    // The bounds are exact at 0/n and n/n; pin them so rounding cannot print 0.9999999999999999.
    let lo = if passes == 0 { 0.0 } else { centre - half };
    let hi = if passes == n { 1.0 } else { centre + half };
    (lo.clamp(0.0, 1.0), hi.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: (f64, f64), want: (f64, f64)) {
        assert!(
            (got.0 - want.0).abs() < 1e-4 && (got.1 - want.1).abs() < 1e-4,
            "{got:?} != {want:?}"
        );
    }

    #[test]
    fn known_values() {
        close(wilson(0, 10), (0.0, 0.2775));
        close(wilson(5, 10), (0.2366, 0.7634));
        close(wilson(8, 10), (0.4902, 0.9433));
        close(wilson(10, 10), (0.7225, 1.0));
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(wilson(0, 0), (0.0, 1.0));
        assert_eq!(wilson(7, 0), (0.0, 1.0));
        assert_eq!(wilson(12, 10), wilson(10, 10));
        assert_eq!(wilson(10, 10).1, 1.0);
        let (lo, hi) = wilson(u64::MAX / 2, u64::MAX);
        assert!(lo.is_finite() && hi.is_finite() && lo <= hi);
    }
}
