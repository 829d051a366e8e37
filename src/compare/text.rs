//! The console rendering of a comparison, and the cell texts and legend
//! the Markdown rendering shares.

use super::late;
use super::summary::RunSummary;
use super::{Cell, Comparison, Layout, Row, Untested, Verdict};
use crate::document::schema::IntervalMethod;
use crate::figures::ChangeUnit;
use crate::report::table::aligned;

/// Shown where a run lacks the scenario or the figure.
pub const MISSING: &str = "—";

/// A value in the unit the row shows it in.
pub fn value_text(row: &Row, value: f64) -> String {
    row.unit.show(value)
}

/// The change against the baseline: `+12.0%` or `-3.5pt`, with more
/// decimals when one does not show a change that is there (`+0.008%`).
pub fn change_text(row: &Row, change: f64) -> String {
    let decimals = change_decimals(change);
    match row.change_unit {
        ChangeUnit::Percent => format!("{change:+.decimals$}%"),
        ChangeUnit::Points => format!("{change:+.decimals$}pt"),
    }
}

/// Most decimals a change is shown with.
const MAX_CHANGE_DECIMALS: usize = 6;

/// One decimal, or as many as a change of `change` needs not to show as 0.
fn change_decimals(change: f64) -> usize {
    (1..MAX_CHANGE_DECIMALS)
        .find(|&d| (change.abs() * 10f64.powi(d as i32)).round() >= 1.0 || change == 0.0)
        .unwrap_or(MAX_CHANGE_DECIMALS)
}

/// The verdict's word in a cell.
pub fn verdict_text(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::NoDifference => "n.s.",
        Verdict::Baseline | Verdict::Untested | Verdict::BelowResolution => "",
    }
}

/// The verdict's word and the marker of the spread it was judged against
/// (`worse [h]`); empty without a verdict.
pub fn judged_text(cell: &Cell) -> String {
    let word = verdict_text(cell.verdict);
    match cell.spread {
        Some(spread) if !word.is_empty() => format!("{word} {}", spread.marker()),
        _ => word.to_string(),
    }
}

/// A whole cell: value, change and verdict.
pub fn cell_text(row: &Row, cell: Option<&Cell>) -> String {
    let Some(cell) = cell else {
        return MISSING.to_string();
    };
    let mut parts = vec![value_text(row, cell.value)];
    parts.extend(cell.change.map(|c| change_text(row, c)));
    parts.push(judged_text(cell));
    parts.retain(|p| !p.is_empty());
    parts.join(" ")
}

/// The lines describing the runs, the differences between them and the warnings.
pub fn heading(c: &Comparison) -> Vec<String> {
    let mut lines = vec![format!(
        "feelbench compare: {} runs, baseline {}",
        c.runs.len(),
        c.runs[0].name
    )];
    lines.extend(c.runs.iter().map(|r| {
        format!(
            "{}: {} (kernel {}, started {}, {} measurement(s) per scenario)",
            r.name, r.file, r.kernel_release, r.started, r.repeats
        )
    }));
    lines.extend(
        c.differences
            .iter()
            .map(|d| format!("differs: {} {}", d.what, d.values.join(" | "))),
    );
    lines.extend(c.warnings.iter().map(|w| format!("warning: {w}")));
    lines
}

/// One summary line per run after the baseline.
pub fn summary_lines(c: &Comparison) -> Vec<String> {
    c.summaries.iter().map(|s| summary_line(c, s)).collect()
}

fn summary_line(c: &Comparison, s: &RunSummary) -> String {
    let ratios: Vec<String> = s
        .figures
        .iter()
        .map(|f| format!("{} {:.3}", f.figure, f.geomean_ratio))
        .collect();
    format!(
        "{} against {}: scenarios {} better, {} worse, {} mixed, {} without a significant change; geometric mean of ratios: {}",
        c.runs[s.run].name,
        c.runs[0].name,
        s.better,
        s.worse,
        s.mixed,
        s.same,
        if ratios.is_empty() { "-".to_string() } else { ratios.join(", ") }
    )
}

/// The legend: units, the test, the methods behind the standard errors,
/// and why cells went untested.
pub fn legend(c: &Comparison) -> Vec<String> {
    let cells: Vec<&Cell> = c
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .collect();
    let mut lines = vec![
        format!(
            "change: % against {} for latencies, FPS and load work; pt = percentage points for desired CPU and deadlines met",
            c.runs[0].name
        ),
        format!(
            "better / worse: significant at alpha {} (Welch's t-test, two-sided, against the spread the marker after it names); n.s.: no significant difference",
            c.alpha
        ),
    ];
    lines.extend(super::history::legend(
        c.history_store.as_deref(),
        &c.history,
        &c.spreads(),
    ));
    let used = |m: IntervalMethod| cells.iter().any(|cell| cell.method == Some(m));
    if used(IntervalMethod::Repeats) {
        lines.push("standard errors from repeats: the spread of a scenario's figure across its 3 or more repeats (drift between repeats included)".into());
    }
    if used(IntervalMethod::BatchMeans) {
        lines.push("standard errors from batch means: the spread over sub-windows of each measurement, neighbours merged while correlated; within-run spread only, not run-to-run drift (runs of the series in the store, or --repeat 3 or more, give that)".into());
    }
    let mut reasons: Vec<Untested> = cells.iter().filter_map(|cell| cell.untested).collect();
    reasons.sort();
    reasons.dedup();
    for reason in reasons {
        let count = cells
            .iter()
            .filter(|cell| cell.untested == Some(reason))
            .count();
        lines.push(format!("no mark on {count} cell(s): {}", reason.explain()));
    }
    let unseen = cells
        .iter()
        .filter(|cell| cell.verdict == Verdict::BelowResolution)
        .count();
    if unseen > 0 {
        lines.push(format!(
            "no mark on {unseen} cell(s): significant at alpha {}, but smaller than the step the figure is shown with (0.001 ms, 0.1 %, ...): no verdict on a change the values do not show",
            c.alpha
        ));
    }
    let tests = cells.iter().filter(|cell| cell.p.is_some()).count();
    if tests > 0 {
        lines.push(format!(
            "{tests} tests at alpha {}: about {:.1} marks are expected by chance alone",
            c.alpha,
            tests as f64 * c.alpha
        ));
    }
    if c.rows.iter().any(|r| r.cells.iter().any(Option::is_none)) {
        lines.push(format!(
            "{MISSING}: the run lacks the scenario or the figure"
        ));
    }
    lines.extend(late::legend(c));
    lines
}

/// The comparison as console text.
pub fn render(c: &Comparison, layout: Layout) -> String {
    let mut out = heading(c).join("\n") + "\n\n";
    match layout {
        Layout::Columns => {
            out.push_str(&aligned(&columns_table(c)));
        }
        Layout::Rows => {
            for (probe, load, rows) in by_scenario(c) {
                out.push_str(&format!("--- {probe} under {load} ---\n"));
                for block in scenario_blocks(c, &rows) {
                    out.push_str(&aligned(&block));
                    out.push('\n');
                }
            }
        }
    }
    if !out.ends_with("\n\n") {
        out.push('\n');
    }
    let late = late::table(c);
    if !late.is_empty() {
        out.push_str("Why late: % of events late for each cause\n");
        out.push_str(&aligned(&late));
        out.push('\n');
    }
    let summaries = summary_lines(c);
    if !summaries.is_empty() {
        out.push_str(&summaries.join("\n"));
        out.push_str("\n\n");
    }
    out.push_str(&legend(c).join("\n"));
    out.push('\n');
    out
}

/// The rows of each scenario, in order.
pub fn by_scenario(c: &Comparison) -> Vec<(&str, &str, Vec<&Row>)> {
    let mut groups: Vec<(&str, &str, Vec<&Row>)> = Vec::new();
    for row in &c.rows {
        match groups.last_mut() {
            Some((p, l, rows)) if *p == row.probe && *l == row.load => rows.push(row),
            _ => groups.push((&row.probe, &row.load, vec![row])),
        }
    }
    groups
}

/// One scenario in the rows layout, LMbench's and resp1's shape: a header
/// of figures, one line per run. Figures that would make a line wider than
/// [`ROWS_WIDTH`] go on to further blocks, each starting with the runs'
/// names again.
pub fn scenario_blocks(c: &Comparison, rows: &[&Row]) -> Vec<Vec<Vec<String>>> {
    let names: Vec<String> = std::iter::once("run".to_string())
        .chain(c.runs.iter().map(|r| r.name.clone()))
        .collect();
    let columns: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            std::iter::once(r.label.clone())
                .chain((0..c.runs.len()).map(|i| cell_text(r, r.cells[i].as_ref())))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = columns.iter().map(|column| width(column)).collect();
    split_to_fit(width(&names), &widths, ROWS_WIDTH)
        .into_iter()
        .map(|figures| {
            (0..names.len())
                .map(|line| {
                    std::iter::once(names[line].clone())
                        .chain(figures.clone().map(|f| columns[f][line].clone()))
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// Widest line of a rows-layout block: one that fits a wide terminal. An
/// LMbench-style table of many figures (a micro-benchmark's ops × p50 and
/// p99) goes on in further blocks rather than wrapping.
pub const ROWS_WIDTH: usize = 120;

/// The characters of the widest text of `column`.
fn width(column: &[String]) -> usize {
    column.iter().map(|t| t.chars().count()).max().unwrap_or(0)
}

/// Cuts columns of `widths`, in order, into runs that fit in `limit`
/// characters beside a first column of `first` characters, two spaces
/// apart; a column too wide on its own gets a run of its own.
fn split_to_fit(first: usize, widths: &[usize], limit: usize) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut start = 0;
    let mut line = first;
    for (i, w) in widths.iter().enumerate() {
        if i > start && line + 2 + w > limit {
            runs.push(start..i);
            start = i;
            line = first;
        }
        line += 2 + w;
    }
    if start < widths.len() {
        runs.push(start..widths.len());
    }
    runs
}

/// The columns layout: a header of runs, one line per probe × load × figure.
pub fn columns_table(c: &Comparison) -> Vec<Vec<String>> {
    let mut rows = vec![["probe", "load", "figure"]
        .iter()
        .map(|s| s.to_string())
        .chain(c.runs.iter().map(|r| r.name.clone()))
        .collect::<Vec<_>>()];
    rows.extend(c.rows.iter().map(|row| {
        [row.probe.clone(), row.load.clone(), row.label.clone()]
            .into_iter()
            .chain(row.cells.iter().map(|cell| cell_text(row, cell.as_ref())))
            .collect()
    }));
    rows
}

#[cfg(test)]
mod tests {
    use super::split_to_fit;

    #[test]
    fn columns_split_where_the_next_would_pass_the_limit() {
        // 3 + (2 + 10) * 3 = 39 fits in 40; a fourth would not.
        assert_eq!(split_to_fit(3, &[10; 5], 40), [0..3, 3..5]);
        assert_eq!(split_to_fit(3, &[10; 3], 39), vec![(0..3)]);
        assert_eq!(split_to_fit(3, &[10; 3], 38), [0..2, 2..3]);
    }

    #[test]
    fn a_column_too_wide_alone_still_shows() {
        assert_eq!(split_to_fit(3, &[50, 5, 50], 40), [0..1, 1..2, 2..3]);
        assert_eq!(
            split_to_fit(3, &[], 40),
            Vec::<std::ops::Range<usize>>::new()
        );
    }
}
