//! The store's commands: adding a finished run (`run` calls [`remember`]),
//! `store import` of run files, `store annotate`, and `runs`, which lists
//! what the store holds.

use crate::document::file::parse_run;
use crate::document::schema::RunDocument;
use crate::exit::UsageError;
use crate::probe;
use crate::store::add::Added;
use crate::store::query::{RunFilter, RunSummary};
use crate::store::rows::rows_of;
use crate::store::{Store, StoreError, StoreLocation};
use anyhow::Context as _;
use std::path::{Path, PathBuf};

/// `feelbench store ...`, settled.
#[derive(Debug, Clone)]
pub enum StoreTask {
    /// Add run files (and the run files in directories).
    Import {
        paths: Vec<PathBuf>,
        store: StoreLocation,
    },
    /// Cut a series from a run on.
    Annotate {
        run: String,
        note: String,
        series: Option<String>,
        store: StoreLocation,
    },
}

/// Settings of `feelbench runs`.
#[derive(Debug, Clone)]
pub struct RunsSettings {
    pub store: StoreLocation,
    pub filter: RunFilter,
    pub format: RunsFormat,
}

/// How `feelbench runs` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsFormat {
    Table,
    Csv,
    Json,
}

/// Adds the run just written (its file's `bytes`) to the store at
/// `location` (a database's run is kept in the local store too); what
/// happened, in words for stderr.
pub fn remember(
    location: &StoreLocation,
    run: &RunDocument,
    bytes: &[u8],
) -> Result<String, StoreError> {
    if let StoreLocation::Postgres(_) = location {
        return super::submit::remember_remote(location, run, bytes);
    }
    let mut store = Store::open(location)?;
    let added = store.add(&rows_of(run, bytes))?;
    Ok(match added {
        Added::New => format!("run stored in {location}"),
        Added::Already => format!("run already in {location}"),
    })
}

/// Opens the store at `location`, saying which store failed.
pub fn open(location: &StoreLocation) -> anyhow::Result<Store> {
    Store::open(location).with_context(|| format!("store {location}"))
}

/// Carries out `task`; what it did, for stdout.
pub fn execute(task: &StoreTask) -> anyhow::Result<String> {
    match task {
        StoreTask::Import { paths, store } => import(paths, store),
        StoreTask::Annotate {
            run,
            note,
            series,
            store,
        } => annotate(run, note, series.as_deref(), store),
    }
}

/// `store annotate`: a note that cuts the series `series` names (the start
/// of its key, as `history --series` takes it) or every series of the
/// run's machine, from the run `run` on.
fn annotate(
    run: &str,
    note: &str,
    series: Option<&str>,
    location: &StoreLocation,
) -> anyhow::Result<String> {
    let mut store = open(location)?;
    let context = || format!("store {location}");
    let found = store.find(run).map_err(UsageError::input)?;
    let series = match series {
        None => None,
        Some(prefix) => Some(one_series(&mut store, prefix).with_context(context)?),
    };
    store
        .annotate(&found.run_key, series.as_deref(), note)
        .with_context(context)?;
    let scope = series.as_deref().map_or_else(
        || format!("every series of machine {}", found.machine),
        |s| format!("series {s}"),
    );
    Ok(format!("{scope} cut at run {}: {note}\n", found.run_key))
}

/// The key of the one series of the store whose key starts with `prefix`.
fn one_series(store: &mut Store, prefix: &str) -> anyhow::Result<String> {
    let mut keys = store.series_keys(prefix)?;
    match keys.len() {
        1 => Ok(keys.remove(0)),
        0 => Err(UsageError::new(format!(
            "no series of the store starts with {prefix:?}: see `feelbench runs`"
        ))
        .into()),
        n => Err(UsageError::new(format!(
            "{prefix:?} starts {n} series ({}): give more of the key",
            keys.join(", ")
        ))
        .into()),
    }
}

/// The run files `paths` name: each file, and every `*.json` of each
/// directory, in name order.
fn run_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, UsageError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| UsageError::new(format!("cannot list {}: {e}", path.display())))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Reads a run file: the document and its bytes.
pub fn read_with_bytes(path: &Path) -> anyhow::Result<(RunDocument, Vec<u8>)> {
    let bytes = std::fs::read(path)
        .map_err(|e| UsageError::new(format!("cannot read {}: {e}", path.display())))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| UsageError::new(format!("{} is not a run: not UTF-8 text", path.display())))?;
    let run = parse_run(path, text, &probe::sheet_of)?;
    Ok((run, bytes))
}

/// The document of the stored run `run_key`, read as a run file is
/// (`store:RUN_KEY` names it in messages).
pub fn stored_run(store: &mut Store, run_key: &str) -> anyhow::Result<RunDocument> {
    Ok(stored_run_with_bytes(store, run_key)?.0)
}

/// The same, with the document's bytes.
pub fn stored_run_with_bytes(
    store: &mut Store,
    run_key: &str,
) -> anyhow::Result<(RunDocument, Vec<u8>)> {
    let bytes = store.document_bytes(run_key)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| StoreError::Corrupt(format!("run {run_key} is not UTF-8 text")))?;
    let name = PathBuf::from(format!("store:{run_key}"));
    let run = parse_run(&name, text, &probe::sheet_of)?;
    Ok((run, bytes))
}

/// `store import`: adds every run file. A file that is not a run, or a run
/// the store refuses (another run under its key, rows that break one of its
/// constraints), is said and skipped; once all the others are in, a
/// refused run makes the exit code 1, a file that is not a run 2. A store
/// that cannot be used stops the import.
fn import(paths: &[PathBuf], location: &StoreLocation) -> anyhow::Result<String> {
    let files = run_files(paths)?;
    let mut store = open(location)?;
    let (mut added, mut already, mut bad, mut refused) = (0, 0, Vec::new(), Vec::new());
    let progress = crate::progress::counting(files.len(), "runs");
    for file in &files {
        progress.inc(1);
        let (run, bytes) = match read_with_bytes(file) {
            Ok(read) => read,
            Err(error) => {
                bad.push(crate::exit::message_of(&error));
                continue;
            }
        };
        match store.add(&rows_of(&run, &bytes)) {
            Ok(Added::New) => added += 1,
            Ok(Added::Already) => already += 1,
            Err(error) if error.is_about_the_run() => {
                refused.push(format!("{}: {error}", file.display()));
            }
            Err(error) => {
                progress.finish_and_clear();
                return Err(error).with_context(|| format!("store {location}"));
            }
        }
    }
    progress.finish_and_clear();
    let refused_count = match refused.len() {
        0 => String::new(),
        n => format!(", {n} refused"),
    };
    let summary = format!(
        "{added} run(s) added to {location}, {already} already there{refused_count}, {} not runs\n",
        bad.len()
    );
    let said = refused.iter().chain(&bad).cloned().collect::<Vec<_>>();
    match (refused.is_empty(), bad.is_empty()) {
        (true, true) => Ok(summary),
        (false, _) => Err(anyhow::anyhow!("{summary}{}", said.join("\n"))),
        (true, false) => Err(UsageError::new(format!("{summary}{}", said.join("\n"))).into()),
    }
}

/// `feelbench runs`: the runs `settings` asks for, rendered.
pub fn runs(settings: &RunsSettings) -> anyhow::Result<String> {
    let mut store = open(&settings.store)?;
    let runs = store
        .runs(&settings.filter)
        .with_context(|| format!("store {}", settings.store))?;
    Ok(match settings.format {
        RunsFormat::Json => serde_json::to_string_pretty(&runs)? + "\n",
        RunsFormat::Csv => runs_csv(&runs)?,
        RunsFormat::Table => runs_table(&runs, &settings.store),
    })
}

/// The runs as a console table, oldest first.
fn runs_table(runs: &[RunSummary], location: &StoreLocation) -> String {
    if runs.is_empty() {
        return format!("no runs in {location} match\n");
    }
    let suite = |r: &RunSummary| {
        r.suite.as_ref().map_or("-".to_string(), |s| {
            format!("{s}@{}", r.suite_version.unwrap_or(0))
        })
    };
    let mut rows = vec![vec![
        "RUN".to_string(),
        "STARTED".into(),
        "KERNEL".into(),
        "MACHINE".into(),
        "SUITE".into(),
        "SCEN".into(),
        "SERIES".into(),
        "COMMENT".into(),
    ]];
    for r in runs {
        rows.push(vec![
            r.run_key.clone(),
            r.started.clone(),
            r.kernel_release.clone(),
            r.machine.clone(),
            suite(r),
            format!("{}{}", r.scenarios, if r.interrupted { "!" } else { "" }),
            r.series.clone(),
            r.comment.clone().unwrap_or_default(),
        ]);
    }
    let mut out = crate::report::table::aligned(&rows);
    out.push_str(&format!(
        "{} run(s) in {location}{}\n",
        runs.len(),
        if runs.iter().any(|r| r.interrupted) {
            "; ! marks an interrupted run, left out of history"
        } else {
            ""
        }
    ));
    out
}

/// The runs as CSV with a header.
fn runs_csv(runs: &[RunSummary]) -> anyhow::Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "run",
        "run_id",
        "hostname",
        "machine",
        "started",
        "kernel_release",
        "suite",
        "suite_version",
        "settings_hash",
        "series",
        "comment",
        "interrupted",
        "scenarios",
        "doc_sha256",
    ])?;
    for r in runs {
        writer.write_record([
            r.run_key.clone(),
            r.run_id.clone(),
            r.hostname.clone(),
            r.machine.clone(),
            r.started.clone(),
            r.kernel_release.clone(),
            r.suite.clone().unwrap_or_default(),
            r.suite_version.map(|v| v.to_string()).unwrap_or_default(),
            r.settings_hash.clone(),
            r.series.clone(),
            r.comment.clone().unwrap_or_default(),
            r.interrupted.to_string(),
            r.scenarios.to_string(),
            r.doc_sha256.clone(),
        ])?;
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}
