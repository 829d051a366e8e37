//! tiobench's table, for the loads that timed their requests (the `io*`
//! loads, `LoadWork.requests`): printed after a probe's table whenever one
//! of its rows' load parts timed requests, one row per such part — its
//! processes (tiobench's threads), rate, CPU, the requests' mean and
//! largest latency, the % of them over each threshold (`--io-thresholds`)
//! and the CPU efficiency (rate per CPU). It reads load work only, never a
//! probe; the console table and Markdown share its cells.

use crate::document::schema::{LoadWork, ScenarioResult, ScenarioStatus};
use crate::figures::rate;
use crate::sim::io::show_threshold;

/// The header and rows of the table; `None` when no load part timed
/// requests.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A title for the table.
pub const TITLE: &str = "requests the loads timed (tiobench's table)";

/// The table of the load parts of `scenarios` that timed requests.
pub fn table<'a>(scenarios: impl IntoIterator<Item = &'a ScenarioResult>) -> Option<RequestTable> {
    let parts: Vec<(&str, &LoadWork)> = scenarios
        .into_iter()
        .filter(|s| s.outcome.status == ScenarioStatus::Ok)
        .flat_map(|s| {
            s.outcome
                .load_work
                .iter()
                .filter(|w| w.requests.as_ref().is_some_and(|r| r.count > 0))
                .map(move |w| (s.load.as_str(), w))
        })
        .collect();
    let (_, first) = parts.first()?;
    let one_unit = parts.iter().all(|(_, w)| w.unit == first.unit);
    let unit = |w: &LoadWork| match one_unit {
        true => String::new(),
        false => format!(" {}", w.unit),
    };
    let thresholds = first.requests.as_ref().map_or_else(Vec::new, |r| {
        r.thresholds_ns
            .iter()
            .map(|&ns| format!("% >{}", show_threshold(ns)))
            .collect()
    });
    let per_s = match one_unit {
        true => format!("{}/s", first.unit),
        false => "/s".to_string(),
    };
    let header = [
        "Load".to_string(),
        "Threads".to_string(),
        format!("Rate {per_s}"),
    ]
    .into_iter()
    .chain(["CPU %", "Avg lat ms", "Max lat ms"].map(String::from))
    .chain(thresholds)
    .chain(std::iter::once(format!("CPU eff {per_s}")))
    .collect();
    let rows = parts
        .into_iter()
        .map(|(scenario_load, w)| row(scenario_load, w, &unit(w)))
        .collect();
    Some(RequestTable { header, rows })
}

/// The cells of load part `w` of a scenario under `scenario_load`, its
/// rates followed by `unit` (empty when the header names it).
fn row(scenario_load: &str, w: &LoadWork, unit: &str) -> Vec<String> {
    let requests = w.requests.as_ref();
    let load = match scenario_load == w.load {
        true => w.load.clone(),
        false => format!("{} in {scenario_load}", w.load),
    };
    let bound = if w.cpu_pct_lower_bound { "≥" } else { "" };
    // CPU a lower bound: the efficiency is then an upper one.
    let efficiency = match w.cpu_pct > 0.0 {
        true => format!(
            "{}{}{unit}",
            if w.cpu_pct_lower_bound { "≤" } else { "" },
            rate(w.rate_per_s * 100.0 / w.cpu_pct)
        ),
        false => "-".to_string(),
    };
    let ms = |value: Option<f64>| value.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
    [
        load,
        w.processes.to_string(),
        format!("{}{unit}", rate(w.rate_per_s)),
        format!("{bound}{:.1}", w.cpu_pct),
        ms(requests.and_then(|r| r.mean_us()).map(|us| us / 1e3)),
        ms(requests.map(|r| r.max_ns as f64 / 1e6)),
    ]
    .into_iter()
    .chain(
        requests
            .map(|r| r.over_pct())
            .unwrap_or_default()
            .into_iter()
            .map(|(_, pct)| format!("{pct:.3}")),
    )
    .chain(std::iter::once(efficiency))
    .collect()
}

impl RequestTable {
    /// The table for the console: its title, then its columns, the first
    /// left-aligned, the others right-aligned, each as wide as its widest
    /// cell.
    pub fn console(&self) -> String {
        let columns = self.header.len();
        let widths: Vec<usize> = (0..columns)
            .map(|i| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .filter_map(|cells| cells.get(i))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let text: Vec<String> = cells
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (cell, &w))| match i {
                    0 => format!("{cell:<w$}"),
                    _ => format!("{cell:>w$}"),
                })
                .collect();
            format!("  {}\n", text.join("  ").trim_end())
        };
        std::iter::once(format!("  {TITLE}:\n"))
            .chain(std::iter::once(line(&self.header)))
            .chain(self.rows.iter().map(|r| line(r)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::requests::RequestLatencies;

    /// A run whose `burn` row's load also ran `ioseqwrite` (2 processes,
    /// 50 MB/s at 25 % CPU, requests of 1, 3, 150 and 6 ms).
    fn run_with_requests() -> crate::document::schema::RunDocument {
        let mut run = crate::document::fixture::run();
        let burn = &mut run.scenarios[1];
        burn.load = "burn+ioseqwrite".into();
        let mut io = crate::document::merge::tests::burn(100.0, 25.0, 2.0);
        io.load = "ioseqwrite".into();
        io.unit = "MB".into();
        io.processes = 2;
        let mut requests = RequestLatencies::new(&[100_000_000, 2_000_000_000]);
        [1_000_000, 3_000_000, 150_000_000, 6_000_000]
            .into_iter()
            .for_each(|ns| requests.record(ns));
        io.requests = Some(requests);
        burn.outcome.load_work.push(io);
        run
    }

    #[test]
    fn one_row_per_load_part_that_timed_requests() {
        let run = run_with_requests();
        let table = table(run.scenarios_of("audio")).unwrap();
        assert_eq!(
            table.header,
            [
                "Load",
                "Threads",
                "Rate MB/s",
                "CPU %",
                "Avg lat ms",
                "Max lat ms",
                "% >100ms",
                "% >2s",
                "CPU eff MB/s"
            ]
        );
        assert_eq!(
            table.rows,
            [[
                "ioseqwrite in burn+ioseqwrite",
                "2",
                "50.0",
                "25.0",
                "40.000",
                "150.000",
                "25.000",
                "0.000",
                "200"
            ]]
        );
        let console = table.console();
        let lines: Vec<&str> = console.lines().collect();
        assert_eq!(lines[0], format!("  {TITLE}:"));
        assert_eq!(
            lines[2],
            "  ioseqwrite in burn+ioseqwrite        2       50.0   25.0      40.000     150.000    25.000  0.000           200"
        );
        assert_eq!(lines[1].find("Threads"), Some(33), "{console}");
    }

    #[test]
    fn no_table_without_timed_requests_and_bounds_are_marked() {
        let plain = crate::document::fixture::run();
        assert_eq!(table(&plain.scenarios), None);
        let mut run = run_with_requests();
        let work = &mut run.scenarios[1].outcome.load_work;
        let mut other = work.last().unwrap().clone();
        other.load = "counter".into();
        other.unit = "requests".into();
        other.cpu_pct_lower_bound = true;
        work.push(other);
        let table = table(&run.scenarios).unwrap();
        assert_eq!(table.header[2], "Rate /s", "units differ: in the cells");
        assert_eq!(table.header[8], "CPU eff /s");
        let rows: Vec<[&str; 3]> = table
            .rows
            .iter()
            .map(|r| [r[2].as_str(), r[3].as_str(), r[8].as_str()])
            .collect();
        assert_eq!(
            rows,
            [
                ["50.0 MB", "25.0", "200 MB"],
                ["50.0 requests", "≥25.0", "≤200 requests"]
            ]
        );
    }
}
