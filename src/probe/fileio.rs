//! `fileio`: IRMAN's FILE_IO response time done right. IRMAN timed small
//! requests on a megabyte of page cache, which measures memory; this probe
//! times small requests that reach the device the work directory is on:
//! a random 4 KiB read of a file much larger than a megabyte
//! (`--fileio-size`, 256 MiB by default), then, one period later, a random
//! 4 KiB write made durable with `fdatasync`, alternating, one request
//! every `--fileio-period` (20 ms: 250 of each in 10 s). A request slower
//! than the period delays the next, which starts as soon as it ends
//! (requests never pile up); the periods that passed meanwhile are counted
//! as missed. A request in flight when the window ends is waited for up
//! to 5 s more; one still running then (writes can take tens of seconds
//! under heavy write-back) is counted with the time it had taken, a lower
//! bound, and as `unfinished`, so the scenario still has its figures. The
//! requests are done, and timed around their system calls, by a thread of
//! their own (`io_thread`), which also sleeps until each is due and splits
//! it into the causes of its delay, by its own clocks and counters: a
//! request is late when it is done more than the run's first
//! `--io-thresholds` (100 ms by default) after it was due ([`late_after_ns`]).
//!
//! The file is made (and written out to the device) before the window is
//! announced. Requests bypass the page cache with `O_DIRECT`; where the
//! file system refuses it, each read's pages are dropped from the cache
//! first (`posix_fadvise(DONTNEED)`), and the figure `direct` says which
//! was used. Figures per kind: count, avg, SD, min, max, p99 and the % of
//! requests slower than each of `--io-thresholds` (keys `read_over1` to
//! `read_over3`, labels naming the thresholds).

use super::io_thread::{Order, Outcome, RequestThread, SplitRule, Target};
use super::late_split::{threshold_rule, LateSplit};
use super::{MeasureError, Probe, ProbeDef};
use crate::figures::result::MEASURED_S;
use crate::figures::{
    Better, Column, FigureDef, Formula, Measured, OverviewRole, ProbeSheet, Spread, Tally, Unit,
};
use crate::measure::batches::{batch_of, batch_seconds, BatchLatency, BATCHES};
use crate::measure::clock::now_ns;
use crate::measure::latency::LatencyHistogram;
use crate::measure::sched::MemoryPolicy;
use crate::measure::window::Window;
use crate::sim::draws::Draws;
use crate::sim::io::{show_threshold, IoSettings, MAX_THRESHOLDS};
use crate::sim::uncached::{bypass_cache, fill_on_device, AlignedBuf};
use crate::sim::{SettingsGroup, WorkParams};
use std::path::Path;

/// Bytes of each request.
const REQUEST_BYTES: usize = 4096;
/// Bytes of each write that makes the file.
const FILL_CHUNK_BYTES: usize = 1 << 20;
/// How long past the window's end the probe waits for a request in flight
/// (well inside the 10 s the engine gives a probe to report): one still
/// running then is counted with the time it had taken (a lower bound) and
/// as unfinished.
const LATE_LIMIT_NS: u64 = 5_000_000_000;

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "fileio",
    summary: "IRMAN's file I/O: random 4 KiB reads and fdatasync'd writes of a --fileio-size file, uncached",
    method: 1,
    sheet,
    build: |params: &WorkParams| Ok(Box::new(FileIoProbe::new(params))),
    default: |_| false,
    uses: &[SettingsGroup::Io],
    disk_bytes: |params| file_bytes(&params.io),
    pace: super::Pace::Duration,
    memory: MemoryPolicy::Locked,
    run_figure: super::no_run_figures,
};

/// Size of the probe's file: `--fileio-size` in whole requests.
pub fn file_bytes(io: &IoSettings) -> u64 {
    let request = REQUEST_BYTES as u64;
    (io.probe_file_bytes / request * request).max(request)
}

/// How long after it was due a request is done at the latest before it is
/// late: the run's first threshold, the one its `% over` figures and its
/// table already count requests over, so the late requests are those
/// (plus those whose wait to start made them late: the split measures from
/// when a request was due, the figures time its system calls), or 100 ms
/// without thresholds.
fn late_after_ns(io: &IoSettings) -> u64 {
    io.thresholds_ns.first().copied().unwrap_or(100_000_000)
}

/// The two kinds of request, and their names in tallies and figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
}

impl Kind {
    const BOTH: [Kind; 2] = [Kind::Read, Kind::Write];

    fn name(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Write => "write",
        }
    }

    /// The count of requests of this kind.
    fn count_name(self) -> &'static str {
        match self {
            Kind::Read => "reads",
            Kind::Write => "writes",
        }
    }

    /// What failed when one of its requests failed.
    fn failure(self) -> &'static str {
        match self {
            Kind::Read => "a read of its file failed",
            Kind::Write => "a write of its file (or its fdatasync) failed",
        }
    }

    /// The count of its requests slower than threshold `k` (0-based).
    fn over_name(self, k: usize) -> String {
        format!("{}_over{}", self.name(), k + 1)
    }
}

/// Periods in which no request started, because the one before was still
/// running.
const MISSED: &str = "missed";
/// Requests still running when the probe stopped waiting (at most one).
const UNFINISHED: &str = "unfinished";
/// Requests made with `O_DIRECT` (the others had their pages dropped).
const DIRECT: &str = "direct_requests";
/// Requests of both kinds.
const REQUESTS: &str = "requests";

/// The figures of each kind of request, the missed periods and how the
/// cache was bypassed. The labels of the threshold figures name the run's
/// thresholds (`None`: outside a run, the defaults).
fn sheet(summary: &str, params: Option<&WorkParams>) -> ProbeSheet {
    let thresholds = params.map_or_else(
        || IoSettings::default().thresholds_ns,
        |p| p.io.thresholds_ns.clone(),
    );
    let mut figures: Vec<FigureDef> = Kind::BOTH
        .iter()
        .flat_map(|&kind| kind_figures(kind, &thresholds))
        .collect();
    figures.extend([
        FigureDef::new(
            MISSED,
            "periods_missed",
            "periods missed (a request outlasted its period)",
            Unit::Count,
            Better::Lower,
            Formula::Total {
                count: MISSED.to_string(),
            },
        ),
        FigureDef::new(
            UNFINISHED,
            "requests_unfinished",
            "requests unfinished 5 s after the window (counted with the time they had taken)",
            Unit::Count,
            Better::Lower,
            Formula::Total {
                count: UNFINISHED.to_string(),
            },
        ),
        FigureDef::new(
            "direct",
            "direct_pct",
            "% requests with O_DIRECT (the rest: pages dropped)",
            Unit::Percent,
            Better::Higher,
            Formula::Ratio {
                num: DIRECT.to_string(),
                den: REQUESTS.to_string(),
                scale: 100.0,
            },
        )
        .at_most(100.0),
    ]);
    let first = thresholds
        .first()
        .map_or(String::new(), |&t| show_threshold(t));
    let mut columns = Vec::new();
    for kind in Kind::BOTH {
        let name = kind.name();
        columns.extend([
            Column::new(
                &format!("{name} avg +/- SD"),
                &[&format!("{name}_mean"), &format!("{name}_sd")],
                18,
            ),
            Column::new(&format!("{name} max"), &[&format!("{name}_max")], 10),
            Column::new(
                &format!("% {} >{first}", kind.count_name()),
                &[&kind.over_name(0)],
                15,
            ),
        ]);
    }
    let sheet = ProbeSheet {
        summary: summary.to_string(),
        own_pace: false,
        columns,
        figures,
    };
    Kind::BOTH.iter().fold(sheet, |sheet, kind| {
        let mean = format!("{}_mean", kind.name());
        sheet.with_overview(&mean, OverviewRole::ratio("slower"))
    })
}

/// The figures of one kind of request.
fn kind_figures(kind: Kind, thresholds: &[u64]) -> Vec<FigureDef> {
    let name = kind.name();
    let s = || name.to_string();
    let ms = |key: &str, label: &str, formula: Formula| {
        FigureDef::new(
            &format!("{name}_{key}"),
            &format!("{name}_{key}_us"),
            &format!("{name} {label} (ms)"),
            Unit::Micros,
            Better::Lower,
            formula,
        )
    };
    let mut figures = vec![
        FigureDef::new(
            kind.count_name(),
            kind.count_name(),
            kind.count_name(),
            Unit::Count,
            Better::Higher,
            Formula::Total {
                count: kind.count_name().to_string(),
            },
        ),
        ms("mean", "avg", Formula::Mean { samples: s() })
            .spread(Spread::SubWindows)
            .headline()
            .compared(),
        ms("sd", "S.D.", Formula::Sd { samples: s() }),
        ms("min", "min", Formula::Min { samples: s() }),
        ms("max", "max", Formula::Max { samples: s() }).compared(),
        ms(
            "p99",
            "p99",
            Formula::Quantile {
                samples: s(),
                q: 0.99,
            },
        ),
    ];
    figures.extend(
        thresholds
            .iter()
            .take(MAX_THRESHOLDS)
            .enumerate()
            .map(|(k, &t)| {
                FigureDef::new(
                    &kind.over_name(k),
                    &format!("{}_pct", kind.over_name(k)),
                    &format!("% {} over {}", kind.count_name(), show_threshold(t)),
                    Unit::Percent,
                    Better::Lower,
                    Formula::Ratio {
                        num: kind.over_name(k),
                        den: kind.count_name().to_string(),
                        scale: 100.0,
                    },
                )
                .at_most(100.0)
                .spread(Spread::SubWindows)
                .compared()
            }),
    );
    figures
}

/// Requests of one kind: their latencies and how many were slower than
/// each threshold. Allocated whole when made.
#[derive(Debug)]
struct KindRecord {
    latency: LatencyHistogram,
    sum_ns: u64,
    over: [u64; MAX_THRESHOLDS],
    batches: [KindBatch; BATCHES],
}

/// Requests of one kind that started in one sub-window.
#[derive(Debug, Default)]
struct KindBatch {
    latency: BatchLatency,
    over: [u64; MAX_THRESHOLDS],
}

impl KindRecord {
    fn new() -> Self {
        Self {
            latency: LatencyHistogram::new(),
            sum_ns: 0,
            over: [0; MAX_THRESHOLDS],
            batches: Default::default(),
        }
    }
}

/// What the probe counted: both kinds, the missed periods, the requests
/// made with `O_DIRECT`.
#[derive(Debug)]
struct Requests {
    thresholds_ns: Vec<u64>,
    read: KindRecord,
    write: KindRecord,
    missed: u64,
    unfinished: u64,
    direct: u64,
}

impl Requests {
    fn new(thresholds_ns: &[u64]) -> Self {
        Self {
            thresholds_ns: thresholds_ns.iter().take(MAX_THRESHOLDS).copied().collect(),
            read: KindRecord::new(),
            write: KindRecord::new(),
            missed: 0,
            unfinished: 0,
            direct: 0,
        }
    }

    fn of(&mut self, kind: Kind) -> &mut KindRecord {
        match kind {
            Kind::Read => &mut self.read,
            Kind::Write => &mut self.write,
        }
    }

    /// Accounts a request of the measurement of `window` that started at
    /// `started_ns` and took `ns`.
    fn record(&mut self, window: Window, kind: Kind, started_ns: u64, ns: u64, direct: bool) {
        self.direct += u64::from(direct);
        let thresholds: [u64; MAX_THRESHOLDS] =
            std::array::from_fn(|k| self.thresholds_ns.get(k).copied().unwrap_or(u64::MAX));
        let record = self.of(kind);
        record.latency.record_ns(ns);
        record.sum_ns += ns;
        let batch = &mut record.batches[batch_of(window, started_ns)];
        batch.latency.record_ns(ns);
        for (k, threshold) in thresholds.iter().enumerate() {
            let over = u64::from(ns > *threshold);
            record.over[k] += over;
            batch.over[k] += over;
        }
    }

    /// The tallies of a measurement of `window` that lasted `measured_ns`.
    fn tallies(&self, window: Window, measured_ns: u64) -> Measured {
        let kinds = [(Kind::Read, &self.read), (Kind::Write, &self.write)];
        let used = self.thresholds_ns.len();
        let mut tally = Tally::default()
            .with_count(MEASURED_S, measured_ns as f64 / 1e9)
            .with_count(MISSED, self.missed as f64)
            .with_count(UNFINISHED, self.unfinished as f64)
            .with_count(DIRECT, self.direct as f64);
        let mut requests = 0;
        for (kind, record) in kinds {
            requests += record.latency.len();
            tally = tally
                .with_samples(kind.name(), &record.latency, record.sum_ns)
                .with_count(kind.count_name(), record.latency.len() as f64);
            for k in 0..used {
                tally = tally.with_count(&kind.over_name(k), record.over[k] as f64);
            }
        }
        tally = tally.with_count(REQUESTS, requests as f64);
        let seconds = batch_seconds(window);
        let batches = (0..BATCHES)
            .map(|b| {
                let mut batch = Tally::default().with_count(MEASURED_S, seconds);
                for (kind, record) in kinds {
                    let part = &record.batches[b];
                    batch = batch
                        .with_samples(kind.name(), part.latency.histogram(), part.latency.sum_ns())
                        .with_count(kind.count_name(), part.latency.count() as f64);
                    for k in 0..used {
                        batch = batch.with_count(&kind.over_name(k), part.over[k] as f64);
                    }
                }
                batch
            })
            .collect();
        Measured::of(tally, batches)
    }
}

/// When the request after one that was due at `due_ns` and ended at
/// `ended_ns` starts, and how many periods passed with no request start:
/// one period after `due_ns`, or at once when the request outlasted it.
fn next_start(due_ns: u64, ended_ns: u64, period_ns: u64) -> (u64, u64) {
    let next = due_ns + period_ns;
    if ended_ns <= next {
        (next, 0)
    } else {
        (ended_ns, (ended_ns - next) / period_ns)
    }
}

struct FileIoProbe {
    settings: IoSettings,
    requests: Requests,
    draws: Draws,
    /// The thread doing the requests, and the file's size in requests,
    /// once the file is made.
    io: Option<(RequestThread, u64)>,
    /// Requests bypass the page cache.
    direct: bool,
    /// The account the request thread splits requests into, until the
    /// thread is started.
    late: Option<LateSplit>,
}

impl FileIoProbe {
    fn new(params: &WorkParams) -> Self {
        let settings = &params.io;
        Self {
            settings: settings.clone(),
            requests: Requests::new(&settings.thresholds_ns),
            draws: Draws::new(u64::from(std::process::id())),
            io: None,
            direct: false,
            late: Some(LateSplit::new(params)),
        }
    }
}

fn io_error(what: &'static str, error: std::io::Error) -> MeasureError {
    MeasureError::Io { what, error }
}

impl Probe for FileIoProbe {
    fn prepare(&mut self, dir: &Path) -> Result<(), MeasureError> {
        std::fs::create_dir_all(dir).map_err(|e| io_error("cannot make its directory", e))?;
        // Unnamed: its space is freed when the probe ends, however it ends.
        let file = tempfile::tempfile_in(dir).map_err(|e| io_error("cannot make its file", e))?;
        let size = file_bytes(&self.settings);
        let fill = AlignedBuf::incompressible(FILL_CHUNK_BYTES);
        fill_on_device(&file, &fill, size).map_err(|e| io_error("cannot fill its file", e))?;
        self.direct =
            bypass_cache(&file).map_err(|errno| io_error("cannot set O_DIRECT", errno.into()))?;
        let target = Target {
            file,
            direct: self.direct,
        };
        let rule = SplitRule {
            late: self.late.take().ok_or_else(|| {
                io_error("prepared twice", std::io::ErrorKind::AlreadyExists.into())
            })?,
            late_after_ns: late_after_ns(&self.settings),
        };
        let thread = RequestThread::on(target, REQUEST_BYTES, rule)
            .map_err(|e| io_error("cannot start its request thread", e))?;
        self.io = Some((thread, size / REQUEST_BYTES as u64));
        Ok(())
    }

    fn measure(mut self: Box<Self>, window: Window, _dir: &Path) -> Result<Measured, MeasureError> {
        let (mut thread, blocks) = self.io.take().ok_or_else(|| {
            io_error(
                "measured before its file was made",
                std::io::ErrorKind::NotFound.into(),
            )
        })?;
        thread.set_window(window);
        let period_ns = self.settings.period_ns;
        let give_up_ns = window.end_ns + LATE_LIMIT_NS;
        let mut due_ns = window.start_ns;
        let mut ended_ns = window.start_ns;
        let mut kinds = Kind::BOTH.iter().cycle();
        while due_ns < window.end_ns {
            let kind = *kinds.next().expect("a cycle never ends");
            let order = Order {
                write: kind == Kind::Write,
                offset: self.draws.below(blocks) * REQUEST_BYTES as u64,
                due_ns,
            };
            let outcome = thread
                .request(order, give_up_ns)
                .map_err(|e| io_error(kind.failure(), e))?;
            ended_ns = now_ns();
            let took_ns = match outcome {
                Outcome::Done { took_ns } => took_ns,
                Outcome::Unfinished { waited_ns } => waited_ns,
            };
            self.requests
                .record(window, kind, due_ns, took_ns, self.direct);
            if let Outcome::Unfinished { .. } = outcome {
                self.requests.unfinished += 1;
                break;
            }
            let (next, missed) = next_start(due_ns, ended_ns, period_ns);
            self.requests.missed += missed;
            due_ns = next;
        }
        let rule = threshold_rule("a request", late_after_ns(&self.settings));
        Ok(Measured {
            late: thread.late_causes(&rule),
            ..self
                .requests
                .tallies(window, ended_ns.saturating_sub(window.start_ns))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::ProbeResult;
    use crate::measure::sched::SchedApplied;

    const MS: u64 = 1_000_000;
    const WINDOW: Window = Window::ms(1_000, 2_000);

    #[test]
    fn a_slow_request_delays_the_next_and_misses_the_periods_it_covers() {
        assert_eq!(next_start(0, 5 * MS, 20 * MS), (20 * MS, 0));
        assert_eq!(next_start(0, 20 * MS, 20 * MS), (20 * MS, 0));
        assert_eq!(next_start(0, 30 * MS, 20 * MS), (30 * MS, 0));
        assert_eq!(next_start(0, 75 * MS, 20 * MS), (75 * MS, 2));
    }

    /// Scripted requests: reads of 1, 2, 3 and 150 ms, writes of 10 ms and
    /// 2.5 s, over the default thresholds.
    fn scripted() -> ProbeResult {
        let mut requests = Requests::new(&IoSettings::default().thresholds_ns);
        for (k, ms) in [1, 2, 3, 150].into_iter().enumerate() {
            let at = WINDOW.start_ns + k as u64 * 300 * MS;
            requests.record(WINDOW, Kind::Read, at, ms * MS, true);
        }
        requests.record(WINDOW, Kind::Write, WINDOW.start_ns, 10 * MS, true);
        requests.record(WINDOW, Kind::Write, WINDOW.start_ns, 2_500 * MS, false);
        requests.missed = 3;
        let measured = requests.tallies(WINDOW, 1_000 * MS);
        ProbeResult::of_measured(
            &sheet("scripted", None),
            measured,
            SchedApplied::for_tests(),
        )
    }

    #[test]
    fn figures_per_kind_and_threshold() {
        let f = scripted().figures;
        assert_eq!(f["reads"], 4.0);
        assert_eq!(f["read_mean_us"], 39_000.0);
        assert!((f["read_max_us"] - 150_000.0).abs() < 150.0);
        assert!((f["read_min_us"] - 1_000.0).abs() < 1.0);
        assert!(f["read_min_us"] <= f["read_mean_us"] && f["read_mean_us"] <= f["read_max_us"]);
        assert_eq!(
            (
                f["read_over1_pct"],
                f["read_over2_pct"],
                f["read_over3_pct"]
            ),
            (25.0, 0.0, 0.0)
        );
        assert_eq!(
            (
                f["write_over1_pct"],
                f["write_over2_pct"],
                f["write_over3_pct"]
            ),
            (50.0, 50.0, 0.0)
        );
        assert_eq!(f["periods_missed"], 3.0);
        assert!((f["direct_pct"] - 500.0 / 6.0).abs() < 1e-9);
    }

    #[test]
    fn sub_windows_hold_the_requests_that_started_in_them() {
        let result = scripted();
        let reads: Vec<f64> = result.batches.iter().map(|b| b.count("reads")).collect();
        assert_eq!(reads.iter().sum::<f64>(), 4.0);
        // Reads at 0, 300, 600 and 900 ms of a 1 s window of 50 ms sub-windows.
        for k in [0, 6, 12, 18] {
            assert_eq!(reads[k], 1.0, "{reads:?}");
        }
        assert_eq!(result.batches[18].count("read_over1"), 1.0);
    }

    #[test]
    fn labels_name_the_thresholds_and_keys_stay() {
        let params = WorkParams {
            io: IoSettings {
                thresholds_ns: vec![50 * MS, 1_000 * MS],
                ..IoSettings::default()
            },
            ..WorkParams::for_tests()
        };
        let sheet = sheet("s", Some(&params));
        let over1 = sheet.figure("write_over1").unwrap();
        assert_eq!(over1.label, "% writes over 50ms");
        assert_eq!(sheet.figure("read_over2").unwrap().label, "% reads over 1s");
        assert!(sheet.figure("read_over3").is_none());
        assert_eq!(sheet.columns[2].header, "% reads >50ms");
        let default = super::sheet("s", None);
        assert_eq!(
            default.figure("read_over3").unwrap().label,
            "% reads over 10s"
        );
    }

    #[test]
    fn the_file_is_whole_requests() {
        let io = |bytes| IoSettings {
            probe_file_bytes: bytes,
            ..IoSettings::default()
        };
        assert_eq!(file_bytes(&io(256 << 20)), 256 << 20);
        assert_eq!(file_bytes(&io(10_000)), 8192);
        assert_eq!(file_bytes(&io(1)), 4096);
    }
}
