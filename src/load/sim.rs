//! The periodic simulations as loads (interbench's Video, X and Custom loads):
//! the same frames the probes run, repeated until stopped; the work is the
//! number of frames done.

use super::{Load, LoadDef};
use crate::measure::clock::now_ns;
use crate::measure::frames::FrameAccount;
use crate::probe::periodic::{FrameRunner, PeriodicShape};
use crate::probe::{Window, WorkParams};

/// `video` as a load.
pub const VIDEO: LoadDef = LoadDef {
    name: "video",
    summary: "a video player (60 frames/s, 40 % CPU) in the background",
    unit: "frames",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: super::no_check,
    processes: |_| 1,
    build: |context| Ok(SimLoad::boxed(crate::probe::video::SHAPE, &context.params)),
    default: crate::probe::always,
};

/// `x` as a load.
pub const X: LoadDef = LoadDef {
    name: "x",
    summary: "a window being dragged (10 ms events, CPU sweeping) in the background",
    unit: "frames",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: super::no_check,
    processes: |_| 1,
    build: |context| Ok(SimLoad::boxed(crate::probe::x::SHAPE, &context.params)),
    default: crate::probe::always,
};

/// `custom` as a load.
pub const CUSTOM: LoadDef = LoadDef {
    name: "custom",
    summary: "your own periodic task (-C PCT -I US) in the background",
    unit: "frames",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: |params, _| crate::probe::custom::shape(params).map(drop),
    processes: |_| 1,
    build: |context| {
        let shape = crate::probe::custom::shape(&context.params)?;
        Ok(SimLoad::boxed(shape, &context.params))
    },
    default: |params| params.custom.is_some(),
};

struct SimLoad {
    runner: FrameRunner,
}

impl SimLoad {
    fn boxed(shape: PeriodicShape, params: &WorkParams) -> Box<dyn Load> {
        let window = Window {
            start_ns: now_ns(),
            end_ns: u64::MAX / 4,
        };
        Box::new(Self {
            runner: FrameRunner::new(shape, window, params.loops_per_ms, FrameAccount::default()),
        })
    }
}

impl Load for SimLoad {
    fn step(&mut self) -> Result<f64, String> {
        Ok(self.runner.run_next_frame().map_or(0.0, |_| 1.0))
    }
}
