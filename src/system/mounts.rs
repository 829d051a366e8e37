//! Where a directory lives: its mount from `<proc_root>/self/mountinfo`
//! (file system type, source and block device numbers), the I/O scheduler of
//! that block device from `<sys_root>/dev/block/MAJ:MIN`, and which cgroup
//! versions are mounted.

use super::procfs::ProcError;
use super::{bracketed, read_optional};
use std::path::{Path, PathBuf};

/// One line of mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountInfo {
    /// `MAJOR:MINOR` of the mounted device.
    pub device_numbers: String,
    /// Where it is mounted.
    pub mount_point: PathBuf,
    pub fs_type: String,
    /// What was mounted (`/dev/vda`, `tmpfs`, ...).
    pub source: String,
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut rest = field;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let code = rest
            .get(i + 1..i + 4)
            .and_then(|o| u8::from_str_radix(o, 8).ok());
        match code {
            Some(byte) => {
                out.push(byte as char);
                rest = &rest[i + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out + rest
}

/// Reads `<proc_root>/self/mountinfo`.
pub fn read_mountinfo(proc_root: &Path) -> Result<Vec<MountInfo>, ProcError> {
    let path = proc_root.join("self/mountinfo");
    let text = std::fs::read_to_string(&path).map_err(|error| ProcError::Read {
        path: path.clone(),
        error,
    })?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            parse_mountinfo_line(line).ok_or_else(|| ProcError::Parse {
                path: path.clone(),
                line: line.to_string(),
            })
        })
        .collect()
}

fn parse_mountinfo_line(line: &str) -> Option<MountInfo> {
    let (before, after) = line.split_once(" - ")?;
    let fields: Vec<&str> = before.split_whitespace().collect();
    let mut tail = after.split_whitespace();
    let device_numbers = fields.get(2)?;
    device_numbers.split_once(':')?;
    Some(MountInfo {
        device_numbers: device_numbers.to_string(),
        mount_point: PathBuf::from(unescape(fields.get(4)?)),
        fs_type: tail.next()?.to_string(),
        source: unescape(tail.next()?),
    })
}

/// The mount holding `path` (already made absolute and free of symlinks):
/// the last-mounted of those with the longest mount point above it.
pub fn mount_of<'a>(mounts: &'a [MountInfo], path: &Path) -> Option<&'a MountInfo> {
    mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| path.starts_with(&m.mount_point))
        .max_by_key(|(i, m)| (m.mount_point.components().count(), *i))
        .map(|(_, m)| m)
}

/// The active I/O scheduler of the block device `MAJOR:MINOR`; for a
/// partition, that of its disk. `Ok(None)` when it is not a block device
/// (tmpfs, overlay) or has no queue.
pub fn io_scheduler(sys_root: &Path, device_numbers: &str) -> Result<Option<String>, ProcError> {
    let Some(file) = io_scheduler_file(sys_root, device_numbers) else {
        return Ok(None);
    };
    let text = read_optional(&file)?.unwrap_or_default();
    Ok(bracketed(&text).map(str::to_string))
}

/// The file that chooses the I/O scheduler of the block device
/// `MAJOR:MINOR` (its disk's, for a partition); `None` when it is not a
/// block device or has no queue.
pub fn io_scheduler_file(sys_root: &Path, device_numbers: &str) -> Option<std::path::PathBuf> {
    let dev = sys_root.join("dev/block").join(device_numbers);
    // A partition has no queue of its own; `..` of the sysfs link is its disk.
    [dev.join("queue"), dev.join("../queue")]
        .into_iter()
        .map(|queue| queue.join("scheduler"))
        .find(|file| file.is_file())
}

/// Which cgroup hierarchies are mounted: `v2` (cgroup2 only), `v1` (v1
/// only), `hybrid` (both), or `None` (neither).
pub fn cgroup_version(mounts: &[MountInfo]) -> Option<&'static str> {
    let has = |t: &str| mounts.iter().any(|m| m.fs_type == t);
    match (has("cgroup"), has("cgroup2")) {
        (true, true) => Some("hybrid"),
        (true, false) => Some("v1"),
        (false, true) => Some("v2"),
        (false, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine's /proc/self/mountinfo, shortened.
    pub const MOUNTINFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
23 27 0:22 / /sys rw,relatime - sysfs sysfs rw
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683656k
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
50 27 0:40 / /mnt/my\\040disk rw shared:1 - ext4 /dev/vdb1 rw
";

    fn proc_with_mountinfo(text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("self")).unwrap();
        std::fs::write(dir.path().join("self/mountinfo"), text).unwrap();
        dir
    }

    #[test]
    fn finds_the_mount_of_a_directory() {
        let dir = proc_with_mountinfo(MOUNTINFO);
        let mounts = read_mountinfo(dir.path()).unwrap();
        let root = mount_of(&mounts, Path::new("/work/wt-env")).unwrap();
        assert_eq!(
            (root.fs_type.as_str(), root.source.as_str()),
            ("ext4", "/dev/vda")
        );
        assert_eq!(root.device_numbers, "254:0");
        let shm = mount_of(&mounts, Path::new("/dev/shm/x")).unwrap();
        assert_eq!(shm.fs_type, "tmpfs");
        let spaced = mount_of(&mounts, Path::new("/mnt/my disk/a")).unwrap();
        assert_eq!(spaced.source, "/dev/vdb1");
        assert_eq!(cgroup_version(&mounts), Some("hybrid"));
        assert_eq!(cgroup_version(&mounts[..4]), None);
    }

    #[test]
    fn malformed_or_missing_mountinfo_is_an_error() {
        let dir = proc_with_mountinfo("22 27 0:21 / /proc rw\n");
        let err = read_mountinfo(dir.path()).unwrap_err().to_string();
        assert!(err.contains("/proc rw"), "{err}");
        let empty = tempfile::tempdir().unwrap();
        assert!(read_mountinfo(empty.path()).is_err());
    }

    #[test]
    fn io_scheduler_of_disk_partition_and_non_block_device() {
        let sys = tempfile::tempdir().unwrap();
        let disk = sys.path().join("dev/block/254:0");
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        std::fs::write(
            disk.join("queue/scheduler"),
            "none [mq-deadline] kyber bfq \n",
        )
        .unwrap();
        // A partition below its disk, as the sysfs link resolves.
        std::fs::create_dir_all(disk.join("part/queue-less")).unwrap();
        assert_eq!(
            io_scheduler(sys.path(), "254:0").unwrap().as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(
            io_scheduler(sys.path(), "254:0/part").unwrap().as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(io_scheduler(sys.path(), "0:23").unwrap(), None);
    }
}
