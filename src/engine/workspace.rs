//! The run's footprint on the system: a private directory (0700, created
//! exclusively) for the loads' files, plus whatever else the run adds (a swap
//! file, a cgroup). Everything is undone when the workspace is dropped, and
//! listed in a small state record so that the next feelbench can undo it
//! after the orchestrator was SIGKILLed. A record stays until everything it
//! names is gone: what could not be removed is said, with the command that
//! removes it by hand, and tried again at every start.
//!
//! A run is alive while its pid lives with the recorded start time; a record
//! whose start time could not be read is alive while its pid lives at all,
//! so a live run is never taken for a dead one (a reused pid only delays the
//! clean-up until that process ends).

use crate::system::atomic::write_atomically;
use crate::system::procfs;
use anyhow::Context as _;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Deserializer, Serialize};
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The environment variable that marks every process of a run.
pub const RUN_MARKER_VAR: &str = "FEELBENCH_RUN";

/// What a run has put on the system, as recorded for a later clean-up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Footprint {
    /// The orchestrator's pid.
    pub pid: u32,
    /// The orchestrator's start time (clock ticks after boot), which with
    /// the pid tells a live run from a dead one; `None` when /proc could
    /// not say (records of earlier versions wrote that as 0).
    #[serde(default, deserialize_with = "zero_is_unknown")]
    pub start_ticks: Option<u64>,
    /// Value of [`RUN_MARKER_VAR`] in the run's processes.
    pub marker: String,
    /// The private directory.
    pub dir: PathBuf,
    /// A swap file the run turned on.
    pub swap_file: Option<PathBuf>,
    /// The cgroup directories the run made.
    #[serde(default)]
    pub cgroups: Vec<PathBuf>,
    /// The one cgroup a record written before `cgroups` names.
    #[serde(default, skip_serializing)]
    cgroup: Option<PathBuf>,
}

/// A start time of 0 (what earlier versions wrote when it could not be
/// read) or none is unknown.
fn zero_is_unknown<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    Ok(Option::<u64>::deserialize(deserializer)?.filter(|&ticks| ticks != 0))
}

/// One thing a run put on the system.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Leftover {
    Swap(PathBuf),
    Cgroup(PathBuf),
    Dir(PathBuf),
}

impl Leftover {
    fn path(&self) -> &Path {
        match self {
            Leftover::Swap(p) | Leftover::Cgroup(p) | Leftover::Dir(p) => p,
        }
    }

    /// What it is, for the user: `swap file /x/swapfile`.
    fn describe(&self) -> String {
        let what = match self {
            Leftover::Swap(_) => "swap file",
            Leftover::Cgroup(_) => "cgroup",
            Leftover::Dir(_) => "directory",
        };
        format!("{what} {}", self.path().display())
    }

    /// The shell command that removes it by hand.
    fn by_hand(&self) -> String {
        let path = self.path().display();
        match self {
            Leftover::Swap(_) => format!("swapoff {path} && rm {path}"),
            Leftover::Cgroup(_) => {
                format!("kill -9 $(cat {path}/cgroup.procs); rmdir {path}")
            }
            Leftover::Dir(_) => format!("rm -rf {path}"),
        }
    }

    /// Removes it.
    fn remove(
        &self,
        remove_swap: &impl Fn(&Path) -> anyhow::Result<()>,
        remove_cgroup: &impl Fn(&Path) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        match self {
            Leftover::Swap(p) => remove_swap(p),
            Leftover::Cgroup(p) => remove_cgroup(p),
            Leftover::Dir(p) => {
                std::fs::remove_dir_all(p).with_context(|| format!("cannot remove {}", p.display()))
            }
        }
    }
}

impl Footprint {
    /// Everything the record names that is still on the system: the swap
    /// file and the private directory last, as they must be removed.
    fn leftovers(&self) -> Vec<Leftover> {
        let cgroups = self.cgroups.iter().chain(&self.cgroup).cloned();
        cgroups
            .map(Leftover::Cgroup)
            .chain(self.swap_file.clone().map(Leftover::Swap))
            .chain([Leftover::Dir(self.dir.clone())])
            .filter(|l| l.path().exists())
            .collect()
    }

    /// The same record, naming only `left` (and the private directory).
    fn naming_only(&self, left: &[Leftover]) -> Self {
        Self {
            swap_file: left.iter().find_map(|l| match l {
                Leftover::Swap(p) => Some(p.clone()),
                _ => None,
            }),
            cgroups: left
                .iter()
                .filter_map(|l| match l {
                    Leftover::Cgroup(p) => Some(p.clone()),
                    _ => None,
                })
                .collect(),
            cgroup: None,
            ..self.clone()
        }
    }

    /// Whether the run that wrote it is still alive, as `start_of` (a
    /// pid's start time, `None` when it has no process) tells.
    fn is_alive(&self, start_of: impl Fn(u32) -> Option<u64>) -> bool {
        let now = start_of(self.pid);
        match self.start_ticks {
            Some(recorded) => now == Some(recorded),
            None => now.is_some(),
        }
    }
}

/// The private directory and the record of the run's footprint.
pub struct Workspace {
    /// Taken when dropped, to remove it and hear how that went.
    dir: Option<tempfile::TempDir>,
    footprint: Footprint,
    record: Option<PathBuf>,
}

/// Where state records live: `$XDG_CACHE_HOME|~/.cache/feelbench/runs`.
pub fn records_dir() -> Option<PathBuf> {
    crate::measure::calibrate::cache_dir().map(|d| d.join("runs"))
}

/// Process `pid`'s start time in clock ticks after boot; `None` when the
/// process does not exist.
fn start_ticks(pid: u32) -> Option<u64> {
    procfs::read_process_stat(Path::new("/proc"), pid)
        .ok()
        .map(|stat| stat.start_ticks)
}

/// The marker of a run: its pid and start time, or, when the start time is
/// unknown, the time of day in ns (a later run with the same pid must not
/// carry the same marker).
fn marker(pid: u32, start_ticks: Option<u64>) -> String {
    match start_ticks {
        Some(ticks) => format!("{pid}-{ticks}"),
        None => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            format!("{pid}-t{}", now.as_nanos())
        }
    }
}

impl Workspace {
    /// Makes the private directory under `workdir` and records it. Also sets
    /// [`RUN_MARKER_VAR`] for the processes the run will start.
    pub fn create(workdir: &Path) -> anyhow::Result<Self> {
        Self::create_recorded_in(workdir, records_dir())
    }

    /// [`Workspace::create`], with its record in the directory `records`
    /// (none: not recorded).
    fn create_recorded_in(workdir: &Path, records: Option<PathBuf>) -> anyhow::Result<Self> {
        // Absolute, so that the record still names the right paths for a
        // later run started in another directory.
        let workdir = workdir
            .canonicalize()
            .with_context(|| format!("cannot find the work directory {}", workdir.display()))?;
        let dir = tempfile::Builder::new()
            .prefix("feelbench-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&workdir)
            .with_context(|| format!("cannot make a private directory in {}", workdir.display()))?;
        let pid = std::process::id();
        let start_ticks = start_ticks(pid);
        let footprint = Footprint {
            pid,
            start_ticks,
            marker: marker(pid, start_ticks),
            dir: dir.path().to_path_buf(),
            swap_file: None,
            cgroups: Vec::new(),
            cgroup: None,
        };
        // Named by the marker, not the pid alone: a record kept for what a
        // dead run could not remove is not overwritten by a run given its pid.
        let record = records.map(|d| d.join(format!("{}.json", footprint.marker)));
        let workspace = Self {
            dir: Some(dir),
            footprint,
            record,
        };
        workspace.save()?;
        Ok(workspace)
    }

    /// The marker the run's processes carry in their environment.
    pub fn marker(&self) -> &str {
        &self.footprint.marker
    }

    /// The private directory.
    pub fn dir(&self) -> &Path {
        &self.footprint.dir
    }

    /// Records a swap file the run turned on (undone by its owner; recorded
    /// for the clean-up after a SIGKILL).
    pub fn note_swap_file(&mut self, path: &Path) -> anyhow::Result<()> {
        self.footprint.swap_file = Some(path.to_path_buf());
        self.save()
    }

    /// Records a cgroup the run makes (one more, when it makes several).
    pub fn note_cgroup(&mut self, path: &Path) -> anyhow::Result<()> {
        self.footprint.cgroups.push(path.to_path_buf());
        self.save()
    }

    /// A fresh, empty directory for scenario number `index`.
    pub fn scenario_dir(&self, index: usize) -> anyhow::Result<PathBuf> {
        let path = self.dir().join(format!("scenario-{index}"));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .with_context(|| format!("cannot make {}", path.display()))?;
        Ok(path)
    }

    fn save(&self) -> anyhow::Result<()> {
        match &self.record {
            Some(path) => write_record(path, &self.footprint),
            None => Ok(()),
        }
    }
}

/// Writes `footprint` as the record at `path`.
fn write_record(path: &Path, footprint: &Footprint) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot make {}", parent.display()))?;
    }
    let text = serde_json::to_string_pretty(footprint)?;
    write_atomically(path, text.as_bytes())?;
    Ok(())
}

impl Drop for Workspace {
    /// Kills what is left of the run's processes and removes the private
    /// directory (the swap file and cgroups are their owners' to remove,
    /// which are dropped before). The record is removed when nothing it
    /// names is left; otherwise it stays for the next run, and what is left
    /// is said with the command that removes it.
    fn drop(&mut self) {
        kill_marked(&self.footprint.marker);
        if let Some(Err(e)) = self.dir.take().map(tempfile::TempDir::close) {
            say!(
                "warning: cannot remove the run's directory {}: {e}",
                self.footprint.dir.display()
            );
        }
        let left = self.footprint.leftovers();
        let Some(record) = &self.record else {
            for leftover in &left {
                say!(
                    "warning: left {}; remove it by hand: {}",
                    leftover.describe(),
                    leftover.by_hand()
                );
            }
            return;
        };
        if left.is_empty() {
            if let Err(e) = std::fs::remove_file(record) {
                say!(
                    "warning: cannot remove the run's record {}: {e}",
                    record.display()
                );
            }
            return;
        }
        let kept = write_record(record, &self.footprint.naming_only(&left));
        for leftover in &left {
            say!(
                "warning: left {}; {}; or by hand: {}",
                leftover.describe(),
                match &kept {
                    Ok(()) => "the next feelbench run removes it".to_string(),
                    Err(e) => format!("not recorded ({e:#})"),
                },
                leftover.by_hand()
            );
        }
    }
}

/// SIGKILLs every process whose environment carries `marker` (what a load
/// started and what escaped its process group) and returns their pids.
pub fn kill_marked(marker: &str) -> Vec<u32> {
    let needle = format!("{RUN_MARKER_VAR}={marker}");
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
        })
        .filter(|&pid| kill(Pid::from_raw(pid as i32), Signal::SIGKILL).is_ok())
        .collect()
}

/// Undoes what runs that died without cleaning up left behind, and returns
/// one line per thing removed or not, for the user. A record whose
/// leftovers could not all be removed is kept, naming only those, so that
/// every later start tries again.
pub fn clean_leftovers(
    remove_swap: impl Fn(&Path) -> anyhow::Result<()>,
    remove_cgroup: impl Fn(&Path) -> anyhow::Result<()>,
) -> Vec<String> {
    let Some(dir) = records_dir() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut done = Vec::new();
    for path in entries.filter_map(|e| Some(e.ok()?.path())) {
        let Some(footprint) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<Footprint>(&t).ok())
        else {
            continue;
        };
        if footprint.is_alive(start_ticks) {
            continue;
        }
        let undone = undo(&footprint, &remove_swap, &remove_cgroup);
        done.extend(undone.lines);
        let kept = match undone.left.is_empty() {
            true => std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display())),
            false => write_record(&path, &footprint.naming_only(&undone.left)),
        };
        if let Err(e) = kept {
            done.push(format!("warning: {e:#}"));
        }
    }
    done
}

/// What undoing a dead run did.
struct Undone {
    /// One line per thing done or that could not be.
    lines: Vec<String>,
    /// What could not be removed.
    left: Vec<Leftover>,
}

/// Undoes what the dead run of `footprint` left.
fn undo(
    footprint: &Footprint,
    remove_swap: &impl Fn(&Path) -> anyhow::Result<()>,
    remove_cgroup: &impl Fn(&Path) -> anyhow::Result<()>,
) -> Undone {
    let run = format!("run {} (ended without cleaning up)", footprint.pid);
    let mut undone = Undone {
        lines: Vec::new(),
        left: Vec::new(),
    };
    let killed = kill_marked(&footprint.marker);
    if !killed.is_empty() {
        undone.lines.push(format!(
            "{run}: killed {} process(es) {killed:?}",
            killed.len()
        ));
    }
    for leftover in footprint.leftovers() {
        let what = leftover.describe();
        undone.lines.push(match leftover.remove(remove_swap, remove_cgroup) {
            Ok(()) => format!("{run}: removed {what}"),
            Err(e) => format!(
                "{run}: could not remove {what}: {e:#}; tried again at every start, or remove it by hand: {}",
                leftover.by_hand()
            ),
        });
        if leftover.path().exists() {
            undone.left.push(leftover);
        }
    }
    undone
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_private_directory_is_for_its_owner_only() {
        let parent = tempfile::tempdir().unwrap();
        // Recorded beside it, not in the user's cache.
        let records = parent.path().join("runs");
        let workspace =
            Workspace::create_recorded_in(parent.path(), Some(records.clone())).unwrap();
        assert!(records
            .join(format!("{}.json", workspace.marker()))
            .exists());
        let scenario = workspace.scenario_dir(0).unwrap();
        for dir in [workspace.dir(), scenario.as_path()] {
            let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", dir.display());
        }
        assert!(workspace.scenario_dir(0).is_err(), "made exclusively");
    }

    #[test]
    fn every_cgroup_is_recorded_and_older_records_still_name_theirs() {
        let footprint = Footprint {
            cgroups: vec!["/cg/memory/fb".into(), "/cg/cpu/fb".into()],
            ..Footprint::default()
        };
        let text = serde_json::to_string(&footprint).unwrap();
        assert!(!text.contains(r#""cgroup""#), "{text}");
        assert_eq!(serde_json::from_str::<Footprint>(&text).unwrap(), footprint);
        let old = r#"{"pid":1,"start_ticks":2,"marker":"1-2","dir":"/x","swap_file":null,"cgroup":"/cg/memory/fb"}"#;
        let read: Footprint = serde_json::from_str(old).unwrap();
        assert_eq!(read.cgroup.as_deref(), Some(Path::new("/cg/memory/fb")));
        assert_eq!(read.start_ticks, Some(2));
        assert!(read.cgroups.is_empty());
    }

    #[test]
    fn an_unreadable_start_time_is_unknown_not_0() {
        let old = r#"{"pid":1,"start_ticks":0,"marker":"1-0","dir":"/x","swap_file":null}"#;
        let read: Footprint = serde_json::from_str(old).unwrap();
        assert_eq!(read.start_ticks, None);
        let unknown = Footprint::default();
        let text = serde_json::to_string(&unknown).unwrap();
        assert!(text.contains(r#""start_ticks":null"#), "{text}");
        assert_eq!(serde_json::from_str::<Footprint>(&text).unwrap(), unknown);
        assert_ne!(
            marker(7, None),
            marker(7, None),
            "unique without a start time"
        );
        assert_eq!(marker(7, Some(9)), "7-9");
    }

    #[test]
    fn a_run_without_a_start_time_is_alive_while_its_pid_lives() {
        let unknown = Footprint {
            pid: 42,
            ..Footprint::default()
        };
        assert!(unknown.is_alive(|_| Some(1000)));
        assert!(!unknown.is_alive(|_| None));
        let known = Footprint {
            start_ticks: Some(1000),
            ..unknown
        };
        assert!(known.is_alive(|_| Some(1000)));
        assert!(!known.is_alive(|_| Some(2000)), "the pid was reused");
        assert!(!known.is_alive(|_| None));
    }

    #[test]
    fn undoing_a_dead_run_removes_every_cgroup_it_recorded_and_keeps_what_stays() {
        let root = tempfile::tempdir().unwrap();
        let path = |name: &str| {
            let path = root.path().join(name);
            std::fs::create_dir(&path).unwrap();
            path
        };
        let (memory, cpu, old, dir) = (path("memory"), path("cpu"), path("old"), path("dir"));
        let footprint = Footprint {
            marker: format!("unit-test-{}", std::process::id()),
            dir: dir.clone(),
            cgroups: vec![memory.clone(), cpu.clone()],
            cgroup: Some(old.clone()),
            ..Footprint::default()
        };
        let removed = std::cell::RefCell::new(Vec::new());
        let undone = undo(
            &footprint,
            &|_| unreachable!("no swap file was recorded"),
            &|path| {
                removed.borrow_mut().push(path.to_path_buf());
                anyhow::ensure!(path != cpu, "busy");
                Ok(std::fs::remove_dir(path)?)
            },
        );
        assert_eq!(removed.into_inner(), [memory.clone(), cpu.clone(), old]);
        let lines = undone.lines;
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(lines[0].ends_with(&format!("removed cgroup {}", memory.display())));
        assert!(
            lines[1].contains(&format!("could not remove cgroup {}: busy", cpu.display()))
                && lines[1].ends_with(&format!("rmdir {}", cpu.display())),
            "{lines:?}"
        );
        assert!(lines[3].ends_with(&format!("removed directory {}", dir.display())));
        assert_eq!(undone.left, [Leftover::Cgroup(cpu.clone())]);
        let kept = footprint.naming_only(&undone.left);
        assert_eq!((kept.cgroups, kept.cgroup), (vec![cpu], None));
    }

    #[test]
    fn own_start_time_is_known_and_a_missing_pid_has_none() {
        assert!(start_ticks(std::process::id()).is_some());
        assert_eq!(start_ticks(u32::MAX), None);
    }
}
