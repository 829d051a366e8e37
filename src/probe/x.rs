//! `x`: a desktop's display server while a window is grabbed and dragged:
//! pointer events every 10 ms whose redraw work rises from 0 % to 100 % of
//! the period in 1 % steps, then starts again at 0 (one sweep ≈ 1 s). Frames
//! near 100 % can meet their deadline only with no latency at all, and their
//! overrun makes the next frame start late, as with interbench's X. The
//! shape is [`crate::sim::shapes::X`].

use super::periodic::PeriodicProbe;
use super::ProbeDef;
use crate::figures::{Noticeable, ProbeSheet};
use crate::measure::sched::MemoryPolicy;
use crate::sim::{shapes, WorkParams};

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "x",
    summary: "desktop window drag: 10 ms events, CPU sweeping 0 -> 100 %",
    method: 2,
    sheet,
    build: |params| Ok(PeriodicProbe::boxed(shapes::X, params)),
    default: super::always,
    uses: &[],
    pace: super::Pace::Duration,
    disk_bytes: super::no_disk,
    memory: MemoryPolicy::Locked,
    run_figure: super::no_run_figures,
};

/// The periodic sheet, judged by what the user dragging sees: redraws
/// done after the next pointer event came.
fn sheet(summary: &str, params: Option<&WorkParams>) -> ProbeSheet {
    super::periodic::sheet(summary, params).with_noticeable(
        "deadlines",
        Noticeable::new(
            95.0,
            50.0,
            "a missed deadline is a redraw done after the next pointer event came: the window \
             trails the pointer; one in 20 (every 200 ms of a drag) is a visible stutter, half \
             of them a window that lags behind (feelbench's choice; frames near 100 % of the \
             period miss a few with nothing in the way)",
        ),
    )
}
