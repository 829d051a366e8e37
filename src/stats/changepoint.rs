//! Change points in a series of one figure across runs: E-Divisive means
//! (Matteson and James, 2014) finds where a segment divides best, and a
//! test made for a maximum says whether the segment changes at all: the
//! largest t over every split it could be cut at (the difference of the
//! two sides' means over its standard error, the noise's variance taken
//! from successive differences, so that a second change in the segment
//! does not hide the first), whose p-value is calibrated by permuting the
//! segment, as E-Divisive calibrates its own statistic. The best of n
//! splits is not one test: the ordinary t-test p-value at the best split,
//! taken as it was, called 5 % of series of pure noise a change at 0.1 %.
//! The permutations are drawn from a fixed seed, so the result is
//! deterministic. Segments are divided again until no division is
//! significant. Benjamini–Hochberg (`super::fdr`) then keeps the changes
//! of many series whose false discovery rate is near a rate (the rates
//! measured on noise and steps are in the README).

use super::two_sided_p;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// A place where a series changes level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// Index of the first value after the change.
    pub index: usize,
    /// Mean of the segment before and after it (bounded by the neighbouring
    /// change points).
    pub before: f64,
    pub after: f64,
    /// The calibrated p-value of the division that made the change (the
    /// largest t over the splits of the segment divided, against the
    /// largest t of its permutations).
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

/// Permutations that calibrate a division's p-value: enough for the
/// quantile [`MAX_T_QUANTILE`] of their maxima to rest on 20 of them.
pub const PERMUTATIONS: usize = 199;

/// The share of permutations whose largest t is at least the fitted one:
/// the model of the maximum is fitted where small p-values are decided.
const MAX_T_QUANTILE: f64 = 0.1;

/// The seed of the permutations (any fixed value: results are
/// reproducible, not tuned to it).
const SEED: u64 = 0x5eed_c4a9_e901_7a11;

/// The variance of the noise in `xs` from successive differences (half
/// their mean square): a change of level elsewhere in a segment adds one
/// difference, where the two sides' own variances would take in every
/// value's distance from a mean it does not share.
fn noise_variance(xs: &[f64]) -> f64 {
    let squares: f64 = xs.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum();
    squares / (2.0 * (xs.len() - 1) as f64)
}

/// The largest |t| between the two sides of `xs` over every split leaving
/// at least `min` values on each side: the difference of their means over
/// its standard error, the noise's variance taken from successive
/// differences ([`noise_variance`]) so that a second change in the segment
/// does not hide the first. `None` with no such split; infinite when the
/// values never vary from one to the next but the sides differ.
fn max_t(xs: &[f64], min: usize) -> Option<f64> {
    let n = xs.len();
    let min = min.max(1);
    if n < 2 * min || n < 2 {
        return None;
    }
    let variance = noise_variance(xs);
    let total: f64 = xs.iter().sum();
    let mut sum = 0.0;
    let mut largest: f64 = 0.0;
    for (k, x) in xs.iter().enumerate().take(n - min) {
        sum += x;
        let left = k + 1;
        if left < min {
            continue;
        }
        let (m, r) = (left as f64, (n - left) as f64);
        let difference = ((total - sum) / r - sum / m).abs();
        let t = match variance > 0.0 {
            true => difference / (variance * (1.0 / m + 1.0 / r)).sqrt(),
            false if difference > 1e-12 * (total / n as f64).abs().max(1e-300) => f64::INFINITY,
            false => 0.0,
        };
        largest = largest.max(t);
    }
    Some(largest)
}

/// The calibrated p-value that `xs` changes level somewhere (splits at
/// least `min` from either end): the largest t over its splits, against
/// [`PERMUTATIONS`] shuffles of `xs`. The smallest ordinary p-value of a
/// segment is modelled as the smallest of `k` independent ones, `P = 1 −
/// (1 − p)^k`, with `k` (the effective number of splits) fitted to the
/// permutations at their [`MAX_T_QUANTILE`] quantile; so a p-value beyond
/// what 199 permutations can show keeps its size. 1 when every value is
/// equal; `None` without a split.
pub fn division_p(xs: &[f64], min: usize) -> Option<f64> {
    let observed = max_t(xs, min)?;
    if xs.iter().all(|v| *v == xs[0]) {
        return Some(1.0);
    }
    // Degrees of freedom of the successive-difference variance.
    let n = xs.len() as f64;
    let df = 2.0 * (n - 1.0).powi(2) / (3.0 * n - 4.0);
    let mut shuffled = xs.to_vec();
    let mut rng = StdRng::seed_from_u64(SEED ^ xs.len() as u64);
    let mut maxima: Vec<f64> = (0..PERMUTATIONS)
        .map(|_| {
            shuffled.shuffle(&mut rng);
            max_t(&shuffled, min).unwrap_or(0.0)
        })
        .collect();
    maxima.sort_by(|a, b| b.total_cmp(a));
    let at = ((PERMUTATIONS as f64 + 1.0) * MAX_T_QUANTILE) as usize - 1;
    let fitted_p = two_sided_p(maxima[at], df);
    let tail = (at + 1) as f64 / (PERMUTATIONS as f64 + 1.0);
    // (1 − fitted_p)^k = 1 − tail; at least one split.
    let splits = match fitted_p > 0.0 && fitted_p < 1.0 {
        true => ((1.0 - tail).ln() / (-fitted_p).ln_1p()).max(1.0),
        false => 1.0,
    };
    let p = two_sided_p(observed, df);
    Some(-(splits * (-p).ln_1p()).exp_m1())
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
    cuts.sort_unstable_by_key(|c: &(usize, f64)| c.0);
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts.iter().map(|c| c.0))
        .chain(std::iter::once(series.len()))
        .collect();
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    let changes = bounds
        .windows(3)
        .zip(&cuts)
        .map(|(w, &(index, p))| ChangePoint {
            index,
            before: mean(&series[w[0]..w[1]]),
            after: mean(&series[w[1]..w[2]]),
            p,
        })
        .collect();
    Division { changes, rejected }
}

/// Divides `segment` (starting at `offset` in the series) where it divides
/// best while the segment's division is significant, adding each cut and
/// its p-value to `cuts` and the p-value of each division that is not to
/// `rejected`.
fn divide(
    segment: &[f64],
    offset: usize,
    search: Search,
    cuts: &mut Vec<(usize, f64)>,
    rejected: &mut Vec<f64>,
) {
    let Some(split) = best_split(segment, search.min_segment) else {
        return;
    };
    let Some(p) = division_p(segment, search.min_segment) else {
        return;
    };
    if p > search.max_p {
        rejected.push(p);
        return;
    }
    cuts.push((offset + split, p));
    divide(&segment[..split], offset, search, cuts, rejected);
    divide(&segment[split..], offset + split, search, cuts, rejected);
}

#[cfg(test)]
mod tests {
    use super::*;
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

    /// The mean of `xs` and the sum of its squared deviations.
    fn mean_and_squares(xs: &[f64]) -> (f64, f64) {
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        (mean, xs.iter().map(|x| (x - mean).powi(2)).sum())
    }

    /// The length of noise series `seed`: 20 to 200 runs.
    fn length(seed: u64) -> usize {
        20 + (seed as usize * 37) % 181
    }

    #[test]
    fn division_p_values_of_noise_hold_their_level() {
        // 1000 series of pure noise, 20 to 200 runs each: the share whose
        // division has p <= alpha is alpha, where the t-test p-value at the
        // best split, taken as it was, gave several times more.
        let p: Vec<f64> = (0..1000)
            .map(|seed| division_p(&noise(length(seed), 100.0, 5.0, seed), 3).unwrap())
            .collect();
        for (alpha, low, high) in [(0.01, 4, 18), (0.05, 30, 75)] {
            let below = p.iter().filter(|p| **p <= alpha).count();
            assert!(
                (low..=high).contains(&below),
                "{below} of 1000 noise series at p <= {alpha}"
            );
        }
    }

    #[test]
    fn noise_alone_almost_never_has_a_change_point() {
        // At 0.001, about 1 of 1000; the uncalibrated test found 5 % of
        // series (25 times the rate), which this bound cannot pass.
        let with_changes = (0..1000)
            .filter(|&seed| {
                !change_points(&noise(length(seed), 100.0, 5.0, seed), SEARCH)
                    .changes
                    .is_empty()
            })
            .count();
        assert!(with_changes <= 5, "{with_changes} of 1000 noise series");
    }

    #[test]
    fn max_t_is_the_largest_t_of_any_split() {
        let xs = noise(30, 10.0, 1.0, 21);
        let variance = xs.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum::<f64>() / 58.0;
        let by_split = (3..=27)
            .map(|k| {
                let (l, r) = xs.split_at(k);
                let ((a, _), (b, _)) = (mean_and_squares(l), mean_and_squares(r));
                ((b - a) / (variance * (1.0 / k as f64 + 1.0 / (30 - k) as f64)).sqrt()).abs()
            })
            .fold(0.0, f64::max);
        assert!((max_t(&xs, 3).unwrap() - by_split).abs() < 1e-9);
        assert!(max_t(&xs[..5], 3).is_none());
        assert_eq!(max_t(&[2.0; 8], 3), Some(0.0));
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
        assert!(division_p(&[5.0; 12], 3) == Some(1.0));
        assert!(change_points(&[1.0, 2.0, 3.0], SEARCH).changes.is_empty());
        assert!(change_points(&[5.0; 12], SEARCH).changes.is_empty());
        // 0.1 seven times sums to 0.7000000000000001: no spread for all that.
        let steps = [[0.1; 10], [0.3; 10]].concat();
        let found = change_points(&steps, SEARCH);
        assert_eq!(found.changes.len(), 1, "{found:?}");
        assert_eq!(found.rejected, [1.0, 1.0]);
        assert!(change_points(&[], SEARCH).changes.is_empty());
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

    /// Noise of a kind: normal, or heavy-tailed (Student t with 3 degrees
    /// of freedom, scaled to the same SD), plus a slow drift of `drift`
    /// SDs from the first run to the last.
    fn series_of(kind: &str, n: usize, drift: f64, seed: u64) -> Vec<f64> {
        let mut rng = StdRng::seed_from_u64(seed);
        let normal = Normal::new(0.0, 1.0).unwrap();
        let t3 = rand_distr::StudentT::new(3.0).unwrap();
        (0..n)
            .map(|i| {
                let e = match kind {
                    "normal" => normal.sample(&mut rng),
                    _ => t3.sample(&mut rng) / 3f64.sqrt(),
                };
                100.0 + 5.0 * (e + drift * i as f64 / (n - 1) as f64)
            })
            .collect()
    }

    /// Divides every series as `regressions` does (kept at 0.001, then
    /// Benjamini–Hochberg at `fdr` over every division tried) and counts
    /// the changes found and those within 2 runs of `truth`'s step.
    fn discoveries(series: &[(Vec<f64>, Option<usize>)], fdr: f64) -> (usize, usize) {
        let search = Search {
            min_segment: 3,
            max_p: 0.001_f64.min(fdr),
        };
        let mut p = Vec::new();
        for (i, (values, _)) in series.iter().enumerate() {
            let division = change_points(values, search);
            p.extend(division.rejected.iter().map(|&p| (None, p)));
            for c in division.changes {
                p.push((Some((i, c.index)), c.p));
            }
        }
        let q =
            crate::stats::fdr::benjamini_hochberg(&p.iter().map(|(_, p)| *p).collect::<Vec<_>>());
        let kept: Vec<(usize, usize)> = p
            .iter()
            .zip(q)
            .filter(|(_, q)| *q <= fdr)
            .filter_map(|((at, _), _)| *at)
            .collect();
        let true_ones = kept
            .iter()
            .filter(|(i, index)| series[*i].1.is_some_and(|s| s.abs_diff(*index) <= 2))
            .count();
        (kept.len(), true_ones)
    }

    /// The false discovery rate and power as the README states them:
    /// `cargo test --release --bin feelbench -- --ignored measured_rates --nocapture`.
    #[test]
    #[ignore = "a measurement: about a minute in release"]
    fn measured_rates() {
        let fdr = 0.05;
        for kind in ["normal", "heavy"] {
            for drift in [0.0, 1.0] {
                let noise: Vec<(Vec<f64>, Option<usize>)> = (0..1000)
                    .map(|seed| (series_of(kind, length(seed), drift, seed), None))
                    .collect();
                let uncalibrated = noise
                    .iter()
                    .filter(|(v, _)| {
                        let split = best_split(v, 3).unwrap();
                        let (l, r) = v.split_at(split);
                        let ((a, sa), (b, sb)) = (mean_and_squares(l), mean_and_squares(r));
                        let df = (v.len() - 2) as f64;
                        let se =
                            ((sa + sb) / df * (1.0 / l.len() as f64 + 1.0 / r.len() as f64)).sqrt();
                        two_sided_p((b - a) / se, df) <= 0.001
                    })
                    .count();
                let at_001 = noise
                    .iter()
                    .filter(|(v, _)| division_p(v, 3).unwrap() <= 0.001)
                    .count();
                let at_05 = noise
                    .iter()
                    .filter(|(v, _)| division_p(v, 3).unwrap() <= 0.05)
                    .count();
                let (kept, _) = discoveries(&noise, fdr);
                println!(
                    "noise {kind}, drift {drift} SD: p <= 0.001 in {at_001}/1000 (uncalibrated t at the best split: {uncalibrated}/1000), p <= 0.05 in {at_05}/1000; changes after BH q <= {fdr}: {kept} (all false)"
                );
                for step in [1.0, 2.0, 3.0] {
                    // Half the series step by `step` SDs somewhere in their
                    // middle 60 %, half are noise.
                    let mixed: Vec<(Vec<f64>, Option<usize>)> = (0..1000u64)
                        .map(|seed| {
                            let n = length(seed);
                            let mut v = series_of(kind, n, drift, seed + 5000);
                            if seed % 2 == 1 {
                                return (v, None);
                            }
                            let at = n / 5 + (seed as usize * 7919) % (3 * n / 5);
                            for x in &mut v[at..] {
                                *x += 5.0 * step;
                            }
                            (v, Some(at))
                        })
                        .collect();
                    let (kept, true_ones) = discoveries(&mixed, fdr);
                    println!(
                        "  steps of {step} SD in 500 of 1000: {kept} changes, {true_ones} at a step (±2 runs): false discovery rate {:.3}, power {:.3}",
                        (kept - true_ones) as f64 / kept.max(1) as f64,
                        true_ones as f64 / 500.0
                    );
                }
            }
        }
    }
}
