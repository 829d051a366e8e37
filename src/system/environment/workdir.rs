//! The run's work directory: where it is, the file system and device it is
//! on, that device's I/O scheduler, and (from the same mount table) which
//! cgroup hierarchy is mounted.

use super::reader::Reader;
use super::Environment;
use crate::system::mounts;
use std::path::Path;

/// Fills the work directory and cgroup fields of `env`.
pub(super) fn read_workdir(r: &mut Reader, env: &mut Environment, workdir: &Path) {
    let dir = std::fs::canonicalize(workdir).unwrap_or_else(|_| workdir.to_path_buf());
    env.workdir = Some(dir.display().to_string());
    let all = r.keep(mounts::read_mountinfo(&r.roots.proc_root).map(Some));
    let Some(all) = all else { return };
    env.cgroup = mounts::cgroup_version(&all).map(str::to_string);
    let Some(mount) = mounts::mount_of(&all, &dir) else {
        return;
    };
    env.workdir_fs = Some(mount.fs_type.clone());
    env.workdir_device = Some(mount.source.clone());
    env.io_scheduler = r.keep(mounts::io_scheduler(
        &r.roots.sys_root,
        &mount.device_numbers,
    ));
}
