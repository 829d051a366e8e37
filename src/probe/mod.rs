//! Probes: the interactive work whose experience is measured. Each probe is a
//! file here plus one line in [`PROBES`] (`periodic.rs` holds what the
//! periodic probes share, `io_thread.rs` the `fileio` probe's request
//! thread); the engine only sees [`Probe`]. The simulated work
//! itself lives below, in `sim`, shared with the loads; a probe never knows
//! which load runs.

mod after_idle;
pub mod audio;
pub mod command;
pub mod custom;
pub mod fileio;
pub mod fragment;
mod frame_figures;
pub mod game;
pub mod gaming;
mod io_thread;
pub mod job;
mod late_split;
pub mod micro;
pub mod periodic;
pub mod response;
pub mod rtapp;
pub mod video;
pub mod x;

use crate::figures::{Measured, ProbeSheet};
use crate::measure::sched::MemoryPolicy;
use crate::measure::window::Window;
use crate::sim::job::JobError;
use crate::sim::{SettingsGroup, SimError, WorkParams};
use std::path::Path;

/// Interactive work that is measured for the length of a window. A probe
/// that locks its memory allocates everything it records into when it is
/// built, before the worker locks its memory, so measuring never
/// page-faults or allocates; one that shares its memory
/// ([`MemoryPolicy::Shared`]) page-faults on purpose, or only waits for
/// processes it started (`job`).
pub trait Probe {
    /// Makes the files the probe works on in `dir` (which does not exist
    /// yet), before its window is announced and its memory locked; most
    /// probes have none.
    fn prepare(&mut self, _dir: &Path) -> Result<(), MeasureError> {
        Ok(())
    }

    /// Runs the simulated task from `window.start_ns` until `window.end_ns`
    /// (work begun before the end is finished; a probe of its own pace ends
    /// sooner) and returns what it counted; the figures are derived from
    /// that by the probe's sheet. `dir` is a private directory for the
    /// probe's files, removed after the scenario; it does not exist yet. It
    /// fails when the work itself cannot be done (a program it times failed).
    fn measure(self: Box<Self>, window: Window, dir: &Path) -> Result<Measured, MeasureError>;
}

/// A probe's entry in the registry.
pub struct ProbeDef {
    /// Its name on the command line and in run documents.
    pub name: &'static str,
    /// One line for `feelbench list` and table headers.
    pub summary: &'static str,
    /// The version of its method: raised by one whenever what it measures
    /// changes (its work, its clock, its timing, a formula of a figure that
    /// keeps its name), so that runs before and after are never one series
    /// (ARCHITECTURE.md, "A new probe"; CHANGELOG.md says why each was
    /// raised). Every run records it.
    pub method: u32,
    /// Its figures and table, given its summary and the run's parameters
    /// (`None` outside a run: listing, reading old documents), which only
    /// labels may depend on — except the `rtapp` probe's figures per task,
    /// which its workload gives (see [`ProbeDef::sheet`]).
    pub sheet: fn(&str, Option<&WorkParams>) -> ProbeSheet,
    /// Builds the probe; fails (with a message for the user) when a needed
    /// parameter is missing.
    pub build: fn(&WorkParams) -> Result<Box<dyn Probe>, BuildError>,
    /// Whether `feelbench run` includes it without being asked.
    pub default: fn(&WorkParams) -> bool,
    /// The groups of settings it works by (recorded in runs that measure it).
    pub uses: &'static [SettingsGroup],
    /// Disk space its files need at most (in the work directory).
    pub disk_bytes: fn(&WorkParams) -> u64,
    /// How long it measures.
    pub pace: Pace,
    /// Whether the worker locks its memory, or leaves it to the kernel (in
    /// the loads' memory cgroup, if any).
    pub memory: MemoryPolicy,
    /// Whether `key` names a figure its sheet declares only from a run's
    /// parameters (the `rtapp` probe's `TASK.wakeup_p99`), so that it is
    /// not among [`figure_keys`]; most probes have none.
    pub run_figure: fn(&str) -> bool,
}

/// How long a probe measures.
#[derive(Debug, Clone, Copy)]
pub enum Pace {
    /// For the scenario's duration (`-t`): a task that repeats for as long
    /// as it is watched.
    Duration,
    /// Until its own work is done (a number of response points, a job run
    /// to its end); the loads run until it reports. `expected_ns` is how
    /// long that takes on an idle machine (for the progress bar), `cap_ns`
    /// the longest it may take: its window ends there, and the probe stops
    /// and says so in its figures.
    OwnWork {
        expected_ns: fn(&WorkParams) -> u64,
        cap_ns: fn(&WorkParams) -> u64,
    },
}

impl ProbeDef {
    /// The length of its measurement window in a run whose scenarios last
    /// `duration_ns`.
    pub fn window_ns(&self, params: &WorkParams, duration_ns: u64) -> u64 {
        match self.pace {
            Pace::Duration => duration_ns,
            Pace::OwnWork { cap_ns, .. } => cap_ns(params),
        }
    }

    /// How long it is expected to measure in a run whose scenarios last
    /// `duration_ns`.
    pub fn expected_ns(&self, params: &WorkParams, duration_ns: u64) -> u64 {
        match self.pace {
            Pace::Duration => duration_ns,
            Pace::OwnWork { expected_ns, .. } => expected_ns(params),
        }
    }

    /// Whether it runs one part of another probe (`micro:fork` of `micro`):
    /// such probes are named `PROBE:PART`, and `--full` leaves them out.
    pub fn is_part(&self) -> bool {
        self.name.contains(':')
    }

    /// The probe's figures and table with the labels of the default
    /// settings: its figure keys, and its sheet for documents that do not
    /// store one.
    pub fn sheet(&self) -> ProbeSheet {
        self.sheet_of_params(None)
    }

    /// The probe's figures and table in a run of `params`: what every run
    /// document that measured it stores, and every renderer reads.
    pub fn sheet_for(&self, params: &WorkParams) -> ProbeSheet {
        self.sheet_of_params(Some(params))
    }

    fn sheet_of_params(&self, params: Option<&WorkParams>) -> ProbeSheet {
        ProbeSheet {
            own_pace: matches!(self.pace, Pace::OwnWork { .. }),
            ..(self.sheet)(self.summary, params)
        }
    }
}

/// Why a probe cannot be built with the run's parameters.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The simulation it runs lacks a parameter.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// The program it times cannot be started as asked.
    #[error(transparent)]
    Command(#[from] command::SetupError),
}

/// Why a probe could not finish its measurement (the scenario fails with
/// it); the message is complete on its own.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// Its job could not run to its end.
    #[error(transparent)]
    Job(#[from] JobError),
    /// The program it times failed.
    #[error(transparent)]
    Command(#[from] command::CommandFailed),
    /// A memory or system operation failed.
    #[error("{what}: {error}")]
    Io {
        /// What the probe was doing (`cannot map the fresh array`).
        what: &'static str,
        error: std::io::Error,
    },
}

/// Every probe, in the order they are run and listed.
pub static PROBES: &[ProbeDef] = &[
    x::DEF,
    audio::DEF,
    video::DEF,
    gaming::DEF,
    game::DEF,
    custom::DEF,
    response::DEF,
    command::DEF,
    job::DEF,
    fragment::DEF,
    fileio::DEF,
    rtapp::DEF,
    micro::MICRO,
    micro::FORK,
    micro::EXEC,
    micro::SH,
    micro::CTX0,
    micro::CTX64,
    micro::PIPE,
    micro::UNIX,
    micro::UDP,
    micro::TCP,
    micro::CONNECT,
    micro::CREATE0,
    micro::DELETE0,
    micro::CREATE1K,
    micro::DELETE1K,
    micro::CREATE10K,
    micro::DELETE10K,
    micro::MMAP,
    micro::FAULT,
];

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

/// Whether `key` names a figure some probe declares in the sheet of a run
/// only ([`ProbeDef::run_figure`]), so it is not among [`figure_keys`].
pub fn is_parameter_figure(key: &str) -> bool {
    PROBES.iter().any(|p| (p.run_figure)(key))
}

/// No figure declared from a run's parameters.
pub(crate) fn no_run_figures(_: &str) -> bool {
    false
}

/// No disk needed.
pub(crate) fn no_disk(_: &WorkParams) -> u64 {
    0
}

/// Included by default.
pub(crate) fn always(_: &WorkParams) -> bool {
    true
}
