//! What `feelbench run` makes on the system before measuring: its private
//! work directory, a swap file (`--swap`) and a memory cgroup for the loads
//! (`--mem-limit`), each recorded in the workspace before it is made so
//! that the next run undoes what a killed run left; and the PM QoS limit
//! (`--cpu-dma-latency`), which the kernel itself lifts when the run ends.

use super::config::RunConfig;
use crate::engine::workspace::Workspace;
use crate::exit::UsageError;
use crate::system::cgroup::{MemoryCgroup, MemoryController};
use crate::system::pmqos::{self, CpuLatencyLimit};
use crate::system::swap::SwapFile;
use anyhow::Context as _;
use std::path::Path;

/// What the run made, undone when dropped. Fields drop in declaration
/// order: the cgroup first, then the swap file (it lives in the workspace,
/// and an active swap file cannot be deleted), then the workspace.
pub struct Setup {
    /// The memory cgroup the loads run in.
    pub load_cgroup: Option<MemoryCgroup>,
    _swap: Option<SwapFile>,
    /// The run's private work directory.
    pub workspace: Workspace,
    // Last: the limit is lifted once everything else is undone.
    _cpu_latency: Option<CpuLatencyLimit>,
}

impl Setup {
    /// Holds the PM QoS limit `config` asks for, then makes the workspace
    /// in `config.workdir`, the swap file and the cgroup `config` asks for.
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
        let load_cgroup = config
            .mem_limit_bytes
            .map(|bytes| make_load_cgroup(&mut workspace, bytes))
            .transpose()?;
        Ok(Self {
            load_cgroup,
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
    eprintln!(
        "feelbench: swap file {} ({} MiB) on for the run",
        path.display(),
        bytes >> 20
    );
    Ok(swap)
}

/// Makes the memory cgroup the loads run in (`--mem-limit`); a system
/// without a usable memory controller is bad input for that option.
fn make_load_cgroup(workspace: &mut Workspace, limit_bytes: u64) -> anyhow::Result<MemoryCgroup> {
    let controller = MemoryController::find(Path::new("/proc")).map_err(UsageError::input)?;
    let name = format!("feelbench-{}", std::process::id());
    let path = controller.path_of(&name);
    // Recorded first, like the swap file.
    workspace.note_cgroup(&path)?;
    let cgroup = controller.create(&name, limit_bytes)?;
    eprintln!(
        "feelbench: loads limited to {} MiB of memory in {} ({})",
        limit_bytes >> 20,
        path.display(),
        controller.version()
    );
    Ok(cgroup)
}

/// Holds PM QoS at `value_us` for the run (`--cpu-dma-latency`). Nothing is
/// recorded for a killed run to undo: the kernel lifts the limit when the
/// device's file is closed, which the end of the process does, however it
/// ends. A device that cannot be opened is bad input for that option.
fn hold_cpu_latency(value_us: u32) -> anyhow::Result<CpuLatencyLimit> {
    let limit = CpuLatencyLimit::hold(Path::new(pmqos::DEVICE), value_us)
        .map_err(UsageError::input)
        .context("--cpu-dma-latency")?;
    eprintln!(
        "feelbench: PM QoS held at {value_us} µs ({}) for the run",
        pmqos::DEVICE
    );
    Ok(limit)
}
