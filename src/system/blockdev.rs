//! A block device's own counters, from `<sys_root>/dev/block/MAJ:MIN/stat`
//! (the kernel's Documentation/block/stat.rst): what the device really read
//! and wrote, how long it was busy and how many requests were in flight.
//! They tell the device's work apart from the page-dirtying rate of the
//! processes (`/proc/PID/io` counts a write when a page is dirtied, not when
//! the device writes it).

use super::mounts;
use super::procfs::ProcError;
use super::read_optional;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Bytes of one sector in the stat file, whatever the device's own sectors.
const SECTOR_BYTES: u64 = 512;

/// A block device's cumulative counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceCounters {
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Time the device had at least one request in flight.
    pub busy_ms: u64,
    /// Requests in flight at that moment.
    pub in_flight: u64,
}

/// What a device did between two moments.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DeviceFigures {
    /// Bytes the device read, per second, in MB.
    pub read_mb_s: f64,
    /// Bytes the device wrote, per second, in MB.
    pub write_mb_s: f64,
    /// Share of the time it had requests in flight.
    pub busy_pct: f64,
    /// Requests in flight at the end.
    pub in_flight: u64,
}

/// Parses the fields of a stat file: reads completed, merged, sectors read,
/// ms reading, writes completed, merged, sectors written, ms writing,
/// in flight, ms busy, ... (later fields vary by kernel and are ignored).
pub fn parse_stat(text: &str) -> Option<DeviceCounters> {
    let fields: Vec<u64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    Some(DeviceCounters {
        read_bytes: *fields.get(2)? * SECTOR_BYTES,
        write_bytes: *fields.get(6)? * SECTOR_BYTES,
        in_flight: *fields.get(8)?,
        busy_ms: *fields.get(9)?,
    })
}

/// The counters of block device `MAJ:MIN`; `Ok(None)` when it is not a
/// block device (tmpfs, overlay).
pub fn read_counters(
    sys_root: &Path,
    device_numbers: &str,
) -> Result<Option<DeviceCounters>, ProcError> {
    let path = sys_root.join("dev/block").join(device_numbers).join("stat");
    let Some(text) = read_optional(&path)? else {
        return Ok(None);
    };
    parse_stat(&text).map(Some).ok_or_else(|| ProcError::Parse {
        path,
        line: text.trim().to_string(),
    })
}

/// `MAJ:MIN` of the device `dir` is on, as `<proc_root>/self/mountinfo`
/// says; `None` when it cannot be told.
pub fn device_of(proc_root: &Path, dir: &Path) -> Option<String> {
    let all = mounts::read_mountinfo(proc_root).ok()?;
    let dir = std::fs::canonicalize(dir).ok()?;
    Some(mounts::mount_of(&all, &dir)?.device_numbers.clone())
}

/// What the device did from `before` to `after`, `wall_ns` apart; `None`
/// when a counter went backwards (the device was replaced) or no time passed.
pub fn figures(
    before: DeviceCounters,
    after: DeviceCounters,
    wall_ns: u64,
) -> Option<DeviceFigures> {
    if wall_ns == 0 {
        return None;
    }
    let seconds = wall_ns as f64 / 1e9;
    let mb_s = |b: u64, a: u64| Some(a.checked_sub(b)? as f64 / 1e6 / seconds);
    let busy_ms = after.busy_ms.checked_sub(before.busy_ms)?;
    Some(DeviceFigures {
        read_mb_s: mb_s(before.read_bytes, after.read_bytes)?,
        write_mb_s: mb_s(before.write_bytes, after.write_bytes)?,
        busy_pct: (100.0 * busy_ms as f64 / (seconds * 1e3)).min(100.0),
        in_flight: after.in_flight,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real line of /sys/block/vda/stat (17 fields).
    const VDA: &str = "  512922   638824 138568178  1140030   121488  1528763 303731816  1290167        0   167328  2454032    64924       63 135362264    22550     4885     1283\n";

    #[test]
    fn a_stat_line_gives_bytes_busy_time_and_requests_in_flight() {
        let c = parse_stat(VDA).unwrap();
        assert_eq!(c.read_bytes, 138_568_178 * 512);
        assert_eq!(c.write_bytes, 303_731_816 * 512);
        assert_eq!((c.in_flight, c.busy_ms), (0, 167_328));
        // Old kernels have 11 fields; fewer than 10 is not a stat line.
        assert!(parse_stat("1 2 3 4 5 6 7 8 9 10 11").is_some());
        assert!(parse_stat("1 2 3 4 5 6 7 8 9").is_none());
        assert!(parse_stat("1 2 x 4 5 6 7 8 9 10 11").is_none());
    }

    #[test]
    fn figures_are_rates_over_the_interval() {
        let before = DeviceCounters {
            read_bytes: 0,
            write_bytes: 1_000_000,
            busy_ms: 100,
            in_flight: 0,
        };
        let after = DeviceCounters {
            read_bytes: 4_000_000,
            write_bytes: 9_000_000,
            busy_ms: 1_100,
            in_flight: 3,
        };
        let f = figures(before, after, 2_000_000_000).unwrap();
        assert_eq!((f.read_mb_s, f.write_mb_s, f.busy_pct), (2.0, 4.0, 50.0));
        assert_eq!(f.in_flight, 3);
        assert!(figures(after, before, 2_000_000_000).is_none(), "backwards");
        assert!(figures(before, after, 0).is_none());
    }

    #[test]
    fn a_device_is_read_below_its_root_and_absent_when_not_a_block_device() {
        let sys = tempfile::tempdir().unwrap();
        let dev = sys.path().join("dev/block/254:0");
        std::fs::create_dir_all(&dev).unwrap();
        std::fs::write(dev.join("stat"), VDA).unwrap();
        let c = read_counters(sys.path(), "254:0").unwrap().unwrap();
        assert_eq!(c.busy_ms, 167_328);
        assert_eq!(read_counters(sys.path(), "0:42").unwrap(), None);
        std::fs::write(dev.join("stat"), "garbage").unwrap();
        assert!(read_counters(sys.path(), "254:0").is_err());
    }
}
