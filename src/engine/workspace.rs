//! The run's footprint on the system: a private directory (0700, created
//! exclusively) for the loads' files, plus whatever else the run adds (a swap
//! file, a cgroup). Everything is undone when the workspace is dropped, and
//! listed in a small state record so that the next feelbench can undo it
//! after the orchestrator was SIGKILLed.

use crate::system::atomic::write_atomically;
use crate::system::procfs;
use anyhow::Context as _;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The environment variable that marks every process of a run.
pub const RUN_MARKER_VAR: &str = "FEELBENCH_RUN";

/// What a run has put on the system, as recorded for a later clean-up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Footprint {
    /// The orchestrator's pid and start time (clock ticks after boot), which
    /// together tell a live run from a dead one.
    pub pid: u32,
    pub start_ticks: u64,
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

/// The private directory and the record of the run's footprint.
pub struct Workspace {
    dir: tempfile::TempDir,
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

impl Workspace {
    /// Makes the private directory under `workdir` and records it. Also sets
    /// [`RUN_MARKER_VAR`] for the processes the run will start.
    pub fn create(workdir: &Path) -> anyhow::Result<Self> {
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
        let start_ticks = start_ticks(pid).unwrap_or(0);
        let footprint = Footprint {
            pid,
            start_ticks,
            marker: format!("{pid}-{start_ticks}"),
            dir: dir.path().to_path_buf(),
            swap_file: None,
            cgroups: Vec::new(),
            cgroup: None,
        };
        let record = records_dir().map(|d| d.join(format!("{pid}.json")));
        let workspace = Self {
            dir,
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
        self.dir.path()
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
        let path = self.dir.path().join(format!("scenario-{index}"));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .with_context(|| format!("cannot make {}", path.display()))?;
        Ok(path)
    }

    fn save(&self) -> anyhow::Result<()> {
        let Some(path) = &self.record else {
            return Ok(());
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot make {}", parent.display()))?;
        }
        let text = serde_json::to_string_pretty(&self.footprint)?;
        write_atomically(path, text.as_bytes())?;
        Ok(())
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        kill_marked(&self.footprint.marker);
        if let Some(path) = &self.record {
            let _ = std::fs::remove_file(path);
        }
        // The TempDir removes the directory itself.
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
/// one line per thing removed, for the user.
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
        let alive = start_ticks(footprint.pid) == Some(footprint.start_ticks);
        if alive {
            continue;
        }
        done.extend(undo(&footprint, &remove_swap, &remove_cgroup));
        let _ = std::fs::remove_file(&path);
    }
    done
}

/// Undoes what the dead run of `footprint` left; one line per thing done
/// or that could not be.
fn undo(
    footprint: &Footprint,
    remove_swap: impl Fn(&Path) -> anyhow::Result<()>,
    remove_cgroup: impl Fn(&Path) -> anyhow::Result<()>,
) -> Vec<String> {
    let run = format!("run {} (ended without cleaning up)", footprint.pid);
    let mut done = Vec::new();
    let killed = kill_marked(&footprint.marker);
    if !killed.is_empty() {
        done.push(format!(
            "{run}: killed {} process(es) {killed:?}",
            killed.len()
        ));
    }
    if let Some(swap) = &footprint.swap_file {
        done.push(match remove_swap(swap) {
            Ok(()) => format!("{run}: turned off and removed swap file {}", swap.display()),
            Err(e) => format!(
                "{run}: could not remove swap file {}: {e:#}",
                swap.display()
            ),
        });
    }
    for cgroup in footprint.cgroups.iter().chain(&footprint.cgroup) {
        done.push(match remove_cgroup(cgroup) {
            Ok(()) => format!("{run}: removed cgroup {}", cgroup.display()),
            Err(e) => format!("{run}: could not remove cgroup {}: {e:#}", cgroup.display()),
        });
    }
    if footprint.dir.exists() {
        done.push(match std::fs::remove_dir_all(&footprint.dir) {
            Ok(()) => format!("{run}: removed {}", footprint.dir.display()),
            Err(e) => format!("{run}: could not remove {}: {e}", footprint.dir.display()),
        });
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_private_directory_is_for_its_owner_only() {
        let parent = tempfile::tempdir().unwrap();
        let workspace = Workspace::create(parent.path()).unwrap();
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
        assert!(read.cgroups.is_empty());
    }

    #[test]
    fn undoing_a_dead_run_removes_every_cgroup_it_recorded() {
        let footprint = Footprint {
            marker: format!("unit-test-{}", std::process::id()),
            dir: "/nonexistent/feelbench-test".into(),
            cgroups: vec!["/cg/memory/fb".into(), "/cg/cpu/fb".into()],
            cgroup: Some("/cg/old".into()),
            ..Footprint::default()
        };
        let removed = std::cell::RefCell::new(Vec::new());
        let lines = undo(
            &footprint,
            |_| unreachable!("no swap file was recorded"),
            |path| {
                removed.borrow_mut().push(path.to_path_buf());
                Ok(())
            },
        );
        let expected: Vec<PathBuf> = ["/cg/memory/fb", "/cg/cpu/fb", "/cg/old"]
            .map(PathBuf::from)
            .into();
        assert_eq!(removed.into_inner(), expected);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[1].ends_with("removed cgroup /cg/cpu/fb"), "{lines:?}");
    }

    #[test]
    fn own_start_time_is_known_and_a_missing_pid_has_none() {
        assert!(start_ticks(std::process::id()).is_some());
        assert_eq!(start_ticks(u32::MAX), None);
    }
}
