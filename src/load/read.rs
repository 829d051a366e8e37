//! `read`: one process reading a file from start to end in 1 MiB reads, over
//! and over, from the device rather than the page cache. (interbench's Read
//! load re-read a file the page cache held — 41 GB read in 10 s, 14 MB of it
//! from the disk — which loads the CPU and memory, not the disk.)
//!
//! The file, `--file-size` but at most 1 GiB so that making it takes seconds
//! (the worker makes it before reporting ready), is written when the load is
//! built. Reads bypass the page cache with `O_DIRECT`; where the file system
//! cannot do that (tmpfs before Linux 6.6), they are ordinary reads and the
//! file's pages are dropped from the cache after each pass, so each pass
//! still comes from the device (on a file system that has one).

use super::disk::{bypass_cache, drop_cached_pages, fill_on_device, mb, unnamed_file, Passes};
use super::{Load, LoadContext, LoadDef, LoadError};
use crate::sim::uncached::AlignedBuf;
use crate::sim::WorkParams;
use std::fs::File;
use std::os::unix::fs::FileExt as _;

/// Bytes of each read (and of each write that makes the file).
pub const CHUNK_BYTES: usize = 1 << 20;
/// Largest file read, so that making it stays quick (about 3 s at 400 MB/s).
const MAX_FILE_BYTES: u64 = 1 << 30;

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "read",
    summary:
        "reads a file of --file-size (at most 1 GiB) from the device, bypassing the page cache",
    method: 1,
    unit: "MB",
    takes_arg: false,
    processes: |_| 1,
    disk_bytes: file_bytes,
    check: super::no_check,
    build: Reader::boxed,
    default: super::always,
    uses: &[],
    job_cache: None,
};

/// Size of the file read: `--file-size` capped at [`MAX_FILE_BYTES`], in
/// whole chunks (at least one), so that every `O_DIRECT` read is aligned.
pub fn file_bytes(params: &WorkParams) -> u64 {
    let chunk = CHUNK_BYTES as u64;
    (params.file_bytes.min(MAX_FILE_BYTES) / chunk * chunk).max(chunk)
}

struct Reader {
    file: File,
    buf: AlignedBuf,
    passes: Passes,
    /// Reads bypass the page cache (`O_DIRECT`).
    direct: bool,
}

impl Reader {
    fn boxed(context: &LoadContext) -> Result<Box<dyn Load>, LoadError> {
        let file = unnamed_file(&context.dir)?;
        let direct = bypass_cache(&file)?;
        let buf = AlignedBuf::incompressible(CHUNK_BYTES);
        let size = file_bytes(&context.params);
        fill_on_device(&file, &buf, size)?;
        Ok(Box::new(Self {
            file,
            buf,
            passes: Passes::new(size),
            direct,
        }))
    }
}

impl Load for Reader {
    fn step(&mut self) -> Result<f64, LoadError> {
        let chunk = self.passes.next(CHUNK_BYTES);
        self.file
            .read_exact_at(&mut self.buf.as_mut_slice()[..chunk.len], chunk.offset)
            .map_err(LoadError::io("cannot read its file"))?;
        if chunk.ends_pass && !self.direct {
            drop_cached_pages(&self.file)?;
        }
        Ok(mb(chunk.len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(file_bytes: u64) -> WorkParams {
        WorkParams {
            file_bytes,
            ..WorkParams::for_tests()
        }
    }

    #[test]
    fn the_file_is_whole_chunks_and_at_most_a_gib() {
        assert_eq!(file_bytes(&params(64 << 20)), 64 << 20);
        assert_eq!(file_bytes(&params((3 << 20) + 5)), 3 << 20);
        assert_eq!(file_bytes(&params(1000)), 1 << 20);
        assert_eq!(file_bytes(&params(24 << 30)), 1 << 30);
    }
}
