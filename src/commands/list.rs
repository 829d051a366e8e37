//! `feelbench list`: every probe and load with one line each, and the names
//! that stand for a mix of loads, all read from the registries
//! ([`crate::probe::PROBES`], [`crate::load::LOADS`], [`crate::load::ALIASES`]).
//! The same rows feed `run --help` and the README's tables (`--format md`,
//! which a test keeps equal to the README).

use crate::{load, probe};

/// How `feelbench list` writes the registries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFormat {
    /// Aligned lines for the console.
    Table,
    /// Markdown tables, as the README has them.
    Md,
}

/// One registry entry: its name and its one-line summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The name the command line takes.
    pub name: &'static str,
    /// What it is, in one line.
    pub summary: String,
}

/// Every probe, in registry order.
pub fn probes() -> Vec<Entry> {
    probe::PROBES
        .iter()
        .map(|p| Entry {
            name: p.name,
            summary: p.summary.to_string(),
        })
        .collect()
}

/// Every load, in registry order, then the names that stand for a mix.
pub fn loads() -> Vec<Entry> {
    let singles = load::LOADS.iter().map(|l| Entry {
        name: l.name,
        summary: l.summary.to_string(),
    });
    let mixes = load::ALIASES.iter().map(|(alias, mix)| Entry {
        name: alias,
        summary: format!("{mix} together"),
    });
    singles.chain(mixes).collect()
}

/// Every figure the probes declare, in registry order: its key (what
/// `compare --figure` takes), its label, the probes that have it, and `*`
/// when `compare` shows it by default; then `work`, the loads' rate.
pub fn render_figures() -> String {
    let mut figures: Vec<(String, String, bool, Vec<&str>)> = Vec::new();
    for probe in probe::PROBES {
        for def in probe.sheet().figures {
            match figures.iter_mut().find(|f| f.0 == def.key) {
                Some(known) => known.3.push(probe.name),
                None => figures.push((def.key, def.label, def.compared, vec![probe.name])),
            }
        }
    }
    let width = figures.iter().map(|f| f.0.len()).max().unwrap_or(0).max(11);
    let mut out = String::new();
    for (key, label, compared, probes) in figures {
        let mark = if compared { "*" } else { " " };
        out.push_str(&format!(
            "  {key:<width$}{mark} {label} ({})\n",
            probes.join(", ")
        ));
    }
    out + &format!(
        "  {:<width$}* each load part's work per second (every load)\n",
        "work"
    )
}

/// `entries` as lines indented by two spaces, the summaries aligned after
/// the longest name (10 at least).
pub fn render_lines(entries: &[Entry]) -> String {
    let width = entries
        .iter()
        .map(|e| e.name.len())
        .max()
        .unwrap_or(0)
        .max(10);
    entries
        .iter()
        .map(|e| format!("  {:<width$} {}\n", e.name, e.summary))
        .collect()
}

/// `entries` as a Markdown table whose columns are headed `headings`.
fn render_table(headings: [&str; 2], entries: &[Entry]) -> String {
    let mut out = format!("| {} | {} |\n|---|---|\n", headings[0], headings[1]);
    for e in entries {
        out.push_str(&format!(
            "| `{}` | {} |\n",
            e.name,
            e.summary.replace('|', "\\|")
        ));
    }
    out
}

/// The listing in `format`.
pub fn render(format: ListFormat) -> String {
    match format {
        ListFormat::Table => format!(
            "Probes (--probe, -W, -X):\n{}\nLoads (--load, -w, -x):\n{}\nFigures (compare --figure; * compared by default):\n{}",
            render_lines(&probes()),
            render_lines(&loads()),
            render_figures()
        ),
        ListFormat::Md => format!(
            "{}\n{}",
            render_table(["probe", "what it simulates"], &probes()),
            render_table(["load", "what it does"], &loads())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registry_entry_is_listed_once_in_each_format() {
        let names = probe::PROBES
            .iter()
            .map(|p| p.name)
            .chain(load::LOADS.iter().map(|l| l.name))
            .chain(load::ALIASES.iter().map(|(alias, _)| *alias));
        let table = render(ListFormat::Table);
        let md = render(ListFormat::Md);
        for key in probe::figure_keys(false) {
            assert!(
                table.contains(&format!("\n  {key:<11}")),
                "figure {key} missing"
            );
        }
        for name in names {
            let line = format!("  {name:<10} ");
            assert!(table.contains(&line), "{name} missing:\n{table}");
            let row = format!("| `{name}` | ");
            assert!(md.contains(&row), "{name} missing:\n{md}");
        }
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| `")).count(),
            probes().len() + loads().len()
        );
    }

    #[test]
    fn a_pipe_in_a_summary_does_not_split_a_markdown_cell() {
        let entry = Entry {
            name: "odd",
            summary: "a | b".to_string(),
        };
        let table = render_table(["probe", "what"], &[entry]);
        assert!(table.ends_with("| `odd` | a \\| b |\n"), "{table}");
    }
}
