//! When each instance starts ([`Turns`]). The probe's steady rhythm
//! ([`Rhythm`]): each operation runs [`OP_RATE_HZ`] times a second, the
//! operations of a set taking turns in slots spread evenly over each
//! period, so a probe running them all is no busier at any moment than one
//! running one. Slots stay on their grid when an instance ends after the
//! next slot (a slow `sh` makes the quick operations after it catch up),
//! but a probe more than a period behind starts again from where it is
//! instead of catching up in a burst. LMbench's way ([`Bursts`],
//! `--micro-mode lmbench`): each operation back to back, warm, for
//! [`BURST_NS`], the operations taking turns burst by burst, so each is
//! measured all through the window.

use crate::measure::clock::NS_PER_S;
use crate::sim::micro::MicroMode;

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

/// How long each operation runs back to back in LMbench's way before the
/// next one's turn: a few of the slowest (`sh`), hundreds of the quick
/// ones, and every operation in each sub-window of a 1 s window.
pub const BURST_NS: u64 = 2_000_000;

/// LMbench's way: instances back to back, one operation at a time for a
/// burst.
#[derive(Debug, Clone)]
pub struct Bursts {
    ops: usize,
    next_ns: u64,
    burst_end_ns: u64,
    turn: usize,
}

impl Bursts {
    /// The bursts of `ops` operations (at least one) from `start_ns`.
    pub fn new(start_ns: u64, ops: usize) -> Self {
        Self {
            ops: ops.max(1),
            next_ns: start_ns,
            burst_end_ns: start_ns + BURST_NS,
            turn: 0,
        }
    }

    /// Moves on after an instance that ended at `now_ns`: at once, and to
    /// the next operation once the burst is over.
    pub fn advance(&mut self, now_ns: u64) {
        self.next_ns = now_ns;
        if now_ns >= self.burst_end_ns {
            self.turn = (self.turn + 1) % self.ops;
            self.burst_end_ns = now_ns + BURST_NS;
        }
    }
}

/// When instances start, in the run's mode.
#[derive(Debug, Clone)]
pub enum Turns {
    /// The probe's rhythm.
    Paced(Rhythm),
    /// LMbench's back-to-back loops.
    Lmbench(Bursts),
}

impl Turns {
    /// The turns of `ops` operations (at least one) from `start_ns`, in
    /// `mode`.
    pub fn new(mode: MicroMode, start_ns: u64, ops: usize) -> Self {
        match mode {
            MicroMode::Paced => Turns::Paced(Rhythm::new(start_ns, ops)),
            MicroMode::Lmbench => Turns::Lmbench(Bursts::new(start_ns, ops)),
        }
    }

    /// When the next instance starts and which operation (index into the
    /// set) it is.
    pub fn next(&self) -> (u64, usize) {
        match self {
            Turns::Paced(rhythm) => rhythm.next(),
            Turns::Lmbench(bursts) => (bursts.next_ns, bursts.turn),
        }
    }

    /// Moves on after an instance that ended at `now_ns`.
    pub fn advance(&mut self, now_ns: u64) {
        match self {
            Turns::Paced(rhythm) => rhythm.advance(now_ns),
            Turns::Lmbench(bursts) => bursts.advance(now_ns),
        }
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

    #[test]
    fn lmbench_runs_back_to_back_and_changes_operation_after_each_burst() {
        let mut turns = Turns::new(MicroMode::Lmbench, 1_000, 3);
        assert_eq!(turns.next(), (1_000, 0));
        turns.advance(5_000);
        assert_eq!(turns.next(), (5_000, 0), "at once, the same operation");
        turns.advance(1_000 + BURST_NS);
        assert_eq!(turns.next(), (1_000 + BURST_NS, 1));
        for k in 2..=3 {
            let now = 1_000 + k * BURST_NS;
            turns.advance(now);
            assert_eq!(turns.next(), (now, k as usize % 3));
        }
        let paced = Turns::new(MicroMode::Paced, 1_000, 3);
        assert_eq!(paced.next(), (1_000, 0));
    }
}
