//! The periodic tasks feelbench simulates, each both a probe and a load of
//! the same name: `x`, `audio`, `video` (interbench's X, Audio and Video)
//! and `custom`, whose shape the user gives.

use super::periodic::{CpuDemand, PeriodicShape};
use super::{SimError, WorkParams};

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
pub fn custom(params: &WorkParams) -> Result<PeriodicShape, SimError> {
    Ok(params.custom.ok_or(SimError::NoCustomShape)?.periodic())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::CustomShape;

    #[test]
    fn x_sweeps_from_nothing_to_the_whole_period_and_starts_again() {
        let wanted: Vec<u64> = [0, 1, 50, 100, 101]
            .map(|frame| X.cpu_wanted_ns(frame))
            .to_vec();
        assert_eq!(wanted, [0, 100_000, 5_000_000, 10_000_000, 0]);
        assert_eq!(AUDIO.cpu_wanted_ns(7), 2_500_000);
        assert_eq!(VIDEO.cpu_wanted_ns(0), 6_666_667);
    }

    #[test]
    fn custom_takes_the_users_shape_or_says_how_to_give_one() {
        let params = WorkParams::for_tests();
        let err = custom(&params).unwrap_err().to_string();
        assert!(err.contains("--custom-cpu PCT (-C)"), "{err}");
        let shape = custom(&WorkParams {
            custom: Some(CustomShape {
                cpu_pct: 30.0,
                interval_us: 2_000,
            }),
            ..params
        })
        .unwrap();
        assert_eq!(shape.period_ns, 2_000_000);
        assert_eq!(shape.cpu_wanted_ns(3), 600_000);
    }
}
