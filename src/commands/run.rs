//! `feelbench run`: calibrate (or reuse the calibration), then run every
//! scenario in order, printing each row as it finishes and rewriting the run
//! file after each one, so an interrupted run keeps what finished.

use super::calibrate::identity;
use super::ExitStatus;
use crate::cli::{OutputChoice, RunConfig};
use crate::engine::interrupt::Interrupt;
use crate::engine::scenario::{run_scenario, ScenarioSettings};
use crate::measure::calibrate::{self, CalibrationSource};
use crate::probe::SimParams;
use crate::progress::Progress;
use crate::report::file::write_run;
use crate::report::schema::{
    RunDocument, RunInfo, RunSettingsRecord, ScenarioStatus, ToolInfo, Warning, SCHEMA,
};
use crate::report::table;
use crate::system::SystemInfo;
use anyhow::Context as _;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Runs the scenarios of `config`.
pub fn run(config: RunConfig, system: SystemInfo) -> anyhow::Result<ExitStatus> {
    let interrupt = Interrupt::install().context("installing signal handlers")?;
    let (loops_per_ms, calibration) = obtain_calibration(&config, &system)?;
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
            write_run(path, &run)?;
        }
    }
    progress.finish();
    finish_document(&mut run);
    for warning in &run.warnings {
        eprintln!("feelbench: warning: {}", warning.message);
    }
    if let Some(path) = &output {
        write_run(path, &run)?;
        eprintln!("feelbench: run written to {}", path.display());
    }
    Ok(if run.run.interrupted {
        ExitStatus::Interrupted
    } else if run
        .scenarios
        .iter()
        .any(|s| s.status == ScenarioStatus::Failed)
    {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}

fn obtain_calibration(
    config: &RunConfig,
    system: &SystemInfo,
) -> anyhow::Result<(f64, CalibrationSource)> {
    let cache = calibrate::default_cache_path();
    let needs_measuring = config.loops_per_ms.is_none()
        && (config.recalibrate
            || cache
                .as_deref()
                .and_then(|p| calibrate::load_cached(p, &identity(system)))
                .is_none());
    if needs_measuring {
        eprintln!("feelbench: calibrating the work loop (about 1 s)...");
    }
    let (loops_per_ms, source) = calibrate::obtain(
        config.loops_per_ms,
        config.recalibrate,
        cache.as_deref(),
        &identity(system),
    )?;
    match &source {
        CalibrationSource::Forced => {}
        CalibrationSource::Cached { path } => {
            eprintln!(
                "feelbench: loops_per_ms {loops_per_ms:.0} from {}",
                path.display()
            )
        }
        CalibrationSource::Measured { path, calibration } => eprintln!(
            "feelbench: loops_per_ms {loops_per_ms:.0} measured in {} ms{}",
            calibration.took_ms,
            path.as_ref()
                .map(|p| format!(", stored in {}", p.display()))
                .unwrap_or_default()
        ),
    }
    Ok((loops_per_ms, source))
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
    let unlocked = run
        .scenarios
        .iter()
        .filter_map(|s| s.result.as_ref())
        .any(|r| !r.sched.memory_locked);
    if unlocked {
        run.warnings.push(Warning {
            code: "memory_not_locked".to_string(),
            message: "the probe could not lock its memory (mlockall): page faults may show as latency; raise RLIMIT_MEMLOCK (ulimit -l) or run as root".to_string(),
        });
    }
}
