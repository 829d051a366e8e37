//! `rtapp`: an rt-app workload's tasks as background work (`--load
//! rtapp:SPEC`), run on threads of the load's process by
//! `sim::rtapp::exec` until the load is stopped (the file's own
//! `global.duration` is left to the run's `-t`). Its work is the phase
//! loops its threads complete; each step waits a slice while they run.

use super::{Load, LoadDef, LoadError};
use crate::measure::clock::{now_ns, sleep_until_ns};
use crate::measure::window::Window;
use crate::sim::rtapp::exec::{Executor, Running};
use crate::sim::{SettingsGroup, SimError};

/// How long one step waits for the threads' work.
const SLICE_NS: u64 = 20_000_000;

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "rtapp",
    summary: "an rt-app workload's tasks (--load rtapp:FILE) in the background",
    method: 1,
    unit: "phase loops",
    takes_arg: false,
    disk_bytes: |_| 0,
    check: |params, _| match params.rtapp.load {
        Some(_) => Ok(()),
        None => Err(SimError::NoRtappWorkload("load").into()),
    },
    processes: |_| 1,
    build: |context| {
        let workload = context
            .params
            .rtapp
            .load
            .as_ref()
            .ok_or(super::CheckError::from(SimError::NoRtappWorkload("load")))?;
        let endless = crate::sim::rtapp::model::Workload {
            duration_s: None,
            ..workload.clone()
        };
        let start_ns = now_ns();
        let window = Window {
            start_ns,
            end_ns: u64::MAX / 2,
        };
        // A load's delays are not split: it measures nothing.
        let running = Executor::new(&endless, context.params.loops_per_ms, false)
            .start(window)
            .map_err(|e| LoadError::Io {
                what: "iorun cannot open /dev/null for writing (rt-app's io_device)".to_string(),
                error: e.0,
            })?;
        Ok(Box::new(RtappLoad {
            running,
            counted: 0,
        }))
    },
    default: |_| false,
    uses: &[SettingsGroup::Rtapp],
    job_cache: None,
};

struct RtappLoad {
    running: Running,
    /// Phase loops already returned as work.
    counted: u64,
}

impl Load for RtappLoad {
    fn step(&mut self) -> Result<f64, LoadError> {
        sleep_until_ns(now_ns() + SLICE_NS);
        let done = self.running.loops_done();
        let new = done - self.counted;
        self.counted = done;
        Ok(new as f64)
    }
}
