//! `video`: a player showing 60 frames per second, each needing 40 % of its
//! period (interbench's Video). The shape is [`crate::sim::shapes::VIDEO`].

use super::periodic::PeriodicProbe;
use super::ProbeDef;
use crate::figures::{Noticeable, ProbeSheet};
use crate::measure::sched::MemoryPolicy;
use crate::sim::{shapes, WorkParams};

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "video",
    summary: "video player: 60 frames/s, 40 % CPU per frame",
    method: 2,
    sheet,
    build: |params| Ok(PeriodicProbe::boxed(shapes::VIDEO, params)),
    default: super::always,
    uses: &[],
    pace: super::Pace::Duration,
    disk_bytes: super::no_disk,
    memory: MemoryPolicy::Locked,
    run_figure: super::no_run_figures,
};

/// The periodic sheet, judged by what a viewer sees: frames missed.
fn sheet(summary: &str, params: Option<&WorkParams>) -> ProbeSheet {
    super::periodic::sheet(summary, params).with_noticeable(
        "deadlines",
        Noticeable::new(
            99.0,
            90.0,
            "a missed deadline shows a frame a refresh late or never: one now and then passes \
             unseen, one in 100 (every 1.7 s at 60 Hz) is visible judder, one in 10 spoils the \
             motion (feelbench's choice; no standard sets these)",
        ),
    )
}
