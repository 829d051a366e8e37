//! Probes: the interactive work whose experience is measured. Each probe is a
//! file here plus one line in [`PROBES`]; the engine only sees [`Probe`].

pub mod audio;
pub mod custom;
mod frame_figures;
pub mod gaming;
pub mod periodic;
pub mod video;
pub mod x;

use crate::figures::{Measured, ProbeSheet};
use crate::report::schema::CustomShape;
use serde::{Deserialize, Serialize};

/// Parameters of the work probes and loads do, fixed for a whole run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WorkParams {
    /// Calibrated work loops per millisecond of CPU.
    pub loops_per_ms: f64,
    /// CPUs the run may use.
    pub cpus: usize,
    /// Number of processes of the `burn` load.
    pub burn_processes: usize,
    /// Shape of the `custom` simulation, when `-C`/`-I` were given.
    pub custom: Option<CustomShape>,
    /// Size of the files the disk loads write and read.
    pub file_bytes: u64,
    /// Memory the memory loads work through.
    pub mem_bytes: u64,
    /// Swap free for the loads when the run starts: the system's plus `--swap`.
    pub swap_bytes: u64,
}

#[cfg(test)]
impl WorkParams {
    /// Small parameters for unit tests; change fields with `..for_tests()`.
    pub fn for_tests() -> Self {
        Self {
            loops_per_ms: 1.0,
            cpus: 2,
            burn_processes: 4,
            custom: None,
            file_bytes: 1 << 20,
            mem_bytes: 1 << 20,
            swap_bytes: 0,
        }
    }

    /// Test parameters for a machine of `cpus` CPUs and `mem_bytes` of memory.
    pub fn for_tests_sized(cpus: usize, mem_bytes: u64) -> Self {
        Self {
            cpus,
            mem_bytes,
            ..Self::for_tests()
        }
    }
}

/// The measurement window, in absolute `CLOCK_MONOTONIC` nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// First intended start (`CLOCK_MONOTONIC` ns).
    pub start_ns: u64,
    /// No period starts at or after this time.
    pub end_ns: u64,
}

/// Interactive work that is measured for the length of a window. A probe
/// allocates everything it records into when it is built, before the worker
/// locks its memory, so measuring never page-faults or allocates.
pub trait Probe {
    /// Runs the simulated task from `window.start_ns` until `window.end_ns`
    /// (work begun before the end is finished) and returns what it counted;
    /// the figures are derived from that by the probe's sheet.
    fn measure(self: Box<Self>, window: Window) -> Measured;
}

/// A probe's entry in the registry.
pub struct ProbeDef {
    pub name: &'static str,
    /// One line for `feelbench list` and table headers.
    pub summary: &'static str,
    /// Its figures and table, given its summary (see [`ProbeDef::sheet`]).
    pub sheet: fn(&str) -> ProbeSheet,
    /// Builds the probe; fails (with a message for the user) when a needed
    /// parameter is missing.
    pub build: fn(&WorkParams) -> Result<Box<dyn Probe>, String>,
    /// Whether `feelbench run` includes it without being asked.
    pub default: fn(&WorkParams) -> bool,
}

impl ProbeDef {
    /// The probe's figures and table: what every run document that
    /// measured it stores, and every renderer reads.
    pub fn sheet(&self) -> ProbeSheet {
        (self.sheet)(self.summary)
    }
}

/// Every probe, in the order they are run and listed.
pub static PROBES: &[ProbeDef] = &[x::DEF, audio::DEF, video::DEF, gaming::DEF, custom::DEF];

/// The probe called `name`.
pub fn find(name: &str) -> Option<&'static ProbeDef> {
    PROBES.iter().find(|p| p.name == name)
}

/// The declarations of the probe called `name`, for reading runs whose
/// documents do not carry them (schema version 1).
pub fn sheet_of(name: &str) -> Option<ProbeSheet> {
    find(name).map(ProbeDef::sheet)
}

/// The keys of the figures the probes declare, in registry order without
/// repeats; `compared_only`: only those compared by default.
pub fn figure_keys(compared_only: bool) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for def in PROBES.iter().flat_map(|p| p.sheet().figures) {
        if (def.compared || !compared_only) && !keys.contains(&def.key) {
            keys.push(def.key);
        }
    }
    keys
}

/// Included by default.
pub(crate) fn always(_: &WorkParams) -> bool {
    true
}
