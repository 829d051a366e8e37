//! `feelbench watch`'s rows: each canary's summary per minute and each
//! incident (its line's figures, and the incident whole as JSON), so that
//! `history --watch` can show a machine's feel over days.

use super::backend::{Row, Value};
use super::{Store, StoreError};

/// One canary's minute.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WatchMinute {
    pub hostname: String,
    pub canary: String,
    /// The minute's start, Unix seconds.
    pub minute_unix: i64,
    pub events: i64,
    pub incidents: i64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// One incident.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchIncident {
    pub hostname: String,
    pub canary: String,
    /// When it was due, Unix seconds.
    pub at_unix: i64,
    pub latency_ms: f64,
    /// Its cause's key (`run_queue`).
    pub cause: String,
    /// The task that ran longest instead, and its cgroup's name, when known.
    pub culprit: Option<String>,
    pub culprit_cgroup: Option<String>,
    /// The incident whole, as `watch --output` writes it.
    pub json: String,
}

impl Store {
    /// Adds the canaries' `minutes` and the `incidents` kept with them, in
    /// one transaction: all of them or, when one fails, none.
    pub fn add_watch_rows(
        &mut self,
        minutes: &[WatchMinute],
        incidents: &[WatchIncident],
    ) -> Result<(), StoreError> {
        self.in_transaction(|store| {
            minutes.iter().try_for_each(|m| store.add_watch_minute(m))?;
            incidents
                .iter()
                .try_for_each(|i| store.add_watch_incident(i))
        })
    }

    /// Adds a canary's minute.
    fn add_watch_minute(&mut self, m: &WatchMinute) -> Result<(), StoreError> {
        self.db.execute(
            "INSERT INTO watch_minute (hostname, canary, minute_unix, events, incidents, \
             p50_ms, p99_ms, max_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            &[
                Value::text(&m.hostname),
                Value::text(&m.canary),
                Value::Int(Some(m.minute_unix)),
                Value::Int(Some(m.events)),
                Value::Int(Some(m.incidents)),
                Value::Real(Some(m.p50_ms)),
                Value::Real(Some(m.p99_ms)),
                Value::Real(Some(m.max_ms)),
            ],
        )?;
        Ok(())
    }

    /// Adds an incident.
    fn add_watch_incident(&mut self, i: &WatchIncident) -> Result<(), StoreError> {
        self.db.execute(
            "INSERT INTO watch_incident (hostname, canary, at_unix, latency_ms, cause, culprit, \
             culprit_cgroup, incident_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            &[
                Value::text(&i.hostname),
                Value::text(&i.canary),
                Value::Int(Some(i.at_unix)),
                Value::Real(Some(i.latency_ms)),
                Value::text(&i.cause),
                Value::Text(i.culprit.clone()),
                Value::Text(i.culprit_cgroup.clone()),
                Value::text(&i.json),
            ],
        )?;
        Ok(())
    }

    /// The minutes of `hostname` (every host's when `None`) from
    /// `since_unix` on, in time order.
    pub fn watch_minutes(
        &mut self,
        hostname: Option<&str>,
        since_unix: i64,
    ) -> Result<Vec<WatchMinute>, StoreError> {
        let rows = self.db.query(
            "SELECT hostname, canary, minute_unix, events, incidents, p50_ms, p99_ms, max_ms \
             FROM watch_minute WHERE (?1 IS NULL OR hostname = ?1) AND minute_unix >= ?2 \
             ORDER BY minute_unix, hostname, canary",
            &[
                Value::Text(hostname.map(str::to_string)),
                Value::Int(Some(since_unix)),
            ],
        )?;
        Ok(rows.iter().map(minute_of).collect())
    }
}

fn minute_of(row: &Row) -> WatchMinute {
    let int = |i: usize| row[i].as_int().unwrap_or(0);
    let real = |i: usize| row[i].as_real().unwrap_or(0.0);
    WatchMinute {
        hostname: row[0].text_or_empty(),
        canary: row[1].text_or_empty(),
        minute_unix: int(2),
        events: int(3),
        incidents: int(4),
        p50_ms: real(5),
        p99_ms: real(6),
        max_ms: real(7),
    }
}
