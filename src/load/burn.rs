//! `burn`: processes that use all the CPU they can get (interbench's Burn).
//! By default twice as many as there are CPUs (`-L N` to choose).

use super::{Load, LoadDef, LoadError};
use crate::measure::work::{burn_loops, loops_for_ns};

/// CPU time of one slice of burning.
const SLICE_CPU_NS: u64 = 1_000_000;

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "burn",
    summary: "CPU hogs: busy loops in 2 x CPUs processes (-L N to choose)",
    method: 1,
    unit: "Mloop",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: super::no_check,
    processes: |params| params.burn_processes,
    build: |context| {
        Ok(Box::new(Burn {
            loops_per_slice: loops_for_ns(context.params.loops_per_ms, SLICE_CPU_NS).max(1),
        }))
    },
    default: super::always,
    uses: &[],
    job_cache: None,
};

struct Burn {
    loops_per_slice: u64,
}

impl Load for Burn {
    fn step(&mut self) -> Result<f64, LoadError> {
        burn_loops(self.loops_per_slice);
        Ok(self.loops_per_slice as f64 / 1e6)
    }
}
