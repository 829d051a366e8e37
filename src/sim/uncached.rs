//! Files read and written around the page cache, which the disk loads and
//! the `fileio` probe share: buffers of incompressible bytes aligned for
//! `O_DIRECT` (so a compressing file system such as ZFS or btrfs cannot
//! shrink the work to nothing), switching a file to `O_DIRECT`, dropping
//! its pages from the cache where `O_DIRECT` is refused, and filling a file
//! on the device. Errors are the system's; callers say what they were doing.

use super::draws::Draws;
use nix::errno::Errno;
use nix::fcntl::{fcntl, posix_fadvise, FcntlArg, OFlag, PosixFadviseAdvice};
use std::fs::File;
use std::os::unix::fs::FileExt as _;

/// Alignment of buffers, enough for `O_DIRECT` on devices whose logical
/// blocks are up to 4 KiB (every common one).
pub const ALIGN: usize = 4096;

/// Makes reads and writes of `file` bypass the page cache (`O_DIRECT`).
/// Returns false when its file system cannot (tmpfs before Linux 6.6, some
/// FUSE file systems), which leaves the file as it was.
pub fn bypass_cache(file: &File) -> Result<bool, Errno> {
    let flags = fcntl(file, FcntlArg::F_GETFL)?;
    let flags = OFlag::from_bits_retain(flags) | OFlag::O_DIRECT;
    match fcntl(file, FcntlArg::F_SETFL(flags)) {
        Ok(_) => Ok(true),
        Err(Errno::EINVAL) => Ok(false),
        Err(errno) => Err(errno),
    }
}

/// Drops the clean pages of `len` bytes of `file` from `offset` (0: to the
/// end) from the page cache, so the next read of them comes from the device
/// (dirty pages stay: write them out first).
pub fn drop_cached_range(file: &File, offset: u64, len: u64) -> Result<(), Errno> {
    let (offset, len) = (offset as libc::off_t, len as libc::off_t);
    posix_fadvise(file, offset, len, PosixFadviseAdvice::POSIX_FADV_DONTNEED)
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
pub fn fill_on_device(file: &File, buf: &AlignedBuf, size: u64) -> std::io::Result<()> {
    let chunk = buf.as_slice().len().max(1);
    for offset in (0..size).step_by(chunk) {
        let len = (size - offset).min(chunk as u64) as usize;
        file.write_all_at(&buf.as_slice()[..len], offset)?;
    }
    file.sync_data()?;
    Ok(drop_cached_range(file, 0, 0)?)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(bypass_cache(&file), Ok(false));
    }
}
