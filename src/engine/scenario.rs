//! Running one scenario, one phase at a time: start and verify the loads →
//! warm up → start the probe and pass its window to the loads → wait for the
//! probe's figures → stop the loads and collect their work → reap everything.
//! Any failure fails the scenario with its reason; a signal interrupts it.

use super::context;
use super::explain;
use super::interrupt::{Interrupt, Interrupted};
use super::protocol::{window_command, LoadSample, WorkerMessage, WorkerSpec};
use super::supervise::{EventKind, WorkerGroup};
use super::workspace::RUN_MARKER_VAR;
use crate::document::schema::{LoadTask, LoadWork, Measurement, ScenarioResult, ScenarioStatus};
use crate::figures::ProbeResult;
use crate::load::{LoadDef, LoadMix, LoadPart};
use crate::measure::batches::{batch_seconds, BATCHES};
use crate::measure::clock::now_ns;
use crate::measure::late::log_capacity;
use crate::measure::load_batches::{first_idle_stretch, IDLE_BATCHES};
use crate::measure::requests::RequestLatencies;
use crate::measure::sched::{MemoryPolicy, SchedRequest};
use crate::measure::window::Window;
use crate::probe::ProbeDef;
use crate::sim::WorkParams;
use crate::system::cpulist::CpuList;
use crate::system::telemetry::{Sampler, ScenarioTelemetry};
use crate::trace::ScenarioTrace;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a worker may take to get ready.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long past its window's end a probe may take to report.
const PROBE_GRACE: Duration = Duration::from_secs(10);
/// How long loads may take to report after being told to stop.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);
/// How often waiting loops look at the interrupt flag and call the tick:
/// rarely, since every wake-up of the orchestrator competes with the probe.
const POLL: Duration = Duration::from_millis(500);

/// The settings every scenario of a run shares.
#[derive(Debug, Clone)]
pub struct ScenarioSettings {
    /// Marks the run's processes (see `workspace::RUN_MARKER_VAR`).
    pub marker: String,
    pub duration_ns: u64,
    pub warmup_ns: u64,
    pub params: WorkParams,
    pub probe_sched: SchedRequest,
    pub load_nice: i32,
    /// The `cgroup.procs` files of the cgroups the load workers join
    /// (`--mem-limit`, `--load-cpu-weight`). The probe stays outside: it is
    /// what is measured.
    pub load_cgroup_procs: Vec<PathBuf>,
    /// The `cgroup.procs` file of the loads' memory cgroup (`--mem-limit`),
    /// which a probe that shares its memory joins: the memory pressure of
    /// the loads is then its own.
    pub memory_cgroup_procs: Option<PathBuf>,
    /// The CPUs the probe runs on (`--probe-cpus`).
    pub probe_cpus: Option<CpuList>,
    /// Whether the probe worker starts a session of its own
    /// (`--probe-session`).
    pub probe_session: bool,
    /// The CPUs the loads run on (`--load-cpus`).
    pub load_cpus: Option<CpuList>,
    /// `MAJ:MIN` of the work directory's block device, whose own counters
    /// telemetry samples.
    pub workdir_device: Option<String>,
    /// Name the tasks that ran while the probe waited (`--explain`).
    pub explain: bool,
    /// Keep what a Perfetto trace shows of the scenario (`--trace`): the
    /// probe logs every event, and the window's samples and scheduler
    /// records are kept.
    pub trace: bool,
}

/// One probe under one load mix.
#[derive(Clone)]
pub struct Scenario {
    pub probe: &'static ProbeDef,
    pub load: LoadMix,
    /// Times the run measures it, in rounds (`--repeat`, or its suite
    /// group's `repeat` when larger; 1 with `--precision`, which decides
    /// as it goes).
    pub repeats: u32,
}

impl std::fmt::Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} under {}", self.probe.name, self.load.name)
    }
}

enum Stop {
    Interrupted,
    Failed(String),
}

impl From<Interrupted> for Stop {
    fn from(_: Interrupted) -> Self {
        Stop::Interrupted
    }
}

/// Runs `scenario`, its probe and loads keeping their files in `dir`; a failure is a
/// result with status `failed`, an interruption is an error. `tick` is
/// called about every 500 ms.
pub fn run_scenario(
    scenario: &Scenario,
    settings: &ScenarioSettings,
    dir: &Path,
    interrupt: &Interrupt,
    tick: &mut dyn FnMut(),
) -> Result<(ScenarioResult, Option<ScenarioTrace>), Interrupted> {
    let mut group = WorkerGroup::new(&settings.marker);
    let mut waiter = Waiter { interrupt, tick };
    let outcome = measure(scenario, settings, dir, &mut group, &mut waiter);
    group.stop_all();
    // What the loads' processes, killed with the group, could not remove.
    crate::load::remove_leftovers();
    let (status, error, result, load_work, telemetry, trace) = match outcome {
        Ok(measured) => (
            ScenarioStatus::Ok,
            None,
            Some(measured.result),
            measured.load_work,
            Some(measured.telemetry),
            measured.trace,
        ),
        Err(Stop::Failed(reason)) => (
            ScenarioStatus::Failed,
            Some(reason),
            None,
            Vec::new(),
            None,
            None,
        ),
        Err(Stop::Interrupted) => return Err(Interrupted),
    };
    let measurement = Measurement {
        status,
        error,
        result,
        load_work,
        telemetry,
    };
    let result = ScenarioResult::single(
        scenario.probe.name.to_string(),
        scenario.load.name.clone(),
        measurement,
        &scenario.probe.sheet_for(&settings.params),
    );
    Ok((result, trace))
}

/// What a scenario that ran to the end yields.
struct Measured {
    result: ProbeResult,
    load_work: Vec<LoadWork>,
    telemetry: ScenarioTelemetry,
    trace: Option<ScenarioTrace>,
}

/// The worker indices of one part of the load mix.
struct RunningPart<'a> {
    part: &'a LoadPart,
    workers: Vec<usize>,
}

/// How long a load that stopped listening is given to say why: its last
/// message is written before it exits, so it is there already.
const LAST_WORDS: Duration = Duration::from_millis(200);

fn measure(
    scenario: &Scenario,
    settings: &ScenarioSettings,
    dir: &Path,
    group: &mut WorkerGroup,
    waiter: &mut Waiter,
) -> Result<Measured, Stop> {
    let mut sampler = Sampler::new(Path::new("/proc"), RUN_MARKER_VAR, &settings.marker);
    if let Some(device) = &settings.workdir_device {
        sampler = sampler.with_device(Path::new("/sys"), device);
    }
    if settings.explain {
        // Timed once per run, while no load runs.
        explain::prepare(settings.probe_cpus.as_ref());
    }
    let parts = start_loads(&scenario.load, settings, dir, group, waiter)?;
    let loads: Vec<usize> = parts
        .iter()
        .flat_map(|p| p.workers.iter().copied())
        .collect();
    waiter.watch_loads(
        group,
        Instant::now() + Duration::from_nanos(settings.warmup_ns),
    )?;
    let flight = settings
        .explain
        .then(|| explain::start(settings.probe_cpus.as_ref()));
    let (probe, window) = start_probe(scenario, settings, dir, group, waiter)?;
    for &load in &loads {
        if let Err(e) = group.send(load, &window_command(window)) {
            // A load that ended said why before it closed its end: that
            // reason, already in its pipe, says more than the broken pipe.
            waiter.watch_loads(group, Instant::now() + LAST_WORDS)?;
            return Err(Stop::Failed(format!(
                "{} stopped listening: {e}",
                group.label(load)
            )));
        }
    }
    // Counters around the measurement, read here rather than in the probe:
    // this one in the probe's lead time before its window opens (≈ 2 ms),
    // the other once its figures arrived.
    let before = sampler.sample(now_ns());
    let window_sampler = context::start(group, probe, loads.first().copied());
    let mut result = await_probe(probe, window, group, waiter)?;
    // The probe's events go to the trace only, never to the document.
    let threads = result
        .late
        .as_mut()
        .map(|late| std::mem::take(&mut late.traced))
        .unwrap_or_default();
    let window_samples = window_sampler.finish();
    let after = sampler.sample(now_ns());
    // Read while the loads still run: their helpers end with them.
    let mut load_tasks: Vec<Vec<LoadTask>> = parts
        .iter()
        .map(|running| {
            let pids: Vec<u32> = running.workers.iter().map(|&w| group.pid(w)).collect();
            explain::load_tasks(running.part.def.name, &pids)
        })
        .collect();
    let all_load_tasks = load_tasks.concat();
    let sched = flight.map(|flight| flight.finish(&mut result, window, &all_load_tasks));
    // One sample per worker of `loads`, in the same order: each part's
    // workers are the next ones.
    let mut samples = stop_loads(&loads, group, waiter)?.into_iter();
    let load_work: Vec<LoadWork> = parts
        .iter()
        .enumerate()
        .filter(|(_, running)| !running.workers.is_empty())
        .map(|(index, running)| {
            let part_samples: Vec<LoadSample> =
                samples.by_ref().take(running.workers.len()).collect();
            let tasks = std::mem::take(&mut load_tasks[index]);
            combine_samples(running.part.def, &part_samples, window)
                .map(|work| LoadWork { tasks, ..work })
        })
        .collect::<Result<_, _>>()?;
    let telemetry = ScenarioTelemetry::new(before, after);
    let telemetry = context::join(&window_samples, &mut result, telemetry);
    let trace = settings.trace.then(|| ScenarioTrace {
        name: format!("{} under {}", scenario.probe.name, scenario.load.name),
        probe: scenario.probe.name.to_string(),
        window,
        probe_tasks: result.sched.tasks.clone(),
        threads,
        worst: result
            .late
            .as_ref()
            .map_or_else(Vec::new, |l| l.worst.clone()),
        load_tasks: all_load_tasks,
        load_work: load_work.clone(),
        samples: Some(window_samples),
        sched,
    });
    Ok(Measured {
        telemetry,
        result,
        load_work,
        trace,
    })
}

fn start_loads<'a>(
    mix: &'a LoadMix,
    settings: &ScenarioSettings,
    dir: &Path,
    group: &mut WorkerGroup,
    waiter: &mut Waiter,
) -> Result<Vec<RunningPart<'a>>, Stop> {
    let mut parts = Vec::with_capacity(mix.parts.len());
    for part in &mix.parts {
        let processes = (part.def.processes)(&settings.params);
        let mut workers = Vec::with_capacity(processes);
        for instance in 0..processes {
            let spec = WorkerSpec::Load {
                load: part.def.name.to_string(),
                arg: part.arg.clone(),
                params: settings.params.clone(),
                nice: settings.load_nice,
                dir: dir.to_path_buf(),
                cgroup_procs: settings.load_cgroup_procs.clone(),
                cpus: settings.load_cpus.clone(),
            };
            let label = format!(
                "load {} (process {} of {processes})",
                part.def.name,
                instance + 1
            );
            let index = group
                .spawn(label, &spec)
                .map_err(|e| Stop::Failed(e.to_string()))?;
            workers.push(index);
        }
        parts.push(RunningPart { part, workers });
    }
    let count: usize = parts.iter().map(|p| p.workers.len()).sum();
    let mut ready = 0;
    let deadline = Instant::now() + START_TIMEOUT;
    while ready < count {
        let (worker, message) = waiter.expect_message(group, deadline, "the loads to start")?;
        match message {
            WorkerMessage::Ready { .. } => ready += 1,
            other => return Err(unexpected(group, worker, &other)),
        }
    }
    Ok(parts)
}

/// Starts the scenario's probe, its files in `dir`'s `probe` directory,
/// with the run's parameters as its load mix sets them (`cacherun`).
fn start_probe(
    scenario: &Scenario,
    settings: &ScenarioSettings,
    dir: &Path,
    group: &mut WorkerGroup,
    waiter: &mut Waiter,
) -> Result<(usize, Window), Stop> {
    let def = scenario.probe;
    let mut params = scenario.load.probe_params(&settings.params);
    if settings.trace {
        params.trace_events = log_capacity(settings.duration_ns);
    }
    let spec = WorkerSpec::Probe {
        probe: def.name.to_string(),
        params,
        duration_ns: settings.duration_ns,
        sched: settings.probe_sched,
        cpus: settings.probe_cpus.clone(),
        memory_cgroup_procs: match def.memory {
            MemoryPolicy::Shared => settings.memory_cgroup_procs.clone(),
            MemoryPolicy::Locked => None,
        },
        dir: dir.join("probe"),
    };
    let label = format!("probe {}", def.name);
    let probe = match settings.probe_session {
        true => group.spawn_in_own_session(label, &spec),
        false => group.spawn(label, &spec),
    }
    .map_err(|e| Stop::Failed(e.to_string()))?;
    let deadline = Instant::now() + START_TIMEOUT;
    match waiter.expect_message(group, deadline, "the probe to start")? {
        (worker, WorkerMessage::Ready { window: Some(w) }) if worker == probe => Ok((probe, w)),
        (worker, other) => Err(unexpected(group, worker, &other)),
    }
}

fn await_probe(
    probe: usize,
    window: Window,
    group: &mut WorkerGroup,
    waiter: &mut Waiter,
) -> Result<ProbeResult, Stop> {
    let remaining = Duration::from_nanos(window.end_ns.saturating_sub(now_ns()));
    let deadline = Instant::now() + remaining + PROBE_GRACE;
    match waiter.expect_message(group, deadline, "the probe's figures")? {
        (worker, WorkerMessage::ProbeDone { result }) if worker == probe => Ok(*result),
        (worker, other) => Err(unexpected(group, worker, &other)),
    }
}

/// Tells the load workers to stop and collects their work, one sample per
/// worker in the order of `loads`. Anything else a worker says (a second
/// sample, a sample from a worker that is not a load) fails the scenario.
fn stop_loads(
    loads: &[usize],
    group: &mut WorkerGroup,
    waiter: &mut Waiter,
) -> Result<Vec<LoadSample>, Stop> {
    for &load in loads {
        group.close_stdin(load);
    }
    let mut samples: Vec<Option<LoadSample>> = vec![None; loads.len()];
    let deadline = Instant::now() + STOP_TIMEOUT;
    while samples.iter().any(Option::is_none) {
        let (worker, message) = waiter.expect_message(group, deadline, "the loads to stop")?;
        let slot = loads
            .iter()
            .position(|&load| load == worker)
            .map(|index| &mut samples[index]);
        match (slot, message) {
            (Some(slot), WorkerMessage::LoadDone { work }) if slot.is_none() => *slot = Some(*work),
            (_, other) => return Err(unexpected(group, worker, &other)),
        }
    }
    Ok(samples.into_iter().flatten().collect())
}

/// Adds up the work of a load's processes over `window`; a load that did
/// nothing, stopped working part-way or did not see the measurement
/// window fails.
fn combine_samples(
    def: &LoadDef,
    samples: &[LoadSample],
    window: Window,
) -> Result<LoadWork, Stop> {
    for (n, sample) in samples.iter().enumerate() {
        let what = if sample.observed_ns == 0 {
            "never saw the measurement window (its work steps may be longer than the window)"
                .to_string()
        } else if sample.units <= 0.0 {
            "did no work during the measurement".to_string()
        } else if let Some(idle) = first_idle_stretch(&sample.batch_units) {
            format!(
                "stopped working at {:.1} s of the measurement (no work in {IDLE_BATCHES} of its {BATCHES} sub-windows in a row)",
                idle as f64 * batch_seconds(window)
            )
        } else {
            continue;
        };
        return Err(Stop::Failed(format!(
            "load {} (process {} of {}) {what}",
            def.name,
            n + 1,
            samples.len()
        )));
    }
    let per_s = |value: f64, s: &LoadSample| value * 1e9 / s.observed_ns as f64;
    // Missing when any process's bytes are.
    let mb_s = |bytes: fn(&LoadSample) -> Option<u64>| {
        samples
            .iter()
            .map(|s| Some(per_s(bytes(s)? as f64, s) / 1e6))
            .sum::<Option<f64>>()
    };
    let requests = RequestLatencies::merge(samples.iter().filter_map(|s| s.requests.as_ref()))
        .map_err(|e| Stop::Failed(format!("load {}: {e}", def.name)))?;
    Ok(LoadWork {
        load: def.name.to_string(),
        unit: def.unit.to_string(),
        amount: samples.iter().map(|s| s.units).sum(),
        rate_per_s: samples.iter().map(|s| per_s(s.units, s)).sum(),
        cpu_pct: samples
            .iter()
            .map(|s| 100.0 * per_s(s.cpu_ns as f64, s) / 1e9)
            .sum(),
        cpu_pct_lower_bound: samples.iter().any(|s| s.cpu_lower_bound),
        device_read_mb_s: mb_s(|s| s.read_bytes),
        device_write_mb_s: mb_s(|s| s.write_bytes),
        processes: samples.len(),
        usage: samples.iter().filter_map(|s| s.usage).collect(),
        cpus: CpuList::from_cpus(
            samples
                .iter()
                .flat_map(|s| s.cpus.iter().flat_map(CpuList::cpus)),
        ),
        requests,
        batch_units: batch_sums(samples),
        tasks: Vec::new(),
    })
}

/// The units of all `samples` in each sub-window; `None` where no process
/// observed it.
fn batch_sums(samples: &[LoadSample]) -> Vec<Option<f64>> {
    let len = samples
        .iter()
        .map(|s| s.batch_units.len())
        .max()
        .unwrap_or(0);
    (0..len)
        .map(|k| {
            samples
                .iter()
                .filter_map(|s| s.batch_units.get(k).copied().flatten())
                .reduce(|a, b| a + b)
        })
        .collect()
}

/// Turns a message that does not belong at this point into the scenario's failure.
fn unexpected(group: &mut WorkerGroup, worker: usize, message: &WorkerMessage) -> Stop {
    let label = group.label(worker).to_string();
    Stop::Failed(match message {
        WorkerMessage::Failed { error } => format!("{label} failed: {error}"),
        other => format!("{label} sent an unexpected message: {other:?}"),
    })
}

/// Waits for worker messages while watching the clock, the interrupt flag
/// and workers that end too early.
struct Waiter<'a> {
    interrupt: &'a Interrupt,
    tick: &'a mut dyn FnMut(),
}

impl Waiter<'_> {
    /// The next message from any worker, or `None` once `deadline` passed.
    fn next_message(
        &mut self,
        group: &mut WorkerGroup,
        deadline: Instant,
    ) -> Result<Option<(usize, WorkerMessage)>, Stop> {
        loop {
            self.interrupt.check()?;
            (self.tick)();
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let Some(event) = group.next_event(POLL.min(deadline - now)) else {
                continue;
            };
            return match event.kind {
                EventKind::Message(message) => Ok(Some((event.worker, message))),
                EventKind::Unreadable(line) => Err(Stop::Failed(format!(
                    "{} wrote something that is not a worker message: {line}",
                    group.label(event.worker)
                ))),
                EventKind::Closed => Err(ended_early(group, event.worker)),
            };
        }
    }

    /// The next message before `deadline`; a time-out fails the scenario.
    fn expect_message(
        &mut self,
        group: &mut WorkerGroup,
        deadline: Instant,
        what: &str,
    ) -> Result<(usize, WorkerMessage), Stop> {
        self.next_message(group, deadline)?
            .ok_or_else(|| Stop::Failed(format!("timed out waiting for {what}")))
    }

    /// Waits until `until`, failing if any worker speaks or ends meanwhile.
    fn watch_loads(&mut self, group: &mut WorkerGroup, until: Instant) -> Result<(), Stop> {
        match self.next_message(group, until)? {
            None => Ok(()),
            Some((worker, message)) => Err(unexpected(group, worker, &message)),
        }
    }
}

fn ended_early(group: &mut WorkerGroup, worker: usize) -> Stop {
    group.stop_all();
    Stop::Failed(format!(
        "{} ended before its work was done ({})",
        group.label(worker),
        group.describe_exit(worker)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2 s window: sub-windows of 100 ms.
    const WINDOW: Window = Window {
        start_ns: 1_000_000_000,
        end_ns: 3_000_000_000,
    };

    /// A process that worked `per_batch` units in each sub-window, over
    /// the whole window.
    fn sample(per_batch: &[f64]) -> LoadSample {
        LoadSample {
            units: per_batch.iter().sum(),
            observed_ns: 2_000_000_000,
            cpu_ns: 1_000_000_000,
            cpu_lower_bound: false,
            read_bytes: Some(4_000_000),
            write_bytes: Some(0),
            batch_units: per_batch.iter().copied().map(Some).collect(),
            usage: None,
            cpus: None,
            requests: None,
        }
    }

    fn failure(samples: &[LoadSample]) -> String {
        match combine_samples(&crate::load::burn::DEF, samples, WINDOW) {
            Err(Stop::Failed(reason)) => reason,
            Err(Stop::Interrupted) => panic!("interrupted"),
            Ok(work) => panic!("passed: {work:?}"),
        }
    }

    #[test]
    fn a_process_that_stopped_for_a_quarter_of_the_window_fails_saying_when() {
        let mut units = [1.0; BATCHES];
        units[12..].fill(0.0);
        let healthy = sample(&[1.0; BATCHES]);
        assert_eq!(
            failure(&[healthy.clone(), sample(&units)]),
            "load burn (process 2 of 2) stopped working at 1.2 s of the measurement (no work in 5 of its 20 sub-windows in a row)"
        );
        // A shorter pause is no stop.
        let mut paused = [1.0; BATCHES];
        paused[3..7].fill(0.0);
        let work = combine_samples(&crate::load::burn::DEF, &[healthy, sample(&paused)], WINDOW)
            .unwrap_or_else(|_| panic!("a pause of 4 sub-windows failed"));
        assert_eq!(work.batch_units[0], Some(2.0));
        assert_eq!(work.batch_units[4], Some(1.0));
    }

    #[test]
    fn unknown_bytes_are_missing_and_a_lower_bound_is_kept() {
        let known = sample(&[1.0; BATCHES]);
        let work = combine_samples(
            &crate::load::burn::DEF,
            std::slice::from_ref(&known),
            WINDOW,
        )
        .unwrap_or_else(|_| panic!("failed"));
        assert_eq!(work.device_read_mb_s, Some(2.0));
        assert_eq!(work.cpu_pct, 50.0);
        assert!(!work.cpu_pct_lower_bound);
        let unknown = LoadSample {
            read_bytes: None,
            cpu_lower_bound: true,
            ..known.clone()
        };
        let work = combine_samples(&crate::load::burn::DEF, &[known, unknown], WINDOW)
            .unwrap_or_else(|_| panic!("failed"));
        assert_eq!(work.device_read_mb_s, None);
        assert_eq!(work.device_write_mb_s, Some(0.0));
        assert!(work.cpu_pct_lower_bound);
        assert_eq!(work.cpu_pct, 100.0);
    }
}
