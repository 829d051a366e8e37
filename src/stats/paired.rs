//! Two arms measured in the same rounds, compared round by round: each
//! round gives one difference (other − base), and the rounds, not the
//! samples inside a run, are the units of the test, so that what moves a
//! whole run (drift, a neighbour, a warming cache) counts as noise once per
//! round instead of as thousands of agreeing samples.
//!
//! The test is the sign-flip permutation test: if the arms do not differ,
//! each round's difference was as likely to come out with the other sign
//! (which arm ran first in a round is balanced by `stats::order`). Its
//! statistic is the Hodges–Lehmann shift (the median of the Walsh averages
//! `(d_i + d_j) / 2, i <= j`), the same figure the experiment reports, so
//! the verdict and the effect never disagree in sign; it is robust to one
//! disturbed round, which the mean is not. The interval is a percentile
//! bootstrap over rounds.
//!
//! Shares of events (deadlines met, late events) per round go through the
//! same test: give each round's share as its value. That holds whatever the
//! events' bursts, unlike a test on pooled counts (see `stats::fisher`).

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
    Some(hl_with(differences, |_| 1.0, &mut walsh))
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
/// the permutation test (too slow per figure) because under normal noise
/// the sign-flip test's power approaches the t-test's; with heavy tails
/// the standard deviation is inflated by the outlying rounds, so the
/// figure errs large (the test on the Hodges–Lehmann shift, robust to
/// them, finds smaller shifts), the safe side for "could have seen". Near
/// [`fewest_rounds`] the test's few attainable p-values make it weaker than
/// this; the measured power is in the calibration tests.
pub fn detectable(differences: &[f64], alpha: f64) -> f64 {
    let n = differences.len() as f64;
    let mean = differences.iter().sum::<f64>() / n;
    let variance = differences.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let df = n - 1.0;
    (t_quantile(1.0 - alpha / 2.0, df) + t_quantile(0.8, df)) * (variance / n).sqrt()
}

/// Two-sided p-value of the sign-flip test on the Hodges–Lehmann shift, and
/// whether it is exact (every flip tried).
fn sign_flip_p(differences: &[f64], permutations: usize, rng: &mut StdRng) -> (f64, bool) {
    let n = differences.len();
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    let observed = hl_with(differences, |_| 1.0, &mut walsh).abs();
    let at_least = |t: f64| t.abs() >= observed * (1.0 - 1e-9);
    if n <= EXACT_ROUNDS {
        // Flipping every sign negates the statistic: half the flips (the
        // last difference kept) give every |statistic| once, twice over.
        let half = 1u32 << (n - 1);
        let b = (0..half)
            .filter(|&mask| {
                let sign = |i: usize| if mask >> i & 1 == 1 { -1.0 } else { 1.0 };
                at_least(hl_with(differences, sign, &mut walsh))
            })
            .count();
        (b as f64 / half as f64, true)
    } else {
        let mut signs = vec![1.0; n];
        let b = (0..permutations)
            .filter(|_| {
                signs
                    .iter_mut()
                    .for_each(|s| *s = if rng.random::<bool>() { -1.0 } else { 1.0 });
                at_least(hl_with(differences, |i| signs[i], &mut walsh))
            })
            .count();
        ((b + 1) as f64 / (permutations + 1) as f64, false)
    }
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
            hl_with(&sample, |_| 1.0, &mut walsh)
        })
        .collect();
    shifts.sort_by(f64::total_cmp);
    let at = |q: f64| shifts[((q * shifts.len() as f64).floor() as usize).min(shifts.len() - 1)];
    (at((1.0 - level) / 2.0), at((1.0 + level) / 2.0))
}

/// The Hodges–Lehmann shift of `differences` with signs `sign(i)`, the
/// Walsh averages built in `walsh` (reused to spare allocations).
fn hl_with(differences: &[f64], sign: impl Fn(usize) -> f64, walsh: &mut Vec<f64>) -> f64 {
    walsh.clear();
    for i in 0..differences.len() {
        let a = sign(i) * differences[i];
        for (j, d) in differences.iter().enumerate().skip(i) {
            walsh.push((a + sign(j) * d) / 2.0);
        }
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
