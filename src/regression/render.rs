//! `regressions` as a console table (regressions, then improvements, each
//! with the command that checks it again) and as JSON.

use super::{Analysis, Change};

/// The analysis as JSON.
pub fn json(analysis: &Analysis) -> String {
    serde_json::to_string_pretty(analysis).expect("an analysis is plain data") + "\n"
}

/// The analysis as console tables.
pub fn table(analysis: &Analysis) -> String {
    let worse: Vec<&Change> = analysis.changes.iter().filter(|c| c.worse).collect();
    let better: Vec<&Change> = analysis.changes.iter().filter(|c| !c.worse).collect();
    let mut out = format!(
        "{} regression(s), {} improvement(s) in {} series of figures ({} part(s) once annotations{} cut them); \
         {} test(s), Benjamini–Hochberg q <= {}, effect >= {} %{}\n",
        worse.len(),
        better.len(),
        analysis.series,
        analysis.parts,
        match analysis.method_cuts {
            0 => String::new(),
            n => format!(" and {n} change(s) of method version"),
        },
        analysis.tests,
        analysis.fdr,
        analysis.min_effect_pct,
        match analysis.too_small {
            0 => String::new(),
            n => format!("; {n} significant change(s) smaller than that left out"),
        }
    );
    for (title, changes) in [("Regressions", worse), ("Improvements", better)] {
        if !changes.is_empty() {
            out.push_str(&format!("\n{title}\n"));
            out.push_str(&changes_table(&changes));
        }
    }
    out
}

/// A table of `changes`, each followed by its series and check command.
fn changes_table(changes: &[&Change]) -> String {
    let mut rows = vec![[
        "PROBE", "LOAD", "FIGURE", "FROM RUN", "KERNEL", "STARTED", "BEFORE", "AFTER", "CHANGE",
        "RUNS", "Q",
    ]
    .map(str::to_string)];
    for c in changes {
        rows.push([
            c.probe.clone(),
            c.load.clone(),
            c.figure.clone(),
            c.first_after.run_key.clone(),
            c.first_after.kernel_release.clone(),
            c.first_after.started.clone(),
            shown(c.before, &c.unit),
            shown(c.after, &c.unit),
            change_text(c),
            format!("{}|{}", c.runs_before, c.runs_after),
            format!("{:.1e}", c.q),
        ]);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let line = |row: &[String]| {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        cells.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(&rows[0]);
    for (row, c) in rows[1..].iter().zip(changes) {
        out.push_str(&line(row));
        out.push_str(&format!(
            "  series {}, last run before {}; check: {}\n",
            c.series, c.last_before.run_key, c.check
        ));
    }
    out
}

/// The change: in % of the level before where a ratio means something,
/// else the difference in the figure's unit (`+0.4 pt`, `+0.012 ms`).
fn change_text(c: &Change) -> String {
    match (c.change_pct, super::unit_of(&c.unit)) {
        (Some(pct), _) => format!("{pct:+.1} %"),
        (None, Some(crate::figures::Unit::Percent)) => format!("{:+.1} pt", c.difference),
        (None, Some(unit)) => {
            let sign = if c.difference < 0.0 { "-" } else { "+" };
            format!("{sign}{}{}", unit.show(c.difference.abs()), unit.suffix())
        }
        (None, None) => format!("{:+}", c.difference),
    }
}

/// `value` as its unit shows it, with the unit's symbol.
fn shown(value: f64, unit: &str) -> String {
    match super::unit_of(unit) {
        Some(unit) => format!("{}{}", unit.show(value), unit.suffix()),
        None => format!("{value}"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{analysis_of_step, table_lines};
    use super::*;

    #[test]
    fn a_regression_is_listed_with_its_values_and_check() {
        let analysis = analysis_of_step();
        let text = table(&analysis);
        assert!(
            text.starts_with("1 regression(s), 0 improvement(s) in 1 series"),
            "{text}"
        );
        let lines = table_lines(&text);
        assert!(lines.iter().any(|l| l.starts_with("PROBE")), "{text}");
        let row = lines.iter().find(|l| l.starts_with("x ")).expect("a row");
        assert!(
            row.contains("run-10@vm") && row.contains("+50.0 %"),
            "{row}"
        );
        assert!(
            row.contains("1.000 ms") && row.contains("1.500 ms"),
            "{row}"
        );
        assert!(
            text.contains("feelbench compare run-09@vm run-10@vm --figure p99"),
            "{text}"
        );
        let back: serde_json::Value = serde_json::from_str(&json(&analysis)).unwrap();
        assert_eq!(back["changes"][0]["first_after"]["run_key"], "run-10@vm");
        assert_eq!(back["changes"][0]["worse"], true);
    }

    #[test]
    fn units_show_as_the_figure_does() {
        assert_eq!(shown(1500.0, "micros"), "1.500 ms");
        assert_eq!(shown(12.34, "percent"), "12.3 %");
        assert_eq!(shown(2.5, "furlongs"), "2.5");
    }
}
