//! The page's tables: each probe's results as the console shows them, the
//! requests its loads timed, its intervals, the run and the environment.

use super::*;

/// The probe's table as the console shows it: a row per load, a column
/// per sheet column, then the load's work; each row anchored for the heat
/// map.
pub(super) fn results_table(run: &RunDocument, probe: &str, sheet: &ProbeSheet) -> String {
    let baseline = run.baseline_of(probe);
    let ids: Vec<String> = (run.scenarios.iter().enumerate())
        .filter(|(_, s)| s.probe == probe)
        .map(|(index, _)| heat_map::scenario_anchor(index))
        .collect();
    let rows: Vec<Vec<(String, &str)>> = run
        .scenarios_of(probe)
        .map(|scenario| {
            let cells = console::row_cells(scenario, sheet, baseline);
            let last = cells.len() - 1;
            cells
                .into_iter()
                .enumerate()
                .map(|(i, cell)| (cell, if i == 0 || i == last { "" } else { "num" }))
                .collect()
        })
        .collect();
    table_with_ids(&console::header_cells(sheet), &rows, &ids)
        + &requests_table(run.scenarios_of(probe))
}

/// tiobench's table of the requests the loads of `scenarios` timed, under
/// the probe's; empty when none did.
fn requests_table<'a>(scenarios: impl IntoIterator<Item = &'a ScenarioResult>) -> String {
    let Some(requests) = crate::report::requests::table(scenarios) else {
        return String::new();
    };
    let header: Vec<&str> = requests.header.iter().map(String::as_str).collect();
    let rows: Vec<Vec<(String, &str)>> = requests
        .rows
        .into_iter()
        .map(|row| {
            let classes = std::iter::once("").chain(std::iter::repeat("num"));
            row.into_iter().zip(classes).collect()
        })
        .collect();
    format!(
        "<p>{}:</p>\n{}",
        escape(crate::report::requests::TITLE),
        table(&header, &rows)
    )
}

/// The confidence intervals of the probe's scenarios as the console shows
/// them, a bound cut at a limit marked and explained; empty when none has.
pub(super) fn intervals_list(run: &RunDocument, probe: &str, sheet: &ProbeSheet) -> String {
    let items: Vec<String> = run
        .scenarios_of(probe)
        .filter_map(|s| {
            let intervals = s.intervals.as_ref()?;
            let text = format!(
                "{}: {} ({})",
                s.load,
                console::intervals_text(intervals, sheet),
                console::method_name(intervals.method)
            );
            Some(format!("<li>{}</li>\n", escape(&text)))
        })
        .collect();
    if items.is_empty() {
        return String::new();
    }
    let legend = match console::has_cut_interval(run.scenarios_of(probe)) {
        true => format!("<p>{}</p>\n", escape(CUT_LEGEND)),
        false => String::new(),
    };
    format!("<ul>\n{}</ul>\n{legend}", items.concat())
}

/// Who made the run, when and how.
pub(super) fn run_table(run: &RunDocument) -> String {
    let info = &run.run;
    let rows = [
        ("started", info.started.clone()),
        ("finished", info.finished.clone().unwrap_or_default()),
        ("comment", info.comment.clone().unwrap_or_default()),
        ("suite", SuiteRecord::describe(run.suite.as_ref())),
        ("command line", info.command_line.join(" ")),
        ("feelbench", run.tool.version.clone()),
    ];
    let rows: Vec<Vec<(String, &str)>> = rows
        .into_iter()
        .map(|(k, v)| vec![(k.to_string(), ""), (v, "")])
        .collect();
    table(&["run", ""], &rows)
}

/// The environment and the warnings of `run`.
pub(super) fn environment_tables(run: &RunDocument) -> String {
    let env: Vec<Vec<(String, &str)>> = environment::pairs(&run.environment)
        .into_iter()
        .map(|(k, v)| vec![(k, ""), (v, "")])
        .collect();
    let warnings: Vec<Vec<(String, &str)>> = run
        .warnings
        .iter()
        .map(|w| {
            let code = serde_json::to_value(w.code)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            vec![(code, ""), (w.message.clone(), "")]
        })
        .collect();
    format!(
        "<h2 id=\"environment\">Environment</h2>\n{}<h2 id=\"warnings\">Warnings</h2>\n{}",
        table(&["key", "value"], &env),
        match warnings.is_empty() {
            true => "<p>none</p>\n".to_string(),
            false => table(&["warning", "message"], &warnings),
        }
    )
}
