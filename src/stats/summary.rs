//! Spread of scores and agreement between repeated runs.

/// Mean and sample standard deviation (n - 1 denominator) of the finite values in `xs`.
///
/// Non-finite values (a failed or missing score) are skipped rather than poisoning the result;
/// `None` when no finite value is left. One value has sd 0. Welford's update keeps the
/// variance accurate when the values sit far from zero.
pub fn mean_sd(xs: &[f64]) -> Option<(f64, f64)> {
    let (mut count, mut mean, mut m2) = (0u64, 0.0f64, 0.0f64);
    for &x in xs.iter().filter(|x| x.is_finite()) {
        count += 1;
        let delta = x - mean;
        mean += delta / count as f64;
        m2 += delta * (x - mean);
    }
    match count {
        0 => None,
        1 => Some((mean, 0.0)),
        _ => Some((mean, (m2 / (count - 1) as f64).max(0.0).sqrt())),
    }
}

/// The fraction of runs agreeing with the majority verdict, `max(c, n - c) / n`: 1.0 is a case
/// that always gives the same answer, 0.5 a coin toss. No runs disagree when `n == 0`, so 1.0;
/// `passes > n` counts as `n`.
pub fn stability(passes: u64, n: u64) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let c = passes.min(n);
    c.max(n - c) as f64 / n as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_sd_known_values() {
        let (m, sd) = mean_sd(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((m - 2.5).abs() < 1e-12);
        assert!((sd - 1.290_994_448_735_805_6).abs() < 1e-12);
        assert_eq!(mean_sd(&[7.0]), Some((7.0, 0.0)));
        assert_eq!(
            mean_sd(&[3.0, f64::NAN, f64::INFINITY, 3.0]),
            Some((3.0, 0.0))
        );
        let (m, sd) = mean_sd(&[1e9 + 1.0, 1e9 + 2.0, 1e9 + 3.0]).unwrap();
        assert!((m - (1e9 + 2.0)).abs() < 1e-6 && (sd - 1.0).abs() < 1e-9);
        assert_eq!(mean_sd(&[]), None);
        assert_eq!(mean_sd(&[f64::NAN, f64::NEG_INFINITY]), None);
    }

    #[test]
    fn stability_known_values() {
        assert_eq!(stability(4, 5), 0.8);
        assert_eq!(stability(1, 5), 0.8);
        assert_eq!(stability(0, 0), 1.0);
        assert_eq!((stability(9, 5), stability(2, 4)), (1.0, 0.5));
    }
}
