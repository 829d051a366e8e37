//! `cacherun`: contest's cacherun, the compile run again straight after the
//! no-load one, with its tree warm in the page cache and nothing beside
//! it. It is a row of the `job` probe's table, not background work: no
//! process runs, as under `none`, and the load asks the job probe to keep
//! its inputs warm whatever `--job-cache` says (`LoadDef::job_cache`),
//! so under `--job-cache cold` (the contest suite) `none` is contest's
//! first, cold compile and `cacherun` its warm one. Under any other probe
//! it is simply no load.

use super::{LoadDef, LoadError};
use crate::sim::job::JobCache;

/// Registry entry: no processes, so nothing is ever built.
pub const DEF: LoadDef = LoadDef {
    name: "cacherun",
    summary: "contest's cacherun: no load, and the job probe's inputs warm in the page cache",
    method: 1,
    unit: "",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: super::no_check,
    processes: |_| 0,
    build: |_| Err(LoadError::NoProcesses("cacherun")),
    default: |_| false,
    uses: &[],
    job_cache: Some(JobCache::Warm),
};
