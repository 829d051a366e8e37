//! The order of an experiment's arms in each round: a Williams design, so
//! that drift over the experiment (a warming disk, a filling page cache,
//! the host's neighbours) and what one arm leaves behind for the next
//! (carry-over) fall on every arm alike instead of reading as a difference.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// The order of `arms` arms (numbered `0..arms`) in each of `rounds`
/// rounds: each round a permutation of `0..arms`, drawn from a Williams
/// design (Williams, 1949) whose letters are given to the arms, and whose
/// rows are taken in an order, both shuffled by `seed` (the same seed gives
/// the same orders).
///
/// The rounds come in blocks of `arms`, each block the rows of one Latin
/// square, so over every full block each arm takes each position exactly
/// once. Carry-over (which arm runs just before which, within a round) is
/// balanced too: with an even number of arms, every full block has each
/// arm follow each other arm exactly once; with an odd number, which one
/// square cannot do, blocks alternate between the square and its mirror
/// image (every row reversed), and every full pair of blocks (`2 × arms`
/// rounds) has each arm follow each other exactly twice. When `rounds` is
/// not a multiple, the rounds after the last full block are rows of one
/// more square, so each arm takes each position at most once in them: over
/// the experiment, the counts of an arm in a position differ by at most one
/// from arm to arm, and carry-over is balanced only up to the last full
/// block (pair of blocks for an odd number). An A/A control is one more
/// arm: the caller gives the baseline two numbers.
pub fn round_orders(arms: usize, rounds: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut arm_of_letter: Vec<usize> = (0..arms).collect();
    arm_of_letter.shuffle(&mut rng);
    let square = williams_square(arms);
    let mirrored = arms % 2 == 1 && rng.random_bool(0.5);
    let mut orders = Vec::with_capacity(rounds);
    let mut block = 0;
    while orders.len() < rounds && arms > 0 {
        let mut rows = square.clone();
        if arms % 2 == 1 && (block % 2 == 1) != mirrored {
            rows.iter_mut().for_each(|row| row.reverse());
        }
        rows.shuffle(&mut rng);
        let wanted = (rounds - orders.len()).min(arms);
        orders.extend(rows.into_iter().take(wanted).map(|row| {
            row.into_iter()
                .map(|letter| arm_of_letter[letter])
                .collect::<Vec<_>>()
        }));
        block += 1;
    }
    orders.resize(rounds, Vec::new());
    orders
}

/// Williams' Latin square of `n` letters: the first row is 0, 1, n − 1, 2,
/// n − 2, …, and row `i` adds `i` to each letter (mod n). With `n` even,
/// every ordered pair of letters is neighbours in exactly one row.
fn williams_square(n: usize) -> Vec<Vec<usize>> {
    let first: Vec<usize> = (0..n)
        .map(|j| {
            if j % 2 == 1 {
                j.div_ceil(2)
            } else {
                (n - j / 2) % n
            }
        })
        .collect();
    (0..n)
        .map(|i| first.iter().map(|letter| (letter + i) % n).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How often each arm takes each position in `orders`: `[arm][position]`.
    fn positions(orders: &[Vec<usize>], arms: usize) -> Vec<Vec<usize>> {
        let mut counts = vec![vec![0; arms]; arms];
        for order in orders {
            for (position, &arm) in order.iter().enumerate() {
                counts[arm][position] += 1;
            }
        }
        counts
    }

    /// How often each arm runs just before each other, within a round:
    /// `[before][after]`.
    fn carry_over(orders: &[Vec<usize>], arms: usize) -> Vec<Vec<usize>> {
        let mut counts = vec![vec![0; arms]; arms];
        for order in orders {
            for pair in order.windows(2) {
                counts[pair[0]][pair[1]] += 1;
            }
        }
        counts
    }

    #[test]
    fn williams_first_row() {
        assert_eq!(williams_square(4)[0], [0, 1, 3, 2]);
        assert_eq!(williams_square(5)[0], [0, 1, 4, 2, 3]);
        assert_eq!(williams_square(4)[1], [1, 2, 0, 3]);
    }

    #[test]
    fn every_round_is_a_permutation() {
        for arms in 1..=7 {
            for order in round_orders(arms, 11, 3) {
                let mut sorted = order.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..arms).collect::<Vec<_>>(), "{arms} arms");
            }
        }
        assert_eq!(round_orders(0, 2, 1), [Vec::<usize>::new(), Vec::new()]);
        assert!(round_orders(3, 0, 1).is_empty());
    }

    #[test]
    fn positions_balanced_in_every_full_block() {
        for arms in 2..=7 {
            for seed in 0..5 {
                let orders = round_orders(arms, 3 * arms, seed);
                for block in orders.chunks(arms) {
                    let counts = positions(block, arms);
                    assert!(
                        counts.iter().flatten().all(|&c| c == 1),
                        "{arms} arms, seed {seed}: {counts:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn positions_within_one_when_rounds_is_not_a_multiple() {
        for arms in 3..=6 {
            let orders = round_orders(arms, 2 * arms + 2, 9);
            for column in 0..arms {
                let counts: Vec<usize> =
                    positions(&orders, arms).iter().map(|c| c[column]).collect();
                let (low, high) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
                assert!(high - low <= 1, "{arms} arms: {counts:?}");
            }
        }
    }

    #[test]
    fn carry_over_balanced() {
        for arms in 2..=7 {
            // One block for an even number of arms, a pair for an odd one.
            let span = if arms % 2 == 0 { arms } else { 2 * arms };
            let times = if arms % 2 == 0 { 1 } else { 2 };
            for seed in 0..5 {
                let orders = round_orders(arms, 2 * span, seed);
                for part in orders.chunks(span) {
                    let counts = carry_over(part, arms);
                    for (before, row) in counts.iter().enumerate() {
                        for (after, &c) in row.iter().enumerate() {
                            let expected = if before == after { 0 } else { times };
                            assert_eq!(c, expected, "{arms} arms, seed {seed}: {counts:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_seed_decides() {
        assert_eq!(round_orders(4, 10, 42), round_orders(4, 10, 42));
        let differ = (0..10).any(|seed| round_orders(4, 8, seed) != round_orders(4, 8, 42));
        assert!(differ);
    }
}
