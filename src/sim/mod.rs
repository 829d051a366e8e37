//! The simulated work both probes and loads do: the run's work parameters,
//! the periodic tasks of interbench (a frame of CPU work, measured on the
//! thread's CPU time, at each period's absolute start, frames dropped once
//! their deadline passed) and the shapes of the ones feelbench knows. A probe
//! measures such a task; a load runs the same task in the background. Also
//! contest's reference job (`job`), which the `job` probe times and the
//! `jobload` load repeats. This module knows neither probes nor loads.

pub mod draws;
pub mod fragment;
pub mod game;
pub mod io;
pub mod job;
pub mod micro;
pub mod periodic;
pub mod response;
pub mod rtapp;
pub mod shapes;
pub mod uncached;

use fragment::FragmentSettings;
use game::GameSettings;
use io::IoSettings;
use job::JobSettings;
use micro::MicroMode;
pub use response::ResponseParams;
use rtapp::settings::RtappSettings;

use serde::{Deserialize, Serialize};

/// A group of [`WorkParams`] only some probes and loads work by. A run
/// records a group only when one of its probes or loads uses it, so runs
/// that differ in a group none of them uses still merge and compare alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsGroup {
    /// [`WorkParams::response`].
    Response,
    /// [`WorkParams::job`].
    Job,
    /// [`WorkParams::fragment`].
    Fragment,
    /// [`WorkParams::game`].
    Game,
    /// [`WorkParams::io`].
    Io,
    /// [`WorkParams::micro`].
    Micro,
    /// [`WorkParams::rtapp`].
    Rtapp,
}

/// Parameters of the work probes and loads do, fixed for a whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// How the probes that answer after an idle gap work.
    pub response: ResponseParams,
    /// The job the `job` probe times and `jobload` repeats.
    pub job: JobSettings,
    /// The buffer and work of the `fragment` probe's player.
    pub fragment: FragmentSettings,
    /// The frame graph of the `game` probe.
    #[serde(default)]
    pub game: GameSettings,
    /// The file-I/O work: the `fileio` probe's and the `io*` loads'.
    pub io: IoSettings,
    /// How the `micro` probes time their operations.
    pub micro: MicroMode,
    /// The rt-app workloads of the `rtapp` probe and load
    /// (`--probe rtapp:SPEC`, `--load rtapp:SPEC`).
    pub rtapp: RtappSettings,
    /// Whether the probes split each event's delay into its causes
    /// (`measure::late`); off with `--no-late-split`, when they take no
    /// readings for it at all.
    pub late_split: bool,
    /// Events each probe thread logs whole for `run --trace` at most (0:
    /// none, the run writes no trace); set per scenario by its window.
    #[serde(default)]
    pub trace_events: usize,
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
            response: ResponseParams::for_tests(),
            job: JobSettings::default(),
            fragment: FragmentSettings::default(),
            game: GameSettings::default(),
            io: IoSettings::default(),
            micro: MicroMode::default(),
            rtapp: RtappSettings::default(),
            late_split: true,
            trace_events: 0,
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

/// The period and CPU share of the `custom` simulation (`-C`/`-I`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CustomShape {
    /// CPU each period wants, in % of the period.
    pub cpu_pct: f64,
    /// The period, in µs.
    pub interval_us: u64,
}

impl CustomShape {
    /// The CPU shares it may want, % of its period.
    pub const CPU_PCT: std::ops::RangeInclusive<f64> = 0.0..=100.0;
    /// The periods it may have, µs (100 µs to 1 s).
    pub const INTERVAL_US: std::ops::RangeInclusive<u64> = 100..=1_000_000;

    /// The periodic shape it gives.
    pub fn periodic(&self) -> periodic::PeriodicShape {
        periodic::PeriodicShape {
            period_ns: self.interval_us * 1_000,
            cpu: periodic::CpuDemand::Share(self.cpu_pct),
        }
    }
}

/// What the simulated work cannot do with the run's parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The `custom` task was asked for without its shape.
    #[error("the custom simulation needs --custom-cpu PCT (-C) and --custom-interval US (-I)")]
    NoCustomShape,
    /// The `rtapp` probe or load was asked for without a workload.
    #[error("rtapp needs a workload: --{0} rtapp:FILE (a file or a shipped workload's name)")]
    NoRtappWorkload(&'static str),
    /// The `rtapp` probe's workload has nothing to be late for.
    #[error("{0}")]
    RtappNotMeasurable(String),
}
