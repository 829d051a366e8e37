//! Loads: the background work a probe is measured under. Each load is a
//! registry entry ([`LoadDef`]) in a file here plus one line in [`LOADS`];
//! loads that differ only in a setting share a file (`periodic.rs` holds
//! `video`, `x` and `custom`, `write.rs` the three writers, `ctxmem.rs` both
//! rings, `bandwidth.rs` the three streams, `archive.rs` `ctar` and `xtar`,
//! `iothreads.rs` the four `io*` loads), and `disk.rs`, `tree.rs`,
//! `helpers.rs` and `error.rs` hold what several loads use. The
//! engine only sees [`Load`]. A load runs in one or more worker
//! processes, each repeating [`Load::step`] until it is told to stop, and
//! counts the work it gets done. Loads compose: a scenario's load is a
//! [`LoadMix`] such as `burn+write`, whose parts run side by side. A load
//! never knows which probe runs; the simulated work it shares with the
//! probes lives below both, in `sim`.

pub mod archive;
pub mod bandwidth;
pub mod burn;
pub mod cacherun;
pub mod cmd;
pub mod copy;
pub mod cpuload;
pub mod ctxmem;
pub mod dbench;
pub mod disk;
mod error;
pub mod hack;
mod helpers;
pub mod iothreads;
pub mod jobload;
pub mod list;
pub mod memload;
pub mod none;
pub mod periodic;
pub mod procread;
mod programs_cpu;
pub mod read;
pub mod rtapp;
pub mod spawn;
mod tree;
pub mod write;

pub use error::{CheckError, LoadError, SpecError};

use crate::measure::window::CpuTime;
use crate::sim::job::JobCache;
use crate::sim::{SettingsGroup, WorkParams};
use std::path::PathBuf;

/// Background work, done in short slices.
pub trait Load {
    /// Does one short slice of work (a few ms, or one period of a simulation)
    /// and returns the units of work it got done, or why the load cannot go
    /// on (a failed write, a command that ended, a helper process that
    /// died).
    fn step(&mut self) -> Result<f64, LoadError>;

    /// The load's CPU time so far, given the worker's (its own and that of
    /// the children it reaped). A load with processes the worker has not
    /// reaped (`RUSAGE_CHILDREN` counts only reaped ones: helpers, a
    /// command's processes) adds theirs, or gives what a cgroup holding all
    /// of them accounted; a part it cannot count makes the result a lower
    /// bound, never silently low. Other loads have the worker's alone.
    fn cpu(&self, worker: CpuTime) -> CpuTime {
        worker
    }

    /// How long the request of the last step took, for a load that times
    /// its requests (the `io*` loads); the worker counts those of the
    /// measurement window as the load's request latency.
    fn last_request_ns(&self) -> Option<u64> {
        None
    }
}

/// What a load process is given to build its share of the load.
#[derive(Debug, Clone)]
pub struct LoadContext {
    /// The run's work parameters.
    pub params: WorkParams,
    /// The text after `name:` in the load's spec (`cmd:stress-ng --cpu 2`).
    pub arg: Option<String>,
    /// A private directory for the scenario's files, removed afterwards.
    pub dir: PathBuf,
}

/// A load's entry in the registry.
pub struct LoadDef {
    /// Its name on the command line and in run documents.
    pub name: &'static str,
    /// One line for `feelbench list`.
    pub summary: &'static str,
    /// The version of its method: raised by one whenever the work it does
    /// changes (as a probe's: [`crate::probe::ProbeDef::method`]). Every
    /// run records it.
    pub method: u32,
    /// The unit of the work it reports.
    pub unit: &'static str,
    /// Whether it takes an argument after a colon (`cmd:COMMAND`).
    pub takes_arg: bool,
    /// How many worker processes run it (0: nothing to start).
    pub processes: fn(&WorkParams) -> usize,
    /// Disk space its files need at most.
    pub disk_bytes: fn(&WorkParams) -> u64,
    /// Checks the parameters and argument before anything runs; the error
    /// tells the user what is missing.
    pub check: fn(&WorkParams, Option<&str>) -> Result<(), CheckError>,
    /// Builds one process's share of the load; fails when a needed parameter
    /// is missing or the setup fails.
    pub build: fn(&LoadContext) -> Result<Box<dyn Load>, LoadError>,
    /// Whether `feelbench run` includes it without being asked.
    pub default: fn(&WorkParams) -> bool,
    /// The groups of settings it works by (recorded in runs that run it).
    pub uses: &'static [SettingsGroup],
    /// Where the `job` probe's inputs are to be when its job starts under
    /// this load, whatever `--job-cache` says (`cacherun`: warm); the
    /// orchestrator puts it in the probe's parameters, so neither knows
    /// the other. `None`: as the run says.
    pub job_cache: Option<JobCache>,
}

/// Every load, in the order they are run and listed.
pub static LOADS: &[LoadDef] = &[
    none::DEF,
    burn::DEF,
    periodic::VIDEO,
    periodic::X,
    periodic::CUSTOM,
    rtapp::DEF,
    write::WRITE,
    write::SMALLWRITE,
    write::LARGEWRITE,
    read::DEF,
    copy::DEF,
    procread::DEF,
    hack::DEF,
    spawn::DEF,
    ctxmem::CTXMEM8,
    ctxmem::CTXMEM2,
    bandwidth::PIPEBW,
    bandwidth::UNIXBW,
    bandwidth::TCPBW,
    memload::DEF,
    cpuload::DEF,
    list::DEF,
    archive::CTAR,
    archive::XTAR,
    dbench::DEF,
    iothreads::SEQ_WRITE,
    iothreads::SEQ_READ,
    iothreads::RAND_WRITE,
    iothreads::RAND_READ,
    cacherun::DEF,
    jobload::DEF,
    cmd::DEF,
];

/// Names that stand for a mix of loads.
pub static ALIASES: &[(&str, &str)] = &[
    // interbench's simulation of `make -j4`: CPU hogs plus a writer and a reader.
    ("compile", "burn+write+read"),
];

/// The load called `name`.
pub fn find(name: &str) -> Option<&'static LoadDef> {
    LOADS.iter().find(|l| l.name == name)
}

/// Removes what load processes leave behind when they are SIGKILLed before
/// they can clean up (as the orchestrator ends every scenario): SysV
/// message queues and `cmd:` accounting cgroups whose maker is gone.
/// Returns one line per thing removed, for the user.
pub fn remove_leftovers() -> Vec<String> {
    let proc_root = std::path::Path::new("/proc");
    let running = |pid: u32, start_ticks: u64| {
        crate::system::procfs::read_process_stat(proc_root, pid)
            .is_ok_and(|stat| stat.is_running() && stat.start_ticks == start_ticks)
    };
    let mut done = crate::system::msgqueue::remove_leftovers(proc_root);
    done.extend(crate::system::cgroup::remove_orphaned_accounts(
        proc_root, running,
    ));
    done
}

/// Included by default.
pub(crate) fn always(_: &WorkParams) -> bool {
    true
}

/// No disk needed.
pub(crate) fn no_disk(_: &WorkParams) -> u64 {
    0
}

/// Nothing to check.
pub(crate) fn no_check(_: &WorkParams, _: Option<&str>) -> Result<(), CheckError> {
    Ok(())
}

/// Refuses a memory load that goes `overflow_pct` % past the memory it has
/// when there is not enough swap for the excess (it would only summon the
/// OOM killer). `mem_bytes` is 0 until the run knows it; then only the
/// presence of swap is checked.
pub(crate) fn check_swap_for(params: &WorkParams, overflow_pct: u64) -> Result<(), CheckError> {
    let overflow = params.mem_bytes * overflow_pct / 100;
    if params.swap_bytes == 0 {
        return Err(CheckError::NoSwap);
    }
    if params.swap_bytes < overflow {
        return Err(CheckError::TooLittleSwap {
            overflow_pct,
            mem_mib: params.mem_bytes >> 20,
            needed_mib: overflow >> 20,
            free_mib: params.swap_bytes >> 20,
        });
    }
    Ok(())
}

/// One part of a load mix.
#[derive(Clone)]
pub struct LoadPart {
    /// The load.
    pub def: &'static LoadDef,
    /// The text after `name:`, for a load that takes an argument.
    pub arg: Option<String>,
}

/// The loads a scenario runs together, with the name the user gave them.
#[derive(Clone)]
pub struct LoadMix {
    /// The spec as the user gave it (`compile`, `burn+write`).
    pub name: String,
    /// The loads it is made of, in the order given.
    pub parts: Vec<LoadPart>,
}

impl std::fmt::Debug for LoadMix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

impl LoadMix {
    /// A mix of one registry load.
    pub fn single(def: &'static LoadDef) -> Self {
        Self {
            name: def.name.to_string(),
            parts: vec![LoadPart { def, arg: None }],
        }
    }

    /// Parses `burn+write`, `compile`, `cmd:stress-ng --cpu 2` and the like.
    /// A `cmd:` part takes the rest of the spec as its command.
    pub fn parse(spec: &str) -> Result<Self, SpecError> {
        let spec = spec.trim();
        let expanded = ALIASES
            .iter()
            .find(|(alias, _)| *alias == spec)
            .map_or(spec, |(_, mix)| *mix);
        let mut parts = Vec::new();
        let mut rest = expanded;
        while !rest.is_empty() {
            let (name, arg, next) = match rest.split_once(':') {
                Some((name, arg)) if !name.contains('+') => (name, Some(arg), ""),
                _ => match rest.split_once('+') {
                    Some((name, next)) => (name, None, next),
                    None => (rest, None, ""),
                },
            };
            let def = find(name.trim()).ok_or_else(|| unknown_load(name.trim()))?;
            if def.takes_arg != arg.is_some() {
                return Err(match def.takes_arg {
                    true => SpecError::NeedsArgument(def.name),
                    false => SpecError::TakesNoArgument(def.name),
                });
            }
            parts.push(LoadPart {
                def,
                arg: arg.map(|a| a.trim().to_string()),
            });
            rest = next;
        }
        if parts.is_empty() {
            return Err(unknown_load(spec));
        }
        if parts.len() > 1 && parts.iter().any(|p| p.def.name == none::DEF.name) {
            return Err(SpecError::NoneInMix);
        }
        Ok(Self {
            name: spec.to_string(),
            parts,
        })
    }

    /// Checks every part against `params`.
    pub fn check(&self, params: &WorkParams) -> Result<(), SpecError> {
        self.parts.iter().try_for_each(|p| {
            (p.def.check)(params, p.arg.as_deref()).map_err(|problem| SpecError::Check {
                load: p.def.name,
                problem,
            })
        })
    }

    /// The parameters the probe of a scenario under this mix works by:
    /// `params`, with the job's cache state a part asks for (`cacherun`).
    pub fn probe_params(&self, params: &WorkParams) -> WorkParams {
        let mut params = params.clone();
        if let Some(cache) = self.parts.iter().find_map(|p| p.def.job_cache) {
            params.job.cache = cache;
        }
        params
    }

    /// Disk space all parts need together.
    pub fn disk_bytes(&self, params: &WorkParams) -> u64 {
        self.parts.iter().map(|p| (p.def.disk_bytes)(params)).sum()
    }
}

fn unknown_load(name: &str) -> SpecError {
    let mut valid: Vec<&str> = LOADS.iter().map(|l| l.name).collect();
    valid.extend(ALIASES.iter().map(|(alias, _)| *alias));
    SpecError::Unknown {
        name: name.to_string(),
        valid: valid.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(mix: &LoadMix) -> Vec<(&str, Option<&str>)> {
        mix.parts
            .iter()
            .map(|p| (p.def.name, p.arg.as_deref()))
            .collect()
    }

    #[test]
    fn mixes_parse_into_parts() {
        let mix = LoadMix::parse("burn+video").unwrap();
        assert_eq!(mix.name, "burn+video");
        assert_eq!(names(&mix), [("burn", None), ("video", None)]);
    }

    #[test]
    fn compile_is_burn_write_and_read() {
        let mix = LoadMix::parse("compile").unwrap();
        assert_eq!(mix.name, "compile");
        assert_eq!(
            names(&mix),
            [("burn", None), ("write", None), ("read", None)]
        );
    }

    #[test]
    fn unknown_parts_and_none_in_a_mix_are_refused() {
        let err = LoadMix::parse("burn+brun").unwrap_err().to_string();
        assert!(
            err.contains("unknown load 'brun'") && err.contains("valid loads: none, burn"),
            "{err}"
        );
        assert!(LoadMix::parse("none+burn").is_err());
        assert!(LoadMix::parse("burn:5")
            .unwrap_err()
            .to_string()
            .contains("takes no argument"));
        assert!(LoadMix::parse("").is_err());
    }

    #[test]
    fn cacherun_runs_nothing_and_keeps_the_jobs_inputs_warm() {
        let mut params = WorkParams::for_tests();
        params.job.cache = JobCache::Cold;
        let cacherun = LoadMix::parse("cacherun").unwrap();
        assert_eq!((cacherun.parts[0].def.processes)(&params), 0);
        assert_eq!(cacherun.probe_params(&params).job.cache, JobCache::Warm);
        let with_burn = LoadMix::parse("burn+cacherun").unwrap();
        assert_eq!(with_burn.probe_params(&params).job.cache, JobCache::Warm);
        for other in ["none", "burn", "jobload"] {
            let mix = LoadMix::parse(other).unwrap();
            assert_eq!(mix.probe_params(&params), params, "{other}");
        }
    }

    #[test]
    fn a_part_that_refuses_the_parameters_is_named() {
        let mix = LoadMix::parse("burn+memload").unwrap();
        let err = mix.check(&WorkParams::for_tests()).unwrap_err().to_string();
        assert!(err.starts_with("load memload: needs swap"), "{err}");
        let custom = LoadMix::parse("custom").unwrap();
        let err = custom.check(&WorkParams::for_tests()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "load custom: the custom simulation needs --custom-cpu PCT (-C) and --custom-interval US (-I)"
        );
    }
}
