//! The file-system and VM operations, in the probe's private directory:
//! creating and deleting files of a given size (LMbench's lat_fs: each a
//! new file, in a directory of at most 100, removed or made untimed),
//! mapping a cached file shared and writing it at a stride (lat_mmap), and
//! the first touch of a page of a fresh mapping, or as lat_pagefault gives
//! it (`--micro-mode lmbench`), the first touch of every page of a fresh
//! mapping over its pages. Each removes its files when it is dropped.

use super::ops::{OpError, Operation, Timed};
use crate::measure::clock::now_ns;
use crate::sim::micro::MicroMode;
use memmap2::{Mmap as Mapping, MmapMut, MmapOptions};
use std::fs::File;
use std::hint::black_box;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Bytes of the files `mmap` and `fault` map.
const MAPPED_BYTES: usize = 1 << 20;

/// lat_mmap writes one byte every 16 KiB ...
const MMAP_STRIDE: usize = 16 << 10;

/// ... of the first tenth of the mapping.
const MMAP_WRITTEN_BYTES: usize = MAPPED_BYTES / 10;

/// The page size assumed where the system does not say.
const FALLBACK_PAGE_BYTES: usize = 4 << 10;

/// Pages apart of two pages read one after the other by lat_pagefault's
/// way: odd, so that it visits every page of a power-of-two mapping once,
/// scattered as LMbench's random order.
const FAULT_PAGE_STEP: usize = 97;

/// Creates the file `path` (anew, or again), writes `data` and closes it:
/// lat_fs's `creat`, `write` of the whole size, `close`.
fn write_file(path: &Path, data: &[u8]) -> Result<(), OpError> {
    let mut file = File::create(path).map_err(OpError::of("cannot create a file"))?;
    file.write_all(data)
        .map_err(OpError::of("cannot write a file"))
}

/// Creates the file `path` and writes `data` to it, `page_bytes` a write.
fn write_in_pages(path: &Path, data: &[u8], page_bytes: usize) -> Result<(), OpError> {
    let mut file = File::create(path).map_err(OpError::of("cannot create a file"))?;
    data.chunks(page_bytes.max(1))
        .try_for_each(|page| file.write_all(page))
        .map_err(OpError::of("cannot write a file"))
}

fn remove_file(path: &Path) -> Result<(), OpError> {
    std::fs::remove_file(path).map_err(OpError::of("cannot delete a file"))
}

/// New files of one size in a directory of their own: each instance's
/// files have names never used before (a running number, as lat_fs names
/// its files), so that each create makes a new directory entry and inode
/// as lat_fs's do, never one of a file just removed.
struct NewFiles {
    dir: PathBuf,
    data: Vec<u8>,
    /// The number of the next new file.
    next: u64,
    /// The files made and not yet removed, oldest first.
    made: std::collections::VecDeque<PathBuf>,
}

impl NewFiles {
    /// Files of `bytes` in the directory `name` of `dir`, made here.
    fn new(dir: &Path, name: &str, bytes: usize) -> Result<Self, OpError> {
        let dir = dir.join(name);
        std::fs::create_dir_all(&dir).map_err(OpError::of("cannot make a directory"))?;
        Ok(Self {
            dir,
            data: vec![0x5a; bytes],
            next: 0,
            made: std::collections::VecDeque::new(),
        })
    }

    /// Makes the next new file.
    fn make(&mut self) -> Result<(), OpError> {
        let path = self.dir.join(self.next.to_string());
        self.next += 1;
        write_file(&path, &self.data)?;
        self.made.push_back(path);
        Ok(())
    }

    /// Removes the oldest file made.
    fn remove_oldest(&mut self) -> Result<(), OpError> {
        match self.made.pop_front() {
            Some(path) => remove_file(&path),
            None => Err(OpError {
                what: "cannot delete a file",
                error: std::io::Error::other("none was made for this instance"),
            }),
        }
    }

    /// Removes every file made.
    fn remove_all(&mut self) -> Result<(), OpError> {
        while !self.made.is_empty() {
            self.remove_oldest()?;
        }
        Ok(())
    }
}

impl Drop for NewFiles {
    fn drop(&mut self) {
        // Whatever a failed instance left, and the directory.
        for path in self.made.drain(..) {
            let _ = std::fs::remove_file(path);
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Create, write and close new files (timed); remove them (untimed).
pub struct Create(NewFiles);

impl Create {
    /// Of `bytes`, in the directory `name` of `dir`.
    pub fn new(dir: &Path, name: &str, bytes: usize) -> Result<Self, OpError> {
        Ok(Self(NewFiles::new(dir, name, bytes)?))
    }
}

impl Operation for Create {
    fn run(&mut self) -> Result<(), OpError> {
        self.0.make()
    }

    fn tidy(&mut self) -> Result<(), OpError> {
        self.0.remove_all()
    }
}

/// Make new files (untimed); unlink them (timed).
pub struct Delete(NewFiles);

impl Delete {
    /// Of `bytes`, in the directory `name` of `dir`.
    pub fn new(dir: &Path, name: &str, bytes: usize) -> Result<Self, OpError> {
        Ok(Self(NewFiles::new(dir, name, bytes)?))
    }
}

impl Operation for Delete {
    fn prepare(&mut self, n: u64) -> Result<(), OpError> {
        (0..n).try_for_each(|_| self.0.make())
    }

    fn run(&mut self) -> Result<(), OpError> {
        self.0.remove_oldest()
    }
}

/// A file of [`MAPPED_BYTES`], written once (so its pages are cached) and
/// kept open, read-write (lat_mmap's) or read-only (lat_pagefault's).
struct MappedFile {
    file: File,
    path: PathBuf,
}

impl MappedFile {
    /// Written a page at a time, so that the page cache holds it in pages
    /// as it holds a file written in small writes (LMbench's file in
    /// `bench/lmbench.sh`): written at once, it may be cached in large
    /// folios, of which one fault maps many pages and one write fault
    /// prepares all (LMbench's lat_mmap took 56 µs on a 1 MiB file written
    /// at once, 16 µs on one written a page at a time; lat_pagefault 0.08
    /// and 0.30 µs a page).
    fn new(dir: &Path, name: &str, writable: bool) -> Result<Self, OpError> {
        let path = dir.join(name);
        write_in_pages(&path, &vec![0x5a; MAPPED_BYTES], page_bytes())?;
        let file = File::options()
            .read(true)
            .write(writable)
            .open(&path)
            .map_err(OpError::of("cannot open a file"));
        match file {
            Ok(file) => Ok(Self { file, path }),
            Err(error) => {
                let _ = std::fs::remove_file(&path);
                Err(error)
            }
        }
    }

    /// A new read-only shared mapping of the whole file.
    fn map(&self) -> Result<Mapping, OpError> {
        // SAFETY: the file is private to the probe and nobody changes it
        // while it is mapped.
        unsafe { MmapOptions::new().map(&self.file) }.map_err(OpError::of("cannot map a file"))
    }

    /// A new read-write shared mapping of the whole file.
    fn map_mut(&self) -> Result<MmapMut, OpError> {
        // SAFETY: the file is private to the probe and only this mapping
        // writes it while it is mapped.
        unsafe { MmapOptions::new().map_mut(&self.file) }.map_err(OpError::of("cannot map a file"))
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// As lat_mmap: map the file shared, read-write, write a byte every 16 KiB
/// of its first tenth, unmap (all timed).
pub struct Mmap(MappedFile);

impl Mmap {
    /// Writes its file in `dir`.
    pub fn new(dir: &Path) -> Result<Self, OpError> {
        Ok(Self(MappedFile::new(dir, "mmap", true)?))
    }
}

impl Operation for Mmap {
    fn run(&mut self) -> Result<(), OpError> {
        let mut mapping = self.0.map_mut()?;
        for offset in (0..MMAP_WRITTEN_BYTES).step_by(MMAP_STRIDE) {
            // A volatile write, as lat_mmap's through its pointer: each
            // one must reach the page.
            // SAFETY: `offset` is inside the mapping, which is writable.
            unsafe { std::ptr::write_volatile(mapping.as_mut_ptr().add(offset), 0) };
        }
        Ok(())
    }
}

/// Map the file (untimed), read a byte of the page in its middle (timed:
/// one minor fault, the page being cached), unmap (untimed); in LMbench's
/// way, read a byte of every page, scattered, over as many fresh mappings
/// as the instance holds, and unmap them (timed too: lat_pagefault times
/// mapping, reading and unmapping, and subtracts mapping and unmapping
/// with nothing read, which leaves the teardown of the pages read), and
/// count a fault per page.
pub struct Fault {
    file: MappedFile,
    /// The instance's fresh mappings, and how many of them were read.
    mappings: Vec<Mapping>,
    read: usize,
    /// The offsets read in each mapping, in order.
    offsets: Vec<usize>,
    /// Whether the unmapping is timed (LMbench's way).
    unmap_timed: bool,
}

impl Fault {
    /// Writes its file in `dir`, for `mode`.
    pub fn new(dir: &Path, mode: MicroMode) -> Result<Self, OpError> {
        Ok(Self {
            file: MappedFile::new(dir, "fault", false)?,
            mappings: Vec::new(),
            read: 0,
            offsets: fault_offsets(mode, page_bytes()),
            unmap_timed: mode == MicroMode::Lmbench,
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
    fn prepare(&mut self, n: u64) -> Result<(), OpError> {
        self.mappings = (0..n).map(|_| self.file.map()).collect::<Result<_, _>>()?;
        self.read = 0;
        Ok(())
    }

    /// Reads the offsets of the next fresh mapping of the instance.
    fn run(&mut self) -> Result<(), OpError> {
        let Some(mapping) = self.mappings.get(self.read) else {
            return Err(OpError {
                what: "cannot read a fresh mapping",
                error: std::io::Error::other("none was left for this instance"),
            });
        };
        for &offset in &self.offsets {
            black_box(mapping[offset]);
        }
        self.read += 1;
        Ok(())
    }

    /// A fault per page read, of every mapping.
    fn timed(&mut self, n: u64) -> Result<Timed, OpError> {
        let started_ns = now_ns();
        for _ in 0..n {
            self.run()?;
        }
        if self.unmap_timed {
            self.mappings.clear();
        }
        Ok(Timed::of(
            now_ns() - started_ns,
            n * self.offsets.len() as u64,
        ))
    }

    fn tidy(&mut self) -> Result<(), OpError> {
        self.mappings.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the files in `dir`, sorted.
    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    /// As lat_fs: each create makes a new file, never one of a name just
    /// removed (the same name made and removed again cost ten times
    /// LMbench's create on this project's VM), and an instance's files
    /// are removed after it.
    #[test]
    fn creates_make_new_files_that_tidy_removes() {
        let dir = tempfile::tempdir().unwrap();
        let mut create = Create::new(dir.path(), "create1k", 1 << 10).unwrap();
        let files = dir.path().join("create1k");
        create.prepare(3).unwrap();
        assert_eq!(create.timed(3).unwrap().ops, 3);
        let first = names_in(&files);
        assert_eq!(first.len(), 3, "{first:?}");
        for name in &first {
            assert_eq!(std::fs::metadata(files.join(name)).unwrap().len(), 1 << 10);
        }
        create.tidy().unwrap();
        assert!(names_in(&files).is_empty());
        create.prepare(1).unwrap();
        create.timed(1).unwrap();
        let second = names_in(&files);
        assert_eq!(second.len(), 1);
        assert!(!first.contains(&second[0]), "{second:?} again");
        drop(create);
        assert!(names_in(dir.path()).is_empty(), "left behind");
    }

    #[test]
    fn deletes_remove_the_new_files_their_instance_made() {
        let dir = tempfile::tempdir().unwrap();
        let mut delete = Delete::new(dir.path(), "delete0", 0).unwrap();
        let files = dir.path().join("delete0");
        delete.prepare(4).unwrap();
        assert_eq!(names_in(&files).len(), 4);
        assert_eq!(delete.timed(4).unwrap().ops, 4);
        assert!(names_in(&files).is_empty());
        delete.tidy().unwrap();
        assert!(delete.run().is_err(), "nothing left to delete");
        delete.prepare(2).unwrap();
        drop(delete);
        assert!(names_in(dir.path()).is_empty(), "left behind");
    }

    /// As lat_mmap: the mapping is shared and written, a byte every
    /// 16 KiB of its first tenth, so each write reaches the file.
    #[test]
    fn mmap_writes_a_byte_every_16_kib_of_the_first_tenth() {
        let dir = tempfile::tempdir().unwrap();
        let mut mmap = Mmap::new(dir.path()).unwrap();
        assert_eq!(mmap.timed(2).unwrap().ops, 2);
        let data = std::fs::read(dir.path().join("mmap")).unwrap();
        assert_eq!(data.len(), MAPPED_BYTES);
        let written: Vec<usize> = (0..MAPPED_BYTES).filter(|&k| data[k] == 0).collect();
        let expected: Vec<usize> = (0..7).map(|k| k * MMAP_STRIDE).collect();
        assert_eq!(written, expected);
        assert_eq!(data[7 * MMAP_STRIDE], 0x5a);
        drop(mmap);
        assert!(names_in(dir.path()).is_empty(), "left behind");
    }

    #[test]
    fn a_fault_instance_reads_each_of_its_fresh_mappings() {
        let dir = tempfile::tempdir().unwrap();
        let mut fault = Fault::new(dir.path(), MicroMode::Lmbench).unwrap();
        let pages = (MAPPED_BYTES / page_bytes()) as u64;
        fault.prepare(3).unwrap();
        assert_eq!(fault.timed(3).unwrap().ops, 3 * pages);
        assert!(fault.mappings.is_empty(), "unmapped in the timed part");
        assert!(fault.run().is_err(), "no fresh mapping left");
        fault.tidy().unwrap();
        let mut paced = Fault::new(dir.path(), MicroMode::Paced).unwrap();
        paced.prepare(1).unwrap();
        assert_eq!(paced.timed(1).unwrap().ops, 1);
        assert_eq!(paced.mappings.len(), 1, "unmapped after, untimed");
        paced.tidy().unwrap();
        assert!(paced.mappings.is_empty());
    }

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
