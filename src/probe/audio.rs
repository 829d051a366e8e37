//! `audio`: a player that wakes every 50 ms and needs 5 % of a CPU to fill the
//! next buffer (interbench's Audio).

use super::periodic::{CpuDemand, PeriodicProbe, PeriodicShape};
use super::ProbeDef;

/// The audio task's period and CPU share.
pub const SHAPE: PeriodicShape = PeriodicShape {
    period_ns: 50_000_000,
    cpu: CpuDemand::Share(5.0),
};

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "audio",
    summary: "audio player: 50 ms period, 5 % CPU per period",
    sheet: super::periodic::sheet,
    build: |params| Ok(PeriodicProbe::boxed(SHAPE, params)),
    default: super::always,
};
