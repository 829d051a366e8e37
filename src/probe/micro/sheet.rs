//! The figures of the micro probes: per operation its sample count,
//! median, 99th percentile and maximum in µs. A context switch's are
//! lat_ctx's: the switch as timed less the median overhead (the token
//! passing and summing timed without a switch); its median as timed and
//! its overhead's are kept beside them (`OP_raw_p50`, `OP_overhead_p50`).
//! `micro`'s table is LMbench's: one column per operation with its median,
//! the loads as rows; a single operation's table shows its median, p99 and
//! maximum (and a switch's median as timed). In LMbench's mode an
//! operation whose timed unit is not LMbench's (`ops::Lmbench::Other`)
//! gives its figures and column another name than LMbench's, and the page
//! fault's are per page of a mapping, and say so.

use super::ops::OpDef;
use super::record::overhead_samples;
use crate::figures::{
    Better, Column, FigureDef, Formula, OverviewRole, ProbeSheet, Spread, Unit, P99_MIN_SAMPLES,
};
use crate::sim::micro::MicroMode;

/// Samples a group of sub-windows needs for its median to be more than
/// the value of a few instances.
const P50_MIN_SAMPLES: u64 = 20;

/// The sheet of a probe running `ops` in `mode`, described by `summary`.
pub fn sheet_of(summary: &str, ops: &[OpDef], mode: MicroMode) -> ProbeSheet {
    let key = |op: &OpDef, what: &str| key(op, mode, what);
    let columns = match ops {
        [op] => {
            let mut columns = vec![
                Column::new("samples", &[&key(op, "n")], 8),
                Column::new("p50 (µs)", &[&key(op, "p50")], 10),
                Column::new("p99 (µs)", &[&key(op, "p99")], 10),
                Column::new("max (µs)", &[&key(op, "max")], 10),
            ];
            if op.less_overhead {
                columns.push(Column::new("as timed p50", &[&key(op, "raw_p50")], 14));
            }
            columns
        }
        _ => ops
            .iter()
            .map(|op| {
                let name = op.figure_name(mode);
                Column::new(name, &[&key(op, "p50")], name.len().max(7) + 1)
            })
            .collect(),
    };
    let sheet = ProbeSheet {
        summary: summary.to_string(),
        own_pace: false,
        columns,
        figures: ops.iter().flat_map(|op| op_figures(op, mode)).collect(),
    };
    // Each operation's median: the overview's ratio of a set of them is
    // the geometric mean of theirs.
    ops.iter().fold(sheet, |sheet, op| {
        sheet.with_overview(&key(op, "p50"), OverviewRole::ratio("slower"))
    })
}

/// The key of the figure `what` of `op` in `mode` (`fork_p50`).
fn key(op: &OpDef, mode: MicroMode, what: &str) -> String {
    format!("{}_{what}", op.figure_name(mode))
}

/// What `op`'s figures are called in labels: their name, and for LMbench's
/// page fault, per page.
fn shown_name(op: &OpDef, mode: MicroMode) -> String {
    match (op.name(), mode) {
        ("fault", MicroMode::Lmbench) => format!("{} per page", op.figure_name(mode)),
        _ => op.figure_name(mode).to_string(),
    }
}

/// The median of `samples`.
fn median(samples: String) -> Formula {
    Formula::Quantile { samples, q: 0.5 }
}

/// The figures of one operation, over its samples (named after it).
fn op_figures(op: &OpDef, mode: MicroMode) -> Vec<FigureDef> {
    let name = op.name();
    let figure_name = op.figure_name(mode);
    let key = |what: &str| key(op, mode, what);
    let shown = shown_name(op, mode);
    let samples = || name.to_string();
    let latency = |what: &str, label: &str, formula: Formula| {
        let field = format!("{figure_name}_{what}_us");
        FigureDef::new(
            &key(what),
            &field,
            &format!("{label} (µs)"),
            Unit::ShortMicros,
            Better::Lower,
            formula,
        )
    };
    // The operation's figure: lat_ctx's for a switch.
    let of_op = |formula: Formula| match op.less_overhead {
        true => Formula::Excess {
            value: Box::new(formula),
            less: Box::new(median(overhead_samples(name))),
        },
        false => formula,
    };
    let spread = |min_samples: u64| Spread::SubWindowGroups { min_samples };
    let mut figures = vec![
        FigureDef::new(
            &key("n"),
            &format!("{figure_name}_samples"),
            &format!("{shown} samples"),
            Unit::Count,
            Better::Higher,
            Formula::SampleCount { samples: samples() },
        ),
        latency("p50", &format!("{shown} median"), of_op(median(samples())))
            .spread(spread(P50_MIN_SAMPLES))
            .headline()
            .compared(),
        latency(
            "p99",
            &format!("{shown} p99"),
            of_op(Formula::Quantile {
                samples: samples(),
                q: 0.99,
            }),
        )
        .spread(spread(P99_MIN_SAMPLES))
        .headline()
        .compared(),
        latency(
            "max",
            &format!("{shown} max"),
            of_op(Formula::Max { samples: samples() }),
        )
        .compared(),
    ];
    if op.less_overhead {
        figures.extend([
            latency(
                "raw_p50",
                &format!("{shown} as timed (half the round trip) median"),
                median(samples()),
            )
            .spread(spread(P50_MIN_SAMPLES)),
            latency(
                "overhead_p50",
                &format!("{shown} overhead (passing and summing) median"),
                median(overhead_samples(name)),
            )
            .spread(spread(P50_MIN_SAMPLES)),
        ]);
    }
    figures
}

#[cfg(test)]
mod tests {
    use super::super::ops::OPS;
    use super::*;

    #[test]
    fn the_whole_set_has_one_median_column_per_operation_in_lmbench_order() {
        let sheet = sheet_of("all", &OPS, MicroMode::Paced);
        let headers: Vec<&str> = sheet.columns.iter().map(|c| c.header.as_str()).collect();
        let names: Vec<&str> = OPS.iter().map(OpDef::name).collect();
        assert_eq!(headers, names);
        assert_eq!(sheet.columns[0].figures, ["fork_p50"]);
        assert_eq!(sheet.figures.len(), 4 * OPS.len() + 2 * 2);
        for column in &sheet.columns {
            assert!(column.width > column.header.len(), "{}", column.header);
        }
    }

    #[test]
    fn one_operation_shows_its_median_p99_and_maximum() {
        let sheet = sheet_of("pipe", &OPS[5..6], MicroMode::Paced);
        let figures: Vec<&str> = sheet
            .columns
            .iter()
            .flat_map(|c| c.figures.iter().map(String::as_str))
            .collect();
        assert_eq!(figures, ["pipe_n", "pipe_p50", "pipe_p99", "pipe_max"]);
        let p99 = sheet.figure("pipe_p99").unwrap();
        assert_eq!(p99.field, "pipe_p99_us");
        assert_eq!(p99.unit, Unit::ShortMicros);
        assert!(p99.headline && p99.compared);
        assert_eq!(
            sheet.figure("pipe_max").unwrap().spread,
            Spread::RepeatsOnly
        );
    }

    /// lat_ctx's arithmetic on scripted switches: 5 and 7 µs as timed
    /// (median 5), overheads of 1.5 and 2 µs (median 1.5): a switch of
    /// 3.5 µs, its largest 5.5 µs.
    #[test]
    fn a_switch_is_as_timed_less_the_median_overhead() {
        use crate::figures::{Evaluator, Tally};
        use crate::measure::latency::LatencyHistogram;
        let histogram = |values: &[u64]| {
            let mut h = LatencyHistogram::new();
            values.iter().for_each(|&v| h.record_ns(v));
            h
        };
        let tally = Tally::default()
            .with_samples("ctx0", &histogram(&[5_000, 7_000]), 12_000)
            .with_samples("ctx0_overhead", &histogram(&[1_500, 2_000]), 3_500);
        let sheet = sheet_of("ctx0", &OPS[3..4], MicroMode::Paced);
        let mut evaluator = Evaluator::new(&tally);
        let mut value = |key: &str| evaluator.value(&sheet.figure(key).unwrap().formula);
        let near = |v: Option<f64>, expected: f64| {
            let v = v.unwrap();
            assert!((v - expected).abs() < 0.01, "{v} for {expected}");
        };
        near(value("ctx0_p50"), 3.5);
        near(value("ctx0_max"), 5.5);
        near(value("ctx0_raw_p50"), 5.0);
        near(value("ctx0_overhead_p50"), 1.5);
        assert_eq!(value("ctx0_n"), Some(2.0));
        let columns: Vec<&str> = sheet.columns.iter().map(|c| c.header.as_str()).collect();
        assert_eq!(columns.last(), Some(&"as timed p50"));
    }

    #[test]
    fn lmbench_faults_are_per_page() {
        let fault = |mode, key: &str| {
            let sheet = sheet_of("fault", &OPS[17..18], mode);
            sheet.figure(key).unwrap().label.clone()
        };
        assert_eq!(fault(MicroMode::Paced, "fault_p50"), "fault median (µs)");
        assert_eq!(
            fault(MicroMode::Lmbench, "minflt_p50"),
            "minflt per page median (µs)"
        );
    }

    /// LMbench's operations whose timed unit the probe does not repeat
    /// (README, "micro": who closes a connection first, the directory and
    /// neighbours of a create, the mappings and page order of a fault): in
    /// LMbench's mode no figure, field or column of `micro` carries their
    /// names.
    #[test]
    fn no_lmbench_figure_is_named_after_an_operation_whose_unit_differs() {
        let differing = ["connect", "create0", "create1k", "create10k", "fault"];
        let sheet = sheet_of("all", &OPS, MicroMode::Lmbench);
        let named = |text: &str| {
            differing
                .iter()
                .any(|op| text.starts_with(&format!("{op}_")))
        };
        for figure in &sheet.figures {
            assert!(!named(&figure.key), "{}", figure.key);
            assert!(!named(&figure.field), "{}", figure.field);
            let first = figure.label.split(' ').next().unwrap();
            assert!(!differing.contains(&first), "{}", figure.label);
        }
        for column in &sheet.columns {
            assert!(
                !differing.contains(&column.header.as_str()),
                "{}",
                column.header
            );
        }
        // The others keep LMbench's names, and every operation has a column.
        assert_eq!(sheet.columns.len(), OPS.len());
        for kept in [
            "fork",
            "ctx0",
            "pipe",
            "tcp",
            "delete0",
            "delete10k",
            "mmap",
        ] {
            assert!(sheet.figure(&format!("{kept}_p50")).is_some(), "{kept}");
        }
        // Paced, the names stay the operations'.
        let paced = sheet_of("all", &OPS, MicroMode::Paced);
        assert!(paced.figure("create0_p50").is_some());
        assert!(paced.figure("fault_p50").is_some());
    }
}
