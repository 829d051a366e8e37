//! `none`: an otherwise idle system.

use super::{LoadDef, LoadError};

/// Registry entry: no processes, so nothing is ever built.
pub const DEF: LoadDef = LoadDef {
    name: "none",
    summary: "no load: an otherwise idle system",
    method: 1,
    unit: "",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: super::no_check,
    processes: |_| 0,
    build: |_| Err(LoadError::NoProcesses("none")),
    default: super::always,
    uses: &[],
    job_cache: None,
};
