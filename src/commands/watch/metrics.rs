//! What `watch` counts, and its OpenMetrics text: each canary's latency
//! as a histogram with fixed buckets (which a dashboard turns into
//! percentiles with `histogram_quantile`), incidents by canary and cause
//! and by the cgroup of the task that ran longest instead (the first
//! `top` cgroups seen keep a label of their own, the rest count as
//! `other`, so the label's values stay bounded and every counter only
//! grows), the flight recorder's state and cost, and the watch's own CPU.

use super::incident::Incident;
use crate::measure::late::Cause;
use crate::measure::latency::LatencyHistogram;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The histogram's upper bounds, seconds (+Inf follows).
pub const BUCKETS_S: [f64; 14] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
    0.256, 1.0,
];

/// The cgroup label of incidents past the first `top` cgroups.
pub const OTHER: &str = "other";

/// One canary's counts.
#[derive(Debug)]
pub struct CanaryCounts {
    pub name: String,
    /// Events per bucket of [`BUCKETS_S`] (not cumulative), then above.
    buckets: [u64; BUCKETS_S.len() + 1],
    sum_ns: u128,
    /// Every latency, for percentiles.
    pub latency: LatencyHistogram,
    pub incidents: u64,
    /// Events a full queue dropped.
    pub dropped: u64,
}

impl CanaryCounts {
    /// Events per bucket of [`BUCKETS_S`] (not cumulative), then above.
    pub fn bucket_counts(&self) -> &[u64] {
        &self.buckets
    }
}

/// The flight recorder as the metrics show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecorderState {
    Recording,
    /// It stopped itself (its cost, its records).
    Stopped,
    /// It never ran (not root, no perf events, turned off).
    Off,
}

impl RecorderState {
    const ALL: [RecorderState; 3] = [Self::Recording, Self::Stopped, Self::Off];

    /// Its label value.
    pub fn key(self) -> &'static str {
        match self {
            Self::Recording => "recording",
            Self::Stopped => "stopped",
            Self::Off => "off",
        }
    }
}

/// The recorder's figures.
#[derive(Debug, Clone, Copy)]
pub struct RecorderFigures {
    pub state: RecorderState,
    /// Its measured cost, as a share of one CPU.
    pub cpu_ratio: f64,
    pub records: u64,
    pub lost: u64,
    /// Times it started again after stopping itself.
    pub restarts: u64,
}

/// Everything `watch` counts.
#[derive(Debug)]
pub struct Metrics {
    pub canaries: Vec<CanaryCounts>,
    by_cause: BTreeMap<(usize, Cause), u64>,
    /// Incidents by culprit's cgroup, the first `top` in the order seen,
    /// and those of the others.
    by_cgroup: Vec<(String, u64)>,
    other: u64,
    top: usize,
    pub recorder: RecorderFigures,
    /// The watch process's CPU time, s.
    pub cpu_s: f64,
    /// Incidents counted but not made whole (too many at once).
    pub unmade: u64,
}

impl Metrics {
    /// Counts for `canaries` (names), with `top` cgroups labelled.
    pub fn new(canaries: &[&str], top: usize, recorder: RecorderState) -> Self {
        Self {
            canaries: canaries
                .iter()
                .map(|name| CanaryCounts {
                    name: name.to_string(),
                    buckets: [0; BUCKETS_S.len() + 1],
                    sum_ns: 0,
                    latency: LatencyHistogram::new(),
                    incidents: 0,
                    dropped: 0,
                })
                .collect(),
            by_cause: BTreeMap::new(),
            by_cgroup: Vec::new(),
            other: 0,
            top,
            recorder: RecorderFigures {
                state: recorder,
                cpu_ratio: 0.0,
                records: 0,
                lost: 0,
                restarts: 0,
            },
            cpu_s: 0.0,
            unmade: 0,
        }
    }

    /// Counts an event of canary `canary` that was `latency_ns` late.
    pub fn record(&mut self, canary: usize, latency_ns: u64) {
        let counts = &mut self.canaries[canary];
        let s = latency_ns as f64 / 1e9;
        let bucket = BUCKETS_S.partition_point(|&le| le < s);
        counts.buckets[bucket] += 1;
        counts.sum_ns += u128::from(latency_ns);
        counts.latency.record_ns(latency_ns);
    }

    /// Counts an incident of canary `canary`, late by `cause`.
    pub fn late(&mut self, canary: usize, cause: Cause) {
        self.canaries[canary].incidents += 1;
        *self.by_cause.entry((canary, cause)).or_default() += 1;
    }

    /// Counts the cgroup of the task that ran longest in `incident`.
    pub fn culprit(&mut self, incident: &Incident) {
        let Some(top) = incident.ran_instead.first() else {
            return;
        };
        let group = top.unit.as_deref().unwrap_or("unknown");
        let named = self.by_cgroup.len();
        match self.by_cgroup.iter_mut().find(|(g, _)| g == group) {
            Some((_, n)) => *n += 1,
            None if named < self.top => self.by_cgroup.push((group.to_string(), 1)),
            None => self.other += 1,
        }
    }

    /// The culprits' cgroups counted, most incidents first.
    pub fn culprits(&self) -> Vec<(String, u64)> {
        let mut all = self.by_cgroup.clone();
        if self.other > 0 {
            all.push((OTHER.to_string(), self.other));
        }
        all.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        all
    }

    /// The OpenMetrics text exposition of everything counted.
    pub fn openmetrics(&self) -> String {
        let mut out = String::new();
        let w = &mut out;
        family(
            w,
            "feelbench_watch_latency_seconds",
            "histogram",
            "How late each canary event was (its delay: the parts of its late split added up).",
            Some("seconds"),
        );
        for c in &self.canaries {
            let label = format!("canary=\"{}\"", escape(&c.name));
            let mut cumulative = 0;
            for (i, le) in BUCKETS_S.iter().enumerate() {
                cumulative += c.buckets[i];
                let _ = writeln!(
                    w,
                    "feelbench_watch_latency_seconds_bucket{{{label},le=\"{le}\"}} {cumulative}"
                );
            }
            cumulative += c.buckets[BUCKETS_S.len()];
            let _ = writeln!(
                w,
                "feelbench_watch_latency_seconds_bucket{{{label},le=\"+Inf\"}} {cumulative}"
            );
            let _ = writeln!(
                w,
                "feelbench_watch_latency_seconds_count{{{label}}} {cumulative}"
            );
            let _ = writeln!(
                w,
                "feelbench_watch_latency_seconds_sum{{{label}}} {}",
                c.sum_ns as f64 / 1e9
            );
        }
        family(
            w,
            "feelbench_watch_incidents",
            "counter",
            "Canary events later than their threshold, by canary and cause.",
            None,
        );
        for c in &self.canaries {
            for cause in Cause::ALL {
                let n = self
                    .by_cause
                    .get(&(self.index(&c.name), cause))
                    .copied()
                    .unwrap_or(0);
                let _ = writeln!(
                    w,
                    "feelbench_watch_incidents_total{{canary=\"{}\",cause=\"{}\"}} {n}",
                    escape(&c.name),
                    cause.key()
                );
            }
        }
        family(w, "feelbench_watch_culprit_incidents", "counter", "Incidents by the cgroup (unit or container) of the task that ran longest instead; the first cgroups seen by name, the rest as other.", None);
        let other = (self.other > 0).then(|| (OTHER.to_string(), self.other));
        for (group, n) in self.by_cgroup.iter().chain(other.iter()) {
            let _ = writeln!(
                w,
                "feelbench_watch_culprit_incidents_total{{cgroup=\"{}\"}} {n}",
                escape(group)
            );
        }
        family(
            w,
            "feelbench_watch_dropped_events",
            "counter",
            "Canary events not counted (a full queue).",
            None,
        );
        for c in &self.canaries {
            let _ = writeln!(
                w,
                "feelbench_watch_dropped_events_total{{canary=\"{}\"}} {}",
                escape(&c.name),
                c.dropped
            );
        }
        family(
            w,
            "feelbench_watch_recorder_state",
            "gauge",
            "The scheduler flight recorder: 1 for the state it is in.",
            None,
        );
        for state in RecorderState::ALL {
            let on = u8::from(self.recorder.state == state);
            let _ = writeln!(
                w,
                "feelbench_watch_recorder_state{{state=\"{}\"}} {on}",
                state.key()
            );
        }
        family(
            w,
            "feelbench_watch_recorder_cpu_ratio",
            "gauge",
            "The recorder's measured cost, as a share of one CPU.",
            None,
        );
        let _ = writeln!(
            w,
            "feelbench_watch_recorder_cpu_ratio {}",
            self.recorder.cpu_ratio
        );
        family(
            w,
            "feelbench_watch_recorder_records",
            "counter",
            "Scheduler records the recorder read.",
            None,
        );
        let _ = writeln!(
            w,
            "feelbench_watch_recorder_records_total {}",
            self.recorder.records
        );
        family(
            w,
            "feelbench_watch_recorder_lost_records",
            "counter",
            "Scheduler records the kernel could not write (a full ring).",
            None,
        );
        let _ = writeln!(
            w,
            "feelbench_watch_recorder_lost_records_total {}",
            self.recorder.lost
        );
        family(
            w,
            "feelbench_watch_recorder_restarts",
            "counter",
            "Times the recorder started again after stopping itself over its budget.",
            None,
        );
        let _ = writeln!(
            w,
            "feelbench_watch_recorder_restarts_total {}",
            self.recorder.restarts
        );
        family(
            w,
            "feelbench_watch_cpu_seconds",
            "counter",
            "CPU time of the watch process (canaries, recorder, sampler, server).",
            Some("seconds"),
        );
        let _ = writeln!(w, "feelbench_watch_cpu_seconds_total {}", self.cpu_s);
        out.push_str("# EOF\n");
        out
    }

    fn index(&self, name: &str) -> usize {
        self.canaries
            .iter()
            .position(|c| c.name == name)
            .unwrap_or(usize::MAX)
    }
}

/// A metric family's TYPE, HELP and UNIT lines.
fn family(out: &mut String, name: &str, kind: &str, help: &str, unit: Option<&str>) {
    let _ = writeln!(out, "# TYPE {name} {kind}");
    if let Some(unit) = unit {
        let _ = writeln!(out, "# UNIT {name} {unit}");
    }
    let _ = writeln!(out, "# HELP {name} {help}");
}

/// A label value escaped as OpenMetrics wants it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::super::incident::Culprit;
    use super::*;
    use crate::measure::late::EventSplit;

    fn incident(unit: Option<&str>) -> Incident {
        Incident {
            canary: "timer".into(),
            at: String::new(),
            latency_ms: 30.0,
            threshold_ms: 2.0,
            cause: Cause::RunQueue,
            split: EventSplit::default(),
            recorded: unit.is_some(),
            ran_instead: unit
                .map(|u| Culprit {
                    thread: "t".into(),
                    tid: 1,
                    pid: None,
                    process: None,
                    cgroup: None,
                    unit: Some(u.into()),
                    ran_ms: 30.0,
                })
                .into_iter()
                .collect(),
            context: None,
            trace: None,
        }
    }

    #[test]
    fn buckets_are_cumulative_and_end_with_inf_count_and_sum() {
        let mut m = Metrics::new(&["timer"], 2, RecorderState::Off);
        for ns in [40_000, 60_000, 3_000_000, 5_000_000_000] {
            m.record(0, ns);
        }
        let text = m.openmetrics();
        assert!(
            text.contains(
                "feelbench_watch_latency_seconds_bucket{canary=\"timer\",le=\"0.00005\"} 1\n"
            ),
            "{text}"
        );
        assert!(text.contains("le=\"0.0001\"} 2\n"));
        assert!(text.contains("le=\"0.004\"} 3\n"));
        assert!(text.contains("le=\"1\"} 3\n"));
        assert!(text.contains("le=\"+Inf\"} 4\n"));
        assert!(text.contains("feelbench_watch_latency_seconds_count{canary=\"timer\"} 4\n"));
        assert!(text.contains("feelbench_watch_latency_seconds_sum{canary=\"timer\"} 5.0031"));
        assert!(text.contains("feelbench_watch_recorder_state{state=\"off\"} 1\n"));
        assert!(text.ends_with("# EOF\n"));
        m.recorder.restarts = 2;
        let text = m.openmetrics();
        assert!(
            text.contains("# TYPE feelbench_watch_recorder_restarts counter\n")
                && text.contains("\nfeelbench_watch_recorder_restarts_total 2\n"),
            "{text}"
        );
    }

    #[test]
    fn culprit_cgroups_past_the_first_few_count_as_other_and_never_move() {
        let mut m = Metrics::new(&["timer"], 2, RecorderState::Recording);
        for unit in [
            "a.service",
            "b.service",
            "c.service",
            "a.service",
            "d.service",
        ] {
            m.late(0, Cause::RunQueue);
            m.culprit(&incident(Some(unit)));
        }
        m.late(0, Cause::Timer);
        m.culprit(&incident(None));
        let text = m.openmetrics();
        assert!(
            text.contains("feelbench_watch_culprit_incidents_total{cgroup=\"a.service\"} 2\n"),
            "{text}"
        );
        assert!(text.contains("{cgroup=\"b.service\"} 1\n"));
        assert!(text.contains("{cgroup=\"other\"} 2\n"));
        assert!(!text.contains("c.service"));
        assert!(text
            .contains("feelbench_watch_incidents_total{canary=\"timer\",cause=\"run_queue\"} 5\n"));
        assert!(text.contains("{canary=\"timer\",cause=\"timer\"} 1\n"));
        assert_eq!(m.canaries[0].incidents, 6);
        assert_eq!(m.culprits()[0], ("a.service".to_string(), 2));
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
