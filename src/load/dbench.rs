//! `dbench`: contest's dbench load, clients of a file server, each working
//! in a directory of its own with the mix of file operations that dbench
//! replays from its netbench trace: reads most, then look-ups of a file's
//! attributes, writes, directory listings, files created and deleted as
//! often, a few flushes (`fsync`) and renames (weights in [`MIX`]). Its
//! work is the operations done.
//!
//! Clients: contest ran `dbench` with 16 clients per CPU; here there are
//! [`CLIENTS_PER_CPU`] per CPU, each a load process. A client spends much of
//! its time waiting for the disk (`fsync`) or for the file system's locks,
//! so more clients than CPUs keep both the CPUs and the device busy; 16 per
//! CPU mostly adds processes waiting in the same queues.
//!
//! Each client keeps between 0 and [`MAX_FILES`] files in 8 directories,
//! created at 1 KiB to 64 KiB and grown by writes up to 256 KiB; reads and
//! writes are 4 KiB to 64 KiB at a random place (log-uniform by octave, see
//! `sim::draws`), through the page cache as dbench's are. The sequence of
//! operations is drawn from a seed (the process id, so that clients differ).

use super::disk::private_dir;
use super::{Load, LoadContext, LoadDef, LoadError};
use crate::sim::draws::Draws;
use crate::sim::uncached::fill_incompressible;
use crate::sim::WorkParams;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::PathBuf;
use tempfile::TempDir;

/// Clients (load processes) per CPU.
const CLIENTS_PER_CPU: usize = 4;
/// Directories of each client.
const DIRS: u64 = 8;
/// Files a client keeps at most.
const MAX_FILES: usize = 64;
/// A file's size when created: 1 KiB to 64 KiB (6 octaves).
const NEW_FILE_MIN_BYTES: u64 = 1 << 10;
const NEW_FILE_OCTAVES: u32 = 6;
/// The size writes grow a file to at most.
const MAX_FILE_BYTES: u64 = 256 << 10;
/// A read or write: 4 KiB to 64 KiB (4 octaves).
const IO_MIN_BYTES: u64 = 4 << 10;
const IO_OCTAVES: u32 = 4;
/// The largest write, which the write buffer holds.
const MAX_IO_BYTES: usize = 64 << 10;
/// Operations in one step (a few milliseconds, more with an `fsync`).
const OPS_PER_STEP: usize = 16;

/// A file operation of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    /// Open a file, read part of it, close it.
    Read,
    /// Look a file's attributes up (`lstat`).
    Stat,
    /// Open a file, write part of it, close it.
    Write,
    /// Read one of the client's directories.
    List,
    /// Make a new file and write it whole.
    Create,
    /// Delete a file.
    Unlink,
    /// Flush a file to the device (`fsync`).
    Fsync,
    /// Give a file a new name, maybe in another directory.
    Rename,
}

/// The operations and their weights, out of 100: the operations of the
/// netbench trace dbench 4.0 replays (its `client.txt`) in these eight
/// kinds, rounded — ReadX 124,199; path and file information queries
/// 84,399; WriteX 39,502; FIND_FIRST 27,765; NTCreateX that create 16,067;
/// Unlink 16,000; Flush 5,553; Rename 3,355. dbench opens a file once for
/// several reads or writes and closes it; here every read and write opens
/// and closes its file.
pub const MIX: [(Op, u64); 8] = [
    (Op::Read, 39),
    (Op::Stat, 27),
    (Op::Write, 12),
    (Op::List, 9),
    (Op::Create, 5),
    (Op::Unlink, 5),
    (Op::Fsync, 2),
    (Op::Rename, 1),
];

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "dbench",
    summary:
        "dbench-like clients, 4 per CPU: reads, writes, stats, creates, deletes, fsyncs and renames",
    method: 1,
    unit: "ops",
    takes_arg: false,
    processes: clients,
    disk_bytes: |params| clients(params) as u64 * (MAX_FILES as u64 * MAX_FILE_BYTES + DIRS * 4096),
    check: super::no_check,
    build: |context| Client::new(context).map(|c| Box::new(c) as Box<dyn Load>),
    default: |_| false,
    uses: &[],
    job_cache: None,
};

fn clients(params: &WorkParams) -> usize {
    CLIENTS_PER_CPU * params.cpus.max(1)
}

/// The operation that `draw` picks when the client has `files` files: one
/// of [`MIX`] by weight, except that a client with no file creates one and
/// a client with [`MAX_FILES`] deletes one instead of creating one.
pub fn choose(draw: u64, files: usize) -> Op {
    let total: u64 = MIX.iter().map(|(_, weight)| weight).sum();
    let mut point = draw % total;
    let mut op = Op::Read;
    for (candidate, weight) in MIX {
        if point < weight {
            op = candidate;
            break;
        }
        point -= weight;
    }
    match op {
        Op::Create if files >= MAX_FILES => Op::Unlink,
        Op::Create | Op::List => op,
        _ if files == 0 => Op::Create,
        _ => op,
    }
}

/// One of the client's files.
struct ClientFile {
    id: u64,
    bytes: u64,
}

/// One client: its directory, its files and its draws.
struct Client {
    /// Holds the client's files; removes them when dropped.
    dir: TempDir,
    files: Vec<ClientFile>,
    /// The id of the next file made or renamed.
    next_id: u64,
    draws: Draws,
    /// Incompressible bytes to write.
    bytes: Vec<u8>,
    /// Where reads go.
    read_buf: Vec<u8>,
}

impl Client {
    fn new(context: &LoadContext) -> Result<Self, LoadError> {
        let dir = private_dir(&context.dir, "dbench")?;
        for d in 0..DIRS {
            let path = dir.path().join(format!("d{d}"));
            std::fs::create_dir(&path)
                .map_err(LoadError::io(format!("cannot make {}", path.display())))?;
        }
        let mut bytes = vec![0; MAX_IO_BYTES];
        fill_incompressible(&mut bytes);
        let mut client = Self {
            dir,
            files: Vec::with_capacity(MAX_FILES),
            next_id: 0,
            draws: Draws::new(u64::from(std::process::id())),
            bytes,
            read_buf: vec![0; MAX_IO_BYTES],
        };
        // Half full, the level the mix keeps it at on average.
        for _ in 0..MAX_FILES / 2 {
            client.run(Op::Create)?;
        }
        Ok(client)
    }

    fn path(&self, id: u64) -> PathBuf {
        self.dir
            .path()
            .join(format!("d{}", id % DIRS))
            .join(format!("f{id}"))
    }

    fn new_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// Does `op`, on a file drawn at random when it needs one.
    fn run(&mut self, op: Op) -> Result<(), LoadError> {
        let index = self.draws.below(self.files.len() as u64) as usize;
        match op {
            Op::Read => self.read(index),
            Op::Stat => {
                let path = self.path(self.files[index].id);
                std::fs::symlink_metadata(&path)
                    .map(drop)
                    .map_err(LoadError::io(format!("cannot stat {}", path.display())))
            }
            Op::Write => self.write(index),
            Op::List => self.list(),
            Op::Create => self.create(),
            Op::Unlink => {
                let id = self.files.swap_remove(index).id;
                let path = self.path(id);
                std::fs::remove_file(&path)
                    .map_err(LoadError::io(format!("cannot delete {}", path.display())))
            }
            Op::Fsync => {
                let path = self.path(self.files[index].id);
                File::open(&path)
                    .and_then(|file| file.sync_all())
                    .map_err(LoadError::io(format!("cannot fsync {}", path.display())))
            }
            Op::Rename => {
                let (from, id) = (self.path(self.files[index].id), self.new_id());
                self.files[index].id = id;
                std::fs::rename(&from, self.path(id))
                    .map_err(LoadError::io(format!("cannot rename {}", from.display())))
            }
        }
    }

    /// Opens file `index`, reads 4 to 64 KiB somewhere in it, closes it.
    fn read(&mut self, index: usize) -> Result<(), LoadError> {
        let path = self.path(self.files[index].id);
        let len = self.draws.octave_size(IO_MIN_BYTES, IO_OCTAVES) as usize;
        let offset = self.draws.below(self.files[index].bytes);
        File::open(&path)
            .and_then(|file| file.read_at(&mut self.read_buf[..len], offset))
            .map(drop)
            .map_err(LoadError::io(format!("cannot read {}", path.display())))
    }

    /// Opens file `index`, writes 4 to 64 KiB anywhere up to its end (as
    /// long as it stays within [`MAX_FILE_BYTES`]), closes it.
    fn write(&mut self, index: usize) -> Result<(), LoadError> {
        let path = self.path(self.files[index].id);
        let len = self.draws.octave_size(IO_MIN_BYTES, IO_OCTAVES);
        let bytes = self.files[index].bytes;
        let offset = self.draws.below(bytes.min(MAX_FILE_BYTES - len) + 1);
        OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|file| file.write_all_at(&self.bytes[..len as usize], offset))
            .map_err(LoadError::io(format!("cannot write {}", path.display())))?;
        self.files[index].bytes = bytes.max(offset + len);
        Ok(())
    }

    /// Reads one of the client's directories to its end.
    fn list(&mut self) -> Result<(), LoadError> {
        let dir = self.dir.path().join(format!("d{}", self.draws.below(DIRS)));
        std::fs::read_dir(&dir)
            .and_then(|mut entries| entries.try_for_each(|e| e.map(drop)))
            .map_err(LoadError::io(format!("cannot list {}", dir.display())))
    }

    /// Makes a new file of 1 to 64 KiB.
    fn create(&mut self) -> Result<(), LoadError> {
        let id = self.new_id();
        let path = self.path(id);
        let bytes = self.draws.octave_size(NEW_FILE_MIN_BYTES, NEW_FILE_OCTAVES);
        File::create_new(&path)
            .and_then(|mut file| file.write_all(&self.bytes[..bytes as usize]))
            .map_err(LoadError::io(format!("cannot create {}", path.display())))?;
        self.files.push(ClientFile { id, bytes });
        Ok(())
    }
}

impl Load for Client {
    fn step(&mut self) -> Result<f64, LoadError> {
        for _ in 0..OPS_PER_STEP {
            let op = choose(self.draws.next_u64(), self.files.len());
            self.run(op)?;
        }
        Ok(OPS_PER_STEP as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn the_mix_follows_its_weights_and_keeps_the_files_bounded() {
        let mut draws = Draws::new(3);
        let mut files = MAX_FILES / 2;
        let mut counts: BTreeMap<Op, u64> = BTreeMap::new();
        let (mut fewest, mut most) = (files, files);
        let ops = 200_000;
        for _ in 0..ops {
            let op = choose(draws.next_u64(), files);
            match op {
                Op::Create => files += 1,
                Op::Unlink => files -= 1,
                _ => {}
            }
            *counts.entry(op).or_default() += 1;
            (fewest, most) = (fewest.min(files), most.max(files));
        }
        assert!(most <= MAX_FILES, "{most}");
        assert!(most > fewest, "the population moves");
        for (op, weight) in MIX {
            let share = counts[&op] as f64 / ops as f64 * 100.0;
            // The bounds move a little weight between Create and Unlink.
            assert!((share - weight as f64).abs() < 1.5, "{op:?}: {share:.1} %");
        }
    }

    /// The first draw that picks `op`.
    fn first_draw_of(op: Op) -> u64 {
        MIX.iter()
            .take_while(|(o, _)| *o != op)
            .map(|(_, w)| w)
            .sum()
    }

    #[test]
    fn the_bounds_override_the_draw() {
        let create = first_draw_of(Op::Create);
        assert_eq!(choose(create, 3), Op::Create);
        assert_eq!(choose(create, MAX_FILES), Op::Unlink);
        assert_eq!(choose(0, 0), Op::Create, "a read with no file");
        assert_eq!(choose(first_draw_of(Op::List), 0), Op::List);
        assert_eq!(MIX.iter().map(|(_, w)| w).sum::<u64>(), 100);
    }

    #[test]
    fn a_client_keeps_its_files_where_it_says_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let context = LoadContext {
            params: WorkParams::for_tests(),
            arg: None,
            dir: dir.path().to_path_buf(),
        };
        let mut client = Client::new(&context).unwrap();
        for _ in 0..50 {
            assert_eq!(client.step().unwrap(), OPS_PER_STEP as f64);
        }
        for file in &client.files {
            let len = std::fs::metadata(client.path(file.id)).unwrap().len();
            assert_eq!(len, file.bytes);
            assert!(len <= MAX_FILE_BYTES);
        }
        let on_disk: usize = (0..DIRS)
            .map(|d| {
                let path = client.dir.path().join(format!("d{d}"));
                std::fs::read_dir(path).unwrap().count()
            })
            .sum();
        assert_eq!(on_disk, client.files.len());
        drop(client);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
