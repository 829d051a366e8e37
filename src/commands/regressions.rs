//! `feelbench regressions`: the points of the store's series and its
//! annotations handed to `regression`, the result printed, and exit code 3
//! with `--fail-on worse` when a figure got worse.

use super::store::open;
use crate::exit::ExitCode;
use crate::regression::{self, render, Cut};
use crate::store::query::{PointQuery, RunFilter};
use crate::store::{Store, StoreLocation};
use anyhow::Context as _;
use std::collections::HashMap;

/// How `regressions` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegressionsFormat {
    Table,
    Json,
}

/// Settings of `feelbench regressions`.
#[derive(Debug, Clone)]
pub struct RegressionsSettings {
    pub store: StoreLocation,
    /// Which series: probe, load, figure and runs.
    pub query: PointQuery,
    pub judge: regression::Settings,
    pub format: RegressionsFormat,
    /// Exit 3 when a regression is reported.
    pub fail_on_worse: bool,
}

/// Finds the changes, prints them, and says which code to exit with.
pub fn run(settings: &RegressionsSettings) -> anyhow::Result<ExitCode> {
    let mut store = open(&settings.store)?;
    let context = || format!("store {}", settings.store);
    let points = store.points(&settings.query).with_context(context)?;
    let cuts = cuts(&mut store).with_context(context)?;
    let analysis = regression::analyse(&points, &cuts, &settings.judge);
    super::print(&match settings.format {
        RegressionsFormat::Table => render::table(&analysis),
        RegressionsFormat::Json => render::json(&analysis),
    })?;
    Ok(
        match settings.fail_on_worse && analysis.regressions().next().is_some() {
            true => ExitCode::Worse,
            false => ExitCode::Success,
        },
    )
}

/// The store's annotations as cuts, each placed at its run's start.
fn cuts(store: &mut Store) -> Result<Vec<Cut>, crate::store::StoreError> {
    let annotations = store.annotations()?;
    if annotations.is_empty() {
        return Ok(Vec::new());
    }
    let started: HashMap<String, i64> = store
        .runs(&RunFilter::default())?
        .into_iter()
        .map(|r| (r.run_key, r.started_unix))
        .collect();
    Ok(annotations
        .into_iter()
        .filter_map(|a| {
            Some(Cut {
                started_unix: *started.get(&a.run_key)?,
                series: a.series,
                machine: a.machine,
                run_key: a.run_key,
            })
        })
        .collect())
}
