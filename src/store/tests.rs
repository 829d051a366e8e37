//! The store over a real SQLite file: adding is idempotent, every read
//! finds what was added, and a store that cannot be used says so in one
//! line and changes nothing.

use super::query::{PointQuery, RunFilter};
use super::rows::rows_of;
use super::{Store, StoreError, StoreLocation};
use crate::document::fixture;
use crate::document::schema::RunDocument;

/// Where [`temp_store`] puts the store in its directory.
const STORE_FILE: &str = "sub/store.sqlite";

/// A store in a temporary directory (kept alive by the returned guard).
fn temp_store() -> (tempfile::TempDir, StoreLocation, Store) {
    let dir = tempfile::tempdir().unwrap();
    let location = StoreLocation::Sqlite(dir.path().join(STORE_FILE));
    let store = Store::open(&location).unwrap();
    (dir, location, store)
}

/// The fixture run with id `id`, started `minute` minutes after noon, on
/// kernel `kernel`.
fn run(id: &str, minute: u32, kernel: &str) -> RunDocument {
    let mut run = fixture::run();
    run.run.id = id.to_string();
    run.run.started = format!("2026-11-23T12:{minute:02}:00Z");
    run.system.kernel_release = kernel.to_string();
    run
}

fn add(store: &mut Store, run: &RunDocument) -> super::add::Added {
    let bytes = serde_json::to_vec(run).unwrap();
    store.add(&rows_of(run, &bytes)).unwrap()
}

#[test]
fn a_run_added_twice_is_stored_once_and_reads_back_whole() {
    let (_dir, _location, mut store) = temp_store();
    let first = run("r1", 0, "6.1");
    assert_eq!(add(&mut store, &first), super::add::Added::New);
    assert_eq!(add(&mut store, &first), super::add::Added::Already);
    let runs = store.runs(&RunFilter::default()).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].run_key, "r1@testhost");
    let bytes = store.document_bytes(&runs[0].run_key).unwrap();
    assert_eq!(bytes, serde_json::to_vec(&first).unwrap());
}

#[test]
fn filters_ids_and_points_find_what_was_added() {
    let (_dir, _location, mut store) = temp_store();
    for (i, kernel) in ["6.1", "6.6", "6.12"].iter().enumerate() {
        add(&mut store, &run(&format!("run-{i}"), i as u32, kernel));
    }
    let filter = RunFilter {
        kernel: Some("6.1".into()),
        ..RunFilter::default()
    };
    let kernels: Vec<String> = store
        .runs(&filter)
        .unwrap()
        .into_iter()
        .map(|r| r.kernel_release)
        .collect();
    assert_eq!(kernels, ["6.1", "6.12"]);
    let last = RunFilter {
        last: Some(1),
        ..RunFilter::default()
    };
    assert_eq!(store.runs(&last).unwrap()[0].kernel_release, "6.12");
    assert_eq!(store.find("run-1").unwrap().kernel_release, "6.6");
    assert!(matches!(
        store.find("run-"),
        Err(StoreError::Ambiguous { count: 3, .. })
    ));
    assert!(matches!(store.find("nope"), Err(StoreError::NoSuchRun(_))));
    // The fixture's audio under none has figures; its failed scenario none.
    let points = store
        .points(&PointQuery {
            probe: Some("audio".into()),
            load: Some("none".into()),
            figure: None,
            runs: RunFilter::default(),
        })
        .unwrap();
    assert!(!points.is_empty());
    let runs_of_points: std::collections::BTreeSet<&str> =
        points.iter().map(|p| p.run_key.as_str()).collect();
    assert_eq!(runs_of_points.len(), 3);
    assert!(points
        .windows(2)
        .all(|w| w[0].started_unix <= w[1].started_unix));
    let failed = store
        .points(&PointQuery {
            probe: Some("audio".into()),
            load: Some("video".into()),
            ..PointQuery::default()
        })
        .unwrap();
    assert!(failed.is_empty());
}

#[test]
fn pending_runs_wait_until_cleared_and_annotations_are_kept() {
    let (_dir, _location, mut store) = temp_store();
    add(&mut store, &run("r1", 0, "6.1"));
    store.mark_pending("r1@testhost", "lab", "refused").unwrap();
    store
        .mark_pending("r1@testhost", "lab", "refused again")
        .unwrap();
    assert_eq!(store.pending("lab").unwrap(), ["r1@testhost"]);
    assert!(store.pending("elsewhere").unwrap().is_empty());
    store.clear_pending("r1@testhost", "lab").unwrap();
    assert!(store.pending("lab").unwrap().is_empty());
    store.annotate("r1", None, "BIOS update").unwrap();
    let notes = store.annotations().unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].note, "BIOS update");
    assert_eq!(notes[0].run_key, "r1@testhost");
}

#[test]
fn a_newer_schema_and_a_file_that_is_not_a_store_are_refused_in_one_line() {
    let (dir, location, store) = temp_store();
    drop(store);
    let path = &dir.path().join(STORE_FILE);
    let connection = rusqlite::Connection::open(path).unwrap();
    connection
        .execute("INSERT INTO schema_version (version) VALUES (99)", [])
        .unwrap();
    drop(connection);
    let newer = Store::open(&location).err().unwrap();
    assert!(matches!(newer, StoreError::NewerSchema { found: 99, .. }));
    let garbage = dir.path().join("garbage.sqlite");
    std::fs::write(&garbage, vec![b'x'; 8192]).unwrap();
    let error = Store::open(&StoreLocation::Sqlite(garbage)).err().unwrap();
    assert!(matches!(error, StoreError::Corrupt(_)), "{error}");
    assert!(!error.to_string().contains('\n'));
}

#[test]
fn a_store_held_by_another_writer_is_called_locked_after_the_wait() {
    let (dir, _location, mut store) = temp_store();
    let path = &dir.path().join(STORE_FILE);
    let holder = rusqlite::Connection::open(path).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let bytes = serde_json::to_vec(&run("r1", 0, "6.1")).unwrap();
    let error = store
        .add(&rows_of(&run("r1", 0, "6.1"), &bytes))
        .err()
        .unwrap();
    assert!(matches!(error, StoreError::Locked(_)), "{error}");
    holder.execute_batch("ROLLBACK").unwrap();
    assert!(store.runs(&RunFilter::default()).unwrap().is_empty());
}

// Issue 29: nothing is lost from a store, and a store is its user's.

/// The store file of [`temp_store`], opened beside the store.
fn beside(dir: &tempfile::TempDir) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.path().join(STORE_FILE)).unwrap()
}

#[test]
fn another_document_under_a_key_the_store_has_is_refused_and_the_first_kept() {
    let (_dir, _location, mut store) = temp_store();
    let first = run("r1", 0, "6.1");
    add(&mut store, &first);
    let mut other = first.clone();
    other.run.comment = Some("another run, the same id and host".into());
    let bytes = serde_json::to_vec(&other).unwrap();
    let error = store.add(&rows_of(&other, &bytes)).err().unwrap();
    assert!(matches!(error, StoreError::KeyTaken(ref key) if key == "r1@testhost"));
    assert!(error.to_string().contains("different run"), "{error}");
    let kept = store.document_bytes("r1@testhost").unwrap();
    assert_eq!(kept, serde_json::to_vec(&first).unwrap());
}

#[test]
fn a_document_that_does_not_match_its_sha256_is_refused_when_read() {
    let (dir, _location, mut store) = temp_store();
    add(&mut store, &run("r1", 0, "6.1"));
    let changed = fixture::run();
    let gz = super::rows::rows_of(&changed, &serde_json::to_vec(&changed).unwrap()).doc_gz;
    beside(&dir)
        .execute("UPDATE run SET doc_gz = ?1", [gz])
        .unwrap();
    let error = store.document_bytes("r1@testhost").err().unwrap();
    assert!(matches!(error, StoreError::Corrupt(_)), "{error}");
    assert!(error.to_string().contains("SHA-256"), "{error}");
}

#[test]
fn a_run_id_that_two_hosts_share_names_both() {
    let (_dir, _location, mut store) = temp_store();
    let first = run("r1", 0, "6.1");
    let mut elsewhere = first.clone();
    elsewhere.system.hostname = "elsewhere".into();
    add(&mut store, &first);
    add(&mut store, &elsewhere);
    assert!(matches!(
        store.find("r1"),
        Err(StoreError::Ambiguous { count: 2, .. })
    ));
    assert_eq!(store.find("r1@elsewhere").unwrap().hostname, "elsewhere");
}

#[test]
fn a_series_is_found_by_the_start_of_its_key() {
    let (_dir, _location, mut store) = temp_store();
    add(&mut store, &run("r1", 0, "6.1"));
    let key = store.runs(&RunFilter::default()).unwrap()[0].series.clone();
    assert_eq!(store.series_keys(&key[..4]).unwrap(), [key]);
    assert!(store.series_keys("not-a-key").unwrap().is_empty());
}

#[test]
fn the_store_is_made_private_to_its_user() {
    use std::os::unix::fs::PermissionsExt as _;
    let (dir, _location, mut store) = temp_store();
    add(&mut store, &run("r1", 0, "6.1"));
    let mode = |name: &str| {
        std::fs::metadata(dir.path().join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("sub"), 0o700);
    assert_eq!(mode(STORE_FILE), 0o600);
    assert_eq!(mode(&format!("{STORE_FILE}-wal")), 0o600);
}

#[test]
fn a_newer_schema_is_written_while_its_migrations_allow_this_build() {
    let (dir, location, store) = temp_store();
    drop(store);
    let newer = super::schema::VERSION + 1;
    beside(&dir)
        .execute_batch(&format!(
            "INSERT INTO schema_version (version) VALUES ({newer});
             INSERT INTO schema_writers (version, oldest_writer) VALUES ({newer}, 1);"
        ))
        .unwrap();
    let mut store = Store::open(&location).unwrap();
    add(&mut store, &run("r1", 0, "6.1"));
    drop(store);
    beside(&dir)
        .execute(
            "UPDATE schema_writers SET oldest_writer = ?1 WHERE version = ?1",
            [newer],
        )
        .unwrap();
    let refused = Store::open(&location).err().unwrap();
    assert!(
        matches!(refused, StoreError::NewerSchema { .. }),
        "{refused}"
    );
    assert!(
        refused.to_string().contains("upgrade feelbench"),
        "{refused}"
    );
}

#[test]
fn rows_that_break_a_constraint_reject_the_run_not_the_store() {
    let (_dir, _location, mut store) = temp_store();
    let first = run("r1", 0, "6.1");
    let mut rows = rows_of(&first, &serde_json::to_vec(&first).unwrap());
    let scenario = rows
        .scenarios
        .iter_mut()
        .find(|s| !s.figures.is_empty())
        .unwrap();
    scenario.figures.push(scenario.figures[0].clone());
    let error = store.add(&rows).err().unwrap();
    assert!(matches!(error, StoreError::Rejected(_)), "{error}");
    assert!(error.is_about_the_run());
    add(&mut store, &run("r2", 1, "6.1"));
}

#[test]
fn a_watch_minute_is_written_whole_or_not_at_all() {
    use super::watch::{WatchIncident, WatchMinute};
    let (_dir, _location, mut store) = temp_store();
    let minute = |canary: &str| WatchMinute {
        hostname: "h".into(),
        canary: canary.into(),
        minute_unix: 60,
        events: 10,
        incidents: 1,
        p50_ms: 0.1,
        p99_ms: 1.0,
        max_ms: 3.0,
    };
    let incident = |latency_ms| WatchIncident {
        hostname: "h".into(),
        canary: "timer".into(),
        at_unix: 61,
        latency_ms,
        cause: "timer".into(),
        culprit: None,
        culprit_cgroup: None,
        json: "{}".into(),
    };
    // SQLite stores a NaN as NULL, which latency_ms refuses: the minutes
    // written before that incident are rolled back with it.
    let minutes = [minute("timer"), minute("frame")];
    assert!(store
        .add_watch_rows(&minutes, &[incident(3.0), incident(f64::NAN)])
        .is_err());
    assert_eq!(store.watch_minutes(None, 0).unwrap(), []);
    store.add_watch_rows(&minutes, &[incident(3.0)]).unwrap();
    assert_eq!(store.watch_minutes(Some("h"), 0).unwrap().len(), 2);
}
