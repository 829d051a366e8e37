//! Finding the cgroup hierarchy that offers a controller: a cgroup2
//! hierarchy that lists it in its root's `cgroup.controllers` and has it
//! (or can be given it) in the root's `cgroup.subtree_control`, else a
//! cgroup v1 hierarchy mounted with it.

use super::{io_error, CgroupError, CgroupVersion, Limit};
use std::path::{Path, PathBuf};

/// A controller feelbench can make cgroups in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controller {
    version: CgroupVersion,
    /// The directory the cgroups are made in (the hierarchy's root).
    parent: PathBuf,
}

/// A mounted cgroup hierarchy, from /proc/self/mounts.
pub(super) struct Mount {
    pub(super) fs_type: String,
    pub(super) dir: PathBuf,
    pub(super) options: String,
}

/// The mounts listed in `<proc_root>/self/mounts`.
pub(super) fn read_mounts(proc_root: &Path) -> Result<Vec<Mount>, CgroupError> {
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

/// Whether the whitespace-separated list in `path` names `controller`.
fn lists(path: &Path, controller: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| text.split_whitespace().any(|w| w == controller))
}

/// Why the cgroup2 hierarchy at `root` cannot be used for `controller`, or
/// `None` when it can (after enabling the controller for its children if
/// need be).
fn v2_obstacle(root: &Path, controller: &str) -> Option<String> {
    let controllers = root.join("cgroup.controllers");
    if !lists(&controllers, controller) {
        return Some(format!("{} has no {controller}", controllers.display()));
    }
    let subtree = root.join("cgroup.subtree_control");
    if lists(&subtree, controller) {
        return None;
    }
    std::fs::write(&subtree, format!("+{controller}"))
        .err()
        .map(|e| format!("cannot enable {controller} in {}: {e}", subtree.display()))
}

impl Controller {
    /// Finds the controller that enforces `limit` among the cgroup
    /// hierarchies mounted according to `<proc_root>/self/mounts`: v2 when
    /// it offers the controller, else v1. The error says what was found.
    pub fn find(proc_root: &Path, limit: Limit) -> Result<Self, CgroupError> {
        let controller = limit.controller();
        let mounts = read_mounts(proc_root)?;
        let mut obstacles = Vec::new();
        for mount in mounts.iter().filter(|m| m.fs_type == "cgroup2") {
            match v2_obstacle(&mount.dir, controller) {
                None => return Ok(Self::at(CgroupVersion::V2, &mount.dir)),
                Some(obstacle) => obstacles.push(format!("cgroup v2: {obstacle}")),
            }
        }
        let v1 = mounts
            .iter()
            .find(|m| m.fs_type == "cgroup" && m.options.split(',').any(|o| o == controller));
        match v1 {
            Some(mount) => Ok(Self::at(CgroupVersion::V1, &mount.dir)),
            None => {
                obstacles.push(format!(
                    "cgroup v1: no hierarchy with the {controller} controller is mounted"
                ));
                Err(CgroupError::NoController {
                    controller,
                    option: limit.option(),
                    found: obstacles.join("; "),
                })
            }
        }
    }

    fn at(version: CgroupVersion, parent: &Path) -> Self {
        Self {
            version,
            parent: parent.to_path_buf(),
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
}
