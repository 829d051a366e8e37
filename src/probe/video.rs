//! `video`: a player showing 60 frames per second, each needing 40 % of its
//! period (interbench's Video).

use super::periodic::{CpuDemand, PeriodicProbe, PeriodicShape};
use super::ProbeDef;

/// The video task's period (1/60 s) and CPU share.
pub const SHAPE: PeriodicShape = PeriodicShape {
    period_ns: 16_666_667,
    cpu: CpuDemand::Share(40.0),
};

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "video",
    summary: "video player: 60 frames/s, 40 % CPU per frame",
    sheet: super::periodic::sheet,
    build: |params| Ok(PeriodicProbe::boxed(SHAPE, params)),
    default: super::always,
};
