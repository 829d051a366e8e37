//! What a watch says when it ends: `--output`'s document (each canary's
//! percentiles and incidents, the recorder, the culprits' cgroups, the worst
//! incidents whole) and the summary lines on stdout.

use super::canary::name_width;
use super::flight::Flight;
use super::incident::Incident;
use super::metrics::{Metrics, RecorderFigures};
use super::{say_line, WatchSettings};
use serde::Serialize;

/// `--output`'s document.
#[derive(Debug, Serialize)]
pub struct WatchDocument<'a> {
    pub schema: &'static str,
    pub host: &'a str,
    pub started: String,
    pub seconds: f64,
    pub canaries: Vec<CanarySummary>,
    pub recorder: RecorderSummary,
    /// Incidents by the cgroup of the task that ran longest instead, most
    /// first.
    pub culprits: Vec<(String, u64)>,
    /// Incidents counted but not made whole (too many at once).
    pub unmade: u64,
    /// The worst incidents, worst first.
    pub incidents: &'a [Incident],
}

/// A canary over the whole watch.
#[derive(Debug, Serialize)]
pub struct CanarySummary {
    name: String,
    period_ms: f64,
    threshold_ms: f64,
    events: u64,
    dropped: u64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    incidents: u64,
}

/// The flight recorder over the whole watch.
#[derive(Debug, Serialize)]
pub struct RecorderSummary {
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    notice: Option<String>,
    cpu_pct: f64,
    records: u64,
    lost: u64,
    /// Times it stopped itself over its budget, and started again.
    stops: u64,
    restarts: u64,
}

/// Each canary's figures over the whole watch.
pub fn summaries(settings: &WatchSettings, metrics: &Metrics) -> Vec<CanarySummary> {
    let ms = |ns: u64| ns as f64 / 1e6;
    settings
        .canaries
        .iter()
        .zip(&metrics.canaries)
        .map(|(setting, counts)| CanarySummary {
            name: setting.name.clone(),
            period_ms: ms(setting.period_ns),
            threshold_ms: ms(setting.threshold_ns),
            events: counts.latency.len(),
            dropped: counts.dropped,
            p50_ms: ms(counts.latency.quantile_ns(0.5)),
            p99_ms: ms(counts.latency.quantile_ns(0.99)),
            max_ms: ms(counts.latency.max_ns()),
            incidents: counts.incidents,
        })
        .collect()
}

/// What the recorder did (its `figures` over the watch), or why it did not.
pub fn recorder_summary(flight: &Flight, figures: &RecorderFigures) -> RecorderSummary {
    RecorderSummary {
        state: figures.state.key(),
        notice: flight.stopped.clone().or_else(|| flight.notice.clone()),
        cpu_pct: figures.cpu_ratio * 100.0,
        records: figures.records,
        lost: figures.lost,
        stops: flight.stops,
        restarts: flight.restarts,
    }
}

/// The summary on stdout: a line per canary, then the recorder's.
pub fn print_summary(document: &WatchDocument) {
    say_line(&format!(
        "watched {:.1} s: canary, events, p50, p99, max, incidents",
        document.seconds
    ));
    let width = name_width(document.canaries.iter().map(|c| c.name.as_str()));
    for c in &document.canaries {
        let threshold = format!("{:.3}", c.threshold_ms);
        say_line(&format!(
            "  {:<width$} {:>9} events  p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms  {} incidents (> {} ms){}",
            c.name,
            c.events,
            c.p50_ms,
            c.p99_ms,
            c.max_ms,
            c.incidents,
            threshold.trim_end_matches('0').trim_end_matches('.'),
            match c.dropped {
                0 => String::new(),
                n => format!(", {n} events dropped"),
            }
        ));
    }
    if !document.culprits.is_empty() {
        let named: Vec<String> = document
            .culprits
            .iter()
            .map(|(group, n)| format!("{group} {n}"))
            .collect();
        say_line(&format!("  culprits' cgroups: {}", named.join(", ")));
    }
    if document.unmade > 0 {
        say_line(&format!(
            "  {} incidents counted but not made whole (a storm of them: the latest-late were)",
            document.unmade
        ));
    }
    let r = &document.recorder;
    let stops = match (r.stops, r.restarts) {
        (0, _) => String::new(),
        (stops, restarts) => {
            format!(
                ", stopped itself {stops} times over its budget, started again {restarts} times"
            )
        }
    };
    say_line(&format!(
        "  flight recorder: {}, {:.2} % of a CPU, {} records, {} lost{stops}{}",
        r.state,
        r.cpu_pct,
        r.records,
        r.lost,
        r.notice
            .as_deref()
            .map_or(String::new(), |n| format!(" ({n})"))
    ));
}
