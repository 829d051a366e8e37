//! Two arms measured in the same rounds, compared round by round: each
//! round gives one difference (other − base), and the rounds, not the
//! samples inside a run, are the units of the test, so that what moves a
//! whole run (drift, a neighbour, a warming cache) counts as noise once per
//! round instead of as thousands of agreeing samples.
//!
//! The test is the sign-flip permutation test: if the arms do not differ,
//! each round's difference was as likely to come out with the other sign
//! (which arm ran first in a round is balanced by `stats::order`). Its
//! statistic is Wilcoxon's signed rank sum (each difference's rank by size,
//! with its sign), robust to one disturbed round, which the mean is not;
//! the shift reported is its estimator, Hodges–Lehmann's (the median of the
//! Walsh averages `(d_i + d_j) / 2, i <= j`): the rank sum is the count of
//! positive Walsh averages less the negative ones, so the two never
//! disagree in sign and the verdict never contradicts the effect. (The Hodges–Lehmann shift itself is no statistic for sign flips:
//! flipping a few of ten nearly equal differences leaves it where it was,
//! and twelve differences of 10 to 12 came out at p = 0.02.) The interval
//! is a percentile bootstrap over rounds.
//!
//! Shares of events (deadlines met, late events) per round go through the
//! same test: give each round's share as its value. That holds whatever the
//! events' bursts, unlike a test on pooled counts (Fisher's, as LISA
//! uses), which takes late events for independent trials.

use super::t_quantile;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// How two arms are compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedOptions {
    /// Level of the test for `detectable` (the verdict takes its own).
    pub alpha: f64,
    /// Confidence level of the shift's interval (0.95 for 95 %).
    pub level: f64,
    /// Random sign flips drawn when there are too many rounds to try them
    /// all (more than [`EXACT_ROUNDS`]).
    pub permutations: usize,
    /// Bootstrap resamples of the rounds for the interval.
    pub resamples: usize,
    /// Seed of the random flips and resamples (the same seed gives the
    /// same outcome).
    pub seed: u64,
}

impl Default for PairedOptions {
    /// α 0.01, a 95 % interval, 19 999 flips (a p-value down to 5e-5, small
    /// enough for Benjamini–Hochberg over a few hundred figures at 0.01),
    /// 2000 resamples, seed 0.
    fn default() -> Self {
        Self {
            alpha: 0.01,
            level: 0.95,
            permutations: 19_999,
            resamples: 2_000,
            seed: 0,
        }
    }
}

/// Up to this many rounds every one of the `2^n` sign flips is tried and
/// the p-value is exact.
pub const EXACT_ROUNDS: usize = 16;

/// The comparison of one arm with the baseline over paired rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedOutcome {
    /// Rounds compared.
    pub rounds: usize,
    /// Hodges–Lehmann estimate of other − base, in the figure's unit.
    pub shift: f64,
    /// The shift's percentile bootstrap interval at `level`.
    pub shift_low: f64,
    pub shift_high: f64,
    /// Two-sided p-value of the sign-flip test.
    pub p: f64,
    /// Whether every flip was tried (else `p` is `(b + 1) / (m + 1)` over
    /// `m` random flips, `b` of them at least as far from 0).
    pub exact: bool,
    /// The smallest shift the test would find at `alpha` with 80 % power
    /// (see [`detectable`]); `None` when these rounds cannot give a p-value
    /// as small as `alpha` at all.
    pub detectable: Option<f64>,
    /// Median of the baseline's values over the rounds, for [`Self::relative`].
    pub baseline_median: f64,
}

/// A shift in % of the baseline's median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Relative {
    pub shift_pct: f64,
    pub low_pct: f64,
    pub high_pct: f64,
    pub detectable_pct: Option<f64>,
}

/// What an arm did to a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Better,
    Worse,
    /// Not found different; the outcome's `detectable` says how large a
    /// difference could have been missed.
    Unchanged,
}

impl PairedOutcome {
    /// The shift and its interval in % of the baseline's median; `None`
    /// when that median is not above 0. Only for a figure on a positive
    /// scale (a latency, a rate): a share near 0 or a figure that can be
    /// negative takes the absolute shift.
    pub fn relative(&self) -> Option<Relative> {
        let base = self.baseline_median;
        if !(base > 0.0 && base.is_finite()) {
            return None;
        }
        let pct = |v: f64| v / base * 100.0;
        Some(Relative {
            shift_pct: pct(self.shift),
            low_pct: pct(self.shift_low),
            high_pct: pct(self.shift_high),
            detectable_pct: self.detectable.map(pct),
        })
    }

    /// The verdict at `alpha` given this comparison's `q` (its p-value
    /// adjusted over every comparison of the experiment, see
    /// `stats::fdr`; `self.p` when it stands alone), for a figure where a
    /// larger value is better or worse.
    pub fn verdict(&self, q: f64, alpha: f64, higher_is_better: bool) -> Verdict {
        if q > alpha || self.shift == 0.0 {
            Verdict::Unchanged
        } else if (self.shift > 0.0) == higher_is_better {
            Verdict::Better
        } else {
            Verdict::Worse
        }
    }
}

/// Compares `other` with `base`, both one value per round in the same
/// order of rounds. `None` when the lengths differ, fewer than two rounds
/// are given, or a value is not finite.
pub fn compare(base: &[f64], other: &[f64], options: &PairedOptions) -> Option<PairedOutcome> {
    let n = base.len();
    if n < 2 || other.len() != n || base.iter().chain(other).any(|v| !v.is_finite()) {
        return None;
    }
    let differences: Vec<f64> = other.iter().zip(base).map(|(o, b)| o - b).collect();
    let mut rng = StdRng::seed_from_u64(options.seed);
    let (p, exact) = sign_flip_p(&differences, options.permutations, &mut rng);
    let (shift_low, shift_high) =
        bootstrap_interval(&differences, options.level, options.resamples, &mut rng);
    let floor = if exact {
        2.0 / 2f64.powi(n as i32)
    } else {
        1.0 / (options.permutations + 1) as f64
    };
    let mut sorted_base = base.to_vec();
    Some(PairedOutcome {
        rounds: n,
        shift: hodges_lehmann(&differences)?,
        shift_low,
        shift_high,
        p,
        exact,
        detectable: (floor <= options.alpha).then(|| detectable(&differences, options.alpha)),
        baseline_median: median(&mut sorted_base),
    })
}

/// Hodges–Lehmann estimate of the centre of `differences`: the median of
/// the Walsh averages `(d_i + d_j) / 2` over `i <= j`. `None` when empty.
pub fn hodges_lehmann(differences: &[f64]) -> Option<f64> {
    if differences.is_empty() {
        return None;
    }
    let mut walsh = Vec::with_capacity(differences.len() * (differences.len() + 1) / 2);
    Some(hl_into(differences, &mut walsh))
}

/// The fewest rounds with which the sign-flip test can give a p-value at
/// or below `alpha`: `2 / 2^n <= alpha` (the observed signs and their
/// mirror are always as extreme as themselves). Under Benjamini–Hochberg
/// over `m` comparisons the smallest p must reach `alpha / m`: ask with
/// that to know when anything at all can be called.
pub fn fewest_rounds(alpha: f64) -> usize {
    (2..=63)
        .find(|&n| 2.0 / 2f64.powi(n) <= alpha)
        .unwrap_or(64) as usize
}

/// The shift the test finds with 80 % power at `alpha`, from the spread of
/// the differences by the paired t-test's approximation: `(t(1 − α/2) +
/// t(0.8)) × sd / √n`, `n − 1` degrees of freedom. Chosen over simulating
/// the permutation test (too slow to do for every figure) because under
/// normal noise the signed rank test has 95 % of the t-test's efficiency
/// and never below 86 % whatever the noise. Measured on simulated rounds
/// (`stats::calibration`, 300 experiments each): where it said about 1 SD
/// (of one arm's figure from round to round), 1 SD was found in 78 %
/// (normal, 26 rounds) and 83 % (Student t3, 20 rounds). Near
/// [`fewest_rounds`] the test's few attainable p-values make it weaker than
/// this: at 8 rounds and α 0.01 it said 2.1 SD, and 2 SD was found in 52 %.
pub fn detectable(differences: &[f64], alpha: f64) -> f64 {
    let n = differences.len() as f64;
    let mean = differences.iter().sum::<f64>() / n;
    let variance = differences.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let df = n - 1.0;
    (t_quantile(1.0 - alpha / 2.0, df) + t_quantile(0.8, df)) * (variance / n).sqrt()
}

/// Two-sided p-value of the sign-flip test on Wilcoxon's signed rank sum,
/// and whether it is exact (every flip tried). The ranks are doubled
/// midranks, integers, so ties compare exactly.
fn sign_flip_p(differences: &[f64], permutations: usize, rng: &mut StdRng) -> (f64, bool) {
    let n = differences.len();
    let signed = doubled_signed_ranks(differences);
    let observed: i64 = signed.iter().sum();
    // Flipping a set of signs takes twice their sum off the total.
    let at_least = |flipped: i64| (observed - 2 * flipped).abs() >= observed.abs();
    if n <= EXACT_ROUNDS {
        // Flipping every sign negates the statistic: half the flips (the
        // last difference kept) give every |statistic| once, twice over.
        let half = 1u32 << (n - 1);
        let b = (0..half)
            .filter(|&mask| {
                let flipped = (0..n - 1).filter(|i| mask >> i & 1 == 1).map(|i| signed[i]);
                at_least(flipped.sum())
            })
            .count();
        (b as f64 / half as f64, true)
    } else {
        let b = (0..permutations)
            .filter(|_| {
                let flipped = signed.iter().filter(|_| rng.random::<bool>());
                at_least(flipped.sum())
            })
            .count();
        ((b + 1) as f64 / (permutations + 1) as f64, false)
    }
}

/// Each difference's rank by size (1 for the smallest `|d|`, ties taking
/// the mean of their ranks), doubled to be whole, with the difference's
/// sign (0 for a difference of 0).
fn doubled_signed_ranks(differences: &[f64]) -> Vec<i64> {
    let mut order: Vec<usize> = (0..differences.len()).collect();
    order.sort_by(|&a, &b| differences[a].abs().total_cmp(&differences[b].abs()));
    let mut ranks = vec![0; differences.len()];
    let mut start = 0;
    while start < order.len() {
        let size = differences[order[start]].abs();
        let end = start
            + order[start..]
                .iter()
                .take_while(|&&i| differences[i].abs() == size)
                .count();
        // Ranks start + 1 ..= end: their mean, doubled, is start + 1 + end.
        for &i in &order[start..end] {
            ranks[i] =
                (start + 1 + end) as i64 * differences[i].signum() as i64 * (size != 0.0) as i64;
        }
        start = end;
    }
    ranks
}

/// The percentile bootstrap interval at `level` of the Hodges–Lehmann shift,
/// resampling rounds with replacement.
fn bootstrap_interval(
    differences: &[f64],
    level: f64,
    resamples: usize,
    rng: &mut StdRng,
) -> (f64, f64) {
    let n = differences.len();
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    let mut sample = vec![0.0; n];
    let mut shifts: Vec<f64> = (0..resamples.max(1))
        .map(|_| {
            sample
                .iter_mut()
                .for_each(|v| *v = differences[rng.random_range(0..n)]);
            hl_into(&sample, &mut walsh)
        })
        .collect();
    shifts.sort_by(f64::total_cmp);
    let at = |q: f64| shifts[((q * shifts.len() as f64).floor() as usize).min(shifts.len() - 1)];
    (at((1.0 - level) / 2.0), at((1.0 + level) / 2.0))
}

/// The Hodges–Lehmann shift of `differences`, the Walsh averages built in
/// `walsh` (reused to spare allocations).
fn hl_into(differences: &[f64], walsh: &mut Vec<f64>) -> f64 {
    walsh.clear();
    for (i, a) in differences.iter().enumerate() {
        walsh.extend(differences[i..].iter().map(|b| (a + b) / 2.0));
    }
    median(walsh)
}

/// The median of `values` (reordered), the mean of the two middle ones for
/// an even count.
fn median(values: &mut [f64]) -> f64 {
    let (count, mid) = (values.len(), values.len() / 2);
    let (low, upper, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
    if count % 2 == 1 {
        *upper
    } else {
        let below = low.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (below + *upper) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hodges_lehmann_of_a_known_vector() {
        // Walsh averages of 1, 2, 3, 10: 1, 1.5, 2, 2, 2.5, 3, 5.5, 6, 6.5,
        // 10; the middle two are 2.5 and 3.
        assert_eq!(hodges_lehmann(&[1.0, 2.0, 3.0, 10.0]), Some(2.75));
        assert_eq!(hodges_lehmann(&[4.0]), Some(4.0));
        assert_eq!(hodges_lehmann(&[]), None);
    }

    #[test]
    fn ranks_by_size_with_ties_and_zeros() {
        // |d| 0, 1, 2, 2: ranks 1, 2, 3.5, 3.5, doubled; a 0 has no sign.
        assert_eq!(doubled_signed_ranks(&[0.0, -2.0, 2.0, 1.0]), [0, -7, 7, 4]);
    }

    #[test]
    fn exact_p_of_a_tiny_case() {
        // Differences 1, 2, 3 (base 0), doubled ranks 2, 4, 6: the four
        // sign patterns with the last kept give 12, 8, 4, 0; only the seen
        // one (and its mirror) reaches 12: p = 2 / 8.
        let options = PairedOptions::default();
        let outcome = compare(&[0.0; 3], &[1.0, 2.0, 3.0], &options).unwrap();
        assert_eq!((outcome.p, outcome.exact, outcome.shift), (0.25, true, 2.0));
        // −1, 2, 3: −2 + 4 + 6 = 8, reached by 8 and 12: p = 4 / 8.
        let outcome = compare(&[0.0; 3], &[-1.0, 2.0, 3.0], &options).unwrap();
        assert_eq!((outcome.p, outcome.shift), (0.5, 1.5));
    }

    #[test]
    fn a_clear_shift_is_found_and_bounded() {
        let base: Vec<f64> = (0..12).map(|i| 100.0 + (i * 7 % 5) as f64).collect();
        let other: Vec<f64> = base
            .iter()
            .enumerate()
            .map(|(i, b)| b + 10.0 + (i % 3) as f64)
            .collect();
        let options = PairedOptions::default();
        let outcome = compare(&base, &other, &options).unwrap();
        assert!(outcome.exact && outcome.p < 0.001, "{outcome:?}");
        assert!(outcome.shift_low <= outcome.shift && outcome.shift <= outcome.shift_high);
        assert!(
            outcome.shift_low >= 10.0 && outcome.shift_high <= 12.0,
            "{outcome:?}"
        );
        assert_eq!(outcome.verdict(outcome.p, 0.01, true), Verdict::Better);
        assert_eq!(outcome.verdict(outcome.p, 0.01, false), Verdict::Worse);
        assert_eq!(outcome.verdict(0.2, 0.01, false), Verdict::Unchanged);
        let relative = outcome.relative().unwrap();
        assert!(
            (relative.shift_pct - outcome.shift / outcome.baseline_median * 100.0).abs() < 1e-12
        );
        // The same seed gives the same outcome.
        assert_eq!(compare(&base, &other, &options), Some(outcome));
    }

    #[test]
    fn many_rounds_draw_flips_at_random() {
        let base: Vec<f64> = (0..20).map(|i| ((i * 37 % 11) as f64).sin()).collect();
        let other: Vec<f64> = (0..20).map(|i| ((i * 53 % 13) as f64).cos()).collect();
        let options = PairedOptions {
            permutations: 999,
            ..PairedOptions::default()
        };
        let outcome = compare(&base, &other, &options).unwrap();
        assert!(!outcome.exact);
        assert!(outcome.p >= 1.0 / 1000.0 && outcome.p <= 1.0, "{outcome:?}");
        assert!(outcome.detectable.is_some_and(|d| d > 0.0));
    }

    #[test]
    fn too_few_rounds_cannot_reach_alpha() {
        assert_eq!(fewest_rounds(0.05), 6);
        assert_eq!(fewest_rounds(0.01), 8);
        assert_eq!(fewest_rounds(0.001), 11);
        let base = [1.0, 2.0, 3.0, 4.0, 5.0];
        let other = [2.0, 2.5, 4.5, 4.0, 7.0];
        let options = PairedOptions::default();
        assert_eq!(compare(&base, &other, &options).unwrap().detectable, None);
        let at_05 = PairedOptions {
            alpha: 0.05,
            ..options
        };
        assert_eq!(compare(&base, &other, &at_05).unwrap().detectable, None);
        let eight: Vec<f64> = (0..8).map(|i| i as f64).collect();
        let shifted: Vec<f64> = eight.iter().map(|v| v + (v * 3.0) % 2.0).collect();
        assert!(compare(&eight, &shifted, &options)
            .unwrap()
            .detectable
            .is_some());
    }

    #[test]
    fn bad_input_gives_no_outcome() {
        let options = PairedOptions::default();
        assert_eq!(compare(&[1.0, 2.0], &[1.0], &options), None);
        assert_eq!(compare(&[1.0], &[2.0], &options), None);
        assert_eq!(compare(&[1.0, f64::NAN], &[1.0, 2.0], &options), None);
    }

    #[test]
    fn no_relative_shift_without_a_positive_baseline() {
        let outcome = compare(
            &[-1.0, 0.0, -2.0],
            &[1.0, 1.0, 1.0],
            &PairedOptions::default(),
        )
        .unwrap();
        assert_eq!(outcome.relative(), None);
    }
}
