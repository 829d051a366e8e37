//! `micro` and `micro:OP`: LMbench's micro-latencies measured under load.
//! Each operation (fork, exec, a pipe round trip, a file create, a page
//! fault, ... see `ops`) runs at a steady rhythm for the scenario's
//! duration (`rhythm`), each instance timed into a histogram of its own
//! (`record`); `micro` runs them all, taking turns, and shows LMbench's
//! table (one median column per operation, the loads as rows); `micro:OP`
//! runs one. The registry entries come from one generic definition, [`def`],
//! by the operation's index (or [`ALL`]).
//!
//! An operation that cannot run here (no loopback, no room) is left out with
//! its reason (the result's `left_out`, a warning of the run) and an
//! `OP_failed` count; the others go on. Only
//! when every operation of the probe fails does the scenario fail.
//!
//! The probe shares its memory ([`MemoryPolicy::Shared`]): it faults and
//! maps on purpose, and with locked memory (`MCL_FUTURE`) every new mapping
//! would be populated at once, so `mmap` would read no page lazily and
//! `fault` would time no fault.

mod files;
mod ops;
mod partner;
mod procs;
mod record;
mod rhythm;
mod sheet;
mod talk;

use super::{MeasureError, Pace, Probe, ProbeDef};
use crate::figures::{Measured, ProbeSheet};
use crate::measure::clock::{now_ns, sleep_until_ns};
use crate::measure::sched::MemoryPolicy;
use crate::measure::window::Window;
use crate::sim::WorkParams;
use ops::{OpDef, Operation, OPS};
use record::OpRecord;
use rhythm::Rhythm;
use std::path::Path;

/// The index that stands for every operation (`micro`).
pub const ALL: usize = OPS.len();

/// The operations a probe defined for `op` (an index of `ops::OPS`, or
/// [`ALL`]) runs.
fn ops_of(op: usize) -> &'static [OpDef] {
    match op {
        ALL => &OPS,
        one => std::slice::from_ref(&OPS[one]),
    }
}

/// The registry entry of the probe of operation `OP` (or of all, [`ALL`]).
pub const fn def<const OP: usize>() -> ProbeDef {
    let (name, summary) = if OP == ALL {
        (
            "micro",
            "LMbench micro-latencies: every micro:OP probe in turn, median µs per operation",
        )
    } else {
        (OPS[OP].probe, OPS[OP].summary)
    };
    ProbeDef {
        name,
        summary,
        sheet: sheet::<OP>,
        build: build::<OP>,
        default: |_| false,
        uses: &[],
        disk_bytes: super::no_disk,
        pace: Pace::Duration,
        memory: MemoryPolicy::Shared,
    }
}

fn sheet<const OP: usize>(summary: &str, _: Option<&WorkParams>) -> ProbeSheet {
    sheet::sheet_of(summary, ops_of(OP))
}

fn build<const OP: usize>(_: &WorkParams) -> Result<Box<dyn Probe>, super::BuildError> {
    Ok(Box::new(MicroProbe { ops: ops_of(OP) }))
}

/// `micro`.
pub const MICRO: ProbeDef = def::<ALL>();
/// `micro:fork` and the other single operations, in LMbench's order.
pub const FORK: ProbeDef = def::<0>();
pub const EXEC: ProbeDef = def::<1>();
pub const SH: ProbeDef = def::<2>();
pub const CTX0: ProbeDef = def::<3>();
pub const CTX64: ProbeDef = def::<4>();
pub const PIPE: ProbeDef = def::<5>();
pub const UNIX: ProbeDef = def::<6>();
pub const UDP: ProbeDef = def::<7>();
pub const TCP: ProbeDef = def::<8>();
pub const CONNECT: ProbeDef = def::<9>();
pub const CREATE0: ProbeDef = def::<10>();
pub const DELETE0: ProbeDef = def::<11>();
pub const CREATE1K: ProbeDef = def::<12>();
pub const DELETE1K: ProbeDef = def::<13>();
pub const CREATE10K: ProbeDef = def::<14>();
pub const DELETE10K: ProbeDef = def::<15>();
pub const MMAP: ProbeDef = def::<16>();
pub const FAULT: ProbeDef = def::<17>();

/// Built in the orchestrator too (to check it can be), so partners and
/// files are made only when measuring starts.
struct MicroProbe {
    ops: &'static [OpDef],
}

/// An operation of the set, once its start succeeded.
struct Running {
    /// Index of its record.
    record: usize,
    operation: Box<dyn Operation>,
}

impl Probe for MicroProbe {
    fn measure(self: Box<Self>, window: Window, dir: &Path) -> Result<Measured, MeasureError> {
        std::fs::create_dir_all(dir).map_err(|error| MeasureError::Io {
            what: "cannot make the micro probe's directory",
            error,
        })?;
        let started: Vec<_> = self.ops.iter().map(|op| (op.start)(dir)).collect();
        // Only now, so that the spawners and partners were forked without
        // the histograms (see `procs`).
        let mut records: Vec<OpRecord> = self.ops.iter().map(OpRecord::new).collect();
        let mut running = Vec::new();
        for (index, started) in started.into_iter().enumerate() {
            match started {
                Ok(operation) => running.push(Running {
                    record: index,
                    operation,
                }),
                Err(error) => records[index].fail(error.to_string()),
            }
        }
        let ended_ns = repeat(window, &mut running, &mut records);
        // Partners killed and reaped, files removed.
        drop(running);
        report_failures(&records)?;
        Ok(record::tallies(
            &records,
            window,
            ended_ns.saturating_sub(window.start_ns),
        ))
    }
}

/// Runs the operations in turn at the rhythm until the window ends; an
/// operation that fails leaves the turns. Returns when it ended.
fn repeat(window: Window, running: &mut Vec<Running>, records: &mut [OpRecord]) -> u64 {
    let mut rhythm = Rhythm::new(window.start_ns, running.len());
    loop {
        let (at_ns, turn) = rhythm.next();
        if at_ns >= window.end_ns || running.is_empty() {
            return at_ns.min(window.end_ns).max(window.start_ns);
        }
        sleep_until_ns(at_ns);
        let op = &mut running[turn];
        match time_instance(op.operation.as_mut()) {
            Ok((started_ns, elapsed_ns)) => {
                records[op.record].record(window, started_ns, elapsed_ns);
            }
            Err(error) => {
                records[op.record].fail(error.to_string());
                running.remove(turn);
                rhythm = Rhythm::new(now_ns(), running.len());
                continue;
            }
        }
        rhythm.advance(now_ns());
    }
}

/// One instance of `operation`: when its timed part started, and how long
/// it took.
fn time_instance(operation: &mut dyn Operation) -> Result<(u64, u64), ops::OpError> {
    operation.prepare()?;
    let started_ns = now_ns();
    let elapsed_ns = operation.timed_ns()?;
    operation.tidy()?;
    Ok((started_ns, elapsed_ns))
}

/// Fails, with every reason, when no operation could run (those left out
/// while others ran are in the result's `left_out`, which the run turns
/// into a warning).
fn report_failures(records: &[OpRecord]) -> Result<(), MeasureError> {
    let failures: Vec<String> = records
        .iter()
        .filter_map(|r| Some(format!("{}: {}", r.name(), r.failure()?)))
        .collect();
    match failures.len() == records.len() {
        true => Err(MeasureError::Io {
            what: "no micro-operation could run",
            error: std::io::Error::other(failures.join("; ")),
        }),
        false => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_has_its_probe_in_order_after_micro() {
        let defs = [
            MICRO, FORK, EXEC, SH, CTX0, CTX64, PIPE, UNIX, UDP, TCP, CONNECT, CREATE0, DELETE0,
            CREATE1K, DELETE1K, CREATE10K, DELETE10K, MMAP, FAULT,
        ];
        assert_eq!(defs[0].name, "micro");
        let names: Vec<&str> = defs[1..].iter().map(|d| d.name).collect();
        let probes: Vec<&str> = OPS.iter().map(|op| op.probe).collect();
        assert_eq!(names, probes);
        for def in &defs {
            assert!(matches!(def.memory, MemoryPolicy::Shared), "{}", def.name);
            assert!(!(def.default)(&WorkParams::for_tests_sized(2, 1 << 30)));
        }
        assert_eq!(defs[6].sheet().columns.len(), 4);
        assert_eq!(defs[0].sheet().columns.len(), OPS.len());
    }

    #[test]
    fn an_operation_that_cannot_start_is_left_out_and_all_failing_fails() {
        let mut records: Vec<OpRecord> = OPS[..2].iter().map(OpRecord::new).collect();
        records[0].fail("cannot fork: no".into());
        assert!(report_failures(&records).is_ok());
        records[1].fail("cannot exec: no".into());
        let err = report_failures(&records).unwrap_err().to_string();
        assert_eq!(
            err,
            "no micro-operation could run: fork: cannot fork: no; exec: cannot exec: no"
        );
    }
}
