//! How much dirty page cache the kernel lets writers build up before it
//! makes them wait for the device (`vm.dirty_bytes`, else `vm.dirty_ratio`
//! of the memory available). A write load whose whole file fits under it
//! can be absorbed by memory: it then measures memory, not the disk.

use super::read_optional;
use std::path::Path;

/// The dirty-page limit in bytes: `dirty_bytes` when set (non-zero), else
/// `dirty_ratio` % of `available_bytes`; `None` when neither is known.
pub fn dirty_limit(
    dirty_bytes: Option<u64>,
    dirty_ratio: Option<u64>,
    available_bytes: u64,
) -> Option<u64> {
    match dirty_bytes.filter(|b| *b > 0) {
        Some(bytes) => Some(bytes),
        None => Some(available_bytes / 100 * dirty_ratio?),
    }
}

/// The dirty-page limit of the kernel below `proc_root`, for a machine with
/// `available_bytes` of memory available.
pub fn read_dirty_limit(proc_root: &Path, available_bytes: u64) -> Option<u64> {
    let number = |name: &str| -> Option<u64> {
        let text = read_optional(&proc_root.join("sys/vm").join(name)).ok()??;
        text.trim().parse().ok()
    };
    dirty_limit(
        number("dirty_bytes"),
        number("dirty_ratio"),
        available_bytes,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_win_over_the_ratio_when_set() {
        assert_eq!(
            dirty_limit(Some(1 << 30), Some(20), 10 << 30),
            Some(1 << 30)
        );
        assert_eq!(dirty_limit(Some(0), Some(20), 100 << 20), Some(20 << 20));
        assert_eq!(dirty_limit(None, None, 100 << 20), None);
    }

    #[test]
    fn the_limit_is_read_below_the_proc_root() {
        let proc = tempfile::tempdir().unwrap();
        let vm = proc.path().join("sys/vm");
        std::fs::create_dir_all(&vm).unwrap();
        std::fs::write(vm.join("dirty_bytes"), "0\n").unwrap();
        std::fs::write(vm.join("dirty_ratio"), "20\n").unwrap();
        assert_eq!(read_dirty_limit(proc.path(), 1000 << 20), Some(200 << 20));
        assert_eq!(read_dirty_limit(Path::new("/nonexistent"), 1 << 30), None);
    }
}
