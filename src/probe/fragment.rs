//! `fragment`: Benno Senoner's latencytest. A player feeds a sound device
//! through a buffer of N fragments of B bytes (`--fragments`,
//! `--fragment-bytes`, `--sample-rate`; latencytest's `3 256` at 44.1 kHz
//! 16-bit stereo by default, 1.45 ms a fragment). The device is hardware:
//! it is modelled from the clock, not by a thread of ours. Playback starts
//! with a full buffer at the window's start, and the device plays one
//! fragment per fragment time for as long as it has any. A fragment's slot
//! is free once the buffer holds fewer than N fragments (the one playing
//! counts until it has played). The player sleeps (absolute
//! `clock_nanosleep`) until a slot is free, does its CPU work for the
//! fragment (`--fragment-cpu`, % of a fragment's time) and writes.
//!
//! Figures:
//! - **latency** of each write: from the moment its slot became free to the
//!   write, so the wake-up delay plus the work; ideally the work alone.
//! - **underruns**: writes that came after the device had played everything
//!   (it found the buffer empty: an audible dropout). The device stays
//!   silent until the write and plays from then on (as a real device
//!   restarts when written to).
//! - **longest dropout**: the longest such silence.
//! - **fragments on time %** (headline): writes that did not underrun.
//!
//! Each write is split into the causes of its delay (`late_split`): it is
//! due when its slot became free and wants the fragment's CPU work; it is
//! late by [`LATE_RULE`], an underrun.
//!
//! Scheduling: the probe runs as the other probes do, SCHED_OTHER unless
//! the run is given `--rt` (SCHED_FIFO for every probe). latencytest ran
//! SCHED_FIFO; `--rt` reproduces that, and keeping one rule for every probe
//! lets the `fragment` figures be set beside the others of the same run.

use super::frame_figures::{count_figure, latency_columns, LATENCY};
use super::late_split::LateSplit;
use super::{MeasureError, Probe, ProbeDef};
use crate::figures::result::MEASURED_S;
use crate::figures::LateCauses;
use crate::figures::{
    latency_figures, Better, Column, FigureDef, Formula, LatencySeries, Measured, Noticeable,
    OverviewRole, ProbeSheet, Spread, Tally, Unit,
};
use crate::measure::batches::{batch_of, batch_seconds, BatchLatency, BATCHES};
use crate::measure::clock::sleep_until_ns;
use crate::measure::late::EventTimes;
use crate::measure::latency::LatencyHistogram;
use crate::measure::sched::MemoryPolicy;
use crate::measure::series::{SeriesRecorder, SERIES_POINTS};
use crate::measure::window::Window;
use crate::measure::work::work_cpu_ns;
use crate::sim::fragment::{Device, FragmentSettings, WriteOutcome};
use crate::sim::{SettingsGroup, WorkParams};
use std::path::Path;

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "fragment",
    summary: "latencytest's audio player: fragments written to a sound device's buffer of --fragments x --fragment-bytes",
    method: 1,
    sheet,
    build: |params: &WorkParams| {
        Ok(Box::new(FragmentProbe {
            loops_per_ms: params.loops_per_ms,
            settings: params.fragment,
            writes: Writes::new(&params.fragment),
            late: LateSplit::new(params),
        }))
    },
    default: |_| false,
    uses: &[SettingsGroup::Fragment],
    pace: super::Pace::Duration,
    disk_bytes: super::no_disk,
    memory: MemoryPolicy::Locked,
    run_figure: super::no_run_figures,
};

/// The rule a write is late by: its deadline is the moment the device
/// runs out of fragments.
const LATE_RULE: &str = "underran: written after the device had played every fragment";

/// Fragments written after playback started.
const WRITES: &str = "writes";
/// Writes that came after the device had run out of fragments.
const UNDERRUNS: &str = "underruns";
/// Writes that came before the device ran out.
const ON_TIME: &str = "on_time";
/// The longest time the device was silent, in µs.
const LONGEST_DROPOUT_US: &str = "longest_dropout_us";
/// Writes whose latency was over one fragment's time: latencytest's ideal
/// latency, the buffer's margin lost by a fragment.
const OVER_FRAGMENT: &str = "over_fragment";

/// The figures of the player: write latency, the % of writes over one
/// fragment's time (latencytest's ideal latency, named in the header when
/// the run's settings are known), underruns, longest dropout.
fn sheet(summary: &str, params: Option<&WorkParams>) -> ProbeSheet {
    let mut figures = latency_figures(LATENCY);
    figures.extend([
        FigureDef::new(
            "min",
            "latency_min_us",
            "latency min (ms)",
            Unit::Micros,
            Better::Lower,
            Formula::Min {
                samples: LATENCY.to_string(),
            },
        ),
        count_figure(WRITES, "writes", "fragments written", Better::Higher),
        count_figure(UNDERRUNS, "underruns", "buffer underruns", Better::Lower).compared(),
        FigureDef::new(
            "on_time",
            "on_time_pct",
            "fragments on time %",
            Unit::Percent,
            Better::Higher,
            Formula::Ratio {
                num: ON_TIME.to_string(),
                den: WRITES.to_string(),
                scale: 100.0,
            },
        )
        .at_most(100.0)
        .spread(Spread::SubWindows)
        .headline()
        .compared(),
        FigureDef::new(
            "over_fragment",
            "over_fragment_pct",
            "writes over one fragment's time late %",
            Unit::Percent,
            Better::Lower,
            Formula::Ratio {
                num: OVER_FRAGMENT.to_string(),
                den: WRITES.to_string(),
                scale: 100.0,
            },
        )
        .at_most(100.0),
        FigureDef::new(
            "dropout",
            "longest_dropout_us",
            "longest dropout (ms)",
            Unit::Micros,
            Better::Lower,
            Formula::Largest {
                maximum: LONGEST_DROPOUT_US.to_string(),
            },
        )
        .compared(),
    ]);
    let over_fragment = match params {
        Some(p) => format!("% >{:.2} ms", p.fragment.fragment_ns() as f64 / 1e6),
        None => "% >1 fragment".to_string(),
    };
    let mut columns = latency_columns();
    columns.extend([
        Column::new(&over_fragment, &["over_fragment"], 13),
        Column::new("Underruns", &[UNDERRUNS], 10),
        Column::new("Longest dropout (ms)", &["dropout"], 20),
    ]);
    ProbeSheet {
        summary: summary.to_string(),
        own_pace: false,
        columns,
        figures,
    }
    .with_overview("mean", OverviewRole::ratio("later"))
    .with_overview("on_time", OverviewRole::Share)
    .with_noticeable(
        "on_time",
        Noticeable::new(
            100.0,
            99.9,
            "an underrun is an audible dropout, heard even once (latencytest's measure); poor \
             from 0.1 % of writes, a dropout about every 1.5 s at the default 1.45 ms \
             fragments (feelbench's choice)",
        ),
    )
}

struct FragmentProbe {
    loops_per_ms: f64,
    settings: FragmentSettings,
    writes: Writes,
    late: LateSplit,
}

/// The writes of a measurement, in total, per sub-window and over time.
/// All storage is allocated on creation.
#[derive(Debug)]
struct Writes {
    latency: LatencyHistogram,
    underruns: u64,
    longest_dropout_ns: u64,
    /// Writes later than one fragment's time.
    over_fragment: u64,
    batches: [WriteBatch; BATCHES],
    series: SeriesRecorder,
    /// The time one fragment plays: latencytest's ideal latency, which its
    /// graphs drew the measured latency against.
    fragment_ns: u64,
}

/// The writes made in one sub-window.
#[derive(Debug, Default)]
struct WriteBatch {
    latency: BatchLatency,
    underruns: u64,
}

impl Writes {
    /// No writes yet, of the fragments `settings` give.
    fn new(settings: &FragmentSettings) -> Self {
        Self {
            latency: LatencyHistogram::new(),
            underruns: 0,
            longest_dropout_ns: 0,
            over_fragment: 0,
            batches: Default::default(),
            series: SeriesRecorder::with_points(SERIES_POINTS),
            fragment_ns: settings.fragment_ns(),
        }
    }

    /// Accounts a write of the measurement of `window` made at `at_ns`.
    fn record(&mut self, window: Window, at_ns: u64, outcome: WriteOutcome) {
        let underrun = u64::from(outcome.dropout_ns > 0);
        self.latency.record_ns(outcome.latency_ns);
        self.underruns += underrun;
        self.over_fragment += u64::from(outcome.latency_ns > self.fragment_ns);
        self.longest_dropout_ns = self.longest_dropout_ns.max(outcome.dropout_ns);
        let batch = &mut self.batches[batch_of(window, at_ns)];
        batch.latency.record_ns(outcome.latency_ns);
        batch.underruns += underrun;
        self.series
            .record(at_ns.saturating_sub(window.start_ns), outcome.latency_ns);
    }
}

impl Probe for FragmentProbe {
    fn measure(self: Box<Self>, window: Window, _dir: &Path) -> Result<Measured, MeasureError> {
        let mut writes = self.writes;
        let mut splitting = self.late.open(window);
        let cpu_time = splitting.cpu_time();
        let cpu_ns = self.settings.cpu_ns();
        sleep_until_ns(window.start_ns);
        let mut device = Device::started(&self.settings, window.start_ns);
        let mut last_ns = window.start_ns;
        while device.free_at_ns() < window.end_ns {
            let due_ns = device.free_at_ns();
            sleep_until_ns(due_ns);
            splitting.woke();
            work_cpu_ns(&cpu_time, self.loops_per_ms, cpu_ns);
            let times = EventTimes {
                due_ns,
                cpu_wanted_ns: Some(cpu_ns),
            };
            last_ns = splitting.ended_by(times, device.drained_ns);
            let outcome = device.write(last_ns);
            writes.record(window, last_ns, outcome);
        }
        Ok(Measured {
            late: LateCauses::of_splitting(&splitting, LATE_RULE),
            ..fragment_tallies(
                &writes,
                window,
                last_ns.max(window.end_ns) - window.start_ns,
            )
        })
    }
}

/// The tallies of the writes of a measurement of `window` that lasted
/// `measured_ns`.
fn fragment_tallies(writes: &Writes, window: Window, measured_ns: u64) -> Measured {
    let seconds = batch_seconds(window);
    let count = writes.latency.len() as f64;
    let sum_ns = writes.batches.iter().map(|b| b.latency.sum_ns()).sum();
    let tally = Tally::default()
        .with_samples(LATENCY, &writes.latency, sum_ns)
        .with_count(MEASURED_S, measured_ns as f64 / 1e9)
        .with_count(WRITES, count)
        .with_count(UNDERRUNS, writes.underruns as f64)
        .with_count(ON_TIME, count - writes.underruns as f64)
        .with_count(OVER_FRAGMENT, writes.over_fragment as f64)
        .with_maximum(LONGEST_DROPOUT_US, writes.longest_dropout_ns as f64 / 1e3);
    let batches = writes
        .batches
        .iter()
        .map(|batch| {
            let count = batch.latency.count() as f64;
            Tally::default()
                .with_samples(LATENCY, batch.latency.histogram(), batch.latency.sum_ns())
                .with_count(MEASURED_S, seconds)
                .with_count(WRITES, count)
                .with_count(UNDERRUNS, batch.underruns as f64)
                .with_count(ON_TIME, count - batch.underruns as f64)
        })
        .collect();
    let ideal_us = (writes.fragment_ns > 0).then(|| writes.fragment_ns as f64 / 1e3);
    Measured {
        series: Some(LatencySeries::of(&writes.series, ideal_us)),
        ..Measured::of(tally, batches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::ProbeResult;
    use crate::measure::sched::SchedApplied;

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    fn settings() -> FragmentSettings {
        FragmentSettings::for_tests()
    }

    /// Writes of a scripted 1 s measurement at 1 ms fragments: each write
    /// 50 µs after its slot frees, but the player stalls 5 ms before the
    /// write due at 500 ms.
    fn scripted_measured() -> Measured {
        let window = Window {
            start_ns: 1_000 * MS,
            end_ns: 2_000 * MS,
        };
        let mut device = Device::started(&settings(), window.start_ns);
        let mut writes = Writes::new(&settings());
        while device.free_at_ns() < window.end_ns {
            let free_ns = device.free_at_ns();
            let stall_ns = if free_ns == window.start_ns + 500 * MS {
                5 * MS
            } else {
                0
            };
            let at_ns = free_ns + stall_ns + 50 * US;
            writes.record(window, at_ns, device.write(at_ns));
        }
        fragment_tallies(&writes, window, 1_000 * MS)
    }

    fn scripted_result() -> ProbeResult {
        let measured = scripted_measured();
        ProbeResult::new(
            &sheet("scripted", None),
            measured.tally,
            measured.batches,
            SchedApplied::for_tests(),
        )
    }

    #[test]
    fn every_write_is_in_the_series_drawn_against_one_fragments_time() {
        let measured = scripted_measured();
        let series = measured.series.unwrap();
        let counted: u64 = series.points.iter().map(|p| p.count).sum();
        assert_eq!(counted as f64, measured.tally.count(WRITES));
        let ideal_us = settings().fragment_ns() as f64 / 1e3;
        assert_eq!(series.ideal_us, Some(ideal_us));
        // The 5 ms stall is the largest latency drawn.
        let max_us = series.points.iter().map(|p| p.max_us).fold(0.0, f64::max);
        assert!((5_000.0..5_100.0).contains(&max_us), "{max_us}");
    }

    #[test]
    fn a_stall_longer_than_the_buffer_is_one_underrun() {
        let result = scripted_result();
        let f = &result.figures;
        // The stall of 5 ms against 2 ms of buffered sound: silent for
        // 5.05 − 2 ms, once; the writes after it catch up at once.
        assert_eq!(f["underruns"], 1.0);
        assert!((f["longest_dropout_us"] - 3_050.0).abs() < 1e-9);
        assert!(
            f["writes"] > 990.0 && f["writes"] < 1_000.0,
            "{}",
            f["writes"]
        );
        assert!(f["latency_min_us"] <= f["latency_p99_us"]);
        assert!(f["latency_p99_us"] <= f["latency_max_us"]);
        assert!(
            (f["latency_max_us"] - 5_050.0).abs() < 60.0,
            "{}",
            f["latency_max_us"]
        );
        assert!((f["on_time_pct"] - 100.0 * (f["writes"] - 1.0) / f["writes"]).abs() < 1e-9);
        // Over one fragment (1 ms) late: the stalled write alone.
        assert!((f["over_fragment_pct"] - 100.0 / f["writes"]).abs() < 1e-9);
    }

    #[test]
    fn the_table_names_the_fragment_time_it_counts_writes_over() {
        let header = |params: Option<&WorkParams>| {
            let sheet = sheet("s", params);
            let headers: Vec<String> = sheet.columns.iter().map(|c| c.header.clone()).collect();
            headers[3].clone()
        };
        assert_eq!(header(None), "% >1 fragment");
        // latencytest's 3 x 256 bytes at 44.1 kHz: 1.45 ms a fragment.
        assert_eq!(header(Some(&WorkParams::for_tests())), "% >1.45 ms");
    }

    #[test]
    fn batches_add_up_to_the_totals() {
        let result = scripted_result();
        for count in [WRITES, UNDERRUNS, ON_TIME] {
            let sum: f64 = result.batches.iter().map(|b| b.count(count)).sum();
            assert_eq!(sum, result.tally.count(count), "{count}");
        }
        assert_eq!(result.batches[10].count(UNDERRUNS), 1.0);
    }
}
