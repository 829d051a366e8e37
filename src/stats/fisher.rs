//! Fisher's exact test on a 2 × 2 table of counts: events that met or
//! missed their deadline under two arms, as LISA tests pass and fail rates.
//!
//! When it is valid: the test takes every event as an independent trial
//! (given the totals, the table is hypergeometric). Counts of rounds
//! (one pass or fail per round, LISA's iterations) are such trials. The
//! events of a run are not: late events come in bursts (one preemption
//! delays a run of frames), and a round that goes badly moves all of its
//! events at once, so pooled counts have far more spread than the test
//! assumes and its p-value is too small, the more so the more events. Use
//! it on pooled events only when the per-round shares of each arm spread
//! no more than binomially (`p (1 − p) / events` per round); otherwise, and
//! by default, test each round's share with `stats::paired::compare`, which
//! needs nothing of the events but the rounds.

use statrs::function::factorial::ln_binomial;

/// Two-sided p-value of Fisher's exact test that `base_hits` of
/// `base_trials` and `other_hits` of `other_trials` come from one rate:
/// the probability, given the table's totals, of every table no more
/// likely than the one seen (the usual definition, with a relative
/// tolerance of 1e-7 for ties). Computed in log space from the tables
/// nearest the seen one outwards, stopping where the tail is below 1e-22
/// of it, so counts in the millions neither overflow nor take long (a
/// p-value below about 1e-308 comes out as 0). `None` when hits exceed
/// trials or the counts overflow.
pub fn two_sided_p(
    base_hits: u64,
    base_trials: u64,
    other_hits: u64,
    other_trials: u64,
) -> Option<f64> {
    if base_hits > base_trials || other_hits > other_trials {
        return None;
    }
    let total = base_trials.checked_add(other_trials)?;
    let hits = base_hits.checked_add(other_hits)?;
    let table = Margins {
        total,
        hits,
        drawn: base_trials,
    };
    let (low, high) = (
        base_trials.saturating_sub(total - hits),
        hits.min(base_trials),
    );
    let mode = table.mode().clamp(low, high);
    let seen = table.ln_p(base_hits);
    let threshold = seen + 1e-7_f64.ln_1p();
    if table.ln_p(mode) <= threshold {
        return Some(1.0);
    }
    // Below the mode ln_p rises, above it falls: the tables no more likely
    // than the one seen are the two tails, cut where ln_p crosses it.
    let left_edge = last_at_most(low, mode, |x| table.ln_p(x) <= threshold);
    let right_edge = first_at_most(mode, high, |x| table.ln_p(x) <= threshold);
    let left = left_edge.map(|edge| table.tail(edge, low, seen));
    let right = right_edge.map(|edge| table.tail(edge, high, seen));
    let sum: f64 = left.into_iter().chain(right).sum();
    Some((sum * seen.exp()).min(1.0))
}

/// The totals of a 2 × 2 table: of `total` trials, `hits` hit, and the
/// base arm drew `drawn` of the trials; its hits are hypergeometric.
struct Margins {
    total: u64,
    hits: u64,
    drawn: u64,
}

impl Margins {
    /// Log probability that the base arm has `x` hits.
    fn ln_p(&self, x: u64) -> f64 {
        ln_binomial(self.hits, x) + ln_binomial(self.total - self.hits, self.drawn - x)
            - ln_binomial(self.total, self.drawn)
    }

    /// The most likely count, `⌊(drawn + 1)(hits + 1) / (total + 2)⌋`.
    fn mode(&self) -> u64 {
        let product = (self.drawn as u128 + 1) * (self.hits as u128 + 1);
        (product / (self.total as u128 + 2)) as u64
    }

    /// The sum of the probabilities from `edge` to `end` (either side),
    /// each divided by `exp(seen)`, stopping once a term is below 1e-22 of
    /// the one seen.
    fn tail(&self, edge: u64, end: u64, seen: f64) -> f64 {
        let mut sum = 0.0;
        let mut x = edge;
        loop {
            let term = (self.ln_p(x) - seen).exp();
            sum += term;
            if x == end || term < 1e-22 {
                return sum;
            }
            x = if end > edge { x + 1 } else { x - 1 };
        }
    }
}

/// The largest `x` in `low..=high` with `holds(x)`, where `holds` is true up
/// to a point and false after it.
fn last_at_most(low: u64, high: u64, holds: impl Fn(u64) -> bool) -> Option<u64> {
    if !holds(low) {
        return None;
    }
    let (mut yes, mut no) = (low, high + 1);
    while no - yes > 1 {
        let mid = yes + (no - yes) / 2;
        if holds(mid) {
            yes = mid;
        } else {
            no = mid;
        }
    }
    Some(yes)
}

/// The smallest `x` in `low..=high` with `holds(x)`, where `holds` is false
/// up to a point and true after it.
fn first_at_most(low: u64, high: u64, holds: impl Fn(u64) -> bool) -> Option<u64> {
    if !holds(high) {
        return None;
    }
    let (mut no, mut yes) = (low as i128 - 1, high as i128);
    while yes - no > 1 {
        let mid = no + (yes - no) / 2;
        if holds(mid as u64) {
            yes = mid;
        } else {
            no = mid;
        }
    }
    Some(yes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `two_sided_p` is within `relative` of `expected`.
    fn near(got: Option<f64>, expected: f64, relative: f64) {
        let got = got.unwrap();
        assert!(
            (got - expected).abs() <= expected * relative,
            "{got} against {expected}"
        );
    }

    #[test]
    fn known_tables() {
        // Fisher's tea: 3 of 4 against 1 of 4, p = 34 / 70.
        near(two_sided_p(3, 4, 1, 4), 34.0 / 70.0, 1e-9);
        // The rest from the hypergeometric summed in exact rationals.
        near(two_sided_p(10, 13, 3, 17), 0.0024059315371553988, 1e-9);
        near(two_sided_p(0, 10, 5, 10), 0.032507739938080496, 1e-9);
        near(two_sided_p(7, 12, 2, 9), 0.1842343415098833, 1e-9);
        near(
            two_sided_p(9000, 10000, 8900, 10000),
            0.022378874800480158,
            1e-6,
        );
    }

    #[test]
    fn symmetric_and_bounded() {
        for (a, n, c, m) in [(3, 4, 1, 4), (10, 13, 3, 17), (5, 50, 20, 60), (0, 7, 0, 9)] {
            let p = two_sided_p(a, n, c, m).unwrap();
            assert!(p > 0.0 && p <= 1.0, "{p}");
            assert!((two_sided_p(c, m, a, n).unwrap() - p).abs() <= 1e-12 * p.max(1e-300));
            assert!((two_sided_p(n - a, n, m - c, m).unwrap() - p).abs() <= 1e-9 * p);
        }
        assert_eq!(two_sided_p(5, 10, 5, 10), Some(1.0));
        assert_eq!(two_sided_p(0, 0, 0, 0), Some(1.0));
    }

    #[test]
    fn millions_of_events() {
        // Against the same sum taken with Python's lgamma, term by term.
        near(
            two_sided_p(990_000, 1_000_000, 989_500, 1_000_000),
            0.0004594894461544992,
            1e-4,
        );
        near(
            two_sided_p(999_000, 1_000_000, 998_800, 1_000_000),
            2.1591027953790846e-05,
            1e-4,
        );
        let tiny = two_sided_p(1_000_000, 2_000_000, 900_000, 2_000_000).unwrap();
        assert!((0.0..1e-300).contains(&tiny), "{tiny}");
    }

    #[test]
    fn impossible_counts_give_none() {
        assert_eq!(two_sided_p(5, 4, 1, 4), None);
        assert_eq!(two_sided_p(1, 4, 5, 4), None);
        assert_eq!(two_sided_p(0, u64::MAX, 0, 1), None);
    }
}
