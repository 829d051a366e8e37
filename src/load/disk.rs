//! What the disk loads share: their files, made unnamed in the scenario's
//! directory (the kernel frees them when the process ends, however it ends);
//! buffers of incompressible bytes aligned for `O_DIRECT` (so a compressing
//! file system such as ZFS or btrfs cannot shrink the load to nothing); the
//! walk through a file from start to end, over and over; and the page-cache
//! and write-back controls the loads need.

use super::draws::Draws;
use super::LoadError;
use nix::errno::Errno;
use nix::fcntl::{fcntl, posix_fadvise, FcntlArg, OFlag, PosixFadviseAdvice};
use std::fs::File;
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::FileExt as _;
use std::path::Path;

/// Alignment of buffers, enough for `O_DIRECT` on devices whose logical
/// blocks are up to 4 KiB (every common one).
const ALIGN: usize = 4096;

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
    let flags = fcntl(file, FcntlArg::F_GETFL).map_err(LoadError::sys("fcntl(F_GETFL)"))?;
    let flags = OFlag::from_bits_retain(flags) | OFlag::O_DIRECT;
    match fcntl(file, FcntlArg::F_SETFL(flags)) {
        Ok(_) => Ok(true),
        Err(Errno::EINVAL) => Ok(false),
        Err(errno) => Err(LoadError::Sys {
            what: "cannot set O_DIRECT".to_string(),
            errno,
        }),
    }
}

/// Drops `file`'s clean pages from the page cache, so the next read of
/// them comes from the device (dirty pages stay: write them out first).
pub fn drop_cached_pages(file: &File) -> Result<(), LoadError> {
    posix_fadvise(file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED)
        .map_err(LoadError::sys("posix_fadvise(DONTNEED)"))
}

/// A buffer of `len` incompressible bytes that starts on an [`ALIGN`]
/// boundary, as `O_DIRECT` wants. (A `Vec` with room to spare, used from
/// its first aligned byte: no unsafe allocation needed.)
pub struct AlignedBuf {
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    /// `len` pseudo-random bytes.
    pub fn incompressible(len: usize) -> Self {
        let mut bytes = vec![0; len + ALIGN];
        let start = bytes.as_ptr().align_offset(ALIGN);
        fill_incompressible(&mut bytes[start..start + len]);
        Self { bytes, start, len }
    }

    /// The buffer's bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[self.start..self.start + self.len]
    }

    /// The buffer's bytes, to read into.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.bytes[self.start..self.start + self.len]
    }
}

/// Fills `bytes` with pseudo-random draws: cheap, and not compressible.
pub fn fill_incompressible(bytes: &mut [u8]) {
    let mut draws = Draws::new(0);
    for chunk in bytes.chunks_mut(8) {
        chunk.copy_from_slice(&draws.next_u64().to_le_bytes()[..chunk.len()]);
    }
}

/// Fills `file` with `size` bytes, copies of `buf`, written out to the
/// device and dropped from the page cache, so that even the first buffered
/// read of it comes from the device.
pub fn fill_on_device(file: &File, buf: &AlignedBuf, size: u64) -> Result<(), LoadError> {
    let chunk = buf.as_slice().len().max(1);
    for offset in (0..size).step_by(chunk) {
        let len = (size - offset).min(chunk as u64) as usize;
        file.write_all_at(&buf.as_slice()[..len], offset)
            .map_err(LoadError::io("cannot make its file"))?;
    }
    file.sync_data()
        .map_err(LoadError::io("cannot write its file out (fdatasync)"))?;
    drop_cached_pages(file)
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
    fn buffers_are_aligned_and_incompressible() {
        for len in [1, 4096, 1 << 20] {
            let buf = AlignedBuf::incompressible(len);
            assert_eq!(buf.as_slice().len(), len);
            assert_eq!(buf.as_slice().as_ptr() as usize % ALIGN, 0);
        }
        let buf = AlignedBuf::incompressible(1 << 16);
        let mut counts = [0usize; 256];
        buf.as_slice().iter().for_each(|&b| counts[b as usize] += 1);
        // Every byte value about equally often: nothing for a compressor.
        assert!(
            counts.iter().all(|&c| (128..=384).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn a_file_that_cannot_bypass_the_cache_says_so() {
        let file = File::open("/proc/self/status").unwrap();
        assert!(matches!(bypass_cache(&file), Ok(false)));
    }

    #[test]
    fn mb_are_decimal() {
        assert_eq!(mb(1_500_000), 1.5);
    }
}
