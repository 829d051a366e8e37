//! The file-system and VM operations, in the probe's private directory:
//! creating and deleting a file of a given size (LMbench's lat_fs, one file
//! at a time), mapping a cached file and reading it at a stride
//! (lat_mmap), and the first touch of a page of a fresh mapping
//! (lat_pagefault). Each removes its file when it is dropped.

use super::ops::{OpError, Operation};
use memmap2::{Mmap as Mapping, MmapOptions};
use std::fs::File;
use std::hint::black_box;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Bytes of the files `mmap` and `fault` map.
const MAPPED_BYTES: usize = 1 << 20;

/// lat_mmap reads one byte every 16 KiB of the mapping.
const MMAP_STRIDE: usize = 16 << 10;

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
/// one minor fault, the page being cached), unmap (untimed).
pub struct Fault {
    file: MappedFile,
    mapping: Option<Mapping>,
}

impl Fault {
    /// Writes its file in `dir`.
    pub fn new(dir: &Path) -> Result<Self, OpError> {
        Ok(Self {
            file: MappedFile::new(dir, "fault")?,
            mapping: None,
        })
    }
}

impl Operation for Fault {
    fn prepare(&mut self) -> Result<(), OpError> {
        self.mapping = Some(self.file.map()?);
        Ok(())
    }

    fn run(&mut self) -> Result<(), OpError> {
        if let Some(mapping) = &self.mapping {
            black_box(mapping[MAPPED_BYTES / 2]);
        }
        Ok(())
    }

    fn tidy(&mut self) -> Result<(), OpError> {
        self.mapping = None;
        Ok(())
    }
}
