//! The `kernel.task_delayacct` switch: delay accounting (Linux 5.14 made it
//! off by default) is switched on for a run, so that its probe and loads,
//! started after, are accounted (`system::taskstats` reads it), and switched
//! back off when the run ends.
//!
//! The switch is the whole system's, so the runs that hold it on are
//! recorded system-wide rather than in a user's state records: one file per
//! run in [`HOLDERS`] (on a tmpfs, gone at boot with the switch itself),
//! named `PID-STARTTICKS`, written before the switch is touched. A run that
//! finds the switch on and held by another live run holds it too; the last
//! holder to end switches it off; a switch that was on with no feelbench run
//! holding it (the administrator's) is left alone. A run killed before it
//! could let go leaves its file: the next run removes it and switches delay
//! accounting off when no live run holds it ([`clean_dead_holders`]).

use super::procfs::{self, ProcError};
use super::read_optional;
use std::path::{Path, PathBuf};

/// The sysctl below /proc.
pub const SYSCTL: &str = "sys/kernel/task_delayacct";

/// Where the runs that hold delay accounting on are recorded.
pub const HOLDERS: &str = "/run/feelbench/delayacct";

/// Whether delay accounting is on; `Ok(None)` when the kernel has no such
/// sysctl (built without `CONFIG_TASK_DELAY_ACCT`, or older than 5.14,
/// where it was on unless booted with `nodelayacct`).
pub fn is_on(proc_root: &Path) -> Result<Option<bool>, ProcError> {
    let path = proc_root.join(SYSCTL);
    let Some(text) = read_optional(&path)? else {
        return Ok(None);
    };
    match text.trim() {
        "0" => Ok(Some(false)),
        "1" => Ok(Some(true)),
        other => Err(ProcError::Parse {
            path,
            line: other.to_string(),
        }),
    }
}

/// Where the switch is and where its holders are recorded.
#[derive(Debug, Clone)]
pub struct Switch {
    pub proc_root: PathBuf,
    pub holders: PathBuf,
}

impl Switch {
    /// The running system's.
    pub fn system() -> Self {
        Self {
            proc_root: PathBuf::from("/proc"),
            holders: PathBuf::from(HOLDERS),
        }
    }

    /// The holders' records: their file and whether their run is alive.
    fn holders(&self) -> Vec<(PathBuf, bool)> {
        let Ok(entries) = std::fs::read_dir(&self.holders) else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok())
            .map(|e| {
                let alive = e.file_name().to_str().is_some_and(|n| self.alive(n));
                (e.path(), alive)
            })
            .collect()
    }

    /// Whether the run named `PID-STARTTICKS` is alive.
    fn alive(&self, name: &str) -> bool {
        let Some((pid, ticks)) = name.split_once('-') else {
            return false;
        };
        let (Ok(pid), Ok(ticks)) = (pid.parse::<u32>(), ticks.parse::<u64>()) else {
            return false;
        };
        procfs::read_process_stat(&self.proc_root, pid).is_ok_and(|s| s.start_ticks == ticks)
    }

    /// Holds delay accounting on for the run of `pid` started at
    /// `start_ticks`: switches it on unless it is on, and says how it
    /// stands. Nothing is held (and nothing to undo) when it was on with no
    /// feelbench run holding it, or the kernel lacks the switch.
    pub fn hold(&self, pid: u32, start_ticks: u64) -> Result<Held, SwitchError> {
        let on = is_on(&self.proc_root).map_err(SwitchError::Read)?;
        let shared = self.holders().iter().any(|(_, alive)| *alive);
        let standing = match on {
            None => return Ok(Held::Missing),
            Some(true) if !shared => return Ok(Held::WasOn),
            Some(true) => Standing::Shared,
            Some(false) => Standing::SwitchedOn,
        };
        std::fs::create_dir_all(&self.holders).map_err(|error| SwitchError::Record {
            path: self.holders.clone(),
            error,
        })?;
        let file = self.holders.join(format!("{pid}-{start_ticks}"));
        std::fs::write(&file, b"").map_err(|error| SwitchError::Record {
            path: file.clone(),
            error,
        })?;
        let hold = Hold {
            switch: self.clone(),
            file,
        };
        if standing == Standing::SwitchedOn {
            write(&self.proc_root, true)?;
        }
        Ok(Held::Holding {
            _hold: hold,
            standing,
        })
    }

    /// Switches delay accounting off when no live run holds it.
    fn release(&self) -> Result<bool, SwitchError> {
        if self.holders().iter().any(|(_, alive)| *alive) {
            return Ok(false);
        }
        write(&self.proc_root, false)?;
        Ok(true)
    }
}

/// How a run holds delay accounting.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Standing {
    /// It switched it on.
    SwitchedOn,
    /// Another live run had switched it on.
    Shared,
}

/// How delay accounting stands for a run.
#[derive(Debug)]
pub enum Held {
    /// Held on by the run (let go when dropped).
    Holding { _hold: Hold, standing: Standing },
    /// It was on before, held by no run: left alone.
    WasOn,
    /// The kernel has no switch.
    Missing,
}

impl Held {
    /// In words, for the run's output.
    pub fn words(&self) -> &'static str {
        match self {
            Held::Holding {
                standing: Standing::SwitchedOn,
                ..
            } => "on (switched on for the run, off at its end)",
            Held::Holding {
                standing: Standing::Shared,
                ..
            } => "on (switched on by another feelbench run; off when the last of them ends)",
            Held::WasOn => "on (it was on before the run)",
            Held::Missing => "unavailable (no kernel.task_delayacct)",
        }
    }
}

/// A run's hold on delay accounting: let go when dropped, switching it off
/// when no other live run holds it.
#[derive(Debug)]
pub struct Hold {
    switch: Switch,
    file: PathBuf,
}

impl Drop for Hold {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.file) {
            say!("warning: cannot remove {}: {e}", self.file.display());
        }
        if let Err(e) = self.switch.release() {
            say!("warning: {e}; switch it off by hand: sysctl kernel.task_delayacct=0");
        }
    }
}

/// Removes the holds of runs that died without letting go and switches
/// delay accounting off when no live run holds it; one line per thing done.
pub fn clean_dead_holders(switch: &Switch) -> Vec<String> {
    let dead: Vec<PathBuf> = switch
        .holders()
        .into_iter()
        .filter(|(_, alive)| !alive)
        .map(|(path, _)| path)
        .collect();
    if dead.is_empty() {
        return Vec::new();
    }
    let mut lines = Vec::new();
    for path in &dead {
        if let Err(e) = std::fs::remove_file(path) {
            lines.push(format!("warning: cannot remove {}: {e}", path.display()));
        }
    }
    let runs: Vec<String> = dead
        .iter()
        .filter_map(|p| Some(p.file_name()?.to_str()?.split('-').next()?.to_string()))
        .collect();
    lines.push(match switch.release() {
        Ok(true) => format!(
            "run {} (ended without cleaning up): switched delay accounting (kernel.task_delayacct) back off",
            runs.join(", ")
        ),
        Ok(false) => format!(
            "run {} (ended without cleaning up) held delay accounting on; left on for a live run that holds it",
            runs.join(", ")
        ),
        Err(e) => format!(
            "run {} (ended without cleaning up) left delay accounting on: {e}; switch it off by hand: sysctl kernel.task_delayacct=0",
            runs.join(", ")
        ),
    });
    lines
}

/// Why delay accounting could not be held.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    #[error(transparent)]
    Read(ProcError),
    #[error("cannot record the hold on delay accounting in {path}: {error}")]
    Record {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot write {path}: {error}")]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

fn write(proc_root: &Path, on: bool) -> Result<(), SwitchError> {
    let path = proc_root.join(SYSCTL);
    std::fs::write(&path, if on { "1" } else { "0" })
        .map_err(|error| SwitchError::Write { path, error })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake /proc with the switch at `value` and this process's stat as
    /// that of pid 100 (alive, with its start time); and a holders directory.
    fn tree(value: Option<&str>) -> (tempfile::TempDir, Switch, u64) {
        let root = tempfile::tempdir().unwrap();
        let proc_root = root.path().join("proc");
        std::fs::create_dir_all(proc_root.join("sys/kernel")).unwrap();
        std::fs::create_dir_all(proc_root.join("100")).unwrap();
        std::fs::copy("/proc/self/stat", proc_root.join("100/stat")).unwrap();
        if let Some(value) = value {
            std::fs::write(proc_root.join(SYSCTL), value).unwrap();
        }
        let ticks = procfs::read_process_stat(&proc_root, 100)
            .unwrap()
            .start_ticks;
        let switch = Switch {
            proc_root,
            holders: root.path().join("holders"),
        };
        (root, switch, ticks)
    }

    fn value(switch: &Switch) -> String {
        std::fs::read_to_string(switch.proc_root.join(SYSCTL)).unwrap()
    }

    #[test]
    fn the_switch_is_read_as_on_off_absent_or_malformed() {
        assert_eq!(is_on(&tree(Some("0\n")).1.proc_root).unwrap(), Some(false));
        assert_eq!(is_on(&tree(Some("1\n")).1.proc_root).unwrap(), Some(true));
        assert_eq!(is_on(&tree(None).1.proc_root).unwrap(), None);
        let err = is_on(&tree(Some("yes\n")).1.proc_root)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("task_delayacct") && err.contains("yes"),
            "{err}"
        );
    }

    #[test]
    fn a_run_switches_it_on_and_off_and_leaves_an_administrators_switch_alone() {
        let (_root, switch, ticks) = tree(Some("0\n"));
        let held = switch.hold(100, ticks).unwrap();
        assert!(matches!(
            held,
            Held::Holding {
                standing: Standing::SwitchedOn,
                ..
            }
        ));
        assert_eq!(value(&switch), "1");
        assert_eq!(switch.holders().len(), 1);
        drop(held);
        assert_eq!(value(&switch), "0");
        assert!(switch.holders().is_empty());
        let (_root, on, ticks) = tree(Some("1\n"));
        assert!(matches!(on.hold(100, ticks).unwrap(), Held::WasOn));
        assert_eq!(value(&on), "1\n");
        assert!(on.holders().is_empty());
        let (_root, missing, ticks) = tree(None);
        assert!(matches!(missing.hold(100, ticks).unwrap(), Held::Missing));
    }

    #[test]
    fn overlapping_runs_share_it_and_the_last_one_switches_it_off() {
        let (_root, switch, ticks) = tree(Some("0\n"));
        let first = switch.hold(100, ticks).unwrap();
        // A second run, alive as the same process is (another start time
        // would be a dead run).
        std::fs::create_dir_all(switch.proc_root.join("101")).unwrap();
        std::fs::copy("/proc/self/stat", switch.proc_root.join("101/stat")).unwrap();
        let second = switch.hold(101, ticks).unwrap();
        assert!(matches!(
            second,
            Held::Holding {
                standing: Standing::Shared,
                ..
            }
        ));
        drop(first);
        assert_eq!(value(&switch), "1", "the second run still holds it");
        drop(second);
        assert_eq!(value(&switch), "0");
    }

    #[test]
    fn a_dead_runs_hold_is_removed_and_the_switch_put_back() {
        let (_root, switch, ticks) = tree(Some("0\n"));
        let held = switch.hold(100, ticks + 1).unwrap();
        // Its pid now has another start time: the run is dead.
        std::mem::forget(held);
        assert_eq!(value(&switch), "1");
        let lines = clean_dead_holders(&switch);
        assert_eq!(
            lines,
            ["run 100 (ended without cleaning up): switched delay accounting (kernel.task_delayacct) back off"]
        );
        assert_eq!(value(&switch), "0");
        assert!(switch.holders().is_empty());
        assert!(clean_dead_holders(&switch).is_empty());
    }
}
