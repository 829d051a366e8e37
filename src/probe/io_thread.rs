//! The `fileio` probe's requests, done by a thread of their own: the probe
//! hands each one over with the time it is due and waits for it, but can
//! stop waiting for one that outlasts the window by too much (a write can
//! take tens of seconds under heavy write-back), so the scenario still ends
//! with its figures. Each request is timed around its system calls in the
//! thread.
//!
//! The request thread is the one that waits for a request's time (it
//! sleeps until it is due) and does it, so its own clocks and counters are
//! the ones that explain where a request's time went: its wake-up, its
//! run-queue waits, the time it was blocked in the I/O. It splits each
//! request (`late_split`); the probe's thread only hands orders over, and
//! its own waits are not part of any request's time.

use super::late_split::LateSplit;
use crate::figures::LateCauses;
use crate::measure::attrib::Splitting;
use crate::measure::clock::{now_ns, sleep_until_ns};
use crate::measure::late::EventTimes;
use crate::measure::window::Window;
use crate::sim::uncached::{drop_cached_range, AlignedBuf};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt as _;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The file the requests go to, made before the window.
pub struct Target {
    pub file: File,
    /// Requests bypass the page cache (`O_DIRECT`); else reads drop their
    /// pages first.
    pub direct: bool,
}

/// One request: a read, or a write made durable (`fdatasync`), of a
/// buffer's length at `offset`, done once it is due (`CLOCK_MONOTONIC`).
#[derive(Debug, Clone, Copy)]
pub struct Order {
    pub write: bool,
    pub offset: u64,
    pub due_ns: u64,
}

/// How the request thread splits its requests: into `late`, a request
/// being late when it is done more than `late_after_ns` after it was due.
#[derive(Debug)]
pub struct SplitRule {
    pub late: LateSplit,
    pub late_after_ns: u64,
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It took this long.
    Done { took_ns: u64 },
    /// It had been running at least this long when the probe stopped
    /// waiting.
    Unfinished { waited_ns: u64 },
}

/// A thread that does requests one at a time.
pub struct RequestThread {
    orders: Option<SyncSender<Order>>,
    results: Receiver<io::Result<u64>>,
    thread: Option<JoinHandle<()>>,
    /// The thread's split of its requests, once it has opened it; locked
    /// by the thread only while it takes a reading.
    splitting: Arc<Mutex<Option<Splitting>>>,
    /// Whether a request was left unfinished (it is not split).
    left_running: bool,
}

impl RequestThread {
    /// Starts the thread, which does each order with `work` (returning how
    /// long it took) once it is due, and splits it by `rule`.
    pub fn start(
        rule: SplitRule,
        mut work: impl FnMut(Order) -> io::Result<u64> + Send + 'static,
    ) -> io::Result<Self> {
        let (orders, incoming) = mpsc::sync_channel::<Order>(1);
        let (outgoing, results) = mpsc::sync_channel(1);
        let splitting = Arc::new(Mutex::new(None));
        let shared = Arc::clone(&splitting);
        let thread = std::thread::Builder::new()
            .name("fb-fileio-io".into())
            .spawn(move || {
                // Opened here: the readings are of this thread. Said once
                // opened, so that the window can be given to it.
                set(&shared, rule.late.open_before_window());
                if outgoing.send(Ok(0)).is_err() {
                    return;
                }
                for order in incoming {
                    sleep_until_ns(order.due_ns);
                    with(&shared, Splitting::woke);
                    let took = work(order);
                    let times = EventTimes {
                        due_ns: order.due_ns,
                        cpu_wanted_ns: None,
                    };
                    let deadline_ns = order.due_ns.saturating_add(rule.late_after_ns);
                    with(&shared, |s| s.ended_by(times, deadline_ns));
                    if outgoing.send(took).is_err() {
                        break;
                    }
                }
            })?;
        results.recv().map_err(|_| gone())??;
        Ok(Self {
            orders: Some(orders),
            results,
            thread: Some(thread),
            splitting,
            left_running: false,
        })
    }

    /// The thread doing requests on `target` with a buffer of
    /// `request_bytes`, splitting them by `rule`.
    pub fn on(target: Target, request_bytes: usize, rule: SplitRule) -> io::Result<Self> {
        let mut buf = AlignedBuf::incompressible(request_bytes);
        Self::start(rule, move |order| timed(&target, &mut buf, order))
    }

    /// Does `order` once it is due, waiting for it until `give_up_ns`
    /// (`CLOCK_MONOTONIC`).
    pub fn request(&mut self, order: Order, give_up_ns: u64) -> io::Result<Outcome> {
        let sent_ns = now_ns();
        let orders = self.orders.as_ref().ok_or_else(gone)?;
        orders.send(order).map_err(|_| gone())?;
        let wait = Duration::from_nanos(give_up_ns.saturating_sub(sent_ns));
        match self.results.recv_timeout(wait) {
            Ok(took) => Ok(Outcome::Done { took_ns: took? }),
            Err(RecvTimeoutError::Timeout) => {
                // Left running, and no more orders: its thread ends with
                // the process.
                self.orders = None;
                self.thread = None;
                self.left_running = true;
                Ok(Outcome::Unfinished {
                    waited_ns: now_ns().saturating_sub(sent_ns.max(order.due_ns)),
                })
            }
            Err(RecvTimeoutError::Disconnected) => Err(gone()),
        }
    }

    /// Counts its requests per sub-window of `window` from now on.
    pub fn set_window(&self, window: Window) {
        with(&self.splitting, |s| s.set_window(window));
    }

    /// Why its requests were late, by `rule` (in words); `None` without
    /// the split.
    pub fn late_causes(&self, rule: &str) -> Option<LateCauses> {
        let guard = self.splitting.lock().ok()?;
        let mut late = LateCauses::of_splitting(guard.as_ref()?, rule)?;
        if self.left_running {
            late.notices.push(
                "the request still running when the probe stopped waiting is not split".to_string(),
            );
        }
        Some(late)
    }
}

/// Stores the thread's split once it is open.
fn set(shared: &Mutex<Option<Splitting>>, splitting: Splitting) {
    if let Ok(mut guard) = shared.lock() {
        *guard = Some(splitting);
    }
}

/// Takes a reading with the thread's split.
fn with<T>(shared: &Mutex<Option<Splitting>>, read: impl FnOnce(&mut Splitting) -> T) {
    if let Ok(mut guard) = shared.lock() {
        if let Some(splitting) = guard.as_mut() {
            read(splitting);
        }
    }
}

impl Drop for RequestThread {
    fn drop(&mut self) {
        // Without orders the thread ends; one still in a request is not
        // waited for.
        self.orders = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn gone() -> io::Error {
    io::Error::other("the request thread ended")
}

/// Does `order` on `target` and returns how long its read, or its write and
/// `fdatasync`, took.
fn timed(target: &Target, buf: &mut AlignedBuf, order: Order) -> io::Result<u64> {
    let len = buf.as_slice().len() as u64;
    if !order.write && !target.direct {
        drop_cached_range(&target.file, order.offset, len)?;
    }
    let started_ns = now_ns();
    if order.write {
        target.file.write_all_at(buf.as_slice(), order.offset)?;
        target.file.sync_data()?;
    } else {
        target
            .file
            .read_exact_at(buf.as_mut_slice(), order.offset)?;
    }
    Ok(now_ns() - started_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::sim::WorkParams;

    const LATER_NS: u64 = u64::MAX / 2;
    const MS: u64 = 1_000_000;

    /// Splitting, a request late past `late_after_ns`.
    fn rule(late_after_ns: u64) -> SplitRule {
        SplitRule {
            late: LateSplit::new(&WorkParams::for_tests()),
            late_after_ns,
        }
    }

    fn thread_on(bytes: u64) -> RequestThread {
        let file = tempfile::tempfile().unwrap();
        file.set_len(bytes).unwrap();
        let target = Target {
            file,
            direct: false,
        };
        RequestThread::on(target, 4096, rule(LATER_NS)).unwrap()
    }

    #[test]
    fn requests_are_done_and_timed_when_due_and_split() {
        let mut thread = thread_on(8192);
        let first_due_ns = now_ns() + 5 * MS;
        for (k, (write, offset)) in [(true, 0), (false, 4096), (false, 0)]
            .into_iter()
            .enumerate()
        {
            let due_ns = first_due_ns + k as u64 * MS;
            let order = Order {
                write,
                offset,
                due_ns,
            };
            let outcome = thread.request(order, LATER_NS).unwrap();
            assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}");
            assert!(now_ns() >= due_ns, "done before it was due");
        }
        let late = thread.late_causes("rule").unwrap();
        assert_eq!((late.events(), late.late()), (3, 0));
        assert!(late.notices.iter().all(|n| !n.contains("still running")));
    }

    #[test]
    fn a_failed_request_is_an_error() {
        let mut thread = thread_on(4096);
        // Past the end of the file: the read comes back short.
        let order = Order {
            write: false,
            offset: 1 << 20,
            due_ns: 0,
        };
        assert!(thread.request(order, LATER_NS).is_err());
    }

    #[test]
    fn a_slow_request_is_late_by_the_rule_and_its_time_is_in_its_parts() {
        let mut thread = RequestThread::start(rule(MS), |_| {
            std::thread::sleep(Duration::from_millis(5));
            Ok(1)
        })
        .unwrap();
        let order = Order {
            write: false,
            offset: 0,
            due_ns: now_ns(),
        };
        thread.request(order, LATER_NS).unwrap();
        let late = thread.late_causes("rule").unwrap();
        assert_eq!((late.events(), late.late()), (1, 1));
        let event = &late.worst[0];
        assert!(event.delay_ns() >= 5 * MS, "{event:?}");
        let on_cpu = event.cpu_used_ns.min(event.ended_ns - event.woke_ns);
        assert_eq!(event.delay_ns(), event.ended_ns - event.due_ns - on_cpu);
        // The thread slept in the request: blocked, by its own counters.
        assert!(event.parts.blocked_ns >= 4 * MS, "{event:?}");
    }

    #[test]
    fn a_request_past_the_limit_is_left_unfinished() {
        let mut thread = RequestThread::start(rule(LATER_NS), |_| {
            std::thread::sleep(Duration::from_millis(300));
            Ok(1)
        })
        .unwrap();
        let order = Order {
            write: true,
            offset: 0,
            due_ns: 0,
        };
        let give_up_ns = now_ns() + 20_000_000;
        match thread.request(order, give_up_ns).unwrap() {
            Outcome::Unfinished { waited_ns } => assert!(waited_ns >= 20_000_000),
            done => panic!("{done:?}"),
        }
        assert!(thread.request(order, LATER_NS).is_err(), "no more orders");
        let late = thread.late_causes("rule").unwrap();
        assert_eq!(late.events(), 0);
        assert!(late.notices.iter().any(|n| n.contains("still running")));
    }
}
