//! What the frame-based probes (the periodic ones and `gaming`) share: the
//! names in their tallies, their CPU figures and the first columns of their
//! tables.

use crate::figures::{Better, Column, FigureDef, Formula, Spread, Unit};

/// The latency distribution.
pub const LATENCY: &str = "latency";
/// Frames that ran.
pub const EXECUTED: &str = "executed";
/// Frames dropped because their period had passed.
pub const DROPPED: &str = "dropped";
/// CPU time wanted by the whole measurement, dropped frames included.
pub const CPU_WANTED_MS: &str = "cpu_wanted_ms";
/// CPU time received: by each frame that ran, at most what it wanted (a
/// periodic task's frame that runs does all its work; what the work used
/// past that is the overshoot of its stopping rule, `measure::work`); by a
/// game, all its thread used.
pub const CPU_RECEIVED_MS: &str = "cpu_received_ms";
/// CPU time the frames' work used (the thread's CPU time,
/// `measure::cpu_time`), its overshoot included.
pub const CPU_USED_MS: &str = "cpu_used_ms";
/// CPU time the frames that ran wanted.
pub const CPU_WANTED_RUN_MS: &str = "cpu_wanted_run_ms";

/// Desired CPU % (received over wanted, so never above 100) and the work
/// ratio (CPU used by the frames that ran over the CPU they wanted: above
/// 1 by what their work overshot, which the clock's interrupts and host
/// stalls inflate).
pub fn cpu_figures() -> Vec<FigureDef> {
    let ratio = |num: &str, den: &str, scale: f64| Formula::Ratio {
        num: num.to_string(),
        den: den.to_string(),
        scale,
    };
    vec![
        FigureDef::new(
            "desired",
            "desired_cpu_pct",
            "desired CPU %",
            Unit::Percent,
            Better::Higher,
            ratio(CPU_RECEIVED_MS, CPU_WANTED_MS, 100.0),
        )
        .at_most(100.0)
        .spread(Spread::SubWindows)
        .compared(),
        FigureDef::new(
            "work_ratio",
            "work_ratio",
            "CPU used by the frames that ran over the CPU they wanted",
            Unit::Ratio,
            Better::Lower,
            ratio(CPU_USED_MS, CPU_WANTED_RUN_MS, 1.0),
        ),
    ]
}

/// A figure that is the count `name` as it is.
pub fn count_figure(name: &str, field: &str, label: &str, better: Better) -> FigureDef {
    let formula = Formula::Total {
        count: name.to_string(),
    };
    FigureDef::new(name, field, label, Unit::Count, better, formula)
}

/// Latency with SD, p99 and max: the first columns of every frame-based
/// probe's table (interbench's).
pub fn latency_columns() -> Vec<Column> {
    vec![
        Column {
            missing: "no frames".to_string(),
            ..Column::new("Latency +/- SD (ms)", &["mean", "sd"], 22)
        },
        Column::new("p99 (ms)", &["p99"], 10),
        Column::new("Max (ms)", &["max"], 10),
    ]
}

/// The share of the CPU time it wanted that a frame probe got: the column
/// after the latency columns of probes that want CPU (interbench's).
pub fn desired_column() -> Column {
    Column::new("Desired CPU %", &["desired"], 14)
}
