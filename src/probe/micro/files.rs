//! The file-system and VM operations, in the probe's private directory:
//! creating and deleting a file of a given size (LMbench's lat_fs, one file
//! at a time), mapping a cached file and reading it at a stride
//! (lat_mmap), and the first touch of a page of a fresh mapping, or as
//! lat_pagefault gives it (`--micro-mode lmbench`), the first touch of every
//! page of a fresh mapping over its pages. Each removes its file when it is
//! dropped.

use super::ops::{OpError, Operation, Timed};
use crate::measure::clock::now_ns;
use crate::sim::micro::MicroMode;
use memmap2::{Mmap as Mapping, MmapOptions};
use std::fs::File;
use std::hint::black_box;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Bytes of the files `mmap` and `fault` map.
const MAPPED_BYTES: usize = 1 << 20;

/// lat_mmap reads one byte every 16 KiB of the mapping.
const MMAP_STRIDE: usize = 16 << 10;

/// The page size assumed where the system does not say.
const FALLBACK_PAGE_BYTES: usize = 4 << 10;

/// Pages apart of two pages read one after the other by lat_pagefault's
/// way: odd, so that it visits every page of a power-of-two mapping once,
/// scattered as LMbench's random order.
const FAULT_PAGE_STEP: usize = 97;

/// A file of `bytes` at `path`, made (or made again) with `data`.
struct SizedFile {
    path: PathBuf,
    data: Vec<u8>,
}

impl SizedFile {
    fn new(dir: &Path, name: &str, bytes: usize) -> Self {
        Self {
            path: dir.join(name),
            data: vec![0x5a; bytes],
        }
    }

    /// Creates the file, writes its data and closes it.
    fn write(&self) -> Result<(), OpError> {
        let mut file = File::create(&self.path).map_err(OpError::of("cannot create a file"))?;
        file.write_all(&self.data)
            .map_err(OpError::of("cannot write a file"))
    }

    fn remove(&self) -> Result<(), OpError> {
        std::fs::remove_file(&self.path).map_err(OpError::of("cannot delete a file"))
    }
}

impl Drop for SizedFile {
    fn drop(&mut self) {
        // Absent already when the last instance removed it.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Create, write and close a file (timed); remove it (untimed).
pub struct Create(SizedFile);

impl Create {
    /// Of `bytes`, called `name` in `dir`.
    pub fn new(dir: &Path, name: &str, bytes: usize) -> Self {
        Self(SizedFile::new(dir, name, bytes))
    }
}

impl Operation for Create {
    fn run(&mut self) -> Result<(), OpError> {
        self.0.write()
    }

    fn tidy(&mut self) -> Result<(), OpError> {
        self.0.remove()
    }
}

/// Make a file (untimed); unlink it (timed).
pub struct Delete(SizedFile);

impl Delete {
    /// Of `bytes`, called `name` in `dir`.
    pub fn new(dir: &Path, name: &str, bytes: usize) -> Self {
        Self(SizedFile::new(dir, name, bytes))
    }
}

impl Operation for Delete {
    fn prepare(&mut self) -> Result<(), OpError> {
        self.0.write()
    }

    fn run(&mut self) -> Result<(), OpError> {
        self.0.remove()
    }
}

/// A file of [`MAPPED_BYTES`], written once (so its pages are cached) and
/// kept open.
struct MappedFile {
    file: File,
    _written: SizedFile,
}

impl MappedFile {
    fn new(dir: &Path, name: &str) -> Result<Self, OpError> {
        let written = SizedFile::new(dir, name, MAPPED_BYTES);
        written.write()?;
        let file = File::open(&written.path).map_err(OpError::of("cannot open a file"))?;
        Ok(Self {
            file,
            _written: written,
        })
    }

    /// A new read-only shared mapping of the whole file.
    fn map(&self) -> Result<Mapping, OpError> {
        // SAFETY: the file is private to the probe and nobody changes it
        // while it is mapped.
        unsafe { MmapOptions::new().map(&self.file) }.map_err(OpError::of("cannot map a file"))
    }
}

/// Map the file, read a byte every 16 KiB, unmap (all timed).
pub struct Mmap(MappedFile);

impl Mmap {
    /// Writes its file in `dir`.
    pub fn new(dir: &Path) -> Result<Self, OpError> {
        Ok(Self(MappedFile::new(dir, "mmap")?))
    }
}

impl Operation for Mmap {
    fn run(&mut self) -> Result<(), OpError> {
        let mapping = self.0.map()?;
        let sum = mapping
            .iter()
            .step_by(MMAP_STRIDE)
            .fold(0_u64, |sum, &b| sum + u64::from(b));
        black_box(sum);
        Ok(())
    }
}

/// Map the file (untimed), read a byte of the page in its middle (timed:
/// one minor fault, the page being cached), unmap (untimed); in LMbench's
/// way, read a byte of every page, scattered, and count a fault per page.
pub struct Fault {
    file: MappedFile,
    mapping: Option<Mapping>,
    /// The offsets read, in order.
    offsets: Vec<usize>,
}

impl Fault {
    /// Writes its file in `dir`, for `mode`.
    pub fn new(dir: &Path, mode: MicroMode) -> Result<Self, OpError> {
        Ok(Self {
            file: MappedFile::new(dir, "fault")?,
            mapping: None,
            offsets: fault_offsets(mode, page_bytes()),
        })
    }
}

/// The system's page size.
fn page_bytes() -> usize {
    match nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE) {
        Ok(Some(bytes)) if bytes > 0 => bytes as usize,
        _ => FALLBACK_PAGE_BYTES,
    }
}

/// The offsets a fault instance reads in a mapping of pages of
/// `page_bytes`: the middle page's, or every page's, scattered.
fn fault_offsets(mode: MicroMode, page_bytes: usize) -> Vec<usize> {
    match mode {
        MicroMode::Paced => vec![MAPPED_BYTES / 2],
        MicroMode::Lmbench => {
            let pages = MAPPED_BYTES / page_bytes;
            (0..pages)
                .map(|k| (k * FAULT_PAGE_STEP) % pages * page_bytes)
                .collect()
        }
    }
}

impl Operation for Fault {
    fn prepare(&mut self) -> Result<(), OpError> {
        self.mapping = Some(self.file.map()?);
        Ok(())
    }

    fn run(&mut self) -> Result<(), OpError> {
        if let Some(mapping) = &self.mapping {
            for &offset in &self.offsets {
                black_box(mapping[offset]);
            }
        }
        Ok(())
    }

    /// A fault per page read.
    fn timed(&mut self) -> Result<Timed, OpError> {
        let started_ns = now_ns();
        self.run()?;
        Ok(Timed {
            ops: self.offsets.len() as u64,
            ..Timed::one(now_ns() - started_ns)
        })
    }

    fn tidy(&mut self) -> Result<(), OpError> {
        self.mapping = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lmbench_faults_read_every_page_once_scattered_paced_one() {
        assert_eq!(fault_offsets(MicroMode::Paced, 4096), [MAPPED_BYTES / 2]);
        for page_bytes in [4096, 16384, 65536] {
            let offsets = fault_offsets(MicroMode::Lmbench, page_bytes);
            let mut pages: Vec<usize> = offsets.iter().map(|o| o / page_bytes).collect();
            assert_eq!(
                offsets[1] / page_bytes,
                FAULT_PAGE_STEP % (MAPPED_BYTES / page_bytes)
            );
            pages.sort_unstable();
            let all: Vec<usize> = (0..MAPPED_BYTES / page_bytes).collect();
            assert_eq!(pages, all, "{page_bytes}");
        }
    }
}
