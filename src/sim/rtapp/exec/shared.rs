//! The named resources the threads of a workload share: timers, barriers,
//! suspend points, mutexes and condition variables, each made once when
//! the executor is built (so events look them up, never create them). Every
//! wait ends at the workload's deadline at the latest, which a stop brings
//! forward (`Deadline`, `Shared::wake_all`).

use super::timer::TimerGrid;
use crate::measure::clock::now_ns;
use crate::sim::rtapp::model::{Event, Workload};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// When the threads of an execution begin no more events and every wait
/// ends: set when it starts, brought forward when it is stopped.
#[derive(Debug)]
pub struct Deadline(AtomicU64);

impl Deadline {
    /// A deadline at `ns` (`CLOCK_MONOTONIC`).
    pub fn at(ns: u64) -> Self {
        Self(AtomicU64::new(ns))
    }

    /// The deadline now, ns.
    pub fn ns(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// Brings the deadline forward to `ns`, if that is earlier.
    pub fn bring_forward(&self, ns: u64) {
        self.0.fetch_min(ns, Ordering::AcqRel);
    }
}

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

    /// Waits, with `guard` held, until `done` holds or `deadline` passed
    /// (read again at each wake-up, so one brought forward and followed by
    /// [`Gate::wake`] ends the wait); returns the guard and whether `done`
    /// holds.
    pub fn wait_until<'a>(
        &self,
        mut guard: MutexGuard<'a, T>,
        deadline: &Deadline,
        mut done: impl FnMut(&T) -> bool,
    ) -> (MutexGuard<'a, T>, bool) {
        while !done(&guard) {
            let now = now_ns();
            let deadline_ns = deadline.ns();
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

    /// Wakes every waiter with the lock taken, so that a waiter that read
    /// the deadline before it was brought forward is already waiting and
    /// sees it (no wake-up lost between its reading and its wait).
    fn wake(&self) {
        let _held = self.lock();
        self.changed.notify_all();
    }
}

/// A barrier: how many threads it waits for, and how many times it opened.
#[derive(Debug, Default)]
pub struct BarrierState {
    pub arrived: usize,
    pub generation: u64,
}

/// A suspend name: a suspended thread waits for the resumes to move.
#[derive(Debug, Default)]
pub struct SuspendState {
    /// Resumes so far.
    resumes: u64,
    /// Threads suspended now.
    suspended: usize,
}

/// Every named resource of a workload.
#[derive(Debug, Default)]
pub struct Shared {
    timers: HashMap<String, Mutex<TimerGrid>>,
    barriers: HashMap<String, (usize, Gate<BarrierState>)>,
    /// Each suspend name's resumes and the threads suspended on it.
    suspends: HashMap<String, Gate<SuspendState>>,
    /// Whether each mutex is held.
    mutexes: HashMap<String, Gate<bool>>,
    /// Each condition's waiters and the wake-ups it owes them.
    conds: HashMap<String, Gate<CondState>>,
}

/// A condition variable's waiters, as pthread's: a signal wakes one
/// thread waiting at that moment, a broadcast every one, and neither is
/// kept for a thread that waits later. Each waiter takes a ticket; a
/// signal releases the oldest ticket not yet released, so a thread that
/// comes to wait after a signal cannot take the wake-up it owed an earlier
/// one.
#[derive(Debug, Default)]
pub struct CondState {
    /// Tickets handed out: the next waiter takes this one.
    next: u64,
    /// Tickets below this are released.
    released: u64,
}

impl Shared {
    /// The resources `workload` names; a barrier waits for as many
    /// arrivals as it has references, each counted once per thread started
    /// at once (rt-app counts one user per `barrier` event of each thread).
    pub fn of(workload: &Workload) -> Self {
        let mut shared = Self::default();
        for task in &workload.tasks {
            for event in task.phases.iter().flat_map(|p| &p.events) {
                match event {
                    Event::Timer { name, .. } if !is_unique(name) => {
                        shared.timers.entry(name.clone()).or_default();
                    }
                    Event::Barrier { name } => {
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
    pub fn barrier(&self, name: &str, deadline: &Deadline) -> bool {
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
        gate.wait_until(state, deadline, |s| s.generation != generation)
            .1
    }

    /// Waits until `name` is next resumed; false at the deadline. As
    /// rt-app's `suspend` (a condition wait with no predicate): a resume
    /// that came before the suspend is lost.
    pub fn suspend(&self, name: &str, deadline: &Deadline) -> bool {
        let gate = &self.suspends[name];
        let mut state = gate.lock();
        state.suspended += 1;
        let resumes = state.resumes;
        let (mut state, resumed) = gate.wait_until(state, deadline, |s| s.resumes != resumes);
        state.suspended -= 1;
        resumed
    }

    /// Resumes every thread suspended on `name` now (rt-app's `resume`, a
    /// broadcast); nothing is kept for a thread that suspends later.
    pub fn resume(&self, name: &str) {
        let gate = &self.suspends[name];
        let mut state = gate.lock();
        state.resumes = state.resumes.wrapping_add(1);
        gate.notify_all();
    }

    /// Takes mutex `name`; false at the deadline.
    pub fn lock(&self, name: &str, deadline: &Deadline) -> bool {
        let gate = &self.mutexes[name];
        let (mut held, taken) = gate.wait_until(gate.lock(), deadline, |held| !held);
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
    pub fn wait(&self, cond: &str, mutex: &str, deadline: &Deadline) -> bool {
        let gate = &self.conds[cond];
        let mut state = gate.lock();
        let ticket = state.next;
        state.next += 1;
        self.unlock(mutex);
        let (mut state, signalled) = gate.wait_until(state, deadline, |s| s.released > ticket);
        if !signalled && state.released == ticket {
            // Gave up at the deadline: its ticket owes nothing.
            state.released += 1;
        }
        drop(state);
        signalled && self.lock(mutex, deadline)
    }

    /// Signals `cond`: wakes the oldest of the threads waiting on it or,
    /// with `all` (rt-app's `broad`), every one; nothing when none waits.
    pub fn signal(&self, cond: &str, all: bool) {
        let gate = &self.conds[cond];
        let mut state = gate.lock();
        state.released = match all {
            true => state.next,
            false => (state.released + 1).min(state.next),
        };
        drop(state);
        gate.notify_all();
    }

    /// Wakes every thread waiting on any resource, to see a deadline
    /// brought forward.
    pub fn wake_all(&self) {
        self.barriers.values().for_each(|(_, gate)| gate.wake());
        self.suspends.values().for_each(Gate::wake);
        self.mutexes.values().for_each(Gate::wake);
        self.conds.values().for_each(Gate::wake);
    }

    /// Threads waiting on `cond` now (its tickets not yet released).
    #[cfg(test)]
    fn waiting(&self, cond: &str) -> u64 {
        let state = self.conds[cond].lock();
        state.next - state.released
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
    fn a_barrier_waits_for_each_reference_of_each_instance() {
        let barrier = || Event::Barrier {
            name: "b".to_string(),
        };
        let twice = Workload::of_tasks(vec![
            Task::looping("a", 2, vec![barrier(), Event::Yield, barrier()]),
            Task::looping("c", 1, vec![barrier()]),
        ]);
        assert_eq!(Shared::of(&twice).barriers["b"].0, 5);
        let w = Workload::of_tasks(vec![
            Task::looping("a", 2, vec![barrier()]),
            Task::looping("c", 1, vec![barrier()]),
        ]);
        let shared = Arc::new(Shared::of(&w));
        assert_eq!(shared.barriers["b"].0, 3);
        let far = || Deadline::at(now_ns() + 10_000_000_000);
        let others: Vec<_> = (0..2)
            .map(|_| {
                let s = Arc::clone(&shared);
                std::thread::spawn(move || s.barrier("b", &far()))
            })
            .collect();
        assert!(shared.barrier("b", &far()));
        assert!(others.into_iter().all(|t| t.join().unwrap()));
    }

    /// rt-app's suspend and resume: a resume before the suspend is lost
    /// (the suspend waits to the deadline), one resume wakes every thread
    /// suspended on the name.
    /// The resources of a task `a` of `instances` threads suspending on
    /// `a`.
    fn suspending(instances: u32) -> Arc<Shared> {
        let w = Workload::of_tasks(vec![Task::looping(
            "a",
            instances,
            vec![Event::Suspend {
                name: "a".to_string(),
            }],
        )]);
        Arc::new(Shared::of(&w))
    }

    #[test]
    fn a_resume_wakes_every_suspended_thread_and_an_early_one_is_lost() {
        let shared = suspending(2);
        shared.resume("a");
        let soon = Deadline::at(now_ns() + 50_000_000);
        assert!(!shared.suspend("a", &soon), "the early resume was lost");
        let deadline_ns = now_ns() + 5_000_000_000;
        let suspended: Vec<_> = (0..2)
            .map(|_| {
                let s = Arc::clone(&shared);
                std::thread::spawn(move || s.suspend("a", &Deadline::at(deadline_ns)))
            })
            .collect();
        while shared.suspends["a"].lock().suspended < 2 {
            std::thread::yield_now();
        }
        shared.resume("a");
        let woken: Vec<bool> = suspended.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(woken, [true, true], "one resume woke both");
        assert!(now_ns() < deadline_ns, "before the deadline");
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
                    let deadline = Deadline::at(deadline_ns);
                    s.lock("m", &deadline);
                    let woken = s.wait("c", "m", &deadline);
                    s.unlock("m");
                    woken
                })
            })
            .collect();
        while shared.waiting("c") < 2 {
            std::thread::yield_now();
        }
        (shared, waiters)
    }

    #[test]
    fn a_signal_wakes_one_waiter_and_a_broadcast_every_one() {
        let (shared, waiters) = two_waiters();
        shared.signal("c", false);
        assert_eq!(shared.waiting("c"), 1, "one wake-up");
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
        assert_eq!(shared.waiting("c"), 0);
    }

    /// A thread that comes to wait after a signal does not take the
    /// wake-up that signal owed the threads waiting then: one of those is
    /// woken, the later one waits on (to its deadline here).
    #[test]
    fn a_signal_wakes_a_thread_waiting_then_not_a_later_one() {
        let (shared, waiters) = two_waiters();
        shared.signal("c", false);
        let later = {
            let s = Arc::clone(&shared);
            std::thread::spawn(move || {
                let deadline = Deadline::at(now_ns() + 300_000_000);
                s.lock("m", &deadline);
                let woken = s.wait("c", "m", &deadline);
                s.unlock("m");
                woken
            })
        };
        assert!(!later.join().unwrap(), "the later waiter was not woken");
        shared.signal("c", true);
        assert!(waiters.into_iter().all(|w| w.join().unwrap()));
    }

    /// A stop: the deadline brought forward and every waiter woken ends a
    /// wait that had no deadline in sight, at once.
    #[test]
    fn a_deadline_brought_forward_ends_the_waits() {
        let shared = suspending(1);
        let deadline = Arc::new(Deadline::at(u64::MAX));
        let suspended = {
            let (s, d) = (Arc::clone(&shared), Arc::clone(&deadline));
            std::thread::spawn(move || s.suspend("a", &d))
        };
        while shared.suspends["a"].lock().suspended < 1 {
            std::thread::yield_now();
        }
        deadline.bring_forward(now_ns());
        deadline.bring_forward(u64::MAX);
        assert!(deadline.ns() < u64::MAX, "never pushed back");
        shared.wake_all();
        assert!(
            !suspended.join().unwrap(),
            "ended by the deadline, not resumed"
        );
    }
}
