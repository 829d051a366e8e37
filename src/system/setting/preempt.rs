//! The preemption model, in debugfs's `sched/preempt` (kernels built with
//! `CONFIG_PREEMPT_DYNAMIC`): read as `none voluntary (full) lazy`, changed
//! by writing a word. Where debugfs is not mounted, a detached mount of it
//! is made for the read or write and is gone with its descriptor.

use super::{file, SettingError};
use crate::system::detached;
use std::io::{Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// Where debugfs is usually mounted.
const MOUNTED: &str = "/sys/kernel/debug";

/// The model's file inside debugfs.
const FILE: &str = "sched/preempt";

/// debugfs, mounted or of our own.
pub enum Debugfs {
    /// Where it is mounted already.
    Mounted(PathBuf),
    /// A detached mount of our own.
    Detached(OwnedFd),
}

impl Debugfs {
    /// debugfs as mounted, or a detached mount of it; an error for
    /// `setting` when it cannot be had or has no preemption model.
    pub fn open(setting: &str) -> Result<Self, SettingError> {
        let debugfs = match Path::new(MOUNTED).join(FILE).is_file() {
            true => Self::Mounted(PathBuf::from(MOUNTED)),
            false => Self::Detached(detached::mount("debugfs").map_err(|e| {
                SettingError::invalid(
                    setting,
                    format!("debugfs is not mounted and cannot be mounted: {e}"),
                )
            })?),
        };
        debugfs.read(setting)?;
        Ok(debugfs)
    }

    /// The model in force.
    pub fn read(&self, setting: &str) -> Result<String, SettingError> {
        let mut text = String::new();
        self.open_file(libc::O_RDONLY)
            .and_then(|mut f| f.read_to_string(&mut text))
            .map_err(|error| match error.kind() {
                std::io::ErrorKind::NotFound => SettingError::invalid(
                    setting,
                    "this kernel cannot change its preemption model (no sched/preempt in debugfs: built without CONFIG_PREEMPT_DYNAMIC)",
                ),
                std::io::ErrorKind::PermissionDenied => SettingError::invalid(
                    setting,
                    format!("this kernel refuses access to debugfs ({error}: locked down, see dmesg), so its preemption model cannot be changed"),
                ),
                _ => SettingError::Read {
                    setting: setting.to_string(),
                    path: self.path(),
                    error,
                },
            })?;
        Ok(file::shown(&text))
    }

    /// Makes `model` the preemption model and reads it back.
    pub fn set(&self, setting: &str, model: &str) -> Result<(), SettingError> {
        self.open_file(libc::O_WRONLY)
            .and_then(|mut f| f.write_all(model.as_bytes()))
            .map_err(|error| SettingError::Write {
                setting: setting.to_string(),
                path: self.path(),
                value: model.to_string(),
                error,
            })?;
        self.check(setting, model)
    }

    /// An error naming `setting` unless `model` is in force.
    pub fn check(&self, setting: &str, model: &str) -> Result<(), SettingError> {
        let shown = self.read(setting)?;
        if shown == model {
            return Ok(());
        }
        Err(SettingError::ReadBack {
            setting: setting.to_string(),
            path: self.path(),
            value: model.to_string(),
            shown,
        })
    }

    fn open_file(&self, flags: libc::c_int) -> std::io::Result<std::fs::File> {
        match self {
            Self::Mounted(dir) => std::fs::OpenOptions::new()
                .read(flags == libc::O_RDONLY)
                .write(flags == libc::O_WRONLY)
                .open(dir.join(FILE)),
            Self::Detached(fd) => detached::open_at(fd, FILE, flags),
        }
    }

    /// The file, as said in errors.
    fn path(&self) -> PathBuf {
        Path::new(MOUNTED).join(FILE)
    }
}
