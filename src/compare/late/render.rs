//! The late rows as a table and the legend that says how each was tested.

use super::LateCell;
use crate::compare::{Comparison, Spread};

/// A cell as text: `11.2 % −80 % better`.
fn cell_text(cell: Option<&LateCell>) -> String {
    let Some(cell) = cell else {
        return crate::compare::text::MISSING.to_string();
    };
    let mut parts = vec![format!("{:.1} %", cell.pct_of_events)];
    parts.extend(cell.change.map(|c| format!("{c:+.0} %")));
    let word = crate::compare::text::verdict_text(cell.verdict);
    parts.push(match cell.spread {
        Some(spread) if !word.is_empty() => format!("{word} {}", spread.marker()),
        _ => word.to_string(),
    });
    parts.retain(|p| !p.is_empty());
    parts.join(" ")
}

/// The late rows as a table: a header (`probe`, `load`, `late for`, the
/// runs' names), then a line per row; empty without rows.
pub fn table(c: &Comparison) -> Vec<Vec<String>> {
    if c.late.is_empty() {
        return Vec::new();
    }
    let header = ["probe", "load", "late for"]
        .map(String::from)
        .into_iter()
        .chain(c.runs.iter().map(|r| r.name.clone()))
        .collect();
    let lines = c.late.iter().map(|row| {
        [
            row.probe.clone(),
            row.load.clone(),
            row.cause.words().to_string(),
        ]
        .into_iter()
        .chain(row.cells.iter().map(|cell| cell_text(cell.as_ref())))
        .collect()
    });
    std::iter::once(header).chain(lines).collect()
}

/// What the late rows show and how they were tested; empty without rows.
pub fn legend(c: &Comparison) -> Vec<String> {
    if c.late.is_empty() {
        return Vec::new();
    }
    let cells: Vec<&LateCell> = c
        .late
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .filter(|cell| cell.p.is_some())
        .collect();
    let by = |spread: Spread| cells.iter().filter(|c| c.spread == Some(spread)).count();
    let mut lines = vec![format!(
        "late for: the % of the probe's events that were late with that cause (late events labelled with it / events split), its change against {} in %; better / worse: significant at alpha {} once the {} tests of each run are corrected together (Holm's)",
        c.runs[0].name,
        c.alpha,
        cells.len()
    )];
    if by(Spread::Repeats) > 0 {
        lines.push(format!(
            "late for [r]: {} test(s) by Welch's t-test on each repeat's share (3 or more repeats in both runs)",
            by(Spread::Repeats)
        ));
    }
    if by(Spread::SubWindows) > 0 {
        lines.push(format!(
            "late for [s]: {} test(s) by Welch's t-test on each run's share with its spread over the run's {} sub-windows (a burst of late events counts as one sub-window, not as that many events); within-run spread only, not run-to-run drift: repeat the runs (--repeat 3) for a test across repeats",
            by(Spread::SubWindows),
            crate::measure::batches::BATCHES
        ));
    }
    if by(Spread::WithinRun) > 0 {
        lines.push(format!(
            "late for [w]: {} test(s) by a two-proportion z test on the counts, which treats events as independent; late events come in bursts and these runs do not keep their split per sub-window (made before it was kept), so these overstate significance: repeat the runs (--repeat 3) for a test across repeats",
            by(Spread::WithinRun)
        ));
    }
    if c.late
        .iter()
        .any(|r| r.cells.iter().flatten().any(|c| c.p.is_some()))
    {
        lines.push(
            "late for: no verdict here counts for --fail-on (it judges the figures above)".into(),
        );
    }
    lines
}
