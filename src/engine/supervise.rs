//! Starting worker processes and never losing one. All workers of a scenario
//! share one process group; each dies with the orchestrator
//! (`PR_SET_PDEATHSIG`); [`WorkerGroup::stop_all`] (also run on drop) kills
//! the group and reaps every worker.

use super::protocol::{WorkerMessage, WorkerSpec};
use super::workspace::{kill_marked, RUN_MARKER_VAR};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

/// A worker could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// `/proc/self/exe` could not be resolved.
    #[error("cannot find the feelbench executable to start a worker: {0}")]
    Executable(std::io::Error),
    /// The worker's settings cannot be written as JSON (a path that is not
    /// UTF-8, say).
    #[error("cannot give worker {label} its settings: {error}")]
    Spec {
        label: String,
        error: serde_json::Error,
    },
    /// The process (or the thread reading it) could not be started.
    #[error("cannot start worker {label}: {error}")]
    Spawn {
        label: String,
        error: std::io::Error,
    },
}

/// Something a worker did.
#[derive(Debug)]
pub enum EventKind {
    /// A message it wrote.
    Message(WorkerMessage),
    /// A line on its stdout that is not a message.
    Unreadable(String),
    /// Its stdout closed before its final message: it died or quit early.
    Closed,
}

/// An event and the index of the worker it came from.
#[derive(Debug)]
pub struct Event {
    pub worker: usize,
    pub kind: EventKind,
}

struct Worker {
    label: String,
    child: Child,
    stdin: Option<ChildStdin>,
    status: Option<ExitStatus>,
}

/// The workers of one scenario.
pub struct WorkerGroup {
    /// Put in every worker's environment (see `workspace::RUN_MARKER_VAR`).
    marker: String,
    pgid: Option<Pid>,
    workers: Vec<Worker>,
    events_tx: Sender<Event>,
    events: Receiver<Event>,
}

impl WorkerGroup {
    /// An empty group whose workers will carry `marker` in their environment.
    pub fn new(marker: &str) -> Self {
        let (events_tx, events) = channel();
        Self {
            marker: marker.to_string(),
            pgid: None,
            workers: Vec::new(),
            events_tx,
            events,
        }
    }
    /// Starts a worker for `spec`, in the group's process group. Must be
    /// called from the main thread: the kernel sends PR_SET_PDEATHSIG when the
    /// thread that forked the child exits.
    pub fn spawn(&mut self, label: String, spec: &WorkerSpec) -> Result<usize, SpawnError> {
        self.spawn_in(label, spec, Membership::Group)
    }

    /// Starts a worker for `spec` in a session (and so a process group) of
    /// its own, as [`WorkerGroup::spawn`] otherwise: what autogroup sees as
    /// a program started apart from the others. It is not in the group's
    /// process group, so it is killed by its pid and, with what it started,
    /// by the run's marker.
    pub fn spawn_in_own_session(
        &mut self,
        label: String,
        spec: &WorkerSpec,
    ) -> Result<usize, SpawnError> {
        self.spawn_in(label, spec, Membership::OwnSession)
    }

    fn spawn_in(
        &mut self,
        label: String,
        spec: &WorkerSpec,
        membership: Membership,
    ) -> Result<usize, SpawnError> {
        let exe = std::env::current_exe().map_err(SpawnError::Executable)?;
        let spec_json = serde_json::to_string(spec).map_err(|error| SpawnError::Spec {
            label: label.clone(),
            error,
        })?;
        let mut command = Command::new(exe);
        command
            .arg("worker")
            .arg(spec_json)
            .env(RUN_MARKER_VAR, &self.marker)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        match membership {
            Membership::Group => {
                command.process_group(self.pgid.map_or(0, Pid::as_raw));
            }
            // SAFETY: the closure runs between fork and exec and calls only
            // setsid, async-signal-safe, allocating nothing.
            Membership::OwnSession => unsafe {
                command.pre_exec(|| nix::unistd::setsid().map(drop).map_err(Into::into));
            },
        }
        crate::system::process_tree::die_with_this_process(&mut command);
        let mut child = command.spawn().map_err(|error| SpawnError::Spawn {
            label: label.clone(),
            error,
        })?;
        let index = self.workers.len();
        if membership == Membership::Group {
            self.pgid.get_or_insert(Pid::from_raw(child.id() as i32));
        }
        let stdout = child.stdout.take().expect("stdout was piped");
        self.workers.push(Worker {
            label: label.clone(),
            stdin: child.stdin.take(),
            child,
            status: None,
        });
        let tx = self.events_tx.clone();
        std::thread::Builder::new()
            .name(format!("fb-read-{index}"))
            .spawn(move || forward_lines(index, stdout, tx))
            .map_err(|error| SpawnError::Spawn { label, error })?;
        Ok(index)
    }

    /// The label a worker was started with.
    pub fn label(&self, worker: usize) -> &str {
        &self.workers[worker].label
    }

    /// A worker's process id.
    pub fn pid(&self, worker: usize) -> u32 {
        self.workers[worker].child.id()
    }

    /// Writes `line` to a worker's stdin.
    pub fn send(&mut self, worker: usize, line: &str) -> std::io::Result<()> {
        match self.workers[worker].stdin.as_mut() {
            Some(stdin) => stdin
                .write_all(line.as_bytes())
                .and_then(|()| stdin.flush()),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }

    /// Closes a worker's stdin (for a load: stop).
    pub fn close_stdin(&mut self, worker: usize) {
        self.workers[worker].stdin = None;
    }

    /// The next event, waiting at most `timeout`.
    pub fn next_event(&self, timeout: Duration) -> Option<Event> {
        self.events.recv_timeout(timeout).ok()
    }

    /// How a worker ended, once [`WorkerGroup::stop_all`] has reaped it.
    pub fn describe_exit(&self, worker: usize) -> String {
        match self.workers[worker].status {
            Some(status) => match (status.code(), status.signal()) {
                (Some(code), _) => format!("exit code {code}"),
                (None, Some(signal)) => format!("killed by signal {signal}"),
                _ => status.to_string(),
            },
            None => "still running".to_string(),
        }
    }

    /// Kills every worker still running (the whole process group) and reaps
    /// them all. Safe to call more than once.
    pub fn stop_all(&mut self) {
        let unreaped = self.workers.iter().any(|w| w.status.is_none());
        if let (Some(pgid), true) = (self.pgid, unreaped) {
            // While one member is unreaped the group id cannot have been reused.
            let _ = killpg(pgid, Signal::SIGKILL);
        }
        for worker in &mut self.workers {
            worker.stdin = None;
            if worker.status.is_none() {
                let _ = worker.child.kill();
                worker.status = worker.child.wait().ok();
            }
        }
        // What the workers started, and what left the process group; the
        // dead are reparented to this subreaper and reaped here.
        kill_marked(&self.marker);
        reap_orphans(ORPHAN_REAP_TIME);
    }
}

/// Where a worker starts: in the group's process group, or in a session
/// of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Membership {
    Group,
    OwnSession,
}

/// How long [`WorkerGroup::stop_all`] waits for killed orphans to die.
const ORPHAN_REAP_TIME: Duration = Duration::from_secs(2);

/// Reaps children that are not workers (orphans handed to this subreaper)
/// until none is left or `limit` has passed. Call only once every worker
/// has been waited for, so no worker's status is taken here.
fn reap_orphans(limit: Duration) {
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(10)),
            Ok(_) => {}
            Err(_) => return, // ECHILD: nothing left
        }
    }
}

impl Drop for WorkerGroup {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Passes a worker's messages on; reports `Closed` only when the worker's
/// stdout ends before its final message (its figures or its failure).
fn forward_lines(worker: usize, stdout: std::process::ChildStdout, tx: Sender<Event>) {
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let kind = match serde_json::from_str::<WorkerMessage>(&line) {
            Ok(message) => EventKind::Message(message),
            Err(_) => EventKind::Unreadable(line),
        };
        let last = matches!(&kind, EventKind::Message(m) if m.is_final());
        if tx.send(Event { worker, kind }).is_err() || last {
            return;
        }
    }
    let _ = tx.send(Event {
        worker,
        kind: EventKind::Closed,
    });
}
