//! The `fileio` probe's requests, done by a thread of their own: the probe
//! hands each one over and waits for it, but can stop waiting for one that
//! outlasts the window by too much (a write can take tens of seconds under
//! heavy write-back), so the scenario still ends with its figures. Each
//! request is timed around its system calls in the thread.

use crate::measure::clock::now_ns;
use crate::sim::uncached::{drop_cached_range, AlignedBuf};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt as _;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
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
/// buffer's length at `offset`.
#[derive(Debug, Clone, Copy)]
pub struct Order {
    pub write: bool,
    pub offset: u64,
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
}

impl RequestThread {
    /// Starts the thread, which does each order with `work` (returning how
    /// long it took).
    pub fn start(
        mut work: impl FnMut(Order) -> io::Result<u64> + Send + 'static,
    ) -> io::Result<Self> {
        let (orders, incoming) = mpsc::sync_channel::<Order>(1);
        let (outgoing, results) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("fb-fileio-io".into())
            .spawn(move || {
                for order in incoming {
                    if outgoing.send(work(order)).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Self {
            orders: Some(orders),
            results,
            thread: Some(thread),
        })
    }

    /// The thread doing requests on `target` with a buffer of
    /// `request_bytes`.
    pub fn on(target: Target, request_bytes: usize) -> io::Result<Self> {
        let mut buf = AlignedBuf::incompressible(request_bytes);
        Self::start(move |order| timed(&target, &mut buf, order))
    }

    /// Does `order`, waiting for it until `give_up_ns` (`CLOCK_MONOTONIC`).
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
                Ok(Outcome::Unfinished {
                    waited_ns: now_ns() - sent_ns,
                })
            }
            Err(RecvTimeoutError::Disconnected) => Err(gone()),
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

    const LATER_NS: u64 = u64::MAX / 2;

    fn thread_on(bytes: u64) -> RequestThread {
        let file = tempfile::tempfile().unwrap();
        file.set_len(bytes).unwrap();
        let target = Target {
            file,
            direct: false,
        };
        RequestThread::on(target, 4096).unwrap()
    }

    #[test]
    fn requests_are_done_and_timed() {
        let mut thread = thread_on(8192);
        for (write, offset) in [(true, 0), (false, 4096), (false, 0)] {
            let outcome = thread.request(Order { write, offset }, LATER_NS).unwrap();
            assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}");
        }
    }

    #[test]
    fn a_failed_request_is_an_error() {
        let mut thread = thread_on(4096);
        // Past the end of the file: the read comes back short.
        let order = Order {
            write: false,
            offset: 1 << 20,
        };
        assert!(thread.request(order, LATER_NS).is_err());
    }

    #[test]
    fn a_request_past_the_limit_is_left_unfinished() {
        let mut thread = RequestThread::start(|_| {
            std::thread::sleep(Duration::from_millis(300));
            Ok(1)
        })
        .unwrap();
        let order = Order {
            write: true,
            offset: 0,
        };
        let give_up_ns = now_ns() + 20_000_000;
        match thread.request(order, give_up_ns).unwrap() {
            Outcome::Unfinished { waited_ns } => assert!(waited_ns >= 20_000_000),
            done => panic!("{done:?}"),
        }
        assert!(thread.request(order, LATER_NS).is_err(), "no more orders");
    }
}
