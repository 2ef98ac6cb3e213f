//! Confidence interval for a pass rate.

/// The 97.5th percentile of the standard normal: a two-sided 95% interval.
const Z: f64 = 1.959963984540054;

/// The Wilson score 95% interval for `passes` out of `n` runs.
///
/// Wilson rather than the normal (Wald) interval because eval suites run few times and often
/// pass all or none: Wald collapses to zero width at 0/n and n/n, Wilson stays honest.
/// `n == 0` tells nothing, so the whole of [0, 1]; `passes > n` counts as `n`.
pub fn wilson(passes: u64, n: u64) -> (f64, f64) {
    wilson_z(passes, n, Z)
}

/// The Wilson score interval at a two-sided `confidence` (0.8, 0.9, 0.95, …).
pub fn wilson_at(passes: u64, n: u64, confidence: f64) -> (f64, f64) {
    wilson_z(passes, n, z_of(confidence))
}

/// The standard normal quantile for a two-sided `confidence`: Φ⁻¹((1 + confidence) / 2), by
/// Acklam's rational approximation (relative error under 1.2e-9).
pub fn z_of(confidence: f64) -> f64 {
    let p = ((1.0 + confidence.clamp(1e-9, 1.0 - 1e-12)) / 2.0).clamp(0.5, 1.0 - 1e-12);
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    if p <= 1.0 - 0.02425 {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    }
}

fn wilson_z(passes: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let passes = passes.min(n);
    let nf = n as f64;
    let p = passes as f64 / nf;
    let z2 = z * z;
    let denom = 1.0 + z2 / nf;
    let centre = (p + z2 / (2.0 * nf)) / denom;
    let half = z * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt() / denom;
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
    fn quantiles_and_intervals_at_other_confidences() {
        assert!((z_of(0.95) - 1.959963984540054).abs() < 1e-8);
        assert!((z_of(0.9) - 1.6448536269514729).abs() < 1e-8);
        assert!((z_of(0.99) - 2.5758293035489).abs() < 1e-8);
        close(wilson_at(7, 10, 0.95), wilson(7, 10));
        // 3 of 3 at 90%: the lower bound is n / (n + z²).
        let z2 = z_of(0.9).powi(2);
        close(wilson_at(3, 3, 0.9), (3.0 / (3.0 + z2), 1.0));
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
