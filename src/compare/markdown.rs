//! The comparison as Markdown: the heading as a list, the rows as a pipe
//! table, the change of the late events' split as another, the summary
//! and the legend as lists.

use super::text::{by_scenario, columns_table, heading, legend, scenario_blocks, summary_lines};
use super::{late, Comparison, Layout};
use crate::report::markdown::pipe_row;

fn table(out: &mut String, rows: &[Vec<String>]) {
    out.push_str(&pipe_row(&rows[0]));
    out.push_str(&pipe_row(&vec!["---"; rows[0].len()]));
    for row in &rows[1..] {
        out.push_str(&pipe_row(row));
    }
}

fn list(out: &mut String, lines: &[String]) {
    for line in lines {
        out.push_str(&format!("- {line}\n"));
    }
}

/// The comparison as Markdown.
pub fn render(c: &Comparison, layout: Layout) -> String {
    let heading = heading(c);
    let mut out = format!("# {}\n\n", heading[0]);
    list(&mut out, &heading[1..]);
    match layout {
        Layout::Columns => {
            out.push('\n');
            table(&mut out, &columns_table(c));
        }
        Layout::Rows => {
            for (probe, load, rows) in by_scenario(c) {
                out.push_str(&format!("\n## {probe} under {load}\n"));
                for block in scenario_blocks(c, &rows) {
                    out.push('\n');
                    table(&mut out, &block);
                }
            }
        }
    }
    let late = late::table(c);
    if !late.is_empty() {
        out.push_str("\n## Why late: % of events late for each cause\n\n");
        table(&mut out, &late);
    }
    let summaries = summary_lines(c);
    if !summaries.is_empty() {
        out.push_str("\n## Summary\n\n");
        list(&mut out, &summaries);
    }
    out.push_str("\n## Legend\n\n");
    list(&mut out, &legend(c));
    out
}
