//! The micro-operations, in LMbench's order: their names, what each times,
//! and how each is made ready ([`OpDef::start`]). An [`Operation`] is repeated by
//! the probe's loop; only [`Operation::run`] is timed. Where the machine
//! cannot do one (no loopback, no room), its `start` or an instance fails
//! with an [`OpError`] and the probe leaves that operation out.

use super::files::{Create, Delete, Fault, Mmap};
use super::procs::Spawn;
use super::talk::{self, Connect};
use crate::measure::clock::now_ns;
use std::path::Path;

/// What the name of every single-operation probe starts with.
pub const PREFIX: &str = "micro:";

/// One micro-operation.
#[derive(Clone, Copy)]
pub struct OpDef {
    /// The name of the probe that runs it alone (`micro:fork`).
    pub probe: &'static str,
    /// What one timed instance does, for `feelbench list`.
    pub summary: &'static str,
    /// How many of the operation one timed instance holds: its latency is
    /// the instance's divided by it (a context-switch round trip is two
    /// switches).
    pub per_instance: u64,
    /// Makes it ready in the probe's private directory (partners started,
    /// files written): what is not timed and happens once.
    pub start: fn(&Path) -> Result<Box<dyn Operation>, OpError>,
}

impl OpDef {
    /// Its name in figures and tables (`fork`).
    pub fn name(&self) -> &'static str {
        &self.probe[PREFIX.len()..]
    }
}

/// Bytes of the working set each process of `ctx64` sums per pass.
const CTX_LARGE_BYTES: usize = 64 << 10;

/// An operation timed one at a time.
const fn op(
    probe: &'static str,
    summary: &'static str,
    start: fn(&Path) -> Result<Box<dyn Operation>, OpError>,
) -> OpDef {
    OpDef {
        probe,
        summary,
        per_instance: 1,
        start,
    }
}

/// A context switch: timed by round trips of two switches.
const fn switch(
    probe: &'static str,
    summary: &'static str,
    start: fn(&Path) -> Result<Box<dyn Operation>, OpError>,
) -> OpDef {
    OpDef {
        per_instance: 2,
        ..op(probe, summary, start)
    }
}

/// Every operation, in LMbench's order (processes, context switches, local
/// communication, file system and VM).
pub const OPS: [OpDef; 18] = [
    op(
        "micro:fork",
        "LMbench fork+exit: fork, the child exits, the parent waits",
        |_| Ok(Box::new(Spawn::fork_only()?)),
    ),
    op(
        "micro:exec",
        "LMbench fork+execve: fork, the child runs /bin/true, the parent waits",
        |_| Ok(Box::new(Spawn::program(c"/bin/true", &[c"true"])?)),
    ),
    op(
        "micro:sh",
        "LMbench fork+sh: fork, the child runs /bin/sh -c /bin/true, the parent waits",
        |_| {
            let argv = [c"sh", c"-c", c"/bin/true"];
            Ok(Box::new(Spawn::program(c"/bin/sh", &argv)?))
        },
    ),
    switch(
        "micro:ctx0",
        "LMbench ctx 2p/0K: one switch of two processes passing a token over two pipes",
        |_| talk::pipes(0),
    ),
    switch(
        "micro:ctx64",
        "LMbench ctx 2p/64K: as ctx0, each process summing 64 KiB of its own per pass",
        |_| talk::pipes(CTX_LARGE_BYTES),
    ),
    op(
        "micro:pipe",
        "LMbench pipe latency: a 1-byte round trip over two pipes to a partner process",
        |_| talk::pipes(0),
    ),
    op(
        "micro:unix",
        "LMbench AF_UNIX latency: a 1-byte round trip over a stream socket pair",
        |_| talk::unix(),
    ),
    op(
        "micro:udp",
        "LMbench UDP latency: a 1-byte round trip on loopback to a partner process",
        |_| talk::udp(),
    ),
    op(
        "micro:tcp",
        "LMbench TCP latency: a 1-byte round trip on loopback to a partner process",
        |_| talk::tcp(),
    ),
    op(
        "micro:connect",
        "LMbench TCP connect: connect to a partner listening on loopback, close",
        |_| Ok(Box::new(Connect::start()?)),
    ),
    op(
        "micro:create0",
        "LMbench 0K file create: create and close an empty file",
        |dir| Ok(Box::new(Create::new(dir, "create0", 0))),
    ),
    op(
        "micro:delete0",
        "LMbench 0K file delete: unlink an empty file",
        |dir| Ok(Box::new(Delete::new(dir, "delete0", 0))),
    ),
    op(
        "micro:create1k",
        "LMbench 1K file create: create, write 1 KiB, close",
        |dir| Ok(Box::new(Create::new(dir, "create1k", 1 << 10))),
    ),
    op(
        "micro:delete1k",
        "LMbench 1K file delete: unlink a 1 KiB file",
        |dir| Ok(Box::new(Delete::new(dir, "delete1k", 1 << 10))),
    ),
    op(
        "micro:create10k",
        "LMbench 10K file create: create, write 10 KiB, close",
        |dir| Ok(Box::new(Create::new(dir, "create10k", 10 << 10))),
    ),
    op(
        "micro:delete10k",
        "LMbench 10K file delete: unlink a 10 KiB file",
        |dir| Ok(Box::new(Delete::new(dir, "delete10k", 10 << 10))),
    ),
    op(
        "micro:mmap",
        "LMbench mmap latency: map a 1 MiB cached file, read a byte every 16 KiB, unmap",
        |dir| Ok(Box::new(Mmap::new(dir)?)),
    ),
    op(
        "micro:fault",
        "LMbench page fault: first read of a page of a fresh mapping of a cached file",
        |dir| Ok(Box::new(Fault::new(dir)?)),
    ),
];

/// One micro-operation, ready to be repeated.
pub trait Operation {
    /// Gets the next instance ready, untimed (the file a delete removes).
    fn prepare(&mut self) -> Result<(), OpError> {
        Ok(())
    }
    /// One instance: what is timed.
    fn run(&mut self) -> Result<(), OpError>;
    /// How long one instance takes, in ns: [`Operation::run`] timed here,
    /// unless the operation is timed where it happens (in a partner).
    fn timed_ns(&mut self) -> Result<u64, OpError> {
        let started_ns = now_ns();
        self.run()?;
        Ok(now_ns() - started_ns)
    }
    /// Cleans up after an instance, untimed (the file a create made).
    fn tidy(&mut self) -> Result<(), OpError> {
        Ok(())
    }
}

/// Why an operation cannot go on; the message is complete on its own.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {error}")]
pub struct OpError {
    /// What it was doing (`cannot fork`).
    pub what: &'static str,
    pub error: std::io::Error,
}

impl OpError {
    /// A wrapper of the error of `what`, for `map_err`.
    pub fn of(what: &'static str) -> impl FnOnce(std::io::Error) -> OpError {
        move |error| OpError { what, error }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_probe_names_without_the_prefix_and_unique() {
        let names: Vec<&str> = OPS.iter().map(OpDef::name).collect();
        assert_eq!(&names[..3], ["fork", "exec", "sh"]);
        assert_eq!(names.last(), Some(&"fault"));
        for (k, op) in OPS.iter().enumerate() {
            assert!(op.probe.starts_with(PREFIX), "{}", op.probe);
            assert!(!names[..k].contains(&op.name()), "{} twice", op.name());
        }
    }

    #[test]
    fn only_context_switches_count_two_per_instance() {
        for op in OPS {
            let expected = if op.name().starts_with("ctx") { 2 } else { 1 };
            assert_eq!(op.per_instance, expected, "{}", op.name());
        }
    }
}
