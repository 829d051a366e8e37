//! `feelbench run`: calibrate (or reuse the calibration), then run every
//! scenario in order, printing each row as it finishes and rewriting the run
//! file after each one, so an interrupted run keeps what finished.

use super::ExitCode;
use crate::cli::UsageError;
use crate::cli::{OutputChoice, RunConfig};
use crate::engine::interrupt::Interrupt;
use crate::engine::scenario::{run_scenario, ScenarioSettings};
use crate::measure::calibrate::{self, CalibrationSource, MachineIdentity};
use crate::measure::sched::{self, SchedRequest};
use crate::probe::SimParams;
use crate::progress::Progress;
use crate::report::file::write_run;
use crate::report::schema::{
    RunDocument, RunInfo, RunSettingsRecord, ScenarioStatus, ToolInfo, Warning, WarningCode, SCHEMA,
};
use crate::report::table;
use crate::system::SystemInfo;
use anyhow::Context as _;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// How far the CPU used per frame may stray from the calibration (as a
/// fraction) on an idle system before the run warns.
const CALIBRATION_DRIFT_LIMIT: f64 = 0.05;

/// Runs the scenarios of `config`.
pub fn run(config: RunConfig, system: SystemInfo) -> anyhow::Result<ExitCode> {
    check_privileges(&config)?;
    let interrupt = Interrupt::install().context("installing signal handlers")?;
    let (loops_per_ms, calibration) = obtain_calibration(&config, &system);
    let started = SystemTime::now();
    let output = output_path(&config.output, &system, started);
    let mut run = new_document(&config, system, loops_per_ms, calibration, started);
    if let Some(path) = &output {
        // Written before measuring, so a bad path fails in the first second.
        write_run(path, &run)
            .with_context(|| format!("cannot write the run to {}", path.display()))?;
    }
    let settings = ScenarioSettings {
        duration_ns: config.duration_ns,
        warmup_ns: config.warmup_ns,
        params: SimParams {
            loops_per_ms,
            burn_processes: config.burn_processes,
            custom: config.custom,
        },
        probe_sched: config.probe_sched,
        load_nice: config.load_nice,
    };
    let scenario_time = Duration::from_nanos(config.duration_ns + config.warmup_ns);
    let mut progress = Progress::new(config.scenarios.len(), scenario_time, config.quiet);
    progress.print(&table::render_preamble(&run));
    for (index, &scenario) in config.scenarios.iter().enumerate() {
        progress.start_scenario(&format!(
            "{} under {} ({}/{})",
            scenario.probe.name,
            scenario.load.name,
            index + 1,
            config.scenarios.len()
        ));
        let outcome = run_scenario(scenario, &settings, &interrupt, &mut || progress.tick());
        progress.finish_scenario();
        let Ok(result) = outcome else {
            run.run.interrupted = true;
            break;
        };
        if result.status == ScenarioStatus::Failed {
            progress.warn(&format!(
                "{} under {} failed: {}",
                result.probe,
                result.load,
                result.error.as_deref().unwrap_or("unknown reason")
            ));
        }
        if index == 0 || config.scenarios[index - 1].probe.name != scenario.probe.name {
            progress.print(&table::render_probe_header(scenario.probe.name));
        }
        progress.print(&table::render_row(&result));
        run.scenarios.push(result);
        if let Some(path) = &output {
            write_run(path, &run)
                .with_context(|| format!("cannot write the run to {}", path.display()))?;
        }
    }
    drop(progress);
    finish_document(&mut run);
    for warning in &run.warnings {
        eprintln!("feelbench: warning: {}", warning.message);
    }
    if let Some(path) = &output {
        write_run(path, &run)
            .with_context(|| format!("cannot write the run to {}", path.display()))?;
        eprintln!("feelbench: run written to {}", path.display());
    }
    if run.run.interrupted {
        eprintln!(
            "feelbench: interrupted; {} finished scenario(s) kept, the running one dropped",
            run.scenarios.len()
        );
    }
    Ok(if run.run.interrupted {
        ExitCode::Interrupted
    } else if run
        .scenarios
        .iter()
        .any(|s| s.status == ScenarioStatus::Failed)
    {
        ExitCode::Failure
    } else {
        ExitCode::Success
    })
}

/// Refuses at once what every scenario would fail on: a negative nice or
/// SCHED_FIFO without the privileges.
fn check_privileges(config: &RunConfig) -> Result<(), UsageError> {
    let loads = SchedRequest {
        nice: config.load_nice,
        fifo_priority: None,
        timer_slack_ns: 1,
    };
    for request in [&config.probe_sched, &loads] {
        sched::check_allowed(request).map_err(|e| UsageError(e.to_string()))?;
    }
    Ok(())
}

fn obtain_calibration(config: &RunConfig, system: &SystemInfo) -> (f64, CalibrationSource) {
    let cache = calibrate::default_cache_path();
    let (loops_per_ms, source) = calibrate::obtain(
        config.loops_per_ms,
        config.recalibrate,
        cache.as_deref(),
        &MachineIdentity::of(system),
        || eprintln!("feelbench: calibrating the work loop (about half a second)..."),
    );
    match &source {
        CalibrationSource::Forced => {}
        CalibrationSource::Cached { path } => {
            eprintln!(
                "feelbench: loops_per_ms {loops_per_ms:.0} from {}",
                path.display()
            )
        }
        CalibrationSource::Measured {
            path,
            not_stored,
            calibration,
        } => {
            eprintln!(
                "feelbench: loops_per_ms {loops_per_ms:.0} measured in {} ms{}",
                calibration.took_ms,
                path.as_ref()
                    .map(|p| format!(", stored in {}", p.display()))
                    .unwrap_or_default()
            );
            if let Some(reason) = not_stored {
                eprintln!("feelbench: warning: calibration not cached: {reason}");
            }
        }
    }
    (loops_per_ms, source)
}

/// `2026-11-23T03:26:00Z` → `20261123-032600`.
fn compact_time(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time)
        .to_string()
        .chars()
        .filter_map(|c| match c {
            'T' => Some('-'),
            c if c.is_ascii_digit() => Some(c),
            _ => None,
        })
        .collect()
}

fn output_path(choice: &OutputChoice, system: &SystemInfo, started: SystemTime) -> Option<PathBuf> {
    match choice {
        OutputChoice::ConsoleOnly => None,
        OutputChoice::File(path) => Some(path.clone()),
        OutputChoice::Default => Some(PathBuf::from(format!(
            "feelbench-{}-{}.json",
            system.kernel_release,
            compact_time(started)
        ))),
    }
}

fn new_document(
    config: &RunConfig,
    system: SystemInfo,
    loops_per_ms: f64,
    calibration: CalibrationSource,
    started: SystemTime,
) -> RunDocument {
    RunDocument {
        schema: SCHEMA.to_string(),
        tool: ToolInfo {
            name: "feelbench".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        },
        run: RunInfo {
            id: format!("{}-{}", compact_time(started), std::process::id()),
            started: humantime::format_rfc3339_seconds(started).to_string(),
            finished: None,
            interrupted: false,
            comment: config.comment.clone(),
            command_line: std::env::args().collect(),
        },
        system,
        settings: RunSettingsRecord {
            duration_s: config.duration_ns as f64 / 1e9,
            warmup_s: config.warmup_ns as f64 / 1e9,
            loops_per_ms,
            calibration,
            probe_sched: config.probe_sched,
            load_nice: config.load_nice,
            burn_processes: config.burn_processes,
            custom: config.custom,
        },
        warnings: Vec::new(),
        scenarios: Vec::new(),
    }
}

fn finish_document(run: &mut RunDocument) {
    run.run.finished = Some(humantime::format_rfc3339_seconds(SystemTime::now()).to_string());
    let results: Vec<_> = run
        .scenarios
        .iter()
        .filter_map(|s| s.result.as_ref())
        .collect();
    if results.iter().any(|r| !r.sched.memory_locked) {
        run.warnings.push(Warning::new(
            WarningCode::MemoryNotLocked,
            "the probe could not lock its memory (mlockall): page faults may show as latency; raise RLIMIT_MEMLOCK (ulimit -l) or run as root".to_string(),
        ));
    }
    let idle_ratios = run
        .scenarios
        .iter()
        .filter(|s| s.load == "none")
        .filter_map(|s| s.result.as_ref()?.cpu.work_ratio);
    if let Some(worst) = idle_ratios.max_by(|a, b| (a - 1.0).abs().total_cmp(&(b - 1.0).abs())) {
        if (worst - 1.0).abs() > CALIBRATION_DRIFT_LIMIT {
            run.warnings.push(Warning::new(
                WarningCode::CalibrationDrift,
                format!(
                    "on an idle system a frame used {:.0} % of its calibrated CPU time: the CPU's speed changed since calibrating; run feelbench calibrate (or -b)",
                    worst * 100.0
                ),
            ));
        }
    }
}
