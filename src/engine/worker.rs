//! The worker side: what a re-executed `feelbench worker SPEC` does. A probe
//! worker sets up its scheduling, announces its window and measures; a load
//! worker works until its stdin closes, counting work inside the window.

use super::protocol::{parse_window_command, LoadSample, WorkerMessage, WorkerSpec};
use crate::figures::ProbeResult;
use crate::load::{self, Load, LoadContext, LoadError};
use crate::measure::affinity;
use crate::measure::clock::{now_ns, process_and_children_cpu_ns, sleep_until_ns};
use crate::measure::requests::RequestLatencies;
use crate::measure::sched::{self, MemoryPolicy, SchedApplied, SchedRequest};
use crate::measure::tasks::{self, TaskSched};
use crate::measure::window::{Counters, CpuTime, Window, WindowMeter};
use crate::probe;
use crate::sim::WorkParams;
use crate::system::cpulist::{self, CpuList};
use crate::system::{cgroup, procfs, telemetry};
use anyhow::{anyhow, Context as _};
use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Time between a probe announcing its window and the window's start, so the
/// orchestrator can pass the window on to the loads first.
const PROBE_LEAD_NS: u64 = 50_000_000;

/// Runs the worker described by `spec_json`; returns the process exit code.
/// A worker that fails says why in its last message, and exits 1.
pub fn run(spec_json: &str) -> i32 {
    let outcome = serde_json::from_str::<WorkerSpec>(spec_json)
        .context("bad worker spec")
        .and_then(|spec| match spec {
            WorkerSpec::Probe {
                probe,
                params,
                duration_ns,
                sched,
                cpus,
                memory_cgroup_procs,
                dir,
            } => {
                let place = ProbePlacement {
                    sched,
                    cpus,
                    memory_cgroup_procs,
                    dir,
                };
                run_probe(&probe, &params, duration_ns, &place)
            }
            WorkerSpec::Load {
                load,
                arg,
                params,
                nice,
                dir,
                cgroup_procs,
                cpus,
            } => {
                let context = LoadContext { params, arg, dir };
                let place = LoadPlacement { cgroup_procs, cpus };
                run_load(&load, &context, nice, &place)
            }
        });
    match outcome {
        Ok(()) => 0,
        Err(error) => {
            send(&WorkerMessage::Failed {
                error: format!("{error:#}"),
            });
            1
        }
    }
}

fn send(message: &WorkerMessage) {
    let mut line = serde_json::to_string(message).expect("messages always serialise");
    line.push('\n');
    let mut stdout = std::io::stdout().lock();
    // If the orchestrator is gone there is nobody left to tell.
    let _ = stdout
        .write_all(line.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Where and how a probe worker runs.
struct ProbePlacement {
    /// Its scheduling.
    sched: SchedRequest,
    /// The CPUs to run on.
    cpus: Option<CpuList>,
    /// The memory cgroup to join (a probe that shares its memory, in a run
    /// with `--mem-limit`).
    memory_cgroup_procs: Option<PathBuf>,
    /// The probe's private directory (not made yet).
    dir: PathBuf,
}

fn run_probe(
    name: &str,
    params: &WorkParams,
    duration_ns: u64,
    place: &ProbePlacement,
) -> anyhow::Result<()> {
    // First, while this is the only thread: the threads and programs the
    // probe starts inherit both, and what it allocates is charged there.
    place.cpus.as_ref().map(affinity::set).transpose()?;
    if let Some(procs) = &place.memory_cgroup_procs {
        cgroup::join(procs)?;
    }
    sched::set_thread_name(&format!("fb-probe-{name}"));
    // Inherited by every thread and process the probe starts; harmless
    // while it prepares.
    sched::set_timer_slack(place.sched.timer_slack_ns)?;
    let def = probe::find(name).ok_or_else(|| anyhow!("unknown probe {name}"))?;
    let mut probe = (def.build)(params)?;
    probe.prepare(&place.dir)?;
    let applied = schedule_probe(&place.sched, def.memory)?;
    let start_ns = now_ns() + PROBE_LEAD_NS;
    let window = Window {
        start_ns,
        end_ns: start_ns + def.window_ns(params, duration_ns),
    };
    let tasks = read_tasks_in(window).context("cannot start the thread reading the tasks")?;
    send(&WorkerMessage::Ready {
        window: Some(window),
    });
    let measured = probe.measure(window, &place.dir)?;
    let applied = SchedApplied {
        tasks: tasks.join().expect("the reading thread does not panic"),
        ..applied
    };
    let mut result = ProbeResult::of_measured(&def.sheet_for(params), measured, applied);
    result.usage = telemetry::self_usage();
    send(&WorkerMessage::ProbeDone {
        result: Box::new(result),
    });
    Ok(())
}

/// Gives the probe's scheduling to this thread and, once it has prepared,
/// to every other task of this process and of the processes it started
/// (threads started before would keep SCHED_OTHER and their nice value:
/// both belong to a thread), so each thread or process doing or timing
/// the probe's work runs as asked, and the ones started later inherit it.
/// Done after `Probe::prepare`, which may write a large file: that work
/// has no business at a real-time priority.
fn schedule_probe(
    request: &SchedRequest,
    memory: MemoryPolicy,
) -> Result<SchedApplied, sched::SchedError> {
    let others = tasks::of_tree(Path::new("/proc"), std::process::id());
    tasks::apply_to(&others, tasks::own_tid(), request)?;
    sched::apply(request, memory)
}

/// How far into the window the tasks are read back: the threads and
/// processes a probe starts as its window begins (the job's steps) run by
/// then.
const TASKS_READ_AT_NS: u64 = 50_000_000;

/// Reads back, in a thread of its own (left out of what it reads, and
/// less urgent than any other), [`TASKS_READ_AT_NS`] into `window` or at
/// its end if sooner, what every task of this process and of its
/// descendants has.
fn read_tasks_in(window: Window) -> std::io::Result<JoinHandle<Vec<TaskSched>>> {
    let at_ns = (window.start_ns + TASKS_READ_AT_NS).min(window.end_ns);
    let elsewhere = cpus_besides_own();
    std::thread::Builder::new()
        .name("fb-sched-read".into())
        .stack_size(READER_STACK_BYTES)
        .spawn(move || {
            // Best effort: were either refused, the reading would only run
            // at the probe's priority, or on its CPUs.
            let _ = sched::set_least_urgent();
            if let Some(cpus) = &elsewhere {
                let _ = affinity::set(cpus);
            }
            sleep_until_ns(at_ns);
            let proc_root = Path::new("/proc");
            let all = tasks::of_tree(proc_root, std::process::id());
            tasks::read_all(proc_root, &all, tasks::own_tid())
        })
}

/// The online CPUs the calling thread may not run on, if any: where the
/// reading of the tasks takes no CPU the probe waits for (with
/// `--probe-cpus`, or micro's LMbench mode on one CPU).
fn cpus_besides_own() -> Option<CpuList> {
    let online = cpulist::online(Path::new("/sys")).ok()?;
    let own = affinity::current().ok()?;
    CpuList::from_cpus(online.cpus().filter(|cpu| !own.cpus().any(|c| c == *cpu)))
}

/// Stack of the thread reading the tasks back (locked with the probe's
/// memory, so no bigger than it needs).
const READER_STACK_BYTES: usize = 256 << 10;

/// Where a load worker puts itself before it works.
struct LoadPlacement {
    /// `cgroup.procs` files of the cgroups to join.
    cgroup_procs: Vec<PathBuf>,
    /// The CPUs to run on.
    cpus: Option<CpuList>,
}

impl LoadPlacement {
    /// Joins the cgroups and sets the affinity (while this is the only
    /// thread, so what the load starts inherits both); returns the CPUs the
    /// worker may run on.
    fn apply(&self) -> anyhow::Result<CpuList> {
        for procs in &self.cgroup_procs {
            cgroup::join(procs)?;
        }
        match &self.cpus {
            Some(cpus) => Ok(affinity::set(cpus)?),
            None => Ok(affinity::current()?),
        }
    }
}

fn run_load(
    name: &str,
    context: &LoadContext,
    nice: i32,
    place: &LoadPlacement,
) -> anyhow::Result<()> {
    // First, so that everything the load allocates is charged to the cgroups.
    let cpus = place.apply()?;
    sched::set_thread_name(&format!("fb-load-{name}"));
    let def = load::find(name).ok_or_else(|| anyhow!("unknown load {name}"))?;
    sched::set_nice(nice)?;
    // Loads are the first thing the OOM killer should take.
    std::fs::write("/proc/self/oom_score_adj", "1000").context("cannot set oom_score_adj")?;
    let mut load = (def.build)(context)?;
    let commands = listen_for_commands().context("cannot start the thread reading commands")?;
    send(&WorkerMessage::Ready { window: None });
    let work = LoadSample {
        cpus: Some(cpus),
        ..work_until_stopped(load.as_mut(), &commands, &context.params.io.thresholds_ns)?
    };
    // Cleaned up before the last message: the orchestrator kills the
    // process group once it has every load's figures.
    drop(load);
    send(&WorkerMessage::LoadDone {
        work: Box::new(work),
    });
    Ok(())
}

/// What the orchestrator told a load worker on stdin.
#[derive(Default)]
struct Commands {
    window_start_ns: AtomicU64,
    window_end_ns: AtomicU64,
    stop: AtomicBool,
}

impl Commands {
    fn window(&self) -> Option<Window> {
        let start_ns = self.window_start_ns.load(Ordering::Acquire);
        (start_ns != 0).then(|| Window {
            start_ns,
            end_ns: self.window_end_ns.load(Ordering::Relaxed),
        })
    }
}

fn listen_for_commands() -> std::io::Result<Arc<Commands>> {
    let commands = Arc::new(Commands::default());
    let shared = commands.clone();
    std::thread::Builder::new()
        .name("fb-commands".into())
        .spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if let Some(window) = parse_window_command(&line) {
                    shared.window_end_ns.store(window.end_ns, Ordering::Relaxed);
                    shared
                        .window_start_ns
                        .store(window.start_ns, Ordering::Release);
                }
            }
            shared.stop.store(true, Ordering::Release);
        })?;
    Ok(commands)
}

/// Steps the load until told to stop; a failed step ends the load with
/// its reason. The requests a load times are counted over `thresholds_ns`
/// when its work counts.
fn work_until_stopped(
    load: &mut dyn Load,
    commands: &Commands,
    thresholds_ns: &[u64],
) -> Result<LoadSample, LoadError> {
    let mut meter = WindowMeter::default();
    let mut units = 0.0;
    let mut requests: Option<RequestLatencies> = None;
    while !commands.stop.load(Ordering::Acquire) {
        units += load.step()?;
        if let Some(window) = commands.window() {
            meter.set_window(window);
        }
        if let Some(ns) = load.last_request_ns().filter(|_| meter.counting()) {
            requests
                .get_or_insert_with(|| RequestLatencies::new(thresholds_ns))
                .record(ns);
        }
        meter.observe(now_ns(), units, || read_counters(load));
    }
    meter.finish(now_ns(), units, || read_counters(load));
    let totals = meter.totals();
    let counters = totals.map(|t| t.counters).unwrap_or_default();
    Ok(LoadSample {
        units: totals.map_or(0.0, |t| t.units),
        observed_ns: totals.map_or(0, |t| t.elapsed_ns),
        cpu_ns: counters.cpu.ns,
        cpu_lower_bound: counters.cpu.lower_bound,
        read_bytes: counters.read_bytes,
        write_bytes: counters.write_bytes,
        batch_units: meter.batch_units(),
        usage: telemetry::self_usage(),
        cpus: None,
        requests,
    })
}

fn read_counters(load: &dyn Load) -> Counters {
    let worker = CpuTime::exact(process_and_children_cpu_ns());
    // Without task I/O accounting (no /proc/self/io) the bytes are not
    // known: missing, not 0, and no reason to fail the load.
    let io = procfs::read_process_io(Path::new("/proc"), "self").ok();
    Counters {
        cpu: load.cpu(worker),
        read_bytes: io.map(|io| io.read_bytes),
        write_bytes: io.map(|io| io.write_bytes),
    }
}
