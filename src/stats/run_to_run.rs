//! How much a figure moves from one run to the next: half the mean squared
//! difference between successive runs of a series, in the order they ran
//! (von Neumann's estimator of a variance). Drift between runs is in it, as
//! it is between two runs a user compares; a change of level somewhere in
//! the series (a kernel that moved the figure) adds one difference, where
//! the ordinary variance would count a whole segment's distance from the
//! mean.

/// The variance of one run's figure about the next run's, with its
/// degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunToRun {
    /// Variance of a single run's value (in the figure's unit squared).
    pub variance: f64,
    /// Degrees of freedom of a χ² with the estimator's variance:
    /// `2 (n − 1)² / (3n − 4)` per series of `n` normal runs, summed.
    pub df: f64,
    /// Runs the estimate came from.
    pub runs: usize,
}

/// The run-to-run spread pooled over `series`, each a series' values in
/// run order: every successive difference of every series counts alike.
/// `None` with fewer than `min_runs` runs in all, without two runs in one
/// series, or with a value that is not finite.
pub fn pooled(series: &[Vec<f64>], min_runs: usize) -> Option<RunToRun> {
    let values = series.iter().flatten();
    if values.clone().any(|v| !v.is_finite()) {
        return None;
    }
    let runs: usize = series.iter().map(Vec::len).sum();
    let (mut squares, mut differences, mut df) = (0.0, 0usize, 0.0);
    for s in series.iter().filter(|s| s.len() >= 2) {
        squares += s.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum::<f64>();
        differences += s.len() - 1;
        let n = s.len() as f64;
        df += 2.0 * (n - 1.0).powi(2) / (3.0 * n - 4.0);
    }
    (runs >= min_runs && differences > 0).then(|| RunToRun {
        variance: squares / (2.0 * differences as f64),
        df,
        runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, SeedableRng as _};
    use rand_distr::{Distribution as _, Normal};

    #[test]
    fn a_known_series() {
        // Differences 1, 1, -2: squares 6 over 2 x 3.
        let s = pooled(&[vec![1.0, 2.0, 3.0, 1.0]], 2).unwrap();
        assert!((s.variance - 1.0).abs() < 1e-12);
        assert!((s.df - 2.0 * 9.0 / 8.0).abs() < 1e-12);
        assert_eq!(s.runs, 4);
    }

    #[test]
    fn it_estimates_the_variance_of_noise() {
        let mut rng = StdRng::seed_from_u64(3);
        let normal = Normal::new(50.0, 2.0).unwrap();
        let values: Vec<f64> = (0..4000).map(|_| normal.sample(&mut rng)).collect();
        let s = pooled(&[values], 2).unwrap();
        assert!((s.variance - 4.0).abs() < 0.3, "{s:?}");
    }

    #[test]
    fn a_step_in_the_series_counts_once() {
        let mut steps = vec![10.0, 11.0, 10.0, 11.0, 10.0, 11.0];
        steps.extend([20.0, 21.0, 20.0, 21.0, 20.0, 21.0]);
        let s = pooled(&[steps.clone()], 2).unwrap();
        // Ten differences of 1 and one of 9: 91 / 22, where the ordinary
        // variance is about 27.
        assert!((s.variance - 91.0 / 22.0).abs() < 1e-12);
    }

    #[test]
    fn series_pool_their_differences_but_not_across() {
        let s = pooled(&[vec![1.0, 3.0], vec![100.0, 100.0, 100.0]], 2).unwrap();
        assert!((s.variance - 4.0 / 6.0).abs() < 1e-12);
        assert_eq!(s.runs, 5);
    }

    #[test]
    fn too_few_runs_or_broken_values_give_none() {
        assert!(pooled(&[vec![1.0, 2.0, 3.0]], 4).is_none());
        assert!(pooled(&[vec![1.0], vec![2.0], vec![3.0], vec![4.0]], 4).is_none());
        assert!(pooled(&[vec![1.0, f64::NAN, 3.0, 4.0]], 2).is_none());
        assert!(pooled(&[], 0).is_none());
    }
}
