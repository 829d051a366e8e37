//! Welch's t-test between two estimates that may have different standard
//! errors and degrees of freedom.

use super::{two_sided_p, Estimate};

/// The outcome of testing whether two estimates differ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TestOutcome {
    /// `(other − base) / combined standard error`.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Tests `other` against `base`; `None` when neither has any spread (the
/// data cannot say how large a chance difference would be).
pub fn test(base: &Estimate, other: &Estimate) -> Option<TestOutcome> {
    let (va, vb) = (base.se.powi(2), other.se.powi(2));
    let combined = va + vb;
    if combined.is_nan() || combined <= 0.0 {
        return None;
    }
    let t = (other.value - base.value) / combined.sqrt();
    let df = combined.powi(2) / (va.powi(2) / base.df + vb.powi(2) / other.df);
    Some(TestOutcome {
        t,
        df,
        p: two_sided_p(t, df),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(value: f64, se: f64, df: f64) -> Estimate {
        Estimate {
            value,
            se,
            df,
            samples: df as usize + 1,
        }
    }

    #[test]
    fn equal_errors_give_the_pooled_degrees_of_freedom() {
        let outcome = test(&estimate(10.0, 1.0, 9.0), &estimate(13.0, 1.0, 9.0)).unwrap();
        assert!((outcome.t - 3.0 / 2f64.sqrt()).abs() < 1e-12);
        assert!((outcome.df - 18.0).abs() < 1e-9);
        assert!(outcome.p > 0.01 && outcome.p < 0.1);
    }

    #[test]
    fn the_sign_follows_the_direction() {
        let down = test(&estimate(10.0, 0.1, 9.0), &estimate(5.0, 0.1, 9.0)).unwrap();
        assert!(down.t < 0.0 && down.p < 1e-6);
    }

    #[test]
    fn no_spread_means_no_test() {
        assert!(test(&estimate(1.0, 0.0, 9.0), &estimate(2.0, 0.0, 9.0)).is_none());
    }
}
