//! The statistics behind confidence intervals and comparisons: estimates
//! with a standard error and Student t degrees of freedom, batch means that
//! respect autocorrelation, Welch's test between two estimates, the
//! two-proportion test between two shares of events and a share's error
//! over a run's sub-windows (`ratio`), and how much a figure moves from one
//! run to the next (`run_to_run`); Holm's correction for many tests. For
//! experiments over rounds: the arms' order in each round (`order`), the
//! paired test of two arms over rounds (`paired`) and Benjamini–Hochberg
//! q-values (`fdr`).

pub mod batch_means;
#[cfg(test)]
mod calibration;
pub mod changepoint;
pub mod fdr;
pub mod order;
pub mod paired;
pub mod proportions;
pub mod ratio;
pub mod run_to_run;
pub mod welch;

use statrs::distribution::{ContinuousCDF as _, StudentsT};

/// A figure's estimate with its uncertainty: `value` has standard error
/// `se`, and `(value − true value) / se` follows Student t with `df`
/// degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub se: f64,
    pub df: f64,
    /// Independent samples the spread came from.
    pub samples: usize,
}

impl Estimate {
    /// The mean of `samples` treated as independent: standard error
    /// `sd / √n`, `n − 1` degrees of freedom. `None` for fewer than two
    /// samples or any that is not finite.
    pub fn of_samples(samples: &[f64]) -> Option<Self> {
        let n = samples.len();
        if n < 2 || samples.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mean = samples.iter().sum::<f64>() / n as f64;
        let variance = samples.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        Some(Self {
            value: mean,
            se: (variance / n as f64).sqrt(),
            df: (n - 1) as f64,
            samples: n,
        })
    }

    /// The same uncertainty around another centre (a figure computed from
    /// all the data, such as the p99 of a whole histogram).
    pub fn centred_on(self, value: f64) -> Self {
        Self { value, ..self }
    }

    /// The two-sided interval that holds the true value with probability
    /// `level` (0.95 for 95 %).
    pub fn interval(&self, level: f64) -> (f64, f64) {
        let half = t_quantile(0.5 + level / 2.0, self.df) * self.se;
        (self.value - half, self.value + half)
    }
}

/// Holm's step-down adjustment of `p_values`: each is a discovery at
/// `alpha` when its adjusted value is below `alpha`, and the chance of any
/// false one among them all is then at most `alpha` (whatever their
/// dependence). The `k`-th smallest is multiplied by `m − k + 1`, then
/// made no smaller than those before it.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut adjusted = vec![1.0; m];
    let mut largest = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        largest = largest.max((p_values[i] * (m - rank) as f64).min(1.0));
        adjusted[i] = largest;
    }
    adjusted
}

/// The `p` quantile of Student t with `df` degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    student_t(df).inverse_cdf(p)
}

/// Probability that Student t with `df` degrees of freedom is at least `|t|`
/// away from 0 (the two-sided p-value).
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    2.0 * student_t(df).sf(t.abs())
}

fn student_t(df: f64) -> StudentsT {
    StudentsT::new(0.0, 1.0, df).expect("degrees of freedom are positive")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_standard_error_of_samples() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7.
        let e = Estimate::of_samples(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((e.value - 5.0).abs() < 1e-12);
        assert!((e.se - (32.0 / 7.0 / 8.0_f64).sqrt()).abs() < 1e-12);
        assert_eq!(e.df, 7.0);
        assert_eq!(e.samples, 8);
    }

    #[test]
    fn too_few_or_broken_samples_give_no_estimate() {
        assert!(Estimate::of_samples(&[1.0]).is_none());
        assert!(Estimate::of_samples(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn holm_by_hand() {
        // Sorted 0.001, 0.01, 0.02, 0.5: times 4, 3, 2, 1 = 0.004, 0.03,
        // 0.04, 0.5.
        let adjusted = holm(&[0.02, 0.5, 0.001, 0.01]);
        let expected = [0.04, 0.5, 0.004, 0.03];
        for (a, e) in adjusted.iter().zip(expected) {
            assert!((a - e).abs() < 1e-12, "{adjusted:?}");
        }
        // Never below an earlier one, never above 1.
        assert_eq!(holm(&[0.3, 0.2]), [0.4, 0.4]);
        assert_eq!(holm(&[0.9, 0.8, 0.7]), [1.0, 1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        assert!((t_quantile(0.975, 9.0) - 2.262).abs() < 1e-3);
        assert!((t_quantile(0.995, 4.0) - 4.604).abs() < 1e-3);
        assert!((two_sided_p(2.262, 9.0) - 0.05).abs() < 1e-3);
    }

    #[test]
    fn interval_is_symmetric_and_widens_with_level() {
        let e = Estimate {
            value: 10.0,
            se: 1.0,
            df: 9.0,
            samples: 10,
        };
        let (low, high) = e.interval(0.95);
        assert!((10.0 - low - 2.262).abs() < 1e-3 && (high - 10.0 - 2.262).abs() < 1e-3);
        let (low99, high99) = e.interval(0.99);
        assert!(low99 < low && high99 > high);
    }
}
