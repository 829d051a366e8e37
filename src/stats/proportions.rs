//! The two-proportion z test: whether the share of trials with an outcome
//! differs between two samples of independent trials.

use statrs::distribution::{ContinuousCDF as _, Normal};

/// The outcome of comparing two proportions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProportionTest {
    /// `(other − base) / pooled standard error`.
    pub z: f64,
    /// Two-sided p-value (standard normal).
    pub p: f64,
}

/// Tests `other_hits` of `other_trials` against `base_hits` of
/// `base_trials`, with the pooled proportion's standard error; `None` when
/// a sample has no trials, or neither sample has a hit or both are all
/// hits (chance cannot be sized).
pub fn test(
    base_hits: u64,
    base_trials: u64,
    other_hits: u64,
    other_trials: u64,
) -> Option<ProportionTest> {
    if base_trials == 0 || other_trials == 0 {
        return None;
    }
    let (n1, n2) = (base_trials as f64, other_trials as f64);
    let pooled = (base_hits + other_hits) as f64 / (n1 + n2);
    let se = (pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2)).sqrt();
    if se.is_nan() || se <= 0.0 {
        return None;
    }
    let z = (other_hits as f64 / n2 - base_hits as f64 / n1) / se;
    let normal = Normal::standard();
    Some(ProportionTest {
        z,
        p: 2.0 * normal.sf(z.abs()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_textbook_case() {
        // 120 of 200 against 90 of 200: pooled 0.525, se 0.04993, z −3.004.
        let t = test(120, 200, 90, 200).unwrap();
        assert!((t.z + 3.004).abs() < 1e-3, "{t:?}");
        assert!((t.p - 0.00266).abs() < 1e-4, "{t:?}");
        let same = test(50, 100, 50, 100).unwrap();
        assert_eq!(same.z, 0.0);
        assert!((same.p - 1.0).abs() < 1e-12);
    }

    #[test]
    fn no_spread_or_no_trials_cannot_be_tested() {
        assert_eq!(test(0, 100, 0, 100), None);
        assert_eq!(test(100, 100, 50, 50), None);
        assert_eq!(test(3, 0, 1, 10), None);
    }
}
