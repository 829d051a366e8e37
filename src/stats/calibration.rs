//! Measurements of the experiment's statistics on simulated rounds, run by
//! hand, never asserted: the paired test's false positives under the null
//! (normal and heavy-tailed noise, and a drift across the experiment with a
//! fixed order of arms against the rotated `order`), the bootstrap
//! interval's coverage, and the rounds needed to find a shift. The figures
//! measured are in the commit that added them (for the README's section on
//! experiments, issue 30):
//! `cargo test --release --bin feelbench -- --ignored stats::calibration --nocapture`.

use super::order::round_orders;
use super::paired::{compare, PairedOptions};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal, StudentT};

/// Noise of one run's figure, standard deviation 1: normal, or Student t
/// with 3 degrees of freedom scaled to unit variance (heavy tails).
#[derive(Clone, Copy)]
enum Noise {
    Normal,
    Heavy,
}

impl Noise {
    fn name(self) -> &'static str {
        match self {
            Noise::Normal => "normal",
            Noise::Heavy => "heavy-tailed (t3)",
        }
    }

    fn sample(self, rng: &mut StdRng) -> f64 {
        match self {
            Noise::Normal => Normal::new(0.0, 1.0).unwrap().sample(rng),
            Noise::Heavy => StudentT::new(3.0).unwrap().sample(rng) / 3f64.sqrt(),
        }
    }
}

/// How the arms are ordered in each round of a simulated experiment.
#[derive(Clone, Copy, PartialEq)]
enum Ordering {
    Fixed,
    Rotated,
}

/// One simulated experiment of `rounds` rounds and three arms (the
/// baseline, its A/A twin, and a third arm `shift` SD above them) whose
/// runs drift by `drift` SD per round over the experiment; the values of
/// each arm, one per round.
fn experiment(
    noise: Noise,
    rounds: usize,
    shift: f64,
    drift: f64,
    ordering: Ordering,
    seed: u64,
) -> [Vec<f64>; 3] {
    let mut rng = StdRng::seed_from_u64(seed);
    let orders = match ordering {
        Ordering::Fixed => vec![vec![0, 1, 2]; rounds],
        Ordering::Rotated => round_orders(3, rounds, seed + 1_000_000),
    };
    let mut values = [vec![0.0; rounds], vec![0.0; rounds], vec![0.0; rounds]];
    for (round, order) in orders.iter().enumerate() {
        for (position, &arm) in order.iter().enumerate() {
            let slot = (round * 3 + position) as f64 / 3.0;
            let effect = if arm == 2 { shift } else { 0.0 };
            values[arm][round] = 100.0 + noise.sample(&mut rng) + drift * slot + effect;
        }
    }
    values
}

/// Options for the simulations: 1999 random flips past 16 rounds (enough
/// to tell p <= 0.01, ten times fewer than `ab` draws), few resamples where
/// the interval is not looked at.
fn options(resamples: usize, seed: u64) -> PairedOptions {
    PairedOptions {
        resamples,
        seed,
        permutations: 1999,
        ..PairedOptions::default()
    }
}

#[test]
#[ignore = "a measurement: about half a minute in release"]
fn false_positives_under_the_null() {
    let experiments = 2000;
    for noise in [Noise::Normal, Noise::Heavy] {
        for (drift, ordering) in [
            (0.0, Ordering::Rotated),
            (0.5, Ordering::Fixed),
            (0.5, Ordering::Rotated),
            (1.0, Ordering::Fixed),
            (1.0, Ordering::Rotated),
        ] {
            for rounds in [5, 8, 12, 20] {
                let (mut at_01, mut at_05) = (0, 0);
                for seed in 0..experiments {
                    let [base, _, other] = experiment(noise, rounds, 0.0, drift, ordering, seed);
                    let p = compare(&base, &other, &options(1, seed + 2_000_000))
                        .unwrap()
                        .p;
                    at_01 += usize::from(p <= 0.01);
                    at_05 += usize::from(p <= 0.05);
                }
                let order = if ordering == Ordering::Fixed {
                    "fixed"
                } else {
                    "rotated"
                };
                println!(
                    "{} noise, drift {drift} SD a round, {order} order, {rounds} rounds: p <= 0.01 in {at_01}/{experiments}, p <= 0.05 in {at_05}/{experiments}",
                    noise.name()
                );
            }
        }
    }
}

#[test]
#[ignore = "a measurement: about a minute in release"]
fn interval_coverage() {
    let experiments = 400;
    let shift = 1.0;
    for noise in [Noise::Normal, Noise::Heavy] {
        for rounds in [5, 8, 12, 20] {
            let covered = (0..experiments)
                .filter(|&seed| {
                    let [base, _, other] =
                        experiment(noise, rounds, shift, 0.0, Ordering::Rotated, seed);
                    let outcome = compare(&base, &other, &options(2000, seed + 2_000_000)).unwrap();
                    outcome.shift_low <= shift && shift <= outcome.shift_high
                })
                .count();
            println!(
                "{} noise, {rounds} rounds: the 95 % interval held the shift in {covered}/{experiments}",
                noise.name()
            );
        }
    }
}

#[test]
#[ignore = "a measurement: a few minutes in release"]
fn rounds_to_find_a_shift() {
    let experiments = 300;
    for noise in [Noise::Normal, Noise::Heavy] {
        for shift in [1.0, 2.0] {
            for rounds in 6..=40 {
                let mut found = 0;
                let mut detectable = Vec::new();
                for seed in 0..experiments {
                    let [base, _, other] =
                        experiment(noise, rounds, shift, 0.0, Ordering::Rotated, seed);
                    let outcome = compare(&base, &other, &options(1, seed + 2_000_000)).unwrap();
                    found += usize::from(outcome.p <= 0.01);
                    detectable.extend(outcome.detectable);
                }
                detectable.sort_by(f64::total_cmp);
                let median = detectable.get(detectable.len() / 2).copied();
                println!(
                    "{} noise, shift {shift} SD, {rounds} rounds: p <= 0.01 in {found}/{experiments}; median detectable {}",
                    noise.name(),
                    median.map_or("none".to_string(), |d| format!("{d:.2} SD")),
                );
                if found * 10 >= experiments as usize * 8 {
                    break;
                }
            }
        }
    }
}
