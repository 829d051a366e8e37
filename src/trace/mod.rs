//! Perfetto traces of runs (`run --trace`, `report --format perfetto`) and
//! of `watch`'s incidents (`watch --trace`, each a scenario of its window):
//! what a trace holds of each scenario, as data the engine fills
//! ([`ScenarioTrace`]), rendered into Perfetto's packets (`render`: the
//! scenarios as named ranges, each probe thread's events as slices beside
//! the time they were allowed, late ones with their cause and parts, the
//! loads' processes and threads by feelbench's names, `counters`: the
//! window's telemetry, `sched`: the scheduler recorder's records as
//! Perfetto's own scheduling events with a flow from each late event to
//! what ran instead; `packets`: the tracks, slices and lanes they are made
//! of), encoded with Perfetto's message numbers (`protos`)
//! and written beside its path and renamed (`file`); a stored run's worst
//! late events as a trace (`stored`).

mod counters;
mod file;
mod packets;
mod protos;
mod render;
mod sched;
mod stored;

pub use file::{check_dir_writable, check_writable, write};
pub use render::render;
pub use stored::of_document;

use crate::document::schema::{LoadTask, LoadWork};
use crate::figures::late::LateEvent;
use crate::measure::late::ThreadEvents;
use crate::measure::tasks::TaskSched;
use crate::measure::window::Window;
use crate::system::sched_trace::Trace as SchedRecords;
use crate::system::telemetry::window::WindowSamples;

/// How to open a trace, in words, for the run's last lines and reports.
pub const HOW_TO_OPEN: &str =
    "open it at https://ui.perfetto.dev (Open trace file) or with trace_processor";

/// What the trace shows of one measured scenario.
#[derive(Debug, Clone)]
pub struct ScenarioTrace {
    /// `x under burn`, with its repeat when it has several.
    pub name: String,
    pub probe: String,
    pub window: Window,
    /// The probe's tasks, as read during the window (their names).
    pub probe_tasks: Vec<TaskSched>,
    /// Every event of each probe thread.
    pub threads: Vec<ThreadEvents>,
    /// The worst late events, with what ran instead (`--explain`).
    pub worst: Vec<LateEvent>,
    /// The loads' processes and threads, by feelbench's names.
    pub load_tasks: Vec<LoadTask>,
    /// The loads' work, per sub-window too.
    pub load_work: Vec<LoadWork>,
    /// The window's telemetry, every 100 ms.
    pub samples: Option<WindowSamples>,
    /// The scheduler recorder's records (`--explain`).
    pub sched: Option<SchedRecords>,
}
