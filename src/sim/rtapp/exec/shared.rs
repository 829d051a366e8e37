//! The named resources the threads of a workload share: timers, barriers,
//! suspend points, mutexes and condition variables, each made once when
//! the executor is built (so events look them up, never create them). Every
//! wait ends at the workload's deadline at the latest.

use super::timer::TimerGrid;
use crate::measure::clock::now_ns;
use crate::sim::rtapp::model::{Event, Workload};
use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// A flag or counter behind a mutex, with a condition variable to wait for
/// it to change.
#[derive(Debug, Default)]
pub struct Gate<T> {
    state: Mutex<T>,
    changed: Condvar,
}

impl<T> Gate<T> {
    /// The state, locked (a poisoned lock is still used: the threads only
    /// count).
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits, with `guard` held, until `done` holds or `deadline_ns`
    /// passed; returns the guard and whether `done` holds.
    pub fn wait_until<'a>(
        &self,
        mut guard: MutexGuard<'a, T>,
        deadline_ns: u64,
        mut done: impl FnMut(&T) -> bool,
    ) -> (MutexGuard<'a, T>, bool) {
        while !done(&guard) {
            let now = now_ns();
            if now >= deadline_ns {
                return (guard, false);
            }
            let wait = Duration::from_nanos(deadline_ns - now);
            guard = match self.changed.wait_timeout(guard, wait) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        (guard, true)
    }

    /// Wakes every waiter.
    pub fn notify_all(&self) {
        self.changed.notify_all();
    }
}

/// A barrier: how many threads it waits for, and how many times it opened.
#[derive(Debug, Default)]
pub struct BarrierState {
    pub arrived: usize,
    pub generation: u64,
}

/// Every named resource of a workload.
#[derive(Debug, Default)]
pub struct Shared {
    timers: HashMap<String, Mutex<TimerGrid>>,
    barriers: HashMap<String, (usize, Gate<BarrierState>)>,
    /// Pending resumes per suspend name.
    suspends: HashMap<String, Gate<u64>>,
    /// Whether each mutex is held.
    mutexes: HashMap<String, Gate<bool>>,
    /// Each condition's waiters and the wake-ups it owes them.
    conds: HashMap<String, Gate<CondState>>,
}

/// A condition variable's waiters, as pthread's: a signal wakes one
/// thread waiting at that moment, a broadcast every one, and neither is
/// kept for a thread that waits later.
#[derive(Debug, Default)]
pub struct CondState {
    /// Threads waiting now.
    waiting: u64,
    /// Wake-ups signalled and not yet taken (never more than `waiting`).
    owed: u64,
}

impl Shared {
    /// The resources `workload` names; a barrier waits for every thread
    /// started at once (instances) of the tasks that use it.
    pub fn of(workload: &Workload) -> Self {
        let mut shared = Self::default();
        for task in &workload.tasks {
            let mut barriers_of_task: Vec<&str> = Vec::new();
            for event in task.phases.iter().flat_map(|p| &p.events) {
                match event {
                    Event::Timer { name, .. } if !is_unique(name) => {
                        shared.timers.entry(name.clone()).or_default();
                    }
                    Event::Barrier { name } if !barriers_of_task.contains(&name.as_str()) => {
                        barriers_of_task.push(name);
                        let entry = shared.barriers.entry(name.clone()).or_default();
                        entry.0 += task.instances as usize;
                    }
                    Event::Suspend { name } | Event::Resume { name } => {
                        shared.suspends.entry(name.clone()).or_default();
                    }
                    Event::Lock { mutex } | Event::Unlock { mutex } => {
                        shared.mutexes.entry(mutex.clone()).or_default();
                    }
                    Event::Wait { cond, mutex } | Event::Sync { cond, mutex } => {
                        shared.mutexes.entry(mutex.clone()).or_default();
                        shared.conds.entry(cond.clone()).or_default();
                    }
                    Event::Signal { cond } | Event::Broad { cond } => {
                        shared.conds.entry(cond.clone()).or_default();
                    }
                    _ => {}
                }
            }
        }
        shared
    }

    /// The shared timer `name` (`None` for a thread's own `unique…` one).
    pub fn timer(&self, name: &str) -> Option<&Mutex<TimerGrid>> {
        self.timers.get(name)
    }

    /// Waits at barrier `name` until every thread using it arrived; false
    /// when the deadline came first.
    pub fn barrier(&self, name: &str, deadline_ns: u64) -> bool {
        let (parties, gate) = &self.barriers[name];
        let mut state = gate.lock();
        state.arrived += 1;
        if state.arrived >= *parties {
            state.arrived = 0;
            state.generation += 1;
            gate.notify_all();
            return true;
        }
        let generation = state.generation;
        gate.wait_until(state, deadline_ns, |s| s.generation != generation)
            .1
    }

    /// Waits until `name` is resumed (a resume before the suspend is kept,
    /// as rt-app's condition with its count); false at the deadline.
    pub fn suspend(&self, name: &str, deadline_ns: u64) -> bool {
        let gate = &self.suspends[name];
        let (mut pending, woken) = gate.wait_until(gate.lock(), deadline_ns, |n| *n > 0);
        if woken {
            *pending -= 1;
        }
        woken
    }

    /// Resumes the thread suspended on `name`.
    pub fn resume(&self, name: &str) {
        let gate = &self.suspends[name];
        *gate.lock() += 1;
        gate.notify_all();
    }

    /// Takes mutex `name`; false at the deadline.
    pub fn lock(&self, name: &str, deadline_ns: u64) -> bool {
        let gate = &self.mutexes[name];
        let (mut held, taken) = gate.wait_until(gate.lock(), deadline_ns, |held| !held);
        if taken {
            *held = true;
        }
        taken
    }

    /// Releases mutex `name`.
    pub fn unlock(&self, name: &str) {
        let gate = &self.mutexes[name];
        *gate.lock() = false;
        gate.notify_all();
    }

    /// Releases `mutex`, waits for a signal of `cond` and takes `mutex`
    /// again (pthread_cond_wait); false at the deadline.
    pub fn wait(&self, cond: &str, mutex: &str, deadline_ns: u64) -> bool {
        let gate = &self.conds[cond];
        let mut state = gate.lock();
        state.waiting += 1;
        self.unlock(mutex);
        let (mut state, signalled) = gate.wait_until(state, deadline_ns, |s| s.owed > 0);
        state.waiting -= 1;
        if signalled {
            state.owed -= 1;
        }
        drop(state);
        signalled && self.lock(mutex, deadline_ns)
    }

    /// Signals `cond`: wakes one of the threads waiting on it or, with
    /// `all` (rt-app's `broad`), every one; nothing when none waits.
    pub fn signal(&self, cond: &str, all: bool) {
        let gate = &self.conds[cond];
        let mut state = gate.lock();
        state.owed = match all {
            true => state.waiting,
            false => (state.owed + 1).min(state.waiting),
        };
        drop(state);
        gate.notify_all();
    }
}

/// Whether a timer of this name is each thread's own (rt-app: `unique`).
pub fn is_unique(name: &str) -> bool {
    name.starts_with("unique")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rtapp::model::{Task, TimerMode};
    use std::sync::Arc;

    #[test]
    fn timers_are_shared_by_name_except_unique_ones() {
        let timer = |name: &str| Event::Timer {
            name: name.to_string(),
            period_us: 10_000,
            mode: TimerMode::Absolute,
        };
        let w = Workload::of_tasks(vec![
            Task::looping("a", 1, vec![timer("tick"), timer("unique")]),
            Task::looping("b", 2, vec![timer("tick"), timer("unique_b")]),
        ]);
        let shared = Shared::of(&w);
        assert!(shared.timer("tick").is_some());
        assert!(shared.timer("unique").is_none() && shared.timer("unique_b").is_none());
    }

    #[test]
    fn a_barrier_waits_for_every_instance_of_its_tasks() {
        let barrier = || Event::Barrier {
            name: "b".to_string(),
        };
        let w = Workload::of_tasks(vec![
            Task::looping("a", 2, vec![barrier()]),
            Task::looping("c", 1, vec![barrier()]),
        ]);
        let shared = Arc::new(Shared::of(&w));
        assert_eq!(shared.barriers["b"].0, 3);
        let far = now_ns() + 10_000_000_000;
        let others: Vec<_> = (0..2)
            .map(|_| {
                let s = Arc::clone(&shared);
                std::thread::spawn(move || s.barrier("b", far))
            })
            .collect();
        assert!(shared.barrier("b", far));
        assert!(others.into_iter().all(|t| t.join().unwrap()));
    }

    #[test]
    fn a_resume_before_the_suspend_is_kept_and_waits_end_at_the_deadline() {
        let w = Workload::of_tasks(vec![Task::looping(
            "a",
            1,
            vec![Event::Suspend {
                name: "a".to_string(),
            }],
        )]);
        let shared = Shared::of(&w);
        assert!(!shared.suspend("a", now_ns()), "nothing resumed it");
        shared.resume("a");
        assert!(shared.suspend("a", now_ns()));
    }

    /// A workload whose two threads wait on `c` (with mutex `m`).
    fn two_waiters() -> (Arc<Shared>, Vec<std::thread::JoinHandle<bool>>) {
        let wait = Event::Wait {
            cond: "c".to_string(),
            mutex: "m".to_string(),
        };
        let w = Workload::of_tasks(vec![Task::looping("a", 2, vec![wait])]);
        let shared = Arc::new(Shared::of(&w));
        let deadline_ns = now_ns() + 2_000_000_000;
        let waiters = (0..2)
            .map(|_| {
                let s = Arc::clone(&shared);
                std::thread::spawn(move || {
                    s.lock("m", deadline_ns);
                    let woken = s.wait("c", "m", deadline_ns);
                    s.unlock("m");
                    woken
                })
            })
            .collect();
        while shared.conds["c"].lock().waiting < 2 {
            std::thread::yield_now();
        }
        (shared, waiters)
    }

    #[test]
    fn a_signal_wakes_one_waiter_and_a_broadcast_every_one() {
        let (shared, waiters) = two_waiters();
        shared.signal("c", false);
        while shared.conds["c"].lock().waiting > 1 {
            std::thread::yield_now();
        }
        assert_eq!(shared.conds["c"].lock().owed, 0, "one wake-up, taken");
        shared.signal("c", true);
        let woken = waiters
            .into_iter()
            .map(|w| w.join().unwrap())
            .filter(|w| *w)
            .count();
        assert_eq!(woken, 2);
    }

    #[test]
    fn a_signal_with_no_waiter_is_lost() {
        let w = Workload::of_tasks(vec![Task::looping(
            "a",
            1,
            vec![Event::Signal {
                cond: "c".to_string(),
            }],
        )]);
        let shared = Shared::of(&w);
        shared.signal("c", false);
        assert_eq!(shared.conds["c"].lock().owed, 0);
    }
}
