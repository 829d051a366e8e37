//! Memory cgroups for the loads (`--mem-limit`): finding a memory controller
//! feelbench can use, making a cgroup with a limit that the load workers join
//! ([`join`]), and removing it again ([`remove`], also what the clean-up after
//! a killed run needs).
//!
//! cgroup v2 is used when a cgroup2 hierarchy lists `memory` in its root's
//! `cgroup.controllers` and has it (or can be given it) in the root's
//! `cgroup.subtree_control`; otherwise a cgroup v1 hierarchy mounted with the
//! `memory` controller. The cgroup is made at the top of the hierarchy, the
//! one place where v2 allows enabling a controller whatever the processes in
//! it. A controller this module enables at the root stays enabled: by the end
//! of the run other cgroups may rely on it. The probe never joins: it is what
//! is measured, and the limit shapes the loads' environment, not the probe's.
//! Every function takes the roots it reads, so tests run on fake trees.

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
    /// Neither cgroup version offers a usable memory controller.
    #[error("no usable memory controller for --mem-limit: {0}")]
    NoController(String),
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CgroupError {
    let path = path.to_path_buf();
    move |error| CgroupError::Io {
        action,
        path,
        error,
    }
}

/// The cgroup version of a memory controller.
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

impl CgroupVersion {
    /// The file that holds a cgroup's memory limit.
    fn limit_file(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "memory.limit_in_bytes",
            CgroupVersion::V2 => "memory.max",
        }
    }
}

/// A memory controller feelbench can make cgroups in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryController {
    version: CgroupVersion,
    /// The directory the cgroups are made in (the hierarchy's root).
    parent: PathBuf,
}

/// A mounted cgroup hierarchy, from /proc/self/mounts.
struct Mount {
    fs_type: String,
    dir: PathBuf,
    options: String,
}

fn read_mounts(proc_root: &Path) -> Result<Vec<Mount>, CgroupError> {
    let path = proc_root.join("self/mounts");
    let text = std::fs::read_to_string(&path).map_err(io_error("read", &path))?;
    Ok(text
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace().skip(1);
            let (dir, fs_type, options) = (words.next()?, words.next()?, words.next()?);
            Some(Mount {
                fs_type: fs_type.to_string(),
                dir: PathBuf::from(dir),
                options: options.to_string(),
            })
        })
        .collect())
}

/// Whether the whitespace-separated list in `path` names `memory`.
fn lists_memory(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| text.split_whitespace().any(|w| w == "memory"))
}

/// Why the cgroup2 hierarchy at `root` cannot be used, or `None` when it can
/// (after enabling the memory controller for its children if need be).
fn v2_obstacle(root: &Path) -> Option<String> {
    let controllers = root.join("cgroup.controllers");
    if !lists_memory(&controllers) {
        return Some(format!("{} has no memory", controllers.display()));
    }
    let subtree = root.join("cgroup.subtree_control");
    if lists_memory(&subtree) {
        return None;
    }
    std::fs::write(&subtree, "+memory")
        .err()
        .map(|e| format!("cannot enable memory in {}: {e}", subtree.display()))
}

impl MemoryController {
    /// Finds the memory controller to use among the cgroup hierarchies
    /// mounted according to `<proc_root>/self/mounts`: v2 when it offers
    /// memory, else v1. The error says what was found.
    pub fn find(proc_root: &Path) -> Result<Self, CgroupError> {
        let mounts = read_mounts(proc_root)?;
        let mut obstacles = Vec::new();
        for mount in mounts.iter().filter(|m| m.fs_type == "cgroup2") {
            match v2_obstacle(&mount.dir) {
                None => {
                    return Ok(Self {
                        version: CgroupVersion::V2,
                        parent: mount.dir.clone(),
                    })
                }
                Some(obstacle) => obstacles.push(format!("cgroup v2: {obstacle}")),
            }
        }
        let v1 = mounts
            .iter()
            .find(|m| m.fs_type == "cgroup" && m.options.split(',').any(|o| o == "memory"));
        match v1 {
            Some(mount) => Ok(Self {
                version: CgroupVersion::V1,
                parent: mount.dir.clone(),
            }),
            None => {
                obstacles.push(
                    "cgroup v1: no hierarchy with the memory controller is mounted".to_string(),
                );
                Err(CgroupError::NoController(obstacles.join("; ")))
            }
        }
    }

    /// The cgroup version of this controller.
    pub fn version(&self) -> CgroupVersion {
        self.version
    }

    /// Where the cgroup called `name` goes.
    pub fn path_of(&self, name: &str) -> PathBuf {
        self.parent.join(name)
    }

    /// Makes the cgroup `name` with a memory limit of `limit_bytes` (swap is
    /// left unlimited, so the loads can be pushed into it).
    pub fn create(&self, name: &str, limit_bytes: u64) -> Result<MemoryCgroup, CgroupError> {
        let path = self.path_of(name);
        std::fs::create_dir(&path).map_err(io_error("make the cgroup", &path))?;
        // From here on, dropping `cgroup` removes the directory.
        let cgroup = MemoryCgroup { path };
        let limit = cgroup.path.join(self.version.limit_file());
        std::fs::write(&limit, limit_bytes.to_string()).map_err(io_error("write", &limit))?;
        Ok(cgroup)
    }
}

/// A memory cgroup that exists for as long as this value lives.
#[derive(Debug)]
pub struct MemoryCgroup {
    path: PathBuf,
}

impl MemoryCgroup {
    /// The file a process writes its pid into to join the cgroup.
    pub fn procs_file(&self) -> PathBuf {
        procs_file(&self.path)
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        if let Err(e) = remove(&self.path) {
            eprintln!("feelbench: warning: {e}");
        }
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
    fn fake(mounts: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().display().to_string();
        for (name, text) in [("proc/self/mounts", mounts)].iter().chain(files) {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text.replace('@', &root)).unwrap();
        }
        dir
    }

    /// This machine's layout: v2 with hugetlb only, v1 memory beside it.
    const SPLIT_MOUNTS: &str = "\
cgroup @/cg/cpu cgroup rw,relatime,cpu 0 0
cgroup @/cg/memory cgroup rw,relatime,memory 0 0
cgroup2 @/cg/unified cgroup2 rw,relatime 0 0
";
    /// A current distribution's layout: v2 only.
    const V2_MOUNTS: &str = "sysfs /sys sysfs rw 0 0\ncgroup2 @/cg cgroup2 rw,nosuid 0 0\n";

    fn find(dir: &tempfile::TempDir) -> Result<MemoryController, CgroupError> {
        MemoryController::find(&dir.path().join("proc"))
    }

    #[test]
    fn v2_with_memory_is_preferred_and_gets_memory_max() {
        let dir = fake(
            V2_MOUNTS,
            &[
                ("cg/cgroup.controllers", "cpuset cpu io memory pids\n"),
                ("cg/cgroup.subtree_control", "cpu memory pids\n"),
            ],
        );
        let controller = find(&dir).unwrap();
        assert_eq!(controller.version(), CgroupVersion::V2);
        assert_eq!(controller.path_of("fb"), dir.path().join("cg/fb"));
        let cgroup = controller.create("fb", 128 << 20).unwrap();
        assert_eq!(cgroup.procs_file(), dir.path().join("cg/fb/cgroup.procs"));
        let limit = dir.path().join("cg/fb/memory.max");
        assert_eq!(std::fs::read_to_string(&limit).unwrap(), "134217728");
        // A real cgroupfs removes its files with the directory; a fake one cannot.
        std::fs::remove_file(limit).unwrap();
        drop(cgroup);
        assert!(!dir.path().join("cg/fb").exists());
    }

    #[test]
    fn v2_memory_is_enabled_for_children_when_it_is_not_yet() {
        let dir = fake(
            V2_MOUNTS,
            &[
                ("cg/cgroup.controllers", "cpu memory\n"),
                ("cg/cgroup.subtree_control", ""),
            ],
        );
        assert_eq!(find(&dir).unwrap().version(), CgroupVersion::V2);
        let subtree = dir.path().join("cg/cgroup.subtree_control");
        assert_eq!(std::fs::read_to_string(subtree).unwrap(), "+memory");
    }

    #[test]
    fn v1_is_used_when_v2_lacks_memory_and_gets_limit_in_bytes() {
        let dir = fake(
            SPLIT_MOUNTS,
            &[
                ("cg/unified/cgroup.controllers", "hugetlb\n"),
                ("cg/unified/cgroup.subtree_control", "hugetlb\n"),
                ("cg/memory/cgroup.procs", "1\n"),
            ],
        );
        let controller = find(&dir).unwrap();
        assert_eq!(controller.version(), CgroupVersion::V1);
        let cgroup = controller.create("feelbench-7", 1 << 30).unwrap();
        let limit = dir
            .path()
            .join("cg/memory/feelbench-7/memory.limit_in_bytes");
        assert_eq!(std::fs::read_to_string(&limit).unwrap(), "1073741824");
        std::fs::remove_file(limit).unwrap();
        drop(cgroup);
    }

    #[test]
    fn no_usable_controller_says_what_was_found() {
        // v2 offers memory, but it cannot be enabled (the control file is
        // not writable), and no v1 memory hierarchy exists.
        let dir = fake(V2_MOUNTS, &[("cg/cgroup.controllers", "memory\n")]);
        std::fs::create_dir(dir.path().join("cg/cgroup.subtree_control")).unwrap();
        let err = find(&dir).unwrap_err().to_string();
        assert!(err.contains("cannot enable memory in"), "{err}");
        assert!(err.contains("cgroup v1: no hierarchy"), "{err}");
        let dir = fake("proc /proc proc rw 0 0\n", &[]);
        let err = find(&dir).unwrap_err().to_string();
        assert!(err.starts_with("no usable memory controller"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let err = MemoryController::find(dir.path()).unwrap_err().to_string();
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
