//! `feelbench watch`: the machine as it is, with no load of feelbench's.
//! Canaries (`canary`) stand in for interactive programs; each event is
//! split as a run's probe splits it and counted (`metrics`); an event
//! later than its canary's threshold becomes an incident (`incident`),
//! made once the flight recorder (root: `system::sched_trace`, rolling)
//! and the telemetry sampler (`system::telemetry::window`, rolling) have
//! caught up with it, said in one line on stdout and kept when among the
//! worst, with a Perfetto trace of its window under `--trace` (`traces`).
//! `--listen` serves the metrics (`serve`). It runs for `-t` or
//! until SIGINT, SIGTERM or SIGHUP, then stops its threads, lets go of
//! delay accounting, writes `--output` and says a summary; the recorder's
//! perf events and tracefs mount belong to the process and go with it
//! however it ends.

mod canary;
mod choose;
mod flight;
pub mod history;
mod incident;
mod live;
mod metrics;
mod minutes;
mod rtapp;
mod serve;
mod summary;
mod traces;

pub use canary::{CanarySetting, DEFAULT as DEFAULT_CANARIES};
pub use choose::canary_settings;
pub use flight::FlightBudget;
pub use history::WatchHistorySettings;
pub use serve::Bound;

use crate::engine::interrupt::Interrupt;
use crate::exit::{ExitCode, UsageError};
use crate::figures::explain::Waits;
use crate::measure::calibrate::{self, MachineIdentity};
use crate::measure::clock::{now_ns, process_cpu_ns};
use crate::measure::late::EventSplit;
use crate::measure::tasks;
use crate::store::{Store, StoreLocation};
use crate::system::atomic::{remove_dead_temporaries, write_atomically};
use crate::system::cpulist::CpuList;
use crate::system::sched_trace::Trace;
use crate::system::telemetry::window::RollingSampler;
use crate::system::SystemInfo;
use anyhow::Context as _;
use canary::{Canaries, CanaryEvent};
use flight::Flight;
use incident::{Evidence, Incident};
use live::Live;
use metrics::Metrics;
use minutes::MinuteBook;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use summary::{print_summary, recorder_summary, summaries, WatchDocument};
use traces::IncidentTraces;

/// The schema of `--output`'s document.
pub const SCHEMA: &str = "feelbench.watch/1";
/// How often the watch takes in its canaries' events.
const TICK: Duration = Duration::from_millis(100);
/// Events a canary may queue between ticks before some are dropped.
const QUEUE: usize = 4_096;
/// How long after a late event ends its incident is made: the recorder
/// drains every 200 ms, the sampler samples every [`SAMPLE_EVERY`].
const SETTLE_NS: u64 = 600_000_000;
/// How often the machine's telemetry is sampled, and how many samples are
/// kept (15 s).
const SAMPLE_EVERY: Duration = Duration::from_millis(250);
const SAMPLES_KEPT: usize = 60;
/// Late events waiting for their incident, at most: in a storm of them the
/// latest-late are kept, the others only counted.
const PENDING_MAX: usize = 256;

/// `feelbench watch`'s settings.
#[derive(Debug)]
pub struct WatchSettings {
    pub canaries: Vec<CanarySetting>,
    /// How long; `None`: until stopped.
    pub duration_ns: Option<u64>,
    /// The CPUs the canaries are kept on.
    pub cpus: Option<CpuList>,
    /// Where to serve the metrics, already bound.
    pub listen: Option<Bound>,
    /// The worst incidents kept whole in `output`.
    pub keep: usize,
    pub output: Option<PathBuf>,
    /// `--trace DIR`: each of the `keep` worst incidents as a Perfetto
    /// trace there.
    pub trace: Option<PathBuf>,
    /// Culprit cgroups labelled in the metrics before `other`.
    pub top_cgroups: usize,
    /// `--no-recorder`.
    pub no_recorder: bool,
    /// `--recorder-budget`, `--recorder-cooldown`.
    pub recorder_budget: FlightBudget,
    /// `-l`: work loops per ms; else calibrated (or cached).
    pub loops_per_ms: Option<f64>,
    /// Where the minutes and their worst incidents go, if anywhere.
    pub store: Option<StoreLocation>,
}

/// Watches the machine `system` describes as `settings` say.
pub fn run(mut settings: WatchSettings, system: SystemInfo) -> anyhow::Result<ExitCode> {
    // First, so that a signal at any moment ends the watch as documented.
    let interrupt = Interrupt::install().context("installing signal handlers")?;
    // Checked next, so a bad directory fails before anything is said.
    let traces = settings
        .trace
        .as_deref()
        .map(IncidentTraces::open)
        .transpose()?;
    if let Some(path) = &settings.output {
        remove_killed_output(path);
    }
    let names: Vec<&str> = settings.canaries.iter().map(|c| c.name.as_str()).collect();
    let book = match &settings.store {
        Some(location) => {
            let store = Store::open(location)
                .map_err(|e| UsageError::new(format!("store {location}: {e}")))?;
            Some(MinuteBook::new(store, location, &system.hostname, &names))
        }
        None => None,
    };
    let root = nix::unistd::geteuid().is_root();
    let _delayacct = match root {
        true => {
            let switch = crate::system::delayacct::Switch::system();
            for line in crate::system::delayacct::clean_dead_holders(&switch) {
                say!("{line}");
            }
            Some(crate::commands::run::hold_delayacct()?)
        }
        false => None,
    };
    let loops_per_ms = settings.loops_per_ms.unwrap_or_else(|| {
        calibrate::obtain(
            None,
            false,
            calibrate::default_cache_path().as_deref(),
            &MachineIdentity::of(&system),
            || say!("watch: calibrating the frames' work (once per machine)"),
        )
        .0
    });
    let mut flight = Flight::start(
        settings.cpus.as_ref(),
        settings.recorder_budget,
        root,
        settings.no_recorder,
    );
    if let Some(notice) = &flight.notice {
        say!("watch: {notice}");
    }
    let sampler = RollingSampler::start(Path::new("/proc"), SAMPLE_EVERY, SAMPLES_KEPT, now_ns)
        .context("starting the telemetry sampler")?;
    let metrics = Arc::new(Mutex::new(Metrics::new(
        &names,
        settings.top_cgroups,
        flight.figures().state,
    )));
    let _server = match settings.listen.take() {
        Some(bound) => {
            let shared = metrics.clone();
            Some(
                bound
                    .serve(move || lock(&shared).openmetrics())
                    .context("starting the metrics server")?,
            )
        }
        None => None,
    };
    let started = std::time::SystemTime::now();
    let (sender, events) = sync_channel(QUEUE);
    let stop = Arc::new(AtomicBool::new(false));
    let canaries = Canaries::start(
        &settings.canaries,
        loops_per_ms,
        settings.cpus.as_ref(),
        &sender,
        &stop,
    )
    .context("starting the canaries")?;
    drop(sender);
    // The live view, on a terminal; plain lines elsewhere (a pipe, the
    // journal).
    let live = std::io::stdout()
        .is_terminal()
        .then(|| Live::start(settings.canaries.len()));
    let mut watch = Watch {
        book,
        live,
        traces,
        settings: &settings,
        canaries: &canaries,
        flight: &mut flight,
        sampler: &sampler,
        metrics: &metrics,
    };
    let worst = watch.until_stopped(&events, &interrupt);
    // The terminal is itself again before the summary is said.
    drop(watch);
    stop.store(true, Ordering::Relaxed);
    drop(canaries);
    let seconds = started.elapsed().map_or(0.0, |d| d.as_secs_f64());
    let counted = lock(&metrics);
    let document = WatchDocument {
        schema: SCHEMA,
        host: &system.hostname,
        started: humantime::format_rfc3339_seconds(started).to_string(),
        seconds,
        canaries: summaries(&settings, &counted),
        recorder: recorder_summary(&flight, &counted.recorder),
        culprits: counted.culprits(),
        unmade: counted.unmade,
        incidents: &worst,
    };
    drop(counted);
    if let Some(path) = &settings.output {
        let text = serde_json::to_string_pretty(&document)?;
        write_atomically(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    drop(flight);
    print_summary(&document);
    Ok(ExitCode::Success)
}

/// Removes the temporary file of `--output` a watch killed while writing
/// it left, saying so.
fn remove_killed_output(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let dir = match dir.as_os_str().is_empty() {
        true => Path::new("."),
        false => dir,
    };
    for left in remove_dead_temporaries(dir, |n| n == name) {
        say!(
            "watch: removed {}, left by a watch killed while writing {}",
            left.display(),
            path.display()
        );
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The running watch.
struct Watch<'a> {
    book: Option<MinuteBook>,
    live: Option<Live>,
    traces: Option<IncidentTraces>,
    settings: &'a WatchSettings,
    canaries: &'a Canaries,
    flight: &'a mut Flight,
    sampler: &'a RollingSampler,
    metrics: &'a Mutex<Metrics>,
}

impl Watch<'_> {
    /// Takes in the canaries' events every tick until `-t` is over or a
    /// signal came; returns the worst incidents, worst first.
    fn until_stopped(
        &mut self,
        events: &Receiver<CanaryEvent>,
        interrupt: &Interrupt,
    ) -> Vec<Incident> {
        let start_ns = now_ns();
        let end_ns = self.settings.duration_ns.map(|d| start_ns + d);
        let mut pending: Vec<CanaryEvent> = Vec::new();
        let mut worst: Vec<Incident> = Vec::new();
        let mut last_cost_ns = start_ns;
        loop {
            std::thread::sleep(TICK);
            let now = now_ns();
            let quit = match &mut self.live {
                Some(live) => live.tick(&lock(self.metrics)),
                None => false,
            };
            let over = quit || interrupt.check().is_err() || end_ns.is_some_and(|end| now >= end);
            self.take_in(events, &mut pending);
            // At the end, the late events of the last moments are made
            // incidents with what the recorder and sampler have so far.
            let ripe_before = if over {
                u64::MAX
            } else {
                now.saturating_sub(SETTLE_NS)
            };
            let (ripe, waiting): (Vec<_>, Vec<_>) = pending
                .drain(..)
                .partition(|e| e.split.ended_ns <= ripe_before);
            pending = waiting;
            let trace = self.trace_of(&ripe);
            // Each late thread's waits in the records (an rt-app task may
            // have several), found once for its incidents.
            let mut tids: Vec<i32> = ripe.iter().map(|e| e.tid).collect();
            tids.sort_unstable();
            tids.dedup();
            let waits: Vec<Waits> = match &trace {
                Some(trace) => tids
                    .iter()
                    .map(|tid| Waits::new(trace, std::slice::from_ref(tid)))
                    .collect(),
                None => Vec::new(),
            };
            for event in ripe {
                let of_thread = tids.binary_search(&event.tid).ok();
                let mut incident = self.incident(&event, of_thread.and_then(|at| waits.get(at)));
                if ranks_among(&worst, &incident, self.settings.keep) {
                    incident.trace = self.write_trace(&event, &incident, trace.as_ref());
                }
                match &mut self.live {
                    Some(live) => live.view().incident(&incident.line()),
                    None => say_line(&incident.line()),
                }
                lock(self.metrics).culprit(&incident);
                if let Some(book) = &mut self.book {
                    book.incident(&incident);
                }
                let dropped = keep_worst(&mut worst, incident, self.settings.keep);
                if let (Some(traces), Some(dropped)) = (&self.traces, dropped) {
                    traces.remove(&dropped);
                }
            }
            if over || now - last_cost_ns >= 1_000_000_000 {
                if let Some(line) = self.flight.check(now) {
                    self.note(&format!("watch: {line}"));
                }
                self.update_costs();
                last_cost_ns = now;
            }
            if let Some(book) = &mut self.book {
                match over {
                    true => book.flush(),
                    false => book.tick(),
                }
            }
            if over {
                return worst;
            }
        }
    }

    /// Counts the events queued, keeping the late ones for their incident.
    fn take_in(&mut self, events: &Receiver<CanaryEvent>, pending: &mut Vec<CanaryEvent>) {
        let mut metrics = lock(self.metrics);
        for event in events.try_iter() {
            let delay_ns = event.split.delay_ns();
            metrics.record(event.canary, delay_ns);
            if let Some(book) = &mut self.book {
                book.record(event.canary, delay_ns);
            }
            if let Some(live) = &mut self.live {
                live.view().record(event.canary, delay_ns);
            }
            if delay_ns <= self.settings.canaries[event.canary].threshold_ns {
                continue;
            }
            metrics.late(event.canary, event.split.cause());
            if let Some(book) = &mut self.book {
                book.late(event.canary);
            }
            if pending.len() < PENDING_MAX {
                pending.push(event);
                continue;
            }
            metrics.unmade += 1;
            let least = (0..pending.len()).min_by_key(|&i| pending[i].split.delay_ns());
            if let Some(least) = least.filter(|&i| pending[i].split.delay_ns() < delay_ns) {
                pending[least] = event;
            }
        }
    }

    /// The recorder's records over the late `events` and their traces'
    /// windows, when it runs; each trace written takes its span of them.
    fn trace_of(&self, events: &[CanaryEvent]) -> Option<Trace> {
        let recorder = self.flight.recorder()?;
        let from_ns = events.iter().map(|e| e.split.due_ns).min()?;
        let to_ns = events.iter().map(|e| e.split.ended_ns).max()?;
        Some(recorder.recent(from_ns, to_ns + traces::AFTER_NS))
    }

    /// The incident of the late `event`, with its canary's `waits` in the
    /// recorder's records.
    fn incident(&self, event: &CanaryEvent, waits: Option<&Waits>) -> Incident {
        let split: &EventSplit = &event.split;
        let samples = self.sampler.recent(split.due_ns, split.ended_ns);
        let setting = &self.settings.canaries[event.canary];
        let evidence = Evidence {
            waits,
            samples: &samples,
            proc_root: Path::new("/proc"),
        };
        Incident::of(&setting.name, setting.threshold_ns, split, &evidence)
    }

    /// Writes the trace of `incident`, made of the late `event`, with its
    /// span of the recorder's `trace`, when `--trace` asks for it; its path.
    fn write_trace(
        &mut self,
        event: &CanaryEvent,
        incident: &Incident,
        trace: Option<&Trace>,
    ) -> Option<String> {
        let traces = self.traces.as_mut()?;
        let split = &event.split;
        let from_ns = split.due_ns.saturating_sub(traces::BEFORE_NS);
        let to_ns = split.ended_ns + traces::AFTER_NS;
        let records = trace.map(|t| t.span(split.due_ns, to_ns));
        let samples = self.sampler.recent(from_ns, to_ns);
        let tid = event.tid.max(0) as u32;
        let pid = std::process::id();
        let task = tasks::read(Path::new("/proc"), tasks::Task { pid, tid });
        let scenario = traces::scenario(incident, tid, task, records, samples);
        traces.write(incident, &scenario)
    }

    /// Updates the recorder's, the canaries' and the process's figures.
    fn update_costs(&self) {
        let recorder = self.flight.figures();
        let mut metrics = lock(self.metrics);
        metrics.recorder = recorder;
        for (canary, counts) in metrics.canaries.iter_mut().enumerate() {
            counts.dropped = self.canaries.dropped(canary);
        }
        metrics.cpu_s = process_cpu_ns() as f64 / 1e9;
    }

    /// Says `line`, in the live view when there is one.
    fn note(&mut self, line: &str) {
        match &mut self.live {
            Some(live) => live.view().incident(line),
            None => say!("{line}"),
        }
    }
}

/// Keeps `incident` among the `keep` worst (longest late) of `worst`;
/// the one that is not kept, it or the one it pushed out, if any.
fn keep_worst(worst: &mut Vec<Incident>, incident: Incident, keep: usize) -> Option<Incident> {
    if !ranks_among(worst, &incident, keep) {
        return Some(incident);
    }
    let at = worst.partition_point(|w| w.latency_ms >= incident.latency_ms);
    worst.insert(at, incident);
    (worst.len() > keep).then(|| worst.pop()).flatten()
}

/// Whether `incident` would be among the `keep` worst of `worst`.
fn ranks_among(worst: &[Incident], incident: &Incident, keep: usize) -> bool {
    worst.partition_point(|w| w.latency_ms >= incident.latency_ms) < keep
}

/// Says `line` on stdout; a closed stdout is no reason to stop watching.
fn say_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incident(latency_ms: f64) -> Incident {
        Incident {
            canary: "timer".into(),
            at: String::new(),
            latency_ms,
            threshold_ms: 2.0,
            cause: crate::measure::late::Cause::Timer,
            split: EventSplit::default(),
            recorded: false,
            ran_instead: Vec::new(),
            context: None,
            trace: None,
        }
    }

    #[test]
    fn the_worst_incidents_are_kept_worst_first() {
        let mut worst = Vec::new();
        let mut dropped = Vec::new();
        for ms in [3.0, 9.0, 1.0, 5.0, 7.0] {
            dropped.extend(keep_worst(&mut worst, incident(ms), 3).map(|i| i.latency_ms));
        }
        let kept: Vec<f64> = worst.iter().map(|i| i.latency_ms).collect();
        assert_eq!(kept, [9.0, 7.0, 5.0]);
        // Each one not kept is handed back once: its trace is removed.
        assert_eq!(dropped, [1.0, 3.0]);
    }
}
