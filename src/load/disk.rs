//! What the disk loads share: their files, made unnamed in the scenario's
//! directory (the kernel frees them when the process ends, however it ends);
//! the walk through a file from start to end, over and over; and the
//! write-back controls the loads need. Buffers for `O_DIRECT` and the
//! page-cache controls are `sim::uncached`'s (the `fileio` probe uses them
//! too), here with the loads' errors.

use super::LoadError;
use crate::sim::uncached::{self, AlignedBuf};
use nix::errno::Errno;
use std::fs::File;
use std::os::fd::AsRawFd as _;
use std::path::Path;

/// Bytes in a MB, the unit the disk loads report (as the device rates do).
const BYTES_PER_MB: f64 = 1e6;

/// `bytes` in MB.
pub fn mb(bytes: usize) -> f64 {
    bytes as f64 / BYTES_PER_MB
}

/// A new file in `dir` that has no name: nothing to remove afterwards, and
/// its space is freed when the process ends, even by SIGKILL.
pub fn unnamed_file(dir: &Path) -> Result<File, LoadError> {
    tempfile::tempfile_in(dir).map_err(LoadError::io(format!(
        "cannot make a file in {}",
        dir.display()
    )))
}

/// A new directory in `dir` for a load's files, named after the load
/// (`what`), removed with all it holds when dropped.
pub fn private_dir(dir: &Path, what: &str) -> Result<tempfile::TempDir, LoadError> {
    tempfile::Builder::new()
        .prefix(&format!("{what}-"))
        .tempdir_in(dir)
        .map_err(LoadError::io(format!(
            "cannot make a directory in {}",
            dir.display()
        )))
}

/// Makes reads and writes of `file` bypass the page cache (`O_DIRECT`).
/// Returns false when its file system cannot (tmpfs before Linux 6.6, some
/// FUSE file systems), which leaves the file as it was.
pub fn bypass_cache(file: &File) -> Result<bool, LoadError> {
    uncached::bypass_cache(file).map_err(LoadError::sys("cannot set O_DIRECT"))
}

/// Drops `file`'s clean pages from the page cache, so the next read of
/// them comes from the device (dirty pages stay: write them out first).
pub fn drop_cached_pages(file: &File) -> Result<(), LoadError> {
    uncached::drop_cached_range(file, 0, 0).map_err(LoadError::sys("posix_fadvise(DONTNEED)"))
}

/// Fills `file` with `size` bytes, copies of `buf`, written out to the
/// device and dropped from the page cache, so that even the first buffered
/// read of it comes from the device.
pub fn fill_on_device(file: &File, buf: &AlignedBuf, size: u64) -> Result<(), LoadError> {
    uncached::fill_on_device(file, buf, size).map_err(LoadError::io("cannot make its file"))
}

/// Starts writing `file`'s dirty pages out to the device, without waiting
/// for them (`sync_file_range`, which neither waits nor writes metadata:
/// the file is not made durable, its data only leaves memory).
pub fn start_write_back(file: &File) -> Result<(), LoadError> {
    sync_file_range(file, libc::SYNC_FILE_RANGE_WRITE).map_err(LoadError::sys(
        "cannot start writing a file out (sync_file_range)",
    ))
}

/// Writes `file`'s dirty pages out and waits until they are on the device
/// (data only, no metadata: cheaper than `fdatasync` on a new file, which
/// also commits the file system's journal).
pub fn wait_for_write_back(file: &File) -> Result<(), LoadError> {
    let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE
        | libc::SYNC_FILE_RANGE_WRITE
        | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    sync_file_range(file, flags)
        .map_err(LoadError::sys("cannot write a file out (sync_file_range)"))
}

/// `sync_file_range` over the whole of `file`.
fn sync_file_range(file: &File, flags: libc::c_uint) -> Result<(), Errno> {
    // SAFETY: a plain system call on a descriptor `file` keeps open; offset
    // 0 and length 0 mean the whole file.
    let result = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, flags) };
    Errno::result(result).map(drop)
}

/// One I/O of a pass through a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    pub offset: u64,
    pub len: usize,
    /// This chunk reaches the end of the file: the next starts at 0 again.
    pub ends_pass: bool,
}

/// Where the next I/O goes when a file is gone through from start to end,
/// over and over.
#[derive(Debug, Clone)]
pub struct Passes {
    file_bytes: u64,
    offset: u64,
}

impl Passes {
    /// Passes through a file of `file_bytes` (at least 1).
    pub fn new(file_bytes: u64) -> Self {
        Self {
            file_bytes: file_bytes.max(1),
            offset: 0,
        }
    }

    /// The next chunk of at most `max_len` bytes; the last of a pass is
    /// shorter when the file size is not a multiple of `max_len`.
    pub fn next(&mut self, max_len: usize) -> Chunk {
        let left = self.file_bytes - self.offset;
        let len = left.min(max_len as u64) as usize;
        let chunk = Chunk {
            offset: self.offset,
            len,
            ends_pass: len as u64 == left,
        };
        self.offset = if chunk.ends_pass {
            0
        } else {
            self.offset + len as u64
        };
        chunk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_wrap_at_the_end_with_a_short_last_chunk() {
        let mut passes = Passes::new(10);
        let chunks: Vec<(u64, usize, bool)> = (0..5)
            .map(|_| passes.next(4))
            .map(|c| (c.offset, c.len, c.ends_pass))
            .collect();
        assert_eq!(
            chunks,
            [
                (0, 4, false),
                (4, 4, false),
                (8, 2, true),
                (0, 4, false),
                (4, 4, false)
            ]
        );
    }

    #[test]
    fn a_file_smaller_than_a_chunk_is_one_chunk_per_pass() {
        let mut passes = Passes::new(3);
        for _ in 0..2 {
            assert_eq!(
                passes.next(8),
                Chunk {
                    offset: 0,
                    len: 3,
                    ends_pass: true
                }
            );
        }
    }

    #[test]
    fn mb_are_decimal() {
        assert_eq!(mb(1_500_000), 1.5);
    }
}
