//! Batch means: figures of consecutive sub-windows of one measurement are
//! treated as samples only after neighbours that are still correlated have
//! been merged. Latencies of successive periods are not independent (a busy
//! second makes many late frames), so tens of thousands of them are not
//! tens of thousands of samples; a handful of long enough sub-windows are.

use super::Estimate;

/// Fewest batches kept after merging: below this the t interval is too
/// wide to say anything, and the autocorrelation test has no power.
pub const MIN_BATCHES: usize = 5;

/// z of a one-sided 5 % test: neighbours are merged while the lag-1
/// autocorrelation exceeds `Z_ONE_SIDED_5PCT / √n`.
const Z_ONE_SIDED_5PCT: f64 = 1.645;

/// Lag-1 autocorrelation of `values` (0 when they do not vary).
pub fn lag1_autocorrelation(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let variance: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    if variance == 0.0 {
        return 0.0;
    }
    let covariance: f64 = values
        .windows(2)
        .map(|w| (w[0] - mean) * (w[1] - mean))
        .sum();
    covariance / variance
}

/// Halves the batches (averaging neighbours; an odd last one joins the pair
/// before it) while they are positively autocorrelated and at least
/// [`MIN_BATCHES`] would remain.
pub fn decorrelate(values: &[f64]) -> Vec<f64> {
    let mut batches = values.to_vec();
    while batches.len() / 2 >= MIN_BATCHES
        && lag1_autocorrelation(&batches) > Z_ONE_SIDED_5PCT / (batches.len() as f64).sqrt()
    {
        batches = merge_neighbours(&batches);
    }
    batches
}

fn merge_neighbours(values: &[f64]) -> Vec<f64> {
    let sums: Vec<(f64, f64)> = values.iter().map(|&v| (v, 1.0)).collect();
    pair_neighbours(&sums, |a, b| (a.0 + b.0, a.1 + b.1))
        .into_iter()
        .map(|(sum, count)| sum / count)
        .collect()
}

/// Neighbours joined in pairs by `join`, an odd last one joined to the pair
/// before it: how batches halve, for batch means and for a share's
/// sub-windows (`stats::ratio`).
pub fn pair_neighbours<T: Copy>(values: &[T], join: impl Fn(T, T) -> T) -> Vec<T> {
    let mut merged: Vec<T> = values
        .chunks(2)
        .map(|pair| {
            pair.iter()
                .copied()
                .reduce(&join)
                .expect("chunks are not empty")
        })
        .collect();
    if values.len() % 2 == 1 && merged.len() >= 2 {
        let last = merged.pop().expect("checked length");
        let pair = merged.last_mut().expect("checked length");
        *pair = join(*pair, last);
    }
    merged
}

/// The estimate from the batch values of one or more measurements (each
/// decorrelated on its own, then pooled): `None` when fewer than
/// [`MIN_BATCHES`] batches are left in all.
pub fn estimate(measurements: &[Vec<f64>]) -> Option<Estimate> {
    let pooled: Vec<f64> = measurements.iter().flat_map(|b| decorrelate(b)).collect();
    if pooled.len() < MIN_BATCHES {
        return None;
    }
    Estimate::of_samples(&pooled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, SeedableRng as _};
    use rand_distr::{Distribution as _, Normal};

    /// An AR(1) series: x[i] = phi·x[i−1] + noise.
    fn ar1(n: usize, phi: f64, seed: u64) -> Vec<f64> {
        let mut rng = StdRng::seed_from_u64(seed);
        let noise = Normal::new(0.0, 1.0).unwrap();
        let mut x = 0.0;
        (0..n)
            .map(|_| {
                x = phi * x + noise.sample(&mut rng);
                x
            })
            .collect()
    }

    #[test]
    fn autocorrelation_of_a_known_series() {
        assert!((lag1_autocorrelation(&[1.0, -1.0, 1.0, -1.0]) + 0.75).abs() < 1e-12);
        assert_eq!(lag1_autocorrelation(&[3.0, 3.0, 3.0]), 0.0);
        assert!(lag1_autocorrelation(&ar1(2000, 0.9, 1)) > 0.8);
    }

    #[test]
    fn independent_batches_are_kept() {
        let white = ar1(20, 0.0, 7);
        assert_eq!(decorrelate(&white).len(), 20);
    }

    #[test]
    fn correlated_batches_are_merged_but_not_below_the_minimum() {
        let trend: Vec<f64> = (0..20).map(f64::from).collect();
        let merged = decorrelate(&trend);
        assert_eq!(merged.len(), 5);
        // Merging keeps the mean.
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert!((mean(&merged) - mean(&trend)).abs() < 1e-12);
    }

    #[test]
    fn odd_batch_counts_keep_every_value() {
        let merged = merge_neighbours(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(merged, vec![1.5, 4.0]);
    }

    #[test]
    fn too_few_batches_give_no_estimate() {
        assert!(estimate(&[vec![1.0, 2.0, 3.0]]).is_none());
        assert!(estimate(&[vec![1.0, 2.0, 3.0], vec![2.0, 3.0]]).is_some());
    }
}
