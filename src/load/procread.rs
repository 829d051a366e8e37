//! `procread`: one process reading /proc as `top` and `ps` do, as fast as it
//! can (latencytest's /proc stress phase): each step is one sweep, reading
//! `stat`, `status` and `cmdline` of every process and the system-wide
//! `meminfo`, `stat`, `loadavg` and `uptime`. The kernel builds each file
//! when it is read, under the locks of the process it describes. The work
//! is the files read.

use super::{Load, LoadContext, LoadDef, LoadError};
use std::fs::File;
use std::io::{ErrorKind, Read as _};
use std::path::{Path, PathBuf};

/// The files of each process a sweep reads.
const PROCESS_FILES: [&str; 3] = ["stat", "status", "cmdline"];
/// The system-wide files a sweep reads.
const SYSTEM_FILES: [&str; 4] = ["meminfo", "stat", "loadavg", "uptime"];

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "procread",
    summary:
        "reads stat, status and cmdline of every process and /proc/meminfo, /proc/stat… like top",
    method: 1,
    unit: "files",
    takes_arg: false,
    processes: |_| 1,
    disk_bytes: super::no_disk,
    check: super::no_check,
    build: |_: &LoadContext| Ok(Box::new(ProcReader::new(Path::new("/proc")))),
    default: |_| false,
    uses: &[],
    job_cache: None,
};

struct ProcReader {
    root: PathBuf,
    /// Holds each file's text; kept so a sweep rarely allocates.
    text: Vec<u8>,
}

impl ProcReader {
    fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            text: Vec::with_capacity(16 << 10),
        }
    }

    /// Reads `path` whole; false when it vanished (its process ended).
    fn read(&mut self, path: &Path) -> Result<bool, LoadError> {
        self.text.clear();
        let read = File::open(path).and_then(|mut file| file.read_to_end(&mut self.text));
        match read {
            Ok(_) => Ok(true),
            // ESRCH: the process ended between open and read.
            Err(e) if e.kind() == ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH) => {
                Ok(false)
            }
            Err(e) => Err(LoadError::io(format!("cannot read {}", path.display()))(e)),
        }
    }
}

impl Load for ProcReader {
    fn step(&mut self) -> Result<f64, LoadError> {
        let mut files = 0u64;
        for name in SYSTEM_FILES {
            files += u64::from(self.read(&self.root.join(name))?);
        }
        let entries = std::fs::read_dir(&self.root).map_err(LoadError::io(format!(
            "cannot list {}",
            self.root.display()
        )))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            for file in PROCESS_FILES {
                files += u64::from(self.read(&entry.path().join(file))?);
            }
        }
        Ok(files as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_reads_every_process_and_the_system_files() {
        let dir = tempfile::tempdir().unwrap();
        for name in SYSTEM_FILES {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        for pid in ["1", "42"] {
            std::fs::create_dir(dir.path().join(pid)).unwrap();
            for file in PROCESS_FILES {
                std::fs::write(dir.path().join(pid).join(file), "y").unwrap();
            }
        }
        std::fs::create_dir(dir.path().join("sys")).unwrap();
        // A process that ended: its directory is there, its files are not.
        std::fs::create_dir(dir.path().join("7")).unwrap();
        let mut reader = ProcReader::new(dir.path());
        assert_eq!(reader.step().unwrap(), 10.0);
    }

    #[test]
    fn the_real_proc_has_this_process() {
        let mut reader = ProcReader::new(Path::new("/proc"));
        assert!(reader.step().unwrap() >= 7.0);
    }
}
