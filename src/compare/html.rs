//! The comparison as one self-contained HTML page: the runs, the warnings,
//! the compared figures with significant changes marked better or worse,
//! how the split of late events changed, then per scenario the report's charts with one series per run.

use super::text::{change_text, value_text, MISSING};
use super::{late, scenario_keys, Comparison, Verdict};
use crate::document::schema::RunDocument;
use crate::report::html::{charts, escape, page, table, Drawn};
use anyhow::Result;
use std::fmt::Write;

/// The page comparing `runs`, whose comparison is `c`.
pub fn render(c: &Comparison, runs: &[RunDocument]) -> Result<String> {
    let mut body = String::from("<h1>feelbench comparison</h1>\n");
    let run_rows: Vec<Vec<(String, &str)>> = c
        .runs
        .iter()
        .map(|r| {
            [&r.name, &r.file, &r.kernel_release, &r.started]
                .map(|text| (text.clone(), ""))
                .to_vec()
        })
        .collect();
    body += &table(&["run", "file", "kernel", "started"], &run_rows);
    for warning in &c.warnings {
        let _ = writeln!(body, "<p class=\"warning\">{}</p>", escape(warning));
    }
    let _ = writeln!(
        body,
        "<h2>Figures</h2>\n<p>Changes against {}; marked when significant at α = {} and at least the step the figure is shown with.</p>",
        escape(&c.runs[0].name),
        c.alpha
    );
    for line in super::history::legend(c.history_store.as_deref(), &c.history, &c.spreads()) {
        let _ = writeln!(body, "<p>{}</p>", escape(&line));
    }
    body += &figures_table(c);
    body += &late_table(c);
    for (probe, load) in scenario_keys(runs) {
        let drawn: Vec<Drawn> = runs
            .iter()
            .zip(&c.runs)
            .filter_map(|(run, column)| {
                let scenario = run
                    .scenarios
                    .iter()
                    .find(|s| s.probe == probe && s.load == load)?;
                Some(Drawn {
                    name: column.name.clone(),
                    scenario,
                })
            })
            .collect();
        let Some(sheet) = runs.iter().find_map(|run| run.sheet(&probe)) else {
            continue;
        };
        let title = format!("{probe} under {load}");
        let _ = writeln!(body, "<section>\n<h2>{}</h2>", escape(&title));
        body += &charts(&title, sheet, &drawn)?;
        body += "</section>\n";
    }
    Ok(page("feelbench comparison", &body))
}

/// The change of the late events' split (`compare::late`), the cells of
/// significant changes classed `better` or `worse`; empty without it.
fn late_table(c: &Comparison) -> String {
    let rows = late::table(c);
    let Some((header, lines)) = rows.split_first() else {
        return String::new();
    };
    let class = |verdict: Option<Verdict>| match verdict {
        Some(Verdict::Better) => "better",
        Some(Verdict::Worse) => "worse",
        _ => "",
    };
    let cells: Vec<Vec<(String, &str)>> = lines
        .iter()
        .zip(&c.late)
        .map(|(line, row)| {
            line.iter()
                .enumerate()
                .map(|(i, text)| {
                    let verdict = i
                        .checked_sub(3)
                        .and_then(|run| row.cells.get(run)?.as_ref().map(|cell| cell.verdict));
                    (text.clone(), class(verdict))
                })
                .collect()
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    format!(
        "<h2>Why late</h2>\n<p>{}</p>\n{}",
        escape(&late::legend(c).join(" ")),
        table(&header, &cells)
    )
}

/// One row per probe × load × figure, one cell per run: its value and,
/// after the baseline, its change, classed `better` or `worse` when the
/// test found it significant.
fn figures_table(c: &Comparison) -> String {
    let mut header = vec!["probe", "load", "figure"];
    header.extend(c.runs.iter().map(|r| r.name.as_str()));
    let rows: Vec<Vec<(String, &str)>> = c
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![
                (row.probe.clone(), ""),
                (row.load.clone(), ""),
                (row.label.clone(), ""),
            ];
            cells.extend(row.cells.iter().map(|cell| match cell {
                None => (MISSING.to_string(), ""),
                Some(cell) => {
                    let change = cell
                        .change
                        .map(|c| format!(" ({})", change_text(row, c)))
                        .unwrap_or_default();
                    let (class, marker) = match (cell.verdict, cell.spread) {
                        (Verdict::Better, spread) => ("better", spread),
                        (Verdict::Worse, spread) => ("worse", spread),
                        _ => ("", None),
                    };
                    let marker = marker
                        .map(|s| format!(" {}", s.marker()))
                        .unwrap_or_default();
                    (
                        format!("{}{change}{marker}", value_text(row, cell.value)),
                        class,
                    )
                }
            }));
            cells
        })
        .collect();
    table(&header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CompareOptions, Comparison};
    use crate::document::fixture;

    #[test]
    fn the_page_marks_changes_and_draws_each_scenario_per_run() {
        let base = fixture::run();
        let mut other = fixture::run();
        other.run.comment = Some("<script>alert(1)</script>".into());
        let runs = vec![base, other];
        let options = CompareOptions {
            alpha: 0.01,
            figures: crate::probe::figure_keys(true),
        };
        let names = vec!["base".to_string(), "<i>new</i>".to_string()];
        let c = Comparison::build(&runs, names, vec!["a".into(), "b".into()], &options);
        let html = render(&c, &runs).unwrap();
        assert!(html.contains("&lt;i&gt;new&lt;/i&gt;"));
        assert!(!html.contains("<i>"));
        assert!(html.matches("<section>").count() >= 1);
        assert!(html.contains("<svg"));
    }
}
