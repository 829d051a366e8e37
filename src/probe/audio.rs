//! `audio`: a player that wakes every 50 ms and needs 5 % of a CPU to fill the
//! next buffer (interbench's Audio). The shape is [`crate::sim::shapes::AUDIO`].

use super::periodic::PeriodicProbe;
use super::ProbeDef;
use crate::figures::{Noticeable, ProbeSheet};
use crate::measure::sched::MemoryPolicy;
use crate::sim::{shapes, WorkParams};

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "audio",
    summary: "audio player: 50 ms period, 5 % CPU per period",
    method: 2,
    sheet,
    build: |params| Ok(PeriodicProbe::boxed(shapes::AUDIO, params)),
    default: super::always,
    uses: &[],
    pace: super::Pace::Duration,
    disk_bytes: super::no_disk,
    memory: MemoryPolicy::Locked,
    run_figure: super::no_run_figures,
};

/// The periodic sheet, judged by what a listener hears: a missed deadline.
fn sheet(summary: &str, params: Option<&WorkParams>) -> ProbeSheet {
    super::periodic::sheet(summary, params).with_noticeable(
        "deadlines",
        Noticeable::new(
            100.0,
            99.0,
            "a missed deadline leaves the next 50 ms buffer unfilled: an audible dropout, \
             heard even once; poor from 1 % of periods, a dropout every 5 s (feelbench's choice)",
        ),
    )
}
