//! The loads' cgroups: one per hierarchy their limits need (cgroup v2 holds
//! every controller in one hierarchy, v1 has one per controller), each made
//! with its limits and removed when dropped.

use super::hierarchy::Controller;
use super::{io_error, procs_file, remove, CgroupError, CgroupVersion, Limit};
use std::path::{Path, PathBuf};

/// A cgroup to make: where, in which version, with which limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    path: PathBuf,
    version: CgroupVersion,
    limits: Vec<Limit>,
}

/// The cgroups called `name` that `limits` need, in the hierarchies mounted
/// according to `<proc_root>/self/mounts`: limits whose controllers share a
/// hierarchy share a cgroup. Nothing is made yet.
pub fn plan(proc_root: &Path, name: &str, limits: &[Limit]) -> Result<Vec<Plan>, CgroupError> {
    let mut plans: Vec<Plan> = Vec::new();
    for &limit in limits {
        let controller = Controller::find(proc_root, limit)?;
        let path = controller.path_of(name);
        match plans.iter_mut().find(|plan| plan.path == path) {
            Some(plan) => plan.limits.push(limit),
            None => plans.push(Plan {
                path,
                version: controller.version(),
                limits: vec![limit],
            }),
        }
    }
    Ok(plans)
}

impl Plan {
    /// Where the cgroup goes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The cgroup version of its hierarchy.
    pub fn version(&self) -> CgroupVersion {
        self.version
    }

    /// The limits it sets.
    pub fn limits(&self) -> &[Limit] {
        &self.limits
    }

    /// Makes the cgroup and sets its limits.
    pub fn create(self) -> Result<Cgroup, CgroupError> {
        std::fs::create_dir(&self.path).map_err(io_error("make the cgroup", &self.path))?;
        // From here on, dropping `cgroup` removes the directory.
        let cgroup = Cgroup { path: self.path };
        for limit in self.limits {
            let (file, value) = limit.file_and_value(self.version);
            let path = cgroup.path.join(file);
            std::fs::write(&path, value).map_err(io_error("write", &path))?;
        }
        Ok(cgroup)
    }
}

#[cfg(test)]
impl Plan {
    /// A plan of a cgroup at `path`, for the tests of code that reads plans.
    pub fn for_tests(path: &str, version: CgroupVersion, limits: &[Limit]) -> Self {
        Self {
            path: PathBuf::from(path),
            version,
            limits: limits.to_vec(),
        }
    }
}

/// A cgroup that exists for as long as this value lives.
#[derive(Debug)]
pub struct Cgroup {
    path: PathBuf,
}

impl Cgroup {
    /// The file a process writes its pid into to join the cgroup.
    pub fn procs_file(&self) -> PathBuf {
        procs_file(&self.path)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if let Err(e) = remove(&self.path) {
            say!("warning: {e}");
        }
    }
}
