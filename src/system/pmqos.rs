//! PM QoS held for a run (`--cpu-dma-latency`), as cyclictest holds it: the
//! CPU latency limit is written to `/dev/cpu_dma_latency` as a binary `s32`
//! and stays in force for as long as the file stays open. The kernel drops
//! the request when the file is closed, and a process's files are closed
//! however it ends — return, panic, SIGKILL — so the system's setting is
//! restored at every kind of exit without any clean-up of ours. The file is
//! opened close-on-exec (as Rust opens every file), so the workers a run
//! starts do not inherit it and cannot keep the request alive after it.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The PM QoS device of the CPU latency limit.
pub const DEVICE: &str = "/dev/cpu_dma_latency";

/// The largest limit the kernel takes, in µs: its "no limit" default
/// (`PM_QOS_CPU_LATENCY_DEFAULT_VALUE`, 2000 s).
pub const MAX_US: u32 = 2_000_000_000;

/// Why the CPU latency limit could not be set.
#[derive(Debug, thiserror::Error)]
pub enum PmQosError {
    /// The device could not be opened for writing.
    #[error("cannot open {path} for writing: {error}; {}", open_fix(.error))]
    Open {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The device did not take the limit.
    #[error("cannot write {value_us} µs to {path}: {error}")]
    Write {
        path: PathBuf,
        value_us: u32,
        error: std::io::Error,
    },
}

/// What to do about a device that cannot be opened.
fn open_fix(error: &std::io::Error) -> &'static str {
    match error.kind() {
        std::io::ErrorKind::NotFound => {
            "this kernel has no PM QoS (CONFIG_PM); leave the limit out"
        }
        _ => "setting the CPU latency limit needs root (or write access to the device); run as root or leave the limit out",
    }
}

/// A CPU latency limit in force for as long as this value lives.
#[derive(Debug)]
pub struct CpuLatencyLimit {
    // Never read: holding it open is what keeps the request alive.
    _device: File,
}

impl CpuLatencyLimit {
    /// Opens `device` (normally [`DEVICE`]) and asks the kernel to keep
    /// every CPU's wake-up latency at or below `value_us` (0: no idle state
    /// deeper than polling).
    pub fn hold(device: &Path, value_us: u32) -> Result<Self, PmQosError> {
        let mut file = OpenOptions::new()
            .write(true)
            .open(device)
            .map_err(|error| PmQosError::Open {
                path: device.to_path_buf(),
                error,
            })?;
        // The kernel reads exactly four bytes as a native-endian s32; any
        // other length is parsed as a hexadecimal string.
        // MAX_US is below i32::MAX, so the cast keeps the value.
        let value = value_us.min(MAX_US) as i32;
        file.write_all(&value.to_ne_bytes())
            .map_err(|error| PmQosError::Write {
                path: device.to_path_buf(),
                value_us,
                error,
            })?;
        Ok(Self { _device: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_written_as_four_native_endian_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let device = dir.path().join("cpu_dma_latency");
        std::fs::write(&device, b"").unwrap();
        let limit = CpuLatencyLimit::hold(&device, 20).unwrap();
        assert_eq!(std::fs::read(&device).unwrap(), 20i32.to_ne_bytes());
        drop(limit);
        CpuLatencyLimit::hold(&device, 0).unwrap();
        assert_eq!(std::fs::read(&device).unwrap(), [0; 4]);
    }

    #[test]
    fn a_missing_device_names_the_path_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let device = dir.path().join("none/cpu_dma_latency");
        let error = CpuLatencyLimit::hold(&device, 0).unwrap_err();
        let text = error.to_string();
        assert!(matches!(error, PmQosError::Open { .. }), "{text}");
        assert!(text.contains(&device.display().to_string()), "{text}");
        assert!(text.contains("no PM QoS"), "{text}");
    }

    #[test]
    fn a_refused_open_says_root_is_needed() {
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert!(open_fix(&denied).contains("needs root"));
    }
}
