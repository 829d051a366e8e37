//! What telling the parts of late events apart cost a probe.

use serde::{Deserialize, Serialize};

/// What telling the parts apart cost the probe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadCost {
    /// Readings of the thread's clocks and counters taken.
    pub reads: u64,
    /// What one cost in CPU time, timed when the reader was opened, ns.
    pub ns_per_read: f64,
    /// Taskstats readings (delay accounting, at the end of each event
    /// whose work blocked); 0 where it was unavailable.
    #[serde(default)]
    pub taskstats_reads: u64,
    /// What one cost, timed when the splitter was opened, ns.
    #[serde(default)]
    pub ns_per_taskstats_read: f64,
}

impl ReadCost {
    /// The readings' time in all, s.
    pub fn total_s(&self) -> f64 {
        (self.reads as f64 * self.ns_per_read
            + self.taskstats_reads as f64 * self.ns_per_taskstats_read)
            / 1e9
    }

    /// The cost of all of `costs` together.
    pub(super) fn sum(costs: impl Iterator<Item = ReadCost> + Clone) -> Self {
        let mean = |count: &dyn Fn(&ReadCost) -> (u64, f64)| {
            let reads: u64 = costs.clone().map(|c| count(&c).0).sum();
            let ns: f64 = costs
                .clone()
                .map(|c| count(&c).0 as f64 * count(&c).1)
                .sum();
            (reads, if reads == 0 { 0.0 } else { ns / reads as f64 })
        };
        let (reads, ns_per_read) = mean(&|c| (c.reads, c.ns_per_read));
        let (taskstats_reads, ns_per_taskstats_read) =
            mean(&|c| (c.taskstats_reads, c.ns_per_taskstats_read));
        Self {
            reads,
            ns_per_read,
            taskstats_reads,
            ns_per_taskstats_read,
        }
    }
}
