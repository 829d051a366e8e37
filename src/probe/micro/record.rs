//! What the micro probes count: per operation, the latency of each instance
//! (divided by the operations it holds) in a histogram for the whole
//! measurement and one per sub-window, and so LMbench's overhead for the
//! operations that have one (`OP_overhead`), or why the operation had to
//! stop.
//! A stopped operation's samples are left out of the tallies, so its
//! figures are missing, and `OP_failed` counts it.

use super::ops::{OpDef, Timed};
use crate::figures::result::MEASURED_S;
use crate::figures::{Measured, Tally};
use crate::measure::batches::{batch_of, batch_seconds, BatchLatency, BATCHES};
use crate::measure::latency::LatencyHistogram;
use crate::measure::window::Window;

/// One distribution of latencies: the whole measurement's and each
/// sub-window's.
struct Samples {
    total: LatencyHistogram,
    sum_ns: u64,
    batches: Vec<BatchLatency>,
}

impl Samples {
    fn new() -> Self {
        Self {
            total: LatencyHistogram::new(),
            sum_ns: 0,
            batches: (0..BATCHES).map(|_| BatchLatency::default()).collect(),
        }
    }

    fn touch(&mut self) {
        self.total.touch();
        self.batches.iter_mut().for_each(BatchLatency::touch);
    }

    fn record(&mut self, window: Window, started_ns: u64, latency_ns: u64) {
        self.total.record_ns(latency_ns);
        self.sum_ns += latency_ns;
        self.batches[batch_of(window, started_ns)].record_ns(latency_ns);
    }

    /// Adds them as `name` to the measurement's `tally` and to the
    /// sub-windows' `batches`.
    fn add_to(&self, name: &str, tally: &mut Tally, batches: &mut [Tally]) {
        *tally = std::mem::take(tally).with_samples(name, &self.total, self.sum_ns);
        for (batch, latency) in batches.iter_mut().zip(&self.batches) {
            *batch =
                std::mem::take(batch).with_samples(name, latency.histogram(), latency.sum_ns());
        }
    }
}

/// The instances of one operation.
pub struct OpRecord {
    name: &'static str,
    /// Its latencies, per operation.
    samples: Samples,
    /// Its overheads, for an operation that has one.
    overhead: Option<Samples>,
    failure: Option<String>,
}

impl OpRecord {
    /// None yet, for `op`; its storage is allocated and made resident
    /// here, so that recording neither allocates nor faults.
    pub fn new(op: &OpDef) -> Self {
        let mut record = Self {
            name: op.name(),
            samples: Samples::new(),
            overhead: op.less_overhead.then(Samples::new),
            failure: None,
        };
        record.samples.touch();
        record.overhead.iter_mut().for_each(Samples::touch);
        record
    }

    /// Records an instance of the measurement of `window` that started at
    /// `started_ns`.
    pub fn record(&mut self, window: Window, started_ns: u64, timed: Timed) {
        self.samples.record(window, started_ns, timed.per_op_ns());
        if let (Some(overheads), Some(overhead_ns)) = (&mut self.overhead, timed.overhead_ns) {
            overheads.record(window, started_ns, overhead_ns);
        }
    }

    /// Stops the operation for `reason`.
    pub fn fail(&mut self, reason: String) {
        self.failure = Some(reason);
    }

    /// Why it stopped, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The name of the count of its failure.
    fn failed_count(&self) -> String {
        format!("{}_failed", self.name)
    }
}

/// The name of the distribution of `op`'s overheads (`ctx0_overhead`).
pub fn overhead_samples(op: &str) -> String {
    format!("{op}_overhead")
}

/// The tallies of `records` for a measurement of `window` that lasted
/// `measured_ns`.
pub fn tallies(records: &[OpRecord], window: Window, measured_ns: u64) -> Measured {
    let mut tally = Tally::default().with_count(MEASURED_S, measured_ns as f64 / 1e9);
    let mut left_out = Vec::new();
    let seconds = batch_seconds(window);
    let mut batches = vec![Tally::default().with_count(MEASURED_S, seconds); BATCHES];
    for record in records {
        if let Some(reason) = &record.failure {
            tally = tally.with_count(&record.failed_count(), 1.0);
            left_out.push(format!("{}: {reason}", record.name));
            continue;
        }
        record.samples.add_to(record.name, &mut tally, &mut batches);
        if let Some(overhead) = &record.overhead {
            overhead.add_to(&overhead_samples(record.name), &mut tally, &mut batches);
        }
    }
    Measured {
        left_out,
        ..Measured::of(tally, batches)
    }
}

#[cfg(test)]
mod tests {
    use super::super::ops::OPS;
    use super::*;

    const MS: u64 = 1_000_000;
    const WINDOW: Window = Window::ms(1_000, 2_000);

    #[test]
    fn instances_count_in_their_sub_window_divided_by_what_they_hold() {
        let (fork, ctx) = (&OPS[0], &OPS[3]);
        let mut forks = OpRecord::new(fork);
        let mut switches = OpRecord::new(ctx);
        forks.record(WINDOW, WINDOW.start_ns, Timed::of(100_000, 1));
        forks.record(WINDOW, WINDOW.start_ns + 60 * MS, Timed::of(300_000, 1));
        let round_trip = Timed {
            elapsed_ns: 8_000,
            ops: 2,
            overhead_ns: Some(1_000),
        };
        switches.record(WINDOW, WINDOW.start_ns, round_trip);
        let measured = tallies(&[forks, switches], WINDOW, 1_000 * MS);
        let fork_samples = &measured.tally.samples["fork"];
        assert_eq!((fork_samples.count, fork_samples.sum_ns), (2, 400_000));
        assert!(!measured.tally.samples.contains_key("fork_overhead"));
        assert_eq!(measured.tally.samples["ctx0"].sum_ns, 4_000);
        assert_eq!(measured.tally.samples["ctx0_overhead"].sum_ns, 1_000);
        assert_eq!(measured.batches[0].samples["ctx0_overhead"].count, 1);
        assert_eq!(measured.batches.len(), BATCHES);
        assert_eq!(measured.batches[0].samples["fork"].count, 1);
        assert_eq!(measured.batches[1].samples["fork"].sum_ns, 300_000);
        assert_eq!(measured.batches[1].samples["ctx0"].count, 0);
        assert_eq!(measured.batches[1].count(MEASURED_S), 0.05);
        assert_eq!(measured.tally.count(MEASURED_S), 1.0);
    }

    #[test]
    fn a_failed_operation_has_no_samples_and_is_counted() {
        let mut udp = OpRecord::new(&OPS[7]);
        udp.record(WINDOW, WINDOW.start_ns, Timed::of(50_000, 1));
        udp.fail("no reply".into());
        assert_eq!(udp.failure(), Some("no reply"));
        let measured = tallies(&[udp, OpRecord::new(&OPS[8])], WINDOW, 1_000 * MS);
        assert!(!measured.tally.samples.contains_key("udp"));
        assert_eq!(measured.tally.count("udp_failed"), 1.0);
        assert_eq!(measured.left_out, ["udp: no reply"]);
        assert_eq!(measured.tally.samples["tcp"].count, 0);
        assert!(measured
            .batches
            .iter()
            .all(|b| !b.samples.contains_key("udp")));
    }
}
