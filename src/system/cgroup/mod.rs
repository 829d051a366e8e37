//! Cgroups for the loads (`--mem-limit`, `--load-cpu-weight`): finding the
//! hierarchy that offers each controller ([`hierarchy`]), making the
//! cgroups with their limits ([`plan`], [`Limit`]), that the load workers
//! join ([`join`]), and removing them again ([`remove`], also what the
//! clean-up after a killed run needs). Apart from those, a `cmd:` load's
//! worker makes a cgroup that only accounts its CPU time ([`CpuAccount`]).
//! [`watch`] finds the groups a run's processes are in and reads their
//! throttling and pressure; [`unit`] names the cgroup a process is in as
//! a user knows it (its systemd unit or container).
//!
//! cgroup v2 is used for a controller when a cgroup2 hierarchy offers it,
//! else a cgroup v1 hierarchy mounted with it; so the memory limit and the
//! CPU weight share one cgroup under v2 and are two cgroups under v1 (or on
//! a machine that mixes both). A cgroup is made at the top of its hierarchy,
//! the one place where v2 allows enabling a controller whatever the
//! processes in it. A controller this module enables at the root stays
//! enabled: by the end of the run other cgroups may rely on it. The probe
//! does not join: it is what is measured, and the limits shape the loads'
//! environment, not the probe's (with the v1 cpu controller the probe, in
//! the root group, and the loads' group compete as two entities, as a
//! desktop session and a systemd slice do). The exception is the memory
//! cgroup, which a probe that shares its memory joins, so the loads' memory
//! pressure is its own. Every function takes the roots
//! it reads, so tests run on fake trees.

mod account;
mod group;
mod hierarchy;
mod limit;
pub mod unit;
pub mod watch;

pub use account::{make_cpu_account, remove_orphaned_accounts, CpuAccount};
pub use group::{plan, Cgroup, Plan};
pub use limit::Limit;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long [`remove`] waits for the kernel to let go of a cgroup whose last
/// processes are still exiting (v1 refuses `rmdir` with EBUSY until then).
const REMOVE_PATIENCE: Duration = Duration::from_secs(3);

/// A cgroup operation failed.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    /// A file or directory could not be read, written, made or removed.
    #[error("cannot {action} {path}: {error}")]
    Io {
        action: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    /// A line of `cgroup.procs` is not a process id.
    #[error("{path}: not a process id: {line:?}")]
    Parse { path: PathBuf, line: String },
    /// Neither cgroup version offers a usable controller for an option.
    #[error("no usable {controller} controller for {option}: {found}")]
    NoController {
        controller: &'static str,
        option: &'static str,
        found: String,
    },
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CgroupError {
    let path = path.to_path_buf();
    move |error| CgroupError::Io {
        action,
        path,
        error,
    }
}

/// The cgroup version of a hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    V1,
    V2,
}

impl std::fmt::Display for CgroupVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CgroupVersion::V1 => "cgroup v1",
            CgroupVersion::V2 => "cgroup v2",
        })
    }
}

fn procs_file(cgroup: &Path) -> PathBuf {
    cgroup.join("cgroup.procs")
}

/// Moves the calling process into the cgroup whose `cgroup.procs` file is
/// `procs_file`.
pub fn join(procs_file: &Path) -> Result<(), CgroupError> {
    std::fs::write(procs_file, std::process::id().to_string())
        .map_err(io_error("join the cgroup through", procs_file))
}

/// The processes in the cgroup at `cgroup` (none when it has no
/// `cgroup.procs`, as when it is already gone).
fn members(cgroup: &Path) -> Result<Vec<i32>, CgroupError> {
    let path = procs_file(cgroup);
    let text = match std::fs::read_to_string(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other.map_err(io_error("read", &path))?,
    };
    text.lines()
        .map(|line| {
            line.trim().parse().map_err(|_| CgroupError::Parse {
                path: path.clone(),
                line: line.to_string(),
            })
        })
        .collect()
}

/// Kills every process in the cgroup at `path` and removes it, waiting
/// briefly while the kernel still counts exiting processes. A cgroup that is
/// already gone is not an error.
pub fn remove(path: &Path) -> Result<(), CgroupError> {
    let deadline = Instant::now() + REMOVE_PATIENCE;
    loop {
        for pid in members(path)? {
            // A process may exit on its own meanwhile.
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        match std::fs::remove_dir(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other.map_err(io_error("remove the cgroup", path)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake system: `proc/self/mounts` naming the hierarchies made by
    /// `files` (paths relative to the temp dir, `@` standing for it).
    pub(super) fn fake(mounts: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().display().to_string();
        for (name, text) in [("proc/self/mounts", mounts)].iter().chain(files) {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text.replace('@', &root)).unwrap();
        }
        dir
    }

    /// This machine's layout: v2 with hugetlb only, v1 memory and cpu beside it.
    const SPLIT_MOUNTS: &str = "\
cgroup @/cg/cpu cgroup rw,relatime,cpu 0 0
cgroup @/cg/memory cgroup rw,relatime,memory 0 0
cgroup2 @/cg/unified cgroup2 rw,relatime 0 0
";
    /// The hierarchies of [`SPLIT_MOUNTS`]; the v2 one has hugetlb only.
    const SPLIT_FILES: [(&str, &str); 4] = [
        ("cg/unified/cgroup.controllers", "hugetlb\n"),
        ("cg/unified/cgroup.subtree_control", "hugetlb\n"),
        ("cg/memory/cgroup.procs", "1\n"),
        ("cg/cpu/cgroup.procs", "1\n"),
    ];
    /// A current distribution's layout: v2 only.
    const V2_MOUNTS: &str = "sysfs /sys sysfs rw 0 0\ncgroup2 @/cg cgroup2 rw,nosuid 0 0\n";

    const MEMORY: Limit = Limit::MemoryBytes(128 << 20);
    const WEIGHT: Limit = Limit::CpuWeight(10);

    fn plan_in(dir: &tempfile::TempDir, limits: &[Limit]) -> Result<Vec<Plan>, CgroupError> {
        plan(&dir.path().join("proc"), "fb", limits)
    }

    fn read(dir: &tempfile::TempDir, file: &str) -> String {
        std::fs::read_to_string(dir.path().join(file)).unwrap()
    }

    /// Drops `cgroup` after removing the control files a real cgroupfs
    /// removes with the directory (a fake one cannot), and checks it is gone.
    fn drop_fake(cgroup: Cgroup, files: &[&str]) {
        let path = cgroup.procs_file().parent().unwrap().to_path_buf();
        for file in files {
            std::fs::remove_file(path.join(file)).unwrap();
        }
        drop(cgroup);
        assert!(!path.exists(), "{} is left", path.display());
    }

    #[test]
    fn v2_holds_memory_and_cpu_in_one_cgroup() {
        let dir = fake(
            V2_MOUNTS,
            &[
                ("cg/cgroup.controllers", "cpuset cpu io memory pids\n"),
                ("cg/cgroup.subtree_control", "cpu memory pids\n"),
            ],
        );
        let plans = plan_in(&dir, &[MEMORY, WEIGHT]).unwrap();
        assert_eq!(plans.len(), 1, "{plans:?}");
        assert_eq!(plans[0].path(), dir.path().join("cg/fb"));
        assert_eq!(plans[0].version(), CgroupVersion::V2);
        assert_eq!(plans[0].limits(), [MEMORY, WEIGHT]);
        let cgroup = plans.into_iter().next().unwrap().create().unwrap();
        assert_eq!(cgroup.procs_file(), dir.path().join("cg/fb/cgroup.procs"));
        assert_eq!(read(&dir, "cg/fb/memory.max"), "134217728");
        assert_eq!(read(&dir, "cg/fb/cpu.weight"), "10");
        drop_fake(cgroup, &["memory.max", "cpu.weight"]);
    }

    #[test]
    fn v2_controllers_are_enabled_for_children_when_they_are_not_yet() {
        let dir = fake(
            V2_MOUNTS,
            &[
                ("cg/cgroup.controllers", "cpu memory\n"),
                ("cg/cgroup.subtree_control", ""),
            ],
        );
        assert_eq!(
            plan_in(&dir, &[WEIGHT]).unwrap()[0].version(),
            CgroupVersion::V2
        );
        assert_eq!(read(&dir, "cg/cgroup.subtree_control"), "+cpu");
        assert_eq!(
            plan_in(&dir, &[MEMORY]).unwrap()[0].version(),
            CgroupVersion::V2
        );
        assert_eq!(read(&dir, "cg/cgroup.subtree_control"), "+memory");
    }

    #[test]
    fn v1_makes_one_cgroup_per_hierarchy_with_limit_in_bytes_and_shares() {
        let dir = fake(SPLIT_MOUNTS, &SPLIT_FILES);
        let plans = plan_in(&dir, &[MEMORY, WEIGHT]).unwrap();
        let paths: Vec<&Path> = plans.iter().map(Plan::path).collect();
        let expected = [
            dir.path().join("cg/memory/fb"),
            dir.path().join("cg/cpu/fb"),
        ];
        assert_eq!(
            paths,
            expected.iter().map(PathBuf::as_path).collect::<Vec<_>>()
        );
        assert!(plans.iter().all(|p| p.version() == CgroupVersion::V1));
        let cgroups: Vec<Cgroup> = plans.into_iter().map(|p| p.create().unwrap()).collect();
        assert_eq!(
            read(&dir, "cg/memory/fb/memory.limit_in_bytes"),
            "134217728"
        );
        assert_eq!(read(&dir, "cg/cpu/fb/cpu.shares"), "102");
        let [memory, cpu] = <[Cgroup; 2]>::try_from(cgroups).unwrap();
        drop_fake(memory, &["memory.limit_in_bytes"]);
        drop_fake(cpu, &["cpu.shares"]);
    }

    #[test]
    fn making_a_cgroup_that_exists_fails_naming_it() {
        let dir = fake(SPLIT_MOUNTS, &SPLIT_FILES);
        let plan = plan_in(&dir, &[WEIGHT]).unwrap().remove(0);
        std::fs::create_dir_all(dir.path().join("cg/cpu/fb")).unwrap();
        let err = plan.create().unwrap_err().to_string();
        assert!(
            err.starts_with("cannot make the cgroup") && err.contains("cg/cpu/fb"),
            "{err}"
        );
    }

    #[test]
    fn no_usable_controller_says_what_was_found() {
        // v2 offers memory, but it cannot be enabled (the control file is
        // not writable), and no v1 memory hierarchy exists.
        let dir = fake(V2_MOUNTS, &[("cg/cgroup.controllers", "memory\n")]);
        std::fs::create_dir(dir.path().join("cg/cgroup.subtree_control")).unwrap();
        let err = plan_in(&dir, &[MEMORY]).unwrap_err().to_string();
        assert!(err.contains("cannot enable memory in"), "{err}");
        assert!(err.contains("cgroup v1: no hierarchy"), "{err}");
        let err = plan_in(&dir, &[WEIGHT]).unwrap_err().to_string();
        assert!(
            err.starts_with("no usable cpu controller for --load-cpu-weight: cgroup v2:"),
            "{err}"
        );
        assert!(err.contains("has no cpu"), "{err}");
        let dir = fake("proc /proc proc rw 0 0\n", &[]);
        let err = plan_in(&dir, &[MEMORY]).unwrap_err().to_string();
        assert!(
            err.starts_with("no usable memory controller for --mem-limit"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let err = plan(dir.path(), "fb", &[MEMORY]).unwrap_err().to_string();
        assert!(err.contains("self/mounts"), "{err}");
    }

    #[test]
    fn joining_writes_the_own_pid() {
        let dir = fake("", &[("cg/x/cgroup.procs", "")]);
        let procs = dir.path().join("cg/x/cgroup.procs");
        join(&procs).unwrap();
        assert_eq!(
            std::fs::read_to_string(&procs).unwrap(),
            std::process::id().to_string()
        );
        let err = join(&dir.path().join("nowhere/cgroup.procs")).unwrap_err();
        assert!(err.to_string().contains("nowhere"), "{err}");
    }

    #[test]
    fn removing_is_quiet_when_gone_and_names_the_path_otherwise() {
        let dir = fake("", &[]);
        let cgroup = dir.path().join("cg");
        std::fs::create_dir(&cgroup).unwrap();
        remove(&cgroup).unwrap();
        assert!(!cgroup.exists());
        remove(&cgroup).unwrap();
        // A fake cgroup.procs with an empty list: nobody to kill, and the
        // directory is not empty (ENOTEMPTY is not waited for).
        std::fs::create_dir(&cgroup).unwrap();
        std::fs::write(procs_file(&cgroup), "").unwrap();
        let started = Instant::now();
        let err = remove(&cgroup).unwrap_err().to_string();
        assert!(
            err.contains("remove the cgroup") && err.contains("/cg"),
            "{err}"
        );
        assert!(started.elapsed() < REMOVE_PATIENCE);
        std::fs::write(procs_file(&cgroup), "12\nsoon\n").unwrap();
        let err = remove(&cgroup).unwrap_err().to_string();
        assert!(err.contains("\"soon\""), "{err}");
    }
}
