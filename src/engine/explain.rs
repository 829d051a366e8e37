//! `--explain` in a scenario: the flight recorder (`system::sched_trace`)
//! started once the loads have warmed up, its cost predicted first and
//! checked while it runs, stopped when the probe's figures arrive, and its
//! trace joined with the probe's late events (`figures::explain`) under
//! the names the run gives its tasks. It runs in the orchestrator, beside
//! the telemetry sampler, so neither the probe's process nor its memory
//! holds it; its reading thread runs on any CPU at the orchestrator's
//! priority (a SCHED_IDLE reader behind a burn load would never drain).

use crate::document::schema::LoadTask;
use crate::figures::explain::{explain, ExplainCost, ExplainStatus, ExplainSummary, TaskName};
use crate::figures::ProbeResult;
use crate::measure::window::Window;
use crate::system::cpulist::{self, CpuList};
use crate::system::sched_trace::{self, Budget, Recorder, Trace};
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

/// How the recorder records, as the run document says it.
const METHOD: &str =
    "perf_event_open: sched:sched_switch and sched:sched_wakeup per CPU, CLOCK_MONOTONIC";
/// The share of one CPU the recorder may cost.
const BUDGET_CPU_SHARE: f64 = 0.01;
/// How long the switch rate is sampled before a scenario.
const RATE_SAMPLE: Duration = Duration::from_millis(200);
/// Records per context switch assumed by the prediction: the switch and,
/// at most, the wake-up that led to it.
const RECORDS_PER_SWITCH: f64 = 2.0;

/// The kernel's and the reader's time per record, ns, timed once per run
/// (before the first scenario's loads start), or why it could not be.
static EVENT_COST: OnceLock<Result<(f64, f64), String>> = OnceLock::new();

/// Times the recorder's cost per record on the first CPU of `cpus`, once
/// per run; call it while no load runs.
pub fn prepare(cpus: Option<&CpuList>) {
    EVENT_COST.get_or_init(|| {
        if !nix::unistd::geteuid().is_root() {
            return Err("--explain needs root (perf events on every task of a CPU); the run goes on without it".into());
        }
        let cpu = recorded_cpus(cpus).first().copied().unwrap_or(0);
        sched_trace::event_cost(cpu).map_err(|e| format!("--explain unavailable: {e}"))
    });
}

/// A scenario's recorder, or why there is none.
pub struct Flight {
    recorder: Option<Recorder>,
    summary: ExplainSummary,
}

/// Predicts the recorder's cost on the probe's CPUs (`cpus`, or all) and
/// starts it when within its budget.
pub fn start(cpus: Option<&CpuList>) -> Flight {
    let cpus = recorded_cpus(cpus);
    let (kernel_ns_per_record, read_ns_per_record) = match EVENT_COST.get() {
        Some(Ok(cost)) => *cost,
        Some(Err(notice)) => return off(notice.clone(), ExplainCost::default()),
        None => {
            return off(
                "--explain: the recorder's cost was not timed".into(),
                ExplainCost::default(),
            )
        }
    };
    let online = cpulist::online(Path::new("/sys")).map_or(1, |c| c.cpus().count().max(1));
    let switch_rate_per_s = sched_trace::switch_rate(Path::new("/proc"), RATE_SAMPLE);
    let per_record_ns = kernel_ns_per_record + read_ns_per_record;
    let predicted_share = switch_rate_per_s.unwrap_or(0.0) * RECORDS_PER_SWITCH * per_record_ns
        / 1e9
        * cpus.len() as f64
        / online as f64;
    let mut cost = ExplainCost {
        switch_rate_per_s,
        kernel_ns_per_record,
        read_ns_per_record,
        predicted_cpu_pct: predicted_share * 100.0,
        ..ExplainCost::default()
    };
    if predicted_share > BUDGET_CPU_SHARE {
        let notice = format!(
            "--explain off: predicted to cost {:.1} % of a CPU ({:.0} switches/s × {:.0} ns a record), above {:.0} %",
            cost.predicted_cpu_pct,
            switch_rate_per_s.unwrap_or(0.0),
            per_record_ns,
            BUDGET_CPU_SHARE * 100.0
        );
        return off(notice, cost);
    }
    let budget = Budget {
        kernel_ns_per_record,
        cpu_share: BUDGET_CPU_SHARE,
        grace: sched_trace::COST_GRACE,
    };
    match Recorder::start(&cpus, budget) {
        Ok(recorder) => Flight {
            recorder: Some(recorder),
            summary: ExplainSummary {
                status: ExplainStatus::Recorded,
                notice: None,
                method: METHOD.into(),
                cpus,
                window_ns: None,
                cost,
                threads: Vec::new(),
            },
        },
        Err(e) => {
            cost.predicted_cpu_pct = predicted_share * 100.0;
            off(format!("--explain unavailable: {e}"), cost)
        }
    }
}

fn off(notice: String, cost: ExplainCost) -> Flight {
    Flight {
        recorder: None,
        summary: ExplainSummary::off(METHOD, notice, cost),
    }
}

/// The CPUs recorded: the probe's, or every online one.
fn recorded_cpus(cpus: Option<&CpuList>) -> Vec<u32> {
    let all = cpulist::online(Path::new("/sys")).ok();
    cpus.or(all.as_ref())
        .map(|c| c.cpus().map(|cpu| cpu as u32).collect())
        .unwrap_or_default()
}

impl Flight {
    /// Stops the recorder and explains `result`'s late events, measured
    /// over `window`, with its trace, the loads' threads named as `loads`
    /// says; hands back the recorder's records (for `--trace`).
    pub fn finish(self, result: &mut ProbeResult, window: Window, loads: &[LoadTask]) -> Trace {
        let mut summary = self.summary;
        summary.window_ns = Some([window.start_ns, window.end_ns]);
        let trace = match self.recorder {
            Some(recorder) => recorder.stop(),
            None => Trace::default(),
        };
        if summary.status == ExplainStatus::Recorded {
            let elapsed = trace.to_ns.saturating_sub(trace.from_ns).max(1) as f64;
            summary.cost.records = trace.records();
            summary.cost.lost = trace.lost;
            summary.cost.measured_cpu_pct = Some(
                100.0 * sched_trace::cost_ns(&trace, summary.cost.kernel_ns_per_record) / elapsed,
            );
            if let Some(why) = &trace.stopped {
                summary.status = ExplainStatus::Stopped;
                summary.notice = Some(format!("--explain stopped part-way: {why}"));
            } else if trace.lost > 0 {
                summary.notice = Some(format!(
                    "--explain lost {} of {} records (a full ring): some waits are not attributed",
                    trace.lost,
                    trace.lost + trace.records()
                ));
            }
        }
        let Some(late) = result.late.as_mut() else {
            return trace;
        };
        let probe_tids: Vec<i32> = result.sched.tasks.iter().map(|t| t.tid as i32).collect();
        let mut names: HashMap<i32, TaskName> = result
            .sched
            .tasks
            .iter()
            .map(|t| {
                let name = TaskName {
                    name: t
                        .name
                        .clone()
                        .unwrap_or_else(|| format!("probe thread {}", t.tid)),
                    pid: Some(t.pid as i32),
                };
                (t.tid as i32, name)
            })
            .collect();
        for task in loads {
            let name = TaskName {
                name: task.name.clone(),
                pid: Some(task.pid as i32),
            };
            names.insert(task.tid as i32, name);
        }
        for (tid, comm) in &trace.comms {
            names.entry(*tid).or_insert_with(|| TaskName {
                name: comm.clone(),
                pid: crate::system::procfs::process_of_thread(Path::new("/proc"), *tid),
            });
        }
        explain(late, &trace, &probe_tids, &names, summary);
        trace
    }
}

/// The threads of a load's processes (worker `pids`, in order), named
/// `LOAD#N` for the Nth worker's main thread, `LOAD#N COMM` for its other
/// threads, and `LOAD#N COMM K` for the
/// Kth process named COMM it started.
pub fn load_tasks(load: &str, pids: &[u32]) -> Vec<LoadTask> {
    let proc_root = Path::new("/proc");
    let mut tasks = Vec::new();
    for (n, &worker) in pids.iter().enumerate() {
        let label = format!("{load}#{}", n + 1);
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut last_pid = None;
        for task in crate::measure::tasks::of_tree(proc_root, worker) {
            let comm = comm_of(task.pid, task.tid);
            let name = if task.tid == worker {
                label.clone()
            } else if task.pid == worker {
                format!("{label} {comm}")
            } else {
                if last_pid != Some(task.pid) {
                    *seen.entry(comm.clone()).or_default() += 1;
                    last_pid = Some(task.pid);
                }
                format!("{label} {comm} {}", seen[&comm])
            };
            tasks.push(LoadTask {
                name,
                pid: task.pid,
                tid: task.tid,
                comm,
            });
        }
    }
    tasks
}

fn comm_of(pid: u32, tid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm"))
        .map(|c| c.trim_end().to_string())
        .unwrap_or_default()
}
