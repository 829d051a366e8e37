//! Markdown rendering: the run's overview, then one section and pipe table per probe, with the same
//! cells as the console table (and, for a probe that split its late
//! events, their dominant cause in a last column), the table of the requests
//! its loads timed when they did (tiobench's), then the scenarios'
//! confidence intervals as the console shows them.

use super::late;
use super::overview;
use super::requests;
use super::table::{has_cut_interval, header_cells, intervals_text, method_name, row_cells};
use crate::document::estimate::CUT_LEGEND;
use crate::document::schema::RunDocument;

/// One Markdown table row, with pipes inside cells escaped.
pub(crate) fn pipe_row(cells: &[impl AsRef<str>]) -> String {
    let inner: Vec<String> = cells
        .iter()
        .map(|c| c.as_ref().replace('|', "\\|"))
        .collect();
    format!("| {} |\n", inner.join(" | "))
}

/// `text` with its first letter upper-case.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// The run as Markdown.
pub fn render(run: &RunDocument) -> String {
    let mut out = format!(
        "# feelbench run {}\n\nfeelbench {} on {} ({} CPUs), kernel {}; {} s per scenario.\n",
        run.run.id,
        run.tool.version,
        run.system.hostname,
        run.system.cpus,
        run.system.kernel_release,
        run.settings.duration_s
    );
    if let Some(comment) = &run.run.comment {
        out.push_str(&format!("\n> {comment}\n"));
    }
    out.push_str(&overview::render_markdown(run));
    for probe_name in run.probes() {
        let sheet = run.sheet(probe_name).cloned().unwrap_or_default();
        let mut header = header_cells(&sheet);
        let split = run
            .scenarios_of(probe_name)
            .any(|s| late::causes_of(s).is_some());
        if split {
            header.push("Late");
        }
        out.push_str(&format!("\n## {probe_name}\n\n"));
        out.push_str(&pipe_row(&header));
        out.push_str(&pipe_row(&vec!["---"; header.len()]));
        for scenario in run.scenarios_of(probe_name) {
            let mut cells = row_cells(scenario, &sheet, run.baseline_of(probe_name));
            cells.resize(header.len() - usize::from(split), String::new());
            if split {
                cells.push(late::causes_of(scenario).map_or_else(String::new, late::summary));
            }
            out.push_str(&pipe_row(&cells));
        }
        if let Some(requests) = requests::table(run.scenarios_of(probe_name)) {
            out.push_str(&format!("\n{}:\n\n", capitalised(requests::TITLE)));
            out.push_str(&pipe_row(&requests.header));
            out.push_str(&pipe_row(&vec!["---"; requests.header.len()]));
            requests
                .rows
                .iter()
                .for_each(|r| out.push_str(&pipe_row(r)));
        }
        let intervals: Vec<String> = run
            .scenarios_of(probe_name)
            .filter_map(|s| {
                let intervals = s.intervals.as_ref()?;
                let text = intervals_text(intervals, &sheet);
                let method = method_name(intervals.method);
                Some(format!("- {}: {text} ({method})\n", s.load))
            })
            .collect();
        if !intervals.is_empty() {
            out.push('\n');
            out.push_str(&intervals.concat());
        }
    }
    if has_cut_interval(&run.scenarios) {
        out.push_str(&format!("\n{CUT_LEGEND}\n"));
    }
    out
}
