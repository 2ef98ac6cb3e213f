//! Unbiased pass@k and pass^k estimates from n runs of which c passed.
//!
//! Both are ratios of binomial coefficients, which overflow long before n gets interesting,
//! so they are computed as products of factors in [0, 1] instead.

/// `C(a, m) / C(b, m)` as `prod_{j<m} (a - j) / (b - j)`, for `a <= b` and `m <= b`.
///
/// Stops at the first zero factor (`j == a`) and once the product underflows.
fn binom_ratio(a: u64, b: u64, m: u64) -> f64 {
    let mut prod = 1.0;
    for j in 0..m {
        if j >= a || prod == 0.0 {
            return 0.0;
        }
        prod *= (a - j) as f64 / (b - j) as f64;
    }
    prod
}

/// pass@k (Chen et al. 2021, the Codex paper): the chance that at least one of k runs drawn
/// without replacement from the n observed passes, `1 - C(n-c, k) / C(n, k)`.
///
/// `None` when k is 0, n is 0 or k > n: there are not k runs to draw. `c > n` counts as `n`.
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if n == 0 || k == 0 || k > n {
        return None;
    }
    let c = c.min(n);
    if n - c < k {
        return Some(1.0); // every draw of k includes a pass
    }
    // C(n-c, k)/C(n, k) == C(n-k, c)/C(n, c): loop over whichever of k and c is shorter.
    let all_fail = if k <= c {
        binom_ratio(n - c, n, k)
    } else {
        binom_ratio(n - k, n, c)
    };
    Some((1.0 - all_fail).clamp(0.0, 1.0))
}

/// pass^k (τ-bench): the chance that k runs drawn without replacement ALL pass,
/// `C(c, k) / C(n, k)` — a reliability measure, where pass@k is a capability one.
///
/// `None` when k is 0, n is 0 or k > n. `c > n` counts as `n`.
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if n == 0 || k == 0 || k > n {
        return None;
    }
    let c = c.min(n);
    // C(c, k)/C(n, k) == C(n-k, n-c)/C(n, n-c): loop over whichever of k and n-c is shorter.
    let all_pass = if k <= n - c {
        binom_ratio(c, n, k)
    } else {
        binom_ratio(n - k, n, n - c)
    };
    Some(all_pass.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: Option<f64>, want: f64) {
        let got = got.expect("a value");
        assert!((got - want).abs() < 1e-12, "{got} != {want}");
    }

    /// Exact binomial coefficient for small arguments, to check the products against.
    fn comb(n: u64, k: u64) -> f64 {
        if k > n {
            return 0.0;
        }
        (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
    }

    #[test]
    fn pass_at_k_known_values() {
        close(pass_at_k(10, 3, 1), 0.3);
        close(pass_at_k(10, 3, 5), 1.0 - 21.0 / 252.0);
        close(pass_at_k(5, 0, 1), 0.0);
        close(pass_at_k(5, 5, 5), 1.0);
        assert_eq!(pass_at_k(5, 2, 6), None);
        assert_eq!(pass_at_k(5, 2, 0), None);
        assert_eq!(pass_at_k(0, 0, 1), None);
        assert_eq!(pass_at_k(5, 9, 2), pass_at_k(5, 5, 2));
    }

    #[test]
    fn pass_hat_k_known_values() {
        close(pass_hat_k(10, 3, 2), 3.0 / 45.0);
        close(pass_hat_k(5, 5, 5), 1.0);
        close(pass_hat_k(5, 4, 5), 0.0);
        close(pass_hat_k(10, 7, 1), 0.7);
        assert_eq!(pass_hat_k(5, 2, 6), None);
        assert_eq!(pass_hat_k(5, 2, 0), None);
        assert_eq!(pass_hat_k(0, 0, 0), None);
        assert_eq!(pass_hat_k(5, 9, 2), Some(1.0));
    }

    #[test]
    fn products_match_binomials() {
        for n in 1..=20 {
            for c in 0..=n {
                for k in 1..=n {
                    let at = 1.0 - comb(n - c, k) / comb(n, k);
                    let hat = comb(c, k) / comb(n, k);
                    assert!((pass_at_k(n, c, k).unwrap() - at).abs() < 1e-9);
                    assert!((pass_hat_k(n, c, k).unwrap() - hat).abs() < 1e-9);
                }
            }
        }
    }

    #[test]
    fn huge_inputs_stay_finite() {
        let (n, h) = (u64::MAX, u64::MAX / 2);
        close(pass_at_k(n, n - 1, 2), 1.0);
        close(pass_hat_k(n, 1, 2), 0.0);
        for p in [pass_at_k(n, h, h), pass_hat_k(n, h, h)] {
            assert!(p.is_some_and(|p| (0.0..=1.0).contains(&p)));
        }
    }
}
