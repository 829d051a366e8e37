//! The measurement window, and counting a load's work inside it: the first
//! look at or after the window's start and the first at or after its end
//! bound the count, so rates cover exactly the time observed. Costly
//! counters (CPU time, I/O bytes) are read only at those two moments.

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

/// Running totals of a load process that cost a system call to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// CPU time of the process and of the children it reaped.
    pub cpu_ns: u64,
    /// Bytes it caused to be read from storage.
    pub read_bytes: u64,
    /// Bytes it caused to be written to storage.
    pub write_bytes: u64,
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
    /// Growth of each counter between them (a counter that went backwards gives 0).
    pub counters: Counters,
}

/// Tracks the observations that bound the measurement window.
#[derive(Debug, Clone, Default)]
pub struct WindowMeter {
    window: Option<Window>,
    first: Option<Observation>,
    last: Option<Observation>,
    closed: bool,
}

impl WindowMeter {
    /// Sets the window (once known); later calls are ignored.
    pub fn set_window(&mut self, window: Window) {
        self.window.get_or_insert(window);
    }

    /// Looks at the load at `at_ns`, having done `units` so far; `counters`
    /// is called only when this look opens or closes the window.
    pub fn observe(&mut self, at_ns: u64, units: f64, counters: impl FnOnce() -> Counters) {
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
            }
        } else if at_ns >= window.end_ns {
            self.close(at_ns, units, counters());
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
        if self.first.is_some() && !self.closed {
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

    /// The work between the first and last observations; `None` when the
    /// window was not observed twice.
    pub fn totals(&self) -> Option<WindowTotals> {
        let (first, last) = (self.first?, self.last?);
        let (a, b) = (first.counters, last.counters);
        Some(WindowTotals {
            units: last.units - first.units,
            elapsed_ns: last.at_ns - first.at_ns,
            counters: Counters {
                cpu_ns: b.cpu_ns.saturating_sub(a.cpu_ns),
                read_bytes: b.read_bytes.saturating_sub(a.read_bytes),
                write_bytes: b.write_bytes.saturating_sub(a.write_bytes),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters_at(at_ns: u64) -> impl FnOnce() -> Counters {
        move || Counters {
            cpu_ns: at_ns / 2,
            read_bytes: at_ns * 10,
            write_bytes: 0,
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
        assert_eq!(totals.counters.cpu_ns, 50);
        assert_eq!(totals.counters.read_bytes, 1000);
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
    fn counters_that_went_backwards_give_zero() {
        let mut meter = meter();
        meter.observe(100, 0.0, || Counters {
            cpu_ns: 10,
            read_bytes: 500,
            write_bytes: 0,
        });
        meter.observe(200, 1.0, || Counters {
            cpu_ns: 20,
            read_bytes: 100,
            write_bytes: 0,
        });
        assert_eq!(meter.totals().unwrap().counters.read_bytes, 0);
    }
}
