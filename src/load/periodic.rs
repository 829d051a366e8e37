//! `video`, `x` and `custom`: the periodic simulations as loads (interbench's
//! Video, X and Custom loads): the same frames the probes of those names run
//! (see `sim::shapes`), repeated until stopped; the work is the number of
//! frames done.

use super::{Load, LoadDef, LoadError};
use crate::sim::periodic::{FrameOutcome, FrameRunner, PeriodicShape};
use crate::sim::{shapes, WorkParams};

/// `video` as a load.
pub const VIDEO: LoadDef = LoadDef {
    name: "video",
    summary: "a video player (60 frames/s, 40 % CPU) in the background",
    method: 1,
    unit: "frames",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: super::no_check,
    processes: |_| 1,
    build: |context| Ok(PeriodicLoad::boxed(shapes::VIDEO, &context.params)),
    default: super::always,
    uses: &[],
    job_cache: None,
};

/// `x` as a load.
pub const X: LoadDef = LoadDef {
    name: "x",
    summary: "a window being dragged (10 ms events, CPU sweeping) in the background",
    method: 1,
    unit: "frames",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: super::no_check,
    processes: |_| 1,
    build: |context| Ok(PeriodicLoad::boxed(shapes::X, &context.params)),
    default: super::always,
    uses: &[],
    job_cache: None,
};

/// `custom` as a load.
pub const CUSTOM: LoadDef = LoadDef {
    name: "custom",
    summary: "your own periodic task (-C PCT -I US) in the background",
    method: 1,
    unit: "frames",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: |params, _| shapes::custom(params).map(drop).map_err(Into::into),
    processes: |_| 1,
    build: |context| {
        let shape = shapes::custom(&context.params).map_err(super::CheckError::from)?;
        Ok(PeriodicLoad::boxed(shape, &context.params))
    },
    default: |params| params.custom.is_some(),
    uses: &[],
    job_cache: None,
};

struct PeriodicLoad {
    runner: FrameRunner,
}

impl PeriodicLoad {
    fn boxed(shape: PeriodicShape, params: &WorkParams) -> Box<dyn Load> {
        Box::new(Self {
            runner: FrameRunner::endless(shape, params.loops_per_ms),
        })
    }
}

impl Load for PeriodicLoad {
    fn step(&mut self) -> Result<f64, LoadError> {
        // A frame dropped (woken after its period) is no work done.
        Ok(match self.runner.run_next_frame() {
            Some(FrameOutcome::Ran { .. }) => 1.0,
            Some(FrameOutcome::Dropped { .. }) | None => 0.0,
        })
    }
}
