//! Memory and the virtual-memory settings: total memory and swap, the swap
//! areas, swappiness and the dirty-page ratios.

use super::reader::Reader;
use super::Environment;
use crate::system::procfs::{self, ProcError};
use crate::system::read_optional;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One swap area of /proc/swaps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwapDevice {
    /// The partition or file.
    pub path: String,
    /// `partition` or `file`.
    pub kind: String,
    /// Its size.
    pub size_bytes: u64,
}

/// Fills the memory and swap fields of `env`.
pub(super) fn read_memory(r: &mut Reader, env: &mut Environment) {
    let meminfo = r.keep(procfs::read_meminfo(&r.roots.proc_root).map(Some));
    env.mem_bytes = meminfo.as_ref().and_then(|m| m.get("MemTotal"));
    env.swap_bytes = meminfo.as_ref().and_then(|m| m.get("SwapTotal"));
    let path = r.roots.proc_root.join("swaps");
    let swaps = r.keep(read_optional(&path));
    env.swap_devices = swaps.and_then(|text| {
        let parsed = parse_swaps(&path, &text);
        r.keep(parsed.map(Some))
    });
    env.swappiness = r.proc_number("sys/vm/swappiness");
    env.dirty_ratio = r.proc_number("sys/vm/dirty_ratio");
    env.dirty_background_ratio = r.proc_number("sys/vm/dirty_background_ratio");
}

/// The swap areas of /proc/swaps (sizes there are in KiB).
fn parse_swaps(path: &Path, text: &str) -> Result<Vec<SwapDevice>, ProcError> {
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let size_kib = words.get(2).and_then(|w| w.parse::<u64>().ok());
            match (words.first(), words.get(1), size_kib) {
                (Some(path), Some(kind), Some(kib)) => Ok(SwapDevice {
                    path: path.to_string(),
                    kind: kind.to_string(),
                    size_bytes: kib * 1024,
                }),
                _ => Err(ProcError::Parse {
                    path: path.to_path_buf(),
                    line: line.to_string(),
                }),
            }
        })
        .collect()
}
