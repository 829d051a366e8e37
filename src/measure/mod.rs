//! Measuring primitives: the clock, the calibrated unit of CPU work, scheduling
//! settings, and the pure accounting of frames, sub-windows and latency
//! statistics.

pub mod batches;
pub mod calibrate;
pub mod clock;
pub mod frames;
pub mod latency;
pub mod sched;
pub mod window;
pub mod work;
