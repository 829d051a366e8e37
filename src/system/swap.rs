//! Swap files: turning one off and removing it (what a clean-up needs).

use anyhow::Context as _;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

/// Turns the swap file at `path` off (if it is on) and deletes it.
pub fn remove(path: &Path) -> anyhow::Result<()> {
    let c_path = CString::new(path.as_os_str().as_bytes()).context("swap path has a NUL byte")?;
    // SAFETY: swapoff takes a NUL-terminated path that lives across the call.
    let ret = unsafe { libc::swapoff(c_path.as_ptr()) };
    let err = std::io::Error::last_os_error();
    // EINVAL: not an active swap area (already off).
    if ret == -1 && err.raw_os_error() != Some(libc::EINVAL) {
        return Err(err).with_context(|| format!("swapoff {}", path.display()));
    }
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}
