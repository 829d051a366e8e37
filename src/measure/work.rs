//! The calibrated unit of CPU work: a loop of dependent integer operations that
//! the compiler cannot remove and whose speed depends only on the CPU.

use std::hint::black_box;

/// Runs `loops` iterations of the work loop and returns a value that depends
/// on every iteration (so the loop cannot be optimised away).
#[inline(never)]
pub fn burn_loops(loops: u64) -> u64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15_u64);
    for _ in 0..loops {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        x ^= x >> 29;
    }
    black_box(x)
}

/// Number of loops that make `cpu_ns` nanoseconds of CPU work at
/// `loops_per_ms`.
pub fn loops_for_ns(loops_per_ms: f64, cpu_ns: u64) -> u64 {
    (loops_per_ms * cpu_ns as f64 / 1e6).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_count_scales_with_time() {
        assert_eq!(loops_for_ns(1000.0, 1_000_000), 1000);
        assert_eq!(loops_for_ns(1000.0, 2_500_000), 2500);
        assert_eq!(loops_for_ns(1000.0, 0), 0);
    }

    #[test]
    fn work_depends_on_loop_count() {
        assert_ne!(burn_loops(10), burn_loops(11));
    }
}
