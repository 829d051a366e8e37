//! `feelbench compare RUN RUN ...`: reads the runs (files, runs of the
//! store by id, or queries of the store whose runs are merged into one
//! column), reads from the store how much each figure of their series moves
//! from run to run, compares them against the first, renders the comparison
//! in the chosen format and, with `--fail-on worse`, exits 3 when a figure
//! got significantly worse against a spread between runs.

use super::store::{open, stored_run};
use super::Format;
use crate::compare::history::History;
use crate::compare::{
    column_names, csv, html, markdown, text, CompareOptions, Comparison, Layout, Spread,
};
use crate::document::file::read_run;
use crate::document::merge::runs::merge_runs;
use crate::document::schema::RunDocument;
use crate::exit::{ExitCode, UsageError};
use crate::probe;
use crate::store::query::RunFilter;
use crate::store::rows::run_key;
use crate::store::{Store, StoreLocation};
use anyhow::Context as _;
use std::path::PathBuf;

/// Where one compared run comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum RunSource {
    /// A run file.
    File(PathBuf),
    /// A run of the store: its id, or the start of it.
    Stored(String),
    /// The runs of the store a query matches, merged into one.
    Query {
        /// The query as given (`kernel=6.12,last=5`).
        text: String,
        filter: RunFilter,
    },
}

/// Settings of `feelbench compare`.
#[derive(Debug, Clone)]
pub struct CompareSettings {
    /// The runs; the first is the baseline.
    pub sources: Vec<RunSource>,
    /// The store runs come from and the history is read from; `None` when
    /// there is none (no home directory).
    pub store: Option<StoreLocation>,
    /// Judge differences against the store's run-to-run spread of the
    /// runs' series (off with `--no-history`).
    pub history: bool,
    /// One column name per run, or none for the defaults.
    pub names: Vec<String>,
    /// The significance level and the figures, checked.
    pub options: CompareOptions,
    /// The format the comparison is rendered in.
    pub format: Format,
    /// How the rows are laid out (table and Markdown formats).
    pub layout: Layout,
    /// The file to write it to (`-o`), else stdout.
    pub output: Option<std::path::PathBuf>,
    /// Exit 3 when a figure got significantly worse (`--fail-on worse`).
    pub fail_on_worse: bool,
}

/// One run read for the comparison.
struct Loaded {
    run: RunDocument,
    /// Where it came from, in words (a path, `store:RUN@HOST`).
    origin: String,
    /// Its column's name unless `--name` gives one (a query's text).
    name: Option<String>,
    /// The store keys of the runs it is, or merges.
    keys: Vec<String>,
}

/// Compares the runs `settings` name, writes the rendering and, with
/// `--fail-on worse`, says each figure that got worse and exits 3.
pub fn run(settings: &CompareSettings) -> anyhow::Result<ExitCode> {
    let (text, comparison) = render(settings)?;
    let code = super::emit(&text, settings.output.as_deref())?;
    if !settings.fail_on_worse {
        return Ok(code);
    }
    let worse = worse_lines(&comparison);
    for line in &worse {
        say!("{line}");
    }
    Ok(match worse.is_empty() {
        true => code,
        false => ExitCode::Worse,
    })
}

/// The comparison of the runs `settings` name, and its rendering.
fn render(settings: &CompareSettings) -> anyhow::Result<(String, Comparison)> {
    let loaded = load(settings)?;
    let runs: Vec<RunDocument> = loaded.iter().map(|l| l.run.clone()).collect();
    let given: Vec<String> = match settings.names.is_empty() {
        false => settings.names.clone(),
        true => loaded
            .iter()
            .map(|l| match &l.name {
                Some(name) => name.clone(),
                None => column_names(std::slice::from_ref(&l.run), &[]).remove(0),
            })
            .collect(),
    };
    let names = column_names(&runs, &given);
    let merged: Vec<usize> = loaded.iter().map(|l| l.keys.len()).collect();
    let exclude: Vec<String> = loaded.iter().flat_map(|l| l.keys.clone()).collect();
    let origins: Vec<String> = loaded.into_iter().map(|l| l.origin).collect();
    let alone = Comparison::build(&runs, names.clone(), origins.clone(), &settings.options);
    let history = match settings.history {
        true => history(settings, &runs, &merged, &exclude, &alone.figure_keys()),
        false => History::default(),
    };
    let comparison =
        Comparison::build_with_history(&runs, names, origins, &settings.options, &history);
    let text = match settings.format {
        Format::Table => text::render(&comparison, settings.layout),
        Format::Md => markdown::render(&comparison, settings.layout),
        Format::Csv => csv::render(&comparison),
        Format::Html => html::render(&comparison, &runs)?,
        Format::Json => {
            serde_json::to_string_pretty(&comparison).expect("a comparison always serialises")
                + "\n"
        }
    };
    Ok((text, comparison))
}

/// Reads every run, opening the store once when one comes from it.
fn load(settings: &CompareSettings) -> anyhow::Result<Vec<Loaded>> {
    let mut store: Option<Store> = None;
    let mut loaded = Vec::new();
    for source in &settings.sources {
        loaded.push(match source {
            RunSource::File(path) => {
                let run = read_run(path, &probe::sheet_of)?;
                Loaded {
                    keys: vec![run_key(&run)],
                    run,
                    origin: path.display().to_string(),
                    name: None,
                }
            }
            RunSource::Stored(id) => stored(opened(&mut store, settings)?.0, id)?,
            RunSource::Query { text, filter } => {
                let (store, location) = opened(&mut store, settings)?;
                queried(store, location, text, filter)?
            }
        });
    }
    Ok(loaded)
}

/// The store of `settings`, opened at its first use.
fn opened<'a>(
    slot: &'a mut Option<Store>,
    settings: &'a CompareSettings,
) -> anyhow::Result<(&'a mut Store, &'a StoreLocation)> {
    let location = (settings.store.as_ref()).context("a run from the store, but no store")?;
    if slot.is_none() {
        *slot = Some(open(location)?);
    }
    Ok((slot.as_mut().expect("opened above"), location))
}

/// The run of the store whose id is or starts with `id`.
fn stored(store: &mut Store, id: &str) -> anyhow::Result<Loaded> {
    let found = store.find(id).map_err(UsageError::input)?;
    Ok(Loaded {
        run: stored_run(store, &found.run_key)?,
        origin: format!("store:{}", found.run_key),
        name: None,
        keys: vec![found.run_key],
    })
}

/// The finished runs the query `text` matches, merged into one.
fn queried(
    store: &mut Store,
    location: &StoreLocation,
    text: &str,
    filter: &RunFilter,
) -> anyhow::Result<Loaded> {
    let keys: Vec<String> = store
        .runs(filter)
        .with_context(|| format!("store {location}"))?
        .into_iter()
        .filter(|r| !r.interrupted)
        .map(|r| r.run_key)
        .collect();
    if keys.is_empty() {
        return Err(UsageError::new(format!(
            "{text} matches no finished run in {location}: see `feelbench runs`"
        ))
        .into());
    }
    let mut runs = Vec::new();
    for key in &keys {
        runs.push((
            PathBuf::from(format!("store:{key}")),
            stored_run(store, key)?,
        ));
    }
    let run = match runs.len() {
        1 => runs.remove(0).1,
        n => merge_runs(&runs, std::env::args().collect()).map_err(|e| {
            UsageError::new(format!(
                "the {n} runs {text} matches do not merge into one column ({e}): narrow the query"
            ))
        })?,
    };
    Ok(Loaded {
        run,
        origin: format!("store:{text} ({} run(s))", keys.len()),
        name: Some(text.to_string()),
        keys,
    })
}

/// The store's history of the runs' series for `figures`; none, with a
/// warning when the store exists but cannot be read, when there is no store
/// or it does not exist yet (nothing is created to read it).
fn history(
    settings: &CompareSettings,
    runs: &[RunDocument],
    merged: &[usize],
    exclude: &[String],
    figures: &[String],
) -> History {
    let Some(location) = &settings.store else {
        return History::default();
    };
    if let StoreLocation::Sqlite(path) = location {
        if !path.exists() {
            return History::default();
        }
    }
    let read = open(location).and_then(|mut store| {
        History::read(
            &mut store,
            location.to_string(),
            runs,
            merged,
            exclude,
            figures,
        )
        .with_context(|| format!("store {location}"))
    });
    read.unwrap_or_else(|e| {
        say!("warning: no run-to-run spread from the store ({e:#}); verdicts use the runs' own spread");
        History::default()
    })
}

/// One line per figure that got significantly worse than the baseline by
/// more than its minimum effect, against a spread between runs: scenario,
/// figure, values, the spread and p.
fn worse_lines(c: &Comparison) -> Vec<String> {
    let base = c.runs.first().map_or("", |r| r.name.as_str());
    c.worse()
        .map(|(row, column, cell)| {
            let shown = |v: f64| format!("{}{}", row.unit.show(v), row.unit.suffix());
            let before = row.cells[0].as_ref().map_or("—".into(), |b| shown(b.value));
            format!(
                "worse: {}/{} {}: {} → {} in {} against {} (p = {:.2e}, against {})",
                row.probe,
                row.load,
                row.figure,
                before,
                shown(cell.value),
                c.runs[column].name,
                base,
                cell.p.unwrap_or(f64::NAN),
                match cell.spread {
                    Some(Spread::History) => "the store's run-to-run spread",
                    _ => "the spread of repeats",
                }
            )
        })
        .collect()
}
