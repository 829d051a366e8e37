//! The CPU time of the programs a load worker runs (a `cmd:` command, a
//! job's steps), without the worker's own, counted as it grows: the work
//! of the loads whose work is CPU time.

use super::Load;
use crate::measure::clock::{process_and_children_cpu_ns, process_cpu_ns};
use crate::measure::window::CpuTime;

/// What `load` says its processes used (`Load::cpu`) less the worker's own
/// CPU time, in ns: its programs' alone, so a program that does nothing
/// does no work.
pub fn programs_cpu_ns(load: &dyn Load) -> u64 {
    load.cpu(CpuTime::exact(process_and_children_cpu_ns()))
        .ns
        .saturating_sub(process_cpu_ns())
}

/// How much of the programs' CPU time was counted as work so far.
#[derive(Debug, Default)]
pub struct CountedCpu {
    counted_ns: u64,
}

impl CountedCpu {
    /// The growth of `total_ns` past what was counted, in whole
    /// `resolution_ns`, now counted too. Only growth counts: a lower bound
    /// can drop (a process nobody waited for ended).
    pub fn count(&mut self, total_ns: u64, resolution_ns: u64) -> u64 {
        let growth_ns = total_ns.saturating_sub(self.counted_ns);
        let done_ns = growth_ns - growth_ns % resolution_ns;
        self.counted_ns += done_ns;
        done_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_growth_counts_in_whole_units() {
        let mut counted = CountedCpu::default();
        assert_eq!(counted.count(2_500, 1_000), 2_000);
        assert_eq!(counted.count(2_900, 1_000), 0, "less than a unit more");
        assert_eq!(counted.count(1_000, 1_000), 0, "a bound that dropped");
        assert_eq!(counted.count(3_100, 1_000), 1_000);
        assert_eq!(counted.count(3_150, 1), 150);
    }
}
