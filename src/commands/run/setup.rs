//! What `feelbench run` makes on the system before measuring: its private
//! work directory, a swap file (`--swap`) and the cgroups of the loads
//! (`--mem-limit`, `--load-cpu-weight`), each recorded in the workspace
//! before it is made so that the next run undoes what a killed run left;
//! and the PM QoS limit (`--cpu-dma-latency`), which the kernel itself lifts
//! when the run ends.

use super::config::RunConfig;
use crate::engine::workspace::Workspace;
use crate::exit::UsageError;
use crate::system::cgroup::{self, Cgroup, Limit, Plan};
use crate::system::pmqos::{self, CpuLatencyLimit};
use crate::system::swap::SwapFile;
use anyhow::Context as _;
use std::path::Path;

/// What the run made, undone when dropped. Fields drop in declaration
/// order: the cgroups first, then the swap file (it lives in the workspace,
/// and an active swap file cannot be deleted), then the workspace.
pub struct Setup {
    /// The cgroups the loads run in.
    pub load_cgroups: Vec<Cgroup>,
    _swap: Option<SwapFile>,
    /// The run's private work directory.
    pub workspace: Workspace,
    // Last: the limit is lifted once everything else is undone.
    _cpu_latency: Option<CpuLatencyLimit>,
}

impl Setup {
    /// Holds the PM QoS limit `config` asks for, then makes the workspace
    /// in `config.workdir`, the swap file and the cgroups `config` asks for.
    pub fn make(config: &RunConfig) -> anyhow::Result<Self> {
        // First, as the one change a user without root cannot ask for.
        let cpu_latency = config
            .cpu_dma_latency_us
            .map(hold_cpu_latency)
            .transpose()?;
        let mut workspace = Workspace::create(&config.workdir)?;
        let swap = config
            .swap_file_bytes
            .map(|bytes| add_swap(&mut workspace, bytes))
            .transpose()?;
        let limits: Vec<Limit> = [
            config.mem_limit_bytes.map(Limit::MemoryBytes),
            config.placement.load_cpu_weight.map(Limit::CpuWeight),
        ]
        .into_iter()
        .flatten()
        .collect();
        let load_cgroups = make_load_cgroups(&mut workspace, &limits)?;
        Ok(Self {
            load_cgroups,
            _swap: swap,
            workspace,
            _cpu_latency: cpu_latency,
        })
    }
}

/// Turns on a swap file of `bytes` in the workspace for the run (`--swap`).
fn add_swap(workspace: &mut Workspace, bytes: u64) -> anyhow::Result<SwapFile> {
    let path = workspace.dir().join("swapfile");
    // Recorded first: if the run is killed before it turns the swap off
    // again, the next run does it.
    workspace.note_swap_file(&path)?;
    let swap = SwapFile::create(&path, bytes)?;
    say!(
        "swap file {} ({} MiB) on for the run",
        path.display(),
        bytes >> 20
    );
    Ok(swap)
}

/// Makes the cgroups the loads run in with `limits` (none without
/// limits); a system without a usable controller for one is bad input for
/// its option.
fn make_load_cgroups(workspace: &mut Workspace, limits: &[Limit]) -> anyhow::Result<Vec<Cgroup>> {
    let name = format!("feelbench-{}", std::process::id());
    let plans = cgroup::plan(Path::new("/proc"), &name, limits).map_err(UsageError::input)?;
    let mut cgroups = Vec::with_capacity(plans.len());
    for plan in plans {
        // Recorded first, like the swap file.
        workspace.note_cgroup(plan.path())?;
        let said = describe(&plan);
        cgroups.push(plan.create()?);
        say!("{said}");
    }
    Ok(cgroups)
}

/// What a cgroup of the loads does, for the user.
fn describe(plan: &Plan) -> String {
    let limits: Vec<String> = plan
        .limits()
        .iter()
        .map(|limit| match *limit {
            Limit::MemoryBytes(bytes) => format!("limited to {} MiB of memory", bytes >> 20),
            Limit::CpuWeight(weight) => {
                let (file, value) = limit.file_and_value(plan.version());
                format!("at CPU weight {weight} ({file} {value})")
            }
        })
        .collect();
    format!(
        "loads {} in {} ({})",
        limits.join(" and "),
        plan.path().display(),
        plan.version()
    )
}

/// Holds PM QoS at `value_us` for the run (`--cpu-dma-latency`). Nothing is
/// recorded for a killed run to undo: the kernel lifts the limit when the
/// device's file is closed, which the end of the process does, however it
/// ends. A device that cannot be opened is bad input for that option.
fn hold_cpu_latency(value_us: u32) -> anyhow::Result<CpuLatencyLimit> {
    let limit = CpuLatencyLimit::hold(Path::new(pmqos::DEVICE), value_us)
        .map_err(UsageError::input)
        .context("--cpu-dma-latency")?;
    say!(
        "PM QoS held at {value_us} µs ({}) for the run",
        pmqos::DEVICE
    );
    Ok(limit)
}
