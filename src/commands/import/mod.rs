//! `feelbench import mangohud|presentmon LOG... -o FILE`: real games' frame
//! logs read into a run document with the frame figures the `game` probe
//! gives (`figures::frame_pacing`), so that a player's logs under two
//! kernels or schedulers go through `compare`, `merge` and the store like
//! any run. The logs of one import are the repeats of one scenario: the
//! format's name as its probe, `--load` (what ran beside the game, `none`
//! unless said) as its load. Each log is cut into the run's 20 sub-windows
//! by its own frame times, as a probe's window is.

mod log;
mod mangohud;
mod presentmon;

use self::log::{FrameLog, LogError};
use crate::commands::run::document::compact_time;
use crate::document::file::write_run;
use crate::document::methods::Methods;
use crate::document::schema::{
    Measurement, RunDocument, RunInfo, RunSettingsRecord, ScenarioResult, ScenarioStatus, ToolInfo,
    SCHEMA,
};
use crate::exit::{ExitCode, UsageError};
use crate::figures::frame_pacing::{
    pacing_columns, pacing_figures, FRAMES, FRAME_TIME, MISSED, STUTTERS,
};
use crate::figures::result::MEASURED_S;
use crate::figures::{Column, OverviewRole, ProbeResult, ProbeSheet, Tally};
use crate::measure::batches::{batch_of, BatchLatency, BATCHES};
use crate::measure::latency::LatencyHistogram;
use crate::measure::sched::{MemoryPolicy, SchedApplied};
use crate::measure::stutter::stutters_of;
use crate::measure::window::Window;
use anyhow::Context as _;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The method version of the figures of an imported log.
const METHOD: u32 = 1;

/// Who wrote the logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// MangoHud's CSV log (`output_folder`, `autostart_log`).
    MangoHud,
    /// PresentMon's CSV (`--output_file`).
    PresentMon,
}

impl LogFormat {
    /// Its name: the probe of the scenario its logs make.
    pub fn name(self) -> &'static str {
        match self {
            LogFormat::MangoHud => "mangohud",
            LogFormat::PresentMon => "presentmon",
        }
    }

    fn read(self, path: &Path, text: &str) -> Result<FrameLog, LogError> {
        match self {
            LogFormat::MangoHud => mangohud::read(path, text),
            LogFormat::PresentMon => presentmon::read(path, text),
        }
    }
}

/// Settings of `feelbench import`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportSettings {
    pub format: LogFormat,
    /// The logs, the scenario's repeats in this order.
    pub files: Vec<PathBuf>,
    /// What ran beside the game (the scenario's load).
    pub load: String,
    /// Where the run is written.
    pub output: PathBuf,
}

/// Reads the logs and writes their run; a log that cannot be read is bad
/// input, named with its line.
pub fn run(settings: &ImportSettings) -> anyhow::Result<ExitCode> {
    let logs = settings
        .files
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)
                .map_err(|e| UsageError::new(format!("{}: cannot be read: {e}", path.display())))?;
            settings.format.read(path, &text).map_err(UsageError::input)
        })
        .collect::<Result<Vec<_>, UsageError>>()?;
    let run = log_run(settings, &logs, SystemTime::now())?;
    write_run(&settings.output, &run)
        .with_context(|| format!("cannot write the run to {}", settings.output.display()))?;
    let frames: usize = logs.iter().map(|l| l.frames_ns.len()).sum();
    say!(
        "{} {} logs ({frames} frames) written to {}",
        logs.len(),
        settings.format.name(),
        settings.output.display()
    );
    Ok(ExitCode::Success)
}

/// The sheet of a format's logs: the frame-pacing figures.
pub fn log_sheet(format: LogFormat) -> ProbeSheet {
    ProbeSheet {
        summary: format!("frames of {} logs of a real game", format.name()),
        own_pace: true,
        columns: [
            pacing_columns(),
            vec![Column::new("Frame SD (ms)", &["frame_sd"], 14)],
        ]
        .concat(),
        figures: pacing_figures(),
    }
    .with_overview("low1_p99", OverviewRole::ratio("slower"))
}

/// The run of `logs`, made at `now`.
fn log_run(
    settings: &ImportSettings,
    logs: &[FrameLog],
    now: SystemTime,
) -> Result<RunDocument, UsageError> {
    let format = settings.format;
    let sheet = log_sheet(format);
    let measurements = logs
        .iter()
        .map(|log| log_measurement(log, &sheet))
        .collect();
    let scenario = ScenarioResult::from_measurements(
        format.name().to_string(),
        settings.load.clone(),
        measurements,
        &sheet,
    )
    .map_err(UsageError::input)?;
    let mut system = crate::system::describe(Path::new("/proc"));
    if let Some(first) = logs.first() {
        system.kernel_release = first.kernel.clone().unwrap_or(system.kernel_release);
        system.cpu_model = first.cpu.clone().or(system.cpu_model);
    }
    let duration_s = logs.first().map_or(0.0, |l| seconds(&l.frames_ns));
    Ok(RunDocument {
        schema: SCHEMA.to_string(),
        tool: ToolInfo::this_build(),
        run: RunInfo {
            id: format!(
                "{}-{}-{}",
                compact_time(now),
                format.name(),
                std::process::id()
            ),
            started: humantime::format_rfc3339_seconds(now).to_string(),
            finished: Some(humantime::format_rfc3339_seconds(now).to_string()),
            interrupted: false,
            trace: None,
            comment: Some(format!(
                "imported from {}",
                settings
                    .files
                    .iter()
                    .map(|p| p.file_name().unwrap_or(p.as_os_str()).to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            command_line: std::env::args().collect(),
        },
        system,
        environment: Default::default(),
        settings: RunSettingsRecord::unchosen(duration_s, logs.len() as u32),
        suite: None,
        methods: Some(Methods {
            probes: BTreeMap::from([(format.name().to_string(), METHOD)]),
            loads: BTreeMap::new(),
        }),
        probes: BTreeMap::from([(format.name().to_string(), sheet)]),
        warnings: Vec::new(),
        scenarios: vec![scenario],
    })
}

/// The seconds `frames_ns` add up to.
fn seconds(frames_ns: &[u64]) -> f64 {
    frames_ns.iter().sum::<u64>() as f64 / 1e9
}

/// One log as a measurement of `sheet`'s figures: its frames' tally, and
/// the same for each sub-window of the time they add up to.
fn log_measurement(log: &FrameLog, sheet: &ProbeSheet) -> Measurement {
    let total_ns: u64 = log.frames_ns.iter().sum();
    let window = Window {
        start_ns: 0,
        end_ns: total_ns,
    };
    let stutters = stutters_of(&log.frames_ns);
    let mut histogram = LatencyHistogram::new();
    let mut batches: Vec<(BatchLatency, u64)> = (0..BATCHES).map(|_| Default::default()).collect();
    let mut at_ns = 0;
    for (&frame_ns, &stutter) in log.frames_ns.iter().zip(&stutters) {
        histogram.record_ns(frame_ns);
        let batch = &mut batches[batch_of(window, at_ns)];
        batch.0.record_ns(frame_ns);
        batch.1 += u64::from(stutter);
        at_ns += frame_ns;
    }
    let stutter_count = stutters.iter().filter(|&&s| s).count();
    let mut tally = Tally::default()
        .with_samples(FRAME_TIME, &histogram, total_ns)
        .with_count(FRAMES, log.frames_ns.len() as f64)
        .with_count(STUTTERS, stutter_count as f64)
        .with_count(MEASURED_S, total_ns as f64 / 1e9);
    if let Some(missed) = log.missed {
        tally = tally.with_count(MISSED, missed as f64);
    }
    let batch_s = total_ns as f64 / 1e9 / BATCHES as f64;
    let batches = batches
        .iter()
        .map(|(frames, stutters)| {
            Tally::default()
                .with_samples(FRAME_TIME, frames.histogram(), frames.sum_ns())
                .with_count(FRAMES, frames.count() as f64)
                .with_count(STUTTERS, *stutters as f64)
                .with_count(MEASURED_S, batch_s)
        })
        .collect();
    Measurement {
        status: ScenarioStatus::Ok,
        error: None,
        result: Some(ProbeResult::new(sheet, tally, batches, unknown_sched())),
        load_work: Vec::new(),
        telemetry: None,
    }
}

/// A log does not say how the game was scheduled.
fn unknown_sched() -> SchedApplied {
    SchedApplied {
        policy: "unknown (a log)".to_string(),
        fifo_priority: None,
        nice: 0,
        timer_slack_ns: None,
        slice_ns: None,
        memory_locked: false,
        memory: MemoryPolicy::Shared,
        cpus: None,
        tasks: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn settings(files: usize) -> ImportSettings {
        ImportSettings {
            format: LogFormat::MangoHud,
            files: (0..files)
                .map(|k| PathBuf::from(format!("{k}.csv")))
                .collect(),
            load: "none".into(),
            output: PathBuf::from("run.json"),
        }
    }

    /// Two logs of 10 ms frames but for a 50 ms one each: one scenario of
    /// two repeats, whose merge holds both logs' frames.
    #[test]
    fn logs_become_the_repeats_of_one_scenario() {
        let log = |slow_at: usize| FrameLog {
            frames_ns: (0..600)
                .map(|k| if k == slow_at { 50 * MS } else { 10 * MS })
                .collect(),
            kernel: Some("6.1.0-test".into()),
            ..FrameLog::default()
        };
        let run = log_run(&settings(2), &[log(100), log(400)], SystemTime::UNIX_EPOCH).unwrap();
        assert_eq!(run.system.kernel_release, "6.1.0-test");
        let scenario = &run.scenarios[0];
        assert_eq!(
            (scenario.probe.as_str(), scenario.load.as_str()),
            ("mangohud", "none")
        );
        assert_eq!(scenario.repeats.len(), 2);
        let result = scenario.outcome.result.as_ref().unwrap();
        assert_eq!(result.tally.count(FRAMES), 1_200.0);
        assert_eq!(result.figures["stutters_per_1k"], 2.0 / 1.2);
        assert!(!result.figures.contains_key("missed_refresh_pct"));
        let first = scenario.repeats[0].result.as_ref().unwrap();
        // 600 frames over 6.04 s, cut into 20 sub-windows of 302 ms.
        let frames: f64 = first.batches.iter().map(|b| b.count(FRAMES)).sum();
        assert_eq!(frames, 600.0);
        assert_eq!(
            first.batches.iter().map(|b| b.count(STUTTERS)).sum::<f64>(),
            1.0
        );
        assert!((first.figures["fps"] - 600.0 / 6.04).abs() < 1e-9);
        assert!(run.probes["mangohud"].figure("low1_mean").is_some());
    }
}
