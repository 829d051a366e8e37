//! `micro` and `micro:OP`: LMbench's micro-latencies measured under load.
//! Each operation (fork, exec, a pipe round trip, a file create, a page
//! fault, ... see `ops`) runs at a steady rhythm for the scenario's
//! duration, one at a time, or in LMbench's warm back-to-back loops with
//! `--micro-mode lmbench` (`rhythm`, and `batch`: an instance is then a
//! loop of them, its time divided by their number, as LMbench times), each
//! instance timed into a histogram of its own
//! (`record`); `micro` runs them all, taking turns, and shows LMbench's
//! table (one median column per operation, the loads as rows); `micro:OP`
//! runs one. The registry entries come from one generic definition, [`def`],
//! by the operation's index (or [`ALL`]).
//!
//! Everything is set up in [`Probe::prepare`], before the window is
//! announced: in LMbench's mode the probe moves to one CPU (LMbench's
//! programs were run each on one CPU), then the partners are forked, the
//! files written, and only then the histograms allocated and made resident
//! (see `procs`); each operation then runs once untimed, so the window
//! holds nothing but timed, warm instances.
//!
//! An operation that cannot run here (no loopback, no room) is left out with
//! its reason (the result's `left_out`, a warning of the run) and an
//! `OP_failed` count; the others go on. Only
//! when every operation of the probe fails does the scenario fail.
//!
//! Each instance is split into the causes of its delay (`late_split`),
//! from readings taken before it is readied and after it is tidied, never
//! inside its timed part: it is due at its slot of the rhythm (in
//! LMbench's way, when the instance before it ended, so the split is of
//! each timed instance, which may hold many operations, and the readings
//! add two to the gap between back-to-back instances), and late when it is
//! done more than [`LATE_AFTER_NS`] after that.
//!
//! The thread that times reads its CPU time for the split from its CPU
//! clock, not from a perf task clock as the other probes do: a counter on
//! the thread is switched at each of its context switches, which the
//! round trips and switches time (it added about 1 µs to a pipe round trip
//! of 5 µs on this project's VM), and the CPU clock is read only between
//! instances.
//!
//! The probe shares its memory ([`MemoryPolicy::Shared`]): it faults and
//! maps on purpose, and with locked memory (`MCL_FUTURE`) every new mapping
//! would be populated at once, so `mmap` would read no page lazily and
//! `fault` would time no fault.

mod batch;
mod files;
mod ops;
mod partner;
mod procs;
mod record;
mod rhythm;
mod sheet;
mod talk;

use super::late_split::{threshold_rule, LateSplit};
use super::{MeasureError, Pace, Probe, ProbeDef};
use crate::figures::LateCauses;
use crate::figures::{Measured, ProbeSheet};
use crate::measure::affinity;
use crate::measure::attrib::Splitting;
use crate::measure::clock::{now_ns, sleep_until_ns};
use crate::measure::late::EventTimes;
use crate::measure::sched::MemoryPolicy;
use crate::measure::window::Window;
use crate::sim::micro::MicroMode;
use crate::sim::{SettingsGroup, WorkParams};
use crate::system::cpulist::CpuList;
use batch::Batch;
use ops::{OpDef, Operation, Timed, OPS};
use record::OpRecord;
use rhythm::Turns;
use std::path::Path;

/// How long after it was due an instance may end before it is late:
/// 10 ms, five times what the slowest operations (exec of /bin/true and
/// of /bin/sh, with their fork) take on an idle 2-core VM, so that an
/// instance is late only when it waited or was held up well beyond its
/// own work, and a tenth of the 100 ms at which a response stops feeling
/// immediate, which an interactive step made of a few such operations
/// would then reach.
pub const LATE_AFTER_NS: u64 = 10_000_000;

/// The method version of every micro probe (CHANGELOG.md): 2 since, in
/// LMbench's mode, an operation whose timed unit is not LMbench's names its
/// figures otherwise (`ops::Lmbench`), exec runs its program with no
/// environment (as lat_proc) and the mapped files are written a page at a
/// time (`files`).
pub const METHOD: u32 = 2;

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
        method: METHOD,
        sheet: sheet::<OP>,
        build: build::<OP>,
        default: |_| false,
        uses: &[SettingsGroup::Micro],
        disk_bytes: super::no_disk,
        pace: Pace::Duration,
        memory: MemoryPolicy::Shared,
        run_figure: super::no_run_figures,
    }
}

fn sheet<const OP: usize>(summary: &str, params: Option<&WorkParams>) -> ProbeSheet {
    let mode = params.map_or(MicroMode::default(), |p| p.micro);
    sheet::sheet_of(summary, ops_of(OP), mode)
}

fn build<const OP: usize>(params: &WorkParams) -> Result<Box<dyn Probe>, super::BuildError> {
    Ok(Box::new(MicroProbe {
        ops: ops_of(OP),
        mode: params.micro,
        ready: None,
        params: params.clone(),
    }))
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
/// files are made only when it is prepared in its worker.
struct MicroProbe {
    ops: &'static [OpDef],
    mode: MicroMode,
    /// The operations started and their records, once prepared.
    ready: Option<Ready>,
    /// The run's parameters, for the account its instances are split
    /// into: allocated only once the spawners and partners are forked (its
    /// histograms are about 4 MiB, which a spawner would otherwise copy
    /// into each fork, see `procs`).
    params: WorkParams,
}

/// What the probe measures with, made before its window.
struct Ready {
    running: Vec<Running>,
    records: Vec<OpRecord>,
    /// The readings of the measuring thread, opened (and their cost timed)
    /// before the window, so its first sub-window is as full as the others.
    splitting: Splitting,
}

/// An operation of the set, once its start succeeded.
struct Running {
    /// Index of its record.
    record: usize,
    operation: Box<dyn Operation>,
    /// The size of its next instance.
    batch: Batch,
}

impl Probe for MicroProbe {
    fn prepare(&mut self, dir: &Path) -> Result<(), MeasureError> {
        std::fs::create_dir_all(dir).map_err(|error| MeasureError::Io {
            what: "cannot make the micro probe's directory",
            error,
        })?;
        if self.mode == MicroMode::Lmbench {
            stay_on_one_cpu()?;
        }
        let started: Vec<_> = self
            .ops
            .iter()
            .map(|op| (op.start)(dir, self.mode))
            .collect();
        // Only now, so that the spawners and partners were forked without
        // the histograms (see `procs`), and the account below too.
        let mut records: Vec<OpRecord> = self.ops.iter().map(OpRecord::new).collect();
        let mut running = Vec::new();
        for (index, started) in started.into_iter().enumerate() {
            match started {
                Ok(operation) => running.push(Running {
                    record: index,
                    operation,
                    batch: Batch::new(self.mode, self.ops[index].most),
                }),
                Err(error) => records[index].fail(error.to_string()),
            }
        }
        warm_up(&mut running, &mut records);
        let splitting = LateSplit::new(&self.params).open_on_cpu_clock();
        self.ready = Some(Ready {
            running,
            records,
            splitting,
        });
        Ok(())
    }

    fn measure(mut self: Box<Self>, window: Window, _dir: &Path) -> Result<Measured, MeasureError> {
        let Ready {
            mut running,
            mut records,
            mut splitting,
        } = self.ready.take().ok_or_else(|| MeasureError::Io {
            what: "the micro probe measured without being prepared",
            error: std::io::Error::other("Probe::prepare was not called"),
        })?;
        splitting.set_window(window);
        let ended_ns = repeat(
            self.mode,
            window,
            &mut running,
            &mut records,
            &mut splitting,
        );
        // Partners killed and reaped, files removed.
        drop(running);
        report_failures(&records)?;
        Ok(Measured {
            late: LateCauses::of_splitting(
                &splitting,
                &threshold_rule("an instance", LATE_AFTER_NS),
            ),
            ..record::tallies(&records, window, ended_ns.saturating_sub(window.start_ns))
        })
    }
}

/// Runs each operation once, untimed, as LMbench's loops start with
/// untimed rounds: the first fork of a spawner, exec of a program, file of a
/// directory or round trip of a pair costs more than the next, and happens
/// here rather than in the window; it sizes the first instance of
/// LMbench's way. An operation that fails leaves the set.
fn warm_up(running: &mut Vec<Running>, records: &mut [OpRecord]) {
    running.retain_mut(|op| match time_instance(op.operation.as_mut(), 1) {
        Ok((_, timed)) => {
            op.batch.after(timed.elapsed_ns);
            true
        }
        Err(error) => {
            records[op.record].fail(error.to_string());
            false
        }
    });
}

/// Moves the probe to the first of the CPUs it may run on, as LMbench's
/// programs were run each on one CPU: the partners forked after it stay
/// there too.
fn stay_on_one_cpu() -> Result<(), MeasureError> {
    let io = |error: affinity::AffinityError| MeasureError::Io {
        what: "cannot move the micro probe to one CPU",
        error: std::io::Error::other(error),
    };
    let first = affinity::current().map_err(io)?.cpus().next();
    let one = first.and_then(|cpu| CpuList::from_cpus([cpu]));
    match one {
        Some(cpu) => affinity::set(&cpu).map(drop).map_err(io),
        None => Ok(()),
    }
}

/// Runs the operations in turns of `mode` until the window ends, each
/// instance split into `splitting`; an operation that fails leaves the
/// turns. Returns when it ended.
fn repeat(
    mode: MicroMode,
    window: Window,
    running: &mut Vec<Running>,
    records: &mut [OpRecord],
    splitting: &mut Splitting,
) -> u64 {
    let mut turns = Turns::new(mode, window.start_ns, running.len());
    loop {
        let (at_ns, turn) = turns.next();
        if at_ns >= window.end_ns || running.is_empty() {
            return at_ns.min(window.end_ns).max(window.start_ns);
        }
        sleep_until_ns(at_ns);
        let op = &mut running[turn];
        splitting.woke();
        let instance = time_instance(op.operation.as_mut(), op.batch.n());
        let times = EventTimes {
            due_ns: at_ns,
            cpu_wanted_ns: None,
        };
        let ended_ns = splitting.ended_by(times, at_ns + LATE_AFTER_NS);
        match instance {
            Ok((started_ns, timed)) => {
                records[op.record].record(window, started_ns, timed);
                op.batch.after(timed.elapsed_ns);
            }
            Err(error) => {
                records[op.record].fail(error.to_string());
                running.remove(turn);
                turns = Turns::new(mode, now_ns(), running.len());
                continue;
            }
        }
        turns.advance(ended_ns);
    }
}

/// One instance of `n` operations of `operation`: when its timed part
/// started, and what it measured.
fn time_instance(operation: &mut dyn Operation, n: u64) -> Result<(u64, Timed), ops::OpError> {
    operation.prepare(n)?;
    let started_ns = now_ns();
    let timed = operation.timed(n)?;
    operation.tidy()?;
    Ok((started_ns, timed))
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

    /// Version 2 (CHANGELOG.md): every micro probe, since figures of
    /// LMbench's mode were renamed where their unit is not LMbench's.
    #[test]
    fn every_micro_probe_is_at_method_version_2() {
        let defs = [
            MICRO, FORK, EXEC, SH, CTX0, CTX64, PIPE, UNIX, UDP, TCP, CONNECT, CREATE0, DELETE0,
            CREATE1K, DELETE1K, CREATE10K, DELETE10K, MMAP, FAULT,
        ];
        for def in defs {
            assert_eq!(def.method, 2, "{}", def.name);
        }
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

    /// The thread that times opens no perf counter on itself for the
    /// split (one would be switched at each context switch it times).
    #[test]
    fn the_timing_thread_splits_on_its_cpu_clock() {
        let dir = tempfile::tempdir().unwrap();
        let params = WorkParams {
            micro: MicroMode::Lmbench,
            ..WorkParams::for_tests()
        };
        let mut probe = MicroProbe {
            ops: ops_of(5),
            mode: params.micro,
            ready: None,
            params: params.clone(),
        };
        probe.prepare(&dir.path().join("micro")).unwrap();
        let ready = probe.ready.as_ref().unwrap();
        assert!(ready.splitting.splitter().is_some());
        assert!(!ready.splitting.cpu_time().has_counter());
    }

    /// Sub-window sample counts of every operation of `micro` in a
    /// window that opens 1 ms after the probe was prepared and lasts
    /// 400 ms (sub-windows of 20 ms, one period of the rhythm: each holds
    /// an instance of each operation).
    fn samples_per_sub_window() -> Vec<u64> {
        let dir = tempfile::tempdir().unwrap();
        let probe_dir = dir.path().join("micro");
        let mut probe = build::<ALL>(&WorkParams::for_tests()).unwrap();
        probe.prepare(&probe_dir).unwrap();
        let start_ns = now_ns() + 1_000_000;
        let window = Window {
            start_ns,
            end_ns: start_ns + 400_000_000,
        };
        let measured = probe.measure(window, &probe_dir).unwrap();
        assert!(measured.left_out.is_empty(), "{:?}", measured.left_out);
        measured
            .batches
            .iter()
            .map(|batch| OPS.iter().map(|op| batch.samples[op.name()].count).sum())
            .collect()
    }

    /// Nothing is set up in the window: its first sub-window holds about
    /// as many instances as the others (were the partners forked and the
    /// files written in it, the rhythm would start late: the first
    /// sub-window was empty every time). Other work on the machine (the
    /// other tests, six at once) can thin out any sub-window now and then,
    /// the first most (the probe's thread has just used the CPU for its
    /// warm-up), so the test passes when one of ten windows, spread over
    /// about 5 s, shows it as full as the others: the change-point tests'
    /// thousand series keep both CPUs busy for several seconds beside it,
    /// over which five windows 0.1 s apart were all thin (in CI, once).
    #[test]
    fn the_first_sub_window_is_as_full_as_the_others() {
        const TRIES: usize = 10;
        let tries: Vec<Vec<u64>> = (0..TRIES)
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(500));
                samples_per_sub_window()
            })
            .take_while(|counts| !first_as_full_as_the_others(counts))
            .collect();
        assert!(tries.len() < TRIES, "{tries:?}");
    }

    /// Whether the first count is at least half the median of the others.
    fn first_as_full_as_the_others(counts: &[u64]) -> bool {
        let mut others = counts[1..].to_vec();
        others.sort_unstable();
        let median = others[others.len() / 2];
        median > 0 && 2 * counts[0] >= median
    }
}
