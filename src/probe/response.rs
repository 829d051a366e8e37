//! `response`: resp1's response test. After each idle gap (20 s by
//! default) the probe reads every byte of an array it filled when it
//! started, which the kernel may have swapped out while it slept, then
//! maps a fresh array, fills it (so it needs free pages: untouched anonymous
//! memory would only map the zero page), reads it and unmaps it again, as a
//! small command that starts, works and exits would. resp1 read one byte at
//! a time; here the compiler may read several per instruction, which keeps
//! the CPU part small, as resp1 meant it to be: the page faults are what
//! grows under load. The delay of that
//! interaction is one point. See `after_idle` for the loop and the figures,
//! and `sim::response` for the arrays' sizes. Each point is split into the
//! causes of its delay, by the rule `after_idle` gives.
//!
//! The probe shares its memory ([`MemoryPolicy::Shared`]): the worker does
//! not lock it (the resident array could never be swapped out otherwise),
//! and with `--mem-limit` the probe runs in the loads' memory cgroup, so
//! their pressure reaches it as it reached resp1 on a machine booted with
//! little memory. The fresh array is allocated inside the measurement on
//! purpose: the time to get free pages is part of what is measured.

use super::after_idle::{self, Response};
use super::late_split::LateSplit;
use super::{MeasureError, Pace, Probe, ProbeDef};
use crate::figures::Measured;
use crate::measure::sched::MemoryPolicy;
use crate::measure::window::Window;
use crate::sim::{ResponseParams, SettingsGroup, WorkParams};
use memmap2::MmapMut;
use std::hint::black_box;
use std::path::Path;

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "response",
    summary: "resp1: after an idle gap, scan an array kept since the start and a fresh one",
    method: 1,
    sheet: after_idle::sheet,
    build: |params: &WorkParams| {
        Ok(Box::new(ResponseProbe {
            params: params.response.clone(),
            late: LateSplit::new(params),
        }))
    },
    default: |_| false,
    uses: &[SettingsGroup::Response],
    pace: Pace::OwnWork {
        expected_ns: after_idle::expected_ns,
        cap_ns: after_idle::cap_ns,
    },
    disk_bytes: super::no_disk,
    memory: MemoryPolicy::Shared,
    run_figure: super::no_run_figures,
};

/// The byte the arrays are filled with (any but 0 makes the kernel give
/// real pages).
const FILL: u8 = 0x5a;

/// Built in the orchestrator too (to check the parameters), so the arrays
/// are made only when measuring starts.
struct ResponseProbe {
    params: ResponseParams,
    late: LateSplit,
}

impl Probe for ResponseProbe {
    fn measure(self: Box<Self>, window: Window, _dir: &Path) -> Result<Measured, MeasureError> {
        let mut scans = Scans {
            resident: filled_array(self.params.resident_bytes, "cannot map the resident array")?,
            fresh_bytes: self.params.fresh_bytes,
        };
        after_idle::measure_points(window, &self.params, &mut scans, self.late)
    }
}

/// The arrays of one measurement.
struct Scans {
    /// Filled once, then only read.
    resident: MmapMut,
    fresh_bytes: u64,
}

impl Response for Scans {
    fn respond(&mut self) -> Result<(), MeasureError> {
        let resident = scan(&self.resident);
        let fresh = filled_array(self.fresh_bytes, "cannot map the fresh array")?;
        black_box(resident.wrapping_add(scan(&fresh)));
        Ok(())
    }
}

/// A private anonymous mapping of `bytes`, every byte written; `what` says
/// which array failed.
fn filled_array(bytes: u64, what: &'static str) -> Result<MmapMut, MeasureError> {
    let len = usize::try_from(bytes).map_err(|_| MeasureError::Io {
        what,
        error: std::io::Error::other(format!("{bytes} bytes do not fit in memory")),
    })?;
    let mut array = MmapMut::map_anon(len).map_err(|error| MeasureError::Io { what, error })?;
    array.fill(FILL);
    Ok(array)
}

/// The sum of every byte of `array`, each one read (the compiler cannot
/// know the mapping's contents, nor skip the reads).
fn scan(array: &[u8]) -> u64 {
    black_box(array)
        .iter()
        .fold(0u64, |sum, &byte| sum.wrapping_add(u64::from(byte)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_filled_and_every_byte_is_read() {
        let array = filled_array(3 * 4096 + 5, "test").unwrap();
        assert_eq!(array.len(), 3 * 4096 + 5);
        assert_eq!(scan(&array), (3 * 4096 + 5) * u64::from(FILL));
    }

    #[test]
    fn an_array_that_cannot_be_mapped_says_which() {
        let error = filled_array(u64::MAX / 2, "cannot map the fresh array").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("cannot map the fresh array: "),
            "{error}"
        );
    }
}
