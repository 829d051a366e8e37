//! Change points in a series of one figure across runs: E-Divisive means
//! (Matteson and James, 2014) finds where a segment divides best, and, as
//! Apache Otava (formerly hunter) does instead of permutations, Welch's
//! t-test between the two sides says whether that division is real, so the
//! result is deterministic and fast. Segments are divided again until no
//! division is significant. [`benjamini_hochberg`] then keeps the changes
//! of many series whose false discovery rate is at most `q`.

use super::{welch, Estimate};

/// A place where a series changes level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// Index of the first value after the change.
    pub index: usize,
    /// Mean of the segment before and after it (bounded by the neighbouring
    /// change points).
    pub before: f64,
    pub after: f64,
    /// Welch's two-sided p-value between the two segments.
    pub p: f64,
}

/// How change points are looked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Search {
    /// Fewest values on each side of a change.
    pub min_segment: usize,
    /// Largest p-value a change may have.
    pub max_p: f64,
}

/// The E-Divisive divergence of splitting `xs` before `split`, with
/// exponent 1: `m n / (m + n)` times the energy distance between the two
/// sides (twice the mean distance across, less the mean distances within).
fn divergence(xs: &[f64], split: usize) -> f64 {
    let (left, right) = xs.split_at(split);
    let (m, n) = (left.len() as f64, right.len() as f64);
    let across: f64 = left
        .iter()
        .flat_map(|a| right.iter().map(move |b| (a - b).abs()))
        .sum::<f64>()
        / (m * n);
    let within = |side: &[f64]| {
        let k = side.len() as f64;
        if k < 2.0 {
            return 0.0;
        }
        let pairs: f64 = side
            .iter()
            .enumerate()
            .flat_map(|(i, a)| side[i + 1..].iter().map(move |b| (a - b).abs()))
            .sum();
        pairs / (k * (k - 1.0) / 2.0)
    };
    m * n / (m + n) * (2.0 * across - within(left) - within(right))
}

/// The split of `xs` with the largest divergence, at least `min` values
/// from either end.
fn best_split(xs: &[f64], min: usize) -> Option<usize> {
    let min = min.max(1);
    (min..=xs.len().checked_sub(min)?)
        .map(|split| (split, divergence(xs, split)))
        .filter(|(_, d)| d.is_finite())
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(split, _)| split)
}

/// Welch's p-value between the two sides of `xs` split at `split`; 1 when
/// neither side varies and they are equal, 0 when they differ.
fn p_between(xs: &[f64], split: usize) -> Option<f64> {
    let (left, right) = xs.split_at(split);
    let (a, b) = (Estimate::of_samples(left)?, Estimate::of_samples(right)?);
    match welch::test(&a, &b) {
        Some(outcome) => Some(outcome.p),
        None if a.value == b.value => Some(1.0),
        None => Some(0.0),
    }
}

/// Every significant change point of `series`, in order.
pub fn change_points(series: &[f64], search: Search) -> Vec<ChangePoint> {
    let mut cuts = Vec::new();
    divide(series, 0, search, &mut cuts);
    cuts.sort_unstable();
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts.iter().copied())
        .chain(std::iter::once(series.len()))
        .collect();
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    bounds
        .windows(3)
        .map(|w| {
            let (before, after) = (&series[w[0]..w[1]], &series[w[1]..w[2]]);
            let joined = &series[w[0]..w[2]];
            ChangePoint {
                index: w[1],
                before: mean(before),
                after: mean(after),
                p: p_between(joined, w[1] - w[0]).unwrap_or(1.0),
            }
        })
        .collect()
}

/// Divides `segment` (starting at `offset` in the series) where it divides
/// best while that division is significant, adding each cut to `cuts`.
fn divide(segment: &[f64], offset: usize, search: Search, cuts: &mut Vec<usize>) {
    let Some(split) = best_split(segment, search.min_segment) else {
        return;
    };
    let significant = p_between(segment, split).is_some_and(|p| p <= search.max_p);
    if !significant {
        return;
    }
    cuts.push(offset + split);
    divide(&segment[..split], offset, search, cuts);
    divide(&segment[split..], offset + split, search, cuts);
}

/// Which of `p_values` are discoveries at false discovery rate `q`
/// (Benjamini–Hochberg): the largest rank `k` with `p(k) <= k q / m`, and
/// every p-value up to it.
pub fn benjamini_hochberg(p_values: &[f64], q: f64) -> Vec<bool> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let largest = order
        .iter()
        .enumerate()
        .filter(|(rank, &i)| p_values[i] <= (rank + 1) as f64 * q / m as f64)
        .map(|(rank, _)| rank)
        .last();
    let mut discovered = vec![false; m];
    if let Some(largest) = largest {
        for &i in &order[..=largest] {
            discovered[i] = true;
        }
    }
    discovered
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};

    const SEARCH: Search = Search {
        min_segment: 3,
        max_p: 0.001,
    };

    fn noise(n: usize, mean: f64, sd: f64, seed: u64) -> Vec<f64> {
        let mut rng = StdRng::seed_from_u64(seed);
        let normal = Normal::new(mean, sd).unwrap();
        (0..n).map(|_| normal.sample(&mut rng)).collect()
    }

    #[test]
    fn a_step_is_found_where_it_is() {
        let mut series = noise(10, 100.0, 3.0, 1);
        series.extend(noise(10, 130.0, 3.0, 2));
        let found = change_points(&series, SEARCH);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].index, 10);
        assert!(found[0].after > found[0].before + 20.0);
        assert!(found[0].p < 1e-6);
    }

    #[test]
    fn noise_alone_has_no_change_point_in_most_series() {
        let with_changes = (0..200)
            .filter(|&seed| !change_points(&noise(20, 100.0, 5.0, seed), SEARCH).is_empty())
            .count();
        // One test per series at 0.001, but the split is chosen as the
        // best, so a few more than 0.2 series in 200 find one.
        assert!(with_changes <= 10, "{with_changes} of 200 noise series");
    }

    #[test]
    fn two_steps_are_both_found() {
        let mut series = noise(8, 10.0, 0.5, 3);
        series.extend(noise(8, 20.0, 0.5, 4));
        series.extend(noise(8, 12.0, 0.5, 5));
        let indices: Vec<usize> = change_points(&series, SEARCH)
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(indices, [8, 16]);
    }

    #[test]
    fn too_short_or_flat_series_have_none() {
        assert!(change_points(&[1.0, 2.0, 3.0], SEARCH).is_empty());
        assert!(change_points(&[5.0; 12], SEARCH).is_empty());
        assert!(change_points(&[], SEARCH).is_empty());
    }

    #[test]
    fn benjamini_hochberg_keeps_the_ranks_under_the_line() {
        // m = 5, q = 0.05: lines 0.01, 0.02, 0.03, 0.04, 0.05.
        let p = [0.04, 0.001, 0.9, 0.025, 0.011];
        assert_eq!(
            benjamini_hochberg(&p, 0.05),
            [true, true, false, true, true],
            "rank 4 (0.04 <= 0.04) takes every smaller p with it"
        );
        assert_eq!(benjamini_hochberg(&[0.2, 0.3], 0.05), [false, false]);
        assert!(benjamini_hochberg(&[], 0.05).is_empty());
    }
}
