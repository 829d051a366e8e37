//! `custom`: a periodic task of the user's shape (`--custom-cpu PCT
//! --custom-interval US`, interbench's -C/-I); see
//! [`crate::sim::shapes::custom`].

use super::periodic::PeriodicProbe;
use super::ProbeDef;
use crate::measure::sched::MemoryPolicy;
use crate::sim::shapes;

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "custom",
    summary: "your own periodic task: --custom-cpu PCT every --custom-interval US",
    method: 2,
    sheet: super::periodic::sheet,
    build: |params| Ok(PeriodicProbe::boxed(shapes::custom(params)?, params)),
    default: |params| params.custom.is_some(),
    uses: &[],
    pace: super::Pace::Duration,
    disk_bytes: super::no_disk,
    memory: MemoryPolicy::Locked,
    run_figure: super::no_run_figures,
};
