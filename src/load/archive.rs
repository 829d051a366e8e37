//! `ctar` and `xtar`: contest's tar loads, making a tar archive of a source
//! tree over and over, and extracting one over and over — the small-file
//! and metadata storm of a backup, a package update or a git checkout. Both
//! work on the source-like tree of `load::tree` (4,096 files, 48 MB), a
//! tar archive in the tar crate's GNU format, and count the files they
//! archive or extract.
//!
//! `ctar` builds the tree, writes it out and drops it from the page cache,
//! then archives it into an unnamed file: each file is opened, read and
//! appended, and its pages dropped again, so each pass reads the tree from
//! the device (its directories and inodes stay cached: only the system's
//! whole cache could be dropped, and that would hit the probe too). The
//! archive's write-back is started after every step, and each pass ends
//! with `fdatasync`, so that every pass reaches the device once, as
//! `write`'s do, instead of being rewritten in memory.
//!
//! `xtar` builds the tree, archives it into an unnamed file (read through
//! the page cache, where it stays on most machines) and removes the tree.
//! Then each pass extracts the archive into a fresh directory, the way
//! `tar xf` does (create, write, set mode and time), while the previous
//! pass's copy is removed as fast (the new files of an update replacing the
//! old ones). A real extraction stays on disk and is written out by the
//! kernel within its dirty-expiry time (30 s); this one is removed within
//! seconds, so the load starts each file's write-back itself, without
//! waiting for it (`sync_file_range`, as dpkg does), so that every pass
//! reaches the device once.

use super::disk::{drop_cached_pages, private_dir, start_write_back, unnamed_file};
use super::tree::{Content, Kind, Layout};
use super::{Load, LoadContext, LoadDef, LoadError};
use std::fs::File;
use std::io::{BufReader, BufWriter, Seek as _, SeekFrom, Write as _};
use std::path::Path;
use tempfile::TempDir;

/// Tree entries archived or extracted in one step (a few milliseconds).
const ENTRIES_PER_STEP: usize = 32;
/// Bytes written to the archive at once: GNU tar's record size.
const RECORD_BYTES: usize = 10 * 1024;

/// Registry entry of `ctar`.
pub const CTAR: LoadDef = LoadDef {
    name: "ctar",
    summary: "contest's ctar: tars a source-like tree (4096 files, 48 MB) read from the device, over and over",
    method: 1,
    unit: "files",
    takes_arg: false,
    processes: |_| 1,
    disk_bytes: |_| {
        let layout = Layout::source();
        layout.disk_bytes() + layout.archive_bytes()
    },
    check: super::no_check,
    build: |context| Ctar::new(context, Layout::source()).map(|l| Box::new(l) as Box<dyn Load>),
    default: |_| false,
    uses: &[],
    job_cache: None,
};

/// Registry entry of `xtar`.
pub const XTAR: LoadDef = LoadDef {
    name: "xtar",
    summary: "contest's xtar: extracts a tar of a source-like tree (4096 files, 48 MB) and removes the last copy, over and over",
    method: 1,
    unit: "files",
    takes_arg: false,
    processes: |_| 1,
    // The archive, the copy being extracted and the one being removed.
    disk_bytes: |_| {
        let layout = Layout::source();
        2 * layout.disk_bytes() + layout.archive_bytes()
    },
    check: super::no_check,
    build: |context| Xtar::new(context, Layout::source()).map(|l| Box::new(l) as Box<dyn Load>),
    default: |_| false,
    uses: &[],
    job_cache: None,
};

/// An archive being written into `File`.
type Archiver = tar::Builder<BufWriter<File>>;

fn archiver(file: File) -> Archiver {
    tar::Builder::new(BufWriter::with_capacity(RECORD_BYTES, file))
}

/// What becomes of a file's pages in the page cache once it is archived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pages {
    Keep,
    /// Dropped, so that the next read comes from the device.
    Drop,
}

/// Appends entry `index` of `layout`, found under `parent`, to `archive`;
/// returns whether it was a file.
fn append(
    archive: &mut Archiver,
    layout: &Layout,
    index: usize,
    parent: &Path,
    pages: Pages,
) -> Result<bool, LoadError> {
    let entry = &layout.entries()[index];
    let path = parent.join(&entry.path);
    let what = || format!("cannot archive {}", path.display());
    match entry.kind {
        Kind::Dir => {
            archive
                .append_dir(&entry.path, &path)
                .map_err(LoadError::io(what()))?;
            Ok(false)
        }
        Kind::File { .. } => {
            let mut file = File::open(&path).map_err(LoadError::io(what()))?;
            archive
                .append_file(&entry.path, &mut file)
                .map_err(LoadError::io(what()))?;
            if pages == Pages::Drop {
                drop_cached_pages(&file)?;
            }
            Ok(true)
        }
    }
}

/// Ends `archive` (its two zero blocks) and returns its file, written out.
fn finish(archive: Archiver) -> Result<File, LoadError> {
    let what = "cannot finish the archive";
    let file = archive
        .into_inner()
        .map_err(LoadError::io(what))?
        .into_inner()
        .map_err(|e| LoadError::io(what)(e.into_error()))?;
    file.sync_data()
        .map_err(LoadError::io("cannot write the archive out (fdatasync)"))?;
    Ok(file)
}

/// Archives the whole tree of `layout` under `parent` into `file`, through
/// the page cache, and writes the archive out.
fn archive_tree(layout: &Layout, parent: &Path, file: File) -> Result<File, LoadError> {
    let mut archive = archiver(file);
    for index in 0..layout.entries().len() {
        append(&mut archive, layout, index, parent, Pages::Keep)?;
    }
    finish(archive)
}

/// `ctar`'s state: the tree and the archive being written.
struct Ctar {
    layout: Layout,
    /// Holds the tree (see `Drop`).
    tree: TempDir,
    /// `None` only while a pass ends.
    archive: Option<Archiver>,
    /// The entry to archive next.
    next: usize,
}

impl Ctar {
    fn new(context: &LoadContext, layout: Layout) -> Result<Self, LoadError> {
        let tree = private_dir(&context.dir, "ctar")?;
        layout.create(tree.path(), Content::Incompressible)?;
        layout.write_out(tree.path())?;
        Ok(Self {
            layout,
            tree,
            archive: Some(archiver(unnamed_file(&context.dir)?)),
            next: 0,
        })
    }

    /// Finishes the pass's archive and empties its file for the next one.
    fn end_pass(&mut self) -> Result<(), LoadError> {
        let archive = self.archive.take().expect("an archive between passes");
        let mut file = finish(archive)?;
        file.set_len(0)
            .and_then(|()| file.rewind())
            .map_err(LoadError::io("cannot empty the archive"))?;
        self.archive = Some(archiver(file));
        self.next = 0;
        Ok(())
    }
}

impl Load for Ctar {
    /// Archives the next [`ENTRIES_PER_STEP`] entries and starts writing
    /// them out; ends the pass after the last.
    fn step(&mut self) -> Result<f64, LoadError> {
        let archive = self.archive.as_mut().expect("an archive between steps");
        let end = (self.next + ENTRIES_PER_STEP).min(self.layout.entries().len());
        let mut files = 0;
        for index in self.next..end {
            files += usize::from(append(
                archive,
                &self.layout,
                index,
                self.tree.path(),
                Pages::Drop,
            )?);
        }
        self.next = end;
        archive
            .get_mut()
            .flush()
            .map_err(LoadError::io("cannot write the archive"))?;
        start_write_back(archive.get_ref().get_ref())?;
        if self.next == self.layout.entries().len() {
            self.end_pass()?;
        }
        Ok(files as f64)
    }
}

/// `xtar`'s state: the archive, and the copies extracted from it.
struct Xtar {
    layout: Layout,
    archive: File,
    /// Holds the copies, `0` and `1` (see `Drop`).
    copies: TempDir,
    /// The copy being extracted; the other is being removed.
    copy: usize,
    /// Entries extracted in this pass, and where the next one's header is.
    extracted: usize,
    offset: u64,
    /// Entries of the other copy not removed yet: they are removed last
    /// first, so what is left is always its first `left` entries.
    left: usize,
}

impl Xtar {
    fn new(context: &LoadContext, layout: Layout) -> Result<Self, LoadError> {
        let archive = {
            let source = private_dir(&context.dir, "xtar-source")?;
            layout.create(source.path(), Content::Incompressible)?;
            archive_tree(&layout, source.path(), unnamed_file(&context.dir)?)?
        };
        let copies = private_dir(&context.dir, "xtar")?;
        for copy in 0..2 {
            std::fs::create_dir(copies.path().join(copy.to_string())).map_err(LoadError::io(
                format!("cannot make a directory in {}", copies.path().display()),
            ))?;
        }
        Ok(Self {
            layout,
            archive,
            copies,
            copy: 0,
            extracted: 0,
            offset: 0,
            left: 0,
        })
    }

    fn copy_dir(&self, copy: usize) -> std::path::PathBuf {
        self.copies.path().join(copy.to_string())
    }

    /// Extracts the next `count` entries at most into the current copy;
    /// returns the files among them.
    fn extract(&mut self, count: usize) -> Result<usize, LoadError> {
        let what = "cannot read the archive";
        (&self.archive)
            .seek(SeekFrom::Start(self.offset))
            .map_err(LoadError::io(what))?;
        let mut archive = tar::Archive::new(BufReader::new(&self.archive));
        let dir = self.copy_dir(self.copy);
        let start = self.offset;
        let mut files = 0;
        for entry in archive.entries().map_err(LoadError::io(what))?.take(count) {
            let mut entry = entry.map_err(LoadError::io(what))?;
            let path = dir.join(entry.path().map_err(LoadError::io(what))?);
            let unpacked = entry
                .unpack(&path)
                .map_err(LoadError::io(format!("cannot extract {}", path.display())))?;
            if let tar::Unpacked::File(file) = unpacked {
                start_write_back(&file)?;
                files += 1;
            }
            // Positions count from where this reading started.
            self.offset = start + entry.raw_file_position() + entry.size().next_multiple_of(512);
            self.extracted += 1;
        }
        Ok(files)
    }

    /// Removes the last `count` entries left of the other copy.
    fn remove(&mut self, count: usize) -> Result<(), LoadError> {
        let dir = self.copy_dir(1 - self.copy);
        self.left = self.layout.remove_last(&dir, self.left, count)?;
        Ok(())
    }
}

impl Load for Xtar {
    /// Extracts the next [`ENTRIES_PER_STEP`] entries and removes as many
    /// of the previous copy; once the pass is done, the copies swap roles.
    fn step(&mut self) -> Result<f64, LoadError> {
        let files = self.extract(ENTRIES_PER_STEP)?;
        self.remove(ENTRIES_PER_STEP)?;
        if self.extracted == self.layout.entries().len() {
            // Both copies have as many entries: the other one is gone too.
            self.remove(self.left)?;
            self.copy = 1 - self.copy;
            self.left = self.extracted;
            self.extracted = 0;
            self.offset = 0;
        }
        Ok(files as f64)
    }
}

impl Drop for Ctar {
    fn drop(&mut self) {
        let all = self.layout.entries().len();
        let gone = self.layout.remove_within_budget(&[(self.tree.path(), all)]);
        // What is left goes with the scenario's directory.
        self.tree.disable_cleanup(!gone);
    }
}

impl Drop for Xtar {
    fn drop(&mut self) {
        let (current, other) = (self.copy_dir(self.copy), self.copy_dir(1 - self.copy));
        let gone = self
            .layout
            .remove_within_budget(&[(&current, self.extracted), (&other, self.left)]);
        // What is left goes with the scenario's directory.
        self.copies.disable_cleanup(!gone);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::WorkParams;
    use std::collections::BTreeSet;

    fn context(dir: &Path) -> LoadContext {
        LoadContext {
            params: WorkParams::for_tests(),
            arg: None,
            dir: dir.to_path_buf(),
        }
    }

    /// Every path under `dir`, relative to it.
    fn tree_of(dir: &Path) -> BTreeSet<std::path::PathBuf> {
        let mut paths = BTreeSet::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(next) = pending.pop() {
            for entry in std::fs::read_dir(&next).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    pending.push(path.clone());
                }
                paths.insert(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
        paths
    }

    #[test]
    fn ctar_archives_every_file_each_pass_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(100);
        let mut ctar = Ctar::new(&context(dir.path()), layout.clone()).unwrap();
        let mut files = 0.0;
        // Two passes and a bit: the second starts on an empty archive.
        let steps = 2 * layout.entries().len().div_ceil(ENTRIES_PER_STEP) + 1;
        for _ in 0..steps {
            files += ctar.step().unwrap();
        }
        assert!(files > 200.0, "{files}");
        let archive = ctar.archive.as_ref().unwrap().get_ref().get_ref();
        let written = archive.metadata().unwrap().len();
        assert!(
            written > 0 && written < layout.archive_bytes() / 2,
            "{written}"
        );
        drop(ctar);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_archive_is_a_tar_of_the_whole_tree() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(50);
        layout.create(dir.path(), Content::Incompressible).unwrap();
        let file = tempfile::tempfile().unwrap();
        let mut file = archive_tree(&layout, dir.path(), file).unwrap();
        assert_eq!(file.metadata().unwrap().len(), layout.archive_bytes());
        file.rewind().unwrap();
        let mut archive = tar::Archive::new(file);
        let entries: Vec<(std::path::PathBuf, u64)> = archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| (e.path().unwrap().into_owned(), e.size()))
            .collect();
        let expected: Vec<(std::path::PathBuf, u64)> = layout
            .entries()
            .iter()
            .map(|e| match e.kind {
                Kind::Dir => (e.path.clone(), 0),
                Kind::File { bytes } => (e.path.clone(), bytes),
            })
            .collect();
        assert_eq!(entries, expected);
    }

    #[test]
    fn xtar_extracts_whole_copies_while_removing_the_last_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(100);
        let mut xtar = Xtar::new(&context(dir.path()), layout.clone()).unwrap();
        let steps = layout.entries().len().div_ceil(ENTRIES_PER_STEP);
        let expected: BTreeSet<_> = layout.entries().iter().map(|e| e.path.clone()).collect();
        let mut files = 0.0;
        for pass in 0..3 {
            for _ in 0..steps {
                files += xtar.step().unwrap();
            }
            let done = 1 - xtar.copy;
            assert_eq!(tree_of(&xtar.copy_dir(done)), expected, "pass {pass}");
            assert!(tree_of(&xtar.copy_dir(xtar.copy)).is_empty());
        }
        assert_eq!(files, 300.0);
        // Halfway through a pass, both copies hold part of a tree.
        for _ in 0..steps / 2 {
            xtar.step().unwrap();
        }
        drop(xtar);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
