//! The figures of the micro probes: per operation its sample count,
//! median, 99th percentile and maximum in µs. `micro`'s table is LMbench's:
//! one column per operation with its median, the loads as rows; a single
//! operation's table shows its median, p99 and maximum.

use super::ops::OpDef;
use crate::figures::{
    Better, Column, FigureDef, Formula, ProbeSheet, Spread, Unit, P99_MIN_SAMPLES,
};

/// Samples a group of sub-windows needs for its median to be more than
/// the value of a few instances.
const P50_MIN_SAMPLES: u64 = 20;

/// The sheet of a probe running `ops`, described by `summary`.
pub fn sheet_of(summary: &str, ops: &[OpDef]) -> ProbeSheet {
    let columns = match ops {
        [op] => vec![
            Column::new("samples", &[&key(op, "n")], 8),
            Column::new("p50 (µs)", &[&key(op, "p50")], 10),
            Column::new("p99 (µs)", &[&key(op, "p99")], 10),
            Column::new("max (µs)", &[&key(op, "max")], 10),
        ],
        _ => ops
            .iter()
            .map(|op| Column::new(op.name(), &[&key(op, "p50")], op.name().len().max(7) + 1))
            .collect(),
    };
    ProbeSheet {
        summary: summary.to_string(),
        own_pace: false,
        columns,
        figures: ops.iter().flat_map(op_figures).collect(),
    }
}

/// The key of the figure `what` of `op` (`fork_p50`).
fn key(op: &OpDef, what: &str) -> String {
    format!("{}_{what}", op.name())
}

/// The figures of one operation, over its samples (named after it).
fn op_figures(op: &OpDef) -> Vec<FigureDef> {
    let name = op.name();
    let samples = || name.to_string();
    let latency = |what: &str, shown: &str, formula: Formula| {
        let label = format!("{name} {shown} (µs)");
        let field = format!("{name}_{what}_us");
        FigureDef::new(
            &key(op, what),
            &field,
            &label,
            Unit::ShortMicros,
            Better::Lower,
            formula,
        )
    };
    let quantile = |what: &str, shown: &str, q: f64| {
        latency(
            what,
            shown,
            Formula::Quantile {
                samples: samples(),
                q,
            },
        )
    };
    vec![
        FigureDef::new(
            &key(op, "n"),
            &format!("{name}_samples"),
            &format!("{name} samples"),
            Unit::Count,
            Better::Higher,
            Formula::SampleCount { samples: samples() },
        ),
        quantile("p50", "median", 0.5)
            .spread(Spread::SubWindowGroups {
                min_samples: P50_MIN_SAMPLES,
            })
            .headline()
            .compared(),
        quantile("p99", "p99", 0.99)
            .spread(Spread::SubWindowGroups {
                min_samples: P99_MIN_SAMPLES,
            })
            .headline()
            .compared(),
        latency("max", "max", Formula::Max { samples: samples() }).compared(),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::ops::OPS;
    use super::*;

    #[test]
    fn the_whole_set_has_one_median_column_per_operation_in_lmbench_order() {
        let sheet = sheet_of("all", &OPS);
        let headers: Vec<&str> = sheet.columns.iter().map(|c| c.header.as_str()).collect();
        let names: Vec<&str> = OPS.iter().map(OpDef::name).collect();
        assert_eq!(headers, names);
        assert_eq!(sheet.columns[0].figures, ["fork_p50"]);
        assert_eq!(sheet.figures.len(), 4 * OPS.len());
        for column in &sheet.columns {
            assert!(column.width > column.header.len(), "{}", column.header);
        }
    }

    #[test]
    fn one_operation_shows_its_median_p99_and_maximum() {
        let sheet = sheet_of("pipe", &OPS[5..6]);
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
}
