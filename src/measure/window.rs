//! The measurement window, and counting a load's work inside it: the first
//! look at or after the window's start and the first at or after its end
//! bound the count, so rates cover exactly the time observed. Costly
//! counters (CPU time, I/O bytes) are read only at those two moments. The
//! work in between is also counted per sub-window (`load_batches`), so a
//! load that stopped part-way shows.

use super::load_batches::LoadBatches;
use serde::{Deserialize, Serialize};

/// The measurement window, in absolute `CLOCK_MONOTONIC` nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// First intended start (`CLOCK_MONOTONIC` ns).
    pub start_ns: u64,
    /// No period starts at or after this time.
    pub end_ns: u64,
}

#[cfg(test)]
impl Window {
    /// The window from `start_ms` to `end_ms`, for tests with scripted times.
    pub const fn ms(start_ms: u64, end_ms: u64) -> Self {
        Self {
            start_ns: start_ms * 1_000_000,
            end_ns: end_ms * 1_000_000,
        }
    }
}

/// CPU time used so far, and whether some of it may be missing from it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// The CPU time counted.
    pub ns: u64,
    /// Whether part of the CPU time could not be counted (the figure is
    /// then a lower bound).
    pub lower_bound: bool,
}

impl CpuTime {
    /// CPU time known to be all of it.
    pub fn exact(ns: u64) -> Self {
        Self {
            ns,
            lower_bound: false,
        }
    }

    /// This and `more` together: a lower bound if either is.
    pub fn plus(self, more: CpuTime) -> Self {
        Self {
            ns: self.ns + more.ns,
            lower_bound: self.lower_bound || more.lower_bound,
        }
    }
}

/// Running totals of a load process that cost a system call to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// CPU time of the load: the process's, its reaped children's and what
    /// the load adds (helpers, a command's processes).
    pub cpu: CpuTime,
    /// Bytes it caused to be read from storage (`None`: not known).
    pub read_bytes: Option<u64>,
    /// Bytes it caused to be written to storage (`None`: not known).
    pub write_bytes: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Observation {
    at_ns: u64,
    units: f64,
    counters: Counters,
}

/// Work between the window's bounding observations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowTotals {
    /// Units of work done between the two observations.
    pub units: f64,
    /// Wall time between them.
    pub elapsed_ns: u64,
    /// Growth of each counter between them (CPU time that went backwards
    /// gives 0; bytes unknown at either end, or that went backwards, give
    /// `None`).
    pub counters: Counters,
}

/// Tracks the observations that bound the measurement window, and the
/// work of each step between them by sub-window.
#[derive(Debug, Clone, Default)]
pub struct WindowMeter {
    window: Option<Window>,
    first: Option<Observation>,
    last: Option<Observation>,
    closed: bool,
    /// The time and units of the previous look, where the step since began.
    previous: Option<(u64, f64)>,
    /// The work by sub-window, from the first look inside the window on.
    batches: Option<LoadBatches>,
}

impl WindowMeter {
    /// Sets the window (once known); later calls are ignored.
    pub fn set_window(&mut self, window: Window) {
        self.window.get_or_insert(window);
    }

    /// Looks at the load at `at_ns`, having done `units` so far; `counters`
    /// is called only when this look opens or closes the window.
    pub fn observe(&mut self, at_ns: u64, units: f64, counters: impl FnOnce() -> Counters) {
        let step = self.previous.replace((at_ns, units));
        let Some(window) = self.window else { return };
        if self.closed || at_ns < window.start_ns {
            return;
        }
        if self.first.is_none() {
            // A first look after the window closed would count work done
            // outside it: no measurement at all is the honest answer.
            self.closed = at_ns >= window.end_ns;
            if !self.closed {
                self.first = Some(Observation {
                    at_ns,
                    units,
                    counters: counters(),
                });
                self.batches = Some(LoadBatches::new(window));
            }
        } else {
            self.count_step(step, at_ns, units);
            if at_ns >= window.end_ns {
                self.close(at_ns, units, counters());
            }
        }
    }

    /// Counts the step from the look `step` to this one by sub-window.
    fn count_step(&mut self, step: Option<(u64, f64)>, at_ns: u64, units: f64) {
        if let (Some(batches), Some((from_ns, before))) = (&mut self.batches, step) {
            batches.add(from_ns, at_ns, units - before);
        }
    }

    /// Whether work done now counts: the window's first look happened and
    /// its last has not (the work of the step whose look closes the window
    /// counts too).
    pub fn counting(&self) -> bool {
        self.first.is_some() && !self.closed
    }

    /// The load stops at `at_ns`: closes the window if it is still open.
    pub fn finish(&mut self, at_ns: u64, units: f64, counters: impl FnOnce() -> Counters) {
        let step = self.previous.replace((at_ns, units));
        if self.first.is_some() && !self.closed {
            self.count_step(step, at_ns, units);
            self.close(at_ns, units, counters());
        }
    }

    fn close(&mut self, at_ns: u64, units: f64, counters: Counters) {
        self.last = Some(Observation {
            at_ns,
            units,
            counters,
        });
        self.closed = true;
    }

    /// The units done in each sub-window of the window (`None` for one no
    /// step covered); empty when the window was not observed.
    pub fn batch_units(&self) -> Vec<Option<f64>> {
        self.batches
            .as_ref()
            .map_or_else(Vec::new, LoadBatches::units)
    }

    /// The work between the first and last observations; `None` when the
    /// window was not observed twice.
    pub fn totals(&self) -> Option<WindowTotals> {
        let (first, last) = (self.first?, self.last?);
        let (a, b) = (first.counters, last.counters);
        Some(WindowTotals {
            units: last.units - first.units,
            elapsed_ns: last.at_ns - first.at_ns,
            counters: Counters {
                cpu: CpuTime {
                    ns: b.cpu.ns.saturating_sub(a.cpu.ns),
                    lower_bound: a.cpu.lower_bound || b.cpu.lower_bound,
                },
                read_bytes: growth(a.read_bytes, b.read_bytes),
                write_bytes: growth(a.write_bytes, b.write_bytes),
            },
        })
    }
}

/// How much a counter grew from `before` to `after`; `None` when either is
/// unknown or it went backwards.
fn growth(before: Option<u64>, after: Option<u64>) -> Option<u64> {
    after?.checked_sub(before?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters_at(at_ns: u64) -> impl FnOnce() -> Counters {
        move || Counters {
            cpu: CpuTime::exact(at_ns / 2),
            read_bytes: Some(at_ns * 10),
            write_bytes: Some(0),
        }
    }

    fn meter() -> WindowMeter {
        let mut meter = WindowMeter::default();
        meter.set_window(Window {
            start_ns: 100,
            end_ns: 200,
        });
        meter
    }

    #[test]
    fn counts_only_inside_the_window_and_reads_counters_twice() {
        let mut meter = WindowMeter::default();
        meter.observe(5, 0.0, || panic!("no window yet"));
        meter.set_window(Window {
            start_ns: 100,
            end_ns: 200,
        });
        let mut reads = 0;
        for t in (0..=300).step_by(10) {
            meter.observe(t, t as f64, || {
                reads += 1;
                counters_at(t)()
            });
        }
        assert_eq!(reads, 2);
        let totals = meter.totals().unwrap();
        assert_eq!(totals.elapsed_ns, 100);
        assert_eq!(totals.units, 100.0);
        assert_eq!(totals.counters.cpu, CpuTime::exact(50));
        assert_eq!(totals.counters.read_bytes, Some(1000));
    }

    #[test]
    fn work_counts_between_the_first_look_and_the_last() {
        let mut meter = meter();
        assert!(!meter.counting());
        meter.observe(105, 1.0, counters_at(105));
        assert!(meter.counting());
        meter.observe(205, 2.0, counters_at(205));
        assert!(!meter.counting());
    }

    #[test]
    fn the_steps_inside_the_window_are_counted_by_sub_window() {
        // 100 ns: sub-windows of 5 ns. Steps of 10 ns doing 2 units each.
        let mut steady = meter();
        for t in (0..=300).step_by(10) {
            steady.observe(t, t as f64 / 5.0, counters_at(t));
        }
        assert_eq!(steady.batch_units(), vec![Some(1.0); 20]);
        // A load that stops looking halfway leaves the rest unobserved, and
        // one that did nothing for a while shows it.
        let mut meter = meter();
        meter.observe(100, 0.0, counters_at(100));
        meter.observe(130, 6.0, counters_at(130));
        meter.observe(150, 6.0, counters_at(150));
        meter.finish(160, 6.0, counters_at(160));
        let units = meter.batch_units();
        assert_eq!(&units[..6], [Some(1.0); 6]);
        assert_eq!(&units[6..12], [Some(0.0); 6]);
        assert_eq!(&units[12..], [None; 8]);
        assert!(WindowMeter::default().batch_units().is_empty());
    }

    #[test]
    fn stopped_before_the_end_keeps_what_was_seen() {
        let mut meter = meter();
        meter.observe(105, 1.0, counters_at(105));
        meter.observe(150, 6.0, || panic!("not an edge"));
        meter.finish(160, 7.0, counters_at(160));
        assert_eq!(meter.totals().unwrap().units, 6.0);
        assert_eq!(meter.totals().unwrap().elapsed_ns, 55);
    }

    #[test]
    fn a_first_look_after_the_window_closed_counts_nothing() {
        let mut meter = meter();
        meter.observe(250, 1.0, counters_at(250));
        meter.observe(300, 9.0, counters_at(300));
        meter.finish(310, 9.0, counters_at(310));
        assert!(meter.totals().is_none());
    }

    #[test]
    fn never_seeing_the_window_is_no_measurement() {
        let mut meter = meter();
        meter.finish(50, 1.0, counters_at(50));
        assert!(meter.totals().is_none());
    }

    #[test]
    fn bytes_that_went_backwards_or_are_unknown_are_missing_not_zero() {
        let mut meter = meter();
        meter.observe(100, 0.0, || Counters {
            cpu: CpuTime::exact(10),
            read_bytes: Some(500),
            write_bytes: None,
        });
        meter.observe(200, 1.0, || Counters {
            cpu: CpuTime::exact(20),
            read_bytes: Some(100),
            write_bytes: Some(7),
        });
        let counters = meter.totals().unwrap().counters;
        assert_eq!((counters.read_bytes, counters.write_bytes), (None, None));
        assert_eq!(counters.cpu, CpuTime::exact(10));
    }

    #[test]
    fn cpu_time_is_a_lower_bound_when_either_end_is() {
        let mut meter = meter();
        meter.observe(100, 0.0, counters_at(100));
        meter.observe(200, 1.0, || Counters {
            cpu: CpuTime {
                ns: 80,
                lower_bound: true,
            },
            ..counters_at(200)()
        });
        let cpu = meter.totals().unwrap().counters.cpu;
        assert_eq!((cpu.ns, cpu.lower_bound), (30, true));
        assert!(CpuTime::exact(1).plus(cpu).lower_bound);
        assert!(!CpuTime::exact(1).plus(CpuTime::exact(2)).lower_bound);
    }
}
