//! What `feelbench run` makes on the system before measuring: its private
//! work directory, delay accounting switched on (as root; see
//! `system::delayacct`), a swap file (`--swap`) and the cgroups of the loads
//! (`--mem-limit`, `--load-cpu-weight`; the probes that share their memory
//! join the memory one), each recorded in the workspace
//! before it is made so that the next run undoes what a killed run left;
//! and the PM QoS limit (`--cpu-dma-latency`), which the kernel itself lifts
//! when the run ends.

use super::config::RunConfig;
use crate::engine::workspace::Workspace;
use crate::exit::UsageError;
use crate::measure::sched::MemoryPolicy;
use crate::system::cgroup::{self, Cgroup, Limit, Plan};
use crate::system::delayacct::{self, Held};
use crate::system::environment::Environment;
use crate::system::pmqos::{self, CpuLatencyLimit};
use crate::system::procfs;
use crate::system::swap::SwapFile;
use anyhow::Context as _;
use std::path::{Path, PathBuf};

/// What the run made, undone when dropped. Fields drop in declaration
/// order: the cgroups first, then the swap file (it lives in the workspace,
/// and an active swap file cannot be deleted), then the workspace.
pub struct Setup {
    /// The cgroups the loads run in.
    pub load_cgroups: Vec<Cgroup>,
    /// The `cgroup.procs` file of the one of them that limits memory
    /// (`--mem-limit`), which the probes that share their memory join.
    pub memory_cgroup_procs: Option<PathBuf>,
    _swap: Option<SwapFile>,
    /// Delay accounting as it stands for the run (`None` when not root).
    pub delayacct: Option<Held>,
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
        // Before any worker starts: only tasks started after it are accounted.
        let delayacct = nix::unistd::geteuid()
            .is_root()
            .then(hold_delayacct)
            .transpose()?;
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
        let sharing = config
            .scenarios
            .iter()
            .find(|s| s.probe.memory == MemoryPolicy::Shared)
            .map(|s| s.probe.name);
        let (load_cgroups, memory_cgroup_procs) =
            make_load_cgroups(&mut workspace, &limits, sharing)?;
        Ok(Self {
            load_cgroups,
            memory_cgroup_procs,
            _swap: swap,
            delayacct,
            workspace,
            _cpu_latency: cpu_latency,
        })
    }
}

/// Records in `environment` the delay accounting in force for the
/// workers (`delayacct`: how the run holds it, `None` when not root) and
/// says the kernel's accounting switches.
pub fn note_switches(environment: &mut Environment, delayacct: Option<&Held>) {
    let delayacct_words = match delayacct {
        Some(held @ (Held::Holding { .. } | Held::WasOn)) => {
            environment.delayacct = Some(true);
            held.words()
        }
        Some(held @ Held::Missing) => held.words(),
        None if environment.delayacct == Some(true) => "on (but read only by root)",
        None => "off (switched on only by a run as root)",
    };
    let flag = |value: Option<bool>, yes: &'static str, no: &'static str| match value {
        Some(true) => yes,
        Some(false) => no,
        None => "unknown",
    };
    say!(
        "kernel switches in force: delay accounting {delayacct_words}; schedstats {}; PSI {}; IRQ_TIME_ACCOUNTING {}; PARAVIRT_TIME_ACCOUNTING {}; perf task clock {}",
        flag(environment.schedstats, "on", "off"),
        flag(environment.psi, "present", "absent"),
        flag(environment.irq_time_acct, "yes", "no"),
        flag(environment.paravirt_time_acct, "yes", "no"),
        flag(environment.task_clock, "permitted", "not permitted"),
    );
}

/// Holds delay accounting on for the run (or `watch`), as its orchestrator.
pub(crate) fn hold_delayacct() -> anyhow::Result<Held> {
    let pid = std::process::id();
    let stat = procfs::read_process_stat(Path::new("/proc"), pid).context(
        "cannot read the run's own start time, which records its hold on delay accounting",
    )?;
    Ok(delayacct::Switch::system().hold(pid, stat.start_ticks)?)
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
/// limits), and says which one limits memory; a system without a usable
/// controller for one is bad input for its option. `sharing` names a probe
/// of the run that shares its memory, and so joins the memory cgroup.
fn make_load_cgroups(
    workspace: &mut Workspace,
    limits: &[Limit],
    sharing: Option<&str>,
) -> anyhow::Result<(Vec<Cgroup>, Option<PathBuf>)> {
    let name = format!("feelbench-{}", std::process::id());
    let plans = cgroup::plan(Path::new("/proc"), &name, limits).map_err(UsageError::input)?;
    if let Some(probe) = sharing {
        check_memory_alone(&plans, probe)?;
    }
    let mut cgroups = Vec::with_capacity(plans.len());
    let mut memory_procs = None;
    for plan in plans {
        // Recorded first, like the swap file.
        workspace.note_cgroup(plan.path())?;
        let said = describe(&plan);
        let memory = limits_memory(&plan);
        let cgroup = plan.create()?;
        if memory {
            memory_procs = Some(cgroup.procs_file());
        }
        cgroups.push(cgroup);
        say!("{said}");
    }
    Ok((cgroups, memory_procs))
}

/// Whether the cgroup of `plan` limits memory.
fn limits_memory(plan: &Plan) -> bool {
    plan.limits()
        .iter()
        .any(|l| matches!(l, Limit::MemoryBytes(_)))
}

/// Refuses a memory cgroup that also holds the loads' CPU weight (cgroup
/// v2 keeps both in one): `probe`, which joins the memory cgroup, would
/// get the loads' CPU weight too.
fn check_memory_alone(plans: &[Plan], probe: &str) -> Result<(), UsageError> {
    let weighs_cpu = |plan: &Plan| {
        plan.limits()
            .iter()
            .any(|l| matches!(l, Limit::CpuWeight(_)))
    };
    match plans.iter().find(|&p| limits_memory(p) && weighs_cpu(p)) {
        None => Ok(()),
        Some(plan) => Err(UsageError::new(format!(
            "the {probe} probe runs in the loads' memory cgroup (--mem-limit), and under {} that cgroup also holds --load-cpu-weight, which would weigh the probe too; leave out --load-cpu-weight or measure {probe} in a run of its own",
            plan.version()
        ))),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::cgroup::CgroupVersion;

    const MEMORY: Limit = Limit::MemoryBytes(1 << 30);
    const WEIGHT: Limit = Limit::CpuWeight(10);

    #[test]
    fn a_probe_sharing_memory_may_not_join_a_cgroup_that_weighs_cpu() {
        let v1 = [
            Plan::for_tests("/cg/memory/fb", CgroupVersion::V1, &[MEMORY]),
            Plan::for_tests("/cg/cpu/fb", CgroupVersion::V1, &[WEIGHT]),
        ];
        assert!(check_memory_alone(&v1, "response").is_ok());
        assert!(limits_memory(&v1[0]) && !limits_memory(&v1[1]));
        let v2 = [Plan::for_tests(
            "/cg/fb",
            CgroupVersion::V2,
            &[MEMORY, WEIGHT],
        )];
        let error = check_memory_alone(&v2, "response").unwrap_err().to_string();
        assert!(
            error.starts_with("the response probe runs in the loads' memory cgroup (--mem-limit), and under cgroup v2 that cgroup also holds --load-cpu-weight"),
            "{error}"
        );
        let memory_only = [Plan::for_tests("/cg/fb", CgroupVersion::V2, &[MEMORY])];
        assert!(check_memory_alone(&memory_only, "command").is_ok());
    }
}
