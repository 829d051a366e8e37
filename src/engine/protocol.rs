//! What the orchestrator and its workers say to each other. A worker gets its
//! [`WorkerSpec`] as its one argument (JSON) and writes [`WorkerMessage`]s to
//! stdout, one JSON object a line. Load workers read commands on stdin:
//! `window START END` (the measurement window) and end of file (stop).

use crate::figures::ProbeResult;
use crate::measure::requests::RequestLatencies;
use crate::measure::sched::SchedRequest;
use crate::measure::window::Window;
use crate::sim::WorkParams;
use crate::system::cpulist::CpuList;
use crate::system::telemetry::ProcessUsage;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The job a worker process is started for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum WorkerSpec {
    /// Measure `probe` for `duration_ns` (or as its pace says).
    Probe {
        probe: String,
        params: WorkParams,
        duration_ns: u64,
        sched: SchedRequest,
        /// The CPUs the probe runs on (`--probe-cpus`), set first.
        cpus: Option<CpuList>,
        /// The `cgroup.procs` file of the loads' memory cgroup, which a
        /// probe that shares its memory joins before it is built.
        #[serde(default)]
        memory_cgroup_procs: Option<PathBuf>,
        /// A private directory for the probe's files (not made yet),
        /// removed with the scenario's directory.
        dir: PathBuf,
    },
    /// Run one process's share of `load` until stopped.
    Load {
        load: String,
        arg: Option<String>,
        params: WorkParams,
        nice: i32,
        dir: PathBuf,
        /// The `cgroup.procs` files of the cgroups the worker joins before
        /// anything else (`--mem-limit`, `--load-cpu-weight`).
        cgroup_procs: Vec<PathBuf>,
        /// The CPUs the load runs on (`--load-cpus`), set first.
        cpus: Option<CpuList>,
    },
}

/// A line a worker writes on stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkerMessage {
    /// Set up and working; a probe also says its measurement window.
    Ready { window: Option<Window> },
    /// A probe's figures.
    ProbeDone { result: Box<ProbeResult> },
    /// A load process's work over the measurement window.
    LoadDone { work: Box<LoadSample> },
    /// The worker could not do its job.
    Failed { error: String },
}

impl WorkerMessage {
    /// Whether this is the last message a worker sends.
    pub fn is_final(&self) -> bool {
        !matches!(self, WorkerMessage::Ready { .. })
    }
}

/// What one load process got done between the first and last moment it saw
/// inside the measurement window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadSample {
    /// Units of work done between the two observations.
    pub units: f64,
    /// Wall time between the two observations (0: the window was not seen).
    pub observed_ns: u64,
    /// CPU time of the load between the two: the process's, the children's
    /// it reaped, and what the load adds (helpers, a command's processes).
    pub cpu_ns: u64,
    /// Whether part of the load's CPU time could not be counted: `cpu_ns`
    /// is then a lower bound.
    #[serde(default)]
    pub cpu_lower_bound: bool,
    /// Bytes the process caused to be read from storage, between the two
    /// (`None`: the kernel does not say).
    pub read_bytes: Option<u64>,
    /// Bytes the process caused to be written to storage, between the two
    /// (`None`: the kernel does not say).
    pub write_bytes: Option<u64>,
    /// Units done in each sub-window of the measurement window, in time
    /// order (`None`: a sub-window the process did not observe).
    #[serde(default)]
    pub batch_units: Vec<Option<f64>>,
    /// What the process used over its life, taken as it stops.
    #[serde(default)]
    pub usage: Option<ProcessUsage>,
    /// The CPUs the process could run on, read back as it started.
    #[serde(default)]
    pub cpus: Option<CpuList>,
    /// The requests it timed between the two observations, for a load
    /// that times its requests.
    #[serde(default)]
    pub requests: Option<RequestLatencies>,
}

/// The command that gives load workers the measurement window.
pub fn window_command(window: Window) -> String {
    format!("window {} {}\n", window.start_ns, window.end_ns)
}

/// Parses a `window START END` command.
pub fn parse_window_command(line: &str) -> Option<Window> {
    let mut words = line.split_whitespace();
    if words.next()? != "window" {
        return None;
    }
    let start_ns = words.next()?.parse().ok()?;
    let end_ns = words.next()?.parse().ok()?;
    (words.next().is_none() && start_ns < end_ns).then_some(Window { start_ns, end_ns })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_command_round_trips() {
        let w = Window {
            start_ns: 5,
            end_ns: 9,
        };
        assert_eq!(parse_window_command(&window_command(w)), Some(w));
        assert_eq!(parse_window_command("window 9 5"), None);
        assert_eq!(parse_window_command("stop"), None);
        assert_eq!(parse_window_command("window 1 2 3"), None);
    }

    #[test]
    fn spec_is_json_with_a_role() {
        let spec = WorkerSpec::Load {
            load: "burn".into(),
            arg: None,
            params: WorkParams::for_tests(),
            nice: 5,
            dir: "/tmp/x".into(),
            cgroup_procs: vec!["/sys/fs/cgroup/memory/feelbench-1/cgroup.procs".into()],
            cpus: Some("1".parse().unwrap()),
        };
        let text = serde_json::to_string(&spec).unwrap();
        assert!(text.contains(r#""role":"load""#), "{text}");
        assert_eq!(serde_json::from_str::<WorkerSpec>(&text).unwrap(), spec);
    }
}
