//! A full disk to write on (root: a tiny tmpfs), for the tests of what a
//! write that fails for want of space does.

use super::{require_root, skip};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A full tmpfs (its one page filled: a file can still be made there, not
/// written), unmounted when dropped.
pub struct FullDisk(pub PathBuf);

impl FullDisk {
    /// Mounts it at `dir/full`; `None` (said as a skip) when it cannot be,
    /// as a plain user too.
    pub fn mount(dir: &Path) -> Option<Self> {
        if !require_root("mounting a full tmpfs") {
            return None;
        }
        let full = dir.join("full");
        std::fs::create_dir(&full).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=4k", "tmpfs"])
            .arg(&full)
            .status();
        if !mounted.is_ok_and(|s| s.success()) {
            skip("cannot mount a tmpfs");
            return None;
        }
        let disk = Self(full);
        std::fs::write(disk.0.join("filler"), [0u8; 4096]).unwrap();
        Some(disk)
    }

    /// The one line of `said` about a trace, which says the disk was full.
    pub fn the_one_line_about_the_trace(said: &str) -> &str {
        let lines: Vec<&str> = said.lines().filter(|l| l.contains("trace")).collect();
        assert_eq!(lines.len(), 1, "{said}");
        assert!(lines[0].contains("No space left"), "{said}");
        lines[0]
    }
}

impl Drop for FullDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}
