//! `list`: contest's list load, a long listing of a large tree over and
//! over (`ls -lR`): read every directory, `lstat` every entry (relative to
//! its directory, as `find` does), go down into the subdirectories. Its
//! work is the entries listed. (`ls -lR` itself also looks each entry's
//! whole path up three times, for its `lstat` and two extended attributes,
//! and formats the listing: on the machine this was measured on, `ls -lRU`
//! listed 130,000 entries a second of this tree, `find -printf` 359,000.)
//!
//! The tree: contest listed the whole file system (`ls -lRa /`), which is a
//! different walk on every machine (and, through /proc and /sys, on every
//! run). Here the load builds its own, the source-like tree of
//! `load::tree` (4,096 files in 256 directories), so a rate means the
//! same everywhere. Its files are sparse (they have their sizes but no
//! data): a listing reads only metadata, so data would cost the disk and
//! the build time and change nothing.
//!
//! The page cache: after the first pass the tree's directories and inodes
//! are all cached, as contest's were after its first pass on a machine
//! with memory to spare, so the walk is CPU work in the kernel — path
//! look-ups, directory reads and inode copies under the file system's
//! locks — rather than disk work. Walking from the device on every pass
//! would need the whole system's caches dropped (root only, and it would
//! hit the probe too), so the load does not try.

use super::disk::private_dir;
use super::tree::{Content, Layout};
use super::{Load, LoadContext, LoadDef, LoadError};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// Entries listed in one step (about a millisecond of cached walk).
const ENTRIES_PER_STEP: usize = 256;

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "list",
    summary:
        "contest's list load: ls -lR over and over of a source-like tree of 4096 files (cached)",
    method: 1,
    unit: "entries",
    takes_arg: false,
    processes: |_| 1,
    // A block for each entry: directories take one, and some file systems
    // (XFS, btrfs) allocate room for inodes as files are made.
    disk_bytes: |_| Layout::source().entries().len() as u64 * 4096,
    check: super::no_check,
    build: |context| List::new(context, &Layout::source()).map(|l| Box::new(l) as Box<dyn Load>),
    default: |_| false,
    uses: &[],
    job_cache: None,
};

/// The walk through a tree of its own.
struct List {
    /// Holds the tree; removes it when dropped.
    tree: TempDir,
    /// Directories still to list in this pass.
    pending: Vec<PathBuf>,
}

impl List {
    fn new(context: &LoadContext, layout: &Layout) -> Result<Self, LoadError> {
        let tree = private_dir(&context.dir, "list")?;
        layout.create(tree.path(), Content::Sparse)?;
        Ok(Self {
            tree,
            pending: Vec::new(),
        })
    }

    /// Reads directory `dir` and `lstat`s each entry in it, keeping its
    /// subdirectories for later; returns the entries listed.
    fn list(&mut self, dir: &Path) -> Result<usize, LoadError> {
        let what = || format!("cannot list {}", dir.display());
        let mut listed = 0;
        for entry in std::fs::read_dir(dir).map_err(LoadError::io(what()))? {
            let entry = entry.map_err(LoadError::io(what()))?;
            // DirEntry::metadata does not follow symbolic links: an lstat.
            if entry.metadata().map_err(LoadError::io(what()))?.is_dir() {
                self.pending.push(entry.path());
            }
            listed += 1;
        }
        Ok(listed)
    }
}

impl Load for List {
    /// Lists directories until [`ENTRIES_PER_STEP`] entries are done,
    /// starting the next pass at the top when one ends.
    fn step(&mut self) -> Result<f64, LoadError> {
        let mut listed = 0;
        while listed < ENTRIES_PER_STEP {
            let dir = self
                .pending
                .pop()
                .unwrap_or_else(|| Layout::root(self.tree.path()));
            listed += self.list(&dir)?;
        }
        Ok(listed as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::WorkParams;

    #[test]
    fn a_pass_lists_every_entry_and_nothing_is_left_afterwards() {
        let dir = tempfile::tempdir().unwrap();
        let context = LoadContext {
            params: WorkParams::for_tests(),
            arg: None,
            dir: dir.path().to_path_buf(),
        };
        let layout = Layout::new(100);
        let mut list = List::new(&context, &layout).unwrap();
        let mut listed = list.list(&Layout::root(list.tree.path())).unwrap();
        while let Some(next) = list.pending.pop() {
            listed += list.list(&next).unwrap();
        }
        // Every entry but the top directory, which is in no listing.
        assert_eq!(listed, layout.entries().len() - 1);
        assert!(list.step().unwrap() >= ENTRIES_PER_STEP as f64);
        drop(list);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
