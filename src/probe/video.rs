//! `video`: a player showing 60 frames per second, each needing 40 % of its
//! period (interbench's Video). The shape is [`crate::sim::shapes::VIDEO`].

use super::periodic::PeriodicProbe;
use super::ProbeDef;
use crate::measure::sched::MemoryPolicy;
use crate::sim::shapes;

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "video",
    summary: "video player: 60 frames/s, 40 % CPU per frame",
    method: 1,
    sheet: super::periodic::sheet,
    build: |params| Ok(PeriodicProbe::boxed(shapes::VIDEO, params)),
    default: super::always,
    uses: &[],
    pace: super::Pace::Duration,
    disk_bytes: super::no_disk,
    memory: MemoryPolicy::Locked,
    run_figure: super::no_run_figures,
};
