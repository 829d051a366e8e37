//! `custom`: a periodic task of the user's shape (`--custom-cpu PCT
//! --custom-interval US`, interbench's -C/-I).

use super::periodic::PeriodicProbe;
use super::periodic::{CpuDemand, PeriodicShape};
use super::{ProbeDef, WorkParams};

/// The custom task's shape, or the message saying how to give one.
pub fn shape(params: &WorkParams) -> Result<PeriodicShape, String> {
    let custom = params
        .custom
        .ok_or("the custom simulation needs --custom-cpu PCT (-C) and --custom-interval US (-I)")?;
    Ok(PeriodicShape {
        period_ns: custom.interval_us * 1_000,
        cpu: CpuDemand::Share(custom.cpu_pct),
    })
}

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "custom",
    summary: "your own periodic task: --custom-cpu PCT every --custom-interval US",
    sheet: super::periodic::sheet,
    build: |params| Ok(PeriodicProbe::boxed(shape(params)?, params)),
    default: |params| params.custom.is_some(),
};
