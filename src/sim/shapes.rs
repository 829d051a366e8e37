//! The periodic tasks feelbench simulates, each both a probe and a load of
//! the same name: `x`, `audio`, `video` (interbench's X, Audio and Video)
//! and `custom`, whose shape the user gives.

use super::periodic::{CpuDemand, PeriodicShape};
use super::WorkParams;

/// `x`: a desktop's display server while a window is grabbed and dragged:
/// pointer events every 10 ms whose redraw work rises from 0 % to 100 % of
/// the period in 1 % steps, then starts again at 0 (one sweep ≈ 1 s).
pub const X: PeriodicShape = PeriodicShape {
    period_ns: 10_000_000,
    cpu: CpuDemand::Sweep,
};

/// `audio`: a player that wakes every 50 ms and needs 5 % of a CPU to fill
/// the next buffer.
pub const AUDIO: PeriodicShape = PeriodicShape {
    period_ns: 50_000_000,
    cpu: CpuDemand::Share(5.0),
};

/// `video`: 60 frames per second (a period of 1/60 s), each needing 40 % of
/// its period.
pub const VIDEO: PeriodicShape = PeriodicShape {
    period_ns: 16_666_667,
    cpu: CpuDemand::Share(40.0),
};

/// `custom`: the shape the user gave with `--custom-cpu` and
/// `--custom-interval`, or the error saying how to give one.
pub fn custom(params: &WorkParams) -> Result<PeriodicShape, String> {
    let custom = params
        .custom
        .ok_or("the custom simulation needs --custom-cpu PCT (-C) and --custom-interval US (-I)")?;
    Ok(PeriodicShape {
        period_ns: custom.interval_us * 1_000,
        cpu: CpuDemand::Share(custom.cpu_pct),
    })
}
