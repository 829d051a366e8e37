//! The probe's steady rhythm: each operation runs [`OP_RATE_HZ`] times a
//! second, the operations of a set taking turns in slots spread evenly over
//! each period, so a probe running them all is no busier at any moment
//! than one running one. Slots stay on their grid when an instance ends
//! after the next slot (a slow `sh` makes the quick operations after it
//! catch up), but a probe more than a period behind starts again from
//! where it is instead of catching up in a burst.

use crate::measure::clock::NS_PER_S;

/// How many times a second each operation runs: 500 samples per operation
/// in a 10 s scenario. `micro` then uses about a quarter of one CPU of this
/// VM, two thirds of it in the 50 execs of /bin/true and /bin/sh a second
/// (the other operations cost a few µs each).
pub const OP_RATE_HZ: u64 = 50;

/// When the next instance starts, and of which operation.
#[derive(Debug, Clone)]
pub struct Rhythm {
    ops: usize,
    slot_ns: u64,
    next_ns: u64,
    turn: usize,
}

impl Rhythm {
    /// The rhythm of `ops` operations (at least one) from `start_ns`.
    pub fn new(start_ns: u64, ops: usize) -> Self {
        let ops = ops.max(1);
        Self {
            ops,
            slot_ns: NS_PER_S / OP_RATE_HZ / ops as u64,
            next_ns: start_ns,
            turn: 0,
        }
    }

    /// When the next instance starts and which operation (index into the
    /// set) it is.
    pub fn next(&self) -> (u64, usize) {
        (self.next_ns, self.turn)
    }

    /// Moves on after an instance that ended at `now_ns`.
    pub fn advance(&mut self, now_ns: u64) {
        self.next_ns += self.slot_ns;
        if now_ns > self.next_ns + self.slot_ns * self.ops as u64 {
            self.next_ns = now_ns;
        }
        self.turn = (self.turn + 1) % self.ops;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_take_turns_in_even_slots() {
        let mut rhythm = Rhythm::new(1_000, 4);
        let slot = NS_PER_S / OP_RATE_HZ / 4;
        let mut seen = Vec::new();
        for _ in 0..6 {
            seen.push(rhythm.next());
            let (at, _) = rhythm.next();
            rhythm.advance(at + 10);
        }
        let expected: Vec<(u64, usize)> =
            (0..6).map(|k| (1_000 + k * slot, k as usize % 4)).collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn each_operation_runs_at_the_rate_whatever_the_set() {
        for ops in [1, 18] {
            let mut rhythm = Rhythm::new(0, ops);
            for _ in 0..ops {
                let (at, _) = rhythm.next();
                rhythm.advance(at);
            }
            let period = rhythm.next().0;
            assert!(
                period.abs_diff(NS_PER_S / OP_RATE_HZ) < ops as u64,
                "{ops}: {period}"
            );
            assert_eq!(rhythm.next().1, 0);
        }
    }

    #[test]
    fn a_little_late_catches_up_a_period_late_starts_again() {
        let mut rhythm = Rhythm::new(0, 2);
        let slot = NS_PER_S / OP_RATE_HZ / 2;
        rhythm.advance(slot + 10);
        assert_eq!(rhythm.next().0, slot, "on the grid though late");
        rhythm.advance(5 * NS_PER_S);
        assert_eq!(rhythm.next().0, 5 * NS_PER_S);
        rhythm.advance(5 * NS_PER_S + 1);
        assert_eq!(rhythm.next().0, 5 * NS_PER_S + slot);
    }
}
