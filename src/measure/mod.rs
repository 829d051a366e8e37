//! Measuring primitives: the clock, the thread's CPU time, the calibrated
//! unit of CPU work and work done to the thread's CPU time, scheduling
//! settings (the custom slice of EEVDF among them) and CPU affinity (of the calling thread, and of every task of a
//! process and its descendants), the
//! measurement window, and the pure accounting of frames, sub-windows,
//! latency statistics and latency over time. It builds on `system` alone:
//! nothing here knows probes, loads, the simulation, the engine or the run
//! document.

pub mod affinity;
pub mod attrib;
pub mod batches;
pub mod calibrate;
pub mod clock;
pub mod cpu_time;
pub mod frames;
pub mod late;
pub mod latency;
pub mod load_batches;
pub mod requests;
pub mod sched;
pub mod series;
pub mod slice;
pub mod stutter;
pub mod tasks;
pub mod window;
pub mod work;
