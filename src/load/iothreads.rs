//! `ioseqwrite`, `ioseqread`, `iorandwrite` and `iorandread`: tiobench's
//! workload. `--io-threads` processes (4, tiobench's default) each do 4 KiB
//! requests, one per step, on a file of their own in the scenario's
//! directory: sequential passes through the file or blocks drawn at random,
//! reads or writes. The files share `--file-size` (for reads at most 1 GiB,
//! as for `read`, so that making them before the window takes seconds).
//!
//! Processes rather than threads of one worker: the kernel sees the same N
//! tasks issuing I/O on N files, and each process's CPU and device bytes
//! are counted, added up and reported by the engine as for every load.
//!
//! Reads bypass the page cache (`O_DIRECT`; where the file system refuses
//! it, the pages are dropped before each random read, and after each
//! sequential pass). Writes are buffered, as tiobench's are, so a write
//! waits when the kernel throttles a writer for dirtying memory — where
//! tiobench's seconds-long requests come from; each pass through the file
//! ends with an `fdatasync` (not timed), as `write` does, so the device sees
//! every pass. The work is the MB requested; each request's latency is
//! counted as the load's request latency (mean, max, % over
//! `--io-thresholds`).

use super::disk::{bypass_cache, drop_cached_pages, fill_on_device, mb, unnamed_file, Passes};
use super::{Load, LoadContext, LoadDef, LoadError};
use crate::measure::clock::now_ns;
use crate::sim::draws::Draws;
use crate::sim::uncached::drop_cached_range;
use crate::sim::uncached::AlignedBuf;
use crate::sim::{SettingsGroup, WorkParams};
use std::fs::File;
use std::os::unix::fs::FileExt as _;

/// Bytes of each request (tiobench's block size).
const REQUEST_BYTES: usize = 4096;
/// Smallest file of a process.
const MIN_FILE_BYTES: u64 = 1 << 20;
/// Largest file size read, all processes together (as `read`'s).
const MAX_READ_BYTES: u64 = 1 << 30;

/// Registry entry of `ioseqwrite`.
pub const SEQ_WRITE: LoadDef = variant(
    "ioseqwrite",
    "tiobench: --io-threads processes writing their files sequentially in 4 KiB requests",
    Mode::SEQ_WRITE,
);
/// Registry entry of `ioseqread`.
pub const SEQ_READ: LoadDef = variant(
    "ioseqread",
    "tiobench: --io-threads processes reading their files sequentially in 4 KiB requests, uncached",
    Mode::SEQ_READ,
);
/// Registry entry of `iorandwrite`.
pub const RAND_WRITE: LoadDef = variant(
    "iorandwrite",
    "tiobench: --io-threads processes writing 4 KiB blocks of their files at random",
    Mode::RAND_WRITE,
);
/// Registry entry of `iorandread`.
pub const RAND_READ: LoadDef = variant(
    "iorandread",
    "tiobench: --io-threads processes reading 4 KiB blocks of their files at random, uncached",
    Mode::RAND_READ,
);

/// What the processes of a variant do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mode {
    random: bool,
    write: bool,
}

impl Mode {
    const SEQ_WRITE: Mode = Mode {
        random: false,
        write: true,
    };
    const SEQ_READ: Mode = Mode {
        random: false,
        write: false,
    };
    const RAND_WRITE: Mode = Mode {
        random: true,
        write: true,
    };
    const RAND_READ: Mode = Mode {
        random: true,
        write: false,
    };
}

/// A variant's registry entry; `build` and `disk_bytes` follow its mode.
const fn variant(name: &'static str, summary: &'static str, mode: Mode) -> LoadDef {
    LoadDef {
        name,
        summary,
        method: 1,
        unit: "MB",
        takes_arg: false,
        processes: |params| params.io.threads,
        disk_bytes: match mode.write {
            true => |params| total_bytes(params, true),
            false => |params| total_bytes(params, false),
        },
        check: super::no_check,
        build: match (mode.random, mode.write) {
            (false, true) => |context| Requester::boxed(context, Mode::SEQ_WRITE),
            (false, false) => |context| Requester::boxed(context, Mode::SEQ_READ),
            (true, true) => |context| Requester::boxed(context, Mode::RAND_WRITE),
            (true, false) => |context| Requester::boxed(context, Mode::RAND_READ),
        },
        default: |_| false,
        uses: &[SettingsGroup::Io],
        job_cache: None,
    }
}

/// Size of each process's file: its share of `--file-size` (at most 1 GiB
/// in all for reads), in whole requests, at least [`MIN_FILE_BYTES`].
fn process_file_bytes(params: &WorkParams, write: bool) -> u64 {
    let total = match write {
        true => params.file_bytes,
        false => params.file_bytes.min(MAX_READ_BYTES),
    };
    let share = total / params.io.threads.max(1) as u64;
    let request = REQUEST_BYTES as u64;
    (share / request * request).max(MIN_FILE_BYTES)
}

/// Disk space the files of all processes take.
fn total_bytes(params: &WorkParams, write: bool) -> u64 {
    process_file_bytes(params, write) * params.io.threads as u64
}

struct Requester {
    file: File,
    buf: AlignedBuf,
    mode: Mode,
    passes: Passes,
    draws: Draws,
    blocks: u64,
    /// Reads bypass the page cache (`O_DIRECT`).
    direct: bool,
    /// How long the last step's request took.
    last_ns: Option<u64>,
}

impl Requester {
    fn boxed(context: &LoadContext, mode: Mode) -> Result<Box<dyn Load>, LoadError> {
        let file = unnamed_file(&context.dir)?;
        let size = process_file_bytes(&context.params, mode.write);
        let direct = match mode.write {
            true => {
                file.set_len(size)
                    .map_err(LoadError::io("cannot size its file"))?;
                false
            }
            false => {
                fill_on_device(&file, &AlignedBuf::incompressible(1 << 20), size)?;
                bypass_cache(&file)?
            }
        };
        Ok(Box::new(Self {
            file,
            buf: AlignedBuf::incompressible(REQUEST_BYTES),
            mode,
            passes: Passes::new(size),
            draws: Draws::new(u64::from(std::process::id())),
            blocks: size / REQUEST_BYTES as u64,
            direct,
            last_ns: None,
        }))
    }

    /// Where the next request goes, and whether it ends a pass through
    /// the file (a random request ends one every `blocks` requests).
    fn next_offset(&mut self) -> (u64, bool) {
        let chunk = self.passes.next(REQUEST_BYTES);
        match self.mode.random {
            true => (
                self.draws.below(self.blocks) * REQUEST_BYTES as u64,
                chunk.ends_pass,
            ),
            false => (chunk.offset, chunk.ends_pass),
        }
    }

    /// The request at `offset`, timed.
    fn request(&mut self, offset: u64) -> Result<u64, LoadError> {
        if !self.mode.write && self.mode.random && !self.direct {
            drop_cached_range(&self.file, offset, REQUEST_BYTES as u64)
                .map_err(LoadError::sys("posix_fadvise(DONTNEED)"))?;
        }
        let started_ns = now_ns();
        match self.mode.write {
            true => self
                .file
                .write_all_at(self.buf.as_slice(), offset)
                .map_err(LoadError::io("cannot write its file"))?,
            false => self
                .file
                .read_exact_at(self.buf.as_mut_slice(), offset)
                .map_err(LoadError::io("cannot read its file"))?,
        }
        Ok(now_ns() - started_ns)
    }

    /// What ends a pass: writes are written out, uncached reads of a file
    /// without `O_DIRECT` have their pages dropped.
    fn end_pass(&self) -> Result<(), LoadError> {
        match self.mode.write {
            true => self
                .file
                .sync_data()
                .map_err(LoadError::io("cannot write its file out (fdatasync)")),
            false if !self.direct => drop_cached_pages(&self.file),
            false => Ok(()),
        }
    }
}

impl Load for Requester {
    fn step(&mut self) -> Result<f64, LoadError> {
        let (offset, ends_pass) = self.next_offset();
        self.last_ns = Some(self.request(offset)?);
        if ends_pass {
            self.end_pass()?;
        }
        Ok(mb(REQUEST_BYTES))
    }

    fn last_request_ns(&self) -> Option<u64> {
        self.last_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::io::IoSettings;

    fn params(file_bytes: u64, threads: usize) -> WorkParams {
        WorkParams {
            file_bytes,
            io: IoSettings {
                threads,
                ..IoSettings::default()
            },
            ..WorkParams::for_tests()
        }
    }

    #[test]
    fn the_processes_share_the_file_size_in_whole_requests() {
        assert_eq!(process_file_bytes(&params(64 << 20, 4), true), 16 << 20);
        assert_eq!(total_bytes(&params(64 << 20, 4), true), 64 << 20);
        // Reads: at most 1 GiB in all.
        assert_eq!(total_bytes(&params(8 << 30, 4), false), 1 << 30);
        assert_eq!(total_bytes(&params(8 << 30, 4), true), 8 << 30);
        // At least 1 MiB each, in whole 4 KiB requests.
        assert_eq!(process_file_bytes(&params(1 << 20, 16), true), 1 << 20);
        assert_eq!(
            process_file_bytes(&params((12 << 20) + 5, 3), false),
            4 << 20
        );
    }

    #[test]
    fn requests_stay_in_the_file_and_passes_end_every_file_of_requests() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [Mode::SEQ_WRITE, Mode::RAND_WRITE] {
            let context = LoadContext {
                params: params(4 << 20, 4),
                arg: None,
                dir: dir.path().to_path_buf(),
            };
            let mut load = Requester::boxed(&context, mode).unwrap();
            let mut last = None;
            for _ in 0..256 {
                assert_eq!(load.step().unwrap(), 0.004096);
                last = load.last_request_ns();
            }
            assert!(last.is_some());
        }
        let requester = |random| Requester {
            file: tempfile::tempfile().unwrap(),
            buf: AlignedBuf::incompressible(REQUEST_BYTES),
            mode: Mode {
                random,
                write: true,
            },
            passes: Passes::new(3 * REQUEST_BYTES as u64),
            draws: Draws::new(1),
            blocks: 3,
            direct: false,
            last_ns: None,
        };
        for random in [false, true] {
            let mut r = requester(random);
            let offsets: Vec<(u64, bool)> = (0..6).map(|_| r.next_offset()).collect();
            let ends: Vec<bool> = offsets.iter().map(|o| o.1).collect();
            assert_eq!(ends, [false, false, true, false, false, true]);
            assert!(offsets.iter().all(|o| o.0 < 3 * 4096 && o.0 % 4096 == 0));
        }
    }
}
