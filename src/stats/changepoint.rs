//! Change points in a series of one figure across runs: E-Divisive means
//! (Matteson and James, 2014) finds where a segment divides best, and, as
//! Apache Otava (formerly hunter) does instead of permutations, a t-test
//! between the two sides says whether that division is real, so the
//! result is deterministic and fast. The test pools the two sides'
//! variances (Student's): with no change both sides come from one
//! distribution, and Welch's test, which trusts each side's own spread,
//! called three runs of noise that happened to agree a change (20 real
//! runs of one setting, x under burn). Segments are divided again until no
//! division is significant. [`q_values`] (Benjamini–Hochberg) then keeps
//! the changes of many series whose false discovery rate is at most a rate.

use super::two_sided_p;

/// A place where a series changes level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// Index of the first value after the change.
    pub index: usize,
    /// Mean of the segment before and after it (bounded by the neighbouring
    /// change points).
    pub before: f64,
    pub after: f64,
    /// Student's two-sided p-value between the two segments.
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

/// Sums of distances between the values of `xs`, for every split at once:
/// `before[k]` is the sum of `|a - b|` over pairs among the first `k`
/// values, `after[k]` over pairs among the values from `k` on. Each value's
/// distances to those already seen come from a Fenwick tree of counts and
/// sums over the values' ranks, so the whole is O(n log n), not O(n²).
struct PairSums {
    before: Vec<f64>,
    after: Vec<f64>,
}

impl PairSums {
    fn of(xs: &[f64]) -> Self {
        let mut before = vec![0.0; xs.len() + 1];
        let mut after = vec![0.0; xs.len() + 1];
        let forward = distances_to_earlier(xs.iter().copied(), xs);
        let backward = distances_to_earlier(xs.iter().rev().copied(), xs);
        for (k, d) in forward.iter().enumerate() {
            before[k + 1] = before[k] + d;
        }
        for (k, d) in backward.iter().enumerate() {
            let at = xs.len() - 1 - k;
            after[at] = after[at + 1] + d;
        }
        Self { before, after }
    }
}

/// For each value in `order`, the sum of its distances to the values
/// before it in `order` (whose values are those of `all`).
fn distances_to_earlier(order: impl Iterator<Item = f64>, all: &[f64]) -> Vec<f64> {
    let mut sorted = all.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = |x: f64| sorted.partition_point(|v| v.total_cmp(&x).is_lt());
    let (mut counts, mut sums) = (Fenwick::new(sorted.len()), Fenwick::new(sorted.len()));
    let (mut seen, mut total) = (0.0, 0.0);
    order
        .map(|x| {
            let r = rank(x);
            let (below, below_sum) = (counts.prefix(r), sums.prefix(r));
            let (above, above_sum) = (seen - below, total - below_sum);
            counts.add(r, 1.0);
            sums.add(r, x);
            seen += 1.0;
            total += x;
            (x * below - below_sum) + (above_sum - x * above)
        })
        .collect()
}

/// A Fenwick (binary indexed) tree of sums.
struct Fenwick(Vec<f64>);

impl Fenwick {
    fn new(n: usize) -> Self {
        Self(vec![0.0; n + 1])
    }

    fn add(&mut self, at: usize, value: f64) {
        let mut i = at + 1;
        while i < self.0.len() {
            self.0[i] += value;
            i += i & i.wrapping_neg();
        }
    }

    /// The sum of the entries before `end`.
    fn prefix(&self, end: usize) -> f64 {
        let (mut i, mut sum) = (end, 0.0);
        while i > 0 {
            sum += self.0[i];
            i -= i & i.wrapping_neg();
        }
        sum
    }
}

/// The E-Divisive divergence of splitting a segment of `len` values before
/// `split`, with exponent 1: `m n / (m + n)` times the energy distance
/// between the two sides (twice the mean distance across, less the mean
/// distances within).
fn divergence(sums: &PairSums, len: usize, split: usize) -> f64 {
    let (m, n) = (split as f64, (len - split) as f64);
    let (left, right) = (sums.before[split], sums.after[split]);
    let across = (sums.before[len] - left - right) / (m * n);
    let mean_within = |pairs: f64, k: f64| match k < 2.0 {
        true => 0.0,
        false => pairs / (k * (k - 1.0) / 2.0),
    };
    m * n / (m + n) * (2.0 * across - mean_within(left, m) - mean_within(right, n))
}

/// The split of `xs` with the largest divergence, at least `min` values
/// from either end.
fn best_split(xs: &[f64], min: usize) -> Option<usize> {
    let min = min.max(1);
    let last = xs.len().checked_sub(min)?;
    if last < min {
        return None;
    }
    let sums = PairSums::of(xs);
    (min..=last)
        .map(|split| (split, divergence(&sums, xs.len(), split)))
        .filter(|(_, d)| d.is_finite())
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(split, _)| split)
}

/// The mean of `xs` and the sum of its squared deviations.
fn mean_and_squares(xs: &[f64]) -> (f64, f64) {
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    (mean, xs.iter().map(|x| (x - mean).powi(2)).sum())
}

/// Student's two-sided p-value (pooled variance) between the two sides of
/// `xs` split at `split`; 1 when neither side varies and they are equal, 0
/// when they differ; `None` with fewer than two values on a side.
fn p_between(xs: &[f64], split: usize) -> Option<f64> {
    let (left, right) = xs.split_at(split);
    if left.len() < 2 || right.len() < 2 {
        return None;
    }
    if xs.iter().all(|v| *v == xs[0]) {
        // Equal values: their mean's rounding must not look like a spread.
        return Some(1.0);
    }
    let ((a, sa), (b, sb)) = (mean_and_squares(left), mean_and_squares(right));
    let df = (xs.len() - 2) as f64;
    let pooled = (sa + sb) / df;
    let se = (pooled * (1.0 / left.len() as f64 + 1.0 / right.len() as f64)).sqrt();
    if se.is_nan() || se <= 0.0 {
        return Some(if a == b { 1.0 } else { 0.0 });
    }
    Some(two_sided_p((b - a) / se, df))
}

/// What dividing a series found: its significant change points, and the
/// p-values of the divisions tried and found not significant (tests made
/// too, which a correction for many tests must count).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Division {
    pub changes: Vec<ChangePoint>,
    pub rejected: Vec<f64>,
}

/// Every significant change point of `series`, in order, with the p-values
/// of the divisions that were not.
pub fn change_points(series: &[f64], search: Search) -> Division {
    let mut cuts = Vec::new();
    let mut rejected = Vec::new();
    divide(series, 0, search, &mut cuts, &mut rejected);
    cuts.sort_unstable();
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts.iter().copied())
        .chain(std::iter::once(series.len()))
        .collect();
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    let changes = bounds
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
        .collect();
    Division { changes, rejected }
}

/// Divides `segment` (starting at `offset` in the series) where it divides
/// best while that division is significant, adding each cut to `cuts` and
/// the p-value of each division that is not to `rejected`.
fn divide(
    segment: &[f64],
    offset: usize,
    search: Search,
    cuts: &mut Vec<usize>,
    rejected: &mut Vec<f64>,
) {
    let Some(split) = best_split(segment, search.min_segment) else {
        return;
    };
    let Some(p) = p_between(segment, split) else {
        return;
    };
    if p > search.max_p {
        rejected.push(p);
        return;
    }
    cuts.push(offset + split);
    divide(&segment[..split], offset, search, cuts, rejected);
    divide(&segment[split..], offset + split, search, cuts, rejected);
}

/// The Benjamini–Hochberg q-value of each of `p_values`: the smallest
/// false discovery rate at which it is a discovery, `min over j >= i of
/// p(j) m / j` by rank. Those with `q <= rate` are the discoveries of
/// the procedure at that rate (the largest rank `k` with `p(k) <= k rate /
/// m`, and every smaller p-value).
pub fn q_values(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut q = vec![1.0; m];
    let mut smallest = 1.0_f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        smallest = smallest.min(p_values[i] * m as f64 / (rank + 1) as f64);
        q[i] = smallest;
    }
    q
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
        let found = change_points(&series, SEARCH).changes;
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].index, 10);
        assert!(found[0].after > found[0].before + 20.0);
        assert!(found[0].p < 1e-6);
    }

    #[test]
    fn noise_alone_has_no_change_point_in_most_series() {
        let with_changes = (0..200)
            .filter(|&seed| {
                !change_points(&noise(20, 100.0, 5.0, seed), SEARCH)
                    .changes
                    .is_empty()
            })
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
            .changes
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(indices, [8, 16]);
    }

    #[test]
    fn too_short_or_flat_series_have_none() {
        assert!(change_points(&[1.0, 2.0, 3.0], SEARCH).changes.is_empty());
        assert!(change_points(&[5.0; 12], SEARCH).changes.is_empty());
        // 0.1 seven times sums to 0.7000000000000001: no spread for all that.
        let steps = [[0.1; 10], [0.3; 10]].concat();
        let found = change_points(&steps, SEARCH);
        assert_eq!(found.changes.len(), 1, "{found:?}");
        assert_eq!(found.rejected, [1.0, 1.0]);
        assert!(change_points(&[], SEARCH).changes.is_empty());
    }

    #[test]
    fn benjamini_hochberg_keeps_the_ranks_under_the_line() {
        let discoveries = |p: &[f64], rate: f64| -> Vec<bool> {
            q_values(p).iter().map(|q| *q <= rate).collect()
        };
        // m = 5, q = 0.05: lines 0.01, 0.02, 0.03, 0.04, 0.05.
        let p = [0.04, 0.001, 0.9, 0.025, 0.011];
        assert_eq!(
            discoveries(&p, 0.05),
            [true, true, false, true, true],
            "rank 4 (0.04 <= 0.04) takes every smaller p with it"
        );
        assert_eq!(discoveries(&[0.2, 0.3], 0.05), [false, false]);
        assert!(q_values(&[]).is_empty());
        // By hand: p(k) 5 / k is 0.005, 0.0275, 0.0417, 0.05, 0.9.
        let q = q_values(&p);
        let expected = [0.05, 0.005, 0.9, 0.025 * 5.0 / 3.0, 0.0275];
        for (q, e) in q.iter().zip(expected) {
            assert!((q - e).abs() < 1e-12, "{q} {e}");
        }
        // A larger p-value whose p m / k is smaller lowers the q of those before it.
        let q = q_values(&[0.03, 0.031]);
        assert!((q[0] - 0.031).abs() < 1e-12 && (q[1] - 0.031).abs() < 1e-12);
    }

    /// The divergence straight from its definition, O(n²).
    fn divergence_by_pairs(xs: &[f64], split: usize) -> f64 {
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

    #[test]
    fn pair_sums_give_the_divergence_of_its_definition() {
        let mut xs = noise(40, 10.0, 2.0, 7);
        xs.extend([10.0, 10.0, 3.0, 3.0]); // ties
        let sums = PairSums::of(&xs);
        for split in 1..xs.len() {
            let fast = divergence(&sums, xs.len(), split);
            let slow = divergence_by_pairs(&xs, split);
            assert!(
                (fast - slow).abs() < 1e-9 * slow.abs().max(1.0),
                "{split}: {fast} {slow}"
            );
        }
    }

    #[test]
    fn divisions_not_made_are_counted_as_tests() {
        let division = change_points(&noise(30, 50.0, 1.0, 11), SEARCH);
        assert!(division.changes.is_empty());
        assert_eq!(division.rejected.len(), 1);
        assert!(division.rejected[0] > SEARCH.max_p);
    }
}
