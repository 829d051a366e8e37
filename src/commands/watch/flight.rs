//! The watch's flight recorder (root: `system::sched_trace`, rolling) on
//! the canaries' CPUs (or all), within its budget of a CPU. A recorder
//! that stopped itself over its budget is started again after a cool-down:
//! the first one long (60 s by default), each later one twice the last,
//! up to ten times the first (10 min), so a machine whose switching calms
//! down gets its recorder back while one that stays busy pays for a try
//! only now and then. Each stop and each start again is said once, counted
//! in the metrics and in the summary.

use super::metrics::{RecorderFigures, RecorderState};
use crate::system::cpulist::{self, CpuList};
use crate::system::sched_trace::{self, Budget, Recorder, RecorderCounts};
use std::path::Path;
use std::time::Duration;

/// How much of the recorder's records are kept.
const KEEPS: Duration = Duration::from_secs(10);
/// How long the recorder runs before its cost is judged, at most (a burst
/// of switches at its start, read in its first drains, would stop it early);
/// a shorter cool-down shortens it too.
const GRACE: Duration = Duration::from_secs(10);
/// The longest cool-down, in first cool-downs.
const COOLDOWN_GROWS_TO: u32 = 10;

/// What the recorder may cost and how long it waits after stopping itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlightBudget {
    /// The share of one CPU it may cost, 0–1.
    pub cpu_share: f64,
    /// The first cool-down after it stopped itself.
    pub cooldown: Duration,
}

/// The cool-downs of a recorder that stops itself: when it starts again.
#[derive(Debug, Clone, PartialEq)]
struct Cooldowns {
    first: Duration,
    next: Duration,
    /// When the stopped recorder starts again (`CLOCK_MONOTONIC`, ns).
    again_at_ns: Option<u64>,
}

impl Cooldowns {
    fn new(first: Duration) -> Self {
        Self {
            first,
            next: first,
            again_at_ns: None,
        }
    }

    /// Notes a stop at `now_ns`; the cool-down it waits, each twice the
    /// last, up to [`COOLDOWN_GROWS_TO`] first ones.
    fn stopped(&mut self, now_ns: u64) -> Duration {
        let wait = self.next;
        self.again_at_ns = Some(now_ns + wait.as_nanos() as u64);
        self.next = (wait * 2).min(self.first * COOLDOWN_GROWS_TO);
        wait
    }

    /// Whether a stopped recorder is due to start again at `now_ns`.
    fn due(&self, now_ns: u64) -> bool {
        self.again_at_ns.is_some_and(|at| now_ns >= at)
    }
}

/// The flight recorder, when it runs, and what it did so far.
pub struct Flight {
    recorder: Option<Recorder>,
    /// Why there is no recorder, when there is none.
    pub notice: Option<String>,
    cpus: Vec<u32>,
    budget: Budget,
    cooldowns: Cooldowns,
    /// What the recorders that stopped did, the one stopped now too.
    past: RecorderCounts,
    /// Why the last one stopped itself.
    pub stopped: Option<String>,
    pub stops: u64,
    pub restarts: u64,
}

impl Flight {
    /// Starts the rolling recorder on `cpus` (or all online) within
    /// `budget`, when `root` and not `off` (`--no-recorder`); else says
    /// why not in its notice.
    pub fn start(cpus: Option<&CpuList>, budget: FlightBudget, root: bool, off: bool) -> Self {
        let online = cpulist::online(Path::new("/sys")).ok();
        let cpus: Vec<u32> = cpus
            .or(online.as_ref())
            .map(|c| c.cpus().map(|cpu| cpu as u32).collect())
            .unwrap_or_default();
        let mut flight = Self {
            recorder: None,
            notice: None,
            budget: Budget {
                kernel_ns_per_record: 0.0,
                cpu_share: budget.cpu_share,
                grace: GRACE.min(budget.cooldown),
            },
            cpus,
            cooldowns: Cooldowns::new(budget.cooldown),
            past: RecorderCounts::default(),
            stopped: None,
            stops: 0,
            restarts: 0,
        };
        let notice = match (off, root) {
            (true, _) => "--no-recorder: incidents do not name the tasks that ran instead",
            (false, false) => "not root: no flight recorder, so incidents do not name the tasks that ran instead (their cause and context are still said)",
            (false, true) => return flight.started(),
        };
        flight.notice = Some(notice.to_string());
        flight
    }

    /// This flight with its recorder started, or the notice why not.
    fn started(mut self) -> Self {
        let first = self.cpus.first().copied().unwrap_or(0);
        let started = sched_trace::event_cost(first).and_then(|(kernel, _)| {
            self.budget.kernel_ns_per_record = kernel;
            Recorder::start_rolling(&self.cpus, self.budget, KEEPS)
        });
        match started {
            Ok(recorder) => self.recorder = Some(recorder),
            Err(e) => self.notice = Some(format!("no flight recorder: {e}")),
        }
        self
    }

    /// The recorder, running or stopped with its last records.
    pub fn recorder(&self) -> Option<&Recorder> {
        self.recorder.as_ref()
    }

    /// Notes a recorder that stopped itself at `now_ns` and starts a
    /// stopped one again once its cool-down is over; the line to say when
    /// either happened.
    pub fn check(&mut self, now_ns: u64) -> Option<String> {
        let recorder = self.recorder.as_ref()?;
        if self.cooldowns.due(now_ns) {
            return Some(self.start_again());
        }
        if self.cooldowns.again_at_ns.is_some() {
            return None;
        }
        let counts = recorder.counts(self.budget.kernel_ns_per_record);
        let why = counts.stopped.clone()?;
        add(&mut self.past, &counts);
        self.stops += 1;
        let wait = self.cooldowns.stopped(now_ns);
        let line = format!(
            "the flight recorder stopped itself: {why}; it starts again in {} s",
            wait.as_secs_f64()
        );
        self.stopped = Some(why);
        Some(line)
    }

    /// Starts the recorder again after its cool-down; what to say.
    fn start_again(&mut self) -> String {
        self.cooldowns.again_at_ns = None;
        if let Some(stopped) = self.recorder.take() {
            drop(stopped.stop());
        }
        match Recorder::start_rolling(&self.cpus, self.budget, KEEPS) {
            Ok(recorder) => {
                self.recorder = Some(recorder);
                self.restarts += 1;
                format!(
                    "the flight recorder started again after its cool-down (restart {})",
                    self.restarts
                )
            }
            Err(e) => {
                self.notice = Some(format!("no flight recorder: {e}"));
                format!("the flight recorder could not start again: {e}")
            }
        }
    }

    /// Its figures for the metrics: every recorder's so far.
    pub fn figures(&self) -> RecorderFigures {
        let Some(recorder) = &self.recorder else {
            return RecorderFigures {
                state: RecorderState::Off,
                restarts: self.restarts,
                ..figures(&self.past)
            };
        };
        let mut total = self.past.clone();
        let state = match self.cooldowns.again_at_ns {
            Some(_) => RecorderState::Stopped,
            None => {
                add(
                    &mut total,
                    &recorder.counts(self.budget.kernel_ns_per_record),
                );
                RecorderState::Recording
            }
        };
        RecorderFigures {
            state,
            restarts: self.restarts,
            ..figures(&total)
        }
    }
}

/// Adds `counts` of a recorder to `total`.
fn add(total: &mut RecorderCounts, counts: &RecorderCounts) {
    total.records += counts.records;
    total.lost += counts.lost;
    total.cost_ns += counts.cost_ns;
    total.elapsed_ns += counts.elapsed_ns;
}

/// The figures of the recorders' `total`, recording.
fn figures(total: &RecorderCounts) -> RecorderFigures {
    RecorderFigures {
        state: RecorderState::Recording,
        cpu_ratio: total.cost_ns / total.elapsed_ns.max(1) as f64,
        records: total.records,
        lost: total.lost,
        restarts: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn each_cooldown_is_twice_the_last_up_to_ten_times_the_first() {
        let mut cooldowns = Cooldowns::new(Duration::from_secs(60));
        assert!(!cooldowns.due(0));
        let waits: Vec<u64> = (0..6)
            .map(|_| cooldowns.stopped(1_000 * S).as_secs())
            .collect();
        assert_eq!(waits, [60, 120, 240, 480, 600, 600]);
        assert!(!cooldowns.due(1_599 * S));
        assert!(cooldowns.due(1_600 * S));
    }

    #[test]
    fn without_root_or_with_no_recorder_it_never_runs_and_says_why() {
        let budget = FlightBudget {
            cpu_share: 0.01,
            cooldown: Duration::from_secs(60),
        };
        let mut user = Flight::start(None, budget, false, false);
        assert!(user.notice.as_deref().unwrap().starts_with("not root"));
        assert_eq!(user.check(u64::MAX), None);
        assert_eq!(user.figures().state, RecorderState::Off);
        let off = Flight::start(None, budget, true, true);
        assert!(off.notice.as_deref().unwrap().starts_with("--no-recorder"));
        assert!(off.recorder().is_none());
    }

    #[test]
    fn the_figures_add_up_every_recorder_so_far() {
        let mut total = RecorderCounts::default();
        let one = RecorderCounts {
            records: 10,
            lost: 1,
            cost_ns: 1_000.0,
            elapsed_ns: 100_000,
            stopped: None,
        };
        add(&mut total, &one);
        add(&mut total, &one);
        let f = figures(&total);
        assert_eq!((f.records, f.lost), (20, 2));
        assert_eq!(f.cpu_ratio, 0.01);
    }
}
