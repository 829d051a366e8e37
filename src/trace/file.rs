//! A trace as bytes and as a file: encoded as Perfetto's `Trace` message
//! and written beside its path, then renamed, so a failed write (a full
//! disk) never leaves a partial trace under the name asked for; whether a
//! trace's file, or a directory of them (`watch --trace`), can be made.

use super::protos::Trace;
use crate::system::atomic::{write_atomically, AtomicWriteError};
use prost::Message as _;
use std::path::{Path, PathBuf};

/// Why a trace could not be written.
#[derive(Debug, thiserror::Error)]
pub enum TraceFileError {
    #[error("cannot write the trace to {path}: {error}")]
    Unwritable {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot write traces into {path}: {error}")]
    UnwritableDir {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot write the trace: {0}")]
    Write(#[from] AtomicWriteError),
}

/// Writes `trace` to `path`, beside it first and then renamed.
pub fn write(path: &Path, trace: &Trace) -> Result<(), TraceFileError> {
    Ok(write_atomically(path, &trace.encode_to_vec())?)
}

/// Checks that a file can be made beside `path` (its directory exists and
/// is writable), by making one and removing it; nothing is left at `path`.
pub fn check_writable(path: &Path) -> Result<(), TraceFileError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let unwritable = |error| TraceFileError::Unwritable {
        path: path.to_path_buf(),
        error,
    };
    if path.is_dir() {
        return Err(unwritable(std::io::Error::other("it is a directory")));
    }
    make_one_in(dir).map_err(unwritable)
}

/// Checks that traces can be made in the directory `dir`, by making one
/// file there and removing it.
pub fn check_dir_writable(dir: &Path) -> Result<(), TraceFileError> {
    let unwritable = |error| TraceFileError::UnwritableDir {
        path: dir.to_path_buf(),
        error,
    };
    if !dir.is_dir() {
        let error = match dir.exists() {
            true => std::io::Error::other("it is not a directory"),
            false => std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        return Err(unwritable(error));
    }
    make_one_in(dir).map_err(unwritable)
}

/// Makes a file in `dir` and removes it.
fn make_one_in(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".feelbench-trace-check.{}", std::process::id()));
    std::fs::File::create_new(&probe)?;
    std::fs::remove_file(&probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_written_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.pftrace");
        check_writable(&path).unwrap();
        assert!(!path.exists());
        write(&path, &Trace::default()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), Vec::<u8>::new());
        let missing = dir.path().join("no/such/dir/run.pftrace");
        let error = check_writable(&missing).unwrap_err().to_string();
        assert!(error.starts_with("cannot write the trace to"), "{error}");
        assert!(write(&missing, &Trace::default()).is_err());
        let entries = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(entries, 1, "only the trace is left");
        check_dir_writable(dir.path()).unwrap();
        let error = check_dir_writable(&path).unwrap_err().to_string();
        assert!(error.contains("it is not a directory"), "{error}");
        assert!(check_dir_writable(&missing).is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
