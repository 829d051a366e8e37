//! The overview as text: its table, cell by cell, for the console and
//! Markdown, with the verdicts, the summary and the legend under it.

use super::*;
use crate::report::markdown::pipe_row;

/// What the overview's ratios, marks and thresholds mean, line by line,
/// with the rule of each probe of `overview` that has one.
pub fn legend(overview: &Overview) -> Vec<String> {
    let general = [
        format!("ratio: times worse than under {REFERENCE} (the figure over its value there; the inverse when higher is better)"),
        format!(
            "°: within the {:.0} % intervals of both, not called; a probe with a rule below is judged by what its user notices, its ratio beside; one without is fine at a ratio of at most {FINE_RATIO} and a share of at least {FINE_SHARE_PCT:.0} %",
            RUN_LEVEL * 100.0
        ),
    ];
    let rules = overview.probes.iter().filter_map(|p| {
        let rule = p.rule.as_ref()?;
        Some(format!(
            "{}: {} {}: {}",
            p.probe, rule.figure, rule.thresholds, rule.source
        ))
    });
    general.into_iter().chain(rules).collect()
}

/// The text of a cell: the value under `none` (a set's ratio, 1) or
/// under any load when the probe has no `none`, else the ratio, `°` when
/// within the intervals; `failed`; `-` when missing.
pub fn cell_text(probe: &ProbeOverview, cell: &Cell) -> String {
    let Some(figures) = &cell.figures else {
        return "failed".to_string();
    };
    if cell.load == REFERENCE || !probe.has_reference {
        let ratio = figures.ratio.map(ratio_text);
        return figures
            .value
            .clone()
            .or(ratio)
            .unwrap_or_else(|| "-".to_string());
    }
    match figures.ratio {
        Some(r) if figures.clear => ratio_text(r),
        Some(r) => format!("{}°", ratio_text(r)),
        None => "-".to_string(),
    }
}

/// The text of the figure a cell's rule judges, `-` when it has none.
pub fn judged_text(cell: &Cell) -> String {
    cell.figures
        .as_ref()
        .and_then(|f| f.judged.clone())
        .unwrap_or_else(|| "-".to_string())
}

/// The text of a cell's share, `-` when it has none.
pub fn share_text(cell: &Cell) -> String {
    cell.figures
        .as_ref()
        .and_then(|f| f.share)
        .map_or_else(|| "-".to_string(), |s| format!("{s:.1}"))
}

/// The overview's table: a header row (the loads), then a row per probe
/// (its figure's label and a cell per load), one more for its share and
/// one for the figure its rule judges when that is not the share.
fn table_rows(overview: &Overview) -> Vec<Vec<String>> {
    let header = ["probe", "figure"].map(String::from);
    let mut rows: Vec<Vec<String>> =
        vec![header.into_iter().chain(overview.loads.clone()).collect()];
    for p in &overview.probes {
        let cells = |text: &dyn Fn(&Cell) -> String| -> Vec<String> {
            overview
                .loads
                .iter()
                .map(|load| {
                    p.cells
                        .iter()
                        .find(|c| &c.load == load)
                        .map_or_else(String::new, text)
                })
                .collect()
        };
        rows.push(
            [
                vec![p.probe.clone(), p.figure.clone()],
                cells(&|c| cell_text(p, c)),
            ]
            .concat(),
        );
        if let Some(share) = &p.share {
            rows.push([vec![String::new(), share.clone()], cells(&share_text)].concat());
        }
        if let Some(rule) = p.rule.as_ref().filter(|r| !r.is_share) {
            rows.push(
                [
                    vec![String::new(), rule.figure.clone()],
                    cells(&judged_text),
                ]
                .concat(),
            );
        }
    }
    rows
}

/// The lines under the table: each probe's verdict, the summary line and
/// the legend.
fn closing_lines(overview: &Overview) -> Vec<String> {
    overview
        .probes
        .iter()
        .map(ProbeOverview::verdict)
        .chain(overview.summary())
        .chain(legend(overview))
        .collect()
}

/// The overview as console text: its table, aligned, then the verdicts,
/// the summary line and the legend; empty when no probe has an overview
/// figure.
pub fn render(run: &RunDocument) -> String {
    let overview = of(run);
    if overview.probes.is_empty() {
        return String::new();
    }
    let rows = table_rows(&overview);
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::from("\n=== Overview ===\n");
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, &w))| match i {
                0 | 1 => format!("{cell:<w$}"),
                _ => format!("{cell:>w$}"),
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out.push('\n');
    closing_lines(&overview)
        .into_iter()
        .fold(out, |out, line| out + &line + "\n")
}

/// The overview as Markdown: a section with its table and the verdicts,
/// summary and legend as a list; empty when no probe has an overview
/// figure.
pub fn render_markdown(run: &RunDocument) -> String {
    let overview = of(run);
    if overview.probes.is_empty() {
        return String::new();
    }
    let rows = table_rows(&overview);
    let mut out = String::from("\n## Overview\n\n");
    out.push_str(&pipe_row(&rows[0]));
    out.push_str(&pipe_row(&vec!["---"; rows[0].len()]));
    rows[1..]
        .iter()
        .for_each(|row| out.push_str(&pipe_row(row)));
    out.push('\n');
    closing_lines(&overview)
        .into_iter()
        .fold(out, |out, line| out + "- " + &line + "\n")
}
