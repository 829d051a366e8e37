//! A phase's scheduling (policy, priority or nice, CPUs) applied to the
//! calling thread, as rt-app sets it when a phase begins: the phase's own
//! settings over the task's, over the workload's default policy; a phase
//! that gives no policy keeps the one the thread runs under (rt-app
//! master: the previous phase's), see [`policy`].

use crate::measure::affinity;
use crate::measure::sched::{set_nice, SchedError};
use crate::sim::rtapp::model::{Policy, Sched};
use crate::system::cpulist::CpuList;
use std::io;

/// The settings a phase runs with: `phase` over `task`, the policy
/// falling back to `default`; `None` when neither names any and the
/// default is SCHED_OTHER: the thread then keeps the scheduling it was
/// started with (the probe's `--nice`/`--rt`, the load's nice).
pub fn effective(phase: &Sched, task: &Sched, default: Policy) -> Option<Sched> {
    let sched = Sched {
        policy: phase.policy.or(task.policy),
        priority: phase.priority.or(task.priority),
        cpus: phase.cpus.clone().or_else(|| task.cpus.clone()),
    };
    if sched == Sched::default() && default == Policy::SchedOther {
        return None;
    }
    Some(Sched {
        policy: sched.policy.or(Some(default)),
        ..sched
    })
}

/// The policy a phase of settings `phase` (its own) and `effective` (see
/// [`effective`]) runs under when the thread runs under `now` (the policy
/// an earlier phase set; `None` before any): its own, else `now`, else
/// its task's or the default.
pub fn policy(phase: &Sched, effective: &Sched, now: Option<Policy>) -> Policy {
    phase
        .policy
        .or(now)
        .or(effective.policy)
        .unwrap_or(Policy::SchedOther)
}

/// Applies `sched` under `policy` to the calling thread; the error says
/// which setting failed and why (real-time policies and lower nice values
/// need root).
pub fn apply(sched: &Sched, policy: Policy) -> Result<(), String> {
    let (class, rt_priority) = match policy {
        Policy::SchedOther => (libc::SCHED_OTHER, 0),
        Policy::SchedBatch => (libc::SCHED_BATCH, 0),
        Policy::SchedIdle => (libc::SCHED_IDLE, 0),
        Policy::SchedFifo => (libc::SCHED_FIFO, sched.priority.unwrap_or(10)),
        Policy::SchedRr => (libc::SCHED_RR, sched.priority.unwrap_or(10)),
    };
    let param = libc::sched_param {
        sched_priority: rt_priority,
    };
    // SAFETY: `param` is a valid sched_param that outlives the call; pid 0
    // is the calling thread.
    if unsafe { libc::sched_setscheduler(0, class, &param) } != 0 {
        return Err(format!(
            "cannot switch to {policy:?} priority {rt_priority}: {} (real-time scheduling needs root or CAP_SYS_NICE)",
            io::Error::last_os_error()
        ));
    }
    if rt_priority == 0 {
        if let Some(nice) = sched.priority {
            set_nice(nice).map_err(|e: SchedError| e.to_string())?;
        }
    }
    if let Some(cpus) = &sched.cpus {
        let list = CpuList::from_cpus(cpus.iter().copied())
            .ok_or_else(|| "an empty list of CPUs".to_string())?;
        affinity::set(&list).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_overrides_its_task_which_overrides_the_default() {
        let task = Sched {
            policy: Some(Policy::SchedFifo),
            priority: Some(20),
            cpus: Some(vec![0]),
        };
        let phase = Sched {
            priority: Some(30),
            ..Sched::default()
        };
        let e = effective(&phase, &task, Policy::SchedOther).unwrap();
        assert_eq!(e.policy, Some(Policy::SchedFifo));
        assert_eq!((e.priority, e.cpus), (Some(30), Some(vec![0])));
        let none = Sched::default();
        let plain = effective(&none, &none, Policy::SchedBatch).unwrap();
        assert_eq!(plain.policy, Some(Policy::SchedBatch));
        assert_eq!(
            effective(&none, &none, Policy::SchedOther),
            None,
            "left alone"
        );
    }

    /// rt-app master: a phase that gives a priority but no policy keeps the
    /// policy the previous phase set, not its task's.
    #[test]
    fn a_phase_without_a_policy_keeps_the_one_the_thread_runs_under() {
        let task = Sched::default();
        let only_priority = Sched {
            priority: Some(5),
            ..Sched::default()
        };
        let e = effective(&only_priority, &task, Policy::SchedOther).unwrap();
        assert_eq!(
            policy(&only_priority, &e, Some(Policy::SchedFifo)),
            Policy::SchedFifo
        );
        assert_eq!(policy(&only_priority, &e, None), Policy::SchedOther);
        let fifo = Sched {
            policy: Some(Policy::SchedRr),
            ..Sched::default()
        };
        let e = effective(&fifo, &task, Policy::SchedOther).unwrap();
        assert_eq!(policy(&fifo, &e, Some(Policy::SchedFifo)), Policy::SchedRr);
    }
}
