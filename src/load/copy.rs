//! `copy`: one process copying a file on the work device, over and over,
//! as `cp` does (latencytest's disk copy phase): 1 MiB buffered reads of a
//! source file, each written at the same place in a destination file.
//!
//! The source, `--file-size` but at most 1 GiB as for `read` (the worker
//! makes it before reporting ready), is written out and dropped from the
//! page cache when the load is built. At the end of each pass the
//! destination is written out (`fdatasync`, as `write` does, so the device
//! sees every pass even when the file fits under the dirty limits) and both
//! files' pages are dropped from the cache, so the next pass reads the
//! source from the device again. The work is the MB copied.

use super::disk::{drop_cached_pages, fill_on_device, mb, unnamed_file, Passes};
use super::read::{file_bytes, CHUNK_BYTES};
use super::{Load, LoadContext, LoadDef, LoadError};
use crate::sim::uncached::AlignedBuf;
use std::fs::File;
use std::os::unix::fs::FileExt as _;

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "copy",
    summary:
        "copies a file of --file-size (at most 1 GiB) on the work device, over and over, like cp",
    method: 1,
    unit: "MB",
    takes_arg: false,
    processes: |_| 1,
    disk_bytes: |params| 2 * file_bytes(params),
    check: super::no_check,
    build: Copier::boxed,
    default: |_| false,
    uses: &[],
    job_cache: None,
};

struct Copier {
    source: File,
    destination: File,
    buf: AlignedBuf,
    passes: Passes,
}

impl Copier {
    fn boxed(context: &LoadContext) -> Result<Box<dyn Load>, LoadError> {
        let source = unnamed_file(&context.dir)?;
        let buf = AlignedBuf::incompressible(CHUNK_BYTES);
        let size = file_bytes(&context.params);
        fill_on_device(&source, &buf, size)?;
        Ok(Box::new(Self {
            source,
            destination: unnamed_file(&context.dir)?,
            buf,
            passes: Passes::new(size),
        }))
    }
}

impl Load for Copier {
    fn step(&mut self) -> Result<f64, LoadError> {
        let chunk = self.passes.next(CHUNK_BYTES);
        let bytes = &mut self.buf.as_mut_slice()[..chunk.len];
        self.source
            .read_exact_at(bytes, chunk.offset)
            .map_err(LoadError::io("cannot read the file it copies"))?;
        self.destination
            .write_all_at(bytes, chunk.offset)
            .map_err(LoadError::io("cannot write its copy"))?;
        if chunk.ends_pass {
            self.destination
                .sync_data()
                .map_err(LoadError::io("cannot write its copy out (fdatasync)"))?;
            drop_cached_pages(&self.destination)?;
            drop_cached_pages(&self.source)?;
        }
        Ok(mb(chunk.len))
    }
}
