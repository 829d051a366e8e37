//! The store's part of a watch: each canary's summary per wall-clock minute
//! and that minute's worst incidents, written when the minute ends (and
//! for the last, partial one, when the watch ends). A store that fails is
//! said once as a warning; the watch and its metrics go on, and each later
//! minute tries again.

use super::incident::Incident;
use super::{keep_worst, ranks_among};
use crate::measure::latency::LatencyHistogram;
use crate::store::watch::{WatchIncident, WatchMinute};
use crate::store::{Store, StoreLocation};
use std::time::UNIX_EPOCH;

/// Incidents stored per minute at most: the minute's worst.
const INCIDENTS_PER_MINUTE: usize = 20;

/// One canary's minute so far.
struct Minute {
    latency: LatencyHistogram,
    incidents: i64,
}

/// The minutes being counted, and where they go.
pub struct MinuteBook {
    store: Store,
    location: String,
    hostname: String,
    names: Vec<String>,
    canaries: Vec<Minute>,
    worst: Vec<Incident>,
    minute_unix: i64,
    warned: bool,
}

impl MinuteBook {
    /// Counts minutes of the canaries `names` on `hostname` into `store`.
    pub fn new(store: Store, location: &StoreLocation, hostname: &str, names: &[&str]) -> Self {
        Self {
            store,
            location: location.to_string(),
            hostname: hostname.to_string(),
            names: names.iter().map(|n| n.to_string()).collect(),
            canaries: names.iter().map(|_| fresh()).collect(),
            worst: Vec::new(),
            minute_unix: minute_now(),
            warned: false,
        }
    }

    /// Counts an event of canary `canary` `latency_ns` late.
    pub fn record(&mut self, canary: usize, latency_ns: u64) {
        self.canaries[canary].latency.record_ns(latency_ns);
    }

    /// Counts an incident of canary `canary`.
    pub fn late(&mut self, canary: usize) {
        self.canaries[canary].incidents += 1;
    }

    /// Keeps `incident` when among the minute's worst (copied only then).
    pub fn incident(&mut self, incident: &Incident) {
        if ranks_among(&self.worst, incident, INCIDENTS_PER_MINUTE) {
            keep_worst(&mut self.worst, incident.clone(), INCIDENTS_PER_MINUTE);
        }
    }

    /// Writes the minute once the clock is past it.
    pub fn tick(&mut self) {
        if minute_now() != self.minute_unix {
            self.flush();
        }
    }

    /// Writes the minute so far and starts the next.
    pub fn flush(&mut self) {
        let outcome = self.write();
        if let Err(e) = outcome {
            if !self.warned {
                say!("warning: watch: store {}: {e}; the watch goes on, the store is tried again each minute", self.location);
                self.warned = true;
            }
        }
        self.canaries.iter_mut().for_each(|m| *m = fresh());
        self.worst.clear();
        self.minute_unix = minute_now();
    }

    fn write(&mut self) -> Result<(), crate::store::StoreError> {
        let ms = |ns: u64| ns as f64 / 1e6;
        let minutes: Vec<WatchMinute> = self
            .names
            .iter()
            .zip(&self.canaries)
            .filter(|(_, minute)| !minute.latency.is_empty())
            .map(|(name, minute)| WatchMinute {
                hostname: self.hostname.clone(),
                canary: name.clone(),
                minute_unix: self.minute_unix,
                events: minute.latency.len() as i64,
                incidents: minute.incidents,
                p50_ms: ms(minute.latency.quantile_ns(0.5)),
                p99_ms: ms(minute.latency.quantile_ns(0.99)),
                max_ms: ms(minute.latency.max_ns()),
            })
            .collect();
        let incidents: Vec<WatchIncident> = self
            .worst
            .iter()
            .map(|incident| {
                let top = incident.ran_instead.first();
                WatchIncident {
                    hostname: self.hostname.clone(),
                    canary: incident.canary.clone(),
                    at_unix: humantime::parse_rfc3339(&incident.at)
                        .ok()
                        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                        .map_or(self.minute_unix, |d| d.as_secs() as i64),
                    latency_ms: incident.latency_ms,
                    cause: incident.cause.key().to_string(),
                    culprit: top.map(|c| c.thread.clone()),
                    culprit_cgroup: top.and_then(|c| c.unit.clone()),
                    json: serde_json::to_string(incident).unwrap_or_default(),
                }
            })
            .collect();
        self.store.add_watch_rows(&minutes, &incidents)
    }
}

fn fresh() -> Minute {
    Minute {
        latency: LatencyHistogram::new(),
        incidents: 0,
    }
}

/// The start of the current wall-clock minute, Unix seconds.
fn minute_now() -> i64 {
    let secs = crate::store::add::now_unix();
    secs - secs % 60
}
