//! `cmd:COMMAND`: any external command as a load (`--load 'cmd:stress-ng
//! --cpu 2'`). The command is split like a shell would split it but run
//! without a shell. Its work is the CPU time of everything it starts: the
//! worker moves into a cgroup of its own that only accounts
//! (`cgroup::CpuAccount`) before it starts the command, so the kernel's
//! accounting of that cgroup holds the command, its children, daemons that
//! left its process group or session and processes that already ended.
//! Where no such cgroup can be made (not root, no accounting hierarchy),
//! the worker, the subreaper of the command's orphans, adds up its live
//! descendants in /proc and the ones it reaped, a lower bound (children
//! that nobody waits for leave no trace), and says so. The tree is stopped
//! with the scenario's process group, anything that left the group is
//! found by the run's marker and killed too, and what is left in the
//! cgroup is killed with it.

use super::programs_cpu::{programs_cpu_ns, CountedCpu};
use super::{CheckError, Load, LoadDef, LoadError};
use crate::measure::window::CpuTime;
use crate::system::cgroup::{self, CpuAccount};
use crate::system::{process_tree, procfs};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long one step waits before looking at the command again.
const STEP: Duration = Duration::from_millis(100);

/// The command's CPU time is counted in whole milliseconds: the worker's
/// own, read a moment apart from the cgroup's, leaves microseconds that an
/// idle command would otherwise count as work.
const RESOLUTION_NS: u64 = 1_000_000;

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "cmd",
    summary: "any command as a load: --load 'cmd:stress-ng --cpu 2' (no shell)",
    method: 1,
    unit: "CPU-s",
    takes_arg: true,
    disk_bytes: super::no_disk,
    check: |_, arg| parse(arg.unwrap_or_default()).map(drop),
    processes: |_| 1,
    build: |context| {
        let argv = parse(context.arg.as_deref().unwrap_or_default())?;
        process_tree::become_subreaper().map_err(LoadError::io(
            "cmd: cannot become the reaper of the command's orphans".to_string(),
        ))?;
        // Before the command starts, so that it starts in the cgroup.
        let account = enter_account();
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(&context.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(LoadError::io(format!("cannot start {}", argv[0])))?;
        Ok(Box::new(CommandLoad {
            root: child.id(),
            child,
            account,
            counted: CountedCpu::default(),
        }))
    },
    default: |_| false,
    uses: &[],
    job_cache: None,
};

/// Makes this worker's accounting cgroup and moves the worker into it;
/// `None` when either cannot be done.
fn enter_account() -> Option<CpuAccount> {
    let proc_root = Path::new("/proc");
    let pid = std::process::id();
    let start_ticks = procfs::read_process_stat(proc_root, pid).ok()?.start_ticks;
    let account = cgroup::make_cpu_account(proc_root, pid, start_ticks).ok()?;
    // A failed join drops the account again, which removes it.
    cgroup::join(&account.procs_file()).ok()?;
    Some(account)
}

/// Splits the command into arguments; an empty command is an error.
fn parse(command: &str) -> Result<Vec<String>, CheckError> {
    let argv = shell_words::split(command).map_err(CheckError::UnparsableCommand)?;
    if argv.is_empty() {
        return Err(CheckError::NoCommand);
    }
    Ok(argv)
}

struct CommandLoad {
    child: Child,
    root: u32,
    /// The cgroup the worker and the command run in, when it could be made.
    account: Option<CpuAccount>,
    /// The command's CPU time already counted as work.
    counted: CountedCpu,
}

impl Load for CommandLoad {
    fn step(&mut self) -> Result<f64, LoadError> {
        std::thread::sleep(STEP);
        if let Ok(Some(status)) = self.child.try_wait() {
            return Err(LoadError::CommandEnded(status));
        }
        // Orphans that ended: reaped, their CPU time moves to the worker's.
        process_tree::reap_exited_except(self.root);
        let total_ns = programs_cpu_ns(self);
        Ok(self.counted.count(total_ns, RESOLUTION_NS) as f64 / 1e9)
    }

    /// What the cgroup accounted (the worker is in it too), or else the
    /// worker's CPU time and its live descendants', a lower bound.
    fn cpu(&self, worker: CpuTime) -> CpuTime {
        if let Some(ns) = self.account.as_ref().and_then(|a| a.usage_ns().ok()) {
            return CpuTime::exact(ns);
        }
        let ticks = process_tree::descendants_cpu_ticks(Path::new("/proc"), std::process::id());
        worker.plus(CpuTime {
            ns: ticks * 1_000_000_000 / procfs::clock_ticks_per_s(),
            lower_bound: true,
        })
    }
}

impl Drop for CommandLoad {
    /// Kills and reaps the command; dropping the account afterwards kills
    /// whatever else is still in it.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_like_a_shell_without_one() {
        assert_eq!(
            parse("stress-ng --cpu 2").unwrap(),
            ["stress-ng", "--cpu", "2"]
        );
        assert_eq!(parse("sh -c 'a b'").unwrap(), ["sh", "-c", "a b"]);
        assert!(parse("  ").is_err());
        assert!(parse("unterminated 'quote").is_err());
    }
}
