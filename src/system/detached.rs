//! Mounts made *detached* (`fsopen`/`fsmount`): reachable only through a
//! file descriptor of this process, never attached to any directory, gone
//! when that descriptor closes, so no run, however it ends, leaves a mount
//! behind. tracefs (`sched_trace`) and debugfs (`setting`) are read so.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};

/// From linux/mount.h (which the libc crate does not carry for glibc).
const FSOPEN_CLOEXEC: libc::c_uint = 1;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
const FSMOUNT_CLOEXEC: libc::c_uint = 1;

/// A new instance of the file system `fstype` (`tracefs`, `debugfs`),
/// mounted nowhere (`fsopen`, `fsconfig`, `fsmount`).
pub fn mount(fstype: &str) -> std::io::Result<OwnedFd> {
    let name = CString::new(fstype).map_err(std::io::Error::other)?;
    // SAFETY: fsopen takes a NUL-terminated name that lives across the call
    // and flags; it returns a new descriptor or -1.
    let context = unsafe { libc::syscall(libc::SYS_fsopen, name.as_ptr(), FSOPEN_CLOEXEC) };
    let context = owned(context)?;
    // SAFETY: fsconfig on the descriptor just made, with no key or value.
    let created = unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            context.as_raw_fd(),
            FSCONFIG_CMD_CREATE,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_void>(),
            0,
        )
    };
    if created < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fsmount on the configured context; returns a new descriptor
    // of a mount attached nowhere, or -1.
    let mount =
        unsafe { libc::syscall(libc::SYS_fsmount, context.as_raw_fd(), FSMOUNT_CLOEXEC, 0) };
    owned(mount)
}

fn owned(ret: libc::c_long) -> std::io::Result<OwnedFd> {
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just returned, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(ret as i32) })
}

/// Opens `path`, relative to the mount `dir`, with `flags` (`O_RDONLY`,
/// `O_WRONLY`; `O_CLOEXEC` is added).
pub fn open_at(dir: &OwnedFd, path: &str, flags: libc::c_int) -> std::io::Result<File> {
    let path = CString::new(path).map_err(std::io::Error::other)?;
    // SAFETY: openat on a descriptor we own, a NUL-terminated relative
    // path that lives across the call; returns a new descriptor or -1.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), path.as_ptr(), flags | libc::O_CLOEXEC) };
    owned(fd as libc::c_long).map(File::from)
}
