//! `cpuload`: resp1's cpuload, CPUs + 1 processes doing floating-point
//! work. One more process than CPUs keeps the scheduler moving processes
//! between CPUs and time-slicing them; floating-point work gives each
//! switch the FPU and vector state to save and restore (resp1's "damage CPU
//! affinity and thrash the cache"). `burn`, by contrast, loops on integers
//! in registers.
//!
//! The work: each process sweeps `y[i] = y[i] * 0.5 + x[i]` over two arrays
//! of 64 Ki doubles (1 MiB together: half the L2 cache of a current core,
//! so the processes sharing a CPU evict each other's data). The values stay
//! between 1 and 4, never overflowing nor becoming subnormal (which would
//! slow the arithmetic down). Its unit is the Mflop: a multiply and an add
//! per element, counted as two floating-point operations whether the CPU
//! fuses them or not, so the count is exact and comparable between machines.

use super::{Load, LoadDef, LoadError};
use std::hint::black_box;

/// Elements of each array.
const ELEMENTS: usize = 64 * 1024;
/// Sweeps over the arrays in one step (about a millisecond).
const SWEEPS_PER_STEP: usize = 100;
/// Floating-point operations per element and sweep: a multiply, an add.
const FLOPS_PER_ELEMENT: usize = 2;
/// What `y` is multiplied by each sweep: below 1, so `y` stays bounded.
const DECAY: f64 = 0.5;

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "cpuload",
    summary: "resp1's cpuload: CPUs + 1 processes of floating-point work",
    method: 1,
    unit: "Mflop",
    takes_arg: false,
    processes: |params| params.cpus + 1,
    disk_bytes: super::no_disk,
    check: super::no_check,
    build: |_| Ok(Box::new(CpuLoad::new())),
    default: |_| false,
    uses: &[],
    job_cache: None,
};

struct CpuLoad {
    x: Vec<f64>,
    y: Vec<f64>,
}

impl CpuLoad {
    fn new() -> Self {
        // x between 1 and 2, so y tends to 2x, between 2 and 4.
        let x = (0..ELEMENTS)
            .map(|i| 1.0 + i as f64 / ELEMENTS as f64)
            .collect();
        Self {
            x,
            y: vec![1.0; ELEMENTS],
        }
    }

    /// One sweep: `y = y * DECAY + x`, element by element.
    #[inline(never)]
    fn sweep(&mut self) {
        for (y, x) in self.y.iter_mut().zip(&self.x) {
            *y = *y * DECAY + *x;
        }
        black_box(&mut self.y);
    }
}

impl Load for CpuLoad {
    fn step(&mut self) -> Result<f64, LoadError> {
        (0..SWEEPS_PER_STEP).for_each(|_| self.sweep());
        Ok((SWEEPS_PER_STEP * ELEMENTS * FLOPS_PER_ELEMENT) as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_stay_normal_and_bounded() {
        let mut load = CpuLoad::new();
        for _ in 0..20 {
            load.step().unwrap();
        }
        assert!(load
            .y
            .iter()
            .all(|y| y.is_normal() && (1.0..4.0).contains(y)));
        // Converged to 2x.
        assert!((load.y[0] - 2.0).abs() < 1e-9, "{}", load.y[0]);
    }
}
