//! What a late event is labelled with: a cause, from the part holding
//! at least half its delay, named more finely by delay accounting.

use super::{DelaySplit, Part};
use serde::{Deserialize, Serialize};

/// The causes delay accounting's kinds of wait stand for.
impl DelaySplit {
    /// Which of reclaim, compaction and thrashing took longest (reclaim on
    /// a tie or when none took time).
    pub fn largest_stall(&self) -> Cause {
        [
            (Cause::Reclaim, self.reclaim_ns),
            (Cause::Compaction, self.compaction_ns),
            (Cause::Thrashing, self.thrashing_ns),
        ]
        .into_iter()
        .rev()
        .max_by_key(|(_, ns)| ns.unwrap_or(0))
        .map_or(Cause::Reclaim, |(cause, _)| cause)
    }

    /// The kind of block that took longest, when any took time.
    pub fn largest(&self) -> Option<Cause> {
        [
            (Cause::BlockIo, self.block_io_ns),
            (Cause::SwapIn, self.swap_in_ns),
            (Cause::Reclaim, self.reclaim_ns),
            (Cause::Thrashing, self.thrashing_ns),
            (Cause::Compaction, self.compaction_ns),
            (Cause::WriteCopy, self.write_copy_ns),
        ]
        .into_iter()
        .filter_map(|(cause, ns)| Some((cause, ns.filter(|ns| *ns > 0)?)))
        .max_by_key(|(_, ns)| *ns)
        .map(|(cause, _)| cause)
    }
}

/// What a late event is labelled with: the part holding at least half its
/// delay (blocked time named by delay accounting where it is on, or by a
/// major fault), else `Mixed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Timer,
    RunQueue,
    BlockIo,
    SwapIn,
    Reclaim,
    Thrashing,
    Compaction,
    WriteCopy,
    MajorFault,
    BlockedOther,
    OffCpu,
    CpuOverrun,
    Unexplained,
    Mixed,
}

impl Cause {
    /// Every cause, in display order.
    pub const ALL: [Cause; 14] = [
        Cause::Timer,
        Cause::RunQueue,
        Cause::BlockIo,
        Cause::SwapIn,
        Cause::Reclaim,
        Cause::Thrashing,
        Cause::Compaction,
        Cause::WriteCopy,
        Cause::MajorFault,
        Cause::BlockedOther,
        Cause::OffCpu,
        Cause::CpuOverrun,
        Cause::Unexplained,
        Cause::Mixed,
    ];

    /// The cause in words, as a table shows it.
    pub fn words(self) -> &'static str {
        match self {
            Cause::Timer => "timer/wake-up delivery",
            Cause::RunQueue => "run-queue wait",
            Cause::BlockIo => "blocked: block I/O",
            Cause::SwapIn => "blocked: swap-in",
            Cause::Reclaim => "memory: direct reclaim",
            Cause::Thrashing => "memory: thrashing",
            Cause::Compaction => "memory: compaction",
            Cause::WriteCopy => "blocked: copy-on-write",
            Cause::MajorFault => "blocked: page-in",
            Cause::BlockedOther => "blocked (other)",
            Cause::OffCpu => "host steal or IRQ",
            Cause::CpuOverrun => "CPU overrun",
            Cause::Unexplained => "unexplained",
            Cause::Mixed => "mixed",
        }
    }

    /// Its name in a run document.
    pub fn key(self) -> &'static str {
        match self {
            Cause::Timer => "timer",
            Cause::RunQueue => "run_queue",
            Cause::BlockIo => "block_io",
            Cause::SwapIn => "swap_in",
            Cause::Reclaim => "reclaim",
            Cause::Thrashing => "thrashing",
            Cause::Compaction => "compaction",
            Cause::WriteCopy => "write_copy",
            Cause::MajorFault => "major_fault",
            Cause::BlockedOther => "blocked_other",
            Cause::OffCpu => "off_cpu",
            Cause::CpuOverrun => "cpu_overrun",
            Cause::Unexplained => "unexplained",
            Cause::Mixed => "mixed",
        }
    }

    /// The part of an event's delay it names (`None` for `Mixed`).
    pub fn part(self) -> Option<Part> {
        match self {
            Cause::Timer => Some(Part::Timer),
            Cause::RunQueue => Some(Part::RunQueue),
            Cause::Reclaim | Cause::Thrashing | Cause::Compaction => Some(Part::MemoryStall),
            Cause::BlockIo
            | Cause::SwapIn
            | Cause::WriteCopy
            | Cause::MajorFault
            | Cause::BlockedOther => Some(Part::Blocked),
            Cause::OffCpu => Some(Part::OffCpu),
            Cause::CpuOverrun => Some(Part::CpuOverrun),
            Cause::Unexplained => Some(Part::Unexplained),
            Cause::Mixed => None,
        }
    }

    /// Its place in [`Cause::ALL`].
    pub(super) fn index(self) -> usize {
        Cause::ALL.iter().position(|c| *c == self).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Parts;
    use super::*;

    #[test]
    fn parts_are_named_by_what_was_measured_and_causes_name_them_finer() {
        let parts = Parts {
            blocked_ns: 3,
            memory_stall_ns: 5,
            ..Parts::default()
        };
        let named: Vec<(&str, u64)> = parts
            .by_part()
            .into_iter()
            .map(|(part, ns)| (part.words(), ns))
            .filter(|(_, ns)| *ns > 0)
            .collect();
        assert_eq!(named, [("blocked", 3), ("memory stall", 5)]);
        for cause in Cause::ALL {
            let part = cause.part();
            assert_eq!(part.is_none(), cause == Cause::Mixed, "{cause:?}");
        }
        assert_eq!(Cause::SwapIn.part(), Some(Part::Blocked));
        assert_eq!(Cause::Thrashing.part(), Some(Part::MemoryStall));
    }
}
