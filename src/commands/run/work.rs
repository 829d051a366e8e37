//! The work of a run made complete: the sizes of the disk and memory loads'
//! work (from the work directory's free space and the memory), the work rate
//! (calibrated, cached or forced), the parameters built from them once, and
//! the scenarios that fit on the disk (checked for the run before it starts,
//! and again before each scenario that needs disk: [`check_room`]).

use super::config::{RunConfig, WorkSettings};
use crate::document::schema::{Warning, WarningCode};
use crate::engine::scenario::Scenario;
use crate::exit::UsageError;
use crate::load;
use crate::measure::calibrate::{self, CalibrationSource, MachineIdentity};
use crate::sim::WorkParams;
use crate::system::SystemInfo;
use crate::system::{procfs, writeback};
use anyhow::Context as _;
use std::path::{Path, PathBuf};

/// Margin of free space left when the disk loads' files are at their largest.
const DISK_MARGIN_BYTES: u64 = 512 << 20;

/// The run's work, complete.
pub struct PreparedWork {
    /// The work's parameters, complete.
    pub params: WorkParams,
    /// Where `params.loops_per_ms` came from.
    pub calibration: CalibrationSource,
    /// The scenarios to measure: the chosen ones, less the disk loads' when
    /// the default run has no room for their files.
    pub scenarios: Vec<Scenario>,
    /// About the disk loads' files: on tmpfs, or left out for lack of room.
    pub warnings: Vec<Warning>,
}

/// The disk loads' files do not fit in the work directory.
#[derive(Debug, thiserror::Error)]
#[error("the disk loads need {} MiB in {} but only {} MiB are free (with {} MiB to spare); use --workdir on a larger file system or a smaller --file-size (--fileio-size for the fileio probe)", .needed_bytes >> 20, .dir.display(), .free_bytes >> 20, DISK_MARGIN_BYTES >> 20)]
pub struct DiskShortage {
    dir: PathBuf,
    needed_bytes: u64,
    free_bytes: u64,
}

/// Sizes the work for the work directory `dir`, obtains the work rate,
/// checks the loads again with the complete parameters, and keeps the
/// scenarios whose files fit.
pub fn prepare(
    config: &RunConfig,
    system: &SystemInfo,
    dir: &Path,
) -> anyhow::Result<PreparedWork> {
    let room = Room::of(dir)?;
    let (loops_per_ms, calibration) = obtain_calibration(&config.work, system);
    let file_bytes = config
        .work
        .file_bytes
        .unwrap_or_else(|| room.ram_bytes.min(room.free_bytes / 2).max(1 << 20));
    let mem_bytes = config.mem_limit_bytes.unwrap_or(room.mem_available_bytes);
    let params = config.work.params(loops_per_ms, file_bytes, mem_bytes);
    for scenario in &config.scenarios {
        scenario.load.check(&params).map_err(UsageError::input)?;
    }
    let (scenarios, mut warnings) = fit_on_disk(config, &params, dir, room.free_bytes)?;
    warnings.extend(dirty_limit_warning(&scenarios, &params, &room));
    Ok(PreparedWork {
        params,
        calibration,
        scenarios,
        warnings,
    })
}

/// What the machine has room for.
struct Room {
    /// Free space of the work directory's file system.
    free_bytes: u64,
    /// The RAM size (0 when unknown).
    ram_bytes: u64,
    /// Memory available (the RAM size when unknown).
    mem_available_bytes: u64,
}

impl Room {
    fn of(dir: &Path) -> anyhow::Result<Self> {
        let meminfo = procfs::read_meminfo(Path::new("/proc")).ok();
        let field = |key| meminfo.as_ref().and_then(|m| m.get(key));
        let ram_bytes = field("MemTotal").unwrap_or(0);
        Ok(Self {
            free_bytes: free_bytes(dir)?,
            ram_bytes,
            mem_available_bytes: field("MemAvailable").unwrap_or(ram_bytes),
        })
    }
}

/// Free space of the file system of `dir`, now.
fn free_bytes(dir: &Path) -> anyhow::Result<u64> {
    let stat = nix::sys::statvfs::statvfs(dir)
        .with_context(|| format!("cannot read the free space of {}", dir.display()))?;
    Ok(stat.blocks_available() as u64 * stat.fragment_size() as u64)
}

impl DiskShortage {
    /// Refuses `needed_bytes` of files in `dir` when `free_bytes` leave
    /// less than [`DISK_MARGIN_BYTES`] beside them.
    fn check(dir: &Path, needed_bytes: u64, free_bytes: u64) -> Result<(), Self> {
        match needed_bytes == 0 || needed_bytes + DISK_MARGIN_BYTES <= free_bytes {
            true => Ok(()),
            false => Err(Self {
                dir: dir.to_path_buf(),
                needed_bytes,
                free_bytes,
            }),
        }
    }
}

/// Checks, just before `scenario` runs, that the work directory `dir`
/// still has room for its files (files the scenarios before it left, or
/// anything else on the file system, may have taken what the run's start
/// found free); scenarios that need no disk always have room.
pub fn check_room(scenario: &Scenario, params: &WorkParams, dir: &Path) -> anyhow::Result<()> {
    let needed_bytes = scenario_disk_bytes(scenario, params);
    if needed_bytes == 0 {
        return Ok(());
    }
    DiskShortage::check(dir, needed_bytes, free_bytes(dir)?)?;
    Ok(())
}

/// The scenarios whose files fit in `free_bytes` (all of them, or refused,
/// when the user named the loads), and the warnings about the files.
fn fit_on_disk(
    config: &RunConfig,
    params: &WorkParams,
    dir: &Path,
    free_bytes: u64,
) -> Result<(Vec<Scenario>, Vec<Warning>), DiskShortage> {
    let needed_bytes = config
        .scenarios
        .iter()
        .map(|s| scenario_disk_bytes(s, params))
        .max()
        .unwrap_or(0);
    let mut warnings: Vec<Warning> = tmpfs_warning(dir, needed_bytes).into_iter().collect();
    let Err(shortage) = DiskShortage::check(dir, needed_bytes, free_bytes) else {
        return Ok((config.scenarios.clone(), warnings));
    };
    if config.loads_given {
        return Err(shortage);
    }
    warnings.push(Warning::new(
        WarningCode::DiskLoadsSkipped,
        format!("left out of the run: {shortage}"),
    ));
    let scenarios = config
        .scenarios
        .iter()
        .filter(|s| scenario_disk_bytes(s, params) == 0)
        .cloned()
        .collect();
    Ok((scenarios, warnings))
}

/// Disk space a scenario's files need at most: its loads' and its probe's.
fn scenario_disk_bytes(scenario: &Scenario, params: &WorkParams) -> u64 {
    scenario.load.disk_bytes(params) + (scenario.probe.disk_bytes)(params)
}

/// A warning when a write load's file fits under the dirty-page limit: its
/// writes can then be absorbed by memory, and it measures memory, not the disk.
fn dirty_limit_warning(
    scenarios: &[Scenario],
    params: &WorkParams,
    room: &Room,
) -> Option<Warning> {
    let writes = scenarios
        .iter()
        .flat_map(|s| &s.load.parts)
        .any(|p| load::write::streams_writes(p.def));
    let limit = writeback::read_dirty_limit(Path::new("/proc"), room.mem_available_bytes)?;
    (writes && params.file_bytes <= limit).then(|| {
        Warning::new(
            WarningCode::FitsInDirtyLimit,
            format!(
                "the write loads' file ({} MiB) fits under the dirty-page limit ({} MiB, vm.dirty_bytes or vm.dirty_ratio of available memory): their writes can stay in memory, so they measure memory more than the disk; give --file-size above {} MiB",
                params.file_bytes >> 20,
                limit >> 20,
                limit >> 20
            ),
        )
    })
}

/// A warning when disk loads would write to tmpfs, which measures memory.
fn tmpfs_warning(dir: &Path, needed_bytes: u64) -> Option<Warning> {
    let on_tmpfs = nix::sys::statfs::statfs(dir)
        .is_ok_and(|fs| fs.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC);
    (needed_bytes > 0 && on_tmpfs).then(|| {
        Warning::new(
            WarningCode::WorkdirOnTmpfs,
            format!(
                "{} is on tmpfs: the disk loads measure memory there, not a disk; use --workdir on a disk",
                dir.display()
            ),
        )
    })
}

/// The work rate: forced, cached or measured now, said on stderr.
fn obtain_calibration(work: &WorkSettings, system: &SystemInfo) -> (f64, CalibrationSource) {
    let cache = calibrate::default_cache_path();
    let (loops_per_ms, source) = calibrate::obtain(
        work.loops_per_ms,
        work.recalibrate,
        cache.as_deref(),
        &MachineIdentity::of(system),
        || say!("calibrating the work loop (about 0.4 s)..."),
    );
    match &source {
        CalibrationSource::Forced => {}
        CalibrationSource::Cached { path } => {
            say!("loops_per_ms {loops_per_ms:.0} from {}", path.display())
        }
        CalibrationSource::Measured {
            path,
            not_stored,
            calibration,
        } => {
            say!(
                "loops_per_ms {loops_per_ms:.0} measured in {} ms{}",
                calibration.took_ms,
                path.as_ref()
                    .map(|p| format!(", stored in {}", p.display()))
                    .unwrap_or_default()
            );
            if let Some(reason) = not_stored {
                say!("warning: calibration not cached: {reason}");
            }
        }
    }
    (loops_per_ms, source)
}
