//! The unit of CPU work: a loop of dependent integer operations that the
//! compiler cannot remove, and the frame's work built from it, which runs
//! the loop in chunks until the thread's CPU time has advanced by the CPU
//! time wanted. The calibration (`loops_per_ms`) only sizes the chunks, so
//! a frame gets its CPU time however fast the loop happens to run, and a
//! frame preempted mid-work still does all of it (its wall time grows, its
//! CPU time does not).
//!
//! The CPU time is read from the thread's task clock where perf events are
//! permitted (`measure::cpu_time`). Its CPU clock would make the scheduler
//! account the thread at every reading: a thread whose slice ran out would
//! then be preempted in its work and sleep with its debt paid, where a
//! program that does not read that clock pays it at its next wake-up. The
//! audio probe under burn (`bench/work_clock.sh`): latency p50 0.059 ms
//! reading the CPU clock, 2.74 ms reading the task clock; 1.5–3.2 ms, in a
//! throwaway build, as calibrated loops with no reading at all.

use super::cpu_time::ThreadCpuTime;
use std::hint::black_box;

/// The smallest half-chunk: while at least twice this much CPU time is
/// missing, a chunk aims at half of it; below, at all of it.
pub const HALVING_FLOOR_NS: u64 = 10_000;

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

/// Does `wanted_ns` of the calling thread's CPU time of work (see
/// [`work_until`]), read from `cpu_time`, which that thread opened; returns
/// the CPU time it took.
pub fn work_cpu_ns(cpu_time: &ThreadCpuTime, loops_per_ms: f64, wanted_ns: u64) -> u64 {
    work_until(
        loops_per_ms,
        wanted_ns,
        || cpu_time.read_ns(),
        |loops| {
            burn_loops(loops);
        },
    )
}

/// Runs `burn(loops)` in chunks until `cpu_clock` has advanced by
/// `wanted_ns` since its first reading, reading it after every chunk, and
/// returns how far it advanced. The first chunk aims, at `loops_per_ms`,
/// at a quarter of the CPU time wanted; every later one at half the CPU
/// time still missing at the speed the loop has shown in this work so far
/// (the clock's advance per loop burnt), or at all of it once that is less
/// than 2 × [`HALVING_FLOOR_NS`]; a chunk is never less than one loop. So
/// the work takes about log2(`wanted_ns` / [`HALVING_FLOOR_NS`]) + 3
/// readings, and overshoots by the last chunk's error: a clock reading or
/// so while the loop keeps its speed within the work, less than 2 ×
/// [`HALVING_FLOOR_NS`] while it does not halve, however far it is from
/// the calibration (the first chunk overshoots only at a quarter of the
/// calibrated speed), and by whatever the clock counted in that chunk
/// that was not the loop's: interrupts and host stalls, which on the
/// project's VM came with about half the preemptions (20–100 µs) and once
/// made 3.66 ms (README, Desired CPU %). The readings' own CPU time counts
/// as work.
pub fn work_until(
    loops_per_ms: f64,
    wanted_ns: u64,
    mut cpu_clock: impl FnMut() -> u64,
    mut burn: impl FnMut(u64),
) -> u64 {
    let start_ns = cpu_clock();
    let mut used_ns = 0;
    let mut burnt = 0;
    if wanted_ns > 0 {
        burnt = loops_for_ns(loops_per_ms, wanted_ns / 4).max(1);
        burn(burnt);
        used_ns = cpu_clock().saturating_sub(start_ns);
    }
    while used_ns < wanted_ns {
        // The speed shown so far; the calibration's until the clock moved.
        let speed = match used_ns {
            0 => loops_per_ms,
            ns => burnt as f64 * 1e6 / ns as f64,
        };
        let loops = chunk_loops(speed, wanted_ns - used_ns);
        burn(loops);
        burnt += loops;
        used_ns = cpu_clock().saturating_sub(start_ns);
    }
    used_ns
}

/// Loops of the next chunk when `missing_ns` of CPU time is still missing
/// and the loop runs `loops_per_ms` (see [`work_until`]).
fn chunk_loops(loops_per_ms: f64, missing_ns: u64) -> u64 {
    let half_ns = missing_ns / 2;
    let aim_ns = if half_ns >= HALVING_FLOOR_NS {
        half_ns
    } else {
        missing_ns
    };
    loops_for_ns(loops_per_ms, aim_ns).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

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

    /// A scripted CPU clock: it starts at 5 s, advances `ns_per_loop` for
    /// every loop burnt and `read_ns` for every reading, and shows whole
    /// nanoseconds; it records the chunks asked for.
    struct Scripted {
        now_ns: Cell<f64>,
        ns_per_loop: f64,
        read_ns: f64,
        chunks: RefCell<Vec<u64>>,
    }

    impl Scripted {
        fn new(ns_per_loop: f64, read_ns: f64) -> Self {
            Self {
                now_ns: Cell::new(5e9),
                ns_per_loop,
                read_ns,
                chunks: RefCell::default(),
            }
        }

        /// `work_until` at 1 loop per ns by the calibration.
        fn work(&self, wanted_ns: u64) -> u64 {
            let clock = || {
                self.now_ns.set(self.now_ns.get() + self.read_ns);
                self.now_ns.get() as u64
            };
            let burn = |loops: u64| {
                self.chunks.borrow_mut().push(loops);
                let ns = loops as f64 * self.ns_per_loop;
                self.now_ns.set(self.now_ns.get() + ns);
            };
            work_until(1e6, wanted_ns, clock, burn)
        }
    }

    #[test]
    fn work_stops_once_the_clock_advanced_by_the_wanted_time() {
        // The loop from 3.3 times faster to 3.5 times slower than
        // calibrated (beyond 2 times, aiming every chunk by the calibration
        // overshot: the first half-chunk alone ran 1.25 times the work at
        // 2.5 times slower).
        for ns_per_loop in [0.3, 1.0, 1.08, 1.9, 2.5, 3.5] {
            let clock = Scripted::new(ns_per_loop, 0.0);
            let used_ns = clock.work(2_500_000);
            assert!(used_ns >= 2_500_000, "{ns_per_loop}: {used_ns}");
            assert!(used_ns < 2_500_000 + 2 * HALVING_FLOOR_NS, "{used_ns}");
            // Every chunk but the last left the work short of its goal.
            let chunks = clock.chunks.borrow();
            let before_last: u64 = chunks[..chunks.len() - 1].iter().sum();
            assert!((before_last as f64 * ns_per_loop) < 2_500_000.0);
        }
    }

    #[test]
    fn a_quarter_first_then_chunks_halve_what_is_missing_then_aim_at_the_rest() {
        let clock = Scripted::new(1.0, 0.0);
        let used_ns = clock.work(1_280_000);
        let expected = [320, 480, 240, 120, 60, 30, 15, 15].map(|us| us * 1_000);
        assert_eq!(clock.chunks.borrow()[..], expected);
        // A calibration that holds and free readings: not one loop too many.
        assert_eq!(used_ns, 1_280_000);
    }

    #[test]
    fn time_spent_reading_the_clock_counts_as_work() {
        let clock = Scripted::new(1.0, 600.0);
        let used_ns = clock.work(100_000);
        let chunks = clock.chunks.borrow();
        let burnt: u64 = chunks.iter().sum();
        assert!((100_000..=100_600).contains(&used_ns), "{used_ns}");
        assert_eq!(used_ns, burnt + 600 * chunks.len() as u64);
    }

    #[test]
    fn no_work_wanted_burns_nothing() {
        let clock = Scripted::new(1.0, 600.0);
        assert_eq!(clock.work(0), 0);
        assert!(clock.chunks.borrow().is_empty());
    }

    #[test]
    fn a_tiny_calibration_still_burns_a_loop_per_chunk() {
        let clock = Cell::new(0);
        let burn = |loops| clock.set(clock.get() + loops);
        assert_eq!(work_until(1e-9, 3, || clock.get(), burn), 3);
    }
}
