//! `feelbench history`: reads one figure's points from the store, keeps
//! one series (or all, when asked), labels the figure from the newest
//! run's sheet and renders the history.

use super::store::{open, stored_run};
use crate::document::figure::{Figure, WORK};
use crate::exit::{ExitCode, UsageError};
use crate::figures::{Better, Unit};
use crate::history::{series, text, By, History, Shown};
use crate::store::query::{Point, PointQuery, RunFilter};
use crate::store::{Store, StoreLocation};
use std::path::PathBuf;

/// Settings of `feelbench history`.
#[derive(Debug, Clone)]
pub struct HistorySettings {
    pub store: StoreLocation,
    pub probe: String,
    pub load: String,
    /// The figure's key.
    pub figure: String,
    /// Which runs (with `series` for `--series` and `last` for `--last`).
    pub runs: RunFilter,
    /// Mix series that are not comparable.
    pub any_series: bool,
    pub by: By,
    pub format: HistoryFormat,
    /// The file to write to (`-o`), else stdout.
    pub output: Option<PathBuf>,
}

/// How `feelbench history` renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryFormat {
    Table,
    Csv,
    Json,
    Svg,
    Html,
}

/// Reads, builds and renders the history `settings` asks for.
pub fn run(settings: &HistorySettings) -> anyhow::Result<ExitCode> {
    let location = &settings.store;
    let mut store = open(location)?;
    let history = build(&mut store, settings).map_err(|e| match e.is::<UsageError>() {
        true => e,
        false => e.context(format!("store {location}")),
    })?;
    let text = match settings.format {
        HistoryFormat::Table => text::table(&history),
        HistoryFormat::Csv => text::csv(&history)?,
        HistoryFormat::Json => serde_json::to_string_pretty(&history)? + "\n",
        HistoryFormat::Svg => crate::history::chart::svg(&history)?,
        HistoryFormat::Html => crate::history::chart::page(&history)?,
    };
    super::emit(&text, settings.output.as_deref())
}

/// The history of the figure `settings` names.
fn build(store: &mut Store, settings: &HistorySettings) -> anyhow::Result<History> {
    let points = store.points(&PointQuery {
        probe: Some(settings.probe.clone()),
        load: Some(settings.load.clone()),
        figure: Some(settings.figure.clone()),
        runs: settings.runs.clone(),
    })?;
    if points.is_empty() {
        return Err(nothing_found(store, settings)?.into());
    }
    let runs = store.runs(&RunFilter::default())?;
    let what = format!(
        "{} under {}, {}",
        settings.probe, settings.load, settings.figure
    );
    let chosen =
        series::choose(&what, &points, &runs, settings.any_series).map_err(UsageError::input)?;
    let shown = shown(store, &points)?;
    let annotations = store.annotations()?;
    Ok(History::build(
        &points,
        chosen,
        shown,
        settings.by,
        &annotations,
        &runs,
    ))
}

/// Why no point was found, in one line: no run has the scenario, none has
/// the figure (and which figures they have), or none matches the filters.
fn nothing_found(store: &mut Store, settings: &HistorySettings) -> anyhow::Result<UsageError> {
    let (probe, load, figure) = (&settings.probe, &settings.load, &settings.figure);
    let names = store.figure_names(probe, load)?;
    Ok(UsageError::new(if names.is_empty() {
        format!("no run in the store measured {probe} under {load}: see `feelbench runs`")
    } else if !names.contains(figure) {
        format!(
            "no run of {probe} under {load} has a figure {figure}; they have: {}",
            names.join(", ")
        )
    } else {
        format!("no finished run of {probe} under {load} with {figure} matches the filters")
    }))
}

/// The figure as the newest run's sheet declares it; its label is its key
/// when that run's document cannot say.
fn shown(store: &mut Store, points: &[Point]) -> anyhow::Result<Shown> {
    let newest = points.last().expect("a history has points");
    let run = stored_run(store, &newest.run_key)?;
    let declared = run
        .scenarios
        .iter()
        .find(|s| s.probe == newest.probe && s.load == newest.load)
        .zip(run.sheet(&newest.probe))
        .and_then(|(scenario, sheet)| {
            let key = match newest.figure.starts_with(&format!("{WORK}:")) {
                true => WORK,
                false => newest.figure.as_str(),
            };
            Figure::of_key(key, &scenario.outcome, sheet)
                .into_iter()
                .find(|f| f.key() == newest.figure)
        });
    Ok(match declared {
        Some(figure) => Shown {
            figure: figure.key(),
            label: figure.label(),
            unit: figure.unit(),
            better: figure.better(),
        },
        None => Shown {
            figure: newest.figure.clone(),
            label: newest.figure.clone(),
            unit: named(&newest.unit).unwrap_or(Unit::Count),
            better: named(&newest.better).unwrap_or(Better::Lower),
        },
    })
}

/// The value of a serialised enum named `name` (`micros`, `lower`).
fn named<T: serde::de::DeserializeOwned>(name: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
}
