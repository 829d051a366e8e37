//! CPU affinity (`--probe-cpus`, `--load-cpus`): a worker sets it on its
//! only thread before it starts working, so every thread it starts later and
//! every process a load spawns (affinity is inherited across fork and exec)
//! runs on the same CPUs; and reads it back, for the record of where it ran.

use crate::system::cpulist::CpuList;
use nix::errno::Errno;
use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// Why an affinity could not be set or read.
#[derive(Debug, thiserror::Error)]
pub enum AffinityError {
    /// sched_setaffinity refused the list (EINVAL: none of its CPUs is
    /// allowed to this process, e.g. by its cpuset).
    #[error("cannot run on CPUs {cpus}: sched_setaffinity: {error} (a cpuset may keep this process off them)")]
    Set { cpus: CpuList, error: Errno },
    /// sched_getaffinity failed.
    #[error("cannot read the CPU affinity: sched_getaffinity: {error}")]
    Get { error: Errno },
}

/// Restricts the calling thread (and what it starts from now on) to `cpus`
/// and returns the affinity read back.
pub fn set(cpus: &CpuList) -> Result<CpuList, AffinityError> {
    let failed = |error| AffinityError::Set {
        cpus: cpus.clone(),
        error,
    };
    let mut set = CpuSet::new();
    for cpu in cpus.cpus() {
        // EINVAL for a CPU number beyond what a cpu_set_t holds.
        set.set(cpu).map_err(failed)?;
    }
    // Pid 0: the calling thread.
    sched_setaffinity(Pid::from_raw(0), &set).map_err(failed)?;
    current()
}

/// The CPUs the calling thread may run on.
pub fn current() -> Result<CpuList, AffinityError> {
    of_thread(0)
}

/// The CPUs thread `tid` (0: the caller) may run on.
pub fn of_thread(tid: i32) -> Result<CpuList, AffinityError> {
    let set =
        sched_getaffinity(Pid::from_raw(tid)).map_err(|error| AffinityError::Get { error })?;
    let cpus = (0..CpuSet::count()).filter(|&cpu| set.is_set(cpu).unwrap_or(false));
    // A thread always may run somewhere.
    CpuList::from_cpus(cpus).ok_or(AffinityError::Get {
        error: Errno::EINVAL,
    })
}

/// Checks, in a throwaway thread, that the workers may be put on `cpus`,
/// so a run whose cpuset forbids them fails at once instead of in every
/// scenario.
pub fn check_allowed(cpus: &CpuList) -> Result<(), AffinityError> {
    let cpus = cpus.clone();
    std::thread::Builder::new()
        .name("fb-cpus-check".into())
        .spawn(move || set(&cpus).map(drop))
        .expect("starting a thread")
        .join()
        .expect("the check thread does not panic")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_runs_where_it_is_put_and_the_caller_is_left_alone() {
        let before = current().unwrap();
        let first: CpuList = before.cpus().next().unwrap().to_string().parse().unwrap();
        check_allowed(&first).unwrap();
        assert_eq!(
            current().unwrap(),
            before,
            "the check leaves the caller alone"
        );
        let applied = std::thread::spawn(move || set(&first))
            .join()
            .unwrap()
            .unwrap();
        assert_eq!(applied.cpus().count(), 1);
    }

    #[test]
    fn cpus_beyond_the_set_are_refused_with_the_list() {
        let far: CpuList = "4096".parse().unwrap();
        let err = check_allowed(&far).unwrap_err().to_string();
        assert!(err.starts_with("cannot run on CPUs 4096"), "{err}");
    }
}
