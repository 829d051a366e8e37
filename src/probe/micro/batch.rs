//! How many operations an instance holds ([`Batch`]). Paced, one: each
//! operation is timed as it comes. In LMbench's way (`--micro-mode
//! lmbench`) an instance is LMbench's timed unit, a loop of operations back
//! to back whose time is divided by their number (lib_timing's benchmp,
//! which sizes its loop to its timing interval and takes the median of the
//! loops' means): as many as took about [`INSTANCE_NS`] in the instance
//! before, so that each instance is a mean over many of the quick
//! operations, as LMbench's figure is, and the median of the instances is
//! LMbench's median of its repetitions.

use crate::sim::micro::MicroMode;

/// How long an instance of LMbench's way lasts, about: half a turn of the
/// operation (`rhythm::BURST_NS`), a few hundred round trips, a few forks,
/// one `sh`.
pub const INSTANCE_NS: u64 = 1_000_000;

/// How much an instance may grow on the one before, as LMbench's
/// calibration grows its loop (eight times at a step).
const MOST_GROWTH: u64 = 8;

/// The size of an operation's next instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    n: u64,
    /// The most it may hold (`OpDef::most`); 1 when paced.
    most: u64,
}

impl Batch {
    /// One operation an instance when paced; in LMbench's way, one to
    /// start with and up to `most`.
    pub fn new(mode: MicroMode, most: u64) -> Self {
        let most = match mode {
            MicroMode::Paced => 1,
            MicroMode::Lmbench => most.max(1),
        };
        Self { n: 1, most }
    }

    /// How many operations the next instance holds.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Sizes the next instance after one of [`Batch::n`] operations that
    /// took `elapsed_ns`: as many as take [`INSTANCE_NS`] at that pace.
    pub fn after(&mut self, elapsed_ns: u64) {
        let fit = u128::from(self.n) * u128::from(INSTANCE_NS) / u128::from(elapsed_ns.max(1));
        let fit = u64::try_from(fit).unwrap_or(u64::MAX);
        self.n = fit.clamp(1, self.most.min(self.n * MOST_GROWTH));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paced_instances_hold_one_operation_whatever_they_take() {
        let mut batch = Batch::new(MicroMode::Paced, 100);
        for elapsed_ns in [1, 1_000, INSTANCE_NS * 10] {
            batch.after(elapsed_ns);
            assert_eq!(batch.n(), 1);
        }
    }

    #[test]
    fn lmbench_instances_fill_the_instance_time_within_their_bounds() {
        let mut batch = Batch::new(MicroMode::Lmbench, 10_000);
        assert_eq!(batch.n(), 1);
        // A round trip of 5 µs: eight times more at each step, up to 200.
        batch.after(5_000);
        assert_eq!(batch.n(), 8);
        batch.after(8 * 5_000);
        assert_eq!(batch.n(), 64);
        batch.after(64 * 5_000);
        assert_eq!(batch.n(), 200);
        batch.after(200 * 5_000);
        assert_eq!(batch.n(), 200);
        // Slower now (a load came): fewer.
        batch.after(200 * 20_000);
        assert_eq!(batch.n(), 50);
        // Slower than the instance time: one.
        batch.after(50 * INSTANCE_NS);
        assert_eq!(batch.n(), 1);
        batch.after(0);
        assert_eq!(batch.n(), 8);
        let mut files = Batch::new(MicroMode::Lmbench, 100);
        for _ in 0..4 {
            files.after(files.n() * 1_000);
        }
        assert_eq!(files.n(), 100);
    }
}
