//! The source tree that `list`, `ctar` and `xtar` work on: a deterministic
//! tree shaped like a program's source, the same on every machine, so that
//! their rates compare between machines and kernels. It has
//! [`SOURCE_FILES`] files, 16 to a directory (the Linux kernel has about 18),
//! in directories that branch 8 ways, 4 levels deep; file sizes are
//! log-uniform by octave from 256 B to 64 KiB (median 4 KiB, mean 12 KB,
//! 48 MB in all), as source files are, so a few large files hold much of
//! the bytes. Entries are listed depth first, each directory before what it
//! holds — the order `tar` archives a tree in.
//!
//! Its size: a twentieth of a kernel tree's files, so that a load builds it
//! in seconds even where making files is slow. On ext4 without a journal
//! (as on the VM this was measured on) a new inode costs up to a
//! millisecond for a minute after many files were deleted — the allocator
//! skips every recently freed inode of its group, one by one — and a
//! scenario starts just after the last one removed its tree: right after
//! 16,384 files were deleted there, making 16,384 more took 10.7 s, 4,096
//! took 3.1 s. A pass still takes thousands of operations, and the tree's
//! inodes and dentries (a few MB) do not fit in a CPU's L2 cache.

use super::disk::{drop_cached_pages, start_write_back, wait_for_write_back};
use super::LoadError;
use crate::sim::draws::Draws;
use crate::sim::uncached::fill_incompressible;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Files in the tree the loads build.
pub const SOURCE_FILES: usize = 4_096;
/// Files in each directory.
const FILES_PER_DIR: usize = 16;
/// Subdirectories of each directory that has any.
const FANOUT: usize = 8;
/// The smallest file, and how many octaves above it sizes reach.
const MIN_FILE_BYTES: u64 = 256;
const SIZE_OCTAVES: u32 = 8;
/// The largest file: the top of the last octave.
const MAX_FILE_BYTES: usize = (MIN_FILE_BYTES as usize) << SIZE_OCTAVES;
/// Seed of the file sizes.
const SIZE_SEED: u64 = 0x5eed_f11e;
/// The name of the tree's top directory.
const ROOT: &str = "src";
/// The allocation unit counted for disk space: a block of most file systems.
const BLOCK_BYTES: u64 = 4096;
/// A tar header, and the unit tar pads file data to.
const TAR_BLOCK_BYTES: u64 = 512;
/// The longest a load spends removing its trees when it ends. The engine
/// waits 5 s for every load to stop, and removing a tree whose files were
/// written out can take longer: on a file system mounted with `discard`,
/// every file freed waits for its blocks' discard (6.5 s for 4,096 files
/// on the machine this was measured on). What is left then goes with the
/// scenario's directory, which the engine removes.
const REMOVAL_BUDGET: Duration = Duration::from_secs(2);
/// Entries removed between two looks at the clock.
const REMOVAL_CHUNK: usize = 16;

/// What a tree entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File { bytes: u64 },
}

/// One directory or file, by its path relative to the tree's parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    pub kind: Kind,
}

/// What the files of a tree hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Nothing: each file only has its size (a sparse file), for loads that
    /// never read it.
    Sparse,
    /// Incompressible bytes, for loads that read and copy them.
    Incompressible,
}

/// The directories and files of a tree, in depth-first order.
#[derive(Debug, Clone)]
pub struct Layout {
    entries: Vec<Entry>,
}

impl Layout {
    /// The tree the loads build.
    pub fn source() -> Self {
        Self::new(SOURCE_FILES)
    }

    /// A tree of `files` files (at least one directory).
    pub fn new(files: usize) -> Self {
        let dirs = files.div_ceil(FILES_PER_DIR).max(1);
        let mut draws = Draws::new(SIZE_SEED);
        let sizes: Vec<u64> = (0..files)
            .map(|_| draws.octave_size(MIN_FILE_BYTES, SIZE_OCTAVES))
            .collect();
        let mut entries = Vec::with_capacity(dirs + files);
        visit(0, PathBuf::from(ROOT), dirs, &sizes, &mut entries);
        Self { entries }
    }

    /// Its entries, each directory before what it holds.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The tree's top directory, under `parent`.
    pub fn root(parent: &Path) -> PathBuf {
        parent.join(ROOT)
    }

    /// How many files it has.
    pub fn files(&self) -> usize {
        self.file_sizes().count()
    }

    /// Disk space it takes at most: every file in whole blocks, a block for
    /// each directory.
    pub fn disk_bytes(&self) -> u64 {
        let dirs = (self.entries.len() - self.files()) as u64;
        let files: u64 = self
            .file_sizes()
            .map(|bytes| bytes.next_multiple_of(BLOCK_BYTES))
            .sum();
        files + dirs * BLOCK_BYTES
    }

    /// The size of its tar archive: a header for each entry, each file's
    /// data padded to whole tar blocks, two zero blocks at the end.
    pub fn archive_bytes(&self) -> u64 {
        let data: u64 = self
            .file_sizes()
            .map(|bytes| bytes.next_multiple_of(TAR_BLOCK_BYTES))
            .sum();
        (self.entries.len() as u64 + 2) * TAR_BLOCK_BYTES + data
    }

    fn file_sizes(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries.iter().filter_map(|e| match e.kind {
            Kind::File { bytes } => Some(bytes),
            Kind::Dir => None,
        })
    }

    /// Makes the tree under `parent` (which must not hold it yet), its
    /// files holding `content`. Written into the page cache only; see
    /// [`Layout::write_out`].
    pub fn create(&self, parent: &Path, content: Content) -> Result<(), LoadError> {
        let mut bytes = vec![0; MAX_FILE_BYTES];
        fill_incompressible(&mut bytes);
        for entry in &self.entries {
            let path = parent.join(&entry.path);
            let what = || format!("cannot make {}", path.display());
            match entry.kind {
                Kind::Dir => std::fs::create_dir(&path).map_err(LoadError::io(what()))?,
                Kind::File { bytes: len } => {
                    let mut file = File::create_new(&path).map_err(LoadError::io(what()))?;
                    match content {
                        Content::Sparse => file.set_len(len),
                        Content::Incompressible => file.write_all(&bytes[..len as usize]),
                    }
                    .map_err(LoadError::io(what()))?;
                }
            }
        }
        Ok(())
    }

    /// Removes the last `count` of the first `left` entries of the tree
    /// under `parent` (a partial tree holds its first entries: it is made
    /// in order and removed last entry first, so every directory is empty
    /// when its turn comes); returns how many entries are left.
    pub fn remove_last(
        &self,
        parent: &Path,
        left: usize,
        count: usize,
    ) -> Result<usize, LoadError> {
        let first = left.saturating_sub(count);
        for entry in self.entries[first..left].iter().rev() {
            let path = parent.join(&entry.path);
            match entry.kind {
                Kind::Dir => std::fs::remove_dir(&path),
                Kind::File { .. } => std::fs::remove_file(&path),
            }
            .map_err(LoadError::io(format!("cannot remove {}", path.display())))?;
        }
        Ok(first)
    }

    /// Removes the first `left` entries of each tree in `trees` (a parent
    /// directory and how many entries it holds), for at most
    /// [`REMOVAL_BUDGET`]; returns whether they are all gone. For a load's
    /// `Drop`: a failure only stops the removal.
    pub fn remove_within_budget(&self, trees: &[(&Path, usize)]) -> bool {
        let deadline = Instant::now() + REMOVAL_BUDGET;
        trees.iter().all(|&(parent, mut left)| {
            while left > 0 && Instant::now() < deadline {
                match self.remove_last(parent, left, REMOVAL_CHUNK) {
                    Ok(fewer) => left = fewer,
                    Err(_) => return false,
                }
            }
            left == 0
        })
    }

    /// Writes the files of the tree under `parent` out to the device and
    /// drops their pages from the page cache, so that the tree's own
    /// write-back does not fall into a measurement and reading it comes
    /// from the device. Starts every file's write-back first, then waits
    /// for each: the device gets all of it at once.
    pub fn write_out(&self, parent: &Path) -> Result<(), LoadError> {
        let open = |path: &Path| {
            File::open(path).map_err(LoadError::io(format!("cannot open {}", path.display())))
        };
        let files = || {
            self.entries
                .iter()
                .filter(|e| matches!(e.kind, Kind::File { .. }))
                .map(|e| parent.join(&e.path))
        };
        for path in files() {
            start_write_back(&open(&path)?)?;
        }
        for path in files() {
            let file = open(&path)?;
            wait_for_write_back(&file)?;
            drop_cached_pages(&file)?;
        }
        Ok(())
    }
}

/// Lists directory `dir` (at `path`), its files and then its
/// subdirectories' subtrees into `entries`. File `j` is in directory `j %
/// dirs`; directory `d`'s subdirectories are `FANOUT * d + 1` to `FANOUT *
/// d + FANOUT`, those that exist.
fn visit(dir: usize, path: PathBuf, dirs: usize, sizes: &[u64], entries: &mut Vec<Entry>) {
    entries.push(Entry {
        path: path.clone(),
        kind: Kind::Dir,
    });
    for (j, &bytes) in sizes.iter().enumerate().skip(dir).step_by(dirs) {
        entries.push(Entry {
            path: path.join(format!("f{j}.c")),
            kind: Kind::File { bytes },
        });
    }
    for child in (FANOUT * dir + 1..=FANOUT * dir + FANOUT).take_while(|&c| c < dirs) {
        visit(child, path.join(format!("d{child}")), dirs, sizes, entries);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_deterministic_and_sized_like_source() {
        let layout = Layout::source();
        assert_eq!(layout.entries(), Layout::source().entries());
        assert_eq!(layout.files(), SOURCE_FILES);
        assert_eq!(layout.entries().len(), SOURCE_FILES + SOURCE_FILES / 16);
        // Fixed forever: a change here changes every rate measured (and
        // bench/loads.sh makes the same tree).
        assert_eq!(layout.file_sizes().sum::<u64>(), 47_876_400);
        assert_eq!(layout.entries()[1].path, Path::new("src/f0.c"));
        assert_eq!(layout.entries()[1].kind, Kind::File { bytes: 1770 });
    }

    #[test]
    fn every_directory_comes_before_what_it_holds() {
        let layout = Layout::new(1000);
        let mut seen = std::collections::HashSet::new();
        for entry in layout.entries() {
            let parent = entry.path.parent().unwrap();
            assert!(
                parent == Path::new("") || seen.contains(parent),
                "{} before its directory",
                entry.path.display()
            );
            seen.insert(entry.path.as_path());
        }
        assert_eq!(seen.len(), layout.entries().len(), "no path twice");
    }

    #[test]
    fn the_tree_branches_eight_ways_with_sixteen_files_a_directory() {
        let layout = Layout::new(16 * 73);
        let dirs: Vec<&Entry> = layout
            .entries()
            .iter()
            .filter(|e| e.kind == Kind::Dir)
            .collect();
        assert_eq!(dirs.len(), 73);
        // 1 + 8 + 64: three full levels.
        let depth = |e: &Entry| e.path.components().count();
        assert_eq!(dirs.iter().map(|d| depth(d)).max(), Some(3));
        assert_eq!(dirs.iter().filter(|d| depth(d) == 2).count(), 8);
    }

    #[test]
    fn sizes_on_disk_and_in_an_archive_add_up() {
        let layout = Layout::new(3);
        let sizes: Vec<u64> = layout.file_sizes().collect();
        let blocks: u64 = sizes.iter().map(|s| s.div_ceil(4096) * 4096).sum();
        assert_eq!(layout.disk_bytes(), blocks + 4096);
        let padded: u64 = sizes.iter().map(|s| s.div_ceil(512) * 512).sum();
        assert_eq!(layout.archive_bytes(), (4 + 2) * 512 + padded);
    }

    #[test]
    fn a_tree_is_removed_last_entry_first_in_parts() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(40);
        layout.create(dir.path(), Content::Sparse).unwrap();
        let len = layout.entries().len();
        assert_eq!(layout.remove_last(dir.path(), len, 10).unwrap(), len - 10);
        let last = &layout.entries()[len - 10];
        assert!(!dir.path().join(&last.path).exists());
        assert!(dir.path().join(&layout.entries()[len - 11].path).exists());
        assert!(layout.remove_within_budget(&[(dir.path(), len - 10)]));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert!(
            !layout.remove_within_budget(&[(dir.path(), 1)]),
            "already gone"
        );
    }

    #[test]
    fn a_tree_is_created_with_its_sizes_and_written_out() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(40);
        layout.create(dir.path(), Content::Incompressible).unwrap();
        layout.write_out(dir.path()).unwrap();
        for entry in layout.entries() {
            let meta = std::fs::symlink_metadata(dir.path().join(&entry.path)).unwrap();
            match entry.kind {
                Kind::Dir => assert!(meta.is_dir()),
                Kind::File { bytes } => assert_eq!(meta.len(), bytes),
            }
        }
        // What it takes is within what the load claims.
        let used: u64 = layout
            .entries()
            .iter()
            .map(|e| std::fs::symlink_metadata(dir.path().join(&e.path)).unwrap())
            .map(|meta| std::os::unix::fs::MetadataExt::blocks(&meta) * 512)
            .sum();
        assert!(
            used <= layout.disk_bytes(),
            "{used} > {}",
            layout.disk_bytes()
        );
        let sparse = tempfile::tempdir().unwrap();
        layout.create(sparse.path(), Content::Sparse).unwrap();
        let err = layout.create(sparse.path(), Content::Sparse).unwrap_err();
        assert!(err.to_string().starts_with("cannot make "), "{err}");
    }
}
