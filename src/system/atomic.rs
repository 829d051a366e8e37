//! Writing a file atomically: the bytes go to a temporary file in the same
//! directory, which is synced and renamed over the target, so readers see
//! the old content or the new, never a part. Run documents, the calibration
//! cache and the run's state record are written so.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// The writes under way (low bits) and whether an exit was asked for
/// meanwhile (`EXIT`): a second Ctrl-C ends the process at once unless a
/// temporary file exists, and then as soon as the last one is renamed or
/// removed, so none is left behind.
static WRITES: AtomicU32 = AtomicU32::new(0);
/// The bit of `WRITES` that says an exit was asked for.
const EXIT: u32 = 1 << 31;
/// The exit code asked for.
static EXIT_CODE: AtomicI32 = AtomicI32::new(0);

/// Ends the process with `code` now if no atomic write is under way, else
/// as soon as the last one ends. Async-signal-safe (atomics and `_exit`):
/// made to be called from a signal handler.
pub fn exit_between_writes(code: i32) {
    EXIT_CODE.store(code, Ordering::SeqCst);
    let before = WRITES.fetch_or(EXIT, Ordering::SeqCst);
    if before & !EXIT == 0 {
        exit_now(code);
    }
}

/// `_exit(code)`: no destructor or buffer runs, as in a signal handler.
fn exit_now(code: i32) -> ! {
    // SAFETY: _exit takes a plain integer and does not return.
    unsafe { libc::_exit(code) }
}

/// Counts a write as under way, unless an exit was asked for: then the
/// process is about to end, and this thread waits for it.
fn begin_write() {
    let mut current = WRITES.load(Ordering::SeqCst);
    loop {
        if current & EXIT != 0 {
            loop {
                std::thread::park();
            }
        }
        match WRITES.compare_exchange(current, current + 1, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return,
            Err(now) => current = now,
        }
    }
}

/// Counts a write as ended (its temporary file is gone); the last one ends
/// the process if an exit was asked for meanwhile.
fn end_write() {
    if WRITES.fetch_sub(1, Ordering::SeqCst) == EXIT | 1 {
        exit_now(EXIT_CODE.load(Ordering::SeqCst));
    }
}

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
    begin_write();
    let result = write_and_rename(&tmp, path, bytes);
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    end_write();
    result
}

/// Removes the temporary files in `dir` that a process killed in the middle
/// of [`write_atomically`] left (`.NAME.PID.tmp`, its pid no longer alive),
/// of the targets whose `NAME` `ours` accepts; the paths removed.
pub fn remove_dead_temporaries(dir: &Path, ours: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let Some((name, pid)) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(temporary_of)
            else {
                return false;
            };
            ours(name)
                && !Path::new("/proc").join(pid.to_string()).exists()
                && std::fs::remove_file(path).is_ok()
        })
        .collect()
}

/// The target's name and the writer's pid of the temporary file `file`
/// (`.NAME.PID.tmp`).
fn temporary_of(file: &str) -> Option<(&str, u32)> {
    let (name, pid) = file
        .strip_prefix('.')?
        .strip_suffix(".tmp")?
        .rsplit_once('.')?;
    Some((name, pid.parse().ok()?))
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
    fn an_exit_asked_for_during_a_write_waits_for_its_end() {
        use nix::sys::wait::{waitpid, WaitStatus};
        use nix::unistd::{fork, pipe, read, write, ForkResult};
        let (from_child, to_parent) = pipe().unwrap();
        // SAFETY: the child only touches atomics, writes to a pipe and exits.
        match unsafe { fork() }.unwrap() {
            ForkResult::Child => {
                // The parent's other tests may have been writing at the fork.
                WRITES.store(0, Ordering::SeqCst);
                begin_write();
                exit_between_writes(7);
                // Still here: the write under way holds the exit back.
                let _ = write(&to_parent, b"w");
                end_write();
                exit_now(1);
            }
            ForkResult::Parent { child } => {
                drop(to_parent);
                let status = waitpid(child, None).unwrap();
                let mut seen = [0u8; 2];
                let n = read(&from_child, &mut seen).unwrap();
                assert_eq!(&seen[..n], b"w", "exited before the write ended");
                assert_eq!(
                    status,
                    WaitStatus::Exited(child, 7),
                    "the last write ends it"
                );
            }
        }
    }

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
    fn the_temporary_files_of_dead_writers_are_removed_and_others_kept() {
        let dir = tempfile::tempdir().unwrap();
        // No pid reaches 2^22 (the kernel's pid_max at most): a dead writer.
        let dead = 1 << 23;
        let alive = std::process::id();
        for name in [
            format!(".a.pftrace.{dead}.tmp"),
            format!(".b.pftrace.{alive}.tmp"),
            format!(".w.json.{dead}.tmp"),
            "c.pftrace".to_string(),
            ".d.pftrace.tmp".to_string(),
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let removed = remove_dead_temporaries(dir.path(), |n| n.ends_with(".pftrace"));
        assert_eq!(removed, [dir.path().join(format!(".a.pftrace.{dead}.tmp"))]);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
        assert!(remove_dead_temporaries(&dir.path().join("none"), |_| true).is_empty());
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
