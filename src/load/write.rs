//! `write`, `smallwrite` and `largewrite`: one process streaming a file of
//! `--file-size` with ordinary buffered writes, over and over — when it
//! reaches the size it starts again at 0, overwriting (interbench's Write,
//! contest's io_load). The variants differ only in the size of each write:
//! `write` uses 1 MiB, a streaming writer's usual size (`dd bs=1M`, `cp`);
//! `smallwrite` 4 KiB, one page per system call, like resp1's writer of
//! small blocks (more system calls and CPU per MB); `largewrite` 64 MiB,
//! resp1's "one very large buffer", which dirties a lot of memory in one
//! call. The work is the MB the write calls took; the engine records
//! separately what the process made the device write.
//!
//! Nothing is synced while the file fills. At the end of each pass the load
//! writes its own file out (`fdatasync`, never a system-wide `sync`): a file
//! smaller than the kernel's dirty limits would otherwise be rewritten in the
//! page cache forever and the device would never see the load; with it each
//! pass reaches the device once, and the writer is paced by the device. A
//! file larger than the dirty limits is mostly written back when its pass
//! ends; the rest (at most the dirty limit) is written in that one step.

use super::disk::{mb, unnamed_file, Passes};
use super::{Load, LoadContext, LoadDef, LoadError};
use crate::sim::uncached::AlignedBuf;
use crate::sim::WorkParams;
use std::fs::File;
use std::os::unix::fs::FileExt as _;

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// Registry entry of `write`.
pub const WRITE: LoadDef = variant(
    "write",
    "streams a file of --file-size with 1 MiB buffered writes, over and over (interbench Write)",
    |context| Writer::boxed(context, MIB),
    super::always,
);

/// Registry entry of `smallwrite`.
pub const SMALLWRITE: LoadDef = variant(
    "smallwrite",
    "streams a file of --file-size with 4 KiB writes, one page per call",
    |context| Writer::boxed(context, 4 * KIB),
    |_| false,
);

/// Registry entry of `largewrite`.
pub const LARGEWRITE: LoadDef = variant(
    "largewrite",
    "streams a file of --file-size with 64 MiB writes, one very large buffer per call",
    |context| Writer::boxed(context, 64 * MIB),
    |_| false,
);

/// Whether `def` is one of the writers, which stream through the page
/// cache (so a file that fits under the dirty-page limit measures memory).
pub fn streams_writes(def: &LoadDef) -> bool {
    [WRITE.name, SMALLWRITE.name, LARGEWRITE.name].contains(&def.name)
}

/// A writer's registry entry: the variants differ in name, summary, write
/// size (fixed by `build`) and whether they run by default.
const fn variant(
    name: &'static str,
    summary: &'static str,
    build: fn(&LoadContext) -> Result<Box<dyn Load>, LoadError>,
    default: fn(&WorkParams) -> bool,
) -> LoadDef {
    LoadDef {
        name,
        summary,
        method: 1,
        unit: "MB",
        takes_arg: false,
        processes: |_| 1,
        disk_bytes: |params| params.file_bytes,
        check: super::no_check,
        build,
        default,
        uses: &[],
        job_cache: None,
    }
}

struct Writer {
    file: File,
    buf: AlignedBuf,
    passes: Passes,
}

impl Writer {
    fn boxed(context: &LoadContext, write_bytes: usize) -> Result<Box<dyn Load>, LoadError> {
        Ok(Box::new(Self {
            file: unnamed_file(&context.dir)?,
            buf: AlignedBuf::incompressible(write_bytes),
            passes: Passes::new(context.params.file_bytes),
        }))
    }
}

impl Load for Writer {
    fn step(&mut self) -> Result<f64, LoadError> {
        let chunk = self.passes.next(self.buf.as_slice().len());
        self.file
            .write_all_at(&self.buf.as_slice()[..chunk.len], chunk.offset)
            .map_err(LoadError::io("cannot write its file"))?;
        if chunk.ends_pass {
            self.file
                .sync_data()
                .map_err(LoadError::io("cannot write its file out (fdatasync)"))?;
        }
        Ok(mb(chunk.len))
    }
}
