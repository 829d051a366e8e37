//! Reading the calling thread's own clocks and scheduler counters, for the
//! split of late events (`measure::late`): `CLOCK_MONOTONIC`, the thread's
//! CPU time (`measure::cpu_time`), its `schedstat` (run-queue wait, from a
//! file the thread opened once and reads again at offset 0), `getrusage(RUSAGE_THREAD)` and
//! the CPU it is on. Nothing here allocates after [`ThreadReader::open`],
//! and nothing needs a privilege.
//!
//! Where the system permits (delay accounting on, CAP_NET_ADMIN), the
//! splitter also reads the thread's taskstats at the end of each event whose
//! work blocked, to say what the blocked time waited on ([`DelayReader`]).

use super::clock::{now_ns, thread_cpu_ns};
use super::cpu_time::ThreadCpuTime;
use super::late::{DelaySplit, EventSplit, EventTimes, LateAccount, Parts, ThreadSnapshot};
use super::window::Window;
use crate::system::delayacct;
use crate::system::taskstats::{Delays, TaskstatsError, TaskstatsSocket};
use nix::sys::resource::{getrusage, UsageWho};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Readings taken at open to time one reading.
const COST_SAMPLES: u64 = 50;

/// Reads [`ThreadSnapshot`]s of the thread that opened it (it must not be
/// used from another thread: its `schedstat` file is that thread's).
#[derive(Debug)]
pub struct ThreadReader {
    schedstat: Option<File>,
    cpu_time: ThreadCpuTime,
    reads: u64,
    ns_per_read: f64,
}

impl ThreadReader {
    /// A reader of the calling thread, with the cost of one reading timed.
    /// Without a readable `/proc/thread-self/schedstat` (a kernel without
    /// `CONFIG_SCHED_INFO`, no /proc) it reads everything else.
    /// It reads the thread's CPU time from `cpu_time` (the thread's,
    /// opened on it).
    pub fn open(cpu_time: ThreadCpuTime) -> Self {
        let mut reader = Self {
            schedstat: File::open("/proc/thread-self/schedstat")
                .ok()
                .filter(|file| read_run_delay(file).is_some()),
            cpu_time,
            reads: 0,
            ns_per_read: 0.0,
        };
        reader.ns_per_read = cpu_per_call_ns(COST_SAMPLES, || {
            reader.read();
        });
        reader.reads = 0;
        reader
    }

    /// Whether run-queue wait is read (the thread's `schedstat`).
    pub fn has_schedstat(&self) -> bool {
        self.schedstat.is_some()
    }

    /// The thread's CPU time as it reads it.
    pub fn cpu_time(&self) -> &ThreadCpuTime {
        &self.cpu_time
    }

    /// One reading of the calling thread.
    pub fn read(&mut self) -> ThreadSnapshot {
        self.reads += 1;
        // The wall clock first: a wake-up's reading is its latency's end.
        let at_ns = now_ns();
        let cpu_ns = self.cpu_time.read_ns();
        let run_delay_ns = self.schedstat.as_ref().and_then(read_run_delay);
        let usage = getrusage(UsageWho::RUSAGE_THREAD).ok();
        let counter = |f: fn(&nix::sys::resource::Usage) -> libc::c_long| {
            usage.as_ref().map_or(0, |u| f(u).max(0) as u64)
        };
        ThreadSnapshot {
            at_ns,
            cpu_ns,
            run_delay_ns,
            voluntary: counter(|u| u.voluntary_context_switches()),
            involuntary: counter(|u| u.involuntary_context_switches()),
            major_faults: counter(|u| u.major_page_faults()),
            cpu: current_cpu(),
        }
    }

    /// Readings taken since it was opened.
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// What one reading cost when it was opened, ns.
    pub fn ns_per_read(&self) -> f64 {
        self.ns_per_read
    }
}

/// The second field of a `schedstat` file, read again from offset 0 into a
/// buffer on the stack.
fn read_run_delay(file: &File) -> Option<u64> {
    let mut buffer = [0u8; 96];
    let length = file.read_at(&mut buffer, 0).ok()?;
    let text = std::str::from_utf8(&buffer[..length]).ok()?;
    text.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// The calling thread's CPU time per call of `call`, over `calls` calls:
/// what a reading costs, whatever preempts the thread meanwhile.
fn cpu_per_call_ns(calls: u64, mut call: impl FnMut()) -> f64 {
    let started_ns = thread_cpu_ns();
    for _ in 0..calls {
        call();
    }
    (thread_cpu_ns() - started_ns) as f64 / calls as f64
}

/// The CPU the calling thread is running on.
fn current_cpu() -> u32 {
    // SAFETY: sched_getcpu takes no arguments and only returns a number.
    let cpu = unsafe { libc::sched_getcpu() };
    cpu.max(0) as u32
}

/// Taskstats reads taken at open to time one.
const TASKSTATS_COST_SAMPLES: u64 = 20;

/// The calling thread's delay accounting over taskstats, where it can be
/// read: what each kind of block took since the last reading.
#[derive(Debug)]
pub struct DelayReader {
    socket: Option<TaskstatsSocket>,
    tid: u32,
    last: Delays,
    /// When `last` was read (`CLOCK_MONOTONIC`, ns).
    last_ns: u64,
    reads: u64,
    ns_per_read: f64,
    /// Readings in which a kind of wait took longer than the time since
    /// the reading before, cut to that time.
    cut: u64,
    /// Why it cannot be read, one sentence.
    notice: Option<String>,
}

impl DelayReader {
    /// A reader of the calling thread's taskstats, with the cost of one
    /// reading timed; without delay accounting for it, a reader that says
    /// why in its notice and reads nothing.
    pub fn open() -> Self {
        let tid = nix::unistd::gettid().as_raw() as u32;
        let mut reader = Self {
            socket: None,
            tid,
            last: Delays::default(),
            last_ns: now_ns(),
            reads: 0,
            ns_per_read: 0.0,
            cut: 0,
            notice: None,
        };
        let opened = match delayacct::is_on(Path::new("/proc")) {
            Ok(Some(true)) => TaskstatsSocket::open().map_err(|e| unavailable(&e)),
            Ok(Some(false)) => Err(
                "delay accounting is off (kernel.task_delayacct=0; a run as root switches it on)"
                    .to_string(),
            ),
            Ok(None) => {
                Err("this kernel has no delay accounting (CONFIG_TASK_DELAY_ACCT)".to_string())
            }
            Err(e) => Err(e.to_string()),
        };
        let mut socket = match opened {
            Ok(socket) => socket,
            Err(why) => {
                reader.notice = Some(format!("blocked time split unavailable: {why}"));
                return reader;
            }
        };
        let mut failed = None;
        let ns_per_read = cpu_per_call_ns(TASKSTATS_COST_SAMPLES, || match socket.read(tid) {
            Ok(delays) => reader.last = delays,
            Err(e) => failed = Some(e),
        });
        if let Some(e) = failed {
            reader.notice = Some(format!(
                "blocked time split unavailable: {}",
                unavailable(&e)
            ));
            return reader;
        }
        reader.ns_per_read = ns_per_read;
        reader.last_ns = now_ns();
        reader.socket = Some(socket);
        reader
    }

    /// What each kind of block took since the last reading; `None` when
    /// taskstats cannot be read.
    pub fn read(&mut self) -> Option<DelaySplit> {
        let delays = self.socket.as_mut()?.read(self.tid).ok()?;
        let at_ns = now_ns();
        self.reads += 1;
        let (split, cut) = delays
            .waits
            .since(&self.last.waits)
            .cut_to(at_ns - self.last_ns);
        self.cut += u64::from(cut);
        self.last = delays;
        self.last_ns = at_ns;
        Some(split)
    }

    /// Readings in which a kind of wait was cut to the time they covered.
    pub fn cut(&self) -> u64 {
        self.cut
    }

    /// Takes a reading and drops it: what the thread waited on until now
    /// belongs to no event.
    pub fn rebase(&mut self) {
        self.read();
    }

    /// Why it cannot be read, if it cannot.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// Readings taken since it was opened and the cost of one, ns.
    pub fn cost(&self) -> (u64, f64) {
        (self.reads, self.ns_per_read)
    }
}

/// Why taskstats is unavailable, in words.
fn unavailable(error: &TaskstatsError) -> String {
    match error {
        TaskstatsError::NotPermitted => "not root (taskstats needs CAP_NET_ADMIN)".to_string(),
        TaskstatsError::NoFamily => "kernel without TASKSTATS".to_string(),
        other => other.to_string(),
    }
}

/// A probe thread's split of its events: its reader, the reading that
/// ends each event (and begins the next one's wait) and the account.
#[derive(Debug)]
pub struct EventSplitter {
    reader: ThreadReader,
    last: ThreadSnapshot,
    last_parts: Parts,
    woke: ThreadSnapshot,
    delays: DelayReader,
    /// Everything accounted so far.
    pub account: LateAccount,
}

impl EventSplitter {
    /// A splitter of the calling thread's events into `account` (normally
    /// empty, its storage allocated).
    pub fn open(account: LateAccount) -> Self {
        Self::open_on(account, ThreadCpuTime::open())
    }

    /// A splitter as [`EventSplitter::open`] makes it, that reads the
    /// thread's CPU time from `cpu_time`.
    pub fn open_on(mut account: LateAccount, cpu_time: ThreadCpuTime) -> Self {
        account.set_thread(nix::unistd::gettid().as_raw() as u32);
        let mut reader = ThreadReader::open(cpu_time);
        let delays = DelayReader::open();
        let last = reader.read();
        Self {
            reader,
            last,
            last_parts: Parts::default(),
            woke: last,
            delays,
            account,
        }
    }

    /// Takes the reading at an event's wake-up; returns its time. When
    /// the thread blocked between events beyond its one sleep (work of the
    /// probe's own outside its events: resp1's touch of its array before
    /// the gap), delay accounting is read again, so that wait is not
    /// counted in the next event.
    pub fn woke(&mut self) -> u64 {
        self.woke = self.reader.read();
        let blocked_between = self.woke.voluntary > self.last.voluntary + 1
            || self.woke.major_faults > self.last.major_faults;
        if blocked_between {
            self.delays.rebase();
        }
        self.woke.at_ns
    }

    /// Takes the reading at the end of an event that woke at the last
    /// [`woke`](Self::woke), splits and accounts it, late when it ended
    /// after `deadline_ns`; returns the split (its end is `ended_ns`).
    pub fn ended_by(&mut self, times: EventTimes, deadline_ns: u64) -> EventSplit {
        let ended = self.reader.read();
        let late = ended.at_ns > deadline_ns;
        self.finish_less(times, Some(ended), late, 0, Some(deadline_ns))
    }

    /// Splits and accounts an event that did no work: it ended as it woke,
    /// so its wake-up's reading is its end (one reading an event instead of
    /// two), late when it woke after `deadline_ns`.
    pub fn ended_at_wake(&mut self, times: EventTimes, deadline_ns: u64) -> EventSplit {
        let ended = self.woke;
        let late = ended.at_ns > deadline_ns;
        self.finish_less(times, Some(ended), late, 0, Some(deadline_ns))
    }

    /// Takes the reading at the end of an event whose lateness the caller
    /// judged by its own rule (`late`), splits and accounts it; `own_wait_ns`
    /// of its time off the CPU was waiting its own work asked for (a
    /// workload's scripted sleep), which is no delay and is taken out.
    pub fn ended_judged(&mut self, times: EventTimes, late: bool, own_wait_ns: u64) -> EventSplit {
        let ended = self.reader.read();
        self.finish_less(times, Some(ended), late, own_wait_ns, None)
    }

    /// Accounts an event dropped at its wake-up (it did no work), allowed
    /// until `allowed_ns`.
    pub fn dropped(&mut self, times: EventTimes, late: bool, allowed_ns: u64) -> EventSplit {
        self.finish_less(times, None, late, 0, Some(allowed_ns))
    }

    /// Splits, accounts and logs an event allowed until `allowed_ns`,
    /// `own_wait_ns` of its time off the CPU taken out as wanted.
    fn finish_less(
        &mut self,
        times: EventTimes,
        ended: Option<ThreadSnapshot>,
        late: bool,
        own_wait_ns: u64,
        allowed_ns: Option<u64>,
    ) -> EventSplit {
        let mut split = EventSplit::of(
            times,
            &self.last,
            &self.last_parts,
            &self.woke,
            ended.as_ref(),
            self.reader.has_schedstat(),
        );
        less_own_wait(&mut split.parts, own_wait_ns);
        // What the work waited on, read when it blocked or was late (the
        // sleep before the wake-up is no block delay accounting names). An
        // on-time event that neither blocked nor was read leaves what it
        // spent in reclaim to the next one read, bounded by its own time.
        if ended.is_some() && (split.voluntary > 0 || split.major_faults > 0 || late) {
            if let Some(delays) = self.delays.read() {
                split = split.with_delays(delays);
            }
        }
        self.last = ended.unwrap_or(self.woke);
        self.last_parts = split.parts;
        self.account.record(&split, late);
        let dropped = ended.is_none();
        self.account.log(&split, late, dropped, allowed_ns);
        split
    }

    /// Whether run-queue wait is read.
    pub fn has_schedstat(&self) -> bool {
        self.reader.has_schedstat()
    }

    /// Readings taken and the cost of one, ns.
    pub fn cost(&self) -> (u64, f64) {
        (self.reader.reads(), self.reader.ns_per_read())
    }

    /// The thread's delay accounting reader (its cost, and why it is
    /// unavailable when it is).
    pub fn delays(&self) -> &DelayReader {
        &self.delays
    }
}

/// Takes `own_wait_ns` out of the parts that hold time off the CPU while
/// not waiting for one (blocked, then off the CPU unblocked, then
/// unexplained): waiting the event's own work asked for is no delay. The
/// run-queue parts stay: a thread resumed but not yet run was delayed.
fn less_own_wait(parts: &mut Parts, own_wait_ns: u64) {
    let mut left = own_wait_ns;
    for part in [
        &mut parts.blocked_ns,
        &mut parts.off_cpu_ns,
        &mut parts.unexplained_ns,
    ] {
        let taken = (*part).min(left);
        *part -= taken;
        left -= taken;
    }
}

/// The readings of the thread that waits for and does a probe's events,
/// when the run splits them; without, it reads only the clock.
#[derive(Debug, Default)]
pub struct Splitting {
    splitter: Option<EventSplitter>,
}

impl Splitting {
    /// Splitting into `account` on the calling thread, which must be the
    /// one that waits for and does the events; none without an account.
    pub fn open(account: Option<LateAccount>) -> Self {
        Self {
            splitter: account.map(EventSplitter::open),
        }
    }

    /// Splitting as [`Splitting::open`] does, reading the thread's CPU time
    /// from its CPU clock, with no counter on the thread (see
    /// [`ThreadCpuTime::cpu_clock`]).
    pub fn open_on_cpu_clock(account: Option<LateAccount>) -> Self {
        Self {
            splitter: account
                .map(|account| EventSplitter::open_on(account, ThreadCpuTime::cpu_clock())),
        }
    }

    /// The calling thread's CPU time, for work done to it: the counter the
    /// split reads, or one of its own when nothing splits (one counter per
    /// thread either way). It must be read on the thread that opened this.
    pub fn cpu_time(&self) -> ThreadCpuTime {
        match &self.splitter {
            Some(splitter) => splitter.reader.cpu_time().clone(),
            None => ThreadCpuTime::open(),
        }
    }

    /// Takes the reading at an event's wake-up; returns its time.
    pub fn woke(&mut self) -> u64 {
        match &mut self.splitter {
            Some(splitter) => splitter.woke(),
            None => now_ns(),
        }
    }

    /// Takes the reading at the end of an event, late when it ends after
    /// `deadline_ns`; returns its end.
    pub fn ended_by(&mut self, times: EventTimes, deadline_ns: u64) -> u64 {
        match &mut self.splitter {
            Some(splitter) => splitter.ended_by(times, deadline_ns).ended_ns,
            None => now_ns(),
        }
    }

    /// Takes the reading at the end of an event, late by the caller's
    /// rule, `own_wait_ns` of it waiting its own work asked for (see
    /// [`EventSplitter::ended_judged`]); its split, when the run splits.
    pub fn ended_judged(
        &mut self,
        times: EventTimes,
        late: bool,
        own_wait_ns: u64,
    ) -> Option<EventSplit> {
        let splitter = self.splitter.as_mut()?;
        Some(splitter.ended_judged(times, late, own_wait_ns))
    }

    /// Takes the reading at the end of an event, late by the caller's rule
    /// (`late`); returns its end and, when the run splits, its split (a
    /// link of a frame graph, judged later by the frame it belongs to).
    pub fn ended_split(&mut self, times: EventTimes, late: bool) -> (u64, Option<EventSplit>) {
        match &mut self.splitter {
            Some(splitter) => {
                let split = splitter.ended_judged(times, late, 0);
                (split.ended_ns, Some(split))
            }
            None => (now_ns(), None),
        }
    }

    /// Accounts an event dropped at its wake-up, late by the caller's rule,
    /// allowed until `allowed_ns`.
    pub fn dropped(&mut self, times: EventTimes, late: bool, allowed_ns: u64) {
        if let Some(splitter) = &mut self.splitter {
            splitter.dropped(times, late, allowed_ns);
        }
    }

    /// Counts events per sub-window of `window` from now on (see
    /// [`LateAccount::set_window`]).
    pub fn set_window(&mut self, window: Window) {
        if let Some(splitter) = &mut self.splitter {
            splitter.account.set_window(window);
        }
    }

    /// The splitter, when the run splits.
    pub fn splitter(&self) -> Option<&EventSplitter> {
        self.splitter.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::late::Cause;

    #[test]
    fn a_reading_of_this_thread_moves_forward() {
        let mut reader = ThreadReader::open(ThreadCpuTime::open());
        assert!(reader.ns_per_read() > 0.0);
        let first = reader.read();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        let second = reader.read();
        assert!(second.at_ns > first.at_ns);
        assert!(second.cpu_ns > first.cpu_ns);
        assert!(second.run_delay_ns >= first.run_delay_ns);
        assert_eq!(reader.reads(), 2);
    }

    /// The splitting of a probe that times its own context switches opens
    /// no counter on its thread, and still reads its CPU time.
    #[test]
    fn splitting_on_the_cpu_clock_opens_no_counter() {
        let splitting = Splitting::open_on_cpu_clock(Some(LateAccount::new()));
        let cpu_time = splitting.cpu_time();
        assert!(!cpu_time.has_counter());
        assert!(cpu_time.read_ns() > 0);
        assert!(splitting.splitter().is_some());
        assert!(Splitting::open_on_cpu_clock(None).splitter().is_none());
    }

    #[test]
    fn a_sleep_past_due_is_split_and_accounted() {
        let mut splitter = EventSplitter::open(LateAccount::new());
        let due_ns = now_ns();
        std::thread::sleep(std::time::Duration::from_millis(3));
        splitter.woke();
        let times = EventTimes {
            due_ns,
            cpu_wanted_ns: None,
        };
        let split = splitter.ended_by(times, due_ns);
        assert!(split.delay_ns() >= 3_000_000, "{split:?}");
        // No set CPU wanted: the time from due to end is delay but for
        // the CPU it used, which was its work.
        let on_cpu = split.cpu_used_ns.min(split.ended_ns - split.woke_ns);
        assert_eq!(split.delay_ns(), split.ended_ns - due_ns - on_cpu);
        assert_eq!(splitter.account.late, 1);
        let labelled: u64 = Cause::ALL
            .iter()
            .map(|c| splitter.account.cause(*c).count)
            .sum();
        assert_eq!(labelled, 1);
    }

    #[test]
    fn an_event_without_work_ends_as_it_woke_with_one_reading() {
        let mut splitter = EventSplitter::open(LateAccount::new());
        let (reads_before, _) = splitter.cost();
        let due_ns = now_ns();
        std::thread::sleep(std::time::Duration::from_millis(3));
        let woke_ns = splitter.woke();
        let times = EventTimes {
            due_ns,
            cpu_wanted_ns: Some(0),
        };
        let split = splitter.ended_at_wake(times, due_ns + 1_000_000);
        assert_eq!(splitter.cost().0, reads_before + 1, "one reading");
        assert_eq!((split.woke_ns, split.ended_ns), (woke_ns, woke_ns));
        assert_eq!(split.delay_ns(), woke_ns - due_ns);
        assert_eq!(
            splitter.account.late, 1,
            "woke 3 ms after due, 1 ms allowed"
        );
    }

    /// A 20 ms sleep the event's own work asked for is no delay: it is
    /// not in the event's blocked part (it was all of it).
    #[test]
    fn an_events_own_wait_is_taken_out_of_its_blocked_time() {
        let mut splitter = EventSplitter::open(LateAccount::new());
        let due_ns = splitter.woke();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let times = EventTimes {
            due_ns,
            cpu_wanted_ns: None,
        };
        let split = splitter.ended_judged(times, true, 20_000_000);
        assert!(split.ended_ns - split.woke_ns >= 20_000_000, "{split:?}");
        let off_ns = split.parts.blocked_ns + split.parts.off_cpu_ns + split.parts.unexplained_ns;
        assert!(off_ns < 20_000_000, "{split:?}");
        assert!(split.delay_ns() < 20_000_000, "{split:?}");
    }
}
