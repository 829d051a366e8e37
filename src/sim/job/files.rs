//! The built-in job's directory: where its sources, headers, objects and
//! image are, and writing the inputs (sources and headers) the compile
//! steps read. The inputs are written once, before the job is timed, so
//! they are in the page cache when it runs, unless they are dropped from it
//! then (`--job-cache cold`).

use super::plan::{fill, JobPlan, HEADERS, HEADER_BYTES};
use crate::sim::uncached::drop_cached_range;
use std::io;
use std::path::{Path, PathBuf};

/// Seeds of the inputs' contents (source `i`: `SOURCE_SEED + i`).
const SOURCE_SEED: u64 = 1 << 32;
const HEADER_SEED: u64 = 2 << 32;

/// The layout of a built-in job's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobDir {
    root: PathBuf,
}

impl JobDir {
    /// The layout under `root` (nothing is made).
    pub fn at(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
        }
    }

    /// Source file of compile step `index`.
    pub fn source(&self, index: usize) -> PathBuf {
        self.root.join("src").join(format!("unit{index:05}.c"))
    }

    /// Header file `index`.
    pub fn header(&self, index: usize) -> PathBuf {
        self.root
            .join("include")
            .join(format!("header{index:02}.h"))
    }

    /// Object file of compile step `index`.
    pub fn object(&self, index: usize) -> PathBuf {
        self.root.join("obj").join(format!("unit{index:05}.o"))
    }

    /// The link's output.
    pub fn image(&self) -> PathBuf {
        self.root.join("image")
    }

    /// Makes the directories and writes the inputs of `plan`.
    pub fn write_inputs(&self, plan: &JobPlan) -> io::Result<()> {
        for sub in ["src", "include", "obj"] {
            std::fs::create_dir_all(self.root.join(sub))?;
        }
        let mut buffer = vec![0u8; HEADER_BYTES as usize];
        for index in 0..HEADERS {
            fill(HEADER_SEED + index as u64, &mut buffer);
            std::fs::write(self.header(index), &buffer)?;
        }
        for step in &plan.compiles {
            let source = &mut buffer[..step.source_bytes as usize];
            fill(SOURCE_SEED + step.index as u64, source);
            std::fs::write(self.source(step.index), source)?;
        }
        Ok(())
    }

    /// Writes the inputs of `plan` back to the device (fsync) and drops
    /// them from the page cache (`posix_fadvise(DONTNEED)`, no root
    /// needed), so the job reads them from the device.
    pub fn drop_inputs(&self, plan: &JobPlan) -> io::Result<()> {
        let headers = (0..HEADERS).map(|index| self.header(index));
        let sources = plan.compiles.iter().map(|step| self.source(step.index));
        for path in headers.chain(sources) {
            let file = std::fs::File::open(&path)?;
            file.sync_all()?;
            drop_cached_range(&file, 0, 0).map_err(io::Error::from)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_written_the_same_every_time() {
        let plan = JobPlan::new(1, 0.02);
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, b) = (JobDir::at(a.path()), JobDir::at(b.path()));
        a.write_inputs(&plan).unwrap();
        b.write_inputs(&plan).unwrap();
        for step in &plan.compiles {
            let source = std::fs::read(a.source(step.index)).unwrap();
            assert_eq!(source.len() as u64, step.source_bytes);
            assert_eq!(source, std::fs::read(b.source(step.index)).unwrap());
        }
        let header = std::fs::read(a.header(HEADERS - 1)).unwrap();
        assert_eq!(header.len() as u64, HEADER_BYTES);
        assert_ne!(header, std::fs::read(a.header(0)).unwrap());
        assert!(a.object(0).parent().unwrap().is_dir());
        a.drop_inputs(&plan).unwrap();
        let source = std::fs::read(a.source(0)).unwrap();
        assert_eq!(source, std::fs::read(b.source(0)).unwrap(), "unchanged");
    }
}
