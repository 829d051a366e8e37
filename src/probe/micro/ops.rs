//! The micro-operations, in LMbench's order: their names, what each times,
//! and how each is made ready ([`OpDef::start`]). An [`Operation`] is repeated by
//! the probe's loop, an instance at a time: `n` operations back to back
//! (one when paced, LMbench's loop in its mode, see `batch`), of which only
//! [`Operation::run`] is timed; an instance says how many operations it
//! held and what LMbench subtracts from each ([`Timed`]). Where the machine
//! cannot do one (no loopback, no room), its `start` or an instance fails
//! with an [`OpError`] and the probe leaves that operation out.

use super::files::{Create, Delete, Fault, Mmap};
use super::procs::Spawn;
use super::talk::{self, Connect};
use crate::measure::clock::now_ns;
use crate::sim::micro::MicroMode;
use std::path::Path;
use Lmbench::{Other, Same};

/// What the name of every single-operation probe starts with.
pub const PREFIX: &str = "micro:";

/// One micro-operation.
#[derive(Clone, Copy)]
pub struct OpDef {
    /// The name of the probe that runs it alone (`micro:fork`).
    pub probe: &'static str,
    /// What one timed instance does, for `feelbench list`.
    pub summary: &'static str,
    /// Whether its figures are lat_ctx's: the switch as timed less the
    /// median of the token passing and summing timed without a switch
    /// (`OP_overhead`), with the switch as timed kept beside them.
    pub less_overhead: bool,
    /// The most operations an instance holds (LMbench's 100 files per
    /// directory; a few mappings of the fault's file at a time).
    pub most: u64,
    /// Whether one timed unit in LMbench's mode is LMbench's (README,
    /// "micro", says how each differs).
    pub lmbench: Lmbench,
    /// Makes it ready in the probe's private directory, for the mode of the
    /// run (partners started, files written): what is not timed and
    /// happens once.
    pub start: Start,
}

/// How an operation is made ready.
type Start = fn(&Path, MicroMode) -> Result<Box<dyn Operation>, OpError>;

/// What an operation is to LMbench in `--micro-mode lmbench`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lmbench {
    /// One timed unit is LMbench's: the program (and its argument) whose
    /// figure it is, measured beside it with `bench/lmbench.sh`.
    Same(&'static str),
    /// One timed unit is another than LMbench's: in that mode its figures
    /// take this name instead of LMbench's.
    Other(&'static str),
}

impl OpDef {
    /// Its name (`fork`), as its probe's and its samples'.
    pub fn name(&self) -> &'static str {
        &self.probe[PREFIX.len()..]
    }

    /// What its figures and column are called in `mode`: its name, except
    /// in LMbench's mode for an operation whose unit is not LMbench's.
    pub fn figure_name(&self, mode: MicroMode) -> &'static str {
        match (mode, self.lmbench) {
            (MicroMode::Lmbench, Lmbench::Other(name)) => name,
            _ => self.name(),
        }
    }
}

/// Bytes of the working set each process of `ctx64` sums per pass.
const CTX_LARGE_BYTES: usize = 64 << 10;

/// The most operations of an instance where nothing else bounds them:
/// more than LMbench's loop of the quickest (a round trip of a few µs)
/// holds in a `batch::INSTANCE_NS`.
const MOST: u64 = 10_000;

/// The most files an instance of a file operation makes or removes: as
/// lat_fs, which puts at most 100 files in a directory.
const FILES_PER_INSTANCE: u64 = 100;

/// The most fresh mappings of the fault's file an instance reads.
const MAPPINGS_PER_INSTANCE: u64 = 16;

/// An operation whose figure is its time as taken.
const fn op(probe: &'static str, summary: &'static str, lmbench: Lmbench, start: Start) -> OpDef {
    OpDef {
        probe,
        summary,
        less_overhead: false,
        most: MOST,
        lmbench,
        start,
    }
}

/// A file operation: at most [`FILES_PER_INSTANCE`] an instance.
const fn file_op(
    probe: &'static str,
    summary: &'static str,
    lmbench: Lmbench,
    start: Start,
) -> OpDef {
    OpDef {
        most: FILES_PER_INSTANCE,
        ..op(probe, summary, lmbench, start)
    }
}

/// A context switch: lat_ctx's figure, less its overhead.
const fn switch(
    probe: &'static str,
    summary: &'static str,
    lmbench: Lmbench,
    start: Start,
) -> OpDef {
    OpDef {
        less_overhead: true,
        ..op(probe, summary, lmbench, start)
    }
}

/// Every operation, in LMbench's order (processes, context switches, local
/// communication, file system and VM).
pub const OPS: [OpDef; 18] = [
    op(
        "micro:fork",
        "LMbench fork+exit: fork, the child exits, the parent waits",
        Same("lat_proc fork"),
        |_, _| Ok(Box::new(Spawn::fork_only()?)),
    ),
    op(
        "micro:exec",
        "LMbench fork+execve: fork, the child runs /bin/true with no environment, the parent waits",
        Same("lat_proc exec"),
        |_, _| Ok(Box::new(Spawn::program(c"/bin/true", &[c"true"], true)?)),
    ),
    op(
        "micro:sh",
        "LMbench fork+sh: fork, the child runs /bin/sh -c /bin/true, the parent waits",
        Same("lat_proc shell"),
        |_, _| {
            let argv = [c"sh", c"-c", c"/bin/true"];
            Ok(Box::new(Spawn::program(c"/bin/sh", &argv, false)?))
        },
    ),
    switch(
        "micro:ctx0",
        "LMbench ctx 2p/0K: a switch of two processes passing a token over two pipes, less the passing",
        Same("lat_ctx -s 0 2"),
        |_, _| talk::switches(0),
    ),
    switch(
        "micro:ctx64",
        "LMbench ctx 2p/64K: as ctx0, each process summing 64 KiB of its own per pass, less the sum",
        Same("lat_ctx -s 64 2"),
        |_, _| talk::switches(CTX_LARGE_BYTES),
    ),
    op(
        "micro:pipe",
        "LMbench pipe latency: a 1-byte round trip over two pipes to a partner process",
        Same("lat_pipe"),
        |_, _| talk::pipes(),
    ),
    op(
        "micro:unix",
        "LMbench AF_UNIX latency: a 1-byte round trip over a stream socket pair",
        Same("lat_unix"),
        |_, _| talk::unix(),
    ),
    op(
        "micro:udp",
        "LMbench UDP latency: a 1-byte round trip on loopback to a partner process",
        Same("lat_udp"),
        |_, _| talk::udp(),
    ),
    op(
        "micro:tcp",
        "LMbench TCP latency: a 1-byte round trip on loopback to a partner process",
        Same("lat_tcp"),
        |_, _| talk::tcp(),
    ),
    op(
        "micro:connect",
        "LMbench TCP connect: connect to a partner listening on loopback, close",
        Other("handshake"),
        |_, _| Ok(Box::new(Connect::start()?)),
    ),
    file_op(
        "micro:create0",
        "LMbench 0K file create: create and close a new empty file",
        Other("newfile0"),
        |dir, _| Ok(Box::new(Create::new(dir, "create0", 0)?)),
    ),
    file_op(
        "micro:delete0",
        "LMbench 0K file delete: unlink an empty file",
        Same("lat_fs -s 0 (deletes)"),
        |dir, _| Ok(Box::new(Delete::new(dir, "delete0", 0)?)),
    ),
    file_op(
        "micro:create1k",
        "LMbench 1K file create: create a new file, write 1 KiB, close",
        Other("newfile1k"),
        |dir, _| Ok(Box::new(Create::new(dir, "create1k", 1 << 10)?)),
    ),
    file_op(
        "micro:delete1k",
        "LMbench 1K file delete: unlink a 1 KiB file",
        Same("lat_fs -s 1k (deletes)"),
        |dir, _| Ok(Box::new(Delete::new(dir, "delete1k", 1 << 10)?)),
    ),
    file_op(
        "micro:create10k",
        "LMbench 10K file create: create a new file, write 10 KiB, close",
        Other("newfile10k"),
        |dir, _| Ok(Box::new(Create::new(dir, "create10k", 10 << 10)?)),
    ),
    file_op(
        "micro:delete10k",
        "LMbench 10K file delete: unlink a 10 KiB file",
        Same("lat_fs -s 10k (deletes)"),
        |dir, _| Ok(Box::new(Delete::new(dir, "delete10k", 10 << 10)?)),
    ),
    op(
        "micro:mmap",
        "LMbench mmap latency: map a 1 MiB cached file shared, write a byte every 16 KiB of its first tenth, unmap",
        Same("lat_mmap 1m"),
        |dir, _| Ok(Box::new(Mmap::new(dir)?)),
    ),
    OpDef {
        most: MAPPINGS_PER_INSTANCE,
        ..op(
            "micro:fault",
            "LMbench page fault: first read of a page of a fresh mapping of a cached file (lmbench mode: all its pages, per page)",
            Other("minflt"),
            |dir, mode| Ok(Box::new(Fault::new(dir, mode)?)),
        )
    },
];

/// One micro-operation, ready to be repeated an instance at a time.
pub trait Operation {
    /// Gets the next instance of `n` operations ready, untimed (the files
    /// a delete removes).
    fn prepare(&mut self, _n: u64) -> Result<(), OpError> {
        Ok(())
    }
    /// One operation: what is timed.
    fn run(&mut self) -> Result<(), OpError>;
    /// An instance of `n` operations back to back, timed as one (as
    /// LMbench's loops are): [`Operation::run`] `n` times, timed here,
    /// unless the operation is timed where it happens (in a partner), holds
    /// more than one operation a run or has an overhead to subtract.
    fn timed(&mut self, n: u64) -> Result<Timed, OpError> {
        let started_ns = now_ns();
        for _ in 0..n {
            self.run()?;
        }
        Ok(Timed::of(now_ns() - started_ns, n))
    }
    /// Cleans up after an instance, untimed (the files a create made).
    fn tidy(&mut self) -> Result<(), OpError> {
        Ok(())
    }
}

/// What one timed instance measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timed {
    /// How long the instance took, in ns.
    pub elapsed_ns: u64,
    /// How many operations it held (LMbench's loop of them; a round trip
    /// two switches, LMbench's page-fault instance a page each); at least 1.
    pub ops: u64,
    /// What LMbench subtracts from each operation, in ns (lat_ctx's token
    /// passing and summing, timed without a switch, each's time in a loop
    /// of them), for the operations that have it.
    pub overhead_ns: Option<u64>,
}

impl Timed {
    /// `ops` operations that took `elapsed_ns` together, nothing to
    /// subtract.
    pub fn of(elapsed_ns: u64, ops: u64) -> Self {
        Self {
            elapsed_ns,
            ops,
            overhead_ns: None,
        }
    }

    /// Each operation's time: the instance's over its operations.
    pub fn per_op_ns(&self) -> u64 {
        self.elapsed_ns / self.ops.max(1)
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

    /// Each operation declares whether its unit is LMbench's: the same
    /// names an LMbench program, another name starts with none of
    /// LMbench's operations' and is unique, and only another changes a
    /// figure's name.
    #[test]
    fn each_operation_declares_what_it_is_to_lmbench() {
        let names: Vec<&str> = OPS.iter().map(OpDef::name).collect();
        let mut others = Vec::new();
        for op in OPS {
            match op.lmbench {
                Same(program) => {
                    assert!(program.starts_with("lat_"), "{program}");
                    assert_eq!(op.figure_name(MicroMode::Lmbench), op.name());
                }
                Other(name) => {
                    assert!(!names.iter().any(|n| name.starts_with(n)), "{name}");
                    assert!(!others.contains(&name), "{name} twice");
                    others.push(name);
                    assert_eq!(op.figure_name(MicroMode::Lmbench), name);
                }
            }
            assert_eq!(op.figure_name(MicroMode::Paced), op.name());
        }
    }

    #[test]
    fn only_context_switches_subtract_an_overhead() {
        for op in OPS {
            let expected = op.name().starts_with("ctx");
            assert_eq!(op.less_overhead, expected, "{}", op.name());
        }
    }

    #[test]
    fn an_instance_of_several_operations_counts_each() {
        let round_trip = Timed {
            elapsed_ns: 10_000,
            ops: 2,
            overhead_ns: Some(1_500),
        };
        assert_eq!(round_trip.per_op_ns(), 5_000);
        let faults = Timed {
            ops: 256,
            ..Timed::of(25_600, 1)
        };
        assert_eq!(faults.per_op_ns(), 100);
        assert_eq!(Timed::of(7, 1).per_op_ns(), 7);
    }
}
