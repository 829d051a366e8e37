//! Counting a load's work inside the measurement window: the first
//! observation at or after the window's start and the first at or after its
//! end bound the count, so the rate covers exactly the time observed.

use crate::probe::Window;

/// One look at a load's running totals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    /// When (`CLOCK_MONOTONIC`).
    pub at_ns: u64,
    /// Units of work done since the load started.
    pub units: f64,
    /// Process CPU time since the load started.
    pub cpu_ns: u64,
}

/// Work between the window's bounding observations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowTotals {
    /// Units of work done between the two observations.
    pub units: f64,
    /// Wall time between them.
    pub elapsed_ns: u64,
    /// Process CPU time between them.
    pub cpu_ns: u64,
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

    /// Whether the meter still wants observations at `now_ns` (it does not
    /// before it knows its window or once the window has closed).
    pub fn wants(&self, now_ns: u64) -> bool {
        !self.closed && self.window.is_some_and(|w| now_ns >= w.start_ns)
    }

    /// Takes an observation (call only when [`WindowMeter::wants`] said so).
    pub fn observe(&mut self, observation: Observation) {
        let Some(window) = self.window else { return };
        if self.closed || observation.at_ns < window.start_ns {
            return;
        }
        if self.first.is_none() {
            // A first look after the window closed would count work done
            // outside it: no measurement at all is the honest answer.
            self.closed = observation.at_ns >= window.end_ns;
            if !self.closed {
                self.first = Some(observation);
            }
        } else {
            self.last = Some(observation);
            self.closed = observation.at_ns >= window.end_ns;
        }
    }

    /// The work between the first and last observations; `None` when the
    /// window was not observed twice.
    pub fn totals(&self) -> Option<WindowTotals> {
        let (first, last) = (self.first?, self.last?);
        Some(WindowTotals {
            units: last.units - first.units,
            elapsed_ns: last.at_ns - first.at_ns,
            cpu_ns: last.cpu_ns.saturating_sub(first.cpu_ns),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(at_ns: u64, units: f64) -> Observation {
        Observation {
            at_ns,
            units,
            cpu_ns: at_ns / 2,
        }
    }

    #[test]
    fn counts_only_inside_the_window() {
        let mut meter = WindowMeter::default();
        assert!(!meter.wants(5));
        meter.set_window(Window {
            start_ns: 100,
            end_ns: 200,
        });
        assert!(!meter.wants(50));
        for t in (0..=300).step_by(10) {
            if meter.wants(t) {
                meter.observe(obs(t, t as f64));
            }
        }
        let totals = meter.totals().unwrap();
        assert_eq!(totals.elapsed_ns, 100);
        assert_eq!(totals.units, 100.0);
        assert_eq!(totals.cpu_ns, 50);
        assert!(!meter.wants(250));
    }

    #[test]
    fn stopped_before_the_end_keeps_what_was_seen() {
        let mut meter = WindowMeter::default();
        meter.set_window(Window {
            start_ns: 100,
            end_ns: 200,
        });
        meter.observe(obs(105, 1.0));
        meter.observe(obs(150, 6.0));
        assert_eq!(meter.totals().unwrap().units, 5.0);
    }

    #[test]
    fn a_first_look_after_the_window_closed_counts_nothing() {
        let mut meter = WindowMeter::default();
        meter.set_window(Window {
            start_ns: 100,
            end_ns: 200,
        });
        meter.observe(obs(250, 1.0));
        meter.observe(obs(300, 9.0));
        assert!(meter.totals().is_none());
        assert!(!meter.wants(400));
    }

    #[test]
    fn a_single_observation_is_no_measurement() {
        let mut meter = WindowMeter::default();
        meter.set_window(Window {
            start_ns: 0,
            end_ns: 10,
        });
        meter.observe(obs(1, 1.0));
        assert!(meter.totals().is_none());
    }
}
