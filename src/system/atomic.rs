//! Writing a file atomically: the bytes go to a temporary file in the same
//! directory, which is synced and renamed over the target, so readers see
//! the old content or the new, never a part. Run documents, the calibration
//! cache and the run's state record are written so.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// A file could not be written atomically. The temporary file is gone.
#[derive(Debug, thiserror::Error)]
pub enum AtomicWriteError {
    /// The target path ends in `..` or `/`: it names no file.
    #[error("{0} names no file")]
    NoFileName(PathBuf),
    /// The temporary file could not be made, written or synced.
    #[error("cannot {action} {path}: {error}")]
    Write {
        /// `create` or `write`.
        action: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    /// The temporary file could not be renamed over the target.
    #[error("cannot rename {from} to {to}: {error}")]
    Rename {
        from: PathBuf,
        to: PathBuf,
        error: std::io::Error,
    },
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// and a rename, so readers see the old or the new content, never a part.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), AtomicWriteError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| AtomicWriteError::NoFileName(path.to_path_buf()))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = write_and_rename(&tmp, path, bytes);
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn write_and_rename(tmp: &Path, path: &Path, bytes: &[u8]) -> Result<(), AtomicWriteError> {
    let failed = |action| {
        move |error| AtomicWriteError::Write {
            action,
            path: tmp.to_path_buf(),
            error,
        }
    };
    let mut file = std::fs::File::create(tmp).map_err(failed("create"))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_data())
        .map_err(failed("write"))?;
    std::fs::rename(tmp, path).map_err(|error| AtomicWriteError::Rename {
        from: tmp.to_path_buf(),
        to: path.to_path_buf(),
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_failure_names_the_file_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/run.json");
        let err = write_atomically(&path, b"one").unwrap_err().to_string();
        assert!(
            err.starts_with("cannot create ") && err.contains("missing"),
            "{err}"
        );
        // A directory in the way of the rename: the temporary file is removed.
        let blocked = dir.path().join("taken");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("inside"), "").unwrap();
        let err = write_atomically(&blocked, b"one").unwrap_err().to_string();
        assert!(err.starts_with("cannot rename "), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(matches!(
            write_atomically(Path::new("/"), b""),
            Err(AtomicWriteError::NoFileName(_))
        ));
    }
}
