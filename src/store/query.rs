//! Reading a store: its runs (listed, filtered, found by id), a run's
//! document, the points of figures across runs, annotations that cut a
//! series, and runs that wait to be sent to another store. Text filters
//! are applied here rather than in SQL, so both back ends match alike.

use super::add::now_unix;
use super::backend::{Row, Value};
use super::rows::sha256_hex;
use super::{Store, StoreError};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::io::Read as _;

/// A run as the store lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// The key it is stored under (`RUN-ID@HOST`).
    pub run_key: String,
    pub run_id: String,
    pub hostname: String,
    /// The machine's fingerprint.
    pub machine: String,
    pub started: String,
    pub started_unix: i64,
    pub kernel_release: String,
    pub suite: Option<String>,
    pub suite_version: Option<i64>,
    pub settings_hash: String,
    /// The series it belongs to (machine, settings, suite).
    pub series: String,
    pub comment: Option<String>,
    pub interrupted: bool,
    pub scenarios: i64,
    pub doc_sha256: String,
}

/// Which runs to list: every field given must match.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFilter {
    /// A hostname, or the start of a machine fingerprint.
    pub machine: Option<String>,
    /// Part of the kernel release.
    pub kernel: Option<String>,
    /// Part of the comment.
    pub comment: Option<String>,
    /// The suite's name.
    pub suite: Option<String>,
    /// The start of a series key.
    pub series: Option<String>,
    /// Runs started at or after, in seconds since the epoch.
    pub since_unix: Option<i64>,
    /// Runs started before.
    pub until_unix: Option<i64>,
    /// Only the newest this many (after the other filters): of all the
    /// runs [`Store::runs`] lists, of each series [`Store::points`] reads.
    pub last: Option<usize>,
}

impl RunFilter {
    fn matches(&self, run: &RunSummary) -> bool {
        let part = |wanted: &Option<String>, have: &str| {
            wanted.as_ref().is_none_or(|w| have.contains(w.as_str()))
        };
        self.machine
            .as_ref()
            .is_none_or(|m| run.hostname == *m || run.machine.starts_with(m.as_str()))
            && part(&self.kernel, &run.kernel_release)
            && part(&self.comment, run.comment.as_deref().unwrap_or(""))
            && self
                .suite
                .as_ref()
                .is_none_or(|s| run.suite.as_ref() == Some(s))
            && self
                .series
                .as_ref()
                .is_none_or(|s| run.series.starts_with(s.as_str()))
            && self.since_unix.is_none_or(|t| run.started_unix >= t)
            && self.until_unix.is_none_or(|t| run.started_unix < t)
    }
}

/// One figure of one run: a point of a series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub series: String,
    pub run_key: String,
    pub run_id: String,
    pub hostname: String,
    pub machine: String,
    pub started: String,
    pub started_unix: i64,
    pub kernel_release: String,
    pub comment: Option<String>,
    pub suite: Option<String>,
    pub probe: String,
    pub load: String,
    pub figure: String,
    pub unit: String,
    pub better: String,
    pub value: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
}

/// Which points to read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PointQuery {
    pub probe: Option<String>,
    pub load: Option<String>,
    /// A figure key; `None` for the headline figures.
    pub figure: Option<String>,
    /// Which runs.
    pub runs: RunFilter,
}

/// A note that cuts a series at a run ("BIOS update"): regressions never
/// compare values across it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Annotation {
    /// The run from which the note holds.
    pub run_key: String,
    /// The series it cuts; `None` for every series of the run's machine.
    pub series: Option<String>,
    /// The machine's fingerprint.
    pub machine: String,
    pub note: String,
    pub added_unix: i64,
}

const RUN_COLUMNS: &str = "r.run_key, r.run_id, r.hostname, m.fingerprint, r.started, \
     r.started_unix, r.kernel_release, r.suite, r.suite_version, r.settings_hash, r.series_key, \
     r.comment, r.interrupted, r.scenarios, r.doc_sha256";

fn summary_of(row: &Row) -> RunSummary {
    RunSummary {
        run_key: row[0].text_or_empty(),
        run_id: row[1].text_or_empty(),
        hostname: row[2].text_or_empty(),
        machine: row[3].text_or_empty(),
        started: row[4].text_or_empty(),
        started_unix: row[5].as_int().unwrap_or(0),
        kernel_release: row[6].text_or_empty(),
        suite: row[7].as_text().map(str::to_string),
        suite_version: row[8].as_int(),
        settings_hash: row[9].text_or_empty(),
        series: row[10].text_or_empty(),
        comment: row[11].as_text().map(str::to_string),
        interrupted: row[12].as_int().unwrap_or(0) != 0,
        scenarios: row[13].as_int().unwrap_or(0),
        doc_sha256: row[14].text_or_empty(),
    }
}

/// The newest `last` of `items` (which are oldest first).
fn newest<T>(mut items: Vec<T>, last: Option<usize>) -> Vec<T> {
    if let Some(last) = last {
        let cut = items.len().saturating_sub(last);
        items.drain(..cut);
    }
    items
}

impl Store {
    /// The runs `filter` matches, oldest first.
    pub fn runs(&mut self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let rows = self.db.query(
            &format!(
                "SELECT {RUN_COLUMNS} FROM run r JOIN machine m ON m.id = r.machine_id \
                 WHERE r.started_unix >= ?1 AND r.started_unix < ?2 \
                 ORDER BY r.started_unix, r.run_key"
            ),
            &[
                Value::Int(Some(filter.since_unix.unwrap_or(i64::MIN))),
                Value::Int(Some(filter.until_unix.unwrap_or(i64::MAX))),
            ],
        )?;
        let runs = rows
            .iter()
            .map(summary_of)
            .filter(|run| filter.matches(run))
            .collect();
        Ok(newest(runs, filter.last))
    }

    /// The run `given` names: its whole key, its run id, or the start of
    /// either, when that names one run (a run id that runs of several hosts
    /// share names them all).
    pub fn find(&mut self, given: &str) -> Result<RunSummary, StoreError> {
        let runs = self.runs(&RunFilter::default())?;
        let one = |matching: Vec<&RunSummary>| match matching.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(StoreError::NoSuchRun(given.to_string())),
            many => Err(StoreError::Ambiguous {
                given: given.to_string(),
                count: many.len(),
            }),
        };
        if let Some(exact) = runs.iter().find(|r| r.run_key == given) {
            return Ok(exact.clone());
        }
        let same_id: Vec<&RunSummary> = runs.iter().filter(|r| r.run_id == given).collect();
        if !same_id.is_empty() {
            return one(same_id);
        }
        one(runs
            .iter()
            .filter(|r| r.run_key.starts_with(given))
            .collect())
    }

    /// The document of the run stored under `run_key`, as it was written,
    /// checked against the SHA-256 it was stored with.
    pub fn document_bytes(&mut self, run_key: &str) -> Result<Vec<u8>, StoreError> {
        let rows = self.db.query(
            "SELECT doc_gz, doc_sha256 FROM run WHERE run_key = ?1",
            &[Value::text(run_key)],
        )?;
        let mut row = rows
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::NoSuchRun(run_key.to_string()))?;
        let sha256 = row.pop().map(|v| v.text_or_empty()).unwrap_or_default();
        let compressed = row
            .pop()
            .and_then(Value::into_blob)
            .ok_or_else(|| StoreError::NoSuchRun(run_key.to_string()))?;
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(&compressed[..])
            .read_to_end(&mut bytes)
            .map_err(|e| StoreError::Corrupt(format!("run {run_key}: {e}")))?;
        if sha256_hex(&bytes) != sha256 {
            return Err(StoreError::Corrupt(format!(
                "run {run_key}: its document does not match the SHA-256 it was stored with"
            )));
        }
        Ok(bytes)
    }

    /// The runs `filter` matches (its `last` aside), by their row id.
    fn runs_by_id(&mut self, filter: &RunFilter) -> Result<HashMap<i64, RunSummary>, StoreError> {
        let rows = self.db.query(
            &format!(
                "SELECT {RUN_COLUMNS}, r.id FROM run r JOIN machine m ON m.id = r.machine_id \
                 WHERE r.started_unix >= ?1 AND r.started_unix < ?2"
            ),
            &[
                Value::Int(Some(filter.since_unix.unwrap_or(i64::MIN))),
                Value::Int(Some(filter.until_unix.unwrap_or(i64::MAX))),
            ],
        )?;
        Ok(rows
            .iter()
            .map(|row| (row[15].as_int().unwrap_or(0), summary_of(row)))
            .filter(|(_, run)| filter.matches(run))
            .collect())
    }

    /// The figures `query` asks for, of runs that finished and scenarios
    /// that measured, oldest run first. The runs are read once and each
    /// figure row carries only its run's id: a query over many runs reads
    /// each run's text once, not once per figure.
    pub fn points(&mut self, query: &PointQuery) -> Result<Vec<Point>, StoreError> {
        let runs = self.runs_by_id(&query.runs)?;
        let mut conditions = vec!["r.interrupted = 0", "s.status = 'ok'"];
        let mut params = Vec::new();
        let mut bind = |condition: &'static str, value: &Option<String>| {
            if let Some(value) = value {
                params.push(Value::text(value));
                conditions.push(condition);
            }
        };
        bind("s.probe = ?", &query.probe);
        bind("s.load = ?", &query.load);
        bind("f.name = ?", &query.figure);
        if query.figure.is_none() {
            conditions.push("f.headline = 1");
        }
        let mut numbered = 0;
        let conditions: Vec<String> = conditions
            .iter()
            .map(|c| match c.strip_suffix('?') {
                Some(head) => {
                    numbered += 1;
                    format!("{head}?{numbered}")
                }
                None => c.to_string(),
            })
            .collect();
        let sql = format!(
            "SELECT s.run_id, s.probe, s.load, f.name, f.unit, f.better, f.value, \
             f.ci_low, f.ci_high \
             FROM figure f JOIN scenario s ON s.id = f.scenario_id \
             JOIN run r ON r.id = s.run_id \
             WHERE {} ORDER BY r.started_unix, r.run_key, s.position, f.name",
            conditions.join(" AND ")
        );
        let rows = self.db.query(&sql, &params)?;
        let mut points: Vec<Point> = rows
            .iter()
            .filter_map(|row| {
                let run = runs.get(&row[0].as_int()?)?;
                Some(Point {
                    series: run.series.clone(),
                    run_key: run.run_key.clone(),
                    run_id: run.run_id.clone(),
                    hostname: run.hostname.clone(),
                    machine: run.machine.clone(),
                    started: run.started.clone(),
                    started_unix: run.started_unix,
                    kernel_release: run.kernel_release.clone(),
                    comment: run.comment.clone(),
                    suite: run.suite.clone(),
                    probe: row[1].text_or_empty(),
                    load: row[2].text_or_empty(),
                    figure: row[3].text_or_empty(),
                    unit: row[4].text_or_empty(),
                    better: row[5].text_or_empty(),
                    value: row[6].as_real().unwrap_or(f64::NAN),
                    ci_low: row[7].as_real(),
                    ci_high: row[8].as_real(),
                })
            })
            .collect();
        if let Some(last) = query.runs.last {
            // The newest `last` runs of each series.
            let mut keep = HashMap::<String, HashSet<String>>::new();
            for p in points.iter().rev() {
                let runs = keep.entry(p.series.clone()).or_default();
                if runs.len() < last {
                    runs.insert(p.run_key.clone());
                }
            }
            points.retain(|p| keep[&p.series].contains(&p.run_key));
        }
        Ok(points)
    }

    /// The figure keys stored for `probe` under `load`, in name order:
    /// what `history` offers when asked for one no run has.
    pub fn figure_names(&mut self, probe: &str, load: &str) -> Result<Vec<String>, StoreError> {
        let rows = self.db.query(
            "SELECT DISTINCT f.name FROM figure f JOIN scenario s ON s.id = f.scenario_id \
             WHERE s.probe = ?1 AND s.load = ?2 ORDER BY f.name",
            &[Value::text(probe), Value::text(load)],
        )?;
        Ok(rows.iter().map(|row| row[0].text_or_empty()).collect())
    }

    /// The keys of the series whose key starts with `prefix` (as
    /// `--series` takes it everywhere), in order.
    pub fn series_keys(&mut self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let mut keys: Vec<String> = self
            .runs(&RunFilter::default())?
            .into_iter()
            .map(|r| r.series)
            .filter(|key| key.starts_with(prefix))
            .collect();
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    /// Adds a note that cuts the series `series` (its whole key; or every
    /// series of the run's machine) from the run `run_key` on.
    pub fn annotate(
        &mut self,
        run_key: &str,
        series: Option<&str>,
        note: &str,
    ) -> Result<(), StoreError> {
        let run = self.find(run_key)?;
        self.db.execute(
            "INSERT INTO annotation (series_key, fingerprint, run_key, note, added_unix) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            &[
                Value::Text(series.map(str::to_string)),
                Value::text(&run.machine),
                Value::text(&run.run_key),
                Value::text(note),
                Value::Int(Some(now_unix())),
            ],
        )?;
        Ok(())
    }

    /// Every annotation, oldest first.
    pub fn annotations(&mut self) -> Result<Vec<Annotation>, StoreError> {
        let rows = self.db.query(
            "SELECT run_key, series_key, fingerprint, note, added_unix FROM annotation ORDER BY id",
            &[],
        )?;
        Ok(rows
            .iter()
            .map(|row| Annotation {
                run_key: row[0].text_or_empty(),
                series: row[1].as_text().map(str::to_string),
                machine: row[2].text_or_empty(),
                note: row[3].text_or_empty(),
                added_unix: row[4].as_int().unwrap_or(0),
            })
            .collect())
    }

    /// Records that the run `run_key` could not be sent to `store`.
    pub fn mark_pending(
        &mut self,
        run_key: &str,
        store: &str,
        error: &str,
    ) -> Result<(), StoreError> {
        self.db.execute(
            "INSERT INTO pending (run_key, store, error, since_unix) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (run_key, store) DO UPDATE SET error = excluded.error",
            &[
                Value::text(run_key),
                Value::text(store),
                Value::text(error),
                Value::Int(Some(now_unix())),
            ],
        )?;
        Ok(())
    }

    /// The runs waiting to be sent to `store`, oldest first.
    pub fn pending(&mut self, store: &str) -> Result<Vec<String>, StoreError> {
        let rows = self.db.query(
            "SELECT run_key FROM pending WHERE store = ?1 ORDER BY since_unix, run_key",
            &[Value::text(store)],
        )?;
        Ok(rows.iter().map(|row| row[0].text_or_empty()).collect())
    }

    /// The run `run_key` has reached `store`.
    pub fn clear_pending(&mut self, run_key: &str, store: &str) -> Result<(), StoreError> {
        self.db.execute(
            "DELETE FROM pending WHERE run_key = ?1 AND store = ?2",
            &[Value::text(run_key), Value::text(store)],
        )?;
        Ok(())
    }
}
