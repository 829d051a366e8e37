//! A store file made private: the directories made for it are 0700 and
//! the file 0600 (SQLite makes its `-wal` and `-shm` files with the file's
//! mode and, as root, its owner), since a run document holds the kernel
//! command line, host names, comments and command lines. Under `sudo` with
//! the user's `HOME` kept, what is made in a directory of the user who ran
//! sudo is given to that user, so a root run does not leave a store its
//! user's later runs cannot write.

use super::StoreError;
use std::fs::{DirBuilder, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::Path;

/// The user and group `sudo` was run by (`SUDO_UID`, `SUDO_GID`), when
/// this process runs as root under it.
fn sudo_user() -> Option<(u32, u32)> {
    if !nix::unistd::geteuid().is_root() {
        return None;
    }
    let id = |name: &str| std::env::var(name).ok()?.parse::<u32>().ok();
    Some((id("SUDO_UID")?, id("SUDO_GID")?))
}

/// Makes the store file `path` when it is not there, and the directories
/// it needs, private to its user.
pub fn make(path: &Path) -> Result<(), StoreError> {
    let cannot = |what: &Path, e: std::io::Error| {
        StoreError::Unreachable(format!("cannot create {}: {e}", what.display()))
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    // The nearest directory that exists, and what has to be made below it.
    let mut missing = Vec::new();
    let mut existing = dir;
    while let Some(d) = existing.filter(|d| !d.exists()) {
        missing.push(d);
        existing = d.parent().filter(|p| !p.as_os_str().is_empty());
    }
    let owner = give_to(existing.unwrap_or(Path::new(".")));
    for d in missing.into_iter().rev() {
        match DirBuilder::new().mode(0o700).create(d) {
            Ok(()) => hand_over(d, owner)?,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(cannot(d, e)),
        }
    }
    let made = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
    match made {
        // An empty file is an empty SQLite database.
        Ok(_) => hand_over(path, give_to(dir.unwrap_or(Path::new(".")))),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(cannot(path, e)),
    }
}

/// Who what is made in `dir` is given to: the user who ran sudo when
/// `dir` is theirs.
fn give_to(dir: &Path) -> Option<(u32, u32)> {
    let (uid, gid) = sudo_user()?;
    let theirs = std::fs::metadata(dir).is_ok_and(|m| m.uid() == uid);
    theirs.then_some((uid, gid))
}

/// Gives `path` to `owner`, when there is one.
fn hand_over(path: &Path, owner: Option<(u32, u32)>) -> Result<(), StoreError> {
    let Some((uid, gid)) = owner else {
        return Ok(());
    };
    std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(|e| {
        StoreError::Unreachable(format!("cannot give {} to user {uid}: {e}", path.display()))
    })
}
