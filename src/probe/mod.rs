//! Probes: the interactive work whose experience is measured. Each probe is a
//! file here plus one line in [`PROBES`] (`periodic.rs` holds what the
//! periodic probes share); the engine only sees [`Probe`]. The simulated work
//! itself lives below, in `sim`, shared with the loads; a probe never knows
//! which load runs.

pub mod audio;
pub mod custom;
pub mod gaming;
pub mod periodic;
pub mod video;
pub mod x;

use crate::measure::sched::SchedApplied;
use crate::measure::window::Window;
use crate::report::schema::ProbeResult;
use crate::sim::{SimError, WorkParams};

/// Interactive work that is measured for the length of a window. A probe
/// allocates everything it records into when it is built, before the worker
/// locks its memory, so measuring never page-faults or allocates.
pub trait Probe {
    /// Runs the simulated task from `window.start_ns` until `window.end_ns`
    /// (frames begun before the end are finished) and returns its figures.
    fn measure(self: Box<Self>, window: Window, sched: SchedApplied) -> ProbeResult;
}

/// A probe's entry in the registry.
pub struct ProbeDef {
    /// Its name on the command line and in run documents.
    pub name: &'static str,
    /// One line for `feelbench list` and table headers.
    pub summary: &'static str,
    /// True for probes judged by frame rate (no deadlines), false for
    /// probes judged by deadlines.
    pub frame_rate: bool,
    /// Builds the probe; fails (with a message for the user) when a needed
    /// parameter is missing.
    pub build: fn(&WorkParams) -> Result<Box<dyn Probe>, BuildError>,
    /// Whether `feelbench run` includes it without being asked.
    pub default: fn(&WorkParams) -> bool,
}

/// Why a probe cannot be built with the run's parameters.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The simulation it runs lacks a parameter.
    #[error(transparent)]
    Sim(#[from] SimError),
}

/// Every probe, in the order they are run and listed.
pub static PROBES: &[ProbeDef] = &[x::DEF, audio::DEF, video::DEF, gaming::DEF, custom::DEF];

/// The probe called `name`.
pub fn find(name: &str) -> Option<&'static ProbeDef> {
    PROBES.iter().find(|p| p.name == name)
}

/// Included by default.
pub(crate) fn always(_: &WorkParams) -> bool {
    true
}
