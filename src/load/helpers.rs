//! Helper processes that a load worker forks in its `build`, while it is still
//! single-threaded: hack's senders and receivers, ctxmem's ring. A helper dies
//! with its worker (`PR_SET_PDEATHSIG`), stays in the scenario's process group
//! (so the orchestrator's kill reaches it), counts its work in a counter of
//! its own in memory shared with the worker, and never returns into the
//! worker's code. The worker adds up the counters, reads the helpers' CPU
//! time (they are reaped only at the end, so `RUSAGE_CHILDREN` misses them),
//! notices a helper that ended, and kills and reaps them all when dropped.

use super::{Load, LoadError};
use crate::measure::window::CpuTime;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::time::{clock_gettime, ClockId};
use nix::unistd::{fork, getpid, getppid, ForkResult, Pid};
use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How long the worker sleeps between looks at its helpers' counters.
const STEP: Duration = Duration::from_millis(2);

/// One helper's counter, alone on its cache line so that helpers counting
/// do not slow each other down.
#[repr(align(64))]
struct Slot(AtomicU64);

/// Counters in an anonymous shared mapping, made before forking so that the
/// worker and its helpers see the same memory.
struct SharedSlots {
    ptr: *mut Slot,
    len: usize,
}

impl SharedSlots {
    fn new(len: usize) -> Result<Self, LoadError> {
        let bytes = len.max(1) * size_of::<Slot>();
        // SAFETY: a new anonymous mapping (no file, no address hint); the
        // result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(LoadError::Io {
                what: format!(
                    "cannot map {bytes} bytes of memory shared with the helper processes"
                ),
                error: std::io::Error::last_os_error(),
            });
        }
        Ok(Self {
            ptr: ptr.cast(),
            len,
        })
    }

    /// Counter number `index`.
    fn counter(&self, index: usize) -> &AtomicU64 {
        &self.slots()[index].0
    }

    /// The sum of all counters.
    fn sum(&self) -> u64 {
        self.slots()
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .sum()
    }

    fn slots(&self) -> &[Slot] {
        // SAFETY: the mapping is page-aligned (so aligned for `Slot`),
        // zero-filled (a valid `AtomicU64` 0), `len` slots long, and unmapped
        // only when `self` is dropped; other processes change it only through
        // the atomics.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for SharedSlots {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`; no reference into
        // it outlives `self`.
        unsafe { libc::munmap(self.ptr.cast(), self.len.max(1) * size_of::<Slot>()) };
    }
}

struct Helper {
    pid: Pid,
    /// The helper's CPU-time clock (`None` if the kernel would not give it).
    clock: Option<ClockId>,
}

/// The helper processes of one load worker.
pub struct Helpers {
    /// What the helpers are, for messages (`hack`, `ctxmem ring`).
    what: &'static str,
    helpers: Vec<Helper>,
    /// How many helpers there will be.
    planned: usize,
    slots: SharedSlots,
    /// What the helpers' standard input and output are redirected to.
    null: File,
    /// The counters' sum at the last step.
    counted: u64,
}

impl Helpers {
    /// Prepares counters for `count` helpers. Fails if the worker already
    /// runs more than one thread, since forking is then unsafe.
    pub fn new(what: &'static str, count: usize) -> Result<Self, LoadError> {
        let threads = std::fs::read_dir("/proc/self/task")
            .map(|d| d.count())
            .unwrap_or(1);
        if threads != 1 {
            return Err(LoadError::NotSingleThreaded { what, threads });
        }
        let null = File::options()
            .read(true)
            .write(true)
            .open("/dev/null")
            .map_err(LoadError::io(format!("{what}: cannot open /dev/null")))?;
        Ok(Self {
            what,
            helpers: Vec::with_capacity(count),
            planned: count,
            slots: SharedSlots::new(count)?,
            null,
            counted: 0,
        })
    }

    /// Forks the next helper, named `name` (at most 15 bytes show), which
    /// runs `body` with its counter. `body` returns only when it cannot go
    /// on, with the reason; the helper then says so on stderr and exits.
    pub fn fork(
        &mut self,
        name: &str,
        body: impl FnOnce(&AtomicU64) -> String,
    ) -> Result<(), LoadError> {
        let index = self.helpers.len();
        assert!(index < self.planned, "more helpers forked than planned");
        let worker = getpid();
        // SAFETY: the worker is single-threaded (checked in `new`, and
        // `build` runs before it starts any thread), so the child is a
        // complete copy; it never returns from `run_helper`.
        match unsafe { fork() } {
            Ok(ForkResult::Child) => {
                run_helper(worker, &self.null, name, || body(self.slots.counter(index)))
            }
            Ok(ForkResult::Parent { child }) => {
                self.helpers.push(Helper {
                    pid: child,
                    clock: ClockId::pid_cpu_clock_id(child).ok(),
                });
                Ok(())
            }
            Err(errno) => Err(LoadError::Sys {
                what: format!(
                    "{}: cannot fork helper process {} of {}",
                    self.what,
                    index + 1,
                    self.planned
                ),
                errno,
            }),
        }
    }
}

/// The worker's side: it only watches, since the helpers do the work.
impl Load for Helpers {
    /// Sleeps a moment and returns what the helpers counted meanwhile;
    /// fails once a helper has ended.
    fn step(&mut self) -> Result<f64, LoadError> {
        std::thread::sleep(STEP);
        self.check_helpers()?;
        let total = self.slots.sum();
        let done = total - self.counted;
        self.counted = total;
        Ok(done as f64)
    }

    /// The worker's CPU time and the helpers', read on their CPU clocks; a
    /// lower bound when a helper's clock could not be read.
    fn cpu(&self, worker: CpuTime) -> CpuTime {
        worker.plus(sum_of_clocks(self.helpers.iter().map(|h| {
            let t = clock_gettime(h.clock?).ok()?;
            Some(t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        })))
    }
}

impl Helpers {
    /// Fails, saying how, once a helper has ended: the load is then no
    /// longer what it claims to be.
    pub fn check_helpers(&mut self) -> Result<(), LoadError> {
        let status = match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => return Ok(()),
            Ok(status) => status,
            Err(errno) => {
                return Err(LoadError::Sys {
                    what: format!("{}: cannot watch the helper processes", self.what),
                    errno,
                })
            }
        };
        let how = match status {
            WaitStatus::Exited(_, code) => format!("exit code {code}"),
            WaitStatus::Signaled(_, signal, _) => format!("killed by {signal}"),
            other => format!("{other:?}"),
        };
        let index = status
            .pid()
            .and_then(|pid| self.helpers.iter().position(|h| h.pid == pid));
        if let Some(index) = index {
            // Reaped: Drop must neither kill nor wait for it again.
            self.helpers.remove(index);
        }
        Err(LoadError::HelperEnded {
            what: self.what,
            how,
            left: self.helpers.len(),
            planned: self.planned,
        })
    }
}

impl Drop for Helpers {
    fn drop(&mut self) {
        for helper in &self.helpers {
            let _ = kill(helper.pid, Signal::SIGKILL);
        }
        for helper in &self.helpers {
            let _ = waitpid(helper.pid, None);
        }
    }
}

/// The sum of the CPU clocks read (`None`: a clock that could not be),
/// a lower bound when any could not.
fn sum_of_clocks(clocks: impl Iterator<Item = Option<u64>>) -> CpuTime {
    clocks.fold(CpuTime::default(), |sum, clock| {
        sum.plus(clock.map_or(
            CpuTime {
                ns: 0,
                lower_bound: true,
            },
            CpuTime::exact,
        ))
    })
}

/// The life of a forked helper: arms `PR_SET_PDEATHSIG`, detaches from the
/// worker's protocol pipes, runs `body`, and exits without ever returning
/// into the worker's code (a panic included).
fn run_helper(worker: Pid, null: &File, name: &str, body: impl FnOnce() -> String) -> ! {
    // SAFETY: prctl with integer arguments only.
    let armed = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } == 0;
    // The worker may have died before the death signal was armed.
    if !armed || getppid() != worker {
        exit_now(1);
    }
    // The worker's stdin and stdout are its pipes to the orchestrator; a
    // helper holding them would keep the worker's end of file from showing.
    if nix::unistd::dup2_stdin(null).is_err() || nix::unistd::dup2_stdout(null).is_err() {
        exit_now(1);
    }
    crate::measure::sched::set_thread_name(name);
    if let Ok(reason) = catch_unwind(AssertUnwindSafe(body)) {
        say!("{name} (pid {}): {reason}", getpid());
    }
    exit_now(1)
}

fn exit_now(code: i32) -> ! {
    // SAFETY: _exit ends the process at once, without running the worker's
    // destructors and exit handlers, which belong to the worker.
    unsafe { libc::_exit(code) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_to_fork_from_a_multi_threaded_process() {
        // The test harness runs every test on a thread of its own.
        let err = Helpers::new("test", 1).err().expect("refused").to_string();
        assert!(err.contains("single-threaded"), "{err}");
    }

    #[test]
    fn a_helper_whose_clock_cannot_be_read_makes_the_cpu_a_lower_bound() {
        assert_eq!(
            sum_of_clocks([Some(5), Some(7)].into_iter()),
            CpuTime::exact(12)
        );
        let partial = sum_of_clocks([Some(5), None, Some(7)].into_iter());
        assert_eq!((partial.ns, partial.lower_bound), (12, true));
        assert_eq!(sum_of_clocks(std::iter::empty()), CpuTime::exact(0));
    }

    #[test]
    fn counters_are_on_their_own_cache_lines_and_summed() {
        let slots = SharedSlots::new(3).unwrap();
        slots.counter(0).store(2, Ordering::Relaxed);
        slots.counter(2).fetch_add(5, Ordering::Relaxed);
        assert_eq!(slots.sum(), 7);
        assert_eq!(std::mem::size_of::<Slot>(), 64);
    }
}
