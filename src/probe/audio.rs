//! `audio`: a player that wakes every 50 ms and needs 5 % of a CPU to fill the
//! next buffer (interbench's Audio). The shape is [`crate::sim::shapes::AUDIO`].

use super::periodic::PeriodicProbe;
use super::ProbeDef;
use crate::measure::sched::MemoryPolicy;
use crate::sim::shapes;

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "audio",
    summary: "audio player: 50 ms period, 5 % CPU per period",
    method: 1,
    sheet: super::periodic::sheet,
    build: |params| Ok(PeriodicProbe::boxed(shapes::AUDIO, params)),
    default: super::always,
    uses: &[],
    pace: super::Pace::Duration,
    disk_bytes: super::no_disk,
    memory: MemoryPolicy::Locked,
    run_figure: super::no_run_figures,
};
