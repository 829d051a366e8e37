//! `feelbench submit`: sends runs to another store (a lab's PostgreSQL
//! database), each stored once however often it is sent. A run that cannot
//! be sent waits in the local store, marked pending, until
//! `submit --pending` sends it; `run --store postgres://…` goes the same
//! way ([`remember_remote`]).

use super::store::read_with_bytes;
use crate::document::schema::RunDocument;
use crate::store::add::Added;
use crate::store::query::RunFilter;
use crate::store::rows::{rows_of, RunRows};
use crate::store::{Store, StoreError, StoreLocation};
use anyhow::Context as _;
use std::collections::HashSet;
use std::path::PathBuf;

/// Settings of `feelbench submit`.
#[derive(Debug, Clone)]
pub struct SubmitSettings {
    /// The store the runs go to.
    pub remote: StoreLocation,
    /// This user's store: where runs wait; `None` without a home.
    pub local: Option<StoreLocation>,
    /// Which runs.
    pub sending: Sending,
}

/// Which runs `submit` sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sending {
    /// These run files.
    Files(Vec<PathBuf>),
    /// The local store's runs that the remote store lacks.
    Missing,
    /// The local store's runs that could not be sent before.
    Pending,
}

/// How many times a run is tried when another writer raced it.
const ATTEMPTS: usize = 3;

/// Adds `rows` to `store`, again when a concurrent writer got in the way.
fn add(store: &mut Store, rows: &RunRows) -> Result<Added, StoreError> {
    let mut attempt = 1;
    loop {
        match store.add(rows) {
            Err(StoreError::Locked(_)) if attempt < ATTEMPTS => attempt += 1,
            outcome => return outcome,
        }
    }
}

/// A stored run's rows, read back from its document.
fn stored_rows(store: &mut Store, run_key: &str) -> anyhow::Result<RunRows> {
    let (run, bytes) = super::store::stored_run_with_bytes(store, run_key)?;
    Ok(rows_of(&run, &bytes))
}

/// What sending did.
#[derive(Debug, Default)]
struct Outcome {
    sent: usize,
    already: usize,
    /// The runs that failed.
    failed: Vec<Failed>,
}

/// A run that could not be sent.
#[derive(Debug)]
struct Failed {
    run_key: String,
    why: String,
    /// It waits in the local store for `submit --pending`.
    waits: bool,
}

/// `feelbench submit`: sends the runs; the summary line, or an error that
/// holds it when a run could not be sent.
pub fn submit(settings: &SubmitSettings) -> anyhow::Result<String> {
    let remote = &settings.remote;
    let mut local = match (&settings.sending, &settings.local) {
        (Sending::Files(_), Some(location)) => Store::open(location).ok(),
        (Sending::Files(_), None) => None,
        (_, Some(location)) => {
            Some(super::store::open(location).context("the local store, which runs come from")?)
        }
        (_, None) => anyhow::bail!("no local store to send from: set HOME or XDG_DATA_HOME"),
    };
    let mut outcome = Outcome::default();
    let mut target = Store::open(remote);
    let keys = match &settings.sending {
        Sending::Files(files) => {
            // Every file is read before any is sent: a file that is not a
            // run stops the command before it sends anything.
            let runs = files
                .iter()
                .map(|file| read_with_bytes(file).map(|(run, bytes)| rows_of(&run, &bytes)))
                .collect::<anyhow::Result<Vec<RunRows>>>()?;
            for rows in &runs {
                send(&mut target, local.as_mut(), remote, rows, &mut outcome);
            }
            Vec::new()
        }
        Sending::Missing => {
            let store = local.as_mut().expect("opened above");
            // The remote's runs by key and document: a run of the same key
            // and another document is sent, for the remote to refuse.
            let had: HashSet<(String, String)> = match &mut target {
                Ok(target) => target
                    .runs(&RunFilter::default())?
                    .into_iter()
                    .map(|r| (r.run_key, r.doc_sha256))
                    .collect(),
                Err(_) => HashSet::new(),
            };
            let (there, missing): (Vec<_>, Vec<_>) = store
                .runs(&RunFilter::default())?
                .into_iter()
                .map(|r| (r.run_key, r.doc_sha256))
                .partition(|run| had.contains(run));
            outcome.already = there.len();
            missing.into_iter().map(|(key, _)| key).collect()
        }
        Sending::Pending => local
            .as_mut()
            .expect("opened above")
            .pending(&remote.to_string())?,
    };
    for key in keys {
        let store = local.as_mut().expect("opened above");
        let rows = stored_rows(store, &key)?;
        send(&mut target, Some(store), remote, &rows, &mut outcome);
    }
    let summary = format!(
        "{} sent, {} already there, {} failed",
        outcome.sent,
        outcome.already,
        outcome.failed.len()
    );
    let Some(first) = outcome.failed.first() else {
        return Ok(format!("{summary} ({remote})\n"));
    };
    let waiting = match outcome.failed.iter().any(|f| f.waits) {
        true => format!(" (waiting: feelbench submit --pending --store {remote})"),
        false => String::new(),
    };
    Err(anyhow::anyhow!(
        "{summary}{waiting}: run {}: {}",
        first.run_key,
        first.why
    ))
}

/// Sends one run to `target` (or the error opening it); a run that fails
/// is kept in `local`, marked pending unless the remote refused the run
/// itself.
fn send(
    target: &mut Result<Store, StoreError>,
    local: Option<&mut Store>,
    remote: &StoreLocation,
    rows: &RunRows,
    outcome: &mut Outcome,
) {
    let sent = match target {
        Ok(store) => add(store, rows),
        // The opening error again, for each run (it says its own kind).
        Err(error) => Err(StoreError::Failed(error.to_string())),
    };
    match sent {
        Ok(added) => {
            match added {
                Added::New => outcome.sent += 1,
                Added::Already => outcome.already += 1,
            }
            if let Some(local) = local {
                // The run has arrived; a failure to say so leaves it to be
                // sent again, which stores nothing twice.
                let _ = local.clear_pending(&rows.run_key, &remote.to_string());
            }
        }
        Err(error) => {
            let (why, waits) = match local.map(|local| wait(local, remote, rows, &error)) {
                Some(Ok(true)) => (error.to_string(), true),
                Some(Ok(false)) => (format!("{error}; kept locally, not marked pending"), false),
                Some(Err(also)) => (format!("{error}; not kept locally either: {also}"), false),
                None => (format!("{error}; no local store to keep it in"), false),
            };
            outcome.failed.push(Failed {
                run_key: rows.run_key.clone(),
                why,
                waits,
            });
        }
    }
}

/// Keeps `rows` in `local`, marked as waiting for `remote` unless `remote`
/// refused the run itself (another run under its key: sending it again
/// would fail alike, so it would wait for ever); whether it waits.
fn wait(
    local: &mut Store,
    remote: &StoreLocation,
    rows: &RunRows,
    error: &StoreError,
) -> Result<bool, StoreError> {
    add(local, rows)?;
    let store = remote.to_string();
    match error.is_about_the_run() {
        true => local.clear_pending(&rows.run_key, &store).map(|()| false),
        false => local
            .mark_pending(&rows.run_key, &store, &error.to_string())
            .map(|()| true),
    }
}

/// The local store at `location`, with `rows` added.
fn keep(location: &StoreLocation, rows: &RunRows) -> Result<Store, StoreError> {
    let mut store = Store::open(location)?;
    add(&mut store, rows)?;
    Ok(store)
}

/// Adds a finished run (its file's `bytes`) to the local store and sends
/// it to `remote`; a remote that fails leaves the run waiting in the
/// local store, said in words for stderr, not as an error. A local store
/// that fails (locked, damaged) does not stop the run from being sent;
/// every message names the store that failed.
pub fn remember_remote(
    remote: &StoreLocation,
    run: &RunDocument,
    bytes: &[u8],
) -> Result<String, StoreError> {
    let rows = rows_of(run, bytes);
    let local = match StoreLocation::local() {
        Ok(None) => None,
        Ok(Some(location)) => Some((location.to_string(), keep(&location, &rows))),
        Err(why) => Some((
            "the local store".to_string(),
            Err(StoreError::Unreachable(why)),
        )),
    };
    let sent = Store::open(remote).and_then(|mut store| add(&mut store, &rows));
    let stored = |added: Added| match added {
        Added::New => format!("run stored in {remote}"),
        Added::Already => format!("run already in {remote}"),
    };
    match (sent, local) {
        (Ok(added), None) => Ok(stored(added)),
        (Ok(added), Some((name, Ok(_)))) => Ok(format!("{}, kept in {name} too", stored(added))),
        (Ok(added), Some((name, Err(error)))) => Ok(format!(
            "{}; warning: not kept in {name}: {error}",
            stored(added)
        )),
        (Err(error), Some((name, Ok(_)))) if error.is_about_the_run() => Ok(format!(
            "warning: run not sent to {remote} ({error}); it is kept in {name}"
        )),
        (Err(error), Some((name, Ok(mut store)))) => {
            match store.mark_pending(&rows.run_key, &remote.to_string(), &error.to_string()) {
                Ok(()) => Ok(format!(
                    "warning: run not sent to {remote} ({error}); it waits in {name}: \
                     feelbench submit --pending --store {remote}"
                )),
                Err(also) => Err(StoreError::Failed(format!(
                    "{error}; kept in {name} but not marked to be sent: {also}"
                ))),
            }
        }
        (Err(error), Some((name, Err(also)))) => Err(StoreError::Failed(format!(
            "{error}; not kept in {name} either: {also}"
        ))),
        (Err(error), None) => Err(error),
    }
}
