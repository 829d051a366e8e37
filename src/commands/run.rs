//! `feelbench run`: calibrate (or reuse the calibration), then run every
//! scenario in order (`--repeat` times, in rounds: see [`super::rounds`]),
//! printing each row as it finishes and rewriting the run file after each
//! measurement, so an interrupted run keeps what finished.

use super::rounds::Rounds;
use super::ExitCode;
use crate::cli::UsageError;
use crate::cli::{OutputChoice, RunConfig};
use crate::engine::interrupt::Interrupt;
use crate::engine::scenario::ScenarioSettings;
use crate::engine::supervise;
use crate::engine::workspace::{self, Workspace};
use crate::load;
use crate::measure::calibrate::{self, CalibrationSource, MachineIdentity};
use crate::measure::sched::{self, SchedRequest};
use crate::progress::Progress;
use crate::report::file::write_run;
use crate::report::schema::{
    RunDocument, RunInfo, RunSettingsRecord, ScenarioResult, ScenarioStatus, ToolInfo, Warning,
    WarningCode, SCHEMA,
};
use crate::report::table;
use crate::system::cgroup::{self, MemoryCgroup, MemoryController};
use crate::system::environment::{self, Environment};
use crate::system::noise;
use crate::system::procfs;
use crate::system::swap::{self, SwapFile};
use crate::system::SystemInfo;
use anyhow::Context as _;
use std::path::Path;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// How far the CPU used per frame may stray from the calibration (as a
/// fraction) on an idle system before the run warns.
const CALIBRATION_DRIFT_LIMIT: f64 = 0.05;

/// Runs the scenarios of `config`.
pub fn run(mut config: RunConfig, system: SystemInfo) -> anyhow::Result<ExitCode> {
    let environment = environment::capture(
        &environment::Roots::system(),
        &config.workdir,
        environment::STEAL_SAMPLE,
    );
    check_expectations(&environment, &config.expect)?;
    check_privileges(&config)?;
    let leftovers = workspace::clean_leftovers(swap::remove, |p| Ok(cgroup::remove(p)?));
    for line in leftovers.into_iter().chain(load::remove_leftovers()) {
        eprintln!("feelbench: {line}");
    }
    let interrupt = Interrupt::install().context("installing signal handlers")?;
    supervise::become_subreaper().context("becoming the subreaper of the loads")?;
    let mut workspace = Workspace::create(&config.workdir)?;
    // Declared after the workspace, so dropped before it: the swap file is
    // in its directory, and an active swap file cannot be deleted.
    let _swap = config
        .swap_bytes
        .map(|bytes| add_swap(&mut workspace, bytes))
        .transpose()?;
    let load_cgroup = config
        .mem_limit_bytes
        .map(|bytes| make_load_cgroup(&mut workspace, bytes))
        .transpose()?;
    let disk_warnings = size_the_work(&mut config, &workspace)?;
    let (loops_per_ms, calibration) = obtain_calibration(&config, &system);
    config.params.loops_per_ms = loops_per_ms;
    let noise_warning = preflight_noise_check(&config)?;
    let started = SystemTime::now();
    let output = output_path(&config.output, &system, started);
    let mut run = new_document(&config, system, calibration, started);
    run.environment = environment;
    run.warnings.extend(disk_warnings);
    run.warnings.extend(noise_warning);
    // Warnings known before measuring are said now; the rest at the end.
    let said_before = run.warnings.len();
    for warning in &run.warnings {
        eprintln!("feelbench: warning: {}", warning.message);
    }
    if let Some(path) = &output {
        // Written before measuring, so a bad path fails in the first second.
        write_run(path, &run)
            .with_context(|| format!("cannot write the run to {}", path.display()))?;
    }
    let settings = ScenarioSettings {
        marker: workspace.marker().to_string(),
        duration_ns: config.duration_ns,
        warmup_ns: config.warmup_ns,
        params: config.params,
        probe_sched: config.probe_sched,
        load_nice: config.load_nice,
        load_cgroup_procs: load_cgroup.as_ref().map(MemoryCgroup::procs_file),
    };
    let scenario_time = Duration::from_nanos(config.duration_ns + config.warmup_ns);
    let measurements = config.scenarios.len() * config.repeats as usize;
    let mut progress = Progress::new(measurements, scenario_time, config.quiet);
    progress.print(&table::render_preamble(&run));
    let rounds = Rounds {
        scenarios: &config.scenarios,
        repeats: config.repeats,
        settings: &settings,
        workspace: &workspace,
        interrupt: &interrupt,
        output: output.as_deref(),
        verbose: config.verbose,
    };
    rounds.measure(&mut run, &mut progress)?;
    progress.print(&table::render_legend(&run));
    drop(progress);
    finish_document(&mut run);
    for warning in &run.warnings[said_before..] {
        eprintln!("feelbench: warning: {}", warning.message);
    }
    if let Some(path) = &output {
        write_run(path, &run)
            .with_context(|| format!("cannot write the run to {}", path.display()))?;
        eprintln!("feelbench: run written to {}", path.display());
    }
    if run.run.interrupted {
        report_interruption(&run, config.repeats);
    }
    Ok(if run.run.interrupted {
        ExitCode::Interrupted
    } else if run
        .scenarios
        .iter()
        .flat_map(ScenarioResult::measurements)
        .any(|m| m.status == ScenarioStatus::Failed)
    {
        ExitCode::Failure
    } else {
        ExitCode::Success
    })
}

/// Says what an interrupted run kept.
fn report_interruption(run: &RunDocument, repeats: u32) {
    let scenarios = run.scenarios.len();
    if repeats == 1 {
        eprintln!(
            "feelbench: interrupted; {scenarios} finished scenario(s) kept, the running one dropped"
        );
    } else {
        let measurements: usize = run.scenarios.iter().map(|s| s.measurements().len()).sum();
        eprintln!(
            "feelbench: interrupted; {measurements} finished measurement(s) of {scenarios} scenario(s) kept, the running one dropped"
        );
    }
}

/// Turns on a swap file of `bytes` in the workspace for the run (`--swap`).
fn add_swap(workspace: &mut Workspace, bytes: u64) -> anyhow::Result<SwapFile> {
    let path = workspace.dir().join("swapfile");
    // Recorded first: if the run is killed before it turns the swap off
    // again, the next run does it.
    workspace.note_swap_file(&path)?;
    let swap = SwapFile::create(&path, bytes)?;
    eprintln!(
        "feelbench: swap file {} ({} MiB) on for the run",
        path.display(),
        bytes >> 20
    );
    Ok(swap)
}

/// Makes the memory cgroup the loads run in (`--mem-limit`).
fn make_load_cgroup(workspace: &mut Workspace, limit_bytes: u64) -> anyhow::Result<MemoryCgroup> {
    let controller =
        MemoryController::find(Path::new("/proc")).map_err(|e| UsageError(e.to_string()))?;
    let name = format!("feelbench-{}", std::process::id());
    let path = controller.path_of(&name);
    // Recorded first, like the swap file.
    workspace.note_cgroup(&path)?;
    let cgroup = controller.create(&name, limit_bytes)?;
    eprintln!(
        "feelbench: loads limited to {} MiB of memory in {} ({})",
        limit_bytes >> 20,
        path.display(),
        controller.version()
    );
    Ok(cgroup)
}

/// Margin of free space left when the disk loads' files are at their largest.
const DISK_MARGIN_BYTES: u64 = 512 << 20;

/// Sizes the disk and memory loads' work, checks the loads again now that
/// their parameters are complete, and checks that the work directory has
/// room for the largest scenario's files. Returns the warnings about the
/// disk loads' files: on tmpfs (which measures memory, not a disk), or left
/// out of the default run for lack of room.
fn size_the_work(config: &mut RunConfig, workspace: &Workspace) -> anyhow::Result<Vec<Warning>> {
    let dir = workspace.dir();
    let stat = nix::sys::statvfs::statvfs(dir)
        .with_context(|| format!("cannot read the free space of {}", dir.display()))?;
    let free = stat.blocks_available() as u64 * stat.fragment_size() as u64;
    let meminfo = procfs::read_meminfo(Path::new("/proc")).ok();
    let ram = meminfo
        .as_ref()
        .and_then(|m| m.get("MemTotal"))
        .unwrap_or(0);
    config.params.file_bytes = config
        .file_bytes
        .unwrap_or_else(|| ram.min(free / 2).max(1 << 20));
    config.params.mem_bytes = config.mem_limit_bytes.unwrap_or_else(|| {
        meminfo
            .as_ref()
            .and_then(|m| m.get("MemAvailable"))
            .unwrap_or(ram)
    });
    for scenario in &config.scenarios {
        scenario
            .load
            .check(&config.params)
            .map_err(|e| UsageError(e.to_string()))?;
    }
    let needed = config
        .scenarios
        .iter()
        .map(|s| s.load.disk_bytes(&config.params))
        .max()
        .unwrap_or(0);
    let mut warnings = Vec::new();
    let on_tmpfs = nix::sys::statfs::statfs(dir)
        .is_ok_and(|fs| fs.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC);
    if needed > 0 && on_tmpfs {
        warnings.push(Warning::new(
            WarningCode::WorkdirOnTmpfs,
            format!(
                "{} is on tmpfs: the disk loads measure memory there, not a disk; use --workdir on a disk",
                dir.display()
            ),
        ));
    }
    if needed == 0 || needed + DISK_MARGIN_BYTES <= free {
        return Ok(warnings);
    }
    let shortage = format!(
        "the disk loads need {} MiB in {} but only {} MiB are free (with {} MiB to spare); use --workdir on a larger file system or a smaller --file-size",
        needed >> 20,
        dir.display(),
        free >> 20,
        DISK_MARGIN_BYTES >> 20
    );
    if config.loads_given {
        anyhow::bail!(shortage);
    }
    config
        .scenarios
        .retain(|s| s.load.disk_bytes(&config.params) == 0);
    warnings.push(Warning::new(
        WarningCode::DiskLoadsSkipped,
        format!("left out of the run: {shortage}"),
    ));
    Ok(warnings)
}

/// Refuses at once what every scenario would fail on: a negative nice or
/// SCHED_FIFO without the privileges, or a change to the system (`--swap`,
/// `--mem-limit`) by someone who is not root.
fn check_privileges(config: &RunConfig) -> Result<(), UsageError> {
    let changes = [
        (
            "--swap",
            "turns a swap file on",
            config.swap_bytes.is_some(),
        ),
        (
            "--mem-limit",
            "makes a memory cgroup",
            config.mem_limit_bytes.is_some(),
        ),
    ];
    if let Some((option, what, _)) = changes.iter().find(|(_, _, given)| *given) {
        if !nix::unistd::geteuid().is_root() {
            return Err(UsageError(format!(
                "{option} needs root: it {what}; run as root or leave it out"
            )));
        }
    }
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

/// Samples the machine before the first scenario: a warning when other
/// processes or the hypervisor are busy, or a refusal with `--strict`.
fn preflight_noise_check(config: &RunConfig) -> anyhow::Result<Option<Warning>> {
    if config.noise_check_ns == 0 {
        return Ok(None);
    }
    let length = Duration::from_nanos(config.noise_check_ns);
    let noise = match noise::check(Path::new("/proc"), length) {
        Ok(noise) => noise,
        Err(e) => {
            eprintln!("feelbench: warning: no noise check: {e}");
            return Ok(None);
        }
    };
    let Some(complaint) = noise.complaint() else {
        return Ok(None);
    };
    if config.strict {
        return Err(UsageError(format!("--strict: {complaint}")).into());
    }
    Ok(Some(Warning::new(WarningCode::NoisyMachine, complaint)))
}

/// Refuses to run when the system differs from what `--expect` asked for.
fn check_expectations(env: &Environment, expect: &[(String, String)]) -> Result<(), UsageError> {
    let mismatches = environment::mismatches(env, expect);
    if mismatches.is_empty() {
        return Ok(());
    }
    Err(UsageError(format!(
        "this system is not the one expected, so nothing was measured:\n  {}",
        mismatches.join("\n  ")
    )))
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
        environment: Environment::default(),
        settings: RunSettingsRecord {
            duration_s: config.duration_ns as f64 / 1e9,
            warmup_s: config.warmup_ns as f64 / 1e9,
            loops_per_ms: config.params.loops_per_ms,
            calibration,
            probe_sched: config.probe_sched,
            load_nice: config.load_nice,
            burn_processes: config.params.burn_processes,
            custom: config.params.custom,
            file_bytes: config.params.file_bytes,
            mem_bytes: config.params.mem_bytes,
            mem_limit_bytes: config.mem_limit_bytes,
            swap_bytes: config.swap_bytes,
            repeats: config.repeats,
        },
        probes: config
            .scenarios
            .iter()
            .map(|s| (s.probe.name.to_string(), s.probe.sheet()))
            .collect(),
        warnings: Vec::new(),
        scenarios: Vec::new(),
    }
}

fn finish_document(run: &mut RunDocument) {
    run.run.finished = Some(humantime::format_rfc3339_seconds(SystemTime::now()).to_string());
    let results: Vec<_> = run
        .scenarios
        .iter()
        .filter_map(|s| s.outcome.result.as_ref())
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
        .filter_map(|s| {
            s.outcome
                .result
                .as_ref()?
                .figures
                .get("work_ratio")
                .copied()
        });
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
