//! `spawn`: resp1's spawnload. Each process starts a shell that runs an
//! external command, waits for it, and starts the next: process creation,
//! exec and clean-up over and over (two new processes and two execs a
//! spawn, like resp1's loop). One such loop waits for each child in turn, so it keeps
//! about one CPU busy; resp1 ran one on one-CPU machines, and there is one
//! per CPU here, so every CPU gets the same pressure (stress-ng's `--fork`
//! is sized the same way).

use super::{Load, LoadDef, LoadError};
use std::process::{Command, Stdio};

/// The shell that is spawned.
const SHELL: &str = "/bin/sh";
/// What it runs: `/bin/true` is not the script's last command, so the shell
/// forks to run it instead of exec'ing it in its own place.
const SCRIPT: &str = "/bin/true; :";

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "spawn",
    summary: "resp1's spawnload: a shell run and reaped over and over, per CPU",
    method: 1,
    unit: "spawns",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: super::no_check,
    processes: |params| params.cpus,
    build: |_| {
        // A first spawn proves that the shell and the command are there.
        spawn_once()?;
        Ok(Box::new(Spawn))
    },
    default: super::always,
    uses: &[],
    job_cache: None,
};

struct Spawn;

impl Load for Spawn {
    /// One spawn (a millisecond or two); a spawn that fails ends the load.
    fn step(&mut self) -> Result<f64, LoadError> {
        spawn_once().map(|()| 1.0)
    }
}

/// Runs the shell once and waits for it (its CPU time then counts in the
/// worker's `RUSAGE_CHILDREN`).
fn spawn_once() -> Result<(), LoadError> {
    let status = Command::new(SHELL)
        .args(["-c", SCRIPT])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(|error| LoadError::Io {
            what: format!("spawn: cannot start {SHELL}"),
            error,
        })?;
    match status.success() {
        true => Ok(()),
        false => Err(LoadError::CommandFailed {
            what: "spawn",
            command: format!("{SHELL} -c '{SCRIPT}'"),
            status,
        }),
    }
}
