//! `x`: a desktop's display server while a window is grabbed and dragged:
//! pointer events every 10 ms whose redraw work rises from 0 % to 100 % of
//! the period in 1 % steps, then starts again at 0 (one sweep ≈ 1 s). Frames
//! near 100 % can meet their deadline only with no latency at all, and their
//! overrun makes the next frame start late, as with interbench's X. The
//! shape is [`crate::sim::shapes::X`].

use super::periodic::PeriodicProbe;
use super::ProbeDef;
use crate::measure::sched::MemoryPolicy;
use crate::sim::shapes;

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "x",
    summary: "desktop window drag: 10 ms events, CPU sweeping 0 -> 100 %",
    method: 1,
    sheet: super::periodic::sheet,
    build: |params| Ok(PeriodicProbe::boxed(shapes::X, params)),
    default: super::always,
    uses: &[],
    pace: super::Pace::Duration,
    disk_bytes: super::no_disk,
    memory: MemoryPolicy::Locked,
    run_figure: super::no_run_figures,
};
